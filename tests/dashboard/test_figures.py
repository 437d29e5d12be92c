"""Figure factories tested as plain functions: trace types, ranges, shapes, hover text."""

import copy
import pickle

import numpy as np
import plotly.graph_objects as go
import pytest

import pe_core
from dashboard import formatting
from dashboard.figures import (
    accessibility,
    base,
    charts,
    linked,
    matrices,
    relative,
    rotary,
    similarity,
    sinusoidal,
)


def _column_labels(d_model, convention="vaswani"):
    pair, role = pe_core.column_roles(d_model, convention=convention)
    w = pe_core.frequencies(d_model, convention=convention)
    freq = np.where(pair >= 0, w[np.maximum(pair, 0)], np.nan)
    return formatting.column_labels(range(d_model), pair, role, freq, 2 * np.pi / freq)


def test_block_rows_tick_at_round_positions():
    # Issue 9: block-mean rows ticked at the blocks' own starts (101,608, 201,262, ...).
    block = 1954  # 1,000,000 positions in 512 rows
    first = np.arange(512) * block
    last = np.minimum(first + block - 1, 999_999)
    rows, texts = formatting.round_ticks(first.tolist(), last.tolist())
    assert texts == [f"{k:,}" for k in range(0, 1_000_000, 100_000)]
    # Each tick sits at the block that holds its position.
    for row, text in zip(rows, texts, strict=True):
        assert first[row] <= int(text.replace(",", "")) <= last[row]


def test_single_rows_tick_at_round_positions():
    rows, texts = formatting.round_ticks(list(range(30)))
    assert texts == ["0", "5", "10", "15", "20", "25"] and rows == [0, 5, 10, 15, 20, 25]
    assert formatting.round_ticks([]) == ([], [])


def test_zero_column_label():
    assert _column_labels(5, "tensor2tensor")[4] == "column 4 (zero padding)"


@pytest.mark.parametrize(("span", "step"), [(9, 1), (100, 10), (2047, 500), (99_999, 10_000)])
def test_nice_step(span, step):
    assert formatting.nice_step(span) == step


def test_sinusoid_lines_curves_and_markers():
    smooth = np.linspace(0, 10, 50)
    integers = np.arange(11)
    fig = sinusoidal.sinusoid_lines(
        smooth, np.sin(smooth)[:, None], integers, np.sin(integers)[:, None], labels=["dim 0"]
    )
    assert [t.mode for t in fig.data] == ["lines", "markers"]
    assert list(fig.layout.yaxis.range) == [-1.08, 1.08]
    no_markers = sinusoidal.sinusoid_lines(
        smooth, np.sin(smooth)[:, None], np.zeros(0), np.zeros((0, 1)), labels=["dim 0"]
    )
    assert len(no_markers.data) == 1


def test_wavelength_chart_log_axis_and_marks():
    lam = {name: pe_core.wavelengths(64, convention=name) for name in pe_core.CONVENTIONS}
    marks = [
        sinusoidal.Mark(500.0, "L = 500 positions", "#d62728"),
        sinusoidal.Mark(7.5, "x", "#555"),
    ]
    fig = sinusoidal.wavelength_chart(lam, current="split", marks=marks)
    assert fig.layout.yaxis.type == "log"
    n = len(pe_core.CONVENTIONS)
    assert [t.name for t in fig.data[:n]] == [
        f"{name} (current)" if name == "split" else name for name in pe_core.CONVENTIONS
    ]
    # Every marked value is one of the arguments, drawn as a named line (in the legend, where no
    # curve can cross its label), not re-derived from a formula.
    lines = fig.data[n:]
    assert [list(t.y) for t in lines] == [[500.0, 500.0], [7.5, 7.5]]
    assert [t.name for t in lines] == ["L = 500 positions", "x"]
    assert not fig.layout.annotations and not fig.layout.shapes
    # Conventions stay apart where they coincide: each its own dash.
    assert [t.line.dash for t in fig.data[:3]] == ["solid", "dash", "dot"]


