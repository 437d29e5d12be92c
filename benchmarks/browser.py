"""Browser timing: from moving a slider to the chart being redrawn (Plotly's plotly_afterplot).

Starts the app, opens it in headless Chromium (Debian's, driven by Playwright) and moves the
base slider with the keyboard: six steps right (each a value not seen before, so every cache
misses), then six steps back (cached). Each latency runs from the key press to the last
``plotly_afterplot`` of the redrawn charts.

    .venv/bin/python benchmarks/browser.py            # slider redraws
    .venv/bin/python benchmarks/browser.py --views    # first chart and every view switch
    .venv/bin/python benchmarks/browser.py --elements # what each view puts on the page
    .venv/bin/python benchmarks/browser.py --page-time [ROUNDS]  # the page's work per switch

``--views``: for each configuration, the time from navigation to the first view settled (every
chart drawn, the run over), then the time from a click on each view's link to that view
settled, in registry order, twice (the second round hits the caches).

``--elements``: for each view and configuration, the markers Plotly draws (one SVG element
each, ``path.point``) and all the page's elements, once the view is settled: what a software
renderer pays for on every switch.

``--page-time``: for each view with Plotly charts, cached switches from the default view
(ROUNDS of them, 5 unless given; every view visited once before): the medians of the time
from the click to the view settled, to the last chart drawn, and of the page's main-thread
time from the click until every one of the view's Plotly charts (counted on the first visit)
was drawn and nothing drew for 400 ms (Chromium's ``TaskDuration``, all of it: script, style,
layout, paint), which is less at the mercy of the machine's other work than a wall-clock time;
and the charts whose margins Plotly widened (each one drawn in full a second time, with no
event to show it).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import (  # noqa: E402
    CHROMIUM_ARGS,
    PAGE_HOOK_JS,
    VIEWPORT,
    AppPage,
    StreamlitServer,
    find_chromium,
    widened_margins_js,
)
from dashboard import registry  # noqa: E402

CONFIGURATIONS = {
    "default (2,048 × 512)": "",
    "100,000 × 1,024": "?L=100000&d=1024",
}
STEPS = 6


def _app_page(browser, server, timeout_ms: int) -> tuple:
    """A new browser context with the page hook, and an AppPage on the app in it."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PAGE_HOOK_JS)
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    return context, AppPage(page, server)


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


VIEW_CONFIGURATIONS = {
    "default": "",
    "1,000,000 positions": "?L=1000000",
    "d_model 8192": "?d=8192",
}


def view_switches(app: AppPage, query: str) -> tuple[float, dict[str, list[float]]]:
    """Navigation to settled (ms), and per view the click-to-settled times of two rounds."""
    app.open(query)
    first = app.page.evaluate("window.__pe.settledAt")
    switches: dict[str, list[float]] = {view.label: [] for view in registry.VIEWS}
    for _ in range(2):
        for view in [*registry.VIEWS[1:], registry.VIEWS[0]]:
            since = app.now()
            app.click_tab(view.label)
            switches[view.label].append(app.page.evaluate("window.__pe.settledAt") - since)
    assert app.problems() == [], app.problems()
    return first, switches


def views_main(browser, server) -> None:
    print(
        "| configuration | first view settled | "
        + " | ".join(v.label for v in registry.VIEWS)
        + " |"
    )
    print("|---|---:|" + "---:|" * len(registry.VIEWS))
    for name, query in VIEW_CONFIGURATIONS.items():
        context, app = _app_page(browser, server, 180_000)
        first, switches = view_switches(app, query)
        cells = [f"{first:.0f} ms"] + [
            f"{times[0]:.0f} / {times[1]:.0f}" for times in switches.values()
        ]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
        context.close()


