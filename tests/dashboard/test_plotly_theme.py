"""Streamlit's chart theme written into each figure (dashboard/plotly_theme.py): what Plotly is
given draws as the theme would, with nothing for a second ``Plotly.react`` to redraw."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dashboard import plotly_theme
from tests.apptest_helpers import new_app, no_errors


def _spec(**layout) -> dict:
    x = np.linspace(0.0, 1.0, 7)
    return go.Figure(
        data=[{"type": "scatter", "x": x, "y": np.sin(x), "name": "sin"}],
        layout={"title": {"text": "Waves<br><sup>seven points</sup>"}, **layout},
    ).to_plotly_json()


def _sent(figure: go.Figure) -> dict:
    """The JSON ``st.plotly_chart`` sends for ``figure`` (what the browser parses)."""
    return json.loads(pio.to_json(figure.to_dict(), validate=False))


def test_under_keeps_the_figure_values_and_fills_the_rest():
    assert plotly_theme.under(
        {"font": {"size": 18}, "height": 400}, {"font": {"size": 12, "color": "#808495"}, "x": 0}
    ) == {"font": {"size": 18, "color": "#808495"}, "height": 400, "x": 0}


def test_plain_arrays_are_the_same_numbers():
    z = np.arange(6.0).reshape(2, 3) / 7
    spec = go.Figure(
        data=[{"type": "heatmap", "z": z, "x": np.arange(3, dtype=np.int32)}]
    ).to_plotly_json()
    assert "bdata" in spec["data"][0]["z"]  # plotly.py sends base64 arrays: Plotly types them
    plain = plotly_theme.plain_arrays(spec)["data"][0]
    assert plain["z"] == z.tolist() and plain["x"] == [0, 1, 2]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_sent_without_template_typed_arrays_or_plotly_defaults(scheme):
    sent = _sent(plotly_theme.drawn(_spec(), scheme))
    layout = sent["layout"]
    assert layout["template"] is None  # Plotly has no template to find "changed"
    assert "bdata" not in json.dumps(sent) and isinstance(sent["data"][0]["x"], list)
    theme = plotly_theme.THEMES[scheme]["layout"]
    assert layout["font"] == theme["font"] and layout["paper_bgcolor"] == theme["paper_bgcolor"]
    assert layout["xaxis"]["tickfont"] == theme["xaxis"]["tickfont"]
    assert layout["yaxis"]["title"]["standoff"] == theme["yaxis"]["title"]["standoff"]
    # The title in bold, as Streamlit's theme draws it (its text as given); the data as given.
    assert layout["title"]["text"] == "Waves<br><sup>seven points</sup>"
    assert layout["title"]["font"]["weight"] == "bold"
    assert sent["data"][0]["marker"]["line"]["width"] == 0  # the theme's scatter default


def test_the_figure_wins_over_the_theme():
    layout = plotly_theme.themed(
        plotly_theme.plain_arrays(_spec(font={"size": 18}, xaxis={"showgrid": True})), "light"
    )["layout"]
    assert layout["font"]["size"] == 18 and layout["font"]["family"]
    assert layout["xaxis"]["showgrid"] is True


def test_switches_keep_plotly_defaults_where_the_theme_only_colours():
    """A colour given in the figure turns its part on in Plotly, a template's does not: the
    switches are written out with Plotly's defaults for each axis."""
    spec = go.Figure(
        data=[
            {"type": "scatter", "y": [1.0, 2.0]},
            {"type": "heatmap", "z": [[1.0, 2.0]], "xaxis": "x2", "yaxis": "y2"},
            {"type": "bar", "y": ["a", "b"], "x": [1, 2], "orientation": "h", "yaxis": "y3"},
        ],
        layout={"xaxis2": {"domain": [0.4, 0.6]}, "yaxis3": {"domain": [0.7, 1.0]}},
    ).to_plotly_json()
    layout = plotly_theme.themed(plotly_theme.plain_arrays(spec), "light")["layout"]
    # A line chart: no tick marks, the y grid on, the x grid off (the theme's), no minor grid.
    assert layout["yaxis"]["ticks"] == "" and layout["xaxis"]["ticks"] == ""
    assert layout["yaxis"]["showgrid"] is True and layout["xaxis"]["showgrid"] is False
    assert "minor" not in layout["yaxis"] and "rangeselector" not in layout["xaxis"]
    # A heatmap's axes have tick marks by default: in the theme's colour.
    assert layout["xaxis2"]["ticks"] == "outside" and layout["yaxis2"]["ticks"] == "outside"
    assert (
        layout["xaxis2"]["tickcolor"]
        == plotly_theme.THEMES["light"]["layout"]["xaxis"]["tickcolor"]
    )
    # Horizontal bars: no grid along their categories (y), as Plotly draws them.
    assert layout["yaxis3"]["showgrid"] is False and layout["yaxis3"]["zeroline"] is False
    assert "coloraxis" not in layout and "ternary" not in layout


def test_labels_that_cannot_overflow_are_not_checked_again():
    """Issue 51: Plotly's default "hide past div" re-measures every tick label of an axis after
    placing each one (n^2 passes, about 22 ms of a switch to the RoPE lab). An axis with
    automargin (the theme's, on every axis) and a heatmap's colour bar make room for their
    labels, so they are drawn with "allow": the same labels, unchecked. An axis the figure
    keeps from pushing its margins keeps Plotly's check, and the figure's own choice wins."""
    spec = go.Figure(
        data=[
            {"type": "scatter", "y": [1.0, 2.0]},
            {"type": "heatmap", "z": [[1.0, 2.0]], "xaxis": "x2", "yaxis": "y2"},
        ],
        layout={
            "xaxis2": {"domain": [0.4, 0.6], "automargin": False},
            "yaxis2": {"ticklabeloverflow": "hide past domain"},
        },
    ).to_plotly_json()
    sent = plotly_theme.themed(plotly_theme.plain_arrays(spec), "light")
    layout = sent["layout"]
    assert layout["xaxis"]["automargin"] is True
    assert layout["xaxis"]["ticklabeloverflow"] == layout["yaxis"]["ticklabeloverflow"] == "allow"
    assert "ticklabeloverflow" not in layout["xaxis2"]
    assert layout["yaxis2"]["ticklabeloverflow"] == "hide past domain"
    assert sent["data"][1]["colorbar"]["ticklabeloverflow"] == "allow"
    assert "colorbar" not in sent["data"][0]


