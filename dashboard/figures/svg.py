"""A Plotly figure of the app as a small static SVG, for print (the Lesson's handouts).

A handout must print offline and stay small: the interactive figure needs plotly.js (about 4.6
MB inlined), and a static export needs a browser engine on the server. The app's charts use few
kinds of trace (lines and markers, bars, heatmaps) on linear, log or category axes, with
dashed lines, shaded regions and notes; this draws those from the figure's own specification,
every value from the figure, a heatmap as an embedded PNG of its cells. What it does not know
(another trace type) raises ``ValueError``, so a new chart in a handout fails a test, not a
print.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re

import numpy as np
import plotly.colors
import plotly.graph_objects as go
from PIL import Image

from dashboard.figures.base import implied_coordinates
from dashboard.formatting import nice_step

#: Type sizes (px at the SVG's own scale) and the colour of axes and text.
FONT = 13
SMALL = 11.5
INK = "#1f2933"
MUTED = "#6b7280"
GRID = "#e5e7eb"
_DASHES = {"dash": "7,4", "dot": "2,3", "dashdot": "7,3,2,3", "longdash": "12,4"}
_DASHES |= {"longdashdot": "12,3,2,3", "solid": ""}


def _decode(values) -> np.ndarray:
    """A trace's array as NumPy (Plotly's typed-array form or a list)."""
    if isinstance(values, dict) and "bdata" in values:
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        shape = values.get("shape")
        if shape:
            array = array.reshape([int(s) for s in str(shape).split(",")])
        return array
    return np.asarray(values if values is not None else [])


def _coordinates(trace: dict, key: str) -> np.ndarray:
    """A scatter trace's ``key`` ("x" or "y") values: its array, or, without one, what Plotly
    draws instead: ``x0 + i * dx`` for each point of the other coordinate (0 and 1 by
    default)."""
    values = trace.get(key)
    if values is not None:
        return _decode(values)
    other = _decode(trace.get("y" if key == "x" else "x"))
    return implied_coordinates(len(other), trace.get(f"{key}0"), trace.get(f"d{key}"))


def _text(value: str) -> list[str]:
    """A Plotly text as lines of plain text (tags dropped, <br> a new line)."""
    parts = re.split(r"<br\s*/?>", str(value or ""))
    return [html.unescape(re.sub(r"<[^>]+>", "", part)) for part in parts]


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _number(value: float) -> str:
    if value == 0:
        return "0"
    size = abs(value)
    if size >= 1e6 or size < 1e-3:
        mantissa, exponent = f"{value:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}".replace("-", "−")
    if float(value).is_integer():
        return f"{value:,.0f}".replace("-", "−")
    return f"{value:.3g}".replace("-", "−")


class _Axis:
    """One axis of a panel: its scale from data values to pixels, and its ticks."""

    def __init__(self, spec: dict, values: list[np.ndarray], categories: list | None) -> None:
        self.spec = spec
        self.log = spec.get("type") == "log"
        self.categories = categories
        self.reversed = spec.get("autorange") == "reversed"
        if categories is not None:
            self.low, self.high = -0.5, len(categories) - 0.5
        elif spec.get("range") is not None:  # a log axis's range is in decades already
            self.low, self.high = (float(v) for v in spec["range"])
        else:
            finite = np.concatenate([np.ravel(v).astype(float) for v in values] or [np.zeros(1)])
            finite = finite[np.isfinite(finite)]
            if self.log:
                finite = finite[finite > 0]
            if finite.size == 0:
                finite = np.array([1.0 if self.log else 0.0])
            low, high = float(finite.min()), float(finite.max())
            if self.log:
                low, high = math.log10(low), math.log10(high)
                pad = 0.05 * (high - low or 1.0)
            else:
                if spec.get("rangemode") == "tozero":
                    low = min(low, 0.0)
                pad = 0.05 * (high - low or abs(high) or 1.0)
            self.low, self.high = low - pad, high + pad
        self.start = self.end = 0.0

    def place(self, start: float, end: float) -> None:
        self.start, self.end = (end, start) if self.reversed else (start, end)

    def __call__(self, value) -> np.ndarray:
        value = np.asarray(value, dtype=float)
        if self.log:
            with np.errstate(divide="ignore", invalid="ignore"):
                value = np.log10(value)
        fraction = (value - self.low) / (self.high - self.low)
        return self.start + fraction * (self.end - self.start)

    def ticks(self) -> list[tuple[float, str]]:
        if self.categories is not None:
            shown = self.spec.get("ticktext") or self.categories
            return list(zip(range(len(self.categories)), shown, strict=False))
        if self.spec.get("tickvals") is not None:
            return list(zip(self.spec["tickvals"], self.spec.get("ticktext") or [], strict=False))
        if self.log:
            return [
                (10.0**e, _number(10.0**e))
                for e in range(math.ceil(self.low), math.floor(self.high) + 1)
            ]
        step = self.spec.get("dtick") or nice_step(self.high - self.low, 6)
        first = math.ceil(self.low / step) * step
        count = int((self.high - first) / step) + 1
        return [(first + j * step, _number(first + j * step)) for j in range(max(count, 0))]


def _colour_at(scale, fraction: np.ndarray) -> np.ndarray:
    """RGB of ``scale`` (a Plotly scale) at each fraction in [0, 1], as uint8."""
    if isinstance(scale, str):
        scale = plotly.colors.get_colorscale(scale)
    stops = np.array([float(s) for s, _ in scale])
    colours = np.array(
        [
            plotly.colors.unlabel_rgb(plotly.colors.convert_colors_to_same_type(c, "rgb")[0][0])
            for _, c in scale
        ],
        dtype=float,
    )
    fraction = np.clip(np.nan_to_num(fraction, nan=0.5), 0.0, 1.0)
    channels = [np.interp(fraction, stops, colours[:, j]) for j in range(3)]
    return np.stack(channels, axis=-1).round().astype(np.uint8)


def _png(rgb: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buffer, format="PNG", optimize=True)
    return base64.b64encode(buffer.getvalue()).decode()


def _axis_names(trace: dict) -> tuple[str, str]:
    return trace.get("xaxis", "x"), trace.get("yaxis", "y")


def _layout_key(name: str) -> str:
    """``x2`` → ``xaxis2``."""
    return f"{name[0]}axis{name[1:]}"


def figure_svg(fig: go.Figure, *, width: int = 720) -> str:
    """``fig`` as an ``<svg>`` element ``width`` pixels wide (its own height), for print."""
    spec = fig.to_plotly_json()
    layout = spec["layout"]
    traces = spec["data"]
    for trace in traces:
        if trace.get("type", "scatter") not in ("scatter", "bar", "heatmap"):
            raise ValueError(
                f"figure_svg draws scatter, bar and heatmap traces, not {trace['type']}"
            )
    height = int(layout.get("height") or 450)
    margin = {"l": 80, "r": 30, "t": 80, "b": 75, **(layout.get("margin") or {})}
    legend = [t for t in traces if t.get("name") and t.get("showlegend", True) is not False]
    legend_rows = len(legend)
    margin["b"] = max(margin["b"], 60) + (18 * legend_rows if legend_rows else 0)
    height += 18 * legend_rows
    has_bar = any(t.get("type") == "heatmap" and t.get("showscale", True) for t in traces)
    margin["r"] = max(margin["r"], 80 if has_bar else 20)
    left, top = margin["l"], margin["t"]
    plot_width = width - margin["l"] - margin["r"]
    plot_height = height - margin["t"] - margin["b"]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'font-family="Helvetica, Arial, sans-serif" font-size="{FONT}" role="img">'
    ]
    title = _text((layout.get("title") or {}).get("text", ""))
    if title and title[0]:
        out.append(
            f'<text x="4" y="22" font-size="16" font-weight="600" fill="{INK}">'
            f"{_esc(title[0])}</text>"
        )
        for j, line in enumerate(title[1:]):
            out.append(
                f'<text x="4" y="{42 + 16 * j}" font-size="{SMALL}" fill="{MUTED}">'
                f"{_esc(line)}</text>"
            )
    # The axes each trace uses, with the values drawn on them.
    axes_values: dict[str, list[np.ndarray]] = {}
    categories: dict[str, list] = {}
    for trace in traces:
        x_name, y_name = _axis_names(trace)
        for name, key in ((x_name, "x"), (y_name, "y")):
            values = trace.get(key)
            if trace.get("type") == "heatmap" and values is None:
                size = _decode(trace["z"]).shape[1 if key == "x" else 0]
                values = np.arange(size)
            elif values is None and trace.get("type", "scatter") == "scatter":
                values = _coordinates(trace, key)
            array = _decode(values) if not isinstance(values, list) else values
            if isinstance(array, list) and array and isinstance(array[0], str):
                categories[name] = array
            else:
                axes_values.setdefault(name, []).append(np.asarray(array, dtype=float))
    axes: dict[str, _Axis] = {}
    for name in sorted(set(axes_values) | set(categories)):
        axis_spec = dict(layout.get(_layout_key(name)) or {})
        axes[name] = _Axis(axis_spec, axes_values.get(name, []), categories.get(name))
    for name, axis in axes.items():
        domain = axis.spec.get("domain") or [0.0, 1.0]
        if name.startswith("x"):
            axis.place(left + domain[0] * plot_width, left + domain[1] * plot_width)
        else:
            axis.place(top + (1 - domain[0]) * plot_height, top + (1 - domain[1]) * plot_height)
    # Shaded regions below the data.
    for shape in layout.get("shapes") or ():
        out.append(_shape(shape, axes, left, top, plot_width, plot_height, below=True))
    # Frames, grid and ticks of each panel.
    for name, axis in axes.items():
        other = axes.get(axis.spec.get("anchor") or ("y" if name.startswith("x") else "x"))
        out += _axis_svg(name, axis, other, layout)
    for trace in traces:
        x_axis, y_axis = (axes[n] for n in _axis_names(trace))
        out += _trace_svg(trace, x_axis, y_axis)
        if trace.get("type") == "heatmap" and trace.get("showscale", True):
            out += _colour_bar(trace, y_axis, left + plot_width + 14)
    for shape in layout.get("shapes") or ():
        out.append(_shape(shape, axes, left, top, plot_width, plot_height, below=False))
    for annotation in layout.get("annotations") or ():
        out.append(_annotation(annotation, axes, left, top, plot_width, plot_height))
    y = height - 18 * legend_rows - 4
    for j, trace in enumerate(legend):
        out.append(_legend_entry(trace, 8, y + 18 * j))
    out.append("</svg>")
    return "".join(part for part in out if part)


def _axis_svg(name: str, axis: _Axis, other: _Axis | None, layout: dict) -> list[str]:
    out = []
    horizontal = name.startswith("x")
    low, high = sorted((axis.start, axis.end))
    across = sorted((other.start, other.end)) if other else (0.0, 0.0)
    if axis.spec.get("showgrid", True) and axis.categories is None:
        for value, _ in axis.ticks():
            p = float(axis(value))
            if low - 0.5 <= p <= high + 0.5:
                if horizontal:
                    out.append(
                        f'<line x1="{p:.1f}" x2="{p:.1f}" y1="{across[0]:.1f}" '
                        f'y2="{across[1]:.1f}" stroke="{GRID}"/>'
                    )
                else:
                    out.append(
                        f'<line y1="{p:.1f}" y2="{p:.1f}" x1="{across[0]:.1f}" '
                        f'x2="{across[1]:.1f}" stroke="{GRID}"/>'
                    )
    if horizontal:
        out.append(
            f'<line x1="{low:.1f}" x2="{high:.1f}" y1="{across[1]:.1f}" '
            f'y2="{across[1]:.1f}" stroke="{MUTED}"/>'
        )
    else:
        out.append(
            f'<line y1="{low:.1f}" y2="{high:.1f}" x1="{across[0]:.1f}" '
            f'x2="{across[0]:.1f}" stroke="{MUTED}"/>'
        )
    if axis.spec.get("showticklabels", True):
        for value, label in axis.ticks():
            p = float(axis(value))
            if not low - 0.5 <= p <= high + 0.5:
                continue
            lines = _text(label)
            if horizontal:
                out.append(
                    f'<text x="{p:.1f}" y="{across[1] + 16:.1f}" text-anchor="middle" '
                    f'font-size="{SMALL}" fill="{MUTED}">{_esc(lines[0])}</text>'
                )
            else:
                for j, line in enumerate(lines):
                    dy = (j - (len(lines) - 1) / 2) * 13 + 4
                    out.append(
                        f'<text x="{across[0] - 6:.1f}" y="{p + dy:.1f}" text-anchor="end" '
                        f'font-size="{SMALL}" fill="{MUTED}">{_esc(line)}</text>'
                    )
    title = _text(((axis.spec.get("title") or {}).get("text")) or "")
    if title and title[0]:
        if horizontal:
            out.append(
                f'<text x="{(low + high) / 2:.1f}" y="{across[1] + 36:.1f}" '
                f'text-anchor="middle" fill="{INK}">{_esc(" ".join(title))}</text>'
            )
        else:
            x = across[0] - 58
            middle = (low + high) / 2
            for j, line in enumerate(title):
                out.append(
                    f'<text transform="translate({x + 15 * j:.1f},{middle:.1f}) '
                    f'rotate(-90)" text-anchor="middle" fill="{INK}">{_esc(line)}</text>'
                )
    return out


def _path(xs: np.ndarray, ys: np.ndarray) -> str:
    """A polyline's path, broken where a value is missing."""
    parts, pen = [], False
    for x, y in zip(xs, ys, strict=True):
        if not (np.isfinite(x) and np.isfinite(y)):
            pen = False
            continue
        parts.append(f"{'L' if pen else 'M'}{x:.1f},{y:.1f}")
        pen = True
    return "".join(parts)


