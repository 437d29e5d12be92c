"""Small pieces every view uses: charts that survive errors, explanations, guarded rendering."""

from __future__ import annotations

import functools
import html
import logging
import re
from collections.abc import Callable, Hashable, Sequence

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
from streamlit.delta_generator_singletons import context_dg_stack

import pe_core
from dashboard import caching, exports, plotly_theme, sidebar, state, static
from dashboard.figures import accessibility, base

logger = logging.getLogger("pe_explorer")

#: Plotly toolbar: what people use (save as PNG, zoom, pan, reset), four tab stops instead of
#: eight; every chart is a 2-D one.
PLOTLY_CONFIG = {
    "displaylogo": False,
    "modeBarButtons": [["toImage", "zoom2d", "pan2d", "resetScale2d"]],
}


def _style(css: str) -> str:
    """A page style (``dashboard/static/*.css``) as the ``<style>`` element ``st.html`` takes."""
    return f"<style>\n{css}</style>"


#: Keyboard focus drawn the same everywhere (the navigation's links had none): a blue ring that
#: reads on the light and the dark background (contrast 3.7:1 on white, 5:1 on the dark
#: theme's background), never red, which means an error.
FOCUS_STYLE = _style(static.text("focus.css"))


#: The page around the views: a compact navigation, the title near the top (page.css).
PAGE_STYLE = _style(static.text("page.css"))

#: Below this width Plotly's one-line chart titles pass the chart's edge (it does not wrap
#: them): there each chart's title is drawn above it as text that wraps, and Plotly's is hidden
#: (narrow_title.css holds the width, in its media query: one pixel less).
_NARROW_TITLE_CSS = static.text("narrow_title.css")
NARROW_WIDTH = int(re.search(r"max-width: (\d+)px", _NARROW_TITLE_CSS)[1]) + 1
NARROW_TITLE_STYLE = _style(_NARROW_TITLE_CSS)

#: The tags Plotly's titles use, kept when a title is written as HTML (all else is escaped).
_TITLE_TAGS = ("br", "sup", "/sup", "sub", "/sub", "b", "/b", "i", "/i")


def narrow_title(fig: go.Figure) -> str:
    """HTML of the figure's title (and subtitle) for a narrow screen, shown there instead of
    Plotly's; empty if the figure has no title."""
    text = fig.layout.title.text
    if not text:
        return ""
    safe = html.escape(text, quote=False)
    for tag in _TITLE_TAGS:
        safe = safe.replace(f"&lt;{tag}&gt;", f"<{tag}>")
    # The subtitle is its own line already (a block): no break before it.
    return f'<div class="pe-narrow-title">{safe.replace("<br><sup>", "<sup>")}</div>'


#: Text read by screen readers and not drawn (the usual visually-hidden pattern).
_HIDDEN = (
    "position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;"
    "clip:rect(0 0 0 0);white-space:nowrap;border:0"
)


def screen_reader_text(text: str) -> str:
    """HTML for ``text`` that a screen reader reads and the screen does not show."""
    return f'<div class="pe-chart-text" style="{_HIDDEN}">{html.escape(text)}</div>'