def test_index_axes_have_whole_number_ticks():
    # Issue 9: index axes showed fractional ticks (0.5, 1.5) at small d_model.
    lam = {"vaswani": pe_core.wavelengths(7)}
    axis = sinusoidal.wavelength_chart(lam, current="vaswani").layout.xaxis
    assert (axis.dtick, axis.tick0, axis.tickformat) == (1, 0, ",d")
    wide = base.index_axis("pair", 4096)
    assert wide["dtick"] == 500


def test_legend_below_the_plot_not_over_the_title():
    # Issue 9: a legend overlapped its chart title ("PE(999999 + 1e+06) computed directly").
    fig = relative.vector_comparison(np.zeros(8), np.zeros(8), k=999_999, offset=1e6)
    legend = fig.layout.legend
    assert (legend.yref, legend.y, legend.yanchor) == ("container", 0.0, "bottom")
    assert fig.data[0].name == "PE(999,999 + 1,000,000) computed directly"


def test_offset_profile_line_or_envelope_plus_checks():
    checks = {0: (np.arange(3), np.ones(3)), 7: (np.arange(3), np.ones(3))}
    line = similarity.offset_profile_chart(
        np.arange(10), np.ones(10), upper=None, checks=checks, kind="dot"
    )
    # The line carries hidden markers, so that a click can select one of its points.
    assert [t.mode for t in line.data] == ["lines+markers", "markers", "markers"]
    assert line.data[2].name == "direct, from k = 7"
    band = similarity.offset_profile_chart(
        np.arange(10), np.zeros(10), upper=np.ones(10), checks={}, kind="cosine"
    )
    assert [t.fill for t in band.data] == [None, "tonexty"]


def test_rotation_heatmap_permuted_columns():
    indices = [0, 1, 4, 5]
    fig = relative.rotation_heatmap(
        np.eye(4), indices=indices, d_model=8, hover=["a", "b", "c", "d"]
    )
    assert "sin and cos columns of 2 pairs" in fig.layout.title.text
    assert list(fig.layout.xaxis.ticktext) == ["0", "4"]


def test_unit_circles_one_axis_pair_per_pair():
    points = np.random.default_rng(0).uniform(-1, 1, size=(10, 3, 2))
    fig = relative.unit_circles(points, pairs=[0, 2, 5], frequencies=[1.0, 0.5, 0.1])
    assert len(fig.data) == 6
    assert {t.xaxis for t in fig.data} == {"x", "x2", "x3"}
    assert fig.layout.yaxis2.scaleanchor == "x2"
    assert "pair i=5" in fig.layout.annotations[2].text


def test_matrix_heatmap_symmetric_range():
    fig = matrices.matrix_heatmap(np.array([[0.5, -2.0]]), rows=["r"], columns=[0, 1], title="m")
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-2.0, 2.0)


def test_norms_and_profiles():
    norms = charts.norms_chart({"embedding": np.ones(3), "encoding": np.ones(3), "sum": np.ones(3)})
    assert [t.name for t in norms.data] == ["embedding", "encoding", "sum"]
    overlay = similarity.profiles_overlay(
        {"vaswani": np.ones(4), "split": np.ones(4)}, current="split"
    )
    assert overlay.data[1].name == "split (current)" and overlay.data[1].line.dash == "dot"


def test_dimension_lines_sin_solid_cos_dotted_by_pair():
    rows = pe_core.sinusoidal_encoding([0, 5], 8, convention="split")
    _, role = pe_core.column_roles(8, convention="split")
    fig = sinusoidal.dimension_lines(
        rows[:, role == "sin"],
        rows[:, role == "cos"],
        positions=[0, 5],
        sin_columns=[0, 1, 2, 3],
        cos_columns=[4, 5, 6, 7],
        frequency=pe_core.frequencies(8),
        wavelength=pe_core.wavelengths(8),
    )
    lines = fig.data[1:5]
    assert [t.line.dash for t in lines] == ["solid", "dot", "solid", "dot"]
    assert [t.showlegend for t in lines] == [True, False, True, False]
    np.testing.assert_array_equal(lines[3].y, np.cos(5 * pe_core.frequencies(8)))
    # Issue 9: the legend had no entry for the dotted style.
    assert [t.name for t in fig.data[5:]] == ["sin columns (solid)", "cos columns (dotted)"]
    assert [t.line.dash for t in fig.data[5:]] == ["solid", "dot"]


