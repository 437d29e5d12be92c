"""AppTest for the rotation, embeddings, conventions and worked-example views."""

import html
import io
import json

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

import pe_core
from dashboard import claims, formatting, params, registry, ui
from dashboard.figures import matrices
from dashboard.views import rotation
from tests import DATA
from tests.apptest_helpers import (
    SIDEBAR_VIEWS,
    decode,
    figures,
    new_app,
    no_errors,
    open_view,
    page_of,
)

pytestmark = pytest.mark.timeout(600)

PRESETS = ["Tutorial", "Lab", "d2l", "Annotated Transformer", "Attention Is All You Need"]


@pytest.mark.parametrize(
    "view",
    # Conventions' tables and the rotation's matrices under five presets took 0.4 to 0.8 s of CPU
    # in the quick loop (slow); the others 0.07 to 0.18 s (-n 0).
    [
        pytest.param(v, marks=pytest.mark.slow) if v in ("conventions", "rotation") else v
        for v in SIDEBAR_VIEWS
    ],
)
def test_each_view_under_each_preset(view):
    at = new_app(view=view)  # one session, every preset in turn (as a teacher would)
    at.run()
    for preset in PRESETS:
        at.selectbox(key="preset").select(preset).run()
        no_errors(at)
        assert at.selectbox(key="preset").value == preset, preset
        assert page_of(at) == view and "view" not in at.query_params


@pytest.mark.parametrize("view", SIDEBAR_VIEWS)
@pytest.mark.parametrize("d_model", [1, 7])
def test_odd_d_model(view, d_model):
    at = new_app(view=view, d=d_model, L=50)
    at.run()
    no_errors(at)


class TestRotation:
    def test_residual_and_matrix(self):
        at = new_app(view="rotation", L=100, d=8, base=100, rot_offset=3, rot_k=7)
        at.run()
        no_errors(at)
        residual = next(m for m in at.metric if "M(δ) @ PE(k)" in m.label)
        assert float(residual.value) < 1e-12
        matrix = decode(figures(at)[0]["data"][0]["z"])
        np.testing.assert_allclose(matrix, pe_core.relative_rotation(3, 8, base=100), atol=1e-7)

    def test_odd_d_model_explains_why(self):
        at = new_app(view="rotation", d=7)
        at.run()
        assert any("no cos partner" in w.value for w in at.warning)

    def test_offset_in_the_url(self):
        # A link's offset is read (the browser writes it back: tests/browser, bound widgets).
        at = new_app(view="rotation", rot_offset="12")
        at.run()
        assert at.number_input(key="rot_offset").value == 12.0
        at.number_input(key="rot_offset").set_value(3.5).run()
        assert at.session_state["rot_offset"] == 3.5

    def test_a_pair_clicked_on_the_circles_is_brought_into_the_matrix_and_outlined(self):
        # What the circles' click leaves (tests/browser/test_linked.py clicks in a browser): pair
        # 64 of d_model 512, outside the window of pairs 0-15.
        at = new_app(view="rotation", d=512, rot_offset=1, rot_k=5)
        at.run()
        # The selection a click on circle 3 (pairs 0, 16, 64, 160; its points: trace 5) leaves.
        at.session_state[rotation.CIRCLES_KEY] = {"selection": {"points": [{"curve_number": 5}]}}
        at.run()
        no_errors(at)
        assert at.number_input(key="rot_first").value == 64
        matrix, vectors = figures(at)[:2]
        # Pair 64 is columns 128 and 129, the window's first two cells.
        (outline,) = matrix["layout"]["shapes"]
        assert (outline["x0"], outline["x1"]) == (-0.5, 1.5)
        assert "shapes" not in vectors["layout"]  # columns 128, 129: beyond the 32 drawn
        words = next(c.value for c in at.caption if c.value.startswith("Pair 64"))
        # w_64 = 10000^(-128/512) = 0.1; k = 5: (sin 0.5, cos 0.5) to (sin 0.6, cos 0.6).
        assert "δ·ω_64 = 0.1 rad" in words
        assert f"({np.sin(0.5):.6f}, {np.cos(0.5):.6f})" in words
        assert f"({np.sin(0.6):.6f}, {np.cos(0.6):.6f})" in words
        assert "(outlined in M)" in words
        # The user moves the window away: it stays there (brought once, at the click).
        at.number_input(key="rot_first").set_value(0).run()
        assert at.number_input(key="rot_first").value == 0
        assert "shapes" not in figures(at)[0]["layout"]
        assert "(outlined in M)" not in next(
            c.value for c in at.caption if c.value.startswith("Pair 64")
        )

    def test_a_cos_first_pair_is_named_by_its_roles_and_forgotten_on_another_d_model(self):
        # diffusers' layout puts the cos half first: pair 0 is sin column 20, cos column 0.
        at = new_app(view="rotation", d=40, conv="diffusion", rot_pairs="0")
        at.run()
        at.session_state[rotation.CIRCLES_KEY] = {"selection": {"points": [{"curve_number": 1}]}}
        at.run()
        no_errors(at)
        words = next(c.value for c in at.caption if c.value.startswith("Pair 0"))
        assert words.startswith("Pair 0 (sin column 20, cos column 0)")
        assert "columns 0 and 20 shaded in the vector chart" in words
        bands = figures(at)[1]["layout"]["shapes"]
        assert [(b["x0"], b["x1"]) for b in bands] == [(-0.5, 0.5), (19.5, 20.5)]
        # Another d_model redraws the circles (the browser drops their selection): the pick is
        # not shown on the new matrix.
        at.number_input(key="d").set_value(64).run()
        no_errors(at)
        assert not any(c.value.startswith("Pair 0") for c in at.caption)
        assert "shapes" not in figures(at)[0]["layout"]

    def test_large_d_model_says_what_it_shows(self):
        at = new_app(view="rotation", d=4096)
        at.run()
        no_errors(at)
        assert any("built here for d_model up to" in i.value for i in at.info)


