"""Figure factories: arrays in, ``plotly.graph_objects.Figure`` out. No Streamlit, no state.

Each figure is built in one call from plain dicts (traces and layout): Plotly validates the
whole figure once, about ten times faster than adding traces and updating axes one by one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

#: Diverging scale for values in [-1, 1]: blue negative, white 0, red positive.
DIVERGING = "RdBu_r"
CONVENTION_COLOURS = {"vaswani": "#1f77b4", "tensor2tensor": "#ff7f0e", "split": "#2ca02c"}
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
CIRCLE_HOVER = "k = %{customdata}<br>sin = %{x:.4f}<br>cos = %{y:.4f}<extra></extra>"


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
    **layout,
) -> go.Figure:
    """The figure, with the app's common layout: title and subtitle on the left, legend on top."""
    text = f"{title}<br><sup>{subtitle}</sup>" if subtitle else title
    common = {
        "title": {"text": text, "x": 0.0, "xanchor": "left"},
        "height": height,
        "margin": {"l": 70, "r": 20, "t": 80 if subtitle else 50, "b": 50},
        "hoverlabel": {"align": "left"},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1},
        "xaxis": xaxis or {},
        "yaxis": yaxis or {},
    }
    return go.Figure(data=traces, layout={**common, **layout})


def nice_step(span: float, n_ticks: int = 10) -> int:
    """A round tick step (1, 2 or 5 times a power of ten) giving about ``n_ticks`` ticks."""
    raw = max(span / n_ticks, 1.0)
    magnitude = 10 ** int(np.floor(np.log10(raw)))
    return int(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw))


def _sparse_ticks(labels: Sequence[str], numbers: Sequence[int], n_ticks: int = 10) -> dict:
    """Axis options for ticks at round numbers on a categorical axis of ``labels``."""
    if not labels:
        return {}
    step = nice_step(numbers[-1] - numbers[0], n_ticks)
    buckets = np.asarray(numbers) // step
    picked = np.flatnonzero(np.diff(buckets, prepend=buckets[0] - 1))
    return {
        "tickmode": "array",
        "tickvals": [labels[j] for j in picked],
        "ticktext": [f"{numbers[j]:,}" for j in picked],
        "showgrid": False,
    }


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


def row_labels(first: Sequence[int], last: Sequence[int]) -> list[str]:
    """One description per row: a position, or the block of positions a mean covers."""
    return [
        f"position {a:,}" if a == b else f"positions {a:,}–{b:,} (mean)"
        for a, b in zip(first, last, strict=True)
    ]


def encoding_heatmap(
    values: np.ndarray,
    *,
    rows: Sequence[str],
    row_numbers: Sequence[int],
    columns: Sequence[str],
    column_numbers: Sequence[int],
    title: str = "Positional encoding",
    subtitle: str = "",
) -> go.Figure:
    """Positions (rows) x dimensions (columns), the colour scale fixed to [-1, 1].

    ``rows`` and ``columns`` are unique descriptions used as categorical axes, so the hover box
    says everything about a cell while the ticks show plain numbers.
    """
    heatmap = {
        "type": "heatmap",
        "z": values,
        "x": list(columns),
        "y": list(rows),
        "zmin": -1.0,
        "zmax": 1.0,
        "colorscale": DIVERGING,
        "colorbar": {"title": {"text": "value"}, "thickness": 14},
        "hovertemplate": "%{y}<br>%{x}<br>value %{z:.6f}<extra></extra>",
    }
    return _figure(
        [heatmap],
        title=title,
        subtitle=subtitle,
        height=560,
        xaxis=_axis("dimension (column)", **_sparse_ticks(columns, column_numbers)),
        yaxis=_axis("position", autorange="reversed", **_sparse_ticks(rows, row_numbers)),
    )


def sinusoid_lines(
    smooth_positions: np.ndarray,
    smooth_values: np.ndarray,
    integer_positions: np.ndarray,
    integer_values: np.ndarray,
    *,
    labels: Sequence[str],
    title: str = "Value against position",
    subtitle: str = "",
) -> go.Figure:
    """One smooth curve per chosen dimension, with markers where the positions are integers."""
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
                    "hovertemplate": f"{label}<br>position %{{x}}<br>value %{{y:.6f}}"
                    "<extra></extra>",
                }
            )
    return _figure(
        traces,
        title=title,
        subtitle=subtitle,
        xaxis=_axis("position k"),
        yaxis=_axis("value", range=[-1.08, 1.08], zeroline=True),
    )


