"""The Play control of the unit circles and of the sinusoids: the browser plays the positions
(no server run per frame), the slider follows, and Pause stops it."""

from __future__ import annotations

import re

import pytest

from benchmarks.harness import PLAY_FRAMES_JS, PLOTLY_INTERRUPTED, AppPage

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)

#: The traces a chart's frames move, as Plotly drew them: x, y and their style.
PLAYED_TRACES_JS = """(chart) => {
  const plots = document.querySelectorAll('.js-plotly-plot');
  const plot = plots[(chart + plots.length) % plots.length];
  return plot._transitionData._frames[0].traces.map((i) => {
    const t = plot._fullData[i];
    return {x: Array.from(t.x), y: Array.from(t.y),
            style: JSON.stringify([t.type, t.mode, t.line, t.marker, t.xaxis, t.yaxis])};
  });
}"""
#: The data of the frame of one position of a chart.
FRAME_DATA_JS = """([chart, name]) => {
  const plots = document.querySelectorAll('.js-plotly-plot');
  const plot = plots[(chart + plots.length) % plots.length];
  return plot._transitionData._frameHash[name].data;
}"""


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
    before = app.page.evaluate(PLAYED_TRACES_JS, chart)
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
    # The played traces stand where the last frame put them, drawn as before Play: a frame
    # carries only their x and y, merged into them (issue 51).
    now = app.page.evaluate(PLAYED_TRACES_JS, chart)
    shown = int(re.search(r"k = (\d+)", label.first.text_content()).group(1))
    moved = app.page.evaluate(FRAME_DATA_JS, [chart, str(shown)])
    assert [trace["style"] for trace in now] == [trace["style"] for trace in before]
    for trace, frame_trace in zip(now, moved, strict=True):
        assert {key: trace[key] for key in frame_trace} == frame_trace
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
