"""Plain charts any view can use: named lines against a common x, bars, grouped bars by column,
and the norms of the embedding view."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.base import BLUE, GREEN, LINE_COLOURS, RED, _axis, _figure, index_axis


def norms_chart(norms: Mapping[str, np.ndarray]) -> go.Figure:
    """Per-position norms of the embedding, the encoding and their sum."""
    colours = (GREEN, BLUE, RED)
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
