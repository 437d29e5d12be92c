"""Figure factories: arrays in, ``plotly.graph_objects.Figure`` out. No Streamlit, no state.

Each figure is built in one call from plain dicts (traces and layout): Plotly validates the
whole figure once, about ten times faster than adding traces and updating axes one by one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.colors
import plotly.graph_objects as go

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
#: Each convention's line, by its ``colour_index``: colour and dash, so overlaid lines stay
#: apart where they coincide.
CONVENTION_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
CONVENTION_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
LINE_COLOURS = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#393b79",
    "#ad494a",
)
#: Colour of the position being played (the vector on the circles, the line on the sinusoids).
PLAYED_COLOUR = "#d62728"
#: Colour of what was chosen in another chart of the view (linked highlighting): an amber that
#: reads on white, on the dark theme and over the red and blue of the heatmaps.
CHOSEN_COLOUR = "#f59e0b"
#: How a clicked point is drawn (Plotly's selected and unselected styles): in the chosen
#: colour, for a line's hidden markers (the others stay hidden) and for visible markers (the
#: others unchanged: Plotly would fade them).
CLICKED_MARKER = {
    "selected": {"marker": {"opacity": 1, "size": 12, "color": CHOSEN_COLOUR}},
    "unselected": {"marker": {"opacity": 0}},
}
CLICKED_VISIBLE_MARKER = {
    "selected": {"marker": {"opacity": 1, "size": 11, "color": CHOSEN_COLOUR}},
    "unselected": {"marker": {"opacity": 1}},
}
#: Markers a series of many points draws at most (Plotly's ``marker.maxdisplayed``).
MARKERS_DRAWN = 512
#: The ``meta`` of a trace that is not drawn and only carries words into a hover box.
HOVER_ONLY = "hover only"
CIRCLE_HOVER = "k = %{customdata}<br>sin = %{x:.4f}<br>cos = %{y:.4f}<extra></extra>"


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
    **layout,
) -> go.Figure:
    """The figure, with the app's common layout: title and subtitle on the left, legend at the
    bottom, margins that hold the axes and a colour bar (``margin`` sets some sides anew)."""
    text = f"{title}<br><sup>{subtitle}</sup>" if subtitle else title
    with_legend = any(trace.get("showlegend", True) and trace.get("name") for trace in traces)
    common = {
        "title": {"text": text, "x": 0.0, "xanchor": "left"},
        "height": height,
        "margin": {
            "l": MARGIN_LEFT,
            "r": MARGIN_RIGHT_COLOUR_BAR if any(map(_has_colour_bar, traces)) else MARGIN_RIGHT,
            "t": 80 if subtitle else 50,
            "b": 110 if with_legend else MARGIN_BOTTOM,
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
    return go.Figure(data=traces, layout={**common, **layout})


def index_axis(title: str | None, count: int, n_ticks: int = 10, **options) -> dict:
    """An axis of indices 0 .. count-1 (pairs, columns): whole-number ticks at a round step,
    about ``n_ticks`` of them; no title for ``None``."""
    step = nice_step(max(count - 1, 1), n_ticks)
    return _axis(title, tick0=0, dtick=step, tickformat=",d", **options)


def format_number(value: float) -> str:
    """A wavelength or position as a person reads it: 6.28, 87.3, 1,213, 16,856, 1.2e+09."""
    if not np.isfinite(value):
        return str(value)
    if abs(value) >= 1e7:
        return f"{value:.3g}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def round_step(raw: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is at least ``raw`` (> 0)."""
    magnitude = 10.0 ** np.floor(np.log10(raw))
    return float(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw))


def nice_step(span: float, n_ticks: int = 10) -> int:
    """A whole round tick step (1, 2 or 5 times a power of ten) giving about ``n_ticks`` ticks."""
    return int(round_step(max(span / n_ticks, 1.0)))


