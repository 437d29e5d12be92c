"""Text alternatives: what a chart shows, in words and numbers, from the figure's own data, for
a reader who cannot see it."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.base import HOVER_ONLY, implied_coordinates
from dashboard.formatting import format_number

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
    if x is None or x.size != y.size:  # where Plotly draws a trace without x
        x = implied_coordinates(y.size, getattr(trace, "x0", None), getattr(trace, "dx", None))
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