def _trace_svg(trace: dict, x_axis: _Axis, y_axis: _Axis) -> list[str]:
    kind = trace.get("type", "scatter")
    if kind == "heatmap":
        z = _decode(trace["z"]).astype(float)
        low, high = float(trace.get("zmin", np.nanmin(z))), float(trace.get("zmax", np.nanmax(z)))
        rgb = _colour_at(trace.get("colorscale") or "RdBu_r", (z - low) / ((high - low) or 1.0))
        x0, x1 = sorted((float(x_axis(-0.5)), float(x_axis(z.shape[1] - 0.5))))
        y0, y1 = sorted((float(y_axis(-0.5)), float(y_axis(z.shape[0] - 0.5))))
        flip = y_axis(0) > y_axis(1)  # row 0 at the bottom unless the axis is reversed
        image = rgb[::-1] if flip else rgb
        return [
            f'<image x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
            f'preserveAspectRatio="none" style="image-rendering:pixelated" '
            f'href="data:image/png;base64,{_png(image)}"/>'
        ]
    if kind == "bar":
        horizontal = trace.get("orientation") == "h"
        values = _decode(trace["x" if horizontal else "y"]).astype(float)
        colours = (trace.get("marker") or {}).get("color")
        texts = trace.get("text") or [None] * len(values)
        out = []
        for j, value in enumerate(values):
            colour = colours[j] if isinstance(colours, list) else colours or "#1f77b4"
            if horizontal:
                y = float(y_axis(j))
                x0, x1 = float(x_axis(0)), float(x_axis(value))
                out.append(
                    f'<rect x="{min(x0, x1):.1f}" y="{y - 12:.1f}" width="{abs(x1 - x0):.1f}" '
                    f'height="24" fill="{colour}"/>'
                )
                if texts[j]:
                    out.append(
                        f'<text x="{max(x0, x1) + 5:.1f}" y="{y + 4:.1f}" fill="{INK}">'
                        f"{_esc(str(texts[j]))}</text>"
                    )
            else:
                x = float(x_axis(j if x_axis.categories is not None else _decode(trace["x"])[j]))
                y0, y1 = float(y_axis(0)), float(y_axis(value))
                out.append(
                    f'<rect x="{x - 6:.1f}" y="{min(y0, y1):.1f}" width="12" '
                    f'height="{abs(y1 - y0):.1f}" fill="{colour}"/>'
                )
        return out
    xs = np.asarray(x_axis(_coordinates(trace, "x").astype(float)), dtype=float)
    ys = np.asarray(y_axis(_coordinates(trace, "y").astype(float)), dtype=float)
    mode = trace.get("mode", "lines")
    line = trace.get("line") or {}
    marker = trace.get("marker") or {}
    out = []
    if "lines" in mode:
        dash = _DASHES.get(line.get("dash", "solid"), "")
        out.append(
            f'<path d="{_path(xs, ys)}" fill="none" stroke="{line.get("color", INK)}" '
            f'stroke-width="{line.get("width", 2)}"'
            + (f' stroke-dasharray="{dash}"' if dash else "")
            + "/>"
        )
    if "markers" in mode:
        colour = marker.get("color", line.get("color", INK))
        colour = colour if isinstance(colour, str) else INK
        size = float(marker.get("size", 6)) / 2
        hollow = "open" in str(marker.get("symbol", ""))
        for x, y in zip(xs, ys, strict=True):
            if np.isfinite(x) and np.isfinite(y):
                fill = "none" if hollow else colour
                out.append(
                    f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}" fill="{fill}" '
                    f'stroke="{colour}" stroke-width="{2 if hollow else 0}"/>'
                )
    return out


