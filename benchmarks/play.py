"""The Play controls, in headless Chromium: the unit circles (Relative position view), the
sinusoids (Sinusoids view) and the rows of the heatmap image (Heatmap view).

For each speed a control offers, opens its view at that speed, presses ▶ Play and counts, for
a few seconds, the frames the browser drew: for the Plotly charts, Plotly's
``plotly_animatingframe`` events; for the heatmap image (its own script), the animation frames
at which the played row had moved since the last one (a row set twice between two paints
counts once). Reported against the frames asked for, with the server runs meanwhile (none: the
browser plays).

    .venv/bin/python benchmarks/play.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import (  # noqa: E402
    CHROMIUM_ARGS,
    PAGE_HOOK_JS,
    PLAY_FRAMES_JS,
    PLOTLY_INTERRUPTED,
    VIEWPORT,
    AppPage,
    StreamlitServer,
    find_chromium,
)
from dashboard.encoding_image import ROW_SPEEDS  # noqa: E402
from dashboard.params import PLAY_SPEEDS  # noqa: E402

#: Seconds of animation measured per speed (60 circle positions last 3 s at 20 a second).
MEASURED = 2.5
#: The views whose Plotly chart plays: (name, link with the speed, which chart).
PLOTLY_PLAYS = (
    ("unit circles", "rotation?rot_speed={speed}", -1),
    ("sinusoids", "sinusoids?sin_speed={speed}", 0),
)
#: Records each step of the heatmap's played row, and each animation frame at which it had
#: moved since the last.
PAINTED_ROWS_JS = """() => {
  const host = document.querySelector('[data-pe-image]');
  window.__rows = [];
  window.__steps = [];
  new MutationObserver(() => window.__steps.push(performance.now()))
    .observe(host, {attributes: true, attributeFilter: ['data-pe-played-row']});
  let last = host.getAttribute('data-pe-played-row');
  const tick = (now) => {
    const row = host.getAttribute('data-pe-played-row');
    if (row !== last) { window.__rows.push(now); last = row; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


def _rate(times: list[float]) -> float:
    """Events per second from their times in milliseconds."""
    return (len(times) - 1) / ((times[-1] - times[0]) / 1000) if len(times) > 1 else 0.0


def _check(app: AppPage) -> None:
    problems = [p for p in app.problems() if p != PLOTLY_INTERRUPTED]
    assert problems == [], problems


def plotly_play(app: AppPage, link: str, chart: int) -> tuple[float, int]:
    """Frames per second Plotly drew while playing, and the server runs meanwhile."""
    app.open(link)
    app.wait_quiet()
    plot = app.page.locator(".js-plotly-plot").nth(chart)
    plot.scroll_into_view_if_needed()
    app.page.evaluate(PLAY_FRAMES_JS, chart)
    runs = app.page.evaluate("window.__pe.runEnds.length")
    plot.get_by_text("▶ Play").click()
    time.sleep(MEASURED)
    frames = [at for at, _ in app.page.evaluate("window.__frames")]
    server_runs = app.page.evaluate("window.__pe.runEnds.length") - runs
    plot.get_by_text("❚❚ Pause").click()
    _check(app)
    return _rate(frames), server_runs


def heatmap_play(app: AppPage, speed: int) -> tuple[float, float, int]:
    """Rows stepped and rows painted per second while the heatmap image plays, and the server
    runs meanwhile."""
    app.open("")
    app.wait_quiet()
    app.page.locator(".pe-speed").select_option(str(speed))
    app.page.evaluate(PAINTED_ROWS_JS)
    runs = app.page.evaluate("window.__pe.runEnds.length")
    button = app.page.locator(".pe-play-button")
    button.click()
    time.sleep(MEASURED)
    painted, steps = app.page.evaluate("[window.__rows, window.__steps]")
    server_runs = app.page.evaluate("window.__pe.runEnds.length") - runs
    button.click()  # Pause
    _check(app)
    return _rate(steps), _rate(painted), server_runs


def _table(name: str, unit: str, results) -> None:
    print(f"\n{name}\n")
    print(f"| speed ({unit}/s) | frames drawn per second | drawn / asked | server runs |")
    print("|---:|---:|---:|---:|")
    for speed, (fps, runs) in results:
        print(f"| {speed} | {fps:.1f} | {fps / speed:.2f} | {runs} |")


def main() -> None:
    from playwright.sync_api import sync_playwright

    with StreamlitServer() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(PAGE_HOOK_JS)
        app = AppPage(context.new_page(), server)
        for name, link, chart in PLOTLY_PLAYS:
            results = [
                (speed, plotly_play(app, link.format(speed=speed), chart)) for speed in PLAY_SPEEDS
            ]
            _table(name, "positions", results)
        print("\nheatmap rows\n")
        print(
            "| speed (rows/s) | rows stepped per second | rows drawn per second | drawn / asked "
            "| server runs |"
        )
        print("|---:|---:|---:|---:|---:|")
        for speed in ROW_SPEEDS:
            steps, drawn, runs = heatmap_play(app, speed)
            print(f"| {speed} | {steps:.1f} | {drawn:.1f} | {drawn / speed:.2f} | {runs} |")
        browser.close()


if __name__ == "__main__":
    main()