def test_dimension_lines_name_only_the_kinds_of_column_there_are():
    # d_model 1 has one sin column and no cos: the legend and the subtitle named a dotted cos
    # style that nothing on the chart had.
    rows = pe_core.sinusoidal_encoding([0], 1)
    fig = sinusoidal.dimension_lines(
        rows,
        rows[:, :0],
        positions=[0],
        sin_columns=[0],
        cos_columns=[],
        frequency=pe_core.frequencies(1),
        wavelength=pe_core.wavelengths(1),
    )
    assert [t.name for t in fig.data if t.name and "columns" in t.name] == ["sin columns (solid)"]
    assert "solid: sin columns" in fig.layout.title.text and "cos" not in fig.layout.title.text


def test_dimension_lines_say_each_pair_once_in_one_hover_box():
    # Each line's hover repeated every column's description: 2.8 MB of one chart at
    # d_model 8192. The pair's columns, ω and λ now go once, as numbers, in traces that are
    # not drawn, and one box lists every line's value at the pair.
    rows = pe_core.sinusoidal_encoding([0, 5], 7)  # odd: the last pair has no cos column
    _, role = pe_core.column_roles(7)
    w = pe_core.frequencies(7)
    fig = sinusoidal.dimension_lines(
        rows[:, role == "sin"],
        rows[:, role == "cos"],
        positions=[0, 5],
        sin_columns=[0, 2, 4, 6],
        cos_columns=[1, 3, 5],
        frequency=w,
        wavelength=2 * np.pi / w,
    )
    assert fig.layout.hovermode == "x unified"
    assert fig.layout.xaxis.unifiedhovertitle.text == "pair i = %{x:,d}"
    both, sin_only = fig.data[:2]
    np.testing.assert_array_equal(both.x, [0, 1, 2])
    np.testing.assert_array_equal(
        both.customdata, np.column_stack([[0, 2, 4], [1, 3, 5], w[:3], 2 * np.pi / w[:3]])
    )
    # Plotly's unified box also lists a trace's nearest point at a neighbouring pair: with two
    # words traces and a cos line shorter than the pairs, each of them names its pair.
    assert both.hovertemplate.startswith("pair %{x:,d}: sin column %{customdata[0]:,d}, cos")
    assert "ω=%{customdata[2]:.4~g} rad/pos, λ=%{customdata[3]:.4~g} pos" in both.hovertemplate
    np.testing.assert_array_equal(sin_only.x, [3])
    assert sin_only.customdata[0][0] == 6
    assert sin_only.hovertemplate.startswith("pair %{x:,d}: sin column %{customdata[0]:,d}<br>")
    for words in (both, sin_only):
        assert words.mode == "none" and not words.showlegend
        assert words.meta == base.HOVER_ONLY
    lines = fig.data[2:6]
    assert [t.hovertemplate for t in lines[:2]] == [
        "position 0, sin: %{y:.6f}<extra></extra>",
        "position 0, cos at pair %{x:,d}: %{y:.6f}<extra></extra>",
    ]
    # An even d_model: one words trace, every line as long as the pairs, no pair repeated.
    even = sinusoidal.dimension_lines(
        rows[:, [0, 2]],
        rows[:, [1, 3]],
        positions=[0, 5],
        sin_columns=[0, 2],
        cos_columns=[1, 3],
        frequency=w[:2],
        wavelength=2 * np.pi / w[:2],
    )
    assert [t.meta for t in even.data[:2]] == [base.HOVER_ONLY, None]
    assert even.data[0].hovertemplate.startswith("sin column")
    assert "pair" not in even.data[2].hovertemplate
    assert all(t.customdata is None for t in lines)
    # Not a series for a screen reader: the words start with the first line.
    words = accessibility.text_alternative(fig)
    assert words.split(". ", 1)[1].startswith("position 0: 4 points")


