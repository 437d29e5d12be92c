"""Plotly's code, fetched while the reader looks at a page that does not need it yet.

Streamlit loads the code of its Plotly charts (one 4.7 MB script) the first time a page shows
one. The default view draws its heatmap as an image, so that cost fell on the reader's first
click to another view: in headless Chromium the first Plotly view took 3.5 to 4.1 s to
appear, 1.5 to 2.4 s once the code was there (docs/benchmarks.md). :func:`mount` adds an
invisible component that imports the very module Streamlit imports (the same URL, so the
browser evaluates it once and Streamlit's own import finds it loaded) once the page is drawn,
someone is there, and the browser is idle.

Someone is there: the reader moved the pointer, touched, scrolled or pressed a key, or the page
has been on screen for :data:`FALLBACK_MS`. Evaluating the script costs about 1.3 s of CPU, and
a page nobody looks at (a tab opened in the background, a link's preview) should not pay it.

Nothing depends on it: if the module is not found (another Streamlit build) or fails to load,
Streamlit loads Plotly itself when a chart needs it, as before.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import static

#: Streamlit's static scripts; its Plotly chart is the lazily imported ``PlotlyChart.<hash>.js``.
STATIC_JS = Path(st.__file__).parent / "static" / "static" / "js"
#: Wait this long after the component is drawn before asking for an idle moment: the view's
#: own charts come first.
DELAY_MS = 1000
#: Without any sign of the reader, load after the page has been on screen this long.
FALLBACK_MS = 5000


def plotly_module(static_js: Path = STATIC_JS) -> str | None:
    """The Plotly chart's script relative to Streamlit's ``index.*.js`` (``"./PlotlyChart.
    <hash>.js"``), or None unless exactly one such script is there."""
    found = list(static_js.glob("PlotlyChart.*.js"))
    return f"./{found[0].name}" if len(found) == 1 else None


_JS = static.text("plotly_preload.js")

_PRELOAD = st.components.v2.component("pe_plotly_preload", js=_JS)
_MODULE = plotly_module()


def mount() -> None:
    """Load Plotly's code once the page is drawn, read and idle (once per page; nothing if the
    module is not found)."""
    if _MODULE is not None:
        data = {"module": _MODULE, "delay": DELAY_MS, "fallback": FALLBACK_MS}
        _PRELOAD(key="_plotly_preload", data=data, height=0)
