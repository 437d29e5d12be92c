"""The Play control of the unit circles and of the sinusoids: the browser plays the positions
(no server run per frame), the slider follows, and Pause stops it."""

from __future__ import annotations

import re

import pytest

from benchmarks.harness import PLAY_FRAMES_JS, PLOTLY_INTERRUPTED, AppPage

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)


@pytest.mark.parametrize(
    ("query", "chart", "first"),
    [("rotation?rot_speed=20", -1, 0), ("sinusoids?sin_speed=20&sin_from=40", 0, 40)],
    ids=["circles", "sinusoids"],
)
def test_play_sweeps_the_positions_in_the_browser(app: AppPage, query, chart, first):
    app.open(query)
    app.wait_quiet()
    circles = app.page.locator(".js-plotly-plot").nth(chart)
    circles.scroll_into_view_if_needed()
    app.page.evaluate(PLAY_FRAMES_JS, chart)
    runs = app.page.evaluate("window.__pe.runEnds.length")
    circles.get_by_text("▶ Play").click()
    app.page.wait_for_function("() => window.__frames.length >= 10")
    frames = [name for _, name in app.page.evaluate("window.__frames")]
    assert frames[:10] == [str(k) for k in range(first, first + 10)]  # the positions, in order
    label = circles.locator("text.slider-label")
    shown = int(re.search(r"k = (\d+)", label.first.text_content()).group(1))
    assert shown >= first + 9
    circles.get_by_text("❚❚ Pause").click()
    stopped = len(app.page.evaluate("window.__frames"))
    app.page.wait_for_timeout(500)  # ten frames' time at 20 positions a second
    assert len(app.page.evaluate("window.__frames")) == stopped
    assert app.page.evaluate("window.__pe.runEnds.length") == runs  # no server run
    assert [p for p in app.problems() if p != PLOTLY_INTERRUPTED] == []


def test_play_moves_down_the_heatmap_rows_in_the_browser(app: AppPage):
    app.open("?L=40")
    app.wait_quiet()
    runs = app.page.evaluate("window.__pe.runEnds.length")
    button = app.page.locator(".pe-play-button")
    row = (
        "() => Number(document.querySelector('[data-pe-image]')"
        ".getAttribute('data-pe-played-row') ?? -1)"
    )
    button.click()
    app.page.wait_for_function(f"({row})() >= 3")
    assert app.page.locator(".pe-played").inner_text().startswith("position ")
    button.click()  # Pause
    stopped = app.page.evaluate(row)
    app.page.wait_for_timeout(600)  # three rows' time at 5 rows a second
    assert app.page.evaluate(row) == stopped
    assert (
        app.page.locator(".pe-played").inner_text()
        == f"position {stopped}: row {stopped + 1} of 40"
    )
    assert app.page.evaluate("window.__pe.runEnds.length") == runs  # no server run
    assert app.problems() == []
