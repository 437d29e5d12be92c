"""Browser timing: from moving a slider to the chart being redrawn (Plotly's plotly_afterplot).

Starts the app, opens it in headless Chromium (Debian's, driven by Playwright) and moves the
base slider with the keyboard: six steps right (each a value not seen before, so every cache
misses), then six steps back (cached). Each latency runs from the key press to the last
``plotly_afterplot`` of the redrawn charts.

    .venv/bin/python benchmarks/browser.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e import CHROMIUM_ARGS, PAGE_HOOK_JS, VIEWPORT, StreamlitServer, find_chromium  # noqa: E402
from tests.e2e.conftest import AppPage  # noqa: E402

CONFIGURATIONS = {
    "default (2,048 × 512)": "",
    "100,000 × 1,024": "?L=100000&d=1024",
}
STEPS = 6


def latencies(app: AppPage, query: str) -> tuple[list[float], list[float]]:
    app.open(query)
    app.wait_quiet()
    fresh, cached = [], []
    for key, sink in (("ArrowRight", fresh), ("ArrowLeft", cached)):
        for _ in range(STEPS):
            app.step_slider("base (log scale)", key)
            sink.append(
                app.page.evaluate(
                    "window.__pe.redrawnAt(window.__pe.lastInput, true) - window.__pe.lastInput"
                )
            )
    assert app.problems() == [], app.problems()
    return fresh, cached


def main() -> None:
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("Chromium not found: apt-get install chromium")
    rows = []
    with StreamlitServer() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for name, query in CONFIGURATIONS.items():
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(PAGE_HOOK_JS)
            page = context.new_page()
            page.set_default_timeout(120_000)
            fresh, cached = latencies(AppPage(page, server), query)
            everything = fresh + cached
            cells = [statistics.median(fresh), statistics.median(cached)]
            cells += [statistics.median(everything), max(everything)]
            rows.append(f"| {name} | " + " | ".join(f"{c:.0f} ms" for c in cells) + " |")
            context.close()
        browser.close()
    print(
        "| configuration (Heatmap view) | new value, median | cached value, median | "
        "all, median | slowest |"
    )
    print("|---|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
