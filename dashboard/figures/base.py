"""What every chart of the app shares: the palette, the chart frame (title, subtitle, legend,
margins) and its axes.

Each figure is built in one call from plain dicts (traces and layout): Plotly validates the
whole figure once, about ten times faster than adding traces and updating axes one by one.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.colors
import plotly.graph_objects as go

from dashboard.formatting import nice_step
from pe_core import CONVENTIONS

#: Diverging scale for values in [-1, 1]: blue negative, white 0, red positive.
DIVERGING = "RdBu_r"
#: The same scale for the dark theme: 0 is a dark gray near the page's background and the
#: colours brighten with the size of the value, light blue at -1 and light red at +1, so the
#: largest values stand out on a dark page as the deepest colours do on white.
DIVERGING_DARK = [
    [0.0, "rgb(163, 206, 255)"],
    [0.25, "rgb(58, 122, 196)"],
    [0.5, "rgb(38, 42, 52)"],
    [0.75, "rgb(196, 66, 58)"],
    [1.0, "rgb(255, 184, 166)"],
]
#: The named colours of the charts: Plotly's and matplotlib's category colours (D3's
#: ``category10``, two of ``category20b``), and the grays of reference lines and text.
BLUE = "#1f77b4"
ORANGE = "#ff7f0e"
GREEN = "#2ca02c"
RED = "#d62728"
PURPLE = "#9467bd"
BROWN = "#8c564b"
PINK = "#e377c2"
GRAY = "#7f7f7f"
OLIVE = "#bcbd22"
CYAN = "#17becf"
INDIGO = "#393b79"
BRICK = "#ad494a"
DARK_GRAY = "#555555"
SLATE = "#374151"
#: Each convention's line, by its ``colour_index``: colour and dash, so overlaid lines stay
#: apart where they coincide.
CONVENTION_COLOURS = (BLUE, ORANGE, GREEN, RED, PURPLE, BROWN)
CONVENTION_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
#: The colours of lines in order (the j-th line takes the j-th, round again after the last).
LINE_COLOURS = (BLUE, RED, GREEN, PURPLE, ORANGE, CYAN, BROWN, PINK, GRAY, OLIVE, INDIGO, BRICK)
#: The ``meta`` of a trace that is not drawn and only carries words into a hover box.
HOVER_ONLY = "hover only"


def _scale_colours(scale) -> list[str]:
    return (
        [colour for _, colour in plotly.colors.get_colorscale(scale)]
        if isinstance(scale, str)
        else [colour for _, colour in scale]
    )


def for_dark_page(spec: dict) -> dict:
    """A figure's specification (``Figure.to_plotly_json()``) restyled for the dark theme: the
    traces coloured with :data:`DIVERGING` take :data:`DIVERGING_DARK` (a new dict; ``spec`` is
    not changed). Text and axes follow the page through Streamlit's chart theme already."""
    light = _scale_colours(DIVERGING)
    data = [
        {**trace, "colorscale": DIVERGING_DARK}
        if trace.get("colorscale") is not None and _scale_colours(trace["colorscale"]) == light
        else trace
        for trace in spec["data"]
    ]
    return {**spec, "data": data}


#: Margins (pixels) that hold what the axes ask for in Streamlit's chart theme at the usual
#: sizes: tick labels and the axis title with its stand-off on the left and at the bottom, a
#: colour bar with its tick labels on the right. A margin too small for them makes Plotly
#: measure, widen it and draw the whole chart a second time before it shows (its
#: "automargin", which emits no event of its own); longer labels and a legend's rows still get
#: their room that way. Plotly narrows the margins it widened itself on a narrow chart, not the
#: ones it is given: a chart drawn in a narrow column passes smaller ones.
MARGIN_LEFT = 80
MARGIN_BOTTOM = 75
MARGIN_RIGHT = 30
MARGIN_RIGHT_COLOUR_BAR = 85


def _has_colour_bar(trace: dict) -> bool:
    """Whether Plotly draws a colour bar for ``trace``: a heatmap shows its scale unless told
    not to, a scatter's markers only when told to."""
    if trace.get("type") == "heatmap":
        return bool(trace.get("showscale", True))
    return bool((trace.get("marker") or {}).get("showscale"))


def _panel_domains(n: int, gap: float) -> list[tuple[float, float]]:
    """The horizontal domains of ``n`` panels side by side, ``gap`` (a fraction of the plot's
    width) apart."""
    width = (1.0 - gap * (n - 1)) / n
    return [(j * (width + gap), j * (width + gap) + width) for j in range(n)]


def _panel_heading(text: str, domain: tuple[float, float], **options) -> dict:
    """An annotation centred above a panel."""
    return {
        "text": text,
        "showarrow": False,
        "xref": "paper",
        "yref": "paper",
        "x": (domain[0] + domain[1]) / 2,
        "xanchor": "center",
        "y": 1.0,
        "yanchor": "bottom",
        **options,
    }


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
    margin: Mapping[str, float] | None = None,
    **layout,
) -> go.Figure:
    """The figure, with the app's common layout: title and subtitle on the left, legend at the
    bottom, margins that hold the axes and a colour bar (``margin`` sets some sides anew)."""
    text = f"{title}<br><sup>{subtitle}</sup>" if subtitle else title
    with_legend = any(trace.get("showlegend", True) and trace.get("name") for trace in traces)
    common = {
        "title": {"text": text, "x": 0.0, "xanchor": "left"},
        "height": height,
        "margin": {
            "l": MARGIN_LEFT,
            "r": MARGIN_RIGHT_COLOUR_BAR if any(map(_has_colour_bar, traces)) else MARGIN_RIGHT,
            "t": 80 if subtitle else 50,
            "b": 110 if with_legend else MARGIN_BOTTOM,
            **(margin or {}),
        },
        "hoverlabel": {"align": "left"},
        # Below the x axis title, at the bottom of the figure: never over the title or the data.
        "legend": {
            "orientation": "h",
            "yref": "container",
            "y": 0.0,
            "yanchor": "bottom",
            "x": 0.0,
            "xanchor": "left",
        },
        "xaxis": xaxis or {},
        "yaxis": yaxis or {},
    }
    return go.Figure(data=traces, layout={**common, **layout})


def index_axis(title: str | None, count: int, n_ticks: int = 10, **options) -> dict:
    """An axis of indices 0 .. count-1 (pairs, columns): whole-number ticks at a round step,
    about ``n_ticks`` of them; no title for ``None``."""
    step = nice_step(max(count - 1, 1), n_ticks)
    return _axis(title, tick0=0, dtick=step, tickformat=",d", **options)


def convention_line(name: str, *, width: float = 2) -> dict:
    """The line style of convention ``name`` (its colour and dash); grey for other names."""
    if name not in CONVENTIONS:
        return {"color": GRAY, "width": width, "dash": "solid"}
    index = CONVENTIONS[name].colour_index
    return {
        "color": CONVENTION_COLOURS[index % len(CONVENTION_COLOURS)],
        "width": width,
        "dash": CONVENTION_DASHES[index % len(CONVENTION_DASHES)],
    }
