"""What every chart of the app shares: the palette, the chart frame (title, subtitle, legend,
margins) and its axes.

Each figure is built in one call from plain dicts (traces and layout): Plotly validates the
whole figure once, about ten times faster than adding traces and updating axes one by one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.colors
import plotly.graph_objects as go
from plotly.basedatatypes import BaseFigure

from dashboard.formatting import nice_step
from pe_core import CONVENTIONS

#: Diverging scale for values in [-1, 1]: blue negative, white 0, red positive.
DIVERGING = "RdBu_r"
#: The same scale for the dark theme: 0 is a dark gray near the page's background and the
#: colours brighten with the size of the value, light blue at -1 and light red at +1, so the
#: largest values stand out on a dark page as the deepest colours do on white.
DIVERGING_DARK = [
    [0.0, "rgb(163, 206, 255)"],
    [0.25, "rgb(58, 122, 196)"],
    [0.5, "rgb(38, 42, 52)"],
    [0.75, "rgb(196, 66, 58)"],
    [1.0, "rgb(255, 184, 166)"],
]
#: The named colours of the charts: Plotly's and matplotlib's category colours (D3's
#: ``category10``, two of ``category20b``), and the grays of reference lines and text.
BLUE = "#1f77b4"
ORANGE = "#ff7f0e"
GREEN = "#2ca02c"
RED = "#d62728"
PURPLE = "#9467bd"
BROWN = "#8c564b"
PINK = "#e377c2"
GRAY = "#7f7f7f"
OLIVE = "#bcbd22"
CYAN = "#17becf"
INDIGO = "#393b79"
BRICK = "#ad494a"
DARK_GRAY = "#555555"
SLATE = "#374151"
#: Each convention's line, by its ``colour_index``: colour and dash, so overlaid lines stay
#: apart where they coincide.
CONVENTION_COLOURS = (BLUE, ORANGE, GREEN, RED, PURPLE, BROWN)
CONVENTION_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
#: The colours of lines in order (the j-th line takes the j-th, round again after the last).
LINE_COLOURS = (BLUE, RED, GREEN, PURPLE, ORANGE, CYAN, BROWN, PINK, GRAY, OLIVE, INDIGO, BRICK)
#: The ``meta`` of a trace that is not drawn and only carries words into a hover box.
HOVER_ONLY = "hover only"


def _scale_colours(scale) -> list[str]:
    return (
        [colour for _, colour in plotly.colors.get_colorscale(scale)]
        if isinstance(scale, str)
        else [colour for _, colour in scale]
    )


def for_dark_page(spec: dict) -> dict:
    """A figure's specification (``Figure.to_plotly_json()``) restyled for the dark theme: the
    traces coloured with :data:`DIVERGING` take :data:`DIVERGING_DARK` (a new dict; ``spec`` is
    not changed). Text and axes follow the page through Streamlit's chart theme already."""
    light = _scale_colours(DIVERGING)
    data = [
        {**trace, "colorscale": DIVERGING_DARK}
        if trace.get("colorscale") is not None and _scale_colours(trace["colorscale"]) == light
        else trace
        for trace in spec["data"]
    ]
    return {**spec, "data": data}


#: Margins (pixels) that hold what the axes ask for in Streamlit's chart theme at the usual
#: sizes: tick labels and the axis title with its stand-off on the left and at the bottom, a
#: colour bar with its tick labels on the right. A margin too small for them makes Plotly
#: measure, widen it and draw the whole chart a second time before it shows (its
#: "automargin", which emits no event of its own); longer labels and a legend's rows still get
#: their room that way. Plotly narrows the margins it widened itself on a narrow chart, not the
#: ones it is given: a chart drawn in a narrow column passes smaller ones.
MARGIN_LEFT = 80
MARGIN_BOTTOM = 75
MARGIN_RIGHT = 30
MARGIN_RIGHT_COLOUR_BAR = 85


