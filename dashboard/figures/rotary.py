"""Rotary pairs: the wavelength of each before and after scaling (coloured by band), and by the
position axis that drives it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.base import (
    BLUE,
    GRAY,
    LEGEND_WIDTH,
    LINE_COLOURS,
    ORANGE,
    RED,
    SLATE,
    _axis,
    _figure,
    index_axis,
)
from dashboard.figures.linked import CLICKED_MARKER, CLICKED_VISIBLE_MARKER

#: Markers a series of many points draws at most (Plotly's ``marker.maxdisplayed``).
MARKERS_DRAWN = 512


#: Colour of each band of rotary pairs (pe_core.RotaryEncoding.band).
BAND_COLOURS = {
    "unchanged": BLUE,
    "ramp": ORANGE,
    "scaled": RED,
    "not rotated": GRAY,
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
                "line": {"color": SLATE, "width": 1.5, "dash": dash},
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
                "font": {"size": 11, "color": SLATE},
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


def pairs_by_axis(
    wavelengths: np.ndarray,
    axes: np.ndarray,
    axis_names: Sequence[str],
    *,
    title: str,
    subtitle: str = "",
    legend_width: float = LEGEND_WIDTH,
) -> go.Figure:
    """The wavelength of each rotary pair, coloured by the position axis that drives it (the
    legend laid out for a plot ``legend_width`` px wide: see ``base._figure``)."""
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
        legend_width=legend_width,
    )


def layer_strip(labels: Sequence[str], hover: Sequence[str], title: str) -> go.Figure:
    """One cell per decoder layer, coloured by its label (a layer type, or "no RoPE" in
    grey), with ``hover`` words per layer: which layers rotate, and with which encoding."""
    kinds = list(dict.fromkeys(labels))
    others = iter(colour for colour in LINE_COLOURS if colour != GRAY)
    colours = {kind: GRAY if kind == "no RoPE" else next(others, SLATE) for kind in kinds}
    layers = np.arange(len(labels))
    traces = []
    for kind in kinds:
        chosen = np.flatnonzero(np.asarray(labels) == kind)
        traces.append(
            {
                "type": "bar",
                "x": layers[chosen],
                "y": np.ones(chosen.size),
                # One layer wide: Plotly would size each trace's bars by its own spacing.
                "width": 0.9,
                "name": kind,
                "marker": {"color": colours[kind], "line": {"width": 0}},
                "hovertext": [hover[i] for i in chosen],
                "hovertemplate": "%{hovertext}<extra></extra>",
            }
        )
    return _figure(
        traces,
        title=title,
        height=230,
        barmode="overlay",
        xaxis=index_axis("layer", len(labels)),
        yaxis={"visible": False, "range": [0, 1]},
        margin={"t": 50},
    )
