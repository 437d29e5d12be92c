"""The sinusoids of an encoding: value against position, each position across the pairs, and
the wavelengths of the pairs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.animation import PLAYED_COLOUR, _play_buttons, _position_slider
from dashboard.figures.base import (
    BLUE,
    HOVER_ONLY,
    LINE_COLOURS,
    ORANGE,
    RED,
    _axis,
    _figure,
    convention_line,
    index_axis,
)
from dashboard.figures.linked import CHOSEN_COLOUR, CLICKED_VISIBLE_MARKER


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
    smooth_x = _evenly_spaced(smooth_positions)
    for j, label in enumerate(labels):
        colour = LINE_COLOURS[j % len(LINE_COLOURS)]
        traces.append(
            {
                "type": "scatter",
                **smooth_x,
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
    traces.extend(_played_position(integer_positions, integer_values))
    # Each frame moves the two traces of the played position: only their x and y change (a
    # frame's trace is merged into the trace it names, its style kept). The frames and the
    # slider are plain dicts (PlayedFigure): as plotly.py objects they were 90 % of this
    # figure's time, on every step of a parameter (issue 51).
    positions = integer_positions.tolist()
    values = integer_values.tolist()
    frames = [
        {
            "name": str(position),
            "data": [
                {"x": [position, position]},
                {"x": [position] * len(row), "y": row},
            ],
            "traces": played,
        }
        for position, row in zip(positions, values, strict=True)
    ]
    return _figure(
        traces,
        title=title,
        subtitle=subtitle,
        height=620,
        margin={"t": 80, "b": 270},
        frames=frames,
        updatemenus=[{**_play_buttons(frame_ms), "y": -0.3}],
        sliders=[{**_position_slider(integer_positions, frame_ms), "y": -0.48}],
        **axes,
    )


def _evenly_spaced(positions: np.ndarray) -> dict:
    """The x of a curve sampled at ``positions``: ``x0`` and ``dx`` when they are evenly
    spaced (``np.linspace``: Plotly computes ``x0 + i * dx``, the same numbers but for the
    last one's rounding), else the positions themselves. Each curve of 2,000 points sent its
    own copy of the same 2,000 positions (issue 51: the chart with four curves, 406 -> 216 kB
    as sent)."""
    if positions.size < 2:
        return {"x": positions}
    step = (positions[-1] - positions[0]) / (positions.size - 1)
    if step > 0 and np.allclose(np.diff(positions), step, rtol=1e-9, atol=0.0):
        return {"x0": float(positions[0]), "dx": float(step)}
    return {"x": positions}


def _played_position(positions: np.ndarray, values: np.ndarray) -> list[dict]:
    """The position being played, at first the first one: a vertical line at it and each
    curve's value there (the frames move their x and y)."""
    position = float(positions[0])
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
            "y": values[0].tolist(),
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
    # What the line styles mean, for the kinds of column there are (d_model 1 has no cos).
    styles = [
        (kind, dash, word)
        for kind, columns, dash, word in (
            ("sin", sin_columns, "solid", "solid"),
            ("cos", cos_columns, "dot", "dotted"),
        )
        if len(columns)
    ]
    for kind, dash, word in styles:
        traces.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "lines",
                "name": f"{kind} columns ({word})",
                "line": {"color": "#666666", "width": 1.6, "dash": dash},
                "hoverinfo": "skip",
            }
        )
    return _figure(
        traces,
        title=title or "Value against pair index: every position is its own wave",
        subtitle=", ".join(f"{word}: {kind} columns" for kind, _, word in styles),
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


def cycles_within_chart(wavelengths: np.ndarray, span: int, *, height: int = 460) -> go.Figure:
    """Each pair's wavelength on a log axis, coloured by whether the pair completes a full
    turn within ``span`` positions (its wavelength at most ``span``), with ``span`` as a
    dashed line: the pairs below it turn at least once over the positions 0 .. ``span``."""
    pairs = np.arange(wavelengths.size)
    within = wavelengths <= span
    traces = []
    for chosen, colour, words in (
        (within, BLUE, "complete a full turn"),
        (~within, ORANGE, "turn less than once"),
    ):
        count = int(chosen.sum())
        traces.append(
            {
                "type": "scatter",
                "x": pairs[chosen],
                "y": wavelengths[chosen],
                "mode": "markers",
                "name": f"{count:,} of {wavelengths.size:,} pairs {words}",
                "marker": {"color": colour, "size": 6 if wavelengths.size <= 64 else 4},
                "hovertemplate": "pair i=%{x}<br>λ=%{y:,.6g} positions<extra></extra>",
            }
        )
    traces.append(
        {
            "type": "scatter",
            "x": [-0.5, wavelengths.size - 0.5],
            "y": [span, span],
            "mode": "lines",
            "name": f"the sequence: positions 0 to {span:,}",
            "line": {"color": RED, "dash": "dash", "width": 2},
            "hovertemplate": f"positions 0 to {span:,}<extra></extra>",
        }
    )
    return _figure(
        traces,
        title="Which pairs turn at least once within the sequence",
        subtitle="wavelength of each pair on a log axis: a straight line, a geometric series",
        height=height,
        xaxis=index_axis("pair index i", wavelengths.size, range=[-0.5, wavelengths.size - 0.5]),
        yaxis=_axis("wavelength λ_i (positions)", type="log"),
    )
