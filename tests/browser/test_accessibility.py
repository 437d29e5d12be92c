"""Accessibility a browser can check: charts have words a screen reader reads (and the screen
does not show), the chart toolbar has four buttons, and keyboard focus is a visible blue ring
on every control the Tab key reaches, in the light and the dark theme."""

from __future__ import annotations

import pytest

from benchmarks.harness import AppPage
from dashboard import sidebar

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)

#: The focus ring's colour (dashboard/static/focus.css, ui.FOCUS_STYLE).
FOCUS_BLUE = "rgb(59, 130, 246)"


def test_charts_have_hidden_words_and_a_small_toolbar(app: AppPage):
    app.open("similarity")
    # The matrix is an image that says what it shows; the profile below it a Plotly chart.
    image = app.page.locator("[data-pe-image] [role=img]")
    label = f"Heatmap of the cosine between {sidebar.DEFAULT_POSITIONS} positions"
    assert image.get_attribute("aria-label").startswith(label)
    charts = app.page.locator(".js-plotly-plot")
    words = app.page.locator(".pe-chart-text")
    assert charts.count() == words.count() == 1
    for index in range(words.count()):
        text = words.nth(index).text_content()
        assert text.startswith("Chart: ") and ("lowest" in text or "cells" in text)
        box = words.nth(index).bounding_box()
        assert box["width"] <= 1 and box["height"] <= 1  # read, not drawn
    app.page.locator(".js-plotly-plot").first.hover()
    buttons = charts.first.locator(".modebar-btn")
    assert buttons.count() == 4
    titles = {buttons.nth(i).get_attribute("data-title") for i in range(4)}
    assert titles == {"Download plot as a PNG", "Zoom", "Pan", "Reset axes"}
    assert app.problems() == []


def test_keyboard_focus_is_a_blue_ring(app: AppPage):
    app.open("similarity")
    seen = []
    for _ in range(16):
        app.page.keyboard.press("Tab")
        style = app.page.evaluate(
            "() => { const e = document.activeElement, s = getComputedStyle(e);"
            " return [e.tagName, e.getAttribute('aria-label') || e.textContent.trim().slice(0, 30),"
            " s.outlineStyle, s.outlineColor, s.outlineWidth]; }"
        )
        seen.append(style)
    for tag, name, outline, colour, width in seen:
        assert outline == "solid" and colour == FOCUS_BLUE and width == "2px", (tag, name)
    assert any(tag == "A" and name == "Heatmap" for tag, name, *_ in seen)  # the navigation