class TestEmbeddings:
    def test_sentences_shapes_and_broadcast(self):
        at = new_app(view="embeddings", d=16, L=20)
        at.run()
        no_errors(at)
        assert (
            "(3, 7, 16)"
            in at.markdown[[("Shapes" in m.value) for m in at.markdown].index(True)].value
        )
        embeddings, encoding, total, _ = figures(at)
        e, p, s = (decode(f["data"][0]["z"]) for f in (embeddings, encoding, total))
        np.testing.assert_allclose(s, e + p, atol=1e-5)  # float32 on the wire
        np.testing.assert_allclose(p, pe_core.sinusoidal_encoding(7, 16), atol=1e-6)

    def test_random_tokens_and_dropout(self):
        at = new_app(
            view="embeddings", d=8, L=20, emb_mode="random", emb_batch=2, emb_seq=5, emb_dropout=0.5
        )
        at.run()
        no_errors(at)
        total = decode(figures(at)[2]["data"][0]["z"])
        assert total.shape == (5, 8) and np.any(total == 0)

    def test_empty_text(self):
        at = new_app(view="embeddings")
        at.run()
        at.text_area(key="emb_text").set_value("   ").run()
        no_errors(at)
        assert any("at least one sentence" in i.value for i in at.info)

    def test_norm_chart(self):
        at = new_app(view="embeddings", d=4)
        at.run()
        norms = figures(at)[-1]
        encoding = next(t for t in norms["data"] if t["name"] == "encoding")
        np.testing.assert_allclose(decode(encoding["y"]), np.sqrt(2.0))

    def test_a_rerun_reuses_the_charts_and_another_sequence_draws_its_own(self):
        """Issue 51: the three panels and the norms chart were built anew on every run; keyed
        by what they draw (``caching.figure_of``), a rerun reuses them, and choosing another
        sequence of the batch redraws only the panels of that sequence."""
        from dashboard import state

        keys = ("emb_embeddings", "emb_encoding", "emb_total", "emb_norms")
        at = new_app(view="embeddings", d=8, L=20, emb_mode="random", emb_batch=2, emb_seq=5)
        at.run()
        no_errors(at)
        shown = lambda: [at.session_state[state.LAST_CHART + key] for key in keys]  # noqa: E731
        before = shown()
        at.run()
        no_errors(at)
        assert [a is b for a, b in zip(shown(), before, strict=True)] == [True] * 4
        at.select_slider(key="emb_item").set_value(1).run()
        no_errors(at)
        same = [a is b for a, b in zip(shown(), before, strict=True)]
        assert same == [False, True, False, True]  # the encoding and the norms are the batch's


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