def round_ticks(
    first: Sequence[int], last: Sequence[int] | None = None, n_ticks: int = 10
) -> tuple[list[int], list[str]]:
    """Ticks at round numbers on an axis of rows (or columns) that cover number ranges.

    Row ``j`` covers the numbers ``first[j] .. last[j]`` (one number each when ``last`` is
    None); each round number gets a tick at the row that covers it, so an axis of block means
    reads 0, 100,000, 200,000 rather than the blocks' own first positions. Returns the rows and
    the tick texts.
    """
    if not len(first):
        return [], []
    first = np.asarray(first)
    last = first if last is None else np.asarray(last)
    step = nice_step(last[-1] - first[0], n_ticks)
    rounds = np.arange(-(-first[0] // step) * step, last[-1] + 1, step)
    rows = np.searchsorted(first, rounds, side="right") - 1
    covered = (rows >= 0) & (last[np.maximum(rows, 0)] >= rounds)
    return rows[covered].tolist(), [f"{r:,}" for r in rounds[covered]]


def column_labels(
    columns: Sequence[int],
    pair: Sequence[int],
    role: Sequence[str],
    frequency: Sequence[float],
    wavelength: Sequence[float],
) -> list[str]:
    """One description per column for the hover box: index, pair, sin or cos, ω and λ."""
    labels = []
    for column, i, kind, w, lam in zip(columns, pair, role, frequency, wavelength, strict=True):
        if kind == "zero":
            labels.append(f"column {column} (zero padding)")
        else:
            labels.append(
                f"column {column}: pair i={i}, {kind}, ω={w:.4g} rad/pos, λ={lam:.4g} pos"
            )
    return labels


def sinusoid_lines(
    smooth_positions: np.ndarray,
    smooth_values: np.ndarray,
    integer_positions: np.ndarray,
    integer_values: np.ndarray,
    *,
    labels: Sequence[str],
    title: str = "Value against position",
    subtitle: str = "",
    frame_ms: int | None = None,
) -> go.Figure:
    """One smooth curve per chosen dimension, with markers where the positions are integers.

    With ``frame_ms`` (and integer positions marked), a Play button sweeps the position k over
    the integer positions in the browser, one every ``frame_ms`` milliseconds: a vertical line
    at k and each curve's value there, with a slider to drag k by hand (Plotly frames).
    """
    traces = []
    for j, label in enumerate(labels):
        colour = LINE_COLOURS[j % len(LINE_COLOURS)]
        traces.append(
            {
                "type": "scatter",
                "x": smooth_positions,
                "y": smooth_values[:, j],
                "mode": "lines",
                "name": label,
                "legendgroup": label,
                "line": {"color": colour, "width": 1.6},
                "hovertemplate": f"{label}<br>position %{{x:.2f}}<br>value %{{y:.6f}}"
                "<extra></extra>",
            }
        )
        if integer_positions.size:
            traces.append(
                {
                    "type": "scatter",
                    "x": integer_positions,
                    "y": integer_values[:, j],
                    "mode": "markers",
                    "name": f"{label} at integer positions",
                    "legendgroup": label,
                    "showlegend": False,
                    "marker": {"color": colour, "size": 5},
                    **CLICKED_VISIBLE_MARKER,
                    "hovertemplate": f"{label}<br>position %{{x}}<br>value %{{y:.6f}}"
                    "<extra></extra>",
                }
            )
    axes = {
        "xaxis": _axis("position k"),
        "yaxis": _axis("value", range=[-1.08, 1.08], zeroline=True),
    }
    if frame_ms is None or not integer_positions.size:
        return _figure(traces, title=title, subtitle=subtitle, **axes)
    played = [len(traces), len(traces) + 1]
    traces.extend(_played_position(integer_positions, integer_values, 0))
    fig = _figure(
        traces,
        title=title,
        subtitle=subtitle,
        height=620,
        margin={"t": 80, "b": 270},
        **axes,
    )
    fig.frames = [
        go.Frame(
            name=str(position),
            data=_played_position(integer_positions, integer_values, row),
            traces=played,
        )
        for row, position in enumerate(integer_positions.tolist())
    ]
    fig.update_layout(
        updatemenus=[{**_play_buttons(frame_ms), "y": -0.3}],
        sliders=[{**_position_slider(integer_positions, frame_ms), "y": -0.48}],
    )
    return fig


def _played_position(positions: np.ndarray, values: np.ndarray, row: int) -> list[dict]:
    """The position being played: a vertical line at it and each curve's value there."""
    position = float(positions[row])
    return [
        {
            "type": "scatter",
            "x": [position, position],
            "y": [-1.08, 1.08],
            "mode": "lines",
            "line": {"color": PLAYED_COLOUR, "width": 1.5, "dash": "dot"},
            "hoverinfo": "skip",
            "showlegend": False,
        },
        {
            "type": "scatter",
            "x": [position] * values.shape[1],
            "y": values[row].tolist(),
            "mode": "markers",
            "marker": {
                "size": 11,
                "color": [LINE_COLOURS[j % len(LINE_COLOURS)] for j in range(values.shape[1])],
                "line": {"color": PLAYED_COLOUR, "width": 2},
            },
            "hoverinfo": "skip",
            "showlegend": False,
        },
    ]


def _pair_words(
    sin_columns: Sequence[int],
    cos_columns: Sequence[int],
    frequency: Sequence[float],
    wavelength: Sequence[float],
) -> list[dict]:
    """Traces that are not drawn and carry each pair's words into the hover box of
    :func:`dimension_lines`: its columns, ω and λ (one trace per set of columns a pair has)."""
    n_pairs = len(frequency)
    columns = np.full((n_pairs, 2), -1.0)
    columns[: len(sin_columns), 0] = sin_columns
    columns[: len(cos_columns), 1] = cos_columns
    numbers = np.column_stack([columns, frequency, wavelength])
    # Plotly's unified box also takes a trace's nearest point at another x: where the pairs
    # need two traces (an odd d_model's last pair), each names its pair.
    mixed = len(sin_columns) != len(cos_columns)
    traces = []
    for has, words in (
        ((True, True), "sin column %{customdata[0]:,d}, cos column %{customdata[1]:,d}"),
        ((True, False), "sin column %{customdata[0]:,d}"),
        ((False, True), "cos column %{customdata[1]:,d}"),
    ):
        pairs = np.flatnonzero(((columns >= 0) == has).all(axis=1))
        if mixed:
            words = "pair %{x:,d}: " + words
        if pairs.size:
            traces.append(
                {
                    "type": "scatter",
                    "x": pairs,
                    "y": np.zeros(pairs.size, dtype=np.int8),
                    "mode": "none",  # hovered, not drawn: no element per point on the page
                    "showlegend": False,
                    "customdata": numbers[pairs],
                    "hovertemplate": words
                    + "<br>ω=%{customdata[2]:.4~g} rad/pos, λ=%{customdata[3]:.4~g} pos"
                    + "<extra></extra>",
                    "meta": HOVER_ONLY,
                }
            )
    return traces


def dimension_lines(
    sines: np.ndarray,
    cosines: np.ndarray,
    *,
    positions: Sequence[int],
    sin_columns: Sequence[int],
    cos_columns: Sequence[int],
    frequency: Sequence[float],
    wavelength: Sequence[float],
    title: str = "",
    chosen: int | None = None,
) -> go.Figure:
    """Each chosen position's encoding across the pairs: its sin columns (solid) and its cos
    columns (dotted) against the pair index i, whatever the layout puts them.

    ``sin_columns[i]`` and ``cos_columns[i]`` are pair i's columns (an odd d_model's last pair
    has one of them only), ``frequency[i]`` and ``wavelength[i]`` its ω and λ. One hover box
    per pair lists every line's value there under what the pair is, sent once to the browser,
    not once per line. ``chosen``, one of ``positions`` picked in another chart, is drawn thick
    in :data:`CHOSEN_COLOUR` over the others, which fade.
    """
    n_pairs = len(frequency)
    traces = _pair_words(sin_columns, cos_columns, frequency, wavelength)
    order = sorted(range(len(positions)), key=lambda j: positions[j] == chosen)  # chosen last
    for j in order:
        position = positions[j]
        colour = CHOSEN_COLOUR if position == chosen else LINE_COLOURS[j % len(LINE_COLOURS)]
        for values, kind in ((sines[j], "sin"), (cosines[j], "cos")):
            traces.append(
                {
                    "type": "scatter",
                    "x0": 0,
                    "dx": 1,
                    "y": values,
                    "mode": "lines+markers" if values.size <= 32 else "lines",
                    "name": f"position {position:,}"
                    + (" (chosen above)" if position == chosen else ""),
                    "opacity": 0.35 if chosen is not None and position != chosen else 1.0,
                    "marker": {"size": 5, "symbol": "circle" if kind == "sin" else "x-thin-open"},
                    "legendgroup": str(position),
                    "showlegend": kind == "sin",
                    "line": {
                        "color": colour,
                        "width": 3.2 if position == chosen else 1.6,
                        "dash": "solid" if kind == "sin" else "dot",
                    },
                    # A line shorter than the pairs is hovered at its last pair beyond its end.
                    "hovertemplate": f"position {position:,}, {kind}"
                    + (" at pair %{x:,d}" if values.size < n_pairs else "")
                    + ": %{y:.6f}<extra></extra>",
                }
            )
    for kind, dash in (("sin", "solid"), ("cos", "dot")):  # what the two line styles mean
        traces.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "lines",
                "name": f"{kind} columns ({'solid' if kind == 'sin' else 'dotted'})",
                "line": {"color": "#666666", "width": 1.6, "dash": dash},
                "hoverinfo": "skip",
            }
        )
    return _figure(
        traces,
        title=title or "Value against pair index: every position is its own wave",
        subtitle="solid: sin columns, dotted: cos columns",
        xaxis=index_axis(
            "pair index i (slower to the right)",
            n_pairs,
            unifiedhovertitle={"text": "pair i = %{x:,d}"},
        ),
        yaxis=_axis("value", range=[-1.08, 1.08]),
        hovermode="x unified",
    )


