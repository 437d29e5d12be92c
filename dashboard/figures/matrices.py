"""Matrices as heatmaps: one matrix with a symmetric colour range, or several side by side on
one row axis and one colour scale."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.base import DIVERGING, _figure, _panel_domains, _panel_heading, index_axis


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
    row_labels: Sequence[str] | None = None,
    column_labels: Sequence[str] | None = None,
) -> go.Figure:
    """Matrices side by side in one chart, to compare them cell for cell: row r of each is
    drawn at r on one shared row axis, zooming one panel zooms them all, and one colour scale
    over [-``symmetric_range``, ``symmetric_range``] has one colour bar. Each panel is named
    above it by its key in ``panels`` (at least one). ``row_labels`` and ``column_labels``
    (words, say) mark every row and column instead of their indices."""
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
            **_labelled(column_labels),
        )
        # Every other name a line higher: on a phone a panel is narrower than a name. The size
        # is fixed, so that the line stays a line in presentation mode's larger type too. One
        # panel alone is named by the chart's title.
        if n > 1:
            annotations.append(
                _panel_heading(
                    f"<b>{name}</b>",
                    domains[j],
                    font={"size": 12},
                    yshift=PANEL_NAME_LINE * (j % 2),
                )
            )
    n_rows = max(np.shape(panels[name])[0] for name in names)
    return _figure(
        traces,
        title=title,
        height=height,
        annotations=annotations,
        margin={"t": 95 if n > 1 else 85},
        yaxis=index_axis(
            row_title, n_rows, autorange="reversed", showgrid=False, **_labelled(row_labels)
        ),
        **layout,
    )


def _labelled(labels: Sequence[str] | None) -> dict:
    """An index axis's options that write ``labels`` at 0, 1, 2... instead of the numbers."""
    if labels is None:
        return {}
    return {"tickmode": "array", "tickvals": list(range(len(labels))), "ticktext": list(labels)}
