"""Identifying a rotary encoding from its cos/sin cache or inv_freq, and naming its bugs.

Reference data: tests/data/rope_caches/, caches computed by transformers 5.24's own rotary
classes (float32, and the same call with a bfloat16 input), see SOURCES.md there. Expected
values are read from the stored configs through ``rope_from_config`` and from what transformers
stored (``inv_freq``, ``attention_scaling``), never written out here.

Tolerances: a cache matches a config when every entry is within ``a (u + 16 u32 |p| w + 4 u32)``
of the exact ``a cos(p w)`` (``a`` the attention factor, ``u`` the unit roundoff of the format
its values are stored in, ``u32 = 2**-24``: transformers computes ``p w`` in float32 with float32
frequencies a few ulps off); an ``inv_freq`` vector when each frequency is within ``u + 16 u32``
relative. Attention factors are compared to ``2 u a``, correction ranges to 0.01 pair.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import pe_core
from pe_core import ROPE_BUGS, InputError, InputTypeError, identify_rope
from pe_core.testing import assert_rope_matches
from tests.core.rope_caches import CASES, reference

KINDS = ("float32", "bfloat16")
UNIT = {"float32": 2.0**-24, "bfloat16": 2.0**-8}


def config_rope(case: str, positions) -> pe_core.RotaryEncoding:
    _, _, _, config, _ = reference(case, "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers' own warnings on these configs
        return pe_core.rope_from_config(
            config, layer_type=CASES[case]["layer_type"], seq_len=int(np.max(positions)) + 1
        )


def identify(cos, sin, positions, case=None):
    config = None if case is None else reference(case, "float32")[3]
    layer_type = None if case is None else CASES[case]["layer_type"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return identify_rope(cos, sin, positions=positions, config=config, layer_type=layer_type)


# --- literal cases -----------------------------------------------------------------------------


class TestIdentifyRopeLiteral:
    def test_plain_exact_cache(self):
        rope = pe_core.rope_frequencies(64, base=10_000.0)
        cos, sin = pe_core.rope_cos_sin(512, rope, dtype=np.float64)
        found = identify_rope(cos, sin)
        assert (found.rope_type, found.base, found.rotary_dim) == ("default", 10_000.0, 64)
        assert found.layout == "halves" and found.base_snapped
        assert found.attention_factor == 1.0
        assert found.arithmetic == pe_core.RopeArithmetic("float64", "exact", None, "exact")
        assert found.positions == (0.0, 511.0) and found.n_positions == 512
        assert found.matches and found.findings == ()
        np.testing.assert_allclose(found.inv_freq, rope.inv_freq, rtol=1e-12)
        assert found.max_abs_error < 1e-14

    def test_interleaved_layout(self):
        rope = pe_core.rope_frequencies(32, base=500_000.0)
        cos, sin = pe_core.rope_cos_sin(300, rope, layout="interleaved")
        found = identify_rope(cos, sin)
        assert (found.layout, found.base, found.rotary_dim) == ("interleaved", 500_000.0, 32)
        # cos[:, 0] and cos[:, 1] hold pair 0, as repeat_interleave writes them.
        assert np.array_equal(cos[:, 0], cos[:, 1])

    def test_one_column_per_pair(self):
        rope = pe_core.rope_frequencies(64, base=10_000.0)
        cos, sin = pe_core.rope_cos_sin(200, rope)
        found = identify_rope(cos[:, :32], sin[:, :32])
        assert (found.layout, found.rotary_dim, found.base) == ("per_pair", 64, 10_000.0)

    def test_columns_that_do_not_rotate(self):
        rope = pe_core.rope_frequencies(64, base=10_000.0, partial_rotary_factor=0.5)
        cos, sin = pe_core.rope_cos_sin(100, rope)
        padded_cos = np.concatenate([cos, np.ones_like(cos)], axis=1)
        padded_sin = np.concatenate([sin, np.zeros_like(sin)], axis=1)
        found = identify_rope(padded_cos, padded_sin)
        assert (found.width, found.rotary_dim, found.rotary_columns) == (64, 32, (0, 32))

    def test_attention_factor_folded_in(self):
        scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
        rope = pe_core.rope_frequencies(128, base=10_000.0, scaling=scaling)
        cos, sin = pe_core.rope_cos_sin(20_000, rope)
        found = identify_rope(cos, sin)
        assert found.rope_type == "yarn" and found.parameters["factor"] == 4.0
        assert found.attention_factor == pytest.approx(0.1 * math.log(4.0) + 1, rel=1e-12)
        assert found.parameters["original_max_position_embeddings"] == 4096
        low, high = rope.parameters["correction_range"]
        assert found.parameters["correction_range"] == (low, high)

    def test_transformers_shape(self):
        rope = pe_core.rope_frequencies(16, base=10_000.0)
        cos, sin = pe_core.rope_cos_sin(50, rope)
        assert identify_rope(cos[None], sin[None]).rotary_dim == 16

    def test_positions_given(self):
        rope = pe_core.rope_frequencies(32, base=10_000.0)
        positions = np.array([0, 1, 2, 5, 9, 100, 1000, 4096, 70_000])
        cos, sin = pe_core.rope_cos_sin(positions, rope)
        found = identify_rope(cos, sin, positions=positions)
        assert found.base == 10_000.0 and found.positions == (0.0, 70_000.0)

    def test_slice_of_a_long_cache(self):
        # A dump taken while decoding: positions 70,000 to 70,063 only.
        scaling = {"rope_type": "linear", "factor": 4.0}
        rope = pe_core.rope_frequencies(128, base=500_000.0, scaling=scaling)
        positions = 70_000 + np.arange(64)
        cos, sin = pe_core.rope_cos_sin(positions, rope, dtype=np.float32)
        found = identify_rope(cos, sin, positions=positions)
        assert (found.rope_type, found.base, found.parameters["factor"]) == (
            "linear",
            500_000.0,
            4.0,
        )
        assert found.matches and found.positions == (70_000.0, 70_063.0)
        shifted = identify_rope(cos, sin, positions=positions - 1)  # rows off by one position
        assert not shifted.matches

    @pytest.mark.parametrize("factor", [1.0, 8.0])
    def test_proportional_pairs_of_frequency_zero(self, factor):
        # Proportional RoPE: the last pairs do not rotate, inside the halves block.
        scaling = {"rope_type": "proportional", "factor": factor}
        rope = pe_core.rope_frequencies(
            64, base=1_000_000.0, scaling=scaling, partial_rotary_factor=0.25
        )
        cos, sin = pe_core.rope_cos_sin(1000, rope)
        found = identify_rope(cos, sin)
        assert (found.rope_type, found.base, found.rotary_dim) == ("proportional", 1e6, 64)
        assert found.parameters["factor"] == factor
        assert found.parameters["rotating_pairs"] == rope.parameters["rotating_pairs"]
        config = {
            "head_dim": 64,
            "rope_theta": 1e6,
            "partial_rotary_factor": 0.25,
            "rope_scaling": scaling,
        }
        assert identify_rope(cos, sin, config=config).config_matches

    def test_inv_freq_vector(self):
        rope = pe_core.rope_frequencies(
            128, base=1_000_000.0, scaling={"factor": 8.0, "rope_type": "linear"}
        )
        found = identify_rope(inv_freq=rope.inv_freq.astype(np.float32))
        assert (found.source, found.rope_type, found.base) == ("inv_freq", "linear", 1e6)
        assert found.parameters["factor"] == 8.0
        assert found.arithmetic.inv_freq == "float32" and found.attention_factor is None

    def test_summary_and_json_agree(self):
        rope = pe_core.rope_frequencies(64, base=10_000.0)
        found = identify_rope(*pe_core.rope_cos_sin(100, rope))
        as_dict = found.to_dict()
        assert as_dict["summary"] == found.summary()
        assert json.loads(json.dumps(as_dict))["rope_type"] == "default"
        assert "plain RoPE, base 10,000, 64 rotary columns" in found.summary()


class TestNotAnEncoding:
    @pytest.mark.parametrize("seed", range(5))
    def test_noise_is_explained_by_nothing(self, seed):
        rng = np.random.default_rng(seed)
        found = identify_rope(rng.uniform(-1, 1, (100, 64)), rng.uniform(-1, 1, (100, 64)))
        assert not found.explained and not found.matches and found.bugs == ()
        assert found.arithmetic.angles is None
        assert "more than any arithmetic explains" in found.summary()


class TestInvalidInput:
    def test_neither_or_both(self):
        with pytest.raises(InputError, match="give one of a cache"):
            identify_rope()
        with pytest.raises(InputError, match="give one of a cache"):
            identify_rope(np.ones((4, 2)), np.zeros((4, 2)), inv_freq=[1.0, 0.1])

    def test_cos_without_sin(self):
        with pytest.raises(InputError, match="cos and sin must be given together"):
            identify_rope(np.ones((4, 2)))

    def test_shapes_differ(self):
        with pytest.raises(InputError, match="same shape"):
            identify_rope(np.ones((4, 4)), np.zeros((4, 2)))

    def test_not_numbers(self):
        with pytest.raises(InputTypeError, match="cos"):
            identify_rope([["a", "b"]], [["c", "d"]])

    def test_not_finite(self):
        cos = np.ones((4, 4))
        cos[1, 1] = np.nan
        with pytest.raises(InputError, match="finite"):
            identify_rope(cos, np.zeros((4, 4)))

    def test_no_rotation(self):
        with pytest.raises(InputError, match="do not rotate"):
            identify_rope(np.ones((4, 4)), np.zeros((4, 4)))

    def test_positions_need_two_close_ones(self):
        rope = pe_core.rope_frequencies(16)
        cos, sin = pe_core.rope_cos_sin([10, 20, 30], rope)
        with pytest.raises(InputError, match="positions must include two 1 to 3 apart"):
            identify_rope(cos, sin, positions=[10, 20, 30])

    def test_positions_length(self):
        with pytest.raises(InputError, match="one position per row"):
            identify_rope(np.ones((4, 4)), np.zeros((4, 4)), positions=[0, 1])

    def test_bad_config(self):
        rope = pe_core.rope_frequencies(16)
        cos, sin = pe_core.rope_cos_sin(10, rope)
        with pytest.raises(InputError, match="config"):
            identify_rope(cos, sin, config="[" * 200)


# --- transformers' caches ------------------------------------------------------------------------


CASE_KINDS = [(case, kind) for case in CASES for kind in KINDS]


@pytest.mark.parametrize(("case", "kind"), CASE_KINDS)
class TestTransformersCaches:
    def test_variant_and_parameters(self, case, kind):
        cos, sin, positions, _, stored = reference(case, kind)
        rope = config_rope(case, positions)
        found = identify(cos, sin, positions)
        # Dynamic NTK's frequencies are plain RoPE's at the base it chose.
        wanted = "default" if rope.rope_type == "dynamic" else rope.rope_type
        assert found.rope_type == wanted
        assert found.rotary_dim == 2 * stored["inv_freq"].size == rope.rotary_dim
        # gpt-oss's rotary class returns one column per pair (its attention splits q in halves).
        one_per_pair = cos.shape[1] == stored["inv_freq"].size
        assert found.layout == ("per_pair" if one_per_pair else "halves")
        if found.base_snapped:
            assert found.base == rope.effective_base
        else:  # dynamic NTK's base, or LongRoPE's: within the fit's uncertainty
            assert found.base == pytest.approx(rope.effective_base, rel=1e-3)
        for key in ("factor", "low_freq_factor", "high_freq_factor"):
            if key in rope.parameters and rope.rope_type != "dynamic":
                assert found.parameters[key] == rope.parameters[key]
        if rope.rope_type in ("llama3", "yarn", "longrope"):
            assert (
                found.parameters["original_max_position_embeddings"]
                == rope.parameters["original_max_position_embeddings"]
            )
        if rope.rope_type == "yarn":
            np.testing.assert_allclose(
                found.parameters["correction_range"], rope.parameters["correction_range"], atol=0.01
            )
        if rope.rope_type == "longrope":  # the per-pair factors, to the measurement's noise
            np.testing.assert_allclose(
                found.parameters["factors"], rope.original_inv_freq / rope.inv_freq, rtol=1e-3
            )
        a = float(stored["attention_scaling"])
        assert found.attention_factor == pytest.approx(a, rel=2 * UNIT[kind])

    def test_arithmetic(self, case, kind):
        cos, sin, positions, _, _ = reference(case, kind)
        found = identify(cos, sin, positions)
        assert found.arithmetic.storage == kind
        assert found.arithmetic.positions == "exact" and found.arithmetic.inv_freq is None
        if kind == "float32":
            # At positions to 4,095 and beyond, float32's angle rounding shows.
            assert found.arithmetic.angles == "float32"
        else:  # bfloat16's own rounding may hide it
            assert found.arithmetic.angles in ("exact", "float32")
        assert found.bugs == ()

    def test_matches_its_config(self, case, kind):
        cos, sin, positions, _, _ = reference(case, kind)
        found = identify(cos, sin, positions, case)
        assert found.config_matches is True, found.summary()
        assert found.departure is None and found.likely_cause is None


@pytest.mark.parametrize("case", list(CASES))
def test_inv_freq_matches_its_config(case):
    _, _, positions, config, stored = reference(case, "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = identify_rope(
            inv_freq=stored["inv_freq"],
            config=config,
            layer_type=CASES[case]["layer_type"],
            positions=positions,
        )
    assert found.config_matches is True, found.summary()
    assert found.arithmetic.inv_freq == "float32"


def bug_cases():
    cases = []
    for case in CASES:
        _, _, positions, _, _ = reference(case, "float32")
        rope = config_rope(case, positions)
        for kind in KINDS:
            for bug in ROPE_BUGS.values():
                if bug.applies(rope):
                    cases.append((case, kind, bug.name))
    return cases


BUG_CASES = bug_cases()


def test_every_bug_is_injected_somewhere():
    assert {name for _, _, name in BUG_CASES} == set(ROPE_BUGS)


#: Two bugs that make the same cache: at base 10,000 the exponent i/d gives base 100, as a base
#: off by 100x does.
SAME_CACHE = {"base_off_by_100x", "exponent_i_over_d"}


@pytest.mark.parametrize(("case", "kind", "name"), BUG_CASES)
def test_injected_bug_is_named(case, kind, name):
    cos, sin, positions, _, _ = reference(case, kind)
    rope = config_rope(case, positions)
    wrong_cos, wrong_sin = ROPE_BUGS[name].inject(cos, sin, positions, rope)
    found = identify(wrong_cos, wrong_sin, positions, case)
    assert found.config_matches is False
    assert name in found.bugs, found.summary()
    if found.likely_cause != name:
        assert {name, found.likely_cause} == SAME_CACHE and rope.base == 10_000.0
    d = found.departure
    assert d is not None and 0 <= d.row < positions.size and 0 <= d.column < wrong_cos.shape[1]
    assert abs(d.value - d.expected) > d.tolerance  # a real departure, in the array as given
    if d.array == "cos":
        assert d.value == wrong_cos[d.row, d.column]
    assert ROPE_BUGS[found.likely_cause].fix in found.summary()


#: Bugs the numbers show without a config (what the others change, a config must say).
BLIND = ("bf16_positions", "bf16_angles", "yarn_mscale_twice", "negated_sin")


@pytest.mark.parametrize(
    ("case", "name"),
    [
        (case, name)
        for case in CASES
        for name in BLIND
        # LongRoPE's own factor per pair absorbs a rounding of the frequencies.
        if not (case == "phi3_5_longrope" and name in ("bf16_angles", "yarn_mscale_twice"))
        and (name != "yarn_mscale_twice" or "yarn" in CASES[case]["what"])
    ],
)
def test_bug_named_without_config(case, name):
    cos, sin, positions, _, _ = reference(case, "float32")
    rope = config_rope(case, positions)
    wrong_cos, wrong_sin = ROPE_BUGS[name].inject(cos, sin, positions, rope)
    found = identify(wrong_cos, wrong_sin, positions)
    assert name in found.bugs
    assert not found.matches


def test_bf16_positions_arithmetic():
    cos, sin, positions, _, _ = reference("qwen3_8b_default", "float32")
    rope = config_rope("qwen3_8b_default", positions)
    found = identify(*ROPE_BUGS["bf16_positions"].inject(cos, sin, positions, rope), positions)
    assert found.arithmetic.positions == "bfloat16"
    assert found.findings[0].evidence["first_position_rounded"] == 257
    assert found.findings[0].references == ("https://github.com/EleutherAI/gpt-neox/pull/1016",)


def test_first_departure_of_bf16_positions():
    # Position 257 is the first that bfloat16 rounds (to 256): the first wrong row.
    cos, sin, positions, _, _ = reference("llama3_1_8b", "float32")
    rope = config_rope("llama3_1_8b", positions)
    wrong = ROPE_BUGS["bf16_positions"].inject(cos, sin, positions, rope)
    found = identify(*wrong, positions, "llama3_1_8b")
    assert found.departure.position == 257
    assert found.likely_cause == "bf16_positions"


class TestInvFreqBugs:
    def test_bfloat16_inv_freq_is_named(self):
        _, _, _, config, stored = reference("qwen3_8b_default", "float32")
        rounded = pe_core.quantize(stored["inv_freq"], "bfloat16")
        found = identify_rope(inv_freq=rounded, config=config)
        assert found.config_matches is False and found.likely_cause == "bf16_inv_freq"
        assert found.departure.array == "inv_freq"

    def test_base_off_by_100x(self):
        config = reference("qwen3_8b_default", "float32")[3]
        wrong = pe_core.rope_frequencies(128, base=10_000.0).inv_freq
        found = identify_rope(inv_freq=wrong, config=config)
        assert found.likely_cause == "base_off_by_100x"


class TestAssertRopeMatches:
    def test_passes(self):
        cos, sin, positions, config, _ = reference("gpt_oss_120b", "bfloat16")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = assert_rope_matches(cos, sin, config, positions=positions)
        assert found.config_matches

    def test_names_position_column_and_bug(self):
        cos, sin, positions, config, _ = reference("gpt_oss_120b", "float32")
        rope = config_rope("gpt_oss_120b", positions)
        wrong = ROPE_BUGS["yarn_mscale_dropped"].inject(cos, sin, positions, rope)
        with (
            warnings.catch_warnings(),
            pytest.raises(AssertionError, match=r"position 0 \(row 0\), column 0") as raised,
        ):
            warnings.simplefilter("ignore")
            assert_rope_matches(*wrong, config, positions=positions)
        assert "yarn_mscale_dropped" in str(raised.value)


def test_a_slice_where_bfloat16_holds_every_fourth_position():
    # Positions 1000 to 1599: bfloat16 holds only multiples of 4 and 8 there, yet the rows are
    # one apart (the ladder then starts from every position, not only bfloat16's).
    rope = pe_core.rope_frequencies(64, base=10_000.0)
    positions = np.arange(1000, 1600)
    cos, sin = pe_core.rope_cos_sin(positions, rope)
    found = identify_rope(cos, sin, positions=positions)
    assert (found.rope_type, found.base, found.positions) == ("default", 10_000.0, (1000.0, 1599.0))
