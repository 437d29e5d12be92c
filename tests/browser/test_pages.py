"""The pages as a browser shows them (issue 53, case 12): their addresses and tab titles, the
first screen of a first visit, formulas on a phone, and the two 404s of a first load.

Each test opens a page in a context of its own (the size of its screen, or a script run before
the app's), from the session's server.
"""

from __future__ import annotations

import contextlib
import re

import pytest

from benchmarks.harness import app_context, app_page
from dashboard import registry

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)

SCREENS = {"desktop": (1440, 900), "tablet": (768, 1024), "phone": (390, 844)}

#: The top of the first chart of the main column and of the explanation, in pixels from the
#: top of the screen (charts: Plotly's and the app's own components; the app's invisible helpers,
#: keys starting with "_", are not charts).
_TOPS_JS = """() => {
  const top = document.querySelector(
      '[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"]');
  const charts = [...top.children].filter(c => !/st-key-_/.test(c.className)
      && c.querySelector('.stBidiComponent, [data-testid="stPlotlyChart"]'));
  const tops = charts.map(c => c.getBoundingClientRect().top);
  const explainer = top.querySelector('[class*="st-key-explain_"]');
  return {chart: tops.length ? Math.min(...tops) : null,
          explainer: explainer ? explainer.getBoundingClientRect().top : null,
          open: !!explainer?.querySelector('details[open]')};
}"""


@contextlib.contextmanager
def _page(browser, server, *, size=(1440, 900), init_script: str | None = None):
    context = app_context(browser)
    try:
        if init_script:
            context.add_init_script(init_script)
        app = app_page(context, server)
        app.page.set_viewport_size({"width": size[0], "height": size[1]})
        yield app
    finally:
        context.close()


def _open(app, path: str) -> None:
    app.page.goto(app.server.url + path)
    app.wait_settled(since=-1)


@pytest.mark.parametrize("path", ["/", "/heatmap", "/?L=500"])
def test_the_default_view_is_at_its_own_address(browser, server, path):
    """/heatmap used to turn into / in the address bar; the root now opens /heatmap."""
    with _page(browser, server) as app:
        _open(app, path)
        assert re.search(r"://[^/]+/heatmap(\?|$)", app.page.url), app.page.url
        if "L=500" in path:  # a value other than the default stays in the address
            assert "L=500" in app.page.url
        assert app.page.title() == "Heatmap · Positional Encoding Explorer"
        app.assert_clean()


def test_each_page_has_its_own_tab_title(browser, server):
    with _page(browser, server) as app:
        for view in (registry.BY_SLUG["rope"], registry.BY_SLUG["distance"]):
            _open(app, f"/{view.slug}")
            assert app.page.title() == f"{view.label} · Positional Encoding Explorer"


def test_a_parameter_change_keeps_the_tab_title(browser, server):
    """Issue 51: every run set the tab's title twice, the app's name and then the page's (each
    a message within the page and a new title for the browser); a run now sets it once."""
    with _page(browser, server) as app:
        _open(app, "/sinusoids")
        app.page.evaluate(
            """() => { window.__titles = [];
            new MutationObserver(() => window.__titles.push(document.title)).observe(
                document.querySelector("title"), {childList: true, characterData: true,
                                                  subtree: true}); }"""
        )
        app.step_slider("base (log scale)")
        titles = set(app.page.evaluate("window.__titles"))
        assert titles <= {"Sinusoids · Positional Encoding Explorer"}, titles
        assert app.page.title() == "Sinusoids · Positional Encoding Explorer"


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize(
    "slug", ["heatmap", "wavelengths", "rope", "similarity", "sinusoids", "rotation"]
)
def test_a_first_visit_shows_the_chart_on_the_first_screen(browser, server, slug, screen):
    """The explanation is open on a first visit and stands under the page's first chart: it
    used to push every chart below the first screen (the Heatmap's to 730 px, the RoPE lab's
    past 1,100 on a phone). The pages' first charts: an image, a Plotly chart in the column,
    one in a fragment (Sinusoids), one in columns (Relative position)."""
    width, height = SCREENS[screen]
    with _page(browser, server, size=(width, height)) as app:
        _open(app, f"/{slug}")
        tops = app.page.evaluate(_TOPS_JS)
        assert tops["open"], "the explanation is open on a first visit"
        assert tops["chart"] is not None and tops["chart"] < height, tops
        assert tops["explainer"] > tops["chart"], tops