def elements_main(browser, server) -> None:
    print("| view | " + " | ".join(VIEW_CONFIGURATIONS) + " |")
    print("|---|" + "---:|" * len(VIEW_CONFIGURATIONS))
    context, app = _app_page(browser, server, 180_000)
    for view in registry.VIEWS:
        cells = []
        for query in VIEW_CONFIGURATIONS.values():
            path = "" if view is registry.DEFAULT else view.slug
            app.open(path + query)
            app.wait_quiet()
            markers, everything = app.page.evaluate(
                "[document.querySelectorAll('.js-plotly-plot path.point').length,"
                " document.querySelectorAll('*').length]"
            )
            cells.append(f"{markers:,} / {everything:,}")
        print(f"| {view.label} | " + " | ".join(cells) + " |", flush=True)
    assert app.problems() == [], app.problems()
    context.close()


LAST_DRAW_JS = """() => Math.max(window.__pe.lastDraw, ...Array.from(
  document.querySelectorAll('[data-pe-image]'),
  (el) => Number(el.getAttribute('data-pe-drawn')) || 0))"""


PLOTS_JS = "() => document.querySelectorAll('.js-plotly-plot').length"
#: Every one of the view's ``count`` Plotly charts is on the page and was drawn after ``since``.
ALL_PLOTS_DRAWN_JS = """([since, count]) => {
  const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
  return plots.length === count && plots.every((p) => (p.__peDraws || []).some((t) => t > since));
}"""


def page_time_main(browser, server, rounds: int) -> None:
    print("| view | charts (widened) | click to settled | click to last draw | page main thread |")
    print("|---|---:|---:|---:|---:|")
    context, app = _app_page(browser, server, 180_000)
    session = context.new_cdp_session(app.page)
    session.send("Performance.enable")

    def main_thread_ms() -> float:
        metrics = session.send("Performance.getMetrics")["metrics"]
        return 1000 * next(m["value"] for m in metrics if m["name"] == "TaskDuration")

    app.open()
    others = [view for view in registry.VIEWS if view is not registry.DEFAULT]
    n_plots = {}
    for view in others:  # caches warm, Plotly's code loaded, each view's charts counted
        app.click_tab(view.label)
        n_plots[view.label] = app.page.evaluate(PLOTS_JS)
    app.click_tab(registry.DEFAULT.label)
    for view in others:
        settled, drawn, busy, widened = [], [], [], []
        for _ in range(rounds):
            busy_before, since = main_thread_ms(), app.now()
            app.click_tab(view.label)  # settled, then quiet for 400 ms
            # The settle can come before a chart is on the page at all: wait for every one.
            app.page.wait_for_function(
                ALL_PLOTS_DRAWN_JS, arg=[since, n_plots[view.label]], polling=50
            )
            app.wait_quiet()
            busy.append(main_thread_ms() - busy_before)
            settled.append(app.page.evaluate("window.__pe.settledAt") - since)
            drawn.append(app.page.evaluate(LAST_DRAW_JS) - since)
            widened.append([wider for _, wider in app.page.evaluate(widened_margins_js())])
            app.click_tab(registry.DEFAULT.label)
        widened = [any(chart) for chart in zip(*widened, strict=True)]  # in any round
        if widened:  # a view with Plotly charts
            cells = [statistics.median(times) for times in (settled, drawn, busy)]
            print(
                f"| {view.label} | {len(widened)} ({sum(widened)}) | "
                + " | ".join(f"{cell:.0f} ms" for cell in cells)
                + " |",
                flush=True,
            )
    assert app.problems() == [], app.problems()
    context.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("Chromium not found: apt-get install chromium")
    rows = []
    with StreamlitServer() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        if "--views" in sys.argv:
            views_main(browser, server)
            browser.close()
            return
        if "--elements" in sys.argv:
            elements_main(browser, server)
            browser.close()
            return
        if "--page-time" in sys.argv:
            after = sys.argv[sys.argv.index("--page-time") + 1 :]
            rounds = int(after[0]) if after and after[0].isdigit() else 5
            page_time_main(browser, server, rounds)
            browser.close()
            return
        for name, query in CONFIGURATIONS.items():
            context, app = _app_page(browser, server, 120_000)
            fresh, cached = latencies(app, query)
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