@pytest.mark.parametrize(("convention", "d_model"), [("split", 7), ("musicgen", 9), ("vaswani", 6)])
def test_the_dimension_chart_names_each_pairs_columns_and_frequency(convention, d_model):
    # The view's wiring: pair i's words carry its own sin and cos columns, ω_i and λ_i, in
    # every layout (musicgen puts the cos half first and pads an odd d_model with a zero).
    from dashboard.config import Config
    from dashboard.views import sinusoids

    fig = sinusoids.dimension_figure(Config(50, d_model, 10000.0, convention), (0, 7))
    pair, role = pe_core.column_roles(d_model, convention=convention)
    w = pe_core.frequencies(d_model, convention=convention)
    shown = np.concatenate([t.customdata for t in fig.data if t.meta == base.HOVER_ONLY])
    pairs = np.concatenate([t.x for t in fig.data if t.meta == base.HOVER_ONLY])
    assert sorted(pairs) == list(range(w.size))
    for i, (sin_column, cos_column, frequency, wavelength) in zip(pairs, shown, strict=True):
        for column, kind in ((sin_column, "sin"), (cos_column, "cos")):
            expected = np.flatnonzero((pair == i) & (role == kind))
            assert [column] == (list(expected) if expected.size else [-1])
        assert frequency == w[i] and wavelength == 2 * np.pi / w[i]


class TestTextAlternative:
    """Issue 15: every chart's words for a screen reader, from the figure's own data."""

    def test_a_line_says_its_range_and_where_its_extremes_are(self):
        fig = base._figure(
            [
                {
                    "type": "scatter",
                    "name": "closed form",
                    "x": [0, 1, 2, 3],
                    "y": [1, 0.2, 0.5, -0.3],
                }
            ],
            title="Cosine against offset",
            subtitle="every offset",
            xaxis=base._axis("offset"),
            yaxis=base._axis("cosine"),
        )
        assert accessibility.text_alternative(fig) == (
            "Chart: Cosine against offset (every offset). closed form: 4 points from 0 to 3 "
            "(offset); cosine lowest -0.3 at 3, highest 1 at 0."
        )

    def test_a_heatmap_says_its_size_and_range(self):
        z = np.array([[0.0, -1.0, 0.5], [1.0, 0.25, 0.0]])
        fig = base._figure([{"type": "heatmap", "z": z, "name": "M"}], title="Rotation")
        assert accessibility.text_alternative(fig) == (
            "Chart: Rotation. M: 2 × 3 cells, values from -1 to 1."
        )

    def test_a_constant_series_and_text_positions(self):
        fig = base._figure(
            [{"type": "scatter", "name": "distance", "x": ["a", "b"], "y": [3.5, 3.5]}],
            title="Distances",
        )
        # x that is not numbers: the points are counted from 0.
        assert accessibility.text_alternative(fig).endswith(
            "distance: 2 points from 0 to 1; value 3.5 at every point."
        )

    def test_many_series_are_counted(self):
        traces = [{"type": "scatter", "name": f"s{i}", "y": [i, i + 1]} for i in range(11)]
        text = accessibility.text_alternative(base._figure(traces, title="Many"))
        assert text.count("points from") == accessibility.DESCRIBED_TRACES
        assert text.endswith("And 3 more series.")

    def test_a_real_chart(self):
        lengths = pe_core.wavelengths(512)
        fig = sinusoidal.wavelength_chart({"vaswani": lengths}, current="vaswani", marks=[])
        text = accessibility.text_alternative(fig)
        assert f"highest {formatting.format_number(lengths[-1])} at 255" in text