def _colour_bar(trace: dict, y_axis: _Axis, x: float) -> list[str]:
    z = _decode(trace["z"]).astype(float)
    low, high = float(trace.get("zmin", np.nanmin(z))), float(trace.get("zmax", np.nanmax(z)))
    top, bottom = sorted((y_axis.start, y_axis.end))
    levels = np.linspace(1, 0, 64)[:, None]
    rgb = _colour_at(trace.get("colorscale") or "RdBu_r", np.repeat(levels, 1, axis=1))
    out = [
        f'<image x="{x:.1f}" y="{top:.1f}" width="12" height="{bottom - top:.1f}" '
        f'preserveAspectRatio="none" href="data:image/png;base64,{_png(rgb)}"/>'
    ]
    for fraction in (0.0, 0.5, 1.0):
        value = low + fraction * (high - low)
        y = bottom - fraction * (bottom - top)
        out.append(
            f'<text x="{x + 16:.1f}" y="{y + 4:.1f}" font-size="{SMALL}" fill="{MUTED}">'
            f"{_esc(_number(round(value, 2)))}</text>"
        )
    return out


def _reference(ref: str, value, axes: dict, start: float, size: float, vertical: bool):
    """A pixel from a value and its reference: an axis (``x2``), its domain or the paper."""
    if ref == "paper":
        return start + (1 - value) * size if vertical else start + value * size
    name = ref.split()[0]
    axis = axes.get(name)
    if axis is None:
        return None
    if ref.endswith("domain"):
        low, high = sorted((axis.start, axis.end))
        return high - value * (high - low) if vertical else low + value * (high - low)
    return float(axis(value))


