"""Each Plotly chart drawn once, in Streamlit's chart theme (dashboard/plotly_theme.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.harness import PAGE_HOOK_JS, RUN_TIMEOUT_MS, VIEWPORT, AppPage, StreamlitServer
from dashboard import plotly_theme

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)

#: Counts the full draws of each chart (Plotly's ``_doPlot`` announces each with
#: ``plotly_beforeplot``), from the moment Plotly sets up its event emitter on the chart's div.
FULL_DRAWS_JS = """
(() => {
  const set = Object.getOwnPropertyDescriptor(HTMLElement.prototype, "emit").set;
  Object.defineProperty(HTMLElement.prototype, "emit", {
    configurable: true,
    get() { return undefined; },
    set(original) {
      this.__peFullDraws = this.__peFullDraws || [];
      if (this._ev && !this.__peCounting) {
        this.__peCounting = true;
        this._ev.on("plotly_beforeplot", () => this.__peFullDraws.push(performance.now()));
      }
      set.call(this, original);
    },
  });
})();
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_theme_written_into_the_figures_is_streamlits(browser, tmp_path, scheme):
    """static/plotly_theme.json is what Streamlit's chart theme resolves to with this app's
    config: taken again from a chart Streamlit themes itself (fails on another Streamlit or
    another theme in .streamlit/config.toml)."""
    root = Path(__file__).resolve().parents[2]
    probe = StreamlitServer(
        tmp_path / "probe.log", app=Path(__file__).with_name("streamlit_theme_probe.py"), cwd=root
    )
    probe.start(timeout=60)
    context = browser.new_context(viewport=VIEWPORT, color_scheme=scheme)
    try:
        page = context.new_page()
        page.set_default_timeout(RUN_TIMEOUT_MS)
        page.goto(probe.url)
        page.wait_for_function(
            "document.querySelector('.js-plotly-plot')?.layout?.template?.layout"
        )
        template = page.evaluate("document.querySelector('.js-plotly-plot').layout.template")
    finally:
        context.close()
        probe.stop()
    assert template == plotly_theme.THEMES[scheme]


@pytest.mark.parametrize(("view", "charts"), [("RoPE lab", 5), ("Distance", 5), ("Conventions", 4)])
def test_each_chart_is_drawn_once_on_a_switch(browser, server, view, charts):
    """A switch to a page of several charts: one full Plotly draw each (two before: Streamlit's
    element themes the figure again after its first draw, and Plotly redrew it whole).
    Distance's M-RoPE pairs sit in one of two columns, with a legend of two rows there (it was
    laid out for a full-width plot: Plotly widened the margin and drew it again); Conventions'
    similarity chart is 618.66 px wide (Streamlit's second draw gave the width it measured,
    Plotly had taken 618.656 from the computed style: page.css rounds the frame's width)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PAGE_HOOK_JS)
    context.add_init_script(FULL_DRAWS_JS)
    try:
        page = context.new_page()
        page.set_default_timeout(RUN_TIMEOUT_MS)
        app = AppPage(page, server)
        app.open("")
        for _ in range(2):  # the second switch finds the server's caches filled
            app.click_tab(view)
            app.wait_quiet()
            app.click_tab("Heatmap")
            app.wait_quiet()
        since = page.evaluate("performance.now()")
        app.click_tab(view)
        app.wait_quiet()
        draws = page.evaluate(
            """(since) => Array.from(document.querySelectorAll('.js-plotly-plot'))
                 .map((gd) => (gd.__peFullDraws || []).filter((t) => t > since).length)""",
            since,
        )
    finally:
        context.close()
    assert draws == [1] * charts