def test_unit_circles_play_frames_carry_each_position():
    """Issue 15: the Play control's frames are the given points, position by position."""
    points = np.random.default_rng(1).uniform(-1, 1, size=(7, 2, 2))
    fig = relative.unit_circles(points, pairs=[0, 3], frequencies=[1.0, 0.2], frame_ms=100)
    assert len(fig.frames) == 7 and [f.name for f in fig.frames] == [str(k) for k in range(7)]
    vectors = list(fig.frames[0].traces)
    assert vectors == [4, 5]  # after the two circles' outline and points
    for k, frame in enumerate(fig.frames):
        for j, trace in enumerate(frame.data):
            assert list(trace.x) == [0.0, points[k, j, 0]]
            assert list(trace.y) == [0.0, points[k, j, 1]]
    sent = fig.to_plotly_json()["layout"]  # the controls as Plotly.js gets them
    play, pause = sent["updatemenus"][0]["buttons"]
    assert play["args"][1]["frame"]["duration"] == 100 and play["args"][0] is None
    assert list(pause["args"][0]) == [None]  # Plotly's "stop": animate to no frame
    assert [s["label"] for s in sent["sliders"][0]["steps"]] == [str(k) for k in range(7)]
    # Without frame_ms: no frames, no buttons (the other uses of the circles).
    still = relative.unit_circles(points, pairs=[0, 3], frequencies=[1.0, 0.2])
    assert not still.frames and not still.layout.updatemenus


def test_what_a_chart_derives_from_a_figure_is_computed_once_and_goes_with_it():
    import gc

    from dashboard import caching

    calls = []

    def words(fig):
        calls.append(fig)
        return accessibility.text_alternative(fig)

    fig = base._figure([{"type": "scatter", "y": [1.0, 2.0]}], title="t")
    first = caching.derived(fig, words)
    assert caching.derived(fig, words) == first and len(calls) == 1
    key = (words.__qualname__, id(fig))
    del fig, calls[:]
    gc.collect()
    assert key not in caching._DERIVED


def test_dark_page_restyles_the_diverging_scale_only():
    cosine = relative.rotation_heatmap(np.eye(2), indices=[0, 1], d_model=2, hover=["a", "b"])
    distance = base._figure(
        [{"type": "heatmap", "z": np.eye(3), "colorscale": "Viridis"}], title="t"
    )
    for fig, expected in ((cosine, base.DIVERGING_DARK), (distance, None)):
        spec = fig.to_plotly_json()
        before = [list(step) for step in spec["data"][0]["colorscale"]]
        dark = base.for_dark_page(spec)
        after = dark["data"][0]["colorscale"]
        assert after == (expected or before)  # Viridis keeps its meaning on dark: untouched
        assert [list(step) for step in spec["data"][0]["colorscale"]] == before  # not changed
    lines = base._figure([{"type": "scatter", "y": [1.0]}], title="t").to_plotly_json()
    assert base.for_dark_page(lines)["data"] == lines["data"]


def test_sinusoid_play_frames_mark_each_integer_position():
    """Issue 15: ▶ Play on the sinusoids moves a line and each curve's value along the integer
    positions, the values the curves' own markers hold."""
    smooth = np.linspace(3, 9, 50)
    integers = np.arange(3, 10)
    values = np.random.default_rng(2).uniform(-1, 1, size=(7, 2))
    fig = sinusoidal.sinusoid_lines(
        smooth, np.zeros((50, 2)), integers, values, labels=["a", "b"], frame_ms=50
    )
    assert [f.name for f in fig.frames] == [str(k) for k in range(3, 10)]
    for row, frame in enumerate(fig.frames):
        assert list(frame.traces) == [4, 5]  # after two curves and their markers
        line, dots = frame.data
        assert list(line.x) == [integers[row]] * 2
        assert list(dots.x) == [integers[row]] * 2 and list(dots.y) == values[row].tolist()
    sent = fig.to_plotly_json()["layout"]  # the controls as Plotly.js gets them
    assert [s["label"] for s in sent["sliders"][0]["steps"]] == [str(k) for k in range(3, 10)]
    assert sent["updatemenus"][0]["buttons"][0]["args"][1]["frame"]["duration"] == 50
    # No integer positions marked (too many), or no frame_ms: nothing to play.
    for still in (
        sinusoidal.sinusoid_lines(
            smooth, np.zeros((50, 2)), np.zeros(0), np.zeros((0, 2)), labels=["a", "b"], frame_ms=50
        ),
        sinusoidal.sinusoid_lines(smooth, np.zeros((50, 2)), integers, values, labels=["a", "b"]),
    ):
        assert not still.frames and not still.layout.updatemenus