class TestConventionsLab:
    def test_layout_permutes_spacing_changes(self):
        at = new_app(view="conventions", L=200, d=64)
        at.run()
        no_errors(at)
        said = {m.value.split(":", 1)[0]: m.value for m in at.markdown if m.value.startswith("**")}
        # Issue 53, case 10: each number is said as what it is, a largest difference.
        split = said["**split**"]
        assert "entries differ by at most **0** once vaswani's columns are permuted" in split
        assert "differs by at most **0** (offsets 0 to 199; same frequencies" in split
        t2t = said["**tensor2tensor**"]
        shown = float(t2t.split("differs by at most **")[1].split("**")[0])
        assert shown > 1e-3 and "(offsets 0 to 199; another spacing)" in t2t
        assert not at.metric


@pytest.mark.parametrize(("n_positions", "d_model"), [(200, 64), (1, 7), (2, 1)])
def test_conventions_panels_show_each_convention_s_table(n_positions, d_model):
    at = new_app(view="conventions", L=n_positions, d=d_model)
    at.run()
    no_errors(at)
    spec = next(f for f in figures(at) if len(f["data"]) == len(pe_core.CONVENTIONS))
    rows, columns = min(n_positions, 64), min(d_model, 32)
    for trace, name in zip(spec["data"], pe_core.CONVENTIONS, strict=True):
        assert trace["name"] == name
        expected = pe_core.sinusoidal_encoding(rows, d_model, convention=name)[:, :columns]
        np.testing.assert_array_equal(decode(trace["z"]), expected.astype(np.float32))
    listed = " ".join(m.value for m in at.markdown)
    for name, convention in pe_core.CONVENTIONS.items():
        assert f"**{name}**" in listed and convention.formula in listed


def _upload_to_check(name: str, data: bytes, mime: str = "application/octet-stream") -> AppTest:
    """The Check view with this file uploaded."""
    at = new_app(view="check")
    at.run()
    at.file_uploader(key="check_upload").upload(name, data, mime).run()
    return at