#: Presentation mode: text a room can read from the back, the page's full width.
PRESENT_STYLE = _style(static.text("present.css"))
#: Charts in presentation mode: at least this tall (px), with text of this size.
PRESENT_HEIGHT = 640
PRESENT_FONT = 18
#: How much larger presentation mode draws text that sets its own size (about 12 px at most).
PRESENT_SCALE = 1.5


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
        if axis.get("type") == "log":
            # A log axis draws its 2s and 5s and its powers' exponents smaller than the ticks
            # (13.5 and 16 px at 18): in a room, only the decades, each written out the same
            # way (10,000 and 0.001; "e" wrote 1e+4 beside 100).
            axis.update(minorloglabels="none", exponentformat="none", separatethousands=True)
        axis["title"] = {**axis.get("title", {}), "font": size}
        layout[name] = axis
    layout["legend"] = {**layout.get("legend", {}), "font": size}
    # A heatmap's colour bar sets its own text size too (Streamlit's theme, about 12 px).
    data = [
        {**trace, "colorbar": _presented_colour_bar(trace.get("colorbar") or {})}
        if trace.get("type") == "heatmap" or "colorbar" in trace
        else trace
        for trace in spec["data"]
    ]
    spec = {**spec, "data": data}
    # The legend below the plot grows with its text: room for a line per entry.
    entries = sum(1 for t in spec["data"] if t.get("name") and t.get("showlegend", True))
    if entries:
        margin = dict(layout.get("margin", {}))
        bottom = max(margin.get("b", 80), 60 + 26 * entries)
        layout["height"] += bottom - margin.get("b", 80)
        layout["margin"] = {**margin, "b": bottom}
    # Headings over panels (annotations) set their own size: larger by the same factor, with
    # their offsets, and the top margin grows by what the raised ones grew.
    annotations = [dict(a) for a in layout.get("annotations", ())]
    raised = 0.0
    for annotation in annotations:
        font = annotation.get("font", {})
        if "size" in font:
            size = max(font["size"] * PRESENT_SCALE, PRESENT_FONT)
            annotation["font"] = {**font, "size": size}
        if annotation.get("yshift"):
            raised = max(raised, annotation["yshift"] * (PRESENT_SCALE - 1))
            annotation["yshift"] *= PRESENT_SCALE
    if annotations:
        layout["annotations"] = annotations
    if raised:
        margin = dict(layout.get("margin", {}))
        margin["t"] = margin.get("t", 100) + raised
        layout["margin"] = margin
        layout["height"] += raised
    title = layout.get("title", {})
    # 26 px: the subtitle, drawn in <sup> at 70% of it, stays at 18 px.
    layout["title"] = {**title, "font": {**title.get("font", {}), "size": PRESENT_FONT + 8}}
    return {**spec, "layout": layout}


def _presented_colour_bar(bar: dict) -> dict:
    """A colour bar's ticks and title at presentation mode's size, the bar wider."""
    size = {"size": PRESENT_FONT}
    title = bar.get("title") or {}
    return {
        **bar,
        "tickfont": {**(bar.get("tickfont") or {}), **size},
        "title": {**title, "font": {**(title.get("font") or {}), **size}},
        "thickness": max(bar.get("thickness", 12), 18),
    }


#: Light or dark, as the browser draws the page: read from the page's background colour (the
#: theme's ``--st-background-color``), the same test as the image heatmap's.
PAGE_IS_DARK_JS = static.text("page_is_dark.js")

#: Runs in the browser each time the page's theme changes (Streamlit draws its components
#: again then) and tells the server when it is not the theme the server last drew for: the
#: app menu's switch does not rerun the app by itself, and the charts' colour scales are
#: chosen on the server.
_THEME_WATCH_JS = PAGE_IS_DARK_JS + static.text("theme_watch.js")
_THEME_WATCH = st.components.v2.component("pe_theme_watch", js=_THEME_WATCH_JS)
_THEME_KEY = state.THEME


def page_theme() -> str:
    """ "light" or "dark": as the browser last reported it, else as Streamlit's context has it."""
    reported = (st.session_state.get(_THEME_KEY) or {}).get("theme")
    return reported or st.context.theme.type or "light"


def start_run() -> None:
    """Called once at the top of every run: no chart has been drawn yet; the page's style; the
    theme watcher."""
    st.session_state[state.CHARTS_THIS_RUN] = set()
    st.session_state[state.FIRST_CHART] = "none"
    st.session_state[state.IN_FRAGMENT] = False
    st.html(FOCUS_STYLE + PAGE_STYLE + NARROW_TITLE_STYLE)
    _THEME_WATCH(
        key=_THEME_KEY,
        data=page_theme(),
        default={"theme": None},
        on_theme_change=lambda: None,
        height=0,
    )