def dimension_lines(
    sines: np.ndarray,
    cosines: np.ndarray,
    *,
    positions: Sequence[int],
    sin_hover: Sequence[str],
    cos_hover: Sequence[str],
    title: str = "",
) -> go.Figure:
    """Each chosen position's encoding across the pairs: its sin columns (solid) and its cos
    columns (dotted) against the pair index i, whatever the layout puts them."""
    traces = []
    for j, position in enumerate(positions):
        colour = LINE_COLOURS[j % len(LINE_COLOURS)]
        for values, hover, kind in ((sines[j], sin_hover, "sin"), (cosines[j], cos_hover, "cos")):
            traces.append(
                {
                    "type": "scatter",
                    "x": np.arange(values.size),
                    "y": values,
                    "mode": "lines+markers" if values.size <= 32 else "lines",
                    "name": f"position {position:,}",
                    "legendgroup": str(position),
                    "showlegend": kind == "sin",
                    "line": {
                        "color": colour,
                        "width": 1.6,
                        "dash": "solid" if kind == "sin" else "dot",
                    },
                    "marker": {"size": 4},
                    "customdata": list(hover),
                    "hovertemplate": f"position {position:,}<br>%{{customdata}}<br>"
                    "value %{y:.6f}<extra></extra>",
                }
            )
    return _figure(
        traces,
        title=title or "Value against pair index: every position is its own wave",
        subtitle="solid: sin columns, dotted: cos columns",
        xaxis=_axis("pair index i (slower to the right)"),
        yaxis=_axis("value", range=[-1.08, 1.08]),
    )


def wavelength_chart(
    wavelengths: Mapping[str, np.ndarray],
    *,
    current: str,
    n_positions: int,
    base: float,
    d_model: int,
) -> go.Figure:
    """Wavelength against pair index on a log axis, with 2π, the longest wavelength and L marked."""
    traces = []
    for name, lam in wavelengths.items():
        is_current = name == current
        traces.append(
            {
                "type": "scatter",
                "x": np.arange(lam.size),
                "y": lam,
                "mode": "lines+markers" if lam.size <= 64 else "lines",
                "name": name + (" (current)" if is_current else ""),
                "line": {
                    "color": CONVENTION_COLOURS.get(name),
                    "width": 3 if is_current else 1.5,
                    "dash": "solid" if is_current else "dot",
                },
                "marker": {"size": 5},
                "hovertemplate": f"{name}<br>pair i=%{{x}}<br>λ=%{{y:.6g}} positions"
                "<extra></extra>",
            }
        )
    longest = 2 * np.pi * base ** (1 - 2 / d_model)
    marks = [  # value, label, colour, side, label above (bottom) or below (top) the line
        (2 * np.pi, "2π (fastest pair)", "#555", "left", "bottom"),
        (n_positions, f"L = {n_positions:,} positions", "#d62728", "left", "bottom"),
        (longest, f"longest: 2π·base^(1−2/d) = {longest:,.5g}", "#1f77b4", "right", "top"),
        (
            2 * np.pi * base,
            f"2π·base = {2 * np.pi * base:,.5g} (the paper's rounding)",
            "#888",
            "right",
            "bottom",
        ),
    ]
    shapes = [
        {
            "type": "line",
            "xref": "paper",
            "x0": 0,
            "x1": 1,
            "y0": y,
            "y1": y,
            "line": {"color": colour, "dash": "dash", "width": 1},
        }
        for y, _, colour, _, _ in marks
    ]
    # On a log axis, annotations are placed in log10 units (shapes are not).
    annotations = [
        {
            "x": 0 if side == "left" else 1,
            "xref": "paper",
            "xanchor": side,
            "y": np.log10(y),
            "yanchor": anchor,
            "text": text,
            "showarrow": False,
            "font": {"color": colour, "size": 11},
        }
        for y, text, colour, side, anchor in marks
    ]
    return _figure(
        traces,
        title="Wavelengths form a geometric progression (a straight line on a log axis)",
        xaxis=_axis("pair index i"),
        yaxis=_axis("wavelength λ_i = 2π / ω_i (positions)", type="log"),
        shapes=shapes,
        annotations=annotations,
    )


def similarity_heatmap(
    matrix: np.ndarray, *, positions: np.ndarray, kind: str, subtitle: str = ""
) -> go.Figure:
    """Similarity between positions; cosine on the fixed range [-1, 1]."""
    if kind == "cosine":
        zmin, zmax, scale = -1.0, 1.0, DIVERGING
    else:
        zmin, zmax, scale = float(matrix.min()), float(matrix.max()), "Viridis"
    heatmap = {  # numeric axes: the positions themselves, as a compact typed array
        "type": "heatmap",
        "z": matrix,
        "x": positions,
        "y": positions,
        "zmin": zmin,
        "zmax": zmax,
        "colorscale": scale,
        "colorbar": {"title": {"text": kind}, "thickness": 14},
        "hovertemplate": f"positions %{{y:,}} and %{{x:,}}<br>{kind} %{{z:.6f}}<extra></extra>",
    }
    ticks = {"showgrid": False, "constrain": "domain"}  # square cells without padding
    titles = {"cosine": "Cosine similarity", "dot": "Dot product", "distance": "Euclidean distance"}
    return _figure(
        [heatmap],
        title=f"{titles[kind]} between positions",
        subtitle=subtitle,
        height=620,
        xaxis=_axis("position", **ticks),
        yaxis=_axis("position", autorange="reversed", scaleanchor="x", **ticks),
    )


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
                "mode": "lines",
                "name": "closed form",
                "line": {"color": "#1f77b4", "width": 1.6},
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


