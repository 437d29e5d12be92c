"""The Streamlit app, driven by AppTest: defaults, views, presets, URL state, bad input."""

import logging

import numpy as np
import pytest

import pe_core
from dashboard import registry, sidebar, state
from dashboard.config import Config
from tests.apptest_helpers import (
    SIDEBAR_VIEWS,
    decode,
    figure_payloads,
    figures,
    images,
    new_app,
    no_errors,
    open_view,
    page_of,
    similarity_images,
)

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def default_app():
    at = new_app()
    at.run()
    return at


@pytest.fixture(scope="module")
def paper_app():
    """The paper's configuration, as a link names it (the largest picture the Heatmap draws at
    full resolution)."""
    at = new_app(L=2048, d=512)
    at.run()
    return at


class TestDefaults:
    def test_opens_on_a_heatmap_that_shows_every_position_and_column(self, default_app):
        """Issue 52: a demo default where the picture reads at once (300 x 64: one row a
        position and every column wide enough to see), the paper's one click away."""
        no_errors(default_app)
        ((header, values),) = images(default_app)
        assert values.shape == (sidebar.DEFAULT_POSITIONS, sidebar.DEFAULT_D_MODEL) == (300, 64)
        assert header["rowLast"] is None  # one row a position
        exact = pe_core.sinusoidal_encoding(300, 64)
        np.testing.assert_allclose(values, exact, rtol=0, atol=1 / 254 + 1e-7)
        caption = default_app.caption[0].value
        assert "300 positions, d_model 64" in caption and "vaswani" not in caption

    def test_the_paper_s_configuration_is_one_click_away(self):
        at = new_app()
        at.run()
        at.button(key="paper_configuration").click().run()
        no_errors(at)
        assert (at.session_state["L"], at.session_state["d"]) == (2048, 512)
        assert at.session_state["preset"] == "Attention Is All You Need"
        assert dict(at.query_params) == {"L": "2048", "d": "512"}  # a link that names them
        assert not [b for b in at.button if b.key == "paper_configuration"]

    def test_a_link_that_names_the_paper_s_values_opens_them(self, paper_app):
        no_errors(paper_app)
        assert (paper_app.session_state["L"], paper_app.session_state["d"]) == (2048, 512)
        assert dict(paper_app.query_params) == {"L": "2048", "d": "512"}

    def test_the_paper_s_heatmap_at_full_resolution(self, paper_app):
        ((header, values),) = images(paper_app)
        # Issue 9: the 2,048 x 512 encoding at full resolution, one row a position.
        assert values.shape == (2048, 512)
        assert header["rowFirst"] == list(range(2048)) and header["rowLast"] is None
        assert header["subtitle"] == "every position and every column"

    def test_image_is_the_encoding(self, paper_app):
        ((_, values),) = images(paper_app)
        exact = pe_core.sinusoidal_encoding(2048, 512)
        # One of 255 gray levels a cell: within half a level (1/254) of the exact value, plus
        # the float32 rounding of the values drawn.
        np.testing.assert_allclose(values, exact, rtol=0, atol=1 / 254 + 1e-7)

    def test_payload_is_small(self, paper_app):
        # Issue 14: the largest payload at the paper's size under 500 kB (a PNG, not JSON).
        (element,) = [
            element
            for element in paper_app.get("bidi_component")
            if element.proto.component_name.endswith("pe_encoding_image")
        ]
        assert len(element.proto.bytes) < 500_000

    def test_hover_describes_cells(self, default_app):
        ((header, _),) = images(default_app)
        assert header["columnLabels"][3].startswith("column 3: pair i=1, cos, ω=")

    def test_clean_url_at_defaults(self, default_app):
        assert default_app.query_params == {}


@pytest.mark.parametrize("view", SIDEBAR_VIEWS)
def test_each_view_runs(view):
    at = new_app()
    at.run()
    open_view(at, view)
    no_errors(at)
    if view == "example":  # the worked example: its matrix as a table, no chart
        assert at.dataframe, "example shows no table"
    else:
        assert figures(at) or images(at), f"{view} shows no chart"
    # The view is the page (its URL path), no longer a "view" parameter.
    assert page_of(at) == view and "view" not in at.query_params
    assert max(figure_payloads(at), default=0) < 4_000_000