def _shown(fig: go.Figure, shapes: Sequence[dict] = (), *, select: bool = False) -> go.Figure:
    """What ``st.plotly_chart(..., theme=None)`` draws for ``fig``: the figure restyled for the
    page's theme and presentation mode, with Streamlit's chart theme written into it so that
    Plotly draws it once (:mod:`dashboard.plotly_theme`), and ``shapes`` drawn over it. Derived
    once per figure object, but with ``shapes``."""
    dark = page_theme() == "dark"
    present = bool(st.session_state.get(sidebar.PRESENT.key))
    if not shapes:
        return caching.derived(fig, _DRAWN[dark, present, select])
    spec = _SPEC[dark, present](fig)
    layout = spec["layout"]
    spec = {**spec, "layout": {**layout, "shapes": [*layout.get("shapes", ()), *shapes]}}
    return plotly_theme.drawn(spec, "dark" if dark else "light", select=select)


def _dark(fig: go.Figure) -> dict:
    return base.for_dark_page(fig.to_plotly_json())


def _presented_dark(fig: go.Figure) -> dict:
    return base.for_dark_page(_presented(fig))


def _as_is(fig: go.Figure) -> dict:
    return fig.to_plotly_json()


#: The figure's specification by (dark, presentation mode).
_SPEC = {
    (False, False): _as_is,
    (True, False): _dark,
    (False, True): _presented,
    (True, True): _presented_dark,
}


def _drawing(dark: bool, present: bool, select: bool) -> Callable[[go.Figure], go.Figure]:
    def make(fig: go.Figure) -> go.Figure:
        scheme = "dark" if dark else "light"
        return plotly_theme.drawn(_SPEC[dark, present](fig), scheme, select=select)

    # caching.derived keys what it derives by the function's name.
    make.__qualname__ = f"_drawing(dark={dark}, present={present}, select={select})"
    return make


#: What ``st.plotly_chart`` is given for a figure, by (dark, presentation mode, select).
_DRAWN = {
    (dark, present, select): _drawing(dark, present, select)
    for dark in (False, True)
    for present in (False, True)
    for select in (False, True)
}


#: The key of the empty, hidden element that follows the page's first chart in the page's
#: column (its row's class ``st-key-pe_first_chart``): page.css puts "What am I looking at?"
#: under that chart by it.
FIRST_CHART_MARK = "pe_first_chart"


def _mark_first_chart() -> None:
    # In the page's column itself, whatever ``with`` block (a column, a container) the chart is
    # in: Streamlit's main area writes into the innermost one, so the stack of ``with`` blocks
    # is cut to the main area while the mark is written (Streamlit's own context variable).
    outer = context_dg_stack.set(context_dg_stack.get()[:1])
    try:
        # A closed, empty expander, hidden by page.css: of the elements that take a key, the
        # one whose key names its row of the column itself (a container's names a block inside).
        st.expander("first chart", key=FIRST_CHART_MARK)
    finally:
        context_dg_stack.reset(outer)
    st.session_state[state.FIRST_CHART] = "marked"


def chart_shown() -> None:
    """Called after each chart (Plotly's or an image) and its own download link: after the
    run's first, the mark :data:`FIRST_CHART_MARK` in the page's column, after the column's row
    that holds the chart (and after the link, when the link is a row of the column too).

    page.css found that row with ``:has()`` over each row's whole subtree before, which made
    Chromium restyle the page's rows at each of the thousands of elements Plotly adds and
    changes while it draws (issue 51: 20-30 % of the browser's CPU for a switch to a page of
    charts); a sibling of the rows costs it almost nothing. The page's column is Streamlit's
    main area (every view draws its explanation there): for a chart in a column or a
    container, the mark lands after the row that holds them. A chart drawn in a
    fragment (:func:`fragment`) is marked when the fragment's call returns, outside it: written
    from inside, the mark would stand in a wrapper of Streamlit's, which the fragment's own
    reruns empty. Those reruns write no mark (the run's is in place).
    """
    if st.session_state.get(state.FIRST_CHART) != "none":
        return
    if st.session_state.get(state.IN_FRAGMENT):
        st.session_state[state.FIRST_CHART] = "pending"
    else:
        _mark_first_chart()