class TestCheckMyEncoding:
    @pytest.mark.parametrize("convention", list(pe_core.CONVENTIONS))
    @pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
    def test_identify_uploads(self, convention, dtype):
        matrix = pe_core.sinusoidal_encoding(
            2 + np.arange(80), 32, convention=convention, dtype=dtype
        )
        at = _upload_to_check("mine.npy", _npy(matrix))
        no_errors(at)
        assert (
            f"Identified: {convention} convention, base 10000, positions from 2"
            in at.success[0].value
        )

    def test_identify_csv_download_round_trip(self):
        from dashboard.config import Config
        from dashboard.exports import encoding_csv

        data = encoding_csv(Config(40, 12, 500.0, "split"))
        at = _upload_to_check("pe.csv", data, "text/csv")
        assert "split convention, base 500, positions from 0" in at.success[0].value
        assert "exact in float64" in at.success[0].value

    def test_transposed(self):
        at = _upload_to_check("t.npy", _npy(pe_core.sinusoidal_encoding(100, 16).T))
        assert "transposed" in at.success[0].value
        assert any("transposed" in i.value for i in at.info)

    @pytest.mark.parametrize(
        ("name", "data", "message"),
        [
            ("g.npy", b"\x93NUMPY garbage", "Cannot read"),
            ("o.npy", None, "pickles are never loaded"),
            ("t.csv", b"1,2\nthree,4\n", "not a number"),
            ("n.npy", _npy(np.array([[np.nan, 0.0], [1.0, 1.0]])), "NaN or inf"),
            ("w.npy", _npy(np.zeros(9)), "must be 2-D"),
        ],
    )
    def test_bad_files(self, name, data, message):
        if data is None:
            buffer = io.BytesIO()
            np.save(buffer, np.array([object()], dtype=object), allow_pickle=True)
            data = buffer.getvalue()
        at = _upload_to_check(name, data)
        assert not at.exception
        assert message in at.error[0].value.replace("\\", "")  # as displayed

    def test_noise_is_not_identified(self):
        noise = np.random.default_rng(0).uniform(-1, 1, size=(40, 16))
        at = _upload_to_check("noise.npy", _npy(noise))
        assert any("no convention explains this matrix" in w.value.lower() for w in at.warning)

    @pytest.mark.parametrize(
        "name",
        [n for n, bug in pe_core.BUGS.items() if n != "float32_angles" and not bug.on_purpose],
    )
    def test_each_mistake_example_is_named(self, name):
        at = new_app(view="check", L=300, d=32, example=name.replace("_", " "))
        at.run()
        no_errors(at)
        assert f"Likely mistake: {pe_core.BUGS[name].title}" in at.warning[0].value
        code = " ".join(c.value for c in at.code)
        assert pe_core.BUGS[name].fix in code
        assert any("Table minus what it should be" in h.value for h in at.subheader)

    def test_positions_from_1_are_said_as_fairseq_does_them_not_as_a_likely_mistake(self):
        # Issue 53, case 9: fairseq starts positions at padding_idx + 1 on purpose; the page
        # says so, and shows the line that makes it only as what to fix if it is a mistake.
        at = new_app(view="check", L=300, d=32, example="start at one")
        at.run()
        no_errors(at)
        assert not any("Likely mistake" in w.value for w in at.warning)
        said = " ".join(i.value for i in at.info)
        assert "Positions start at 1" in said and "fairseq" in said and "padding_idx" in said
        code = " ".join(c.value for c in at.code)
        assert "# if it is a mistake" in code and pe_core.BUGS["start_at_one"].fix in code

    def test_float16_example_is_pinned_to_keras_formula(self):
        at = new_app(view="check", L=3000, d=64, example="float16 angles")
        at.run()
        no_errors(at)
        texts = " ".join(m.value for m in [*at.markdown, *at.warning, *at.info])
        assert "computed in float16 with the pow formula" in texts
        # Done on purpose (keras' mixed precision), and said so: no "Likely mistake".
        assert "done on purpose in float16 by keras-hub" in texts.lower()
        assert not any("Likely mistake" in w.value for w in at.warning)
        namespace = {}
        exec(at.code[-1].value, namespace)
        expected = pe_core.textbook_encoding(3000, 64, compute_dtype="float16", formula="pow")
        np.testing.assert_array_equal(namespace["table"], expected)
        assert any("returns your table exactly" in c.value for c in at.caption)

    def test_rebuild_code_runs_and_returns_the_table(self):
        table = pe_core.sinusoidal_encoding(np.arange(5, 105), 24, base=500.0, dtype=np.float32)
        at = _upload_to_check("t.npy", _npy(table))
        no_errors(at)
        namespace = {}
        exec(at.code[-1].value, namespace)
        np.testing.assert_array_equal(namespace["table"], table)
        assert any("returns your table exactly" in c.value for c in at.caption)

    def test_pasted_rows(self):
        rows = pe_core.sinusoidal_encoding(6, 8).round(6)
        text = "\n".join(" ".join(f"{v:.6f}" for v in row) for row in rows)
        at = new_app(view="check")
        at.run()
        at.text_area(key="check_paste").input(text).run()
        no_errors(at)
        assert "vaswani convention, base 10000, positions from 0 to 5" in at.success[0].value

    def test_scaled_timesteps(self):
        # diffusers get_timestep_embedding(torch.arange(16) / 15, 32, flip_sin_to_cos=True,
        # downscale_freq_shift=0, scale=1000), computed once with diffusers 0.42.1.
        path = DATA / "convention_reference.json"
        case = json.loads(path.read_text())["diffusers_scale"][0]
        table = np.array(case["table"], dtype=np.float32)
        at = _upload_to_check("t.npy", _npy(table))
        no_errors(at)
        assert "positions from 0 to 1,000 in steps of 66.6667" in at.success[0].value
        assert "200 / 3 * np.arange(16)" in at.code[-1].value
        namespace = {}
        exec(at.code[-1].value, namespace)
        np.testing.assert_allclose(namespace["table"], table, rtol=0, atol=1e-4)

    def test_grid_upload(self):
        grid = pe_core.grid_encoding(7, 9, 32, layout="moco", extra_tokens=1)
        at = new_app(view="check")
        at.run()
        at = _upload_to_check("g.npy", _npy(grid.astype(np.float32)))
        no_errors(at)
        assert "Identified a 2-D encoding" in at.success[0].value
        assert "7" in at.success[0].value and "9" in at.success[0].value
        # A column of the column axis is constant down each column of patches.
        assert any("One column over the grid" in h.value for h in at.subheader)
        column = at.number_input(key="check_grid_column").value
        assert column in pe_core.GRID_LAYOUTS["moco"].columns(32, "column")
        image = grid[1:, column].reshape(7, 9)
        assert np.all(image == image[0])

    @pytest.mark.parametrize(
        ("layout", "d_model", "step"),
        [("positional_encodings", 21, 1.0), ("diffusers", 32, (1.0, 1 / 1.875, 1 / 1.875))],
    )
    def test_volume_upload(self, layout, d_model, step):
        """A 3-D table (positional-encodings' PositionalEncoding3D at a cut channel count,
        CogVideoX's scaled coordinates) is named, and the code rebuilds it."""
        volume = pe_core.grid3d_encoding((4, 5, 3), d_model, layout=layout, step=step)
        stored = volume.astype(np.float32)
        found = pe_core.identify_grid3d(stored)
        assert found.matches and found.shape == (4, 5, 3)
        at = _upload_to_check("v.npy", _npy(stored))
        no_errors(at)
        assert at.success[0].value == f"Identified a 3-D encoding: {found.summary()}."
        namespace = {}
        exec(at.code[-1].value, namespace)
        np.testing.assert_array_equal(namespace["table"], stored)

    def test_tiny_sidebar_example_explains_instead_of_failing(self):
        at = new_app(view="check", L=50, d=1, example="inverted frequency")
        at.run()
        assert not at.exception and not at.error
        assert any("d_model ≥ 2" in w.value for w in at.warning)