def _shape(shape, axes, left, top, width, height, *, below: bool) -> str:
    if (shape.get("layer") == "below") != below:
        return ""
    x0 = _reference(shape.get("xref", "x"), shape["x0"], axes, left, width, False)
    x1 = _reference(shape.get("xref", "x"), shape["x1"], axes, left, width, False)
    y0 = _reference(shape.get("yref", "y"), shape["y0"], axes, top, height, True)
    y1 = _reference(shape.get("yref", "y"), shape["y1"], axes, top, height, True)
    if None in (x0, x1, y0, y1):
        return ""
    line = shape.get("line") or {}
    colour = line.get("color", MUTED)
    if shape.get("type") == "rect":
        return (
            f'<rect x="{min(x0, x1):.1f}" y="{min(y0, y1):.1f}" width="{abs(x1 - x0):.1f}" '
            f'height="{abs(y1 - y0):.1f}" fill="{shape.get("fillcolor", GRID)}" '
            f'fill-opacity="{shape.get("opacity", 1)}"/>'
        )
    dash = _DASHES.get(line.get("dash", "solid"), "")
    return (
        f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{y0:.1f}" y2="{y1:.1f}" stroke="{colour}" '
        f'stroke-width="{line.get("width", 1.5)}"'
        + (f' stroke-dasharray="{dash}"' if dash else "")
        + "/>"
    )