def _played_figures():
    smooth = np.linspace(3, 9, 50)
    integers = np.arange(3, 10)
    values = np.random.default_rng(3).uniform(-1, 1, size=(7, 3))
    points = np.random.default_rng(4).uniform(-1, 1, size=(7, 2, 2))
    return [
        sinusoidal.sinusoid_lines(
            smooth, np.zeros((50, 3)), integers, values, labels=["a", "b", "c"], frame_ms=50
        ),
        relative.unit_circles(points, pairs=[0, 3], frequencies=[1.0, 0.2], frame_ms=100),
    ]


@pytest.mark.parametrize("fig", _played_figures(), ids=["sinusoids", "circles"])
def test_a_played_figure_is_valid_plotly_and_its_frames_only_move_the_played_traces(fig):
    """Issue 51: the frames and the Play controls are plain dicts, not validated when built
    (base.PlayedFigure). plotly.py accepts the whole figure as sent (validation raises on any
    unknown property or value) and gives it back the same; a copy is the same figure; each
    frame carries only the x and y of the traces it names, whose style (colour, line, ring) the
    traces hold: Plotly.js merges a frame's trace into the trace it names."""
    sent = fig.to_plotly_json()
    assert isinstance(fig, base.PlayedFigure) and len(sent["frames"]) == 7
    assert set(sent["layout"]) >= {"updatemenus", "sliders"}
    assert {key: sent["layout"][key] for key in fig.controls} == fig.controls
    checked = go.Figure(sent).to_plotly_json()  # validated
    for frame in checked["frames"]:  # plotly.py names the type a frame's trace takes from its trace
        frame["data"] = [{k: v for k, v in t.items() if k != "type"} for t in frame["data"]]
    assert checked == sent
    assert copy.deepcopy(fig).to_plotly_json() == sent
    assert pickle.loads(pickle.dumps(fig)).to_plotly_json() == sent
    for frame in sent["frames"]:
        assert all(set(trace) <= {"x", "y"} for trace in frame["data"])
        for index, moved in zip(frame["traces"], frame["data"], strict=True):
            played = sent["data"][index]
            assert played["showlegend"] is False and played["hoverinfo"] == "skip"
            assert len(played["x"]) == len(moved["x"])


def test_smooth_curves_send_their_evenly_spaced_positions_as_a_start_and_step():
    """Issue 51: a smooth curve's positions (``np.linspace``) go as ``x0`` and ``dx``, from
    which Plotly computes ``x0 + i * dx``: the same positions; positions not evenly spaced go
    as they are."""
    for first, last in ((0, 99), (40, 139), (3, 9), (0, 999)):
        smooth = np.linspace(first, last, 2000)
        values = np.column_stack([np.sin(smooth), np.cos(smooth / 7)])
        fig = sinusoidal.sinusoid_lines(
            smooth, values, np.zeros(0), np.zeros((0, 2)), labels=["a", "b"]
        )
        for trace in fig.data:
            assert trace.x is None and trace.x0 == first
            computed = trace.x0 + np.arange(2000) * trace.dx
            np.testing.assert_array_equal(computed[:-1], smooth[:-1])
            assert computed[-1] == pytest.approx(last, rel=1e-15)
        # The words for a screen reader name the same positions as with the array.
        explicit = go.Figure(fig).update_traces(x=smooth, x0=None, dx=None)
        assert accessibility.text_alternative(fig) == accessibility.text_alternative(explicit)
    uneven = np.array([0.0, 1.0, 3.0, 4.0])
    fig = sinusoidal.sinusoid_lines(
        uneven, np.zeros((4, 1)), np.zeros(0), np.zeros((0, 1)), labels=["a"]
    )
    assert list(fig.data[0].x) == uneven.tolist() and fig.data[0].x0 is None


