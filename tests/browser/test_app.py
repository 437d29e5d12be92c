"""The app in a real browser: every view draws and redraws, links restore state, bad links warn.

Run alone with ``pytest tests/browser``; with ``PE_SCREENSHOTS=1`` screenshots of every view land in
artifacts/screenshots/.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from benchmarks.harness import SCREENSHOTS, AppPage, widened_margins_js
from dashboard import registry, sidebar

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)

VIEWS = {view.slug: view.label for view in registry.VIEWS}
DEFAULT_VIEW = registry.DEFAULT.slug
DEFAULTS = {param.key: param.default for param in sidebar.PARAMS}


def query_of(url: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlsplit(url).query).items()}


def view_of(url: str) -> str:
    """The view a URL opens: its path (the default view at /)."""
    return urlsplit(url).path.strip("/") or DEFAULT_VIEW


def expect_view(app: AppPage, slug: str) -> None:
    from playwright.sync_api import expect

    path = f"/{slug}"  # the default view too: the root opens it at its own address
    expect(app.page).to_have_url(re.compile(rf"^[^?]*://[^/]+{re.escape(path)}(\?|#|$)"))


def url_with(key: str, value: str) -> re.Pattern:
    return re.compile(rf"[?&]{re.escape(key)}={re.escape(value)}(&|#|$)")


def expect_url(app: AppPage, key: str, value: str | None) -> None:
    """The address bar (updated by the app after its run) has ``key=value`` (None: no key)."""
    from playwright.sync_api import expect

    if value is None:
        expect(app.page).not_to_have_url(re.compile(rf"[?&]{re.escape(key)}="))
    else:
        expect(app.page).to_have_url(url_with(key, value))


def sidebar_values(app: AppPage) -> dict[str, str]:
    """What the sidebar widgets show, as text."""
    return {
        "L": app.number_input("Number of positions L").input_value(),
        "d": app.number_input("d_model").input_value(),
        "base": app.slider("base (log scale)").get_attribute("aria-valuetext"),
        "conv": app.combobox("Convention").input_value().split(" ")[0],
        "preset": app.combobox("Preset").input_value(),
    }


@pytest.mark.parametrize("slug", list(VIEWS))
def test_view_draws_and_redraws_after_a_parameter_change(app: AppPage, slug: str):
    label = VIEWS[slug]
    # Opened on the view's own path: reaching it through the navigation is what
    # test_tabs_switch_back_and_forth_in_one_session and test_every_view_fits_the_screen check.
    app.open("" if slug == DEFAULT_VIEW else slug)
    assert app.selected_tab() == label
    expect_view(app, slug)  # the view is the page's path, not a parameter
    expect_url(app, "view", None)
    app.assert_clean()
    app.screenshot(SCREENSHOTS / f"{slug}.png")
    # figures.base.MARGIN_* hold the axes and colour bars of the default configuration: each chart
    # is drawn once, not widened and drawn again. (The bottom is left to Plotly: a legend's
    # rows depend on the width.)
    widened = app.page.evaluate(widened_margins_js("lr"))
    assert [title for title, wider in widened if wider] == []

    if "d" not in registry.BY_SLUG[slug].shared(lambda param: param.default):
        # Issue 37: a page that does not read the sidebar's d_model does not show it.
        sidebar_d_model = '[data-testid="stSidebar"] input[aria-label="d_model"]'
        assert app.page.locator(sidebar_d_model).count() == 0
        return
    charts = app.signature()  # "" for a view without charts (text, tables, code only)
    new_d = 64 if app.number_input("d_model").input_value() != "64" else 96
    app.set_number("d_model", new_d)  # waits until the page changed and its charts redrew
    if charts:
        assert app.signature() != charts, f"no chart of {label} changed with d_model"
    assert app.number_input("d_model").input_value() == str(new_d)
    assert app.selected_tab() == label
    expect_url(app, "d", str(new_d))
    expect_view(app, slug)
    app.assert_clean()


def test_tabs_switch_back_and_forth_in_one_session(app: AppPage):
    app.open()
    labels = list(VIEWS.values())
    visited = [DEFAULT_VIEW]
    for slug, label in [*list(VIEWS.items())[1:], next(iter(VIEWS.items()))]:
        app.click_tab(label)
        assert app.selected_tab() == label
        current = app.page.locator('[aria-current="page"]')
        assert current.count() == 1 and current.inner_text().strip() in labels
        expect_view(app, slug)
        visited.append(slug)
        app.assert_clean()
    # Issue 9: the browser's Back button returns to the previous view.
    from playwright.sync_api import expect

    for previous in reversed(visited[:-1][-3:]):
        app.go_back()
        expect_view(app, previous)
        expect(app.page.locator('[aria-current="page"]')).to_have_text(VIEWS[previous])
    app.wait_settled(since=-1)
    app.assert_clean()


#: How many times the page fetched Plotly's chart script (Streamlit's lazily imported chunk).
PLOTLY_FETCHES_JS = """() => performance.getEntriesByType("resource")
  .filter((entry) => /\\/PlotlyChart\\.[^/]+\\.js$/.test(entry.name)).length"""


def test_plotly_code_loads_while_the_first_view_is_idle(fresh_app: AppPage):
    """The default view draws no Plotly chart; once the reader is active on the page (here: the
    pointer moves) and the page is idle, it fetches Plotly's code from the URL Streamlit
    imports it from, so the first Plotly view finds it loaded (dashboard/plotly_preload.py)
    and the script is fetched once. A page nobody acts on waits 5 s before it does. (In a
    browser context of its own: an empty cache.)"""
    app = fresh_app
    app.open()
    assert app.page.locator('[data-testid="stPlotlyChart"]').count() == 0
    app.page.wait_for_timeout(1500)  # past the first second, with no sign of a reader
    assert app.page.evaluate(PLOTLY_FETCHES_JS) == 0
    app.page.mouse.move(300, 300)
    app.page.mouse.move(320, 310)
    app.page.wait_for_function(f"() => ({PLOTLY_FETCHES_JS})() === 1", timeout=30_000)
    app.click_tab(VIEWS["sinusoids"])
    assert app.page.locator('[data-testid="stPlotlyChart"]').count() > 0
    assert app.page.evaluate(PLOTLY_FETCHES_JS) == 1
    app.assert_clean()


@pytest.mark.parametrize("form", ["path", "old ?view= link"])
def test_shared_link_restores_parameters_and_view(app: AppPage, form: str):
    link = {"L": "100", "d": "20", "base": "500", "conv": "split"}
    query = "&".join(f"{key}={value}" for key, value in link.items())
    if form == "path":
        app.open("sinusoids?" + query)
    else:  # links made before the app had pages still open the same view with the same values
        app.open("?view=sinusoids&" + query)
    assert sidebar_values(app) == {
        "L": "100",
        "d": "20",
        "base": "500",
        "conv": "split",
        "preset": "Custom",  # base 500 matches no preset
    }
    assert app.selected_tab() == VIEWS["sinusoids"]
    assert app.warnings() == []
    expect_view(app, "sinusoids")
    assert query_of(app.page.url) == link  # the link stays a link to what is shown
    app.assert_clean()


def test_garbage_link_warns_and_falls_back_to_defaults(app: AppPage):
    from playwright.sync_api import expect

    app.open("?L=abc&d=-5&conv=nope&view=zzz&junk=1")
    warnings = app.warnings()
    for bad in ("L=abc", "d=-5", "conv=nope", "view=zzz"):
        assert any("Ignored URL parameter" in w and bad in w for w in warnings), (bad, warnings)
    assert any("unknown URL parameter" in w and "junk" in w for w in warnings), warnings
    assert len(warnings) == 5, warnings
    for alert in app.page.locator('[data-testid="stAlertContentWarning"]').all():
        expect(alert).to_be_visible()

    defaults = DEFAULTS
    shown = sidebar_values(app)
    assert shown["L"] == str(defaults["L"])  # not a number: the default
    assert shown["d"] == "1"  # out of range: the nearest allowed value, as when typed
    assert shown["base"] == f"{defaults['base']:g}"
    assert shown["conv"] == defaults["conv"]
    assert app.selected_tab() == VIEWS[DEFAULT_VIEW]
    assert query_of(app.page.url) == {"d": "1"}  # only the value in force, nothing else
    app.assert_clean()  # warnings, but no errors

    app.page.get_by_role("button", name="Dismiss").click()
    expect(app.page.locator('[data-testid="stAlertContentWarning"]')).to_have_count(0)
    app.assert_clean()


def test_url_follows_every_change_and_reopens_the_same_state(app: AppPage):
    app.open()
    app.set_number("Number of positions L", 500)  # 300 is the default
    expect_url(app, "L", "500")
    app.choose("Convention", "split")
    expect_url(app, "conv", "split")
    app.step_slider("base (log scale)", "ArrowRight")  # 10,000 -> 20,000 on the 1-2-5 scale
    expect_url(app, "base", "20000")
    app.click_tab(VIEWS["wavelengths"])
    expect_view(app, "wavelengths")
    assert query_of(app.page.url) == {"L": "500", "conv": "split", "base": "20000"}
    app.assert_clean()

    # The address bar is a working link: a new session opened on it shows the same state.
    other = app.new_page()
    other.open(urlsplit(app.page.url).path.lstrip("/") + "?" + urlsplit(app.page.url).query)
    assert sidebar_values(other) == {
        "L": "500",
        "d": str(DEFAULTS["d"]),
        "base": "20000",
        "conv": "split",
        "preset": "Custom",
    }
    assert other.selected_tab() == VIEWS["wavelengths"]
    assert other.warnings() == []
    other.assert_clean()
    other.page.close()

    # A preset sets several parameters at once; the URL keeps only what differs from defaults.
    app.choose("Preset", "d2l")
    expect_url(app, "L", "60")
    assert query_of(app.page.url) == {"L": "60", "d": "32"}
    expect_view(app, "wavelengths")
    assert sidebar_values(app)["preset"] == "d2l"
    app.assert_clean()


def test_a_view_parameter_follows_its_widget_and_leaves_with_its_view(app: AppPage):
    # Moved from AppTest (the browser writes bound widgets into the URL): the rotation offset.
    app.open("rotation")
    field = app.page.locator('[data-testid="stMain"] input[aria-label="Offset δ"]')
    before, since = app.page_signature(), app.now()
    field.fill("12")
    field.press("Enter")
    app.wait_settled(since, before, some=True)
    expect_url(app, "rot_offset", "12")
    app.click_tab(VIEWS["heatmap"])  # another view: its parameters leave the address bar
    expect_url(app, "rot_offset", None)
    app.assert_clean()


def test_an_out_of_range_value_typed_shows_the_value_in_force(app: AppPage):
    # Issue 9: typing 9000 left the box showing 9000 (outlined in red) while 512 stayed in force.
    app.open()
    app.set_number("d_model", 9000)
    assert app.number_input("d_model").input_value() == "8192"
    expect_url(app, "d", "8192")
    note = app.sidebar.get_by_text("using 8,192 instead of 9,000")
    assert note.count() == 1
    app.assert_clean()


def test_heatmap_image_hover_reads_the_cell(app: AppPage):
    # Issue 9 / 14: the paper's 2,048 x 512 encoding drawn as an image at full resolution; the
    # hover names the position, the column's pair, role, frequency and wavelength, and a value
    # within the stated bound of the exact one.
    import pe_core

    app.open("?L=2048&d=512")
    canvas = app.page.locator(".pe-canvas")
    box = canvas.bounding_box()
    row, column = 1000, 3
    canvas.hover(
        position={"x": (column + 0.5) / 512 * box["width"], "y": (row + 0.5) / 2048 * box["height"]}
    )
    tip = app.page.locator(".pe-tip")
    where, what, value = tip.inner_text().splitlines()
    # A CSS pixel covers about 2.3 rows: the pointer lands on one of the rows next to 1,000.
    position = int(re.fullmatch(r"position ([\d,]+)", where).group(1).replace(",", ""))
    assert abs(position - row) <= 3
    assert what == "column 3: pair i=1, cos, ω=0.9647 rad/pos, λ=6.513 pos"
    shown, bound = re.fullmatch(r"value ≈ (-?[\d.]+) \(±([\d.]+)\)", value).groups()
    assert bound == "0.0044"
    exact = pe_core.sinusoidal_encoding([position], 512)[0, column]
    assert abs(float(shown) - exact) <= float(bound)
    # Drawn at the box's size: the page says how many rows each screen pixel averages.
    note = app.page.locator(".pe-screen").inner_text()
    assert note.startswith("At this size each screen pixel shows the mean of about")
    assert app.page.locator("[data-pe-image]").count() == 1
    app.assert_clean()


def test_similarity_image_hover_reads_the_pair(app: AppPage):
    # Issue 14: the 512 x 512 similarity matrix drawn as an image from its float32 values; the
    # hover names the two positions and their offset, and the value to six significant digits.
    import numpy as np

    import pe_core

    app.open("similarity?L=2048&d=512")
    canvas = app.page.locator(".pe-canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    row, column = 300, 40  # positions 1,200 and 160 (every 4th of 2,048)
    canvas.hover(
        position={"x": (column + 0.5) / 512 * box["width"], "y": (row + 0.5) / 512 * box["height"]}
    )
    pair, offset, value = app.page.locator(".pe-tip").inner_text().splitlines()
    first, second = re.fullmatch(r"positions ([\d,]+) and ([\d,]+)", pair).groups()
    first, second = int(first.replace(",", "")), int(second.replace(",", ""))
    assert abs(first - 1200) <= 4 and abs(second - 160) <= 4  # the cell under the pointer
    assert offset == f"offset {abs(second - first):,}"
    exact = pe_core.offset_similarity(np.array([second - first]), 512)[0]
    kind, shown = value.split()
    assert kind == "cosine" and len(shown.replace("−", "").replace(".", "").lstrip("0")) == 6
    assert float(shown.replace("−", "-")) == float(f"{np.float32(exact):.6g}")
    assert app.page.locator("[data-pe-image]").count() == 1
    assert app.page.locator(".js-plotly-plot").count() == 1  # the offset profile
    app.assert_clean()