class TestWorkedExample:
    def test_formula_and_code(self):
        at = new_app(view="example", L=10, d=4, base=100)
        at.run()
        no_errors(at)
        latex = " ".join(x.value for x in at.latex)
        assert r"PE(1, 0) = \sin(1 \times 1) = \sin(1) = 0.841471" in latex
        code = at.code[0].value
        namespace = {}
        exec(code, namespace)
        np.testing.assert_allclose(
            namespace["pe"], pe_core.sinusoidal_encoding(10, 4, base=100), atol=1e-12
        )

    def test_pe_core_snippet_runs(self):
        at = new_app(view="example", L=100, d=16, conv="split")
        at.run()
        namespace = {}
        exec(at.code[2].value, namespace)
        np.testing.assert_array_equal(
            namespace["pe"], pe_core.sinusoidal_encoding(100, 16, convention="split")
        )

    def test_downloads_offered(self):
        at = new_app(view="example", L=10, d=4)
        at.run()
        labels = [b.label for b in at.get("download_button")]
        assert "Matrix as CSV" in labels and "Matrix as NPY" in labels


@pytest.mark.parametrize("slug", [view.slug for view in registry.VIEWS])
def test_every_chart_has_a_text_alternative(slug):
    """Issue 15: each chart comes with words a screen reader reads (hidden on screen)."""
    at = (
        new_app(view=slug, step=2, example="float16 angles")
        if slug in ("lesson", "check")
        else (new_app(view=slug))
    )
    at.run()
    if slug == "lesson":
        at.radio(key="lesson_answer_sinusoids").set_value("The first columns").run()
    no_errors(at)
    charts = at.get("plotly_chart")
    words = [m.value for m in at.markdown if 'class="pe-chart-text"' in m.value]
    assert len(words) == len(charts)
    assert charts or slug in ("heatmap", "example")  # an image (with its own label), a table
    assert all(">Chart: " in w for w in words)
    # And each title is written again as text that wraps, shown on a narrow screen instead of
    # Plotly's one-line title (the browser test of the widths checks it fits at 390 px).
    narrow = [m.value for m in at.markdown if 'class="pe-narrow-title"' in m.value]
    titles = [spec["layout"]["title"]["text"] for spec in figures(at)]
    assert len(narrow) == len(titles)
    for title, shown in zip(titles, narrow, strict=True):
        main = title.split("<br>")[0]
        assert html.escape(main, quote=False) in shown