def fragment(render: Callable[..., None]) -> Callable[..., None]:
    """``st.fragment(render)`` for a part of a view, which marks the page's first chart if it
    drew it (:func:`chart_shown`) once its call in a full run returns. A rerun of the fragment
    alone writes no mark: in the rare case where such a rerun draws the page's first chart
    (the full run drew none), the explanation stays above it until the next full run."""

    @functools.wraps(render)
    def inside(*args, **kwargs) -> None:
        st.session_state[state.IN_FRAGMENT] = True
        try:
            render(*args, **kwargs)
        finally:
            st.session_state[state.IN_FRAGMENT] = False

    part = st.fragment(inside)

    @functools.wraps(render)
    def call(*args, **kwargs) -> None:
        part(*args, **kwargs)
        if st.session_state.get(state.FIRST_CHART) == "pending":
            _mark_first_chart()

    return call


def chart(fig: go.Figure, key: str, *, select: bool = False, shapes: Sequence[dict] = ()) -> None:
    """Show a figure, offer it as standalone HTML, and remember it as the last good version.

    With ``select``, clicking a point of the chart selects it (the app runs again;
    :func:`selected_points` reads it). ``shapes`` are drawn over the figure on screen (what
    another chart of the view chose), on a copy of its specification: a cached figure is not
    built again for them.
    """
    st.session_state[state.LAST_CHART + key] = fig
    st.session_state.setdefault(state.CHARTS_THIS_RUN, set()).add(key)
    with st.container(gap=None):  # the words take no room on screen
        words = caching.derived(fig, accessibility.text_alternative)
        title = caching.derived(fig, narrow_title)
        st.markdown(title + screen_reader_text(words), unsafe_allow_html=True)
        st.plotly_chart(
            _shown(fig, shapes, select=select),
            key=key,
            config=PLOTLY_CONFIG,
            theme=None,  # the theme is in the figure: drawn once (dashboard/plotly_theme.py)
            width="stretch",
            on_select="rerun" if select else "ignore",
            selection_mode="points",
        )
    st.download_button(
        "Chart as interactive HTML",
        data=lambda: interactive_html(fig),
        file_name=f"{key}.html",
        mime="text/html",
        key=f"html_{key}",
        on_click="ignore",
        type="tertiary",
        icon=":material/download:",
    )
    chart_shown()  # after the chart's own link: the link stays with it, above the explanation


def interactive_html(fig: go.Figure) -> str:
    """The chart as a standalone HTML page, in the light theme the app draws it in.

    Not ``fig.to_html()``: with Streamlit imported, plotly.py's default template is Streamlit's,
    whose colours are placeholders (``#000001``...) that only Streamlit's chart element replaces,
    so every trace of the page came out near black.
    """
    spec = plotly_theme.drawn(fig.to_plotly_json(), "light").to_dict()
    layout = {key: value for key, value in spec["layout"].items() if key != "template"}
    return pio.to_html(
        {**spec, "layout": layout},
        include_plotlyjs=True,
        full_html=True,
        config=PLOTLY_CONFIG,
        validate=False,
    )


def png_download(make: Callable[[], bytes], file_name: str, key: str) -> None:
    """The "Image as PNG" link under the image component ``key``; ``make`` (the PNG's bytes)
    runs only when it is clicked."""
    st.download_button(
        "Image as PNG",
        data=make,
        file_name=file_name,
        mime="image/png",
        key=f"png_{key}",
        on_click="ignore",
        type="tertiary",
        icon=":material/download:",
    )
    chart_shown()  # the image's mark, after its link (the image's components draw no link)


def drawn_before(key: str) -> bool:
    """Whether the chart ``key`` is on the page from before the code now running: in a
    fragment's own run, the charts of the last full run; in a full run, those it drew so far.
    A fragment whose click changes another fragment's chart reruns the page only then."""
    return key in st.session_state.get(state.CHARTS_THIS_RUN, ())


def selected_points(key: str) -> list[dict]:
    """The points selected in the chart ``key`` (each with its ``x``, ``y``, ``curve_number``
    and ``point_index``); empty before any click, after a double click, or for another chart.
    Read before the chart is drawn, it is what the last click selected: a view draws the
    linked charts above it with it."""
    state = st.session_state.get(key)
    try:
        return list(state["selection"]["points"])
    except (KeyError, TypeError):
        return []