#: The legend below the plot (``_figure``): Plotly lays its entries out in one row if they fit
#: the plot's width, else in a grid of equal columns, and widens the bottom margin to hold it
#: (its "automargin": the whole chart is drawn a second time before it shows). The bottom
#: margin is computed from the entries instead, for a plot area this wide (px): a chart
#: across the page's column on a 1,280 px screen, a projector's (710 px of plot). On a wider
#: screen the legend has as many rows or fewer (the rows it does not need leave a gap under
#: the x axis); on a narrower one Plotly still widens the margin itself. Measured in Chromium
#: at 1,400 px (issue 51): the x axis (tick labels and title) takes 74.2 px under the plot,
#: each row of entries 19 px, each further line of a two-line entry 16 px, the legend's
#: padding 10 px, an entry its text plus 42.3 px (the line's sample and the gaps).
LEGEND_WIDTH = 700
LEGEND_X_AXIS = 76
LEGEND_ROW = 19
LEGEND_LINE = 16
LEGEND_PAD = 10
LEGEND_ENTRY = 43
#: The plot width of a chart in one of two columns (``st.columns(2)``) on that screen: half of
#: the full figure (plot and margins) less the gap between the columns (16 px, measured at
#: 1,400 px: two figures of 462 px in a column of 940), less the margins: 287 px. Distance's
#: M-RoPE pairs, laid out for :data:`LEGEND_WIDTH`, had one row of legend too few there
#: and was drawn twice (issue 51).
COLUMN_GAP = 16
HALF_LEGEND_WIDTH = (LEGEND_WIDTH + MARGIN_LEFT + MARGIN_RIGHT - COLUMN_GAP) / 2 - (
    MARGIN_LEFT + MARGIN_RIGHT
)
#: Advance widths (px) of the printable ASCII characters, space to "~", in the legend's font
#: (Streamlit's "Source Sans" at 12 px, measured in Chromium with ``measureText``); other
#: characters count as :data:`_WIDE_GLYPH`. Text is counted 4 % wider than this.
_GLYPHS = (
    2.4, 3.47, 5.11, 5.96, 5.96, 9.89, 7.31, 2.99, 3.64, 3.64, 5.02, 5.96, 2.99, 3.73, 2.99, 4.2,
    5.96, 5.96, 5.96, 5.96, 5.96, 5.96, 5.96, 5.96, 5.96, 5.96, 2.99, 2.99, 5.96, 5.96, 5.96, 5.1,
    10.16, 6.52, 7.06, 6.85, 7.38, 6.32, 5.93, 7.4, 7.82, 3.16, 5.75, 6.95, 5.83, 8.72, 7.76,
    7.97, 6.79, 7.97, 6.83, 6.41, 6.43, 7.74, 6.18, 9.43, 6.16, 5.71, 6.47, 3.64, 4.2, 3.64, 5.96,
    6, 6.5, 6.05, 6.64, 5.47, 6.66, 5.95, 3.5, 6.05, 6.53, 2.95, 2.96, 5.94, 3.06, 9.95, 6.56, 6.5,
    6.66, 6.66, 4.16, 5.03, 4.06, 6.53, 5.6, 8.63, 5.35, 5.6, 5.1, 3.64, 2.89, 3.64, 5.96,
)  # fmt: skip
_WIDE_GLYPH = 8.0
_TAG = re.compile(r"<[^>]*>")


def _text_width(line: str) -> float:
    """The width (px) of one line of a legend entry, tags left out."""
    plain = _TAG.sub("", line)
    width = sum(
        _GLYPHS[ord(c) - 32] if 32 <= ord(c) < 32 + len(_GLYPHS) else _WIDE_GLYPH for c in plain
    )
    return 1.04 * width


