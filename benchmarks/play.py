"""The Play control of the unit circles (Relative position view), in headless Chromium.

For each speed the control offers, opens the view with that speed, presses ▶ Play and counts
Plotly's ``plotly_animatingframe`` events for a few seconds: the frames drawn per second
against the frames asked for, and the server runs during the animation (none: the frames are
played by the browser).

    .venv/bin/python benchmarks/play.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dashboard.views.rotation import SPEED  # noqa: E402
from tests.e2e import (  # noqa: E402
    CHROMIUM_ARGS,
    PAGE_HOOK_JS,
    PLAY_FRAMES_JS,
    PLOTLY_INTERRUPTED,
    VIEWPORT,
    StreamlitServer,
    find_chromium,
)
from tests.e2e.conftest import AppPage  # noqa: E402

#: Seconds of animation measured per speed (the 60 positions last 3 s at 20 per second).
MEASURED = 2.5


def played(app: AppPage, speed: int) -> tuple[float, int]:
    """Frames per second drawn while playing at ``speed``, and the server runs meanwhile."""
    app.open(f"rotation?rot_speed={speed}")
    app.wait_quiet()
    circles = app.page.locator(".js-plotly-plot").last
    circles.scroll_into_view_if_needed()
    app.page.evaluate(PLAY_FRAMES_JS)
    runs = app.page.evaluate("window.__pe.runEnds.length")
    circles.get_by_text("▶ Play").click()
    time.sleep(MEASURED)
    frames = [at for at, _ in app.page.evaluate("window.__frames")]
    server_runs = app.page.evaluate("window.__pe.runEnds.length") - runs
    circles.get_by_text("❚❚ Pause").click()
    problems = [p for p in app.problems() if p != PLOTLY_INTERRUPTED]
    assert problems == [], problems
    fps = (len(frames) - 1) / ((frames[-1] - frames[0]) / 1000) if len(frames) > 1 else 0.0
    return fps, server_runs


def main() -> None:
    from playwright.sync_api import sync_playwright

    with StreamlitServer() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(PAGE_HOOK_JS)
        app = AppPage(context.new_page(), server)
        print("| speed (positions/s) | frames drawn per second | drawn / asked | server runs |")
        print("|---:|---:|---:|---:|")
        for speed in SPEED.choices(None):
            fps, runs = played(app, speed)
            print(f"| {speed} | {fps:.1f} | {fps / speed:.2f} | {runs} |")
        browser.close()


if __name__ == "__main__":
    main()