def _annotation(annotation, axes, left, top, width, height) -> str:
    x = _reference(annotation.get("xref", "x"), annotation.get("x", 0), axes, left, width, False)
    y = _reference(annotation.get("yref", "y"), annotation.get("y", 0), axes, top, height, True)
    if x is None or y is None:
        return ""
    x += annotation.get("xshift", 0)
    y -= annotation.get("yshift", 0)
    anchor = {"left": "start", "right": "end"}.get(annotation.get("xanchor"), "middle")
    lines = _text(annotation.get("text", ""))
    first = {"top": 13, "bottom": -4 - 14 * (len(lines) - 1)}.get(annotation.get("yanchor"), 4)
    return "".join(
        f'<text x="{x:.1f}" y="{y + first + 14 * j:.1f}" text-anchor="{anchor}" '
        f'font-size="{SMALL}" fill="{INK}">{_esc(line)}</text>'
        for j, line in enumerate(lines)
    )


def _legend_entry(trace: dict, x: float, y: float) -> str:
    line = trace.get("line") or {}
    marker = trace.get("marker") or {}
    colour = line.get("color") or (
        marker.get("color") if isinstance(marker.get("color"), str) else INK
    )
    dash = _DASHES.get(line.get("dash", "solid"), "")
    mode = trace.get("mode", "lines")
    sample = (
        f'<line x1="{x}" x2="{x + 26}" y1="{y - 4}" y2="{y - 4}" stroke="{colour}" '
        f'stroke-width="{min(line.get("width", 2), 4)}"'
        + (f' stroke-dasharray="{dash}"' if dash else "")
        + "/>"
        if "lines" in mode
        else f'<circle cx="{x + 13}" cy="{y - 4}" r="4" fill="{colour}"/>'
    )
    return sample + (
        f'<text x="{x + 34}" y="{y}" font-size="{SMALL}" fill="{INK}">'
        f"{_esc(' '.join(_text(trace.get('name', ''))))}</text>"
    )