@pytest.mark.parametrize(
    "preset", ["Tutorial", "Lab", "d2l", "Annotated Transformer", "Attention Is All You Need"]
)
def test_each_preset(preset):
    at = new_app(L=50, d=6)
    at.run()
    at.selectbox(key="preset").select(preset).run()
    no_errors(at)
    values = {
        "Tutorial": (10, 4, 100.0),
        "Lab": (128, 256, 10000.0),
        "d2l": (60, 32, 10000.0),
        "Annotated Transformer": (100, 20, 10000.0),
        "Attention Is All You Need": (2048, 512, 10000.0),
    }[preset]
    assert (at.session_state["L"], at.session_state["d"], at.session_state["base"]) == values
    ((_, z),) = images(at)
    assert z.shape == values[:2]
    if preset == "Annotated Transformer":
        open_view(at, "sinusoids")
        no_errors(at)
        names = [t["name"] for t in figures(at)[0]["data"] if t.get("name", "").startswith("dim")]
        names = [n for n in names if "integer" not in n]  # the curves, not their markers
        assert [n.split(" ")[1] for n in names] == ["4", "5", "6", "7"]


def test_tutorial_shows_the_textbook_table():
    at = new_app()
    at.run()
    at.selectbox(key="preset").select("Tutorial").run()
    table = at.dataframe[0].value
    assert table.shape == (10, 4)
    assert table.iloc[1].tolist() == [0.8415, 0.5403, 0.0998, 0.995]


def test_changing_a_parameter_changes_the_figure():
    # (That the address bar then holds d=16 is the browser's doing with bound widgets: see
    # tests/browser/test_app.py::test_url_follows_every_change_and_reopens_the_same_state.)
    at = new_app(L=64, d=32)
    at.run()
    ((_, before),) = images(at)
    at.number_input(key="d").set_value(16).run()
    ((_, after),) = images(at)
    assert before.shape == (64, 32) and after.shape == (64, 16)
    assert at.session_state["d"] == 16


class TestUrl:
    def test_parameters_are_read(self):
        at = new_app(L=100, d=20, base=500, conv="split", view="sinusoids", dims="4,5,6,7")
        at.run()
        no_errors(at)
        assert not at.warning
        assert at.number_input(key="L").value == 100
        assert at.number_input(key="d").value == 20
        assert at.select_slider(key="base").value == 500.0
        assert at.selectbox(key="conv").value == "split"
        assert at.multiselect(key="dims").value == [4, 5, 6, 7]  # an old link's "4,5,6,7"
        assert page_of(at) == "sinusoids"

    @pytest.mark.parametrize("base", ["1000001", "123456.7", "2.5", "1e+06"])
    def test_a_base_between_the_stops_is_kept_to_the_last_digit(self, base):
        # %g kept six digits: a link's base=1000001 became 1e+06 (found by the app fuzz test).
        at = new_app(base=base)
        at.run()
        no_errors(at)
        assert at.session_state["base"] == float(base)
        assert float(at.query_params["base"]) == float(base)
        assert not at.warning

    def test_the_page_writes_a_base_between_the_stops_with_every_digit(self):
        at = new_app(base="1000001.5", d=7)
        at.run()
        no_errors(at)
        captions = " ".join(caption.value for caption in at.caption)
        assert "base 1,000,001.5, sin and cos interleaved" in captions  # %g wrote 1e+06
        ((header, _),) = images(at)
        assert "base 1,000,001.5" in header["title"]

    def test_bad_values_warn_and_fall_back(self):
        at = new_app(L="abc", d=0, base=-1, conv="bert", view="nope", prec="float8", spam="1")
        at.run()
        no_errors(at)
        text = " ".join(w.value for w in at.warning).replace("\\", "")  # as displayed
        for key in ("L=abc", "d=0", "base=-1", "conv=bert", "view=nope", "prec=float8", "spam"):
            assert key in text
        assert at.number_input(key="L").value == sidebar.DEFAULT_POSITIONS  # not a number
        assert at.number_input(key="d").value == 1  # out of range: the nearest allowed value
        assert "d=0 (d_model: out of range, expected 1 to 8,192); using 1 instead" in text
        assert images(at)

    @pytest.mark.parametrize("view", SIDEBAR_VIEWS)
    def test_a_link_stays_the_same_link(self, view):
        link = {"L": "100", "d": "20", "base": "500", "conv": "split"}
        at = new_app(**link, view=view)  # an old link: the view moves into the page's path
        at.run()
        no_errors(at)
        assert at.query_params == link and page_of(at) == view
        assert not at.warning

    def test_huge_values_are_refused(self):
        at = new_app(L=10**12, d=10**6)
        at.run()
        assert len(at.warning) == 2
        # The nearest allowed value, as for a value typed into the box (issue 9).
        assert at.number_input(key="L").value == 1_000_000
        assert at.number_input(key="d").value == 8192
        assert "using 1,000,000 instead" in at.warning[0].value.replace("\\", "")

    def test_shared_link_round_trip(self):
        # The browser writes the link (bound widgets); that it holds L=300, conv=tensor2tensor on
        # /similarity is checked in tests/browser. Here: that link opens the same state again.
        at = new_app()
        at.run()
        at.number_input(key="L").set_value(300).run()
        at.selectbox(key="conv").select("tensor2tensor").run()
        open_view(at, "similarity")
        assert (at.session_state["L"], at.session_state["conv"]) == (300, "tensor2tensor")
        again = new_app(L=300, conv="tensor2tensor", view="similarity")
        again.run()
        assert again.number_input(key="L").value == 300
        assert again.selectbox(key="conv").value == "tensor2tensor"
        ((header, matrix),) = similarity_images(again)  # the similarity matrix
        assert matrix.shape == (300, 300) and header["kind"] == "cosine"


