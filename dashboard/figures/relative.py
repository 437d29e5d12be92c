"""Relative position as a rotation: the rotation matrix M(offset), the shifted vector against
the rotated one, and each pair as a point turning on the unit circle (with Play)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.animation import PLAYED_COLOUR, _play_buttons, _position_slider
from dashboard.figures.base import (
    BLUE,
    DIVERGING,
    RED,
    _axis,
    _figure,
    _panel_domains,
    _panel_heading,
    index_axis,
)
from dashboard.figures.linked import CLICKED_VISIBLE_MARKER
from dashboard.formatting import format_number, format_offset

CIRCLE_HOVER = "k = %{customdata}<br>sin = %{x:.4f}<br>cos = %{y:.4f}<extra></extra>"


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
            "line": {"color": BLUE, "width": 3},
            "hovertemplate": "column %{x}<br>%{y:.6f}<extra>PE(k + offset)</extra>",
        },
        {
            "type": "scatter",
            "x": columns,
            "y": rotated[:max_columns],
            "mode": "markers",
            "name": f"M({format_offset(offset)}) @ PE({k:,})",
            "marker": {"color": RED, "size": 5},
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
    # Each frame moves the vectors' ends only (a frame's trace is merged into the trace it
    # names); frames and slider plain dicts (PlayedFigure: issue 51).
    ends = points.tolist()
    frames = [
        {
            "name": str(position),
            "data": [{"x": [0.0, x], "y": [0.0, y]} for x, y in ends[position]],
            "traces": vectors,
        }
        for position in range(points.shape[0])
    ]
    return _figure(
        traces,
        title=title,
        height=580,
        annotations=annotations,
        margin={"t": 100, "b": 240},
        frames=frames,
        updatemenus=[_play_buttons(frame_ms)],
        sliders=[_position_slider(k, frame_ms)],
        **layout,
    )


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