@dataclass(frozen=True)
class Mark:
    """A horizontal reference line: its value, what it is, and its colour."""

    value: float
    label: str
    colour: str


WAVELENGTH_TITLE = "Wavelengths form a geometric progression (a straight line on a log axis)"


def convention_line(name: str, *, width: float = 2) -> dict:
    """The line style of convention ``name`` (its colour and dash); grey for other names."""
    if name not in CONVENTIONS:
        return {"color": "#7f7f7f", "width": width, "dash": "solid"}
    index = CONVENTIONS[name].colour_index
    return {
        "color": CONVENTION_COLOURS[index % len(CONVENTION_COLOURS)],
        "width": width,
        "dash": CONVENTION_DASHES[index % len(CONVENTION_DASHES)],
    }


def wavelength_chart(
    wavelengths: Mapping[str, np.ndarray],
    *,
    current: str,
    marks: Sequence[Mark] = (),
    names: Mapping[str, str] | None = None,
    title: str = WAVELENGTH_TITLE,
    height: int = 460,
) -> go.Figure:
    """Wavelength against pair index on a log axis, one line per convention, with reference lines.

    ``marks`` are drawn as dashed horizontal lines named in the legend (never as text that a
    curve could cross); ``names`` overrides a convention's legend name (to say that two
    coincide). Every value drawn comes from the arguments.
    """
    traces = []
    n_pairs = max((lam.size for lam in wavelengths.values()), default=1)
    for name, lam in wavelengths.items():
        is_current = name == current
        label = (names or {}).get(name, name) + (" (current)" if is_current else "")
        traces.append(
            {
                "type": "scatter",
                "x": np.arange(lam.size),
                "y": lam,
                "mode": "lines+markers" if lam.size <= 64 else "lines",
                "name": label,
                "line": convention_line(name, width=3 if is_current else 2),
                "marker": {"size": 6 if is_current else 4},
                "hovertemplate": f"{name}<br>pair i=%{{x}}<br>λ=%{{y:,.6g}} positions"
                "<extra></extra>",
            }
        )
    for mark in marks:
        traces.append(
            {
                "type": "scatter",
                "x": [-0.5, n_pairs - 0.5],
                "y": [mark.value, mark.value],
                "mode": "lines",
                "name": mark.label,
                "line": {"color": mark.colour, "dash": "dash", "width": 1.2},
                "hovertemplate": f"{mark.label}<extra></extra>",
            }
        )
    return _figure(
        traces,
        title=title,
        height=height,
        xaxis=index_axis("pair index i", n_pairs, range=[-0.5, n_pairs - 0.5]),
        yaxis=_axis("wavelength λ_i = 2π / ω_i (positions)", type="log"),
    )


def block_outline(indices: Sequence[int], columns: Sequence[int]) -> list[dict]:
    """Outlines over a :func:`rotation_heatmap` of rows and columns ``indices`` around the
    cells where the rows and the columns ``columns`` meet (one pair's 2x2 block): one square
    when those columns are neighbours in the window, one square per cell otherwise (the split
    layout puts a pair's sin and cos apart); none when a column is not in the window."""
    where = {column: n for n, column in enumerate(indices)}
    if not columns or any(column not in where for column in columns):
        return []
    shown = sorted(where[column] for column in columns)
    line = {"color": CHOSEN_COLOUR, "width": 3}
    if shown[-1] - shown[0] == len(shown) - 1:
        spans = [(shown[0], shown[-1])]  # neighbours: one square around them all
    else:
        spans = [(cell, cell) for cell in shown]
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "y",
            "x0": x0 - 0.5,
            "x1": x1 + 0.5,
            "y0": y0 - 0.5,
            "y1": y1 + 0.5,
            "line": line,
        }
        for y0, y1 in spans
        for x0, x1 in spans
    ]


def column_bands(columns: Sequence[int], n_shown: int) -> list[dict]:
    """Amber bands behind the given columns of a chart whose x axis counts the columns
    0 .. ``n_shown``-1 (the columns another chart of the view chose); those beyond, none."""
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": column - 0.5,
            "x1": column + 0.5,
            "y0": 0,
            "y1": 1,
            "fillcolor": CHOSEN_COLOUR,
            "opacity": 0.25,
            "line": {"width": 0},
            "layer": "below",
        }
        for column in columns
        if 0 <= column < n_shown
    ]


