"""Every sentence, label and marked value true at every parameter (issue 9).

Each test reproduces a statement that was false, a value drawn from a formula instead of
pe_core, or a control that did not change what is drawn, and checks what the page says now.
"""

from __future__ import annotations

import io
import math
import tomllib

import numpy as np
import pytest

import pe_core
from dashboard import sidebar
from tests import ROOT
from tests.apptest_helpers import decode, figures, new_app, no_errors, similarity_images

pytestmark = pytest.mark.timeout(600)


def _texts(at) -> str:
    parts = [
        e.value
        for kind in ("markdown", "info", "warning", "success", "caption")
        for e in getattr(at, kind)
    ]
    parts += [e.body for e in at.expander] if hasattr(at.expander, "body") else []
    return " ".join(parts).replace("\\", "")


def _chart(at, key_part: str) -> dict:
    for element, spec in zip(at.get("plotly_chart"), figures(at), strict=True):
        if key_part in (element.proto.id or "") or key_part in str(spec["layout"].get("title")):
            return spec
    raise AssertionError(f"no chart with {key_part!r}")


def _marked_values(spec: dict) -> dict[str, float]:
    """Name -> value of the horizontal reference lines of a wavelength chart."""
    return {
        t["name"]: decode(t["y"])[0]
        for t in spec["data"]
        if t.get("mode") == "lines" and len(decode(t["y"])) == 2
    }


class TestWavelengthMarks:
    @pytest.mark.parametrize(
        ("d_model", "convention"), [(7, "vaswani"), (512, "tensor2tensor"), (9, "split")]
    )
    def test_longest_wavelength_is_pe_core_s(self, d_model, convention):
        # Issue 9: the "longest" line was 2π·base^(1−2/d): 4,521.9 at d=7 (true: 16,855.9) and
        # 60,611 for tensor2tensor at 512 (true: 62,832).
        at = new_app(view="wavelengths", d=d_model, conv=convention)
        at.run()
        no_errors(at)
        true = pe_core.wavelengths(d_model, convention=convention)
        spec = figures(at)[0]
        slowest = [v for name, v in _marked_values(spec).items() if name.startswith("slowest")]
        assert slowest == [pytest.approx(true[-1], rel=1e-12)]
        formula = 2 * math.pi * 1e4 ** (1 - 2 / d_model)
        if not math.isclose(formula, true[-1], rel_tol=1e-9):
            assert all(
                not math.isclose(v, formula, rel_tol=1e-6) for v in _marked_values(spec).values()
            )

    def test_the_conventions_lab_marks_the_same_values(self):
        at = new_app(view="conventions", d=7)
        at.run()
        no_errors(at)
        spec = next(f for f in figures(at) if f["layout"]["title"]["text"] == "Wavelengths")
        values = list(_marked_values(spec).values())
        assert any(math.isclose(v, pe_core.wavelengths(7)[-1], rel_tol=1e-12) for v in values)

    def test_coinciding_conventions_are_named(self):
        at = new_app(view="wavelengths", overlay="true")
        at.run()
        names = [t["name"] for t in figures(at)[0]["data"]]
        assert "split (same wavelengths as vaswani)" in names
        # and each convention is said in words under the chart (issue 52)
        listed = " ".join(m.value for m in at.markdown)
        assert "**musicgen**: all cosines, then all sines" in listed

    def test_the_other_conventions_are_drawn_on_request_only(self):
        """Issue 52: five conventions overlaid by default, three of them unexplained."""
        at = new_app(view="wavelengths")
        at.run()
        names = [t["name"] for t in figures(at)[0]["data"]]
        assert [n for n in names if n.startswith(tuple(pe_core.CONVENTIONS))] == [
            "vaswani (current)"
        ]
        assert "**musicgen**" not in " ".join(m.value for m in at.markdown)


class TestSimilarityStatements:
    def test_d_model_1_vaswani_is_sin_k_not_the_zero_vector(self):
        at = new_app(view="similarity", d=1, L=50)
        at.run()
        no_errors(at)
        text = _texts(at)
        assert "zero vector" not in text.replace("is the zero vector)", "")
        assert "one column, sin(k)" in text
        ((_, matrix),) = similarity_images(at)
        assert set(np.unique(np.round(matrix[1:, 1:]))) <= {-1.0, 1.0}

    def test_d_model_1_tensor2tensor_is_the_zero_vector(self):
        at = new_app(view="similarity", d=1, conv="tensor2tensor")
        at.run()
        assert any("every encoding is the zero vector" in i.value for i in at.info)

    def test_odd_d_model_profile_does_not_claim_a_closed_form(self):
        at = new_app(view="similarity", d=7, L=300)
        at.run()
        no_errors(at)
        (profile,) = figures(at)  # the matrix is an image
        subtitle = profile["layout"]["title"]["text"]
        assert "closed form for every offset" not in subtitle
        assert "no closed form" in subtitle

    def test_d_model_2_says_what_is_true(self):
        at = new_app(view="similarity", d=2, L=100)
        at.run()
        assert any("cosine similarity is cos(δ)" in i.value for i in at.info)
        assert pe_core.offset_similarity(44, 2) > 0.9997  # the example the page gives


@pytest.mark.parametrize("view", ["similarity", "rotation"])
def test_direction_statement_is_precise(view):
    # Issue 9: "the encoding alone does not say which of two tokens comes first" is false: the
    # dot product is even in the offset, but M(δ) ≠ M(−δ).
    at = new_app(view=view)
    at.run()
    text = " ".join(e.proto.body for e in at.markdown if hasattr(e.proto, "body")) + _texts(at)
    assert "the model cannot tell which token comes first" not in text
    assert "the encoding alone does not say which of two tokens comes first" not in text
    assert "M(−δ) = M(δ)ᵀ" in text