class TestLinkedHighlighting:
    """Issue 15: what is clicked in one chart of a view is marked in the other."""

    def test_a_pair_clicked_on_the_circles_is_outlined_in_the_rotation_matrix(self):
        # Interleaved: pair 5 is columns 10 and 11, neighbours in the window 8 .. 15: one
        # square around window cells 2 and 3 (the axis counts the window's cells from 0).
        (square,) = linked.block_outline(list(range(8, 16)), (10, 11))
        assert (square["x0"], square["x1"], square["y0"], square["y1"]) == (1.5, 3.5, 1.5, 3.5)
        assert square["line"]["color"] == linked.CHOSEN_COLOUR
        # Split (tensor2tensor): the window holds sin columns 0..3 then cos columns 8..11;
        # pair 2 is columns 2 and 10, window cells 2 and 6: its four entries, one cell each.
        cells = linked.block_outline([0, 1, 2, 3, 8, 9, 10, 11], (2, 10))
        corners = sorted((s["x0"] + 0.5, s["y0"] + 0.5) for s in cells)
        assert corners == [(2, 2), (2, 6), (6, 2), (6, 6)]
        assert all(s["x1"] - s["x0"] == 1 == s["y1"] - s["y0"] for s in cells)
        # A pair outside the window, or none: nothing drawn.
        assert linked.block_outline(list(range(8, 16)), (20, 21)) == []
        assert linked.block_outline(list(range(8, 16)), ()) == []

    def test_columns_are_shaded_where_the_chart_draws_them(self):
        bands = linked.column_bands([3, 6, 40], 16)
        assert [(b["x0"], b["x1"]) for b in bands] == [(2.5, 3.5), (5.5, 6.5)]
        assert all(b["yref"] == "paper" and b["layer"] == "below" for b in bands)

    def test_each_trace_of_the_circles_names_its_circle(self):
        pairs = [0, 16, 64]
        fig = relative.unit_circles(
            np.zeros((10, 3, 2)), pairs=pairs, frequencies=[1.0, 0.5, 0.1], frame_ms=100
        )
        # Every trace of circle j (outline, points, played vector) is on its axes, x{j+1}.
        for curve, trace in enumerate(fig.data):
            circle = relative.circle_of_curve(curve, len(pairs))
            assert trace.xaxis == ("x" if circle == 0 else f"x{circle + 1}")

    def test_the_clicked_position_is_drawn_thick_over_the_others(self):
        rows = np.zeros((3, 4))
        pairs = {
            "sin_columns": [0, 2, 4, 6],
            "cos_columns": [1, 3, 5, 7],
            "frequency": np.ones(4),
            "wavelength": np.ones(4),
        }
        fig = sinusoidal.dimension_lines(rows, rows, positions=[0, 5, 9], chosen=5, **pairs)
        lines = [t for t in fig.data if t.meta is None and t.y[0] is not None]
        assert [t.name for t in lines][-2:] == ["position 5 (chosen above)"] * 2  # drawn last
        chosen = lines[-1]
        assert chosen.line.color == linked.CHOSEN_COLOUR and chosen.line.width > 3
        assert all(t.opacity < 0.5 for t in lines[:-2])
        plain = sinusoidal.dimension_lines(rows, rows, positions=[0, 5, 9], **pairs)
        assert all(t.opacity == 1 for t in plain.data if t.meta is None and t.y[0] is not None)

    def test_clickable_points_show_the_choice(self):
        # A point of a line can be selected only where the trace has markers: the profile's
        # line has hidden ones that appear, in the chosen colour, when clicked.
        fig = similarity.offset_profile_chart(
            np.arange(5), np.ones(5), upper=None, checks={}, kind="cosine"
        )
        line = fig.data[0]
        assert "markers" in line.mode and line.marker.opacity == 0
        assert line.selected.marker.opacity == 1
        assert line.selected.marker.color == linked.CHOSEN_COLOUR


