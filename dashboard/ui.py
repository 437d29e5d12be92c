"""Small pieces every view uses: charts that survive errors, explanations, guarded rendering."""

from __future__ import annotations

import html
import logging
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from dashboard import caching, exports, figures

logger = logging.getLogger("pe_explorer")

#: Plotly toolbar: what people use (save as PNG, zoom, pan, reset), four tab stops instead of
#: eight; every chart is a 2-D one.
PLOTLY_CONFIG = {
    "displaylogo": False,
    "modeBarButtons": [["toImage", "zoom2d", "pan2d", "resetScale2d"]],
}


_MARKDOWN_SPECIAL = set("\\`*_{}[]()<>#+-.!|~$:")


def escape_markdown(text: str) -> str:
    """Text from a user (URL, file name) shown literally in Markdown: no links, images, math
    or code spans can be smuggled in."""
    return "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in str(text))


#: Keyboard focus drawn the same everywhere (the navigation's links had none): a blue ring that
#: reads on the light and the dark background (contrast 3.7:1 on white, 5:1 on the dark
#: theme's background), never red, which means an error.
FOCUS_STYLE = """<style>
a:focus-visible, button:focus-visible, summary:focus-visible, [role="radio"]:focus-visible,
[role="tab"]:focus-visible, [tabindex]:focus-visible {
  outline: 2px solid #3b82f6 !important;
  outline-offset: 2px;
}
</style>"""


#: Text read by screen readers and not drawn (the usual visually-hidden pattern).
_HIDDEN = (
    "position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;"
    "clip:rect(0 0 0 0);white-space:nowrap;border:0"
)


def screen_reader_text(text: str) -> str:
    """HTML for ``text`` that a screen reader reads and the screen does not show."""
    return f'<div class="pe-chart-text" style="{_HIDDEN}">{html.escape(text)}</div>'


#: Presentation mode: text a room can read from the back, the page's full width.
PRESENT_STYLE = """<style>
[data-testid="stMain"] .block-container { max-width: 100%; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li,
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.35rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p {
  font-size: 3rem;
}
[data-testid="stMain"] h1 { font-size: 3.2rem; }
[data-testid="stMain"] h2, [data-testid="stMain"] h3 { font-size: 2.2rem; }
</style>"""
#: Charts in presentation mode: at least this tall (px), with text of this size.
PRESENT_HEIGHT = 640
PRESENT_FONT = 18


def presentation_style() -> None:
    """The page's style for presentation mode (called once a run when it is on)."""
    st.html(PRESENT_STYLE)


def _presented(fig: go.Figure) -> dict:
    """The figure as a projector needs it: taller, larger text (a copy of its specification;
    the cached figure is not touched)."""
    spec = fig.to_plotly_json()
    layout = dict(spec["layout"])
    size = {"size": PRESENT_FONT}
    layout["font"] = {**layout.get("font", {}), **size}
    layout["height"] = max(layout.get("height") or 450, PRESENT_HEIGHT)
    # Streamlit's chart theme sizes each axis's and the legend's text itself: set them too.
    for name in [key for key in layout if key.startswith(("xaxis", "yaxis"))]:
        axis = dict(layout[name])
        axis["tickfont"] = {**axis.get("tickfont", {}), **size}
        axis["title"] = {**axis.get("title", {}), "font": size}
        layout[name] = axis
    layout["legend"] = {**layout.get("legend", {}), "font": size}
    # The legend below the plot grows with its text: room for a line per entry.
    entries = sum(1 for t in spec["data"] if t.get("name") and t.get("showlegend", True))
    if entries:
        margin = dict(layout.get("margin", {}))
        bottom = max(margin.get("b", 80), 60 + 26 * entries)
        layout["height"] += bottom - margin.get("b", 80)
        layout["margin"] = {**margin, "b": bottom}
    title = layout.get("title", {})
    layout["title"] = {**title, "font": {**title.get("font", {}), "size": PRESENT_FONT + 6}}
    return {**spec, "layout": layout}


def start_run() -> None:
    """Called once at the top of every run: no chart has been drawn yet; the page's style."""
    st.session_state["_charts_this_run"] = set()
    st.html(FOCUS_STYLE)