@pytest.mark.parametrize("view", SIDEBAR_VIEWS)
def test_odd_d_model(view):
    at = new_app(L=300, d=7, view=view)
    at.run()
    no_errors(at)
    if view == "rotation":  # no rotation matrix exists at odd d_model: the view says so
        assert "No such matrix exists for odd d_model = 7" in at.warning[0].value
        # ... and draws what exists: the 3 pairs of the other 6 columns on their circles.
        assert "other 6 columns still form 3 sin/cos pairs" in at.warning[0].value
        (circles,) = at.get("plotly_chart")
        assert "pair i=0" in circles.proto.spec
        assert not circles.proto.selection_mode  # no M to outline a clicked pair in
        assert "block in M" not in " ".join(c.value for c in at.caption)
    elif view == "example":
        assert at.dataframe
    else:
        assert figures(at) or images(at) or similarity_images(at)


def test_every_view_at_the_default_sends_each_chart_in_under_500_kB():
    """Issue 14: at the default configuration no chart's payload (a Plotly figure's JSON or an
    image's bytes) reaches 500 kB; the similarity matrix, 1.48 MB as a Plotly heatmap, is now
    its compressed float32 values."""
    at = new_app()
    at.run()
    for view in (view.slug for view in registry.VIEWS):
        open_view(at, view)
        no_errors(at)
        sizes = figure_payloads(at) + [
            len(element.proto.bytes) for element in at.get("bidi_component")
        ]
        assert max(sizes, default=0) < 500_000, view
        if view == "similarity":
            assert max(sizes) < 100_000


def test_the_dimension_chart_sends_each_pair_once():
    """Issue 14: each line of the Sinusoids view's lower chart carried every column's words for
    its hover: 2.83 MB at d_model 8192 (179 kB at the default). The words go once per pair."""
    for d_model, most in ((512, 60_000), (8192, 800_000)):
        at = new_app(d=d_model, view="sinusoids")
        at.run()
        no_errors(at)
        assert figure_payloads(at)[1] < most, d_model


def test_a_single_position_shows_no_range_of_positions():
    """At L = 1 the Sinusoids view said there was a single position while its "Positions
    shown" input read 2 (its lowest value): the inputs of a range are not shown there."""
    at = new_app(view="sinusoids", L=1)
    at.run()
    no_errors(at)
    assert "single position" in " ".join(info.value for info in at.info)
    assert [field.label for field in at.number_input if field.key in ("sin_from", "sin_span")] == []
    at.number_input(key="L").set_value(50).run()
    no_errors(at)
    assert at.number_input(key="sin_span").value == 50  # the default, at most L