def test_conventions_at_d_model_1_name_the_zero_column():
    at = new_app(view="conventions", d=1, conv="tensor2tensor")
    at.run()
    no_errors(at)
    (info,) = [i.value for i in at.info if "closed-form" in i.value]
    assert "tensor2tensor has only a zero column" in info
    assert "tensor2tensor leaves" not in info


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _upload(array, name="m.npy"):
    at = new_app(view="check")
    at.run()
    at.file_uploader(key="check_upload").upload(name, _npy(array), "application/octet-stream").run()
    no_errors(at)
    return at


class TestIdentifyView:
    def test_float32_library_table_round_base_and_its_arithmetic(self):
        from tests.core.test_identify import annotated_transformer_buffer

        at = _upload(annotated_transformer_buffer(512, 64))
        success = at.success[0].value
        assert "vaswani convention, base 10000, positions from 0 to 511" in success
        assert "float32 arithmetic" in success and "float16 rounding" not in success
        assert any("axes of length 1 were dropped" in i.value for i in at.info)
        assert any("How sure" in m.value for m in at.markdown)

    def test_noise_is_not_called_rounding_nor_transposed(self):
        noisy = pe_core.sinusoidal_encoding(100, 16) + np.random.default_rng(0).normal(
            0, 1e-3, (100, 16)
        )
        at = _upload(noisy)
        assert not at.success
        assert "bfloat16 rounding" not in _texts(at)
        noise = _upload(np.random.default_rng(0).uniform(-1, 1, (40, 16)))
        assert "transposed" not in _texts(noise)

    def test_equivalent_fits_are_explained(self):
        at = _upload(pe_core.sinusoidal_encoding(200, 16, convention="tensor2tensor"))
        assert any("is the same table at d_model 16" in c.value for c in at.caption)


class TestUniquenessPrecision:
    def test_bfloat16_position_ids_draw_their_collisions(self):
        # Issue 9: the chart was a flat float64 line at 3.71 and the table float64 values while
        # the verdict said 256 and 257 collide.
        at = new_app(view="uniqueness", prec="bfloat16", cast="positions", L=2048, d=512)
        at.run()
        no_errors(at)
        spec = figures(at)[0]
        traces = {t["name"]: t for t in spec["data"]}
        stored = decode(traces["at bfloat16: the position ids stored in that format"]["y"])
        assert stored.min() == 0.0 and np.count_nonzero(stored == 0) > 100
        collision = traces["first collision: 256 and 257"]
        assert decode(collision["x"]).tolist() == [256] and decode(collision["y"]).tolist() == [0]
        table = at.dataframe[0].value
        assert table["pair"].iloc[0] == "256 & 257" and table["at bfloat16"].iloc[0] == 0.0
        assert table["exact distance"].iloc[0] > 3

    def test_float16_beyond_65504_positions_explains_itself(self):
        # Issue 9: a stale "last valid figure" and code names instead of an explanation.
        at = new_app(view="uniqueness", L=100_000, prec="float16", cast="angles")
        at.run()
        no_errors(at)
        assert not [w for w in at.warning if "cannot be shown" in w.value]
        assert not [c for c in at.caption if "Last valid figure" in c.value]
        info = " ".join(i.value for i in at.info)
        assert "65,504" in info and "from 65,520 on becomes infinity" in info
        assert "cast=" not in _texts(at)
        assert "65,520 positions" in at.warning[0].value  # the verdict on what float16 holds
        assert figures(at)


class TestLegibility:
    def test_random_tokens_are_not_named_t0_0(self):
        at = new_app(view="embeddings", emb_mode="random", emb_seq=5, emb_batch=2, d=8)
        at.run()
        no_errors(at)
        rows = figures(at)[0]["data"][0]["y"]
        assert not any("t0." in str(r) for r in rows)

    def test_each_embeddings_panel_has_its_own_colour_range(self):
        at = new_app(view="embeddings", d=64)
        at.run()
        for spec in figures(at)[:3]:
            z = decode(spec["data"][0]["z"])
            assert spec["data"][0]["zmax"] == pytest.approx(np.abs(z).max(), rel=1e-6)
        assert any("own colour range" in c.value for c in at.caption)

    @pytest.mark.parametrize("convention", list(pe_core.CONVENTIONS))
    def test_worked_example_shows_pairs_and_each_frequency_once(self, convention):
        at = new_app(view="example", L=10, d=8, base=100, conv=convention)
        at.run()
        no_errors(at)
        latex = [x.value for x in at.latex]
        assert sum(r"\omega_{1} =" in x for x in latex) == 1
        header = list(at.dataframe[0].value.columns)
        assert any("sin i=1" in h for h in header) and any("cos i=1" in h for h in header)

    @pytest.mark.parametrize("scheme", ["light", "dark"])
    def test_primary_colour_does_not_mean_error(self, scheme):
        theme = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
        colour = theme[scheme]["primaryColor"]
        red, _, blue = (int(colour[j : j + 2], 16) for j in (1, 3, 5))
        assert blue > red, colour
        assert "base" not in theme  # no base: the app follows the system's light or dark

    def test_an_out_of_range_d_model_shows_the_value_in_force(self):
        at = new_app()
        at.run()
        at.number_input(key="d").set_value(9000).run()
        no_errors(at)
        assert at.number_input(key="d").value == 8192
        assert any("using 8,192 instead of 9,000" in c.value for c in at.caption)
        at.number_input(key="d").set_value(0).run()
        assert at.number_input(key="d").value == 1

    def test_d_model_steps_by_two(self):
        at = new_app()
        at.run()
        at.number_input(key="d").increment().run()
        assert at.number_input(key="d").value == sidebar.DEFAULT_D_MODEL + 2