def test_a_narrow_title_keeps_plotly_tags_and_escapes_the_rest():
    fig = go.Figure(layout={"title": {"text": "a <b>x</b> & <script>1</script><br><sup>s</sup>"}})
    assert ui.narrow_title(fig) == (
        '<div class="pe-narrow-title">a <b>x</b> &amp; &lt;script&gt;1&lt;/script&gt;'
        "<sup>s</sup></div>"
    )
    assert ui.narrow_title(go.Figure()) == ""


def test_explanations_open_on_the_first_page_only():
    """Issue 15: a newcomer sees what the first view shows; issue 37: the pages after it open on
    their charts, the explanation closed (one click away)."""
    at = new_app(view="similarity")
    at.run()
    assert at.expander[0].proto.expanded
    at.run()  # a change on the same visit keeps it open
    assert at.expander[0].proto.expanded
    open_view(at, "wavelengths")
    assert not at.expander[0].proto.expanded  # another view: its chart first
    open_view(at, "similarity")
    assert not at.expander[0].proto.expanded  # back again


@pytest.mark.parametrize(
    ("d_model", "convention"),
    [(512, "vaswani"), (512, "tensor2tensor"), (2, "vaswani"), (3, "split")],
)
def test_wavelength_explanation_states_this_configuration(d_model, convention):
    at = new_app(view="wavelengths", d=d_model, conv=convention)
    at.run()
    no_errors(at)
    text = at.expander[0].markdown[0].value
    lengths = pe_core.wavelengths(d_model, base=10_000.0, convention=convention)
    assert pe_core.CONVENTIONS[convention].formula in text
    if lengths.size > 1:
        factor = claims.ratio_text(lengths[1] / lengths[0])
        assert f"each pair turns {factor} times more slowly" in text
        # One formatter for a wavelength on every page (issue 53: 7.61702e+08 here, 761,702,272
        # on the Heatmap).
        assert f"the slowest every {formatting.format_number(lengths[-1])}" in text
    else:
        assert "With one frequency there is one wavelength" in text


def test_each_view_is_registered_once_with_its_module():
    slugs = [view.slug for view in registry.VIEWS]
    labels = [view.label for view in registry.VIEWS]
    assert len(set(slugs)) == len(slugs) and len(set(labels)) == len(labels)
    assert all(callable(view.module.render) for view in registry.VIEWS)


@pytest.mark.parametrize("view", registry.VIEWS, ids=lambda view: view.slug)
def test_each_page_keeps_the_page_contract(view):
    """The contract is declared once (registry.Page) and every page module keeps it: its
    parameters as a tuple of widgets, a subtitle and a render function; SHARED, where
    present, a tuple of the sidebar's URL keys or a function giving them."""
    assert isinstance(view.module, registry.Page)
    assert isinstance(view.module.PARAMS, tuple)
    assert all(isinstance(param, params.Param) for param in view.module.PARAMS)
    shared = getattr(view.module, "SHARED", registry.SHARED)
    assert callable(shared) or set(shared) <= set(registry.SHARED)


