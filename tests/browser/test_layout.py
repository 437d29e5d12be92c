"""Layout a test can see in a real browser, at a phone's, a tablet's, a laptop's and a large
screen's width (390, 768, 1280 and 1920 px): no formula is cut off, no chart title passes its
chart's edge (below 768 px the titles are drawn above the charts as text that wraps, and must
fit the screen), the page never scrolls sideways and the list of views stays reachable: each
view is reached through it (the top bar, its "N more" menu, or the sidebar on a phone).

(AppTest sees the text of a formula, not whether it fits: issue 9 found the similarity
explainer's formula clipped at the right edge at 1440 px and below.) At 390 px a formula wider
than the screen scrolls inside its box, which is allowed there.
"""

from __future__ import annotations

import contextlib

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from benchmarks.harness import AppPage
from dashboard.registry import DEFAULT, VIEWS
from dashboard.ui import NARROW_WIDTH

pytestmark = pytest.mark.timeout(600)  # and `browser`, from the folder (tests/conftest.py)

#: For every displayed formula: its start, how much wider it is than its box (what the box
#: scrolls), how far it passes the box's right edge, and whether the box scrolls sideways.
FORMULAS_JS = """() => Array.from(document.querySelectorAll('.katex-display')).map((el) => {
  const box = el.closest('[data-testid="stElementContainer"]') || el.parentElement;
  const formula = el.querySelector('.katex-html') || el;
  const passes = formula.getBoundingClientRect().right - box.getBoundingClientRect().right;
  const scrolls = ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  return [formula.textContent.slice(0, 60), el.scrollWidth - el.clientWidth, passes, scrolls];
})"""

#: Chart titles that pass their chart's left or right edge: [start of the title, px].
TITLES_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((plot) => {
  const chart = plot.querySelector('.main-svg').getBoundingClientRect();
  const title = plot.querySelector('.gtitle');
  const box = title && title.getBoundingClientRect();
  if (!box || box.width === 0) return null;  // no title, or hidden on a narrow screen
  return [title.textContent.slice(0, 50), Math.max(box.right - chart.right, chart.left - box.left)];
}).filter((found) => found && found[1] > 2)"""

#: On a narrow screen: each chart with a title shows it above itself as text (not Plotly's), and
#: that text fits the screen. [start of the title, what is wrong].
NARROW_TITLES_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((plot) => {
  const text = plot.layout?.title?.text;
  if (!text) return null;
  const block = plot.closest('[data-testid="stVerticalBlock"]');
  const shown = block && block.querySelector('.pe-narrow-title');
  if (!shown || shown.getBoundingClientRect().height === 0) return [text.slice(0, 50), 'not shown'];
  const box = shown.getBoundingClientRect();
  if (box.right > window.innerWidth + 1 || shown.scrollWidth > shown.clientWidth + 1) {
    const by = Math.round(box.right - window.innerWidth);
    return [text.slice(0, 50), `passes the screen by ${by} px`];
  }
  return null;
}).filter((found) => found)"""

#: Something that leads to the other views is on screen: the top bar's links, or the menu it
#: collapses into on a narrow screen.
NAVIGATION_JS = """() => Array.from(document.querySelectorAll(
  '[data-testid="stTopNavLink"], [data-testid="stExpandSidebarButton"], '
  + '[data-testid="stNavSectionHeader"], [data-testid="stSidebarNavLink"], header button'
)).some((el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; })"""


#: The page's title and where its first chart starts (px from the top of the screen), or None.
FIRST_CHART_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const charts = Array.from(main.querySelectorAll(
    '.js-plotly-plot, [data-testid="stBidiComponentIsolated"], [data-testid="stBidiComponent"]'
  )).filter((el) => el.getBoundingClientRect().height > 100);
  const tops = charts.map((el) => el.getBoundingClientRect().top);
  const title = main.querySelector('h1');
  return [title ? title.innerText : null, tops.length ? Math.min(...tops) : null];
}"""
#: Pages whose first chart is drawn only after the reader acts: the Lesson (after the
#: prediction), Check (after an upload) and the Worked example (formulas and a table first).
NO_CHART_ON_ARRIVAL = {"lesson", "check", "example"}


@pytest.mark.parametrize("width", [390, 768, 1280, 1920])
def test_every_view_fits_the_screen(app: AppPage, width: int):
    app.page.set_viewport_size({"width": width, "height": 900})
    found = []
    app.open()  # the default view; the others through the navigation, in one session
    for view in VIEWS:
        slug = view.slug
        if view is not DEFAULT:
            app.click_tab(view.label)
        if slug not in NO_CHART_ON_ARRIVAL:  # an image chart may still be loading
            with contextlib.suppress(PlaywrightTimeout):
                app.page.wait_for_function(
                    f"() => ({FIRST_CHART_JS})()[1] !== null", timeout=20_000
                )
        title, first_chart = app.page.evaluate(FIRST_CHART_JS)
        if title != view.label:
            found.append(f"{slug}: the page's title is {title!r}")
        if slug not in NO_CHART_ON_ARRIVAL and (first_chart is None or first_chart > 900):
            found.append(f"{slug}: the first chart starts at {first_chart} px, below the screen")
        expander = app.page.locator('[data-testid="stExpander"] summary').first
        if expander.count() and app.page.locator(".katex-display").count() == 0:
            expander.click()  # open the explanation, where the formula is
            app.page.wait_for_timeout(300)
        for text, wider, passes, scrolls in app.page.evaluate(FORMULAS_JS):
            # A pixel or two of sub-pixel rounding is not a cut.
            if passes > 2:
                found.append(f"{slug}: formula {text!r} passes its box by {passes:.0f} px")
            elif wider > 2 and not (width < 768 and scrolls):
                found.append(f"{slug}: formula {text!r} is cut by {wider:.0f} px")
        for text, passes in app.page.evaluate(TITLES_JS):
            found.append(f"{slug}: chart title {text!r} passes its chart by {passes:.0f} px")
        if width < NARROW_WIDTH:
            for text, wrong in app.page.evaluate(NARROW_TITLES_JS):
                found.append(f"{slug}: chart title {text!r} above the chart: {wrong}")
        sideways = app.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        if sideways > 0:
            found.append(f"{slug}: the page scrolls sideways by {sideways} px")
        if not app.page.evaluate(NAVIGATION_JS):
            found.append(f"{slug}: no way to the other views on screen")
    assert found == []
    app.assert_clean()
