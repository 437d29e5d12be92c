"""How alike the encodings of two positions are: similarity against offset (one convention or
each of them) and the distance from each position to the next."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.base import (
    BLUE,
    DARK_GRAY,
    LINE_COLOURS,
    PURPLE,
    RED,
    _axis,
    _figure,
    convention_line,
    index_axis,
)
from dashboard.figures.linked import CLICKED_MARKER, CLICKED_VISIBLE_MARKER


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
                "line": {"width": 0.5, "color": BLUE},
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
                "line": {"width": 0.5, "color": BLUE},
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
                "line": {"color": BLUE, "width": 1.6},
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
        # Whole offsets only (at L = 3 the axis read 0.5 and 1.5, offsets no pair of positions
        # has).
        xaxis=index_axis("offset between positions", _largest_offset(offsets, checks) + 1),
        yaxis=_axis(names[kind]),
    )


def _largest_offset(offsets: np.ndarray, checks: Mapping) -> int:
    drawn = [np.max(offsets)] if np.size(offsets) else []
    drawn += [np.max(o) for o, _ in checks.values() if np.size(o)]
    return int(max(drawn, default=0))


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
                "marker": {"size": 4 if stored.size > 200 else 6, "color": PURPLE},
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
            "line": {"color": DARK_GRAY, "width": 1.5, "dash": "dot"},
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
                "line": {"color": BLUE, "width": 1.2, "dash": "dash"},
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
                "marker": {"color": RED, "size": 11, "symbol": "x"},
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