def test_a_base_that_leaves_the_curves_keeps_the_position_chart():
    """Issue 51: the Sinusoids view opens on dimension 0 (at d_model 64), whose frequency is
    base^0 = 1 at every base. A step of the base built its chart anew (about 20 ms of each
    step's script) and the browser was sent the same chart; now the chart object, and so what
    Streamlit sends (the element's id), stays. A dimension that turns slower still changes."""
    at = new_app(view="sinusoids")
    at.run()
    no_errors(at)
    shown = lambda: at.session_state[state.LAST_CHART + "sinusoids_position"]  # noqa: E731
    ids = lambda: [element.proto.id for element in at.get("plotly_chart")]  # noqa: E731
    before, (position_id, dimension_id) = shown(), ids()
    assert at.multiselect(key="dims").value == [0]
    at.select_slider(key="base").set_value(20000.0).run()
    no_errors(at)
    assert shown() is before and ids()[0] == position_id
    assert ids()[1] != dimension_id  # the chart across the pairs does depend on the base
    at.multiselect(key="dims").set_value([0, 2]).run()
    changed = shown()
    at.select_slider(key="base").set_value(10000.0).run()
    assert shown() is not changed  # dimension 2 turns at base^(-2/64): a new chart


#: The views whose page at the top of the ranges is heavy (the heatmap's image of 2**21 cells, the
#: similarity of a million positions, the uniqueness search, the conventions' tables: 0.6 to 1.5
#: s of CPU each in the quick loop): slow; the others run in the quick tier too (0.04 to 0.2 s
#: each, measured one by one with -n 0 on 2026-11-28).
HEAVY_AT_THE_TOP = {"heatmap", "similarity", "uniqueness", "conventions"}
AT_THE_TOP = [
    pytest.param(view, marks=pytest.mark.slow) if view in HEAVY_AT_THE_TOP else view
    for view in SIDEBAR_VIEWS
]


@pytest.mark.parametrize("view", AT_THE_TOP)
def test_top_of_every_range(view):
    at = new_app(L=1_000_000, d=8192, base=1e9, view=view)
    at.run()
    no_errors(at)
    for figure in figures(at):
        for trace in figure["data"]:
            if trace["type"] == "heatmap":
                assert decode(trace["z"]).size <= 1 << 18
    for _, values in images(at):
        assert values.size <= 1 << 21  # the image heatmap: at most 2,048 x 1,024 cells
    for _, matrix in similarity_images(at):
        assert matrix.shape == (512, 512)  # the similarity image: every 1,954th position
    assert max(figure_payloads(at), default=0) < 4_000_000


@pytest.mark.slow
def test_odd_d_model_at_a_million_positions_explains_itself():
    at = new_app(L=1_000_000, d=7, view="uniqueness", prec="float64")
    at.run()
    no_errors(at)
    # Issue 37: in the page's words (what to change), not the API's ("an int L").
    text = " ".join(w.value for w in at.info)
    assert "pair by pair" in text and "up to 4,096 positions" in text
    assert "L to 4,096 or fewer" in text and "even number (6 or 8)" in text
    assert "int L" not in text and "pass fewer" not in text
    # ... and shows what it can: the first 4,096 positions, checked pair by pair.
    assert "Below: the first 4,096 of the 1,000,000" in text
    verdict = at.success[0].value if at.success else at.warning[0].value
    assert "4,096 positions" in verdict
    report = pe_core.uniqueness_report(4096, 7)
    assert f"{report.min_distance:.4g}" == at.metric[0].value
    assert figure_payloads(at)


def test_uniqueness_opens_where_positions_collide():
    """Issue 52: the page opens where its point shows, bfloat16 position ids."""
    at = new_app(view="uniqueness")
    at.run()
    no_errors(at)
    assert "positions 256 and 257 collide at bfloat16" in at.warning[0].value.lower()


@pytest.mark.parametrize("query", [{"L": 1, "d": 3}, {"L": 1, "d": 512}])
def test_uniqueness_draws_no_empty_chart_and_does_not_mention_one(query):
    """One position: nothing to compare, so no chart (an empty one was drawn under "1 position:
    nothing to compare"), and the explanation does not speak of one."""
    at = new_app(view="uniqueness", **query)
    at.run()
    no_errors(at)
    assert not at.get("plotly_chart")
    assert "1 position: nothing to compare" in at.info[0].value
    assert not any("The chart shows" in e.value for e in at.markdown)