def nearest_neighbour_chart(
    positions: np.ndarray, distances: np.ndarray, *, subtitle: str = ""
) -> go.Figure:
    """Distance from each position's encoding to its nearest other position's."""
    line = {
        "type": "scatter",
        "x": positions,
        "y": distances,
        "mode": "lines",
        "name": "nearest-neighbour distance",
        "line": {"color": "#9467bd", "width": 1.6},
        "hovertemplate": "position %{x:,}<br>nearest distance %{y:.6f}<extra></extra>",
    }
    return _figure(
        [line],
        title="Nearest-neighbour distance of every position",
        subtitle=subtitle,
        height=380,
        xaxis=_axis("position"),
        yaxis=_axis("distance to the nearest other position", rangemode="tozero"),
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


def vector_comparison(
    shifted: np.ndarray, rotated: np.ndarray, *, k: int, offset: float, max_columns: int = 32
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
            "name": f"PE({k} + {offset:g}) computed directly",
            "line": {"color": "#1f77b4", "width": 3},
            "hovertemplate": "column %{x}<br>%{y:.6f}<extra>PE(k + offset)</extra>",
        },
        {
            "type": "scatter",
            "x": columns,
            "y": rotated[:max_columns],
            "mode": "markers",
            "name": f"M({offset:g}) @ PE({k})",
            "marker": {"color": "#d62728", "size": 5},
            "hovertemplate": "column %{x}<br>%{y:.6f}<extra>M @ PE(k)</extra>",
        },
    ]
    return _figure(
        traces,
        title="Shift by the offset, or rotate: the same vector",
        subtitle="" if n_columns <= max_columns else f"first {max_columns} of {n_columns} columns",
        height=380,
        xaxis=_axis("dimension (column)"),
        yaxis=_axis("value", range=[-1.08, 1.08]),
    )


def unit_circles(
    points: np.ndarray, *, pairs: Sequence[int], frequencies: Sequence[float]
) -> go.Figure:
    """One unit circle per pair: the point (sin(k w_i), cos(k w_i)) for k = 0, 1, 2, ..."""
    n = len(pairs)
    gap = 0.03
    width = (1.0 - gap * (n - 1)) / n
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
                "mode": "lines+markers",
                "customdata": k,
                "showlegend": False,
                "marker": {
                    "color": k,
                    "colorscale": "Viridis",
                    "size": 6,
                    "showscale": j == n - 1,
                    "colorbar": {"title": {"text": "k"}, "thickness": 12},
                },
                "line": {"color": "rgba(120,120,120,0.35)", "width": 1},
                "hovertemplate": CIRCLE_HOVER,
            }
        )
        start = j * (width + gap)
        axis = {"range": [-1.15, 1.15], "showticklabels": False, "zeroline": True}
        layout[f"xaxis{suffix}"] = {**axis, "domain": [start, start + width], "anchor": y_axis}
        layout[f"yaxis{suffix}"] = {**axis, "anchor": x_axis, "scaleanchor": x_axis}
        annotations.append(
            {
                "text": f"pair i={i}: ω={w:.3g}, λ={2 * np.pi / w:.3g}",
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": start + width / 2,
                "y": 1.0,
                "yanchor": "bottom",
                "font": {"size": 12},
            }
        )
    layout["xaxis"]["title"] = {"text": "sin(k·ω)"}
    layout["yaxis"]["title"] = {"text": "cos(k·ω)"}
    return _figure(
        traces,
        title=f"Each pair is a point turning on the unit circle (k = 0 … {points.shape[0] - 1})",
        height=360,
        annotations=annotations,
        **layout,
    )


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
    return _figure(
        traces,
        title="Who dominates the sum: embedding or encoding?",
        height=380,
        xaxis=_axis("position in the sequence"),
        yaxis=_axis("Euclidean norm (mean over the batch, padding excluded)", rangemode="tozero"),
    )


def matrix_heatmap(
    values: np.ndarray,
    *,
    rows: Sequence[str],
    columns: Sequence[int],
    title: str,
    subtitle: str = "",
    symmetric_range: float | None = None,
    height: int = 360,
) -> go.Figure:
    """A plain matrix heatmap with a symmetric colour range (embeddings, sums, differences)."""
    limit = symmetric_range or float(np.max(np.abs(values), initial=1e-12))
    heatmap = {
        "type": "heatmap",
        "z": np.asarray(values, dtype=np.float32),
        "x": np.asarray(columns),
        "y": list(rows),
        "zmin": -limit,
        "zmax": limit,
        "colorscale": DIVERGING,
        "colorbar": {"thickness": 12},
        "hovertemplate": "%{y}<br>column %{x}<br>value %{z:.4f}<extra></extra>",
    }
    return _figure(
        [heatmap],
        title=title,
        subtitle=subtitle,
        height=height,
        xaxis={"title": {"text": "dimension (column)"}, "showgrid": False},
        yaxis={"autorange": "reversed", "showgrid": False},
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
            "line": {
                "color": CONVENTION_COLOURS.get(name),
                "width": 2 if name == "split" else 3,
                "dash": "dot" if name == "split" else "solid",
            },
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
