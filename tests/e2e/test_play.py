"""The Play control of the unit circles: the browser plays the positions (no server run per
frame), the slider follows, and Pause stops it."""

from __future__ import annotations

import re

import pytest

from . import PLAY_FRAMES_JS, PLOTLY_INTERRUPTED
from .conftest import AppPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_play_sweeps_the_positions_in_the_browser(app: AppPage):
    app.open("rotation?rot_speed=20")
    app.wait_quiet()
    circles = app.page.locator(".js-plotly-plot").last
    circles.scroll_into_view_if_needed()
    app.page.evaluate(PLAY_FRAMES_JS)
    runs = app.page.evaluate("window.__pe.runEnds.length")
    circles.get_by_text("▶ Play").click()
    app.page.wait_for_function("() => window.__frames.length >= 10")
    frames = [name for _, name in app.page.evaluate("window.__frames")]
    assert frames[:10] == [str(k) for k in range(10)]  # the positions, in order
    label = circles.locator("text.slider-label")
    shown = int(re.search(r"k = (\d+)", label.first.text_content()).group(1))
    assert shown >= 9
    circles.get_by_text("❚❚ Pause").click()
    stopped = len(app.page.evaluate("window.__frames"))
    app.page.wait_for_timeout(500)  # ten frames' time at 20 positions a second
    assert len(app.page.evaluate("window.__frames")) == stopped
    assert app.page.evaluate("window.__pe.runEnds.length") == runs  # no server run
    assert [p for p in app.problems() if p != PLOTLY_INTERRUPTED] == []
