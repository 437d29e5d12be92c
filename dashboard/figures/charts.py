"""Plain charts any view can use: named lines against a common x, bars, grouped bars by column,
and the norms of the embedding view."""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Mapping

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.base import (
    BLUE,
    CONVENTION_DASHES,
    DARK_GRAY,
    GRAY,
    GREEN,
    LINE_COLOURS,
    MARGIN_BOTTOM,
    RED,
    _axis,
    _figure,
    index_axis,
)


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
    marks: Mapping[str, float] | None = None,
    overlapping: bool = False,
    points: Mapping[str, tuple[float, float]] | None = None,
) -> go.Figure:
    """A few named lines against a common x (one colour each, in order); ``steps``: each
    value holds until the next x (integer-valued things such as buckets and ids); ``marks``:
    a dashed vertical line at each x, named at its top right (a length, a boundary);
    ``overlapping``: lines that may lie on top of one another, each narrower than the one
    before it and dashed its own way, so that every one stays visible where they coincide;
    ``points``: a marked point at each (x, y), named in the legend (the place a line says
    something). A single x draws each line as a point (a line of one point is not drawn)."""
    mode = "lines+markers" if len(x) == 1 else "lines"
    traces = [
        {
            "type": "scatter",
            "x": x,
            "y": values,
            "mode": mode,
            "name": name,
            "line": {
                "color": LINE_COLOURS[j % len(LINE_COLOURS)],
                "width": max(10 - 4 * j, 3) if overlapping else 2,
                **({"dash": CONVENTION_DASHES[j % len(CONVENTION_DASHES)]} if overlapping else {}),
                **({"shape": "hv"} if steps else {}),
            },
            "hovertemplate": f"{name}<br>%{{x:,.6g}}: %{{y:.6g}}<extra></extra>",
        }
        for j, (name, values) in enumerate(lines.items())
    ]
    traces += [
        {
            "type": "scatter",
            "x": [x_point],
            "y": [y_point],
            "mode": "markers",
            "name": name,
            "marker": {
                "color": "black",
                "size": 13,
                "symbol": "diamond-open",
                "line": {"width": 3},
            },
            "hovertemplate": f"{name}<extra></extra>",
        }
        for name, (x_point, y_point) in (points or {}).items()
    ]
    return _figure(
        traces,
        title=title,
        subtitle=subtitle,
        height=height,
        xaxis=_axis(x_title, **({"type": "log"} if log_x else {})),
        yaxis=_axis(y_title, **({"type": "log", "exponentformat": "power"} if log_y else {})),
        **_vertical_marks(marks or {}),
    )


def _vertical_marks(marks: Mapping[str, float]) -> dict:
    """The layout's shapes and annotations of :func:`curves`' ``marks`` (none: nothing)."""
    if not marks:
        return {}
    return {
        "shapes": [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x_mark,
                "x1": x_mark,
                "y0": 0,
                "y1": 1,
                "line": {"dash": "dash", "width": 2, "color": "grey"},
            }
            for x_mark in marks.values()
        ],
        "annotations": [
            {
                "text": name,
                "x": x_mark,
                "xref": "x",
                # Inside the plot, right of its line: above it the name would meet the
                # subtitle once presentation mode enlarges the type.
                "y": 1,
                "yref": "paper",
                "yanchor": "top",
                "xanchor": "left",
                "xshift": 4,
                "showarrow": False,
            }
            for name, x_mark in marks.items()
        ],
    }