def test_the_datarevision_follows_the_data():
    def revision(spec):
        return _sent(plotly_theme.drawn(spec, "light"))["layout"]["datarevision"]

    one = revision(_spec())
    assert revision(_spec(height=300)) == one
    changed = _spec()
    changed["data"][0]["y"] = [0.0] * 7
    assert revision(changed) != one


def test_a_selecting_chart_has_the_modes_streamlit_would_set():
    layout = _sent(plotly_theme.drawn(_spec(), "light", select=True))["layout"]
    assert [layout[mode] for mode in ("clickmode", "hovermode", "dragmode")] == [
        "event+select",
        "closest",
        "pan",
    ]
    assert "clickmode" not in _sent(plotly_theme.drawn(_spec(), "light"))["layout"]


def test_the_frames_keep_their_arrays_and_streamlit_sends_the_prepared_figure():
    spec = go.Figure(
        data=[{"type": "scatter", "y": np.arange(3.0)}],
        frames=[{"data": [{"y": np.arange(3.0) + k}], "name": str(k)} for k in range(2)],
    ).to_plotly_json()
    figure = plotly_theme.drawn(spec, "light")
    assert figure.layout.height is None  # only the height, for Streamlit's content height
    sent = _sent(figure)
    assert sent["data"][0]["y"] == [0.0, 1.0, 2.0]
    assert "bdata" in sent["frames"][1]["data"][0]["y"]  # Plotly.react does not compare frames
    assert figure.to_plotly_json() is figure.to_dict()


@pytest.mark.parametrize("view", ["conventions", "rope"])
def test_the_app_sends_its_charts_themed_and_without_template(view):
    at = new_app(view=view)
    at.run()
    no_errors(at)
    charts = at.get("plotly_chart")
    assert charts
    for chart in charts:
        assert chart.proto.theme == ""  # theme=None: the theme is in the figure
        spec = json.loads(chart.proto.spec)
        assert spec["layout"]["template"] is None and "bdata" not in chart.proto.spec
        assert spec["layout"]["font"] == plotly_theme.THEMES["light"]["layout"]["font"]
        assert spec["layout"]["datarevision"]


def test_the_legend_rows_are_counted_as_plotly_lays_them_out():
    """base.legend_height against Plotly's layout in Chromium at 1,400 px (plot 830 px wide;
    2 rows of 19 px and 10 px of padding for Uniqueness' four long entries, one row for
    Distance's six short ones, a second line of 16 px for a two-line entry)."""
    from dashboard.figures import base

    uniqueness = [
        "at bfloat16: the position ids stored in that format",
        "exact (float64): to the next position",
        "exact (float64): to the nearest of all other positions",
        "first collision: 256 and 257",
    ]
    assert base.legend_height(uniqueness, 830) == 10 + 2 * 19
    six = ["added sinusoid", "RoPE", "ALiBi", "learned (at initialisation)", "NoPE", "xPos"]
    assert base.legend_height(six, 830) == 10 + 19
    assert base.legend_height(["one", "two<br>lines"], 830) == 10 + 19 + 16
    # Narrower, more rows: one entry a row once the widest entry alone fills the width.
    assert base.legend_height(uniqueness, 300) == 10 + 4 * 19


def test_the_bottom_margin_holds_the_legend_at_the_assumed_width():
    from dashboard.figures import base

    names = [f"a fairly long legend entry number {i}" for i in range(6)]
    fig = base._figure(
        [{"type": "scatter", "y": [1, 2], "name": name} for name in names], title="t"
    )
    assert fig.layout.margin.b >= base.LEGEND_X_AXIS + base.legend_height(names)
    one = base._figure([{"type": "scatter", "y": [1, 2], "name": "one"}], title="t")
    assert one.layout.margin.b == 110  # a one-row legend keeps the usual margin
    none = base._figure([{"type": "scatter", "y": [1, 2]}], title="t")
    assert none.layout.margin.b == base.MARGIN_BOTTOM


def test_the_interactive_html_download_has_the_theme_colours_not_streamlit_placeholders():
    # With Streamlit imported, plotly.py's default template is Streamlit's, whose colours are
    # placeholders (#000001...) only its chart element replaces: fig.to_html() drew every trace
    # near black (found 2026-11-28).
    import re

    import streamlit.elements.plotly_chart  # noqa: F401  (registers Streamlit's template)

    from dashboard import ui

    assert pio.templates.default == "streamlit"
    page = ui.interactive_html(go.Figure(_spec()))
    placeholders = set(
        re.findall(
            r"#0000(?:0[1-9]|[1-9]\d)\b", json.dumps(pio.templates["streamlit"].to_plotly_json())
        )
    )
    assert len(placeholders) >= 10
    assert not placeholders & set(re.findall(r"#[0-9a-fA-F]{6}\b", page))
    light = plotly_theme.THEMES["light"]["layout"]
    assert json.dumps(light["colorway"], separators=(",", ":")) in page
    assert "sin" in page and "Plotly.newPlot" in page