def chart(fig: go.Figure, key: str) -> None:
    """Show a figure, offer it as standalone HTML, and remember it as the last good version."""
    st.session_state[f"_last_chart_{key}"] = fig
    st.session_state.setdefault("_charts_this_run", set()).add(key)
    with st.container(gap=None):  # the words take no room on screen
        words = caching.derived(fig, figures.text_alternative)
        st.markdown(screen_reader_text(words), unsafe_allow_html=True)
        shown = caching.derived(fig, _presented) if st.session_state.get("present") else fig
        st.plotly_chart(shown, key=key, config=PLOTLY_CONFIG, width="stretch")
    st.download_button(
        "Chart as interactive HTML",
        data=lambda: fig.to_html(include_plotlyjs=True, full_html=True, config=PLOTLY_CONFIG),
        file_name=f"{key}.html",
        mime="text/html",
        key=f"html_{key}",
        on_click="ignore",
        type="tertiary",
        icon=":material/download:",
    )


def matrix_downloads(config) -> None:
    """Download buttons for the full encoding matrix (CSV and NPY), built on click."""
    size = config.n_positions * config.d_model
    call = (
        f"`pe_core.sinusoidal_encoding({config.n_positions}, {config.d_model}, "
        f"base={config.base:g}, convention='{config.convention}')`"
    )
    if size > exports.MAX_DOWNLOAD_ELEMENTS:
        st.caption(
            f"The full matrix has {size:,} values, too many to download here "
            f"(limit {exports.MAX_DOWNLOAD_ELEMENTS:,}). In Python: {call}."
        )
        return
    stem = f"pe_{config.convention}_L{config.n_positions}_d{config.d_model}_base{config.base:g}"
    files = [("NPY", exports.encoding_npy, "application/octet-stream")]
    if size <= exports.MAX_CSV_ELEMENTS:
        files.insert(0, ("CSV", exports.encoding_csv, "text/csv"))
    for column, (kind, make, mime) in zip(st.columns([1, 1, 3]), files, strict=False):
        column.download_button(
            f"Matrix as {kind}",
            data=lambda make=make: make(config),
            file_name=f"{stem}.{kind.lower()}",
            mime=mime,
            key=f"download_{kind.lower()}",
            on_click="ignore",
            icon=":material/download:",
        )
    if size > exports.MAX_CSV_ELEMENTS:
        st.caption(
            f"CSV is offered up to {exports.MAX_CSV_ELEMENTS:,} values (this matrix has "
            f"{size:,}); the .npy file holds every digit and loads with `numpy.load`."
        )


def last_good_charts(prefix: str) -> None:
    """Show the last good figures of a view (after an error, so the page does not go blank)."""
    drawn = st.session_state.get("_charts_this_run", set())
    for name in list(st.session_state):
        if name.startswith(f"_last_chart_{prefix}") and name[len("_last_chart_") :] not in drawn:
            st.caption("Last valid figure, kept while the parameters above cannot be shown:")
            st.plotly_chart(st.session_state[name], config=PLOTLY_CONFIG, width="stretch")


def table_height(n_rows: int, most: int = 360) -> int:
    """Pixel height of an st.dataframe that shows ``n_rows`` rows without blank ones below them
    (35 px a row, header included), scrolling beyond ``most``."""
    return min(most, 35 * (n_rows + 1) + 3)


def explain(markdown: str, latex: str | None = None, *, expanded: bool | None = None) -> None:
    """A short explanation for a learner, with the view's formula: open on the session's first
    visit of the view (all through that visit, whatever the reader changes), closed when the
    reader comes back to it; ``expanded`` overrides."""
    if expanded is None:
        expanded = _first_visit()
    with st.expander("What am I looking at?", expanded=expanded):
        st.markdown(markdown)
        if latex:
            st.latex(latex)


def _first_visit() -> bool:
    """Whether this run belongs to the session's first visit of the current view (a visit is
    the runs from arriving on the view until leaving it)."""
    visits = st.session_state.setdefault("_visits", {"view": None, "first": False, "seen": set()})
    view = st.session_state.get("_view")
    if visits["view"] != view:  # arrived on the view
        visits.update(view=view, first=view not in visits["seen"])
        visits["seen"].add(view)
    return visits["first"]


def guarded(view: str, render: Callable[[], None]) -> None:
    """Run a view; a bad combination of parameters becomes a message, never a traceback."""
    try:
        render()
    except (ValueError, TypeError) as error:
        st.warning(f"This combination cannot be shown: {error}")
        last_good_charts(view)
    except Exception:  # the app must keep answering whatever happens in one view
        logger.exception("view %s failed", view)
        st.error(
            "Something went wrong while drawing this view. The other views still work; "
            "try other parameters."
        )
        last_good_charts(view)