def offset_profile_chart(
    offsets: np.ndarray,
    values: np.ndarray,
    *,
    upper: np.ndarray | None,
    checks: Mapping[int, tuple[np.ndarray, np.ndarray]],
    kind: str,
    subtitle: str = "",
) -> go.Figure:
    """Similarity against offset from the closed form, with direct values from a few k on it.

    With ``upper`` the closed form is drawn as an envelope: ``values`` is the lowest and
    ``upper`` the highest value of each run of offsets.
    """
    traces = []
    if offsets.size and upper is not None:
        traces.append(
            {
                "type": "scatter",
                "x": offsets,
                "y": upper,
                "mode": "lines",
                "hoverinfo": "skip",
                "line": {"width": 0.5, "color": "#1f77b4"},
                "showlegend": False,
                "name": "closed form (highest in run)",
            }
        )
        traces.append(
            {
                "type": "scatter",
                "x": offsets,
                "y": values,
                "mode": "lines",
                "fill": "tonexty",
                "line": {"width": 0.5, "color": "#1f77b4"},
                "name": "closed form (envelope)",
                "hovertemplate": "offset %{x:,}<br>lowest %{y:.6f}<extra></extra>",
            }
        )
    elif offsets.size:
        traces.append(
            {
                "type": "scatter",
                "x": offsets,
                "y": values,
                # Markers that show only when clicked: a point of a line can be selected only
                # where the trace has markers (linked highlighting).
                "mode": "lines+markers",
                "name": "closed form",
                "line": {"color": "#1f77b4", "width": 1.6},
                "marker": {"size": 6, "opacity": 0},
                **CLICKED_MARKER,
                "hovertemplate": f"offset %{{x:,}}<br>{kind} %{{y:.6f}}<extra></extra>",
            }
        )
    symbols = ("circle-open", "x-thin-open", "diamond-open")
    for j, (start, (check_offsets, check_values)) in enumerate(checks.items()):
        traces.append(
            {
                "type": "scatter",
                "x": check_offsets,
                "y": check_values,
                "mode": "markers",
                "name": f"direct, from k = {start:,}",
                "marker": {
                    "symbol": symbols[j % 3],
                    "size": 9,
                    "color": LINE_COLOURS[(j + 1) % len(LINE_COLOURS)],
                    "line": {"width": 1.5},
                },
                **CLICKED_VISIBLE_MARKER,
                "hovertemplate": f"k = {start:,}<br>offset %{{x:,}}<br>{kind} %{{y:.6f}}"
                "<extra></extra>",
            }
        )
    names = {"cosine": "cosine similarity", "dot": "dot product", "distance": "distance"}
    return _figure(
        traces,
        title=f"{names[kind].capitalize()} against offset",
        subtitle=subtitle,
        xaxis=_axis("offset between positions"),
        yaxis=_axis(names[kind]),
    )


def neighbour_distance_chart(
    positions: np.ndarray,
    exact_next: np.ndarray,
    *,
    exact_nearest: np.ndarray | None = None,
    stored_positions: np.ndarray | None = None,
    stored: np.ndarray | None = None,
    stored_label: str = "",
    collision: tuple[float, float] | None = None,
    subtitle: str = "",
) -> go.Figure:
    """Distance from each position's encoding to the next one's: as a model stores it (zeros are
    collisions), and in exact arithmetic, with the nearest of all other positions for reference.

    ``collision`` is the first colliding pair (earlier, later), marked on the zero line.
    """
    traces = []
    if stored is not None:
        traces.append(
            {
                "type": "scatter",
                "x": stored_positions,
                "y": stored,
                # Markers: where collisions alternate with gaps a line would fill a solid band;
                # points show the zeros (collisions) and the other distances as separate rows.
                "mode": "markers",
                "name": stored_label,
                "marker": {"size": 4 if stored.size > 200 else 6, "color": "#9467bd"},
                "hovertemplate": "position %{x:,} and the next<br>distance %{y:.6g}"
                f"<extra>{stored_label}</extra>",
            }
        )
    traces.append(
        {
            "type": "scatter",
            "x": positions,
            "y": exact_next,
            "mode": "lines",
            "name": "exact (float64): to the next position",
            "line": {"color": "#555555", "width": 1.5, "dash": "dot"},
            "hovertemplate": "position %{x:,} and the next<br>exact distance %{y:.6g}"
            "<extra></extra>",
        }
    )
    if exact_nearest is not None:
        traces.append(
            {
                "type": "scatter",
                "x": positions,
                "y": exact_nearest,
                "mode": "lines",
                "name": "exact (float64): to the nearest of all other positions",
                "line": {"color": "#1f77b4", "width": 1.2, "dash": "dash"},
                "hovertemplate": "position %{x:,}<br>nearest distance %{y:.6g}<extra></extra>",
            }
        )
    if collision is not None:
        earlier, later = collision
        traces.append(
            {
                "type": "scatter",
                "x": [earlier],
                "y": [0.0],
                "mode": "markers",
                "name": f"first collision: {earlier:,} and {later:,}",
                "marker": {"color": "#d62728", "size": 11, "symbol": "x"},
                "hovertemplate": f"positions {earlier:,} and {later:,}: the same encoding"
                "<extra></extra>",
            }
        )
    return _figure(
        traces,
        title="Distance from each position's encoding to the next position's",
        subtitle=subtitle,
        height=440,
        xaxis=_axis("position k", rangemode="tozero"),
        yaxis=_axis("distance |E(k+1) − E(k)|", rangemode="tozero"),
    )


def rotation_heatmap(
    window: np.ndarray, *, indices: Sequence[int], d_model: int, hover: Sequence[str]
) -> go.Figure:
    """Rows and columns ``indices`` of the rotation matrix M(offset); ``hover`` describes each."""
    labels = list(hover)
    numbers = list(indices)
    heatmap = {
        "type": "heatmap",
        "z": window,
        "x": labels,
        "y": labels,
        "zmin": -1.0,
        "zmax": 1.0,
        "colorscale": DIVERGING,
        "colorbar": {"title": {"text": "M"}, "thickness": 14},
        "hovertemplate": "row %{y}<br>column %{x}<br>M = %{z:.6f}<extra></extra>",
    }
    ticks = {
        "tickmode": "array",
        "tickvals": labels[::2],
        "ticktext": [str(n) for n in numbers[::2]],
        "showgrid": False,
        "constrain": "domain",  # square cells without padding: the ticks sit at the matrix
    }
    contiguous = numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    shown = (
        f"rows and columns {numbers[0]}–{numbers[-1]} of {d_model}"
        if contiguous
        else f"the sin and cos columns of {len(numbers) // 2} pairs, of {d_model} columns"
    )
    return _figure(
        [heatmap],
        title="The rotation matrix M(offset)",
        subtitle="the whole matrix" if window.shape[0] == d_model else shown,
        height=560,
        xaxis=_axis("column of PE(k)", **ticks),
        yaxis=_axis("row of PE(k + offset)", autorange="reversed", scaleanchor="x", **ticks),
    )