def selected_on(key: str, shown: Hashable) -> list[dict]:
    """The points selected in the chart ``key`` if they were selected on what it shows now,
    ``shown`` (what the chart is drawn from, such as its figure's arguments).

    When a chart's content changes, the browser drops its selection, but the run that draws
    the new content still reads the old one: a selection first seen with another ``shown``
    is stale, and reads as none.
    """
    points = selected_points(key)
    memory = f"_selected_on_{key}"
    seen = st.session_state.get(memory)
    if seen is None or seen[1] != points:  # a new click: made on what is shown now
        st.session_state[memory] = (shown, points)
        return points
    return points if seen[0] == shown else []


def selected_whole_x(key: str, size: int, shown: Hashable) -> int | None:
    """The x of the point selected in the chart ``key`` (showing ``shown``, see
    :func:`selected_on`) as a whole number in ``[0, size)`` (a position, an offset, a pair),
    or None when nothing is selected or the point lies outside."""
    points = selected_on(key, shown)
    if not points or points[0].get("x") is None:
        return None
    x = round(float(points[0]["x"]))
    return x if 0 <= x < size else None


def matrix_downloads(config) -> None:
    """Download buttons for the full encoding matrix (CSV and NPY), built on click."""
    size = config.n_positions * config.d_model
    call = (
        f"`pe_core.sinusoidal_encoding({config.n_positions}, {config.d_model}, "
        f"base={config.base_digits}, convention='{config.convention}')`"
    )
    if size > exports.MAX_DOWNLOAD_ELEMENTS:
        st.caption(
            f"The full matrix has {size:,} values, too many to download here "
            f"(limit {exports.MAX_DOWNLOAD_ELEMENTS:,}). In Python: {call}."
        )
        return
    stem = (
        f"pe_{config.convention}_L{config.n_positions}_d{config.d_model}_base{config.base_digits}"
    )
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
    drawn = st.session_state.get(state.CHARTS_THIS_RUN, set())
    for name in list(st.session_state):
        if (
            name.startswith(state.LAST_CHART + prefix)
            and name[len(state.LAST_CHART) :] not in drawn
        ):
            st.caption("Last valid figure, kept while the parameters above cannot be shown:")
            st.plotly_chart(
                _shown(st.session_state[name]), config=PLOTLY_CONFIG, width="stretch", theme=None
            )
            chart_shown()


def table_height(n_rows: int, most: int = 360) -> int:
    """Pixel height of an st.dataframe that shows ``n_rows`` rows without blank ones below them
    (35 px a row, header included), scrolling beyond ``most``."""
    return min(most, 35 * (n_rows + 1) + 3)


def explain(markdown: str, latex: str | None = None, *, expanded: bool | None = None) -> None:
    """A short explanation for a learner, with the view's formula: open on the session's first
    page (all through that visit, whatever the reader changes), closed on the pages after it,
    so that their charts come first; ``expanded`` overrides."""
    if expanded is None:
        expanded = _first_page()
    # Keyed by view: without a key the browser keeps one page's expander open or closed on
    # the next page, where the same element stands at the same place.
    key = state.EXPLAIN + str(st.session_state.get(state.VIEW))
    with st.expander("What am I looking at?", expanded=expanded, key=key):
        st.markdown(markdown)
        if latex:
            st.latex(latex)


def _first_page() -> bool:
    """Whether this run belongs to the session's first visit of a view: the runs from the first
    page's arrival until the reader goes to another page."""
    visits = st.session_state.setdefault(state.VISITS, {"first": None, "left": False})
    view = st.session_state.get(state.VIEW)
    if visits["first"] is None:
        visits["first"] = view
    elif view != visits["first"]:
        visits["left"] = True
    return not visits["left"]


def guarded(view: str, render: Callable[[], None]) -> None:
    """Run a view; never a traceback. Bad input (:class:`pe_core.InputError`, which the
    dashboard's own checks raise too) becomes advice; any other exception is a bug: logged,
    and reported as one."""
    try:
        render()
    except pe_core.InputError as error:
        st.warning(f"This combination cannot be shown: {error}")
        last_good_charts(view)
    except Exception:  # the app must keep answering whatever happens in one view
        logger.exception("view %s failed", view)
        st.error(
            "Something went wrong while drawing this view. The other views still work; "
            "try other parameters."
        )
        last_good_charts(view)
