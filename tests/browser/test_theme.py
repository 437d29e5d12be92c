"""Light and dark: the app follows the system's colour scheme, the app menu switches it, and the
charts are restyled with the page (their text light on the dark background)."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from benchmarks.harness import PAGE_HOOK_JS, RUN_TIMEOUT_MS, SCREENSHOTS, VIEWPORT, AppPage

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)

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
        # The charts are redrawn for the dark page: wait for a title (none while Plotly
        # redraws, which may be the moment this first looks) drawn light.
        app.page.wait_for_function(
            "() => { const t = document.querySelector('.js-plotly-plot .gtitle');"
            " if (!t) return false;"
            " const [r, g, b] = getComputedStyle(t).fill.match(/\\d+/g).map(Number);"
            " return 0.2126 * r + 0.7152 * g + 0.0722 * b > 128; }"
        )
        assert app.problems() == []


def _luminance(rgb) -> float:
    red, green, blue = rgb[:3]
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


#: The colour a Plotly heatmap of the page draws for 0: its colour scale at the middle.
_PLOTLY_ZERO_JS = """() => {
  const plot = document.querySelector('.js-plotly-plot');
  const trace = plot && plot.data.find((t) => t.type === 'heatmap');
  if (!trace) return null;
  const middle = trace.colorscale.find(([at]) => at === 0.5);
  return middle[1].match(/[\\d.]+/g).map(Number);
}"""


def _image_zero(app: AppPage) -> list[int]:
    """The colour an image (the heatmap, or the similarity matrix for cosine) draws for 0:
    the middle level of its colour bar."""
    return app.page.locator(".pe-bar").evaluate(
        "bar => Array.from(bar.getContext('2d').getImageData(0, 127, 1, 1).data.slice(0, 3))"
    )


def _switch_to(app: AppPage, theme: str) -> None:
    """The app menu's theme switch, until the page is redrawn in ``theme``."""
    app.page.locator('[data-testid="stMainMenu"]').click()
    app.page.locator(f'[data-testid="stMainMenuItem-theme-{theme.title()}"]').click()
    app.page.wait_for_function(
        "bg => getComputedStyle(document.querySelector('[data-testid=stApp]'))"
        ".backgroundColor === bg",
        arg=BACKGROUND[theme],
    )


def test_colour_scales_follow_the_theme(browser, server):
    """On a dark page 0 is drawn dark (the light scale's white 0 would glare), in the image
    heatmap and in the Plotly heatmaps, and the app menu's switch restyles both with nothing
    else done: the image in the browser, the Plotly heatmaps by a rerun the page asks for."""
    with _app_in(browser, server, "dark") as app:
        app.open("")
        assert _luminance(_image_zero(app)) < 60
        _switch_to(app, "light")
        app.page.wait_for_function(
            "() => { const host = document.querySelector('[data-pe-image]');"
            " const bar = (host.shadowRoot || host).querySelector('.pe-bar');"
            " return bar.getContext('2d').getImageData(0, 127, 1, 1).data[0] > 200; }"
        )
        app.open("similarity")  # a new page load follows the system again: dark
        assert _luminance(_image_zero(app)) < 60  # the similarity matrix's image, too
        app.open("rotation")
        assert _luminance(app.page.evaluate(_PLOTLY_ZERO_JS)) < 60
        _switch_to(app, "light")
        app.page.wait_for_function(f"() => ({_PLOTLY_ZERO_JS})()?.[0] > 200")
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