#: Columns drawn by :func:`vector_comparison` (the first ones).
VECTOR_COLUMNS = 32


def vector_comparison(
    shifted: np.ndarray,
    rotated: np.ndarray,
    *,
    k: int,
    offset: float,
    max_columns: int = VECTOR_COLUMNS,
) -> go.Figure:
    """PE(k + offset) and M @ PE(k) over the first columns: two names for the same vector."""
    n_columns = shifted.size
    columns = np.arange(min(n_columns, max_columns))
    traces = [
        {
            "type": "scatter",
            "x": columns,
            "y": shifted[:max_columns],
            "mode": "lines",
            "name": f"PE({k:,} + {format_offset(offset)}) computed directly",
            "line": {"color": "#1f77b4", "width": 3},
            "hovertemplate": "column %{x}<br>%{y:.6f}<extra>PE(k + offset)</extra>",
        },
        {
            "type": "scatter",
            "x": columns,
            "y": rotated[:max_columns],
            "mode": "markers",
            "name": f"M({format_offset(offset)}) @ PE({k:,})",
            "marker": {"color": "#d62728", "size": 5},
            "hovertemplate": "column %{x}<br>%{y:.6f}<extra>M @ PE(k)</extra>",
        },
    ]
    return _figure(
        traces,
        title="Shift by the offset, or rotate: the same vector",
        subtitle="" if n_columns <= max_columns else f"first {max_columns} of {n_columns} columns",
        height=380,
        xaxis=index_axis("dimension (column)", columns.size),
        yaxis=_axis("value", range=[-1.08, 1.08]),
    )


def number_text(value: float, *, grouping: bool = False) -> str:
    """A number as the shortest text that reads back as the same float, without a trailing
    ".0": 10000, 1000001, 2.5, 1e-07 (``f"{x:g}"`` keeps six digits: base 1000001 read
    1e+06); with ``grouping``, thousands separated: 10,000, 1,000,001.5."""
    text = repr(float(value)).removesuffix(".0")
    if not grouping or "e" in text or not np.isfinite(value):
        return text
    whole, dot, fraction = text.partition(".")
    return f"{int(whole):,}{dot}{fraction}"


def format_offset(offset: float) -> str:
    """An offset as typed: 1, -3, 2.5, 1,000,000 (no 1e+06)."""
    return f"{offset:,.0f}" if float(offset).is_integer() else f"{offset:,g}"


def unit_circles(
    points: np.ndarray,
    *,
    pairs: Sequence[int],
    frequencies: Sequence[float],
    frame_ms: int | None = None,
) -> go.Figure:
    """One unit circle per pair: the point (sin(k w_i), cos(k w_i)) for k = 0, 1, 2, ...

    With ``frame_ms``, each circle also carries the vector of one position k (from the centre
    to its point), and a Play button sweeps k over the points in the browser, one position
    every ``frame_ms`` milliseconds (Plotly frames: no server run per frame), with a slider to
    drag k by hand.
    """
    n = len(pairs)
    domains = _panel_domains(n, gap=0.03)
    theta = np.linspace(0, 2 * np.pi, 200)
    k = np.arange(points.shape[0])
    traces, layout, annotations = [], {}, []
    for j, (i, w) in enumerate(zip(pairs, frequencies, strict=True)):
        suffix = "" if j == 0 else str(j + 1)
        x_axis, y_axis = f"x{suffix}", f"y{suffix}"
        traces.append(
            {
                "type": "scatter",
                "x": np.sin(theta),
                "y": np.cos(theta),
                "xaxis": x_axis,
                "yaxis": y_axis,
                "mode": "lines",
                "line": {"color": "#ccc", "width": 1},
                "hoverinfo": "skip",
                "showlegend": False,
            }
        )
        traces.append(
            {
                "type": "scatter",
                "x": points[:, j, 0],
                "y": points[:, j, 1],
                "xaxis": x_axis,
                "yaxis": y_axis,
                # Markers only: chords between consecutive points of a fast pair would draw a
                # second, inner polygon that looks like another circle. Colour gives the order.
                "mode": "markers",
                "name": f"pair i={i}, (sin, cos) at k = 0 … {points.shape[0] - 1}",
                "customdata": k,
                "showlegend": False,
                "marker": {
                    "color": k,
                    "colorscale": "Viridis",
                    "size": 6,
                    "showscale": j == n - 1,
                    "colorbar": {"title": {"text": "k"}, "thickness": 12},
                },
                "hovertemplate": CIRCLE_HOVER,
                **CLICKED_VISIBLE_MARKER,
            }
        )
        axis = {"range": [-1.15, 1.15], "showticklabels": False, "zeroline": True}
        layout[f"xaxis{suffix}"] = {**axis, "domain": list(domains[j]), "anchor": y_axis}
        layout[f"yaxis{suffix}"] = {**axis, "anchor": x_axis, "scaleanchor": x_axis}
        annotations.append(
            _panel_heading(
                f"pair i={i}<br>ω={w:.3g}, λ={format_number(2 * np.pi / w)}",
                domains[j],
                font={"size": 11},
            )
        )
    layout["xaxis"]["title"] = {"text": "sin(k·ω)"}
    layout["yaxis"]["title"] = {"text": "cos(k·ω)"}
    title = f"Each pair is a point turning on the unit circle (k = 0 … {points.shape[0] - 1})"
    if frame_ms is None:
        return _figure(
            traces,
            title=title,
            height=400,
            annotations=annotations,
            margin={"t": 100},
            **layout,
        )
    vectors = list(range(len(traces), len(traces) + n))
    traces.extend(_position_vector(points[0, j], j) for j in range(n))
    fig = _figure(
        traces,
        title=title,
        height=580,
        annotations=annotations,
        margin={"t": 100, "b": 240},
        **layout,
    )
    fig.frames = [
        go.Frame(
            name=str(position),
            data=[_position_vector(points[position, j], j) for j in range(n)],
            traces=vectors,
        )
        for position in k
    ]
    fig.update_layout(
        updatemenus=[_play_buttons(frame_ms)], sliders=[_position_slider(k, frame_ms)]
    )
    return fig