def test_uniqueness_at_two_positions_draws_its_chart():
    at = new_app(view="uniqueness", L=2, d=4)
    at.run()
    no_errors(at)
    assert len(at.get("plotly_chart")) == 1


def test_float64_position_ids_hold_every_position():
    """float64 with the position ids cast (the page's default rounding place): nothing
    overflows (its threshold is infinite; int(inf) raised before)."""
    at = new_app(view="uniqueness", prec="float64")
    at.run()
    no_errors(at)
    assert "all 300 positions have distinct encodings" in at.success[0].value.lower()


def test_precision_changes_the_verdict():
    at = new_app(L=1000, d=512, view="uniqueness", prec="float64")
    at.run()
    assert "all 1,000 positions have distinct encodings" in at.success[0].value.lower()
    at.segmented_control(key="prec").set_value("bfloat16").run()
    at.segmented_control(key="cast").set_value("positions").run()
    assert "positions 256 and 257 collide" in at.warning[0].value.lower()
    no_errors(at)


def test_all_zero_encoding_explains_itself():
    at = new_app(L=50, d=1, conv="tensor2tensor", view="similarity")
    at.run()
    no_errors(at)
    assert not at.warning
    assert any("zero vector" in i.value for i in at.info)
    assert not figures(at)


def _failing_view_script():
    import plotly.graph_objects as go
    import streamlit as st

    import pe_core
    from dashboard import budget, params, ui, uploads

    ui.start_run()

    def fail(kind):
        if kind == "input":
            pe_core.sinusoidal_encoding(4, 0)  # the core refuses bad input
        if kind == "upload":
            raise uploads.UploadError("the upload is empty")
        if kind == "link":
            raise params.Invalid("expected true or false")
        if kind == "budget":
            budget.check_request(2**40, "second chart")
        if kind == "bug":
            [][0]  # an IndexError: a bug, not the reader's input
        if kind == "bug_value":
            int("second chart impossible")  # a ValueError, but a bug all the same

    def render():
        ui.chart(go.Figure(go.Scatter(y=[1, 2])), "demo_first")
        fail(st.session_state.get("fail"))
        ui.chart(go.Figure(go.Scatter(y=[3, 4])), "demo_second")

    ui.guarded("demo", render)


@pytest.mark.parametrize(
    ("failure", "advice"),
    [
        ("input", "d_model must be a positive integer, got 0"),
        ("upload", "the upload is empty"),
        ("link", "expected true or false"),
        ("budget", "MiB one request of this app may use"),
    ],
)
def test_input_error_is_advice_and_keeps_the_last_good_figures_but_not_twice(failure, advice):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_failing_view_script, default_timeout=60)
    at.run()
    assert len(at.get("plotly_chart")) == 2 and not at.warning
    at.session_state["fail"] = failure
    at.run()
    assert advice in at.warning[0].value
    assert not at.error
    # The first chart was drawn in this run; only the second comes from the last good run.
    assert len(at.get("plotly_chart")) == 2
    assert len([c for c in at.caption if "Last valid figure" in c.value]) == 1
    assert not at.exception


