"""The Plotly preload finds the script Streamlit itself imports for its Plotly charts."""

from __future__ import annotations

import re

from dashboard import plotly_preload


def test_finds_the_plotly_chunk_that_streamlits_entry_script_imports():
    module = plotly_preload.plotly_module()
    assert module is not None, f"no single PlotlyChart.*.js in {plotly_preload.STATIC_JS}"
    name = module.removeprefix("./")
    assert (plotly_preload.STATIC_JS / name).is_file()
    # The page's entry script (the one module script of index.html, which the component finds
    # by its src) imports it by this very relative name: the same URL, so one module.
    html = (plotly_preload.STATIC_JS.parents[1] / "index.html").read_text(encoding="utf-8")
    (entry,) = re.findall(
        r'<script type="module"[^>]* src="\./static/js/(index\.[^"/]+\.js)"', html
    )
    assert f"import(`{module}`)" in (plotly_preload.STATIC_JS / entry).read_text(encoding="utf-8")


def test_no_module_unless_exactly_one_candidate(tmp_path):
    assert plotly_preload.plotly_module(tmp_path) is None
    (tmp_path / "PlotlyChart.aaa.js").write_text("")
    assert plotly_preload.plotly_module(tmp_path) == "./PlotlyChart.aaa.js"
    (tmp_path / "PlotlyChart.bbb.js").write_text("")
    assert plotly_preload.plotly_module(tmp_path) is None