def circle_of_curve(curve_number: int, n_circles: int) -> int:
    """Which circle (0 .. ``n_circles``-1) trace ``curve_number`` of :func:`unit_circles`
    belongs to: circle j is drawn by traces 2j (its outline) and 2j + 1 (its points), and its
    played vector is trace 2 ``n_circles`` + j."""
    return curve_number // 2 if curve_number < 2 * n_circles else curve_number - 2 * n_circles


def _position_vector(point: np.ndarray, j: int) -> dict:
    """The vector from the centre of circle ``j`` to ``point`` (sin, cos), with its end marked."""
    suffix = "" if j == 0 else str(j + 1)
    return {
        "type": "scatter",
        "x": [0.0, float(point[0])],
        "y": [0.0, float(point[1])],
        "xaxis": f"x{suffix}",
        "yaxis": f"y{suffix}",
        "mode": "lines+markers",
        "line": {"color": PLAYED_COLOUR, "width": 2},
        "marker": {"size": [0, 11], "color": PLAYED_COLOUR},
        "hoverinfo": "skip",
        "showlegend": False,
    }


def _animation(frame_ms: int) -> dict:
    return {
        "frame": {"duration": frame_ms, "redraw": False},
        "transition": {"duration": 0},
        "mode": "immediate",
        "fromcurrent": True,
    }


def _play_buttons(frame_ms: int) -> dict:
    """Play (from the current position) and Pause, under the circles, above the slider."""
    return {
        "type": "buttons",
        "direction": "left",
        "showactive": False,
        "x": 0.0,
        "xanchor": "left",
        "y": -0.17,
        "yanchor": "top",
        "pad": {"r": 8, "t": 0},
        "buttons": [
            {"label": "▶ Play", "method": "animate", "args": [None, _animation(frame_ms)]},
            {
                "label": "❚❚ Pause",
                "method": "animate",
                "args": [[None], _animation(0)],
            },
        ],
    }


def _position_slider(positions: np.ndarray, frame_ms: int) -> dict:
    """A slider over the positions; playing moves it, dragging it shows that position."""
    return {
        "active": 0,
        "x": 0.0,
        "len": 1.0,
        "y": -0.36,
        "yanchor": "top",
        "pad": {"t": 0, "b": 0},
        "currentvalue": {"prefix": "k = ", "visible": True, "xanchor": "left"},
        "steps": [
            {
                "label": str(position),
                "method": "animate",
                "args": [[str(position)], _animation(frame_ms)],
            }
            for position in positions
        ],
    }


def norms_chart(norms: Mapping[str, np.ndarray]) -> go.Figure:
    """Per-position norms of the embedding, the encoding and their sum."""
    colours = ("#2ca02c", "#1f77b4", "#d62728")
    traces = [
        {
            "type": "scatter",
            "x": np.arange(values.size),
            "y": values,
            "mode": "lines+markers",
            "name": name,
            "line": {"color": colour},
            "hovertemplate": f"{name}<br>position %{{x}}<br>norm %{{y:.4f}}<extra></extra>",
        }
        for (name, values), colour in zip(norms.items(), colours, strict=False)
    ]
    n_positions = max((values.size for values in norms.values()), default=1)
    return _figure(
        traces,
        title="Who dominates the sum: embedding or encoding?",
        subtitle="Euclidean norm per position, mean over the batch (padding excluded)",
        height=400,
        xaxis=index_axis("position in the sequence", n_positions),
        yaxis=_axis("norm", rangemode="tozero"),
    )


def matrix_heatmap(
    values: np.ndarray,
    *,
    rows: Sequence[str] | Sequence[int],
    columns: Sequence[int],
    title: str,
    subtitle: str = "",
    symmetric_range: float | None = None,
    height: int = 360,
    row_title: str = "position",
    column_title: str = "dimension (column)",
    column_ticks: int = 10,
) -> go.Figure:
    """A plain matrix heatmap with a symmetric colour range (embeddings, sums, differences).

    ``rows`` are labels (tokens) or, when they are numbers, indices on a numeric axis titled
    ``row_title``; about ``column_ticks`` column numbers are marked (fewer on a narrow panel).
    """
    limit = symmetric_range or float(np.max(np.abs(values), initial=1e-12))
    numeric = len(rows) > 0 and all(isinstance(r, (int, np.integer)) for r in rows)
    heatmap = {
        "type": "heatmap",
        "z": np.asarray(values, dtype=np.float32),
        "x": np.asarray(columns),
        "y": np.asarray(rows) if numeric else list(rows),
        "zmin": -limit,
        "zmax": limit,
        "colorscale": DIVERGING,
        "colorbar": {"thickness": 12},
        "hovertemplate": (f"{row_title} %{{y}}" if numeric else "%{y}")
        + f"<br>{column_title} %{{x}}<br>value %{{z:.4f}}<extra></extra>",
    }
    yaxis = {"autorange": "reversed", "showgrid": False}
    if numeric:  # ticks by the rows' span: they may be a sample of a long table
        yaxis = index_axis(row_title, int(max(rows)) - int(min(rows)) + 1, **yaxis)
    return _figure(
        [heatmap],
        title=title,
        subtitle=subtitle,
        height=height,
        xaxis=index_axis(column_title, len(columns), column_ticks, showgrid=False),
        yaxis=yaxis,
    )


#: Pixels between the two lines of :func:`matrix_panels`' panel names (12 px type).
PANEL_NAME_LINE = 16