def legend_height(names: list[str], width: float = LEGEND_WIDTH) -> float:
    """The height (px) of a horizontal legend of entries ``names`` (``<br>`` breaks a line)
    over a plot ``width`` px wide, as Plotly lays it out: one row if the entries fit, else a
    grid of columns as wide as the widest entry."""
    entries = [name.split("<br>") for name in names]
    widths = [LEGEND_ENTRY + max(map(_text_width, lines)) for lines in entries]
    if sum(widths) <= width:
        rows = [entries]
    else:
        columns = max(1, int(width // max(widths)))
        rows = [entries[i : i + columns] for i in range(0, len(entries), columns)]
    return LEGEND_PAD + sum(
        LEGEND_ROW + LEGEND_LINE * (max(len(lines) for lines in row) - 1) for row in rows
    )


def _legend_names(traces: list[dict], layout: Mapping) -> list[str]:
    """The names of the legend's entries (none when the layout hides the legend)."""
    if layout.get("showlegend") is False:
        return []
    return [t["name"] for t in traces if t.get("showlegend", True) and t.get("name")]


def _has_colour_bar(trace: dict) -> bool:
    """Whether Plotly draws a colour bar for ``trace``: a heatmap shows its scale unless told
    not to, a scatter's markers only when told to."""
    if trace.get("type") == "heatmap":
        return bool(trace.get("showscale", True))
    return bool((trace.get("marker") or {}).get("showscale"))


def _panel_domains(n: int, gap: float) -> list[tuple[float, float]]:
    """The horizontal domains of ``n`` panels side by side, ``gap`` (a fraction of the plot's
    width) apart."""
    width = (1.0 - gap * (n - 1)) / n
    return [(j * (width + gap), j * (width + gap) + width) for j in range(n)]


def _panel_heading(text: str, domain: tuple[float, float], **options) -> dict:
    """An annotation centred above a panel."""
    return {
        "text": text,
        "showarrow": False,
        "xref": "paper",
        "yref": "paper",
        "x": (domain[0] + domain[1]) / 2,
        "xanchor": "center",
        "y": 1.0,
        "yanchor": "bottom",
        **options,
    }


def _axis(title: str | None = None, **options) -> dict:
    return {"title": {"text": title}, **options} if title else options


def _figure(
    traces: list[dict],
    *,
    title: str,
    subtitle: str = "",
    height: int = 460,
    xaxis: dict | None = None,
    yaxis: dict | None = None,
    margin: Mapping[str, float] | None = None,
    frames: Sequence[Mapping] | None = None,
    legend_width: float = LEGEND_WIDTH,
    **layout,
) -> go.Figure:
    """The figure, with the app's common layout: title and subtitle on the left, legend at the
    bottom, margins that hold the axes and a colour bar (``margin`` sets some sides anew), the
    legend's rows counted for a plot ``legend_width`` px wide (:data:`HALF_LEGEND_WIDTH` for a
    chart in one of two columns).

    With ``frames`` (a Play control's, plain dicts), a :class:`PlayedFigure`: the frames and
    the layout's ``updatemenus`` and ``sliders`` are kept as given, not validated."""
    text = f"{title}<br><sup>{subtitle}</sup>" if subtitle else title
    names = _legend_names(traces, layout)
    common = {
        "title": {"text": text, "x": 0.0, "xanchor": "left"},
        "height": height,
        "margin": {
            "l": MARGIN_LEFT,
            "r": MARGIN_RIGHT_COLOUR_BAR if any(map(_has_colour_bar, traces)) else MARGIN_RIGHT,
            "t": 80 if subtitle else 50,
            # Room for the legend's rows under the x axis: no second draw to make it.
            "b": max(110, math.ceil(LEGEND_X_AXIS + legend_height(names, legend_width)))
            if names
            else MARGIN_BOTTOM,
            **(margin or {}),
        },
        "hoverlabel": {"align": "left"},
        # Below the x axis title, at the bottom of the figure: never over the title or the data.
        "legend": {
            "orientation": "h",
            "yref": "container",
            "y": 0.0,
            "yanchor": "bottom",
            "x": 0.0,
            "xanchor": "left",
        },
        "xaxis": xaxis or {},
        "yaxis": yaxis or {},
    }
    if frames is not None:
        return PlayedFigure(data=traces, layout={**common, **layout}, frames=frames)
    return go.Figure(data=traces, layout={**common, **layout})


def _plain_copy(value):
    """A copy of a plain specification (dicts and lists of numbers and strings): a third of
    ``copy.deepcopy``'s time, which keeps a memo of every object it copies."""
    if isinstance(value, dict):
        return {key: _plain_copy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_copy(item) for item in value]
    return value


#: The parts of a layout that belong to a Play control (kept plain by :class:`PlayedFigure`).
PLAY_CONTROLS = ("updatemenus", "sliders")


class PlayedFigure(go.Figure):
    """A figure with a Play control: its traces and layout are plotly.py objects as any
    figure's, its frames and its controls (the layout's ``updatemenus`` and ``sliders``) the
    plain specification Plotly.js is sent.

    Building a frame per position as plotly.py objects, and the slider's step per position,
    was most of the time of a figure with Play (issue 51: 100 frames and steps, about 90 % of
    the Sinusoids chart's 45 ms, and again as much to copy them in ``to_dict``), for values
    Plotly.js reads and checks itself. The frames are built from the same few dicts on every
    call; ``tests/dashboard/test_figures.py`` validates them with plotly.py. ``to_dict`` (and
    ``to_plotly_json``, copies, pickles) give the whole figure; ``frames`` gives plotly.py's
    frames, built (and validated) when read. ``layout`` holds the layout without the
    controls: :attr:`controls` has them.
    """

    def __init__(self, data=None, layout=None, frames=None, **kwargs) -> None:
        if isinstance(data, BaseFigure):
            data = data.to_dict()
        if isinstance(data, Mapping) and {"data", "layout", "frames"} & data.keys():
            data, layout, frames = data.get("data"), data.get("layout"), data.get("frames")
        if layout is not None and not isinstance(layout, Mapping):
            layout = layout.to_plotly_json()
        layout = dict(layout or {})
        controls = {key: layout.pop(key) for key in PLAY_CONTROLS if key in layout}
        super().__init__(data=data, layout=layout, **kwargs)
        self._played_frames = [
            frame.to_plotly_json() if isinstance(frame, go.Frame) else frame
            for frame in frames or ()
        ]
        self._controls = controls

    @property
    def controls(self) -> dict:
        """The layout's Play controls (``updatemenus``, ``sliders``), as given."""
        return self._controls

    @property
    def frames(self) -> tuple[go.Frame, ...]:
        """plotly.py's frames, built from the specification (and validated) when read."""
        return tuple(go.Frame(frame) for frame in self._played_frames)

    @frames.setter
    def frames(self, new_frames) -> None:
        self._played_frames = [
            frame.to_plotly_json() if isinstance(frame, go.Frame) else frame
            for frame in new_frames or ()
        ]

    def to_dict(self) -> dict:
        spec = super().to_dict()
        spec["layout"].update(_plain_copy(self._controls))
        if self._played_frames:
            spec["frames"] = _plain_copy(self._played_frames)
        return spec

    def to_plotly_json(self) -> dict:
        return self.to_dict()


def implied_coordinates(count: int, start: float | None, step: float | None) -> np.ndarray:
    """Where Plotly draws ``count`` points of a trace given without x (or y): ``start + i *
    step``, its ``x0`` and ``dx`` (``y0`` and ``dy``), 0 and 1 when not given. The curves sent
    as ``x0``/``dx`` (``sinusoidal._evenly_spaced``) are read back through this."""
    return (0.0 if start is None else start) + (1.0 if step is None else step) * np.arange(
        count, dtype=np.float64
    )


def index_axis(title: str | None, count: int, n_ticks: int = 10, **options) -> dict:
    """An axis of indices 0 .. count-1 (pairs, columns): whole-number ticks at a round step,
    about ``n_ticks`` of them; no title for ``None``."""
    step = nice_step(max(count - 1, 1), n_ticks)
    return _axis(title, tick0=0, dtick=step, tickformat=",d", **options)


def convention_line(name: str, *, width: float = 2) -> dict:
    """The line style of convention ``name`` (its colour and dash); grey for other names."""
    if name not in CONVENTIONS:
        return {"color": GRAY, "width": width, "dash": "solid"}
    index = CONVENTIONS[name].colour_index
    return {
        "color": CONVENTION_COLOURS[index % len(CONVENTION_COLOURS)],
        "width": width,
        "dash": CONVENTION_DASHES[index % len(CONVENTION_DASHES)],
    }
