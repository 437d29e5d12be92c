"""Each chart as Plotly draws it once: Streamlit's chart theme written into the figure itself.

``st.plotly_chart`` with Streamlit's theme draws every chart twice (issue 51). Its element
(Streamlit 1.67, ``PlotlyChart.tsx``) draws the figure, then applies its theme again in an
effect after mounting, to a JSON copy of the figure it drew: new objects, so the second
``Plotly.react`` finds a "changed" ``layout.template`` (a new object, an edit of type "calc")
and data arrays that are new typed arrays (plotly.py sends numbers as base64 ``bdata``, which
Plotly decodes anew each time; a typed array is always "changed"), and draws the whole chart
again, axes, legend and margins included. ``theme=None`` alone does not help: plotly.py gives
every figure a template and the arrays stay typed.

What the app sends instead (:func:`drawn`): no template at all (``layout.template`` null, so
Plotly has none to compare) and ``theme=None``, with the theme's values written into the
figure under its own (a template's values are defaults: the figure's own win, as here); the
numbers as plain lists, with a ``layout.datarevision`` that is a fingerprint of the data, so
that Plotly compares that fingerprint and not the arrays (a new figure has a new fingerprint
and is drawn anew); the title in bold, as Streamlit's theme draws it; and, for a chart that
selects points, the click, hover and drag modes Streamlit would set after the first draw. The
second ``Plotly.react`` then has nothing to redraw.

The theme's values (``static/plotly_theme.json``, light and dark) are what Streamlit 1.67's
chart theme resolves to with this app's ``.streamlit/config.toml``, read from a chart drawn
with ``theme="streamlit"`` in each colour scheme; ``tests/browser/test_plotly_theme.py`` reads
them again from the running Streamlit and fails when they differ (another Streamlit version,
another theme in the config).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from dashboard import static

#: Streamlit's chart theme as a Plotly template, for each colour scheme ("light", "dark").
THEMES: dict[str, dict] = json.loads(static.text("plotly_theme.json"))

_AXIS = re.compile(r"^([xy])axis(\d*)$")
#: Trace types drawn on x and y axes (the ones this app uses and their kin).
_CARTESIAN = {"scatter", "scattergl", "heatmap", "bar", "histogram", "contour", "box"}
#: Types whose axes Plotly gives tick marks by default (its "2dMap" traces).
_MAPS = {"heatmap", "contour", "histogram2d", "histogram2dcontour"}
#: Types whose category axis (x, or y for ``orientation="h"``) has no grid by default.
_ORIENTED = {"bar", "box", "violin", "histogram", "funnel", "waterfall"}

#: Tick labels that cannot overflow the chart, which Plotly need not check. By default
#: (``ticklabeloverflow`` "hide past div") Plotly measures every label of an axis again after
#: placing each one, to hide those past the chart's edge: for an axis of n labels, n passes
#: over n labels, each setting the labels' opacity and measuring them (a log axis from 1 to
#: 10^6 has 19 labels: about 22 ms of a switch to the RoPE lab, issue 51). An axis with
#: ``automargin`` (every axis of the app: Streamlit's theme sets it) widens the margins until
#: its labels are inside the chart, and a colour bar pushes the margin it needs, so nothing is
#: past the edge to hide; "allow" skips the check and draws the same labels.
LABELS_INSIDE = "allow"


def under(value, default):
    """``value`` with ``default``'s entries where it has none, nested dicts merged the same way
    (what a Plotly template does for the attributes it sets)."""
    if isinstance(value, Mapping) and isinstance(default, Mapping):
        merged = dict(default)
        for key, item in value.items():
            merged[key] = under(item, default[key]) if key in default else item
        return merged
    return value


def plain_arrays(value):
    """``value`` with every base64 array of plotly.py (``{"dtype", "bdata"[, "shape"]}``) as
    nested lists of the same numbers."""
    if isinstance(value, Mapping):
        if "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
            if "shape" in value:
                array = array.reshape([int(n) for n in str(value["shape"]).split(",")])
            return array.tolist()
        return {key: plain_arrays(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_arrays(item) for item in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


#: Parts of a layout that Plotly draws when they are given, whoever gives them: the theme's
#: values for them apply to a figure that has them, as a template's would.
_ONLY_WITH_THEIR_OWN = {"coloraxis", "ternary"}


def _axes(layout: Mapping, data: list[dict]) -> dict[str, set[str]]:
    """The figure's x and y axes (those of its layout and those its traces use), each with what
    Plotly's defaults for it depend on: "map" (it carries a heatmap), "oriented" (it is the
    category axis of bars)."""
    axes: dict[str, set[str]] = {name: set() for name in layout if _AXIS.match(name)}
    for trace in data:
        kind = trace.get("type", "scatter")
        if kind not in _CARTESIAN | _MAPS | _ORIENTED:
            continue
        for letter in "xy":
            ref = trace.get(f"{letter}axis") or letter
            traits = axes.setdefault(f"{letter}axis{ref[1:]}", set())
            if kind in _MAPS:
                traits.add("map")
            if kind in _ORIENTED and letter == ("y" if trace.get("orientation") == "h" else "x"):
                traits.add("oriented")
    return axes


def _axis_theme(theme: Mapping, axis: Mapping, traits: set[str]) -> dict:
    """The theme's values for an axis, as a template applies them.

    A template's colour for grid lines, the zero line or tick marks only colours them; given in
    the figure, the same colour also turns them on (Plotly's ``coerce2``: a ``gridcolor``
    makes ``showgrid`` default to true, a ``tickcolor`` draws tick marks, a ``minor`` part
    draws minor grid lines). So the switches the figure leaves to Plotly are written out with
    Plotly's own defaults for this axis before the colours are added, and a ``minor`` part or
    a range selector is themed only on an axis that has one.
    """
    kept = dict(theme)
    for part in ("minor", "rangeselector"):
        if part not in axis:
            kept.pop(part, None)
    grid_default = "oriented" not in traits
    switches = {
        "showgrid": ({"showgrid", "gridcolor", "gridwidth", "griddash"}, grid_default),
        "zeroline": ({"zeroline", "zerolinecolor", "zerolinewidth"}, grid_default),
        "ticks": (
            {"ticks", "ticklen", "tickwidth", "tickcolor"},
            "outside" if "map" in traits else "",
        ),
    }
    for switch, (given, default) in switches.items():
        if not given & set(axis):
            kept[switch] = theme.get(switch, default)
    if axis.get("automargin", theme.get("automargin")) is True:
        kept["ticklabeloverflow"] = LABELS_INSIDE
    return kept


def themed(spec: Mapping, scheme: str) -> dict:
    """A figure's specification (``to_plotly_json()``, arrays as lists) with the chart theme of
    ``scheme`` written into it, as Streamlit's theme would draw it, and no template."""
    template = THEMES[scheme]
    theme_layout = template["layout"]
    data = []
    seen: dict[str, int] = {}
    for trace in spec["data"]:
        kind = trace.get("type", "scatter")
        items = template["data"].get(kind) or [{}]
        data.append(under(trace, items[seen.get(kind, 0) % len(items)]))
        seen[kind] = seen.get(kind, 0) + 1
        if kind in _MAPS:  # their colour bar, a margin pusher (LABELS_INSIDE)
            data[-1]["colorbar"] = under(
                data[-1].get("colorbar", {}), {"ticklabeloverflow": LABELS_INSIDE}
            )
    layout = {key: value for key, value in spec["layout"].items() if key != "template"}
    for name, traits in _axes(layout, data).items():
        axis = layout.get(name, {})
        layout[name] = under(axis, _axis_theme(theme_layout[name[0] + "axis"], axis, traits))
    for key, value in theme_layout.items():
        if key in ("xaxis", "yaxis"):
            continue  # above, for each axis
        if key in layout:
            layout[key] = under(layout[key], value)
        elif key not in _ONLY_WITH_THEIR_OWN:
            layout[key] = value
    title = layout.get("title")
    if isinstance(title, Mapping) and title.get("text"):
        # Streamlit's theme wraps the title in <b>; a bold font draws the same and leaves the
        # title's text as the figure has it.
        layout["title"] = under({"font": {"weight": "bold"}}, title)
    return {**spec, "data": data, "layout": layout}