def matrix_panels(
    panels: Mapping[str, np.ndarray],
    *,
    title: str,
    symmetric_range: float = 1.0,
    row_title: str = "position",
    column_title: str = "column",
    height: int = 380,
) -> go.Figure:
    """Matrices side by side in one chart, to compare them cell for cell: row r of each is
    drawn at r on one shared row axis, zooming one panel zooms them all, and one colour scale
    over [-``symmetric_range``, ``symmetric_range``] has one colour bar. Each panel is named
    above it by its key in ``panels`` (at least one)."""
    if not panels:
        raise ValueError("panels must hold at least one matrix, got none")
    names = list(panels)
    n = len(names)
    domains = _panel_domains(n, gap=0.02)
    traces, annotations, layout = [], [], {}
    for j, name in enumerate(names):
        values = np.asarray(panels[name])
        suffix = "" if j == 0 else str(j + 1)
        traces.append(
            {
                "type": "heatmap",
                "z": values.astype(np.float32),
                "x": np.arange(values.shape[1]),
                "y": np.arange(values.shape[0]),
                "xaxis": f"x{suffix}",
                "yaxis": "y",
                "name": name,
                "showlegend": False,
                "zmin": -symmetric_range,
                "zmax": symmetric_range,
                "colorscale": DIVERGING,
                "showscale": j == n - 1,
                "colorbar": {"thickness": 12},
                "hovertemplate": f"{name}<br>{row_title} %{{y}}<br>{column_title} %{{x}}"
                "<br>value %{z:.4f}<extra></extra>",
            }
        )
        # One axis title, under the middle panel: five would run into each other on a phone.
        layout[f"xaxis{suffix}"] = index_axis(
            column_title if j == n // 2 else None,
            values.shape[1],
            3,
            showgrid=False,
            domain=list(domains[j]),
            anchor="y",
            **({"matches": "x"} if j else {}),
        )
        # Every other name a line higher: on a phone a panel is narrower than a name. The size
        # is fixed, so that the line stays a line in presentation mode's larger type too.
        annotations.append(
            _panel_heading(
                f"<b>{name}</b>", domains[j], font={"size": 12}, yshift=PANEL_NAME_LINE * (j % 2)
            )
        )
    n_rows = max(np.shape(panels[name])[0] for name in names)
    return _figure(
        traces,
        title=title,
        height=height,
        annotations=annotations,
        margin={"t": 95},
        yaxis=index_axis(row_title, n_rows, autorange="reversed", showgrid=False),
        **layout,
    )


def profiles_overlay(profiles: Mapping[str, np.ndarray], *, current: str) -> go.Figure:
    """Cosine similarity against offset, one line per convention."""
    traces = [
        {
            "type": "scatter",
            "x": np.arange(values.size),
            "y": values,
            "mode": "lines",
            "name": name + (" (current)" if name == current else ""),
            "line": convention_line(name, width=3 if name == current else 2),
            "hovertemplate": f"{name}<br>offset %{{x}}<br>cosine %{{y:.6f}}<extra></extra>",
        }
        for name, values in profiles.items()
    ]
    return _figure(
        traces,
        title="Similarity against offset for each convention",
        height=380,
        xaxis=_axis("offset between positions"),
        yaxis=_axis("cosine similarity"),
    )


#: Colour of each band of rotary pairs (pe_core.RotaryEncoding.band).
BAND_COLOURS = {
    "unchanged": "#1f77b4",
    "ramp": "#ff7f0e",
    "scaled": "#d62728",
    "not rotated": "#7f7f7f",
}


def rope_pair_chart(
    original: np.ndarray,
    scaled: np.ndarray,
    band: Sequence[str],
    *,
    lengths: Mapping[str, float],
    title: str,
    subtitle: str = "",
) -> go.Figure:
    """Wavelength of each rotary pair before (line) and after scaling (markers coloured by
    band), on a log axis, with horizontal lines at the given ``lengths`` (training, target).

    Over :data:`MARKERS_DRAWN` pairs, each series draws at most that many markers, evenly
    spread over what is in view (every pair can still be hovered and clicked; zooming in
    draws more): a marker is an element on the page, and 8,192 of them took seconds to draw.
    """
    pairs = np.arange(original.size)
    band = np.asarray(band)
    thinned = original.size > MARKERS_DRAWN
    most = {"maxdisplayed": MARKERS_DRAWN} if thinned else {}
    if thinned:
        subtitle += (
            f"{'; ' if subtitle else ''}at most {MARKERS_DRAWN} markers a series "
            "(zoom in for every pair)"
        )
    traces = [
        {
            "type": "scatter",
            "x": pairs,
            "y": original,
            # Hidden markers: a click on the line (over the markers of unchanged pairs) picks
            # its pair too.
            "mode": "lines+markers",
            "marker": {"size": 6, "opacity": 0, **most},
            "name": "before scaling",
            "line": {"color": "#9ca3af", "width": 2, "dash": "dot"},
            "hovertemplate": "pair %{x}<br>λ before %{y:,.6g} positions<extra></extra>",
            **CLICKED_MARKER,
        }
    ]
    for name, colour in BAND_COLOURS.items():
        shown = (band == name) & np.isfinite(scaled)
        if not shown.any():
            continue
        traces.append(
            {
                "type": "scatter",
                "x": pairs[shown],
                "y": scaled[shown],
                "mode": "markers",
                "name": f"after: {name}",
                "marker": {"color": colour, "size": 7, **most},
                "hovertemplate": f"pair %{{x}} ({name})<br>λ after %{{y:,.6g}} positions"
                "<extra></extra>",
                **CLICKED_VISIBLE_MARKER,
            }
        )
    shapes, annotations = [], []
    for (label, length), dash in zip(lengths.items(), ("dash", "longdash"), strict=False):
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": length,
                "y1": length,
                "line": {"color": "#374151", "width": 1.5, "dash": dash},
            }
        )
        annotations.append(
            {
                "xref": "paper",
                "x": 0.01,
                "y": math.log10(length),
                "text": f"{label}: {length:,.0f}",
                "showarrow": False,
                "yanchor": "bottom",
                "xanchor": "left",
                "font": {"size": 11, "color": "#374151"},
                "bgcolor": "rgba(255,255,255,0.8)",
            }
        )
    return _figure(
        traces,
        title=title,
        subtitle=subtitle,
        height=460,
        xaxis=index_axis("pair i", original.size),
        yaxis=_axis("wavelength 2π/ω (positions)", type="log", exponentformat="power"),
        shapes=shapes,
        annotations=annotations,
    )