class TestPresentationMode:
    """Issue 15: larger text and taller charts for a projector, shareable as a link."""

    def test_a_presentation_link_shows_large_charts(self):
        at = new_app(view="wavelengths", present="true")
        at.run()
        no_errors(at)
        assert at.session_state["present"] is True
        spec = figures(at)[0]
        layout = spec["layout"]
        assert layout["height"] >= ui.PRESENT_HEIGHT
        assert layout["font"]["size"] == ui.PRESENT_FONT
        assert layout["xaxis"]["tickfont"]["size"] == ui.PRESENT_FONT
        assert layout["legend"]["font"]["size"] == ui.PRESENT_FONT
        styles = [e.proto.body for e in at.get("html")]
        assert any(ui.PRESENT_STYLE in body for body in styles)

    def test_panel_names_grow_with_their_offsets_and_keep_their_room(self):
        panels = matrices.matrix_panels({"a": np.eye(2), "b": np.eye(2)}, title="t")
        presented = ui._presented(panels)["layout"]
        shown = [(a["font"]["size"], a.get("yshift", 0)) for a in presented["annotations"]]
        drawn = [(a.font.size, a.yshift or 0) for a in panels.layout.annotations]
        scale = ui.PRESENT_SCALE
        assert shown == [(size * scale, shift * scale) for size, shift in drawn]
        raised = matrices.PANEL_NAME_LINE * (ui.PRESENT_SCALE - 1)
        assert presented["margin"]["t"] == panels.layout.margin.t + raised
        assert panels.layout.annotations[1].yshift == matrices.PANEL_NAME_LINE  # untouched

    def test_off_by_default_and_the_cached_figure_is_untouched(self):
        at = new_app(view="wavelengths", present="true")
        at.run()
        at.toggle(key="present").set_value(False).run()
        no_errors(at)
        layout = figures(at)[0]["layout"]
        assert "font" not in layout or layout["font"].get("size") != ui.PRESENT_FONT
        assert not any(ui.PRESENT_STYLE in e.proto.body for e in at.get("html"))

    def test_a_bad_value_is_named(self):
        at = new_app(view="wavelengths", present="maybe")
        at.run()
        assert any("present" in w.value and "true or false" in w.value for w in at.warning)


def test_one_wavelength_reads_the_same_on_every_page():
    """Issue 53, case 12: one wavelength was "7.61702e+08" on Wavelengths and "761,702,272" on
    the Heatmap; one formatter now writes it on both."""
    slowest = pe_core.wavelengths(512, base=1e9)[-1]
    shown = formatting.format_number(slowest)
    assert "," in shown and "e+" not in shown
    wavelengths = new_app(view="wavelengths", base=1e9, d=512)
    wavelengths.run()
    assert {m.label: m.value for m in wavelengths.metric}["Longest wavelength"] == shown
    heatmap = new_app(view="heatmap", base=1e9, d=512)
    heatmap.run()
    assert f"the slowest every {shown}" in heatmap.expander[0].markdown[0].value


@pytest.mark.parametrize(("d_model", "convention"), [(1, "vaswani"), (3, "musicgen")])
def test_the_wavelength_chart_over_one_point_claims_no_progression(d_model, convention):
    at = new_app(view="wavelengths", d=d_model, conv=convention)
    at.run()
    no_errors(at)
    chart = next(f for f in figures(at) if "wavelength" in f["layout"]["title"]["text"].lower())
    assert "geometric" not in chart["layout"]["title"]["text"]
    assert chart["layout"]["title"]["text"].startswith("One frequency, one wavelength")
    pairs = {m.label: m.value for m in at.metric}["Pairs"]
    assert pairs == ("0 + 1 lone sin" if d_model == 1 else "1")


@pytest.mark.parametrize("n_positions", [1, 3, 300])
def test_the_offset_profile_draws_the_offsets_the_sequence_has(n_positions):
    """Issue 53: at L = 1 the profile drew offset 1; its direct checks from k reached positions
    past L − 1 (from k = 200 of 300: 499); at L = 3 its axis read 0.5 and 1.5. A chart's axis
    and marks are claims too."""
    at = new_app(view="similarity", L=n_positions)
    at.run()
    no_errors(at)
    chart = next(f for f in figures(at) if "against offset" in f["layout"]["title"]["text"])
    for trace in chart["data"]:
        offsets = decode(trace["x"]).astype(float)
        assert offsets.size == 0 or offsets.max() <= n_positions - 1, trace["name"]
        if trace["name"].startswith("direct, from k = "):
            start = int(trace["name"].removeprefix("direct, from k = "))
            assert start + offsets.max() <= n_positions - 1
    assert float(chart["layout"]["xaxis"]["dtick"]).is_integer()
    assert chart["layout"]["xaxis"]["tickformat"] == ",d"