def fingerprint(spec: Mapping) -> str:
    """A digest of the figure's data and frames (its ``layout.datarevision``), read from
    plotly.py's specification, whose arrays are short base64 strings."""
    content = json.dumps([spec["data"], spec.get("frames")], sort_keys=True, default=str)
    return hashlib.blake2b(content.encode(), digest_size=12).hexdigest()


class PreparedFigure(go.Figure):
    """A figure given to ``st.plotly_chart`` as a finished specification.

    Streamlit turns a figure into JSON with ``to_dict()`` (plotly's
    ``return_figure_from_figure_or_data``), a deep copy of every trace and frame on every run;
    building a ``go.Figure`` from the themed specification cost 36 ms for Sinusoids' 100 Play
    frames, even unvalidated. This one carries the specification itself and hands it over as
    it is (Streamlit only reads it). Its own ``layout`` holds the height alone (Streamlit reads
    the height of a chart drawn at its content's height).
    """

    def __init__(self, spec: Mapping) -> None:
        super().__init__(layout={"height": spec["layout"].get("height")}, _validate=False)
        self._prepared = dict(spec)

    def to_dict(self) -> dict:
        return self._prepared

    def to_plotly_json(self) -> dict:
        return self._prepared


def drawn(spec: Mapping, scheme: str, *, select: bool = False) -> PreparedFigure:
    """What ``st.plotly_chart(..., theme=None)`` is given for ``spec`` (a figure's
    ``to_plotly_json()``) on a page of colour ``scheme``: a figure Plotly draws once (module
    docstring). ``select``: the chart selects points on a click (Streamlit's
    ``on_select="rerun"``, ``selection_mode="points"``).

    The frames of a Play button keep plotly.py's base64 arrays: ``Plotly.react`` compares a
    figure's traces and layout, not its frames.
    """
    revision = fingerprint(spec)
    spec = themed({**spec, "data": plain_arrays(spec["data"])}, scheme)
    layout = {**spec["layout"], "datarevision": revision, "template": None}
    if select:
        # What Streamlit sets after the first draw of a selecting chart when the figure has none.
        layout.setdefault("clickmode", "event+select")
        layout.setdefault("hovermode", "closest")
        layout.setdefault("dragmode", "pan")
    return PreparedFigure({**spec, "layout": layout})