def curves(
    x: np.ndarray,
    lines: Mapping[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    subtitle: str = "",
    log_x: bool = False,
    log_y: bool = False,
    height: int = 380,
    steps: bool = False,
) -> go.Figure:
    """A few named lines against a common x (one colour each, in order); ``steps``: each
    value holds until the next x (integer-valued things such as buckets and ids)."""
    traces = [
        {
            "type": "scatter",
            "x": x,
            "y": values,
            "mode": "lines",
            "name": name,
            "line": {
                "color": LINE_COLOURS[j % len(LINE_COLOURS)],
                "width": 2,
                **({"shape": "hv"} if steps else {}),
            },
            "hovertemplate": f"{name}<br>%{{x:,.6g}}: %{{y:.6g}}<extra></extra>",
        }
        for j, (name, values) in enumerate(lines.items())
    ]
    return _figure(
        traces,
        title=title,
        subtitle=subtitle,
        height=height,
        xaxis=_axis(x_title, **({"type": "log"} if log_x else {})),
        yaxis=_axis(y_title, **({"type": "log", "exponentformat": "power"} if log_y else {})),
    )


def column_bars(
    vectors: Mapping[str, np.ndarray], *, title: str, subtitle: str = "", x_title: str
) -> go.Figure:
    """Several vectors as grouped bars, column by column."""
    traces = [
        {
            "type": "bar",
            "x": np.arange(values.size),
            "y": values,
            "name": name,
            "marker": {"color": LINE_COLOURS[j % len(LINE_COLOURS)]},
            "hovertemplate": f"{name}<br>column %{{x}}: %{{y:.6g}}<extra></extra>",
        }
        for j, (name, values) in enumerate(vectors.items())
    ]
    count = max((v.size for v in vectors.values()), default=1)
    return _figure(
        traces,
        title=title,
        subtitle=subtitle,
        height=360,
        xaxis=index_axis(x_title, count),
        yaxis=_axis("value"),
        barmode="group",
    )


def bars(
    x: np.ndarray,
    values: np.ndarray,
    *,
    title: str,
    x_title: str,
    y_title: str,
    subtitle: str = "",
    log_y: bool = False,
    hover: str = "%{x}: %{y:.6g}",
) -> go.Figure:
    """One bar per x (heads, buckets)."""
    trace = {
        "type": "bar",
        "x": x,
        "y": values,
        "marker": {"color": LINE_COLOURS[0]},
        "hovertemplate": hover + "<extra></extra>",
    }
    return _figure(
        [trace],
        title=title,
        subtitle=subtitle,
        height=360,
        xaxis=index_axis(x_title, len(x)),
        yaxis=_axis(y_title, **({"type": "log", "exponentformat": "power"} if log_y else {})),
    )


def pairs_by_axis(
    wavelengths: np.ndarray,
    axes: np.ndarray,
    axis_names: Sequence[str],
    *,
    title: str,
    subtitle: str = "",
) -> go.Figure:
    """The wavelength of each rotary pair, coloured by the position axis that drives it."""
    pairs = np.arange(wavelengths.size)
    traces = [
        {
            "type": "scatter",
            "x": pairs[axes == a],
            "y": wavelengths[axes == a],
            "mode": "markers",
            "name": f"{name} ({int(np.sum(axes == a))} pairs)",
            "marker": {"color": LINE_COLOURS[a % len(LINE_COLOURS)], "size": 7},
            "hovertemplate": f"pair %{{x}}: {name}<br>wavelength %{{y:,.6g}}<extra></extra>",
        }
        for a, name in enumerate(axis_names)
        if np.any(axes == a)
    ]
    return _figure(
        traces,
        title=title,
        subtitle=subtitle,
        height=380,
        xaxis=index_axis("pair i", wavelengths.size),
        yaxis=_axis("wavelength 2π/ω (positions)", type="log", exponentformat="power"),
    )


# --- Text alternatives -------------------------------------------------------------------------

#: Series described one by one; the others are counted.
DESCRIBED_TRACES = 8


def _plain(text: str | None) -> str:
    """A Plotly title as plain words: the subtitle after a colon, no tags."""
    if not text:
        return ""
    text = re.sub(r"<br>\s*<sup>(.*?)</sup>", r" (\1)", text)
    return re.sub(r"<[^>]+>", "", text).strip()


def _numbers(values) -> np.ndarray | None:
    """``values`` as finite float64 numbers, or None when they are not numbers."""
    if values is None:
        return None
    try:
        array = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None
    return array[np.isfinite(array)]


def _series_words(trace, x_title: str, y_title: str) -> str | None:
    """One series in words: its name, its points and the range of its values, where they are."""
    name = _plain(getattr(trace, "name", None)) or trace.type
    if trace.type == "heatmap":
        z = _numbers(trace.z)
        if z is None or not z.size:
            return None
        rows, columns = np.shape(trace.z)[:2]
        return (
            f"{name}: {rows:,} × {columns:,} cells, values from {format_number(z.min())} "
            f"to {format_number(z.max())}."
        )
    y = _numbers(getattr(trace, "y", None))
    if y is None or not y.size:
        return None
    x = _numbers(getattr(trace, "x", None))
    if x is None or x.size != y.size:
        x = np.arange(y.size, dtype=np.float64)
    x_words = f" ({x_title})" if x_title else ""
    if y.size == 1:
        return f"{name}: at {format_number(x[0])}{x_words}, {format_number(y[0])}."
    low, high = int(np.argmin(y)), int(np.argmax(y))
    points = (
        f"{name}: {y.size:,} points from {format_number(x.min())} to "
        f"{format_number(x.max())}{x_words}; {y_title or 'value'}"
    )
    if y[low] == y[high]:
        return f"{points} {format_number(y[low])} at every point."
    return (
        f"{points} lowest {format_number(y[low])} at {format_number(x[low])}, highest "
        f"{format_number(y[high])} at {format_number(x[high])}."
    )


def text_alternative(fig: go.Figure) -> str:
    """What a chart shows, in words and numbers, for a reader who cannot see it: its title,
    then each series with its number of points and where its lowest and highest values lie
    (a heatmap: its size and the range of its cells), from the figure's own data."""
    layout = fig.layout
    x_title = _plain(layout.xaxis.title.text) if layout.xaxis and layout.xaxis.title else ""
    y_title = _plain(layout.yaxis.title.text) if layout.yaxis and layout.yaxis.title else ""
    words = [f"Chart: {_plain(layout.title.text) or 'untitled'}."]
    # Drawn and not decoration (a circle's outline, the played vector: unnamed, no hover; a
    # trace that only carries words into the hover box).
    shown = [
        t
        for t in fig.data
        if t.visible in (None, True)
        and (t.name or getattr(t, "hoverinfo", None) != "skip")
        and getattr(t, "meta", None) != HOVER_ONLY
    ]
    described = [w for t in shown[:DESCRIBED_TRACES] if (w := _series_words(t, x_title, y_title))]
    words.extend(described)
    if len(shown) > DESCRIBED_TRACES:
        words.append(f"And {len(shown) - DESCRIBED_TRACES} more series.")
    return " ".join(words)