@pytest.mark.parametrize("failure", ["bug", "bug_value"])
def test_other_exception_is_a_bug_not_advice(failure, caplog):
    """Any exception other than pe_core.InputError (a plain ValueError included) is reported
    as a bug and logged with its traceback; the page keeps the last good figures."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_failing_view_script, default_timeout=60)
    at.run()
    at.session_state["fail"] = failure
    with caplog.at_level(logging.ERROR, logger="pe_explorer"):
        at.run()
    assert not at.warning
    assert "Something went wrong while drawing this view" in at.error[0].value
    assert "second chart impossible" not in at.error[0].value
    assert [r for r in caplog.records if r.name == "pe_explorer" and r.exc_info]
    assert len(at.get("plotly_chart")) == 2
    assert not at.exception


def test_url_text_is_shown_literally():
    # A crafted link must not inject Markdown (links, images, math) into the warning.
    at = new_app(L="[click](http://evil.invalid)", conv="![x](http://evil.invalid/x.png)")
    at.run()
    no_errors(at)
    text = " ".join(w.value for w in at.warning)
    assert r"\[click\]\(http\:" in text and r"\!\[x\]" in text


def test_block_means_are_the_encoding_means():
    # Beyond 2,048 positions each row is the mean of a block (closed form, computed 256 rows
    # at a time): the same numbers as one call on the whole range, to float32 rounding.
    from dashboard.config import Config
    from dashboard.views.heatmap import heatmap_data

    data = heatmap_data(Config(100_000, 10, 10000.0, "vaswani"), "blocks", 0, 0)
    assert data.values.shape == (2041, 10) and data.row_first[1] == 49
    exact = pe_core.block_mean_encoding(100_000, 10, 49)
    np.testing.assert_allclose(data.values, exact, rtol=0, atol=6e-8)
    assert data.note.startswith("each row is the mean of 49 consecutive positions")
    at = new_app(L=100_000, d=10)
    at.run()
    ((header, z),) = images(at)
    np.testing.assert_allclose(z, exact, rtol=0, atol=1 / 254 + 1e-7)  # half a gray level
    assert header["rowLast"][1] == 97


def test_column_window_shows_the_right_columns():
    at = new_app(L=100, d=2000, hm_col=500)
    at.run()
    no_errors(at)
    ((header, z),) = images(at)
    exact = pe_core.sinusoidal_encoding(100, 2000)[:, 500:1524]
    np.testing.assert_allclose(z, exact, rtol=0, atol=1 / 254 + 1e-7)  # half a gray level
    assert header["columnLabels"][0].startswith("column 500: pair i=250, sin")


class TestPages:
    """Issue 37: each page is named, says what it shows, and has only the controls it reads."""

    SIDEBAR_KEYS = ("L", "d", "base", "conv")

    def _sidebar_keys(self, at) -> set[str]:
        kinds = ("number_input", "select_slider", "selectbox")
        drawn = {w.key for kind in kinds for w in getattr(at.sidebar, kind)}
        return drawn & set(self.SIDEBAR_KEYS)

    def _config(self, at) -> Config:
        def value(param):
            return at.session_state.get(param.key, param.default)

        return Config(*(value(param) for param in sidebar.SHARED_WIDGETS.values()))

    @pytest.mark.parametrize("view", registry.VIEWS, ids=lambda v: v.slug)
    def test_each_page_has_its_title_subtitle_and_only_its_controls(self, view):
        at = new_app(view=view.slug)
        at.run()
        no_errors(at)
        assert at.title[0].value == view.label
        assert at.caption[0].value == view.module.subtitle(self._config(at))
        assert "Positional Encoding Explorer" not in [t.value for t in at.title]
        assert self._sidebar_keys(at) == set(view.shared(lambda p: at.session_state[p.key]))

    def test_pages_that_read_no_sidebar_parameter_show_none(self):
        for query in (
            {"view": "lesson"},
            {"view": "check"},
            {"view": "rope", "rope_model": "Llama 3 8B"},
        ):
            at = new_app(query)
            at.run()
            assert self._sidebar_keys(at) == set(), query
        at = new_app(view="check", example="float32 angles")
        at.run()
        assert self._sidebar_keys(at) == set(self.SIDEBAR_KEYS)  # the example is built from them

    def test_values_survive_a_page_that_does_not_show_them(self):
        at = new_app(view="similarity", d=64, L=300, base=100, conv="tensor2tensor")
        at.run()
        open_view(at, "lesson")
        assert self._sidebar_keys(at) == set()
        open_view(at, "similarity")
        no_errors(at)
        assert (at.session_state["d"], at.session_state["L"]) == (64, 300)
        assert (at.session_state["base"], at.session_state["conv"]) == (100.0, "tensor2tensor")
        assert "d_model 64" in at.caption[0].value

    def test_a_link_to_a_page_drops_the_sidebar_values_it_does_not_read_without_a_warning(self):
        at = new_app(view="lesson", d=64)
        at.run()
        no_errors(at)
        assert at.session_state["_link_warnings"] == []
        assert "d" not in at.query_params

    def test_the_default_view_answers_at_its_slug(self):
        at = new_app()
        at.run()
        assert at.title[0].value == registry.DEFAULT.label
        # /heatmap: a hidden page of the navigation that opens the default view
        at._page_hash = next(
            page_hash
            for page_hash, info in at._registered_pages.items()
            if info.get("url_pathname") == registry.DEFAULT.slug
        )
        at.run()
        no_errors(at)
        assert at.title[0].value == registry.DEFAULT.label
        assert page_of(at) == registry.DEFAULT.slug
