"""Light and dark: the app follows the system's colour scheme, the app menu switches it, and the
charts are restyled with the page (their text light on the dark background)."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from . import PAGE_HOOK_JS
from .conftest import RUN_TIMEOUT_MS, SCREENSHOTS, VIEWPORT, AppPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

#: The page's background in each theme (.streamlit/config.toml).
BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(14, 17, 23)"}


@contextmanager
def _app_in(browser, server, scheme: str):
    """A page on the app in a browser whose system preference is ``scheme``."""
    context = browser.new_context(viewport=VIEWPORT, color_scheme=scheme)
    context.add_init_script(PAGE_HOOK_JS)
    page = context.new_page()
    page.set_default_timeout(RUN_TIMEOUT_MS)
    try:
        yield AppPage(page, server)
    finally:
        context.close()


def _background(app: AppPage) -> str:
    return app.page.evaluate(
        "getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"
    )


def _chart_title_is_light(app: AppPage) -> bool:
    """Whether the first chart's title is drawn in a light colour (its luminance above half)."""
    fill = app.page.evaluate(
        "getComputedStyle(document.querySelector('.js-plotly-plot .gtitle')).fill"
    )
    red, green, blue = (int(part) for part in fill[fill.index("(") + 1 : -1].split(",")[:3])
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue > 128


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_follows_the_system_preference(browser, server, scheme):
    with _app_in(browser, server, scheme) as app:
        app.open("wavelengths")
        assert _background(app) == BACKGROUND[scheme]
        assert _chart_title_is_light(app) == (scheme == "dark")
        assert app.problems() == []
        app.screenshot(SCREENSHOTS / f"theme_{scheme}_wavelengths.png")


def test_the_menu_switches_the_theme(browser, server):
    with _app_in(browser, server, "light") as app:
        app.open("wavelengths")
        assert _background(app) == BACKGROUND["light"]
        app.page.locator('[data-testid="stMainMenu"]').click()
        app.page.locator('[data-testid="stMainMenuItem-theme-Dark"]').click()
        app.page.wait_for_function(
            "bg => getComputedStyle(document.querySelector('[data-testid=stApp]'))"
            ".backgroundColor === bg",
            arg=BACKGROUND["dark"],
        )
        app.page.wait_for_function(
            "() => { const t = document.querySelector('.js-plotly-plot .gtitle');"
            " const [r, g, b] = getComputedStyle(t).fill.match(/\\d+/g).map(Number);"
            " return 0.2126 * r + 0.7152 * g + 0.0722 * b > 128; }"
        )
        assert app.problems() == []


def test_a_presentation_link_opens_large_with_the_sidebar_closed(app: AppPage):
    app.open("wavelengths?present=true")
    # Closed: its button to open it is on screen, and the sidebar is not.
    assert app.page.locator('[data-testid="stExpandSidebarButton"]').is_visible()
    box = app.page.get_by_role("spinbutton", name="Number of positions L").bounding_box()
    assert box["x"] + box["width"] <= 0  # moved out of the screen
    size = app.page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector("
        "'[data-testid=stMain] [data-testid=stMarkdownContainer] p')).fontSize)"
    )
    assert size >= 21  # 1.35rem
    assert app.problems() == []
    app.screenshot(SCREENSHOTS / "presentation_wavelengths.png")