def test_rope_pairs_draw_at_most_so_many_markers_and_say_so():
    # Issue 14: at d_model 8192 the chart drew 8,192 markers (4,096 of them invisible click
    # targets), one page element each, and took 2.4 s to switch to. Every pair stays in the
    # data (hover and click); only what Plotly draws is thinned, and the subtitle says it.
    def chart(n_pairs):
        wavelengths = np.geomspace(6.28, 6e4, n_pairs)
        return rotary.rope_pair_chart(
            wavelengths,
            wavelengths,
            ["unchanged"] * n_pairs,
            lengths={"training": 4096},
            title="t",
            subtitle="head_dim 8",
        )

    few, many = chart(rotary.MARKERS_DRAWN), chart(rotary.MARKERS_DRAWN + 1)
    assert all(t.marker.maxdisplayed is None for t in few.data)
    assert "markers" not in few.layout.title.text
    assert [t.marker.maxdisplayed for t in many.data] == [rotary.MARKERS_DRAWN] * 2
    assert [len(t.x) for t in many.data] == [rotary.MARKERS_DRAWN + 1] * 2
    assert "head_dim 8; at most 512 markers a series (zoom in for every pair)" in (
        many.layout.title.text
    )


def test_matrix_panels_share_one_row_axis_and_one_colour_bar():
    panels = {
        "vaswani": pe_core.sinusoidal_encoding(5, 4),
        "split": pe_core.sinusoidal_encoding(5, 4, convention="split"),
    }
    fig = matrices.matrix_panels(panels, title="t")
    assert [t.name for t in fig.data] == ["vaswani", "split"]
    assert [t.showscale for t in fig.data] == [False, True]  # one colour bar
    assert {(t.zmin, t.zmax) for t in fig.data} == {(-1.0, 1.0)}  # one fixed colour range
    assert [t.xaxis for t in fig.data] == ["x", "x2"] and {t.yaxis for t in fig.data} == {"y"}
    assert fig.layout.xaxis2.matches == "x"  # zooming one panel zooms both
    for trace, values in zip(fig.data, panels.values(), strict=True):
        np.testing.assert_array_equal(trace.z, values.astype(np.float32))
    # Side by side, apart, in the order given; each named above its panel.
    assert fig.layout.xaxis.domain[1] < fig.layout.xaxis2.domain[0]
    assert [a.text for a in fig.layout.annotations] == ["<b>vaswani</b>", "<b>split</b>"]
    # Room for the colour bar, so that Plotly does not widen the margin and draw again.
    assert fig.layout.margin.r == base.MARGIN_RIGHT_COLOUR_BAR
    assert "vaswani: 5 × 4 cells" in accessibility.text_alternative(fig)


@pytest.mark.parametrize(
    ("trace", "drawn"),
    [
        ({"type": "heatmap"}, True),  # Plotly shows a heatmap's scale by default
        ({"type": "heatmap", "showscale": False}, False),
        ({"type": "heatmap", "showscale": np.False_}, False),
        ({"type": "scatter"}, False),
        ({"type": "scatter", "marker": None}, False),
        ({"type": "scatter", "marker": {"color": [1, 2]}}, False),  # a scatter's only if told
        ({"type": "scatter", "marker": {"showscale": True}}, True),
    ],
)
def test_which_traces_draw_a_colour_bar(trace, drawn):
    assert base._has_colour_bar(trace) is drawn


def test_matrix_panels_need_a_matrix():
    with pytest.raises(ValueError, match="panels"):
        matrices.matrix_panels({}, title="t")


def test_a_colour_bar_gets_its_margin():
    heatmap = matrices.matrix_heatmap(np.eye(2), rows=[0, 1], columns=[0, 1], title="m")
    lines = charts.curves(np.arange(3), {"a": np.ones(3)}, title="c", x_title="x", y_title="y")
    assert heatmap.layout.margin.r == base.MARGIN_RIGHT_COLOUR_BAR
    assert lines.layout.margin.r == base.MARGIN_RIGHT


def test_curves_of_one_x_are_drawn_as_points():
    """Distance at L = 1: each family's curve is one point (δ = 0); Plotly draws no line of one
    point, so a line-only trace left the chart empty under its legend."""
    one = charts.curves(np.arange(1), {"a": np.zeros(1)}, title="c", x_title="x", y_title="y")
    many = charts.curves(np.arange(3), {"a": np.ones(3)}, title="c", x_title="x", y_title="y")
    assert one.data[0].mode == "lines+markers"
    assert many.data[0].mode == "lines"