def labelled_bars(
    values: Mapping[str, float],
    *,
    title: str,
    x_title: str,
    subtitle: str = "",
    text_format: str = "{:.3g}",
) -> go.Figure:
    """One horizontal bar per named value, in order from the top, the value written at its
    end (``text_format``); ``x_title`` names the values' axis."""
    names = list(values)
    largest = max((values[name] for name in names), default=0.0)
    trace = {
        "type": "bar",
        "orientation": "h",
        "y": names,
        "x": [values[name] for name in names],
        "text": [text_format.format(values[name]) for name in names],
        "textposition": "outside",
        "cliponaxis": False,
        "marker": {"color": [LINE_COLOURS[j % len(LINE_COLOURS)] for j in range(len(names))]},
        "hovertemplate": "%{y}: %{text}<extra></extra>",
    }
    return _figure(
        [trace],
        title=title,
        subtitle=subtitle,
        height=140 + 70 * len(names),
        # Room at the right for the longest bar's value.
        xaxis=_axis(x_title, range=[0, 1.2 * largest if largest > 0 else 1]),
        # Names on short lines across, beside their bars: they fit a phone's width too.
        yaxis={
            "type": "category",
            "autorange": "reversed",
            "automargin": True,
            "tickmode": "array",
            "tickvals": names,
            "ticktext": [
                "<br>".join(textwrap.wrap(name, 12, break_long_words=False)) for name in names
            ],
        },
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


def panels_past_a_boundary(
    x: np.ndarray,
    panels: Mapping[str, np.ndarray],
    *,
    boundary: float,
    notes: Mapping[str, str],
    title: str,
    x_title: str,
    subtitle: str = "",
    height: int = 620,
    presence: Collection[str] = (),
    mark: tuple[float, str] | None = None,
) -> go.Figure:
    """Panels one above the other on a shared x, each with its own y axis (one quantity per
    axis, titled by its key in ``panels``): each line solid before ``boundary`` and dashed grey
    from it on, the region past it shaded, and each panel's ``notes`` entry written above it,
    from the boundary on. A panel named in ``presence`` shows where its values exist (1) and
    where they do not (NaN), with no scale. ``mark`` (x, name): a dotted line through every
    panel at x, named under the last."""
    names = list(panels)
    n = len(names)
    gap = 0.09  # room above each panel for its note
    size = (1.0 - gap * (n - 1)) / n
    traces, layout, annotations, shapes = [], {}, [], []
    before = x < boundary
    for j, name in enumerate(names):
        suffix = "" if j == 0 else str(j + 1)
        top = 1.0 - j * (size + gap)
        values = np.asarray(panels[name], dtype=float)
        colour = LINE_COLOURS[j % len(LINE_COLOURS)]
        for part, style, shown in (
            (before, {"color": colour, "width": 2.5}, "in training"),
            (~before, {"color": GRAY, "width": 2, "dash": "dash"}, "past it"),
        ):
            traces.append(
                {
                    "type": "scatter",
                    "x": x[part],
                    "y": values[part],
                    "mode": "lines",
                    "line": style,
                    "xaxis": f"x{suffix}",
                    "yaxis": f"y{suffix}",
                    "showlegend": False,
                    "hovertemplate": f"{name} ({shown})<br>%{{x:,}}: %{{y:.4g}}<extra></extra>",
                }
            )
        layout[f"yaxis{suffix}"] = {
            "domain": [max(0.0, round(top - size, 9)), min(1.0, round(top, 9))],
            "anchor": f"x{suffix}",
            "title": {"text": name},
            "automargin": True,
            **({"range": [0, 2], "showticklabels": False} if name in presence else {}),
        }
        layout[f"xaxis{suffix}"] = {
            "anchor": f"y{suffix}",
            "range": [float(x[0]), float(x[-1])],
            **({"matches": "x"} if j else {}),
            **({"showticklabels": True, "title": {"text": x_title}} if j == n - 1 else {}),
            **({"showticklabels": False} if j < n - 1 else {}),
        }
        shapes.append(
            {
                "type": "rect",
                "xref": f"x{suffix}",
                "yref": f"y{suffix} domain",
                "x0": boundary,
                "x1": float(x[-1]),
                "y0": 0,
                "y1": 1,
                "fillcolor": GRAY,
                "opacity": 0.12,
                "line": {"width": 0},
                "layer": "below",
            }
        )
        if mark is not None:
            shapes.append(
                {
                    "type": "line",
                    "xref": f"x{suffix}",
                    "yref": f"y{suffix} domain",
                    "x0": mark[0],
                    "x1": mark[0],
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": DARK_GRAY, "width": 1.5, "dash": "dot"},
                }
            )
        if notes.get(name):
            annotations.append(
                {
                    "text": notes[name],
                    "xref": f"x{suffix}",
                    "yref": f"y{suffix} domain",
                    "x": boundary,
                    "y": 1.0,
                    "xanchor": "left",
                    "yanchor": "bottom",
                    "xshift": 4,
                    "align": "left",
                    "showarrow": False,
                }
            )
    if mark is not None:  # its name inside the last panel, at the bottom
        annotations.append(
            {
                "text": mark[1],
                "xref": f"x{'' if n == 1 else n}",
                "yref": f"y{'' if n == 1 else n} domain",
                "x": mark[0],
                "y": 0.02,
                "xanchor": "left",
                "yanchor": "bottom",
                "xshift": 4,
                "showarrow": False,
            }
        )
    # Above the first panel, left of the line: its name.
    annotations.append(
        {
            "text": f"training length {boundary:,g}",
            "xref": "x",
            "yref": "y domain",
            "x": boundary,
            "y": 1.0,
            "xanchor": "right",
            "yanchor": "bottom",
            "xshift": -4,
            "showarrow": False,
        }
    )
    return _figure(
        traces,
        title=title,
        subtitle=subtitle,
        height=height,
        margin={"t": 110 if subtitle else 80, "b": MARGIN_BOTTOM},
        shapes=shapes,
        annotations=annotations,
        **layout,
    )