@pytest.mark.parametrize("slug", ["sinusoids", "rotation", "conventions"])
def test_the_explanation_stands_under_the_first_chart_wherever_the_chart_is_drawn(
    browser, server, slug
):
    """The first chart drawn in a fragment (Sinusoids), in a column (Relative position) or on
    its own (Conventions): its mark follows its row, the explanation stands under it; a
    change inside the fragment runs it alone, and the mark stays (issue 51: the mark replaced
    a :has() over every row's subtree)."""
    with _page(browser, server) as app:
        _open(app, f"/{slug}")
        tops = app.page.evaluate(_TOPS_JS)
        assert tops["chart"] is not None and tops["explainer"] > tops["chart"], tops
        assert app.page.locator(".st-key-pe_first_chart").count() == 1
        if slug == "sinusoids":
            since = app.now()
            field = app.page.locator(".st-key-sin_from input")
            field.fill("5")
            field.press("Enter")
            app.wait_settled(since, some=True)
            app.wait_quiet()
            assert app.page.locator(".st-key-sin_from input").input_value() == "5"
            again = app.page.evaluate(_TOPS_JS)
            assert again["explainer"] > again["chart"], again
            assert app.page.locator(".st-key-pe_first_chart").count() == 1
        app.assert_clean()


def test_the_distance_formula_fits_a_phone(browser, server):
    with _page(browser, server, size=SCREENS["phone"]) as app:
        _open(app, "/distance")
        # What a formula's box would need beyond what it shows (at 390 px the one-line formula
        # needed 448 pixels in 324 and was cut at the right); a few pixels are a glyph's
        # overhang, not a cut.
        widths = app.page.evaluate(
            "() => [...document.querySelectorAll('.katex-display')].map("
            "e => [e.scrollWidth, e.clientWidth])"
        )
        assert widths, "the explanation's formula is on the page"
        assert all(scroll <= client + 4 for scroll, client in widths), widths


#: What the app would have to say before Streamlit's script reads it to skip the probes: where
#: the server is (docs/deploy.md writes it into the page with the proxy).
BASE_URLS = (
    "window.__streamlit = {BACKEND_BASE_URL: location.origin + '/', "
    "MAIN_PAGE_BASE_URL: location.origin + '/'}"
)


@pytest.mark.parametrize("told", [False, True], ids=["as served", "base URL set"])
def test_the_two_404s_of_a_first_load_are_streamlits_base_path_probe(browser, server, told):
    """Opened on /similarity, Streamlit's front end asks /similarity/_stcore/health and
    /similarity/_stcore/host-config first (taking the page's path for the server's base path,
    Streamlit issue #7074); with the base URL set before its script runs, it asks no such
    thing. Nothing else fails."""
    with _page(browser, server, init_script=BASE_URLS if told else None) as app:
        failed = []
        app.page.on(
            "response",
            lambda r: failed.append(r.url.replace(server.url, "")) if r.status >= 400 else None,
        )
        _open(app, "/similarity?L=300")
        app.wait_quiet()
        expected = [] if told else ["/similarity/_stcore/health", "/similarity/_stcore/host-config"]
        assert sorted(failed) == expected


def test_an_old_link_through_the_root_keeps_every_value_of_a_repeated_key(browser, server):
    """The root opens the default view's page, then an old ``?view=`` link its own: a repeated
    key (dims=4&dims=5) keeps both values on the way."""
    with _page(browser, server) as app:
        _open(app, "/?view=sinusoids&dims=4&dims=5")
        app.page.wait_for_url(re.compile(r"/sinusoids\?"))
        assert re.search(r"dims=4&dims=5", app.page.url), app.page.url
        app.assert_clean()
