"""Rotary encodings (pe_core.rotary.encoding) against plain references of Hugging Face's formulas.

The references below are transcriptions, one pair at a time with ``math``, of the functions in
Hugging Face transformers 5.23.0 ``src/transformers/modeling_rope_utils.py`` (``_compute_*``
and the model's default ``base ** -(2i/d)``), and of ``rotate_half`` / ``apply_rotary_pos_emb``
in ``models/llama/modeling_llama.py``. Hugging Face computes in float32; pe_core in float64, so
the tests compare with float64 references to 1e-15 relative, and with Hugging Face's float32
arithmetic (emulated with NumPy float32) to a few float32 ulps. TestHuggingFaceLiterals
compares with literal values computed once with transformers 5.23.0 itself
(tests/data/rope_hf_5_23.json, which names how).
"""

import json
import math
import warnings

import numpy as np
import pytest

import pe_core
from pe_core import apply_rope, rope_cos_sin, rope_frequencies, rope_from_config
from tests import DATA

RTOL = 1e-14  # float64 reference against the vectorized module


def ref_default(dim, base):
    return [base ** -(2 * i / dim) for i in range(dim // 2)]


def ref_yarn(dim, base, factor, training, beta_fast=32, beta_slow=1, truncate=True):
    def correction_dim(turns):
        return dim * math.log(training / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    out = []
    for i, w in enumerate(ref_default(dim, base)):
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        extrapolation = 1 - ramp
        out.append(w / factor * (1 - extrapolation) + w * extrapolation)
    return out


def ref_llama3(dim, base, factor, low, high, training):
    out = []
    for w in ref_default(dim, base):
        wavelength = 2 * math.pi / w
        if wavelength < training / high:
            out.append(w)
        elif wavelength > training / low:
            out.append(w / factor)
        else:
            smooth = (training / wavelength - low) / (high - low)
            out.append((1 - smooth) * w / factor + smooth * w)
    return out


class TestFrequencies:
    def test_default_is_the_sinusoid_frequencies(self):
        rope = rope_frequencies(64, base=10_000.0)
        np.testing.assert_allclose(rope.inv_freq, ref_default(64, 10_000.0), rtol=RTOL)
        # The same frequencies as the 2017 encoding of width d (one per pair).
        np.testing.assert_allclose(rope.inv_freq, pe_core.frequencies(64), rtol=RTOL)
        assert rope.attention_factor == 1.0 and set(rope.band) == {"unchanged"}

    def test_matches_hugging_face_float32_arithmetic(self):
        # HF: 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)) in float32.
        dim, base = 128, np.float32(500_000.0)
        hf = np.float32(1.0) / (base ** (np.arange(0, dim, 2).astype(np.float32) / np.float32(dim)))
        ours = rope_frequencies(dim, base=500_000.0).inv_freq
        # Their float32 pow and division: within a few float32 ulps of the exact value.
        np.testing.assert_allclose(hf, ours, rtol=4 * np.finfo(np.float32).eps)

    def test_linear(self):
        rope = rope_frequencies(64, scaling={"rope_type": "linear", "factor": 4.0})
        np.testing.assert_allclose(rope.inv_freq, np.array(ref_default(64, 1e4)) / 4, rtol=RTOL)
        assert set(rope.band) == {"scaled"}

    def test_dynamic_depends_on_seq_len(self):
        scaling = {"rope_type": "dynamic", "factor": 4.0}
        within = rope_frequencies(64, scaling=scaling, max_position_embeddings=4096, seq_len=100)
        np.testing.assert_allclose(within.inv_freq, ref_default(64, 1e4), rtol=RTOL)
        rope = rope_frequencies(64, scaling=scaling, max_position_embeddings=4096, seq_len=8192)
        base = 1e4 * (4.0 * 8192 / 4096 - 3.0) ** (64 / 62)
        np.testing.assert_allclose(rope.inv_freq, ref_default(64, base), rtol=RTOL)
        assert rope.effective_base == pytest.approx(base, rel=1e-15)
        assert rope.inv_freq[0] == 1.0 and rope.band[0] == "unchanged"
        assert rope.target_length == 8192

    def test_yarn_gpt_oss_correction_range(self):
        # Published (issue 11, from gpt-oss's config): 8.092779115512402 to 17.39802450158856.
        low, high = pe_core.yarn_correction_range(32, 1, 64, 150_000.0, 4096, truncate=False)
        assert low == pytest.approx(8.092779115512402, rel=1e-15)
        assert high == pytest.approx(17.39802450158856, rel=1e-15)
        assert pe_core.yarn_correction_range(32, 1, 64, 150_000.0, 4096) == (8, 18)

    @pytest.mark.parametrize("truncate", [True, False])
    def test_yarn(self, truncate):
        scaling = {
            "rope_type": "yarn",
            "factor": 32.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": truncate,
            "original_max_position_embeddings": 4096,
        }
        rope = rope_frequencies(
            64, base=150_000.0, scaling=scaling, max_position_embeddings=131_072
        )
        expected = ref_yarn(64, 150_000.0, 32.0, 4096, truncate=truncate)
        np.testing.assert_allclose(rope.inv_freq, expected, rtol=RTOL)
        assert rope.attention_factor == pytest.approx(0.1 * math.log(32) + 1, rel=1e-15)
        bands = rope.band.tolist()
        # Pairs 0..8 unchanged either way (the ramp starts at 8 or 8.09, so pair 8 gets 0).
        assert bands[:9] == ["unchanged"] * 9
        assert bands[-1] == "scaled" and "ramp" in bands
        assert rope.training_length == 4096 and rope.target_length == 131_072

    def test_yarn_target_is_factor_times_the_trained_length(self):
        # Qwen2.5's model card adds YaRN x4 to a config whose max_position_embeddings stays at
        # the trained 32,768: the scaling is for 131,072 positions (issue 34).
        scaling = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
        rope = rope_frequencies(128, base=1e6, scaling=scaling, max_position_embeddings=32768)
        assert rope.training_length == 32768 and rope.target_length == 131_072

    def test_yarn_mscale_ratio(self):
        # DeepSeek-V3 style: attention factor = mscale(f, mscale) / mscale(f, mscale_all_dim).
        scaling = {"rope_type": "yarn", "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 0.5}
        rope = rope_frequencies(64, scaling=scaling, max_position_embeddings=4096)
        expected = (0.1 * math.log(40) + 1) / (0.05 * math.log(40) + 1)
        assert rope.attention_factor == pytest.approx(expected, rel=1e-15)
        same = {**scaling, "mscale_all_dim": 1.0}
        assert (
            rope_frequencies(64, scaling=same, max_position_embeddings=4096).attention_factor == 1
        )

    def test_yarn_explicit_attention_factor_and_missing_factor(self):
        rope = rope_frequencies(
            64,
            scaling={"rope_type": "yarn", "factor": 4.0, "attention_factor": 1.5},
            max_position_embeddings=4096,
        )
        assert rope.attention_factor == 1.5
        # factor absent: max_position_embeddings / original_max_position_embeddings.
        implicit = rope_frequencies(
            64,
            scaling={"rope_type": "yarn", "original_max_position_embeddings": 4096},
            max_position_embeddings=16384,
        )
        assert implicit.parameters["factor"] == 4.0

    def test_yarn_explicit_factor_wins_with_a_warning(self):
        scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
        with pytest.warns(UserWarning, match=r"factor'\] = 4 does not match"):
            rope = rope_frequencies(64, scaling=scaling, max_position_embeddings=32768)
        assert rope.parameters["factor"] == 4.0

    def test_llama3(self):
        scaling = {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        }
        rope = rope_frequencies(
            128, base=500_000.0, scaling=scaling, max_position_embeddings=131_072
        )
        expected = ref_llama3(128, 500_000.0, 8.0, 1.0, 4.0, 8192)
        np.testing.assert_allclose(rope.inv_freq, expected, rtol=RTOL)
        counts = {band: int(np.sum(rope.band == band)) for band in ("unchanged", "ramp", "scaled")}
        assert counts == {"unchanged": 29, "ramp": 6, "scaled": 29}

    def test_longrope_short_and_long(self):
        short = [1.0 + 0.01 * i for i in range(32)]
        long = [1.0 + 0.5 * i for i in range(32)]
        scaling = {
            "rope_type": "longrope",
            "short_factor": short,
            "long_factor": long,
            "original_max_position_embeddings": 4096,
        }
        within = rope_frequencies(
            64, scaling=scaling, max_position_embeddings=131_072, seq_len=4096
        )
        beyond = rope_frequencies(
            64, scaling=scaling, max_position_embeddings=131_072, seq_len=4097
        )
        base = np.array(ref_default(64, 1e4))
        np.testing.assert_allclose(within.inv_freq, base / short, rtol=RTOL)
        np.testing.assert_allclose(beyond.inv_freq, base / long, rtol=RTOL)
        expected = math.sqrt(1 + math.log(32) / math.log(4096))
        assert within.attention_factor == pytest.approx(expected, rel=1e-15)

    def test_partial_rotary_factor(self):
        rope = rope_frequencies(64, partial_rotary_factor=0.5)
        assert rope.rotary_dim == 32 and rope.n_pairs == 16
        np.testing.assert_allclose(rope.inv_freq, ref_default(32, 1e4), rtol=RTOL)

    def test_proportional(self):
        # HF's _compute_proportional_rope_parameters: int(p * head_dim // 2) pairs rotate with
        # base**(-2j/head_dim) (over head_dim, not the rotary part), the rest have frequency 0.
        rope = rope_frequencies(
            16, scaling={"rope_type": "proportional", "factor": 2.0}, partial_rotary_factor=0.25
        )
        expected = [1.0 / 2, 1e4 ** (-2 / 16) / 2, 0, 0, 0, 0, 0, 0]
        np.testing.assert_allclose(rope.inv_freq, expected, rtol=RTOL)
        assert rope.rotary_dim == 16
        assert rope.band.tolist()[2:] == ["not rotated"] * 6
        assert np.isinf(rope.wavelengths[-1])


LLAMA_31 = {
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}


class TestConfig:
    def test_old_and_new_forms_agree(self):
        old = rope_from_config(LLAMA_31)
        parameters = {**LLAMA_31["rope_scaling"], "rope_theta": 500000.0}
        new = {k: v for k, v in LLAMA_31.items() if k not in ("rope_scaling", "rope_theta")}
        current = rope_from_config({**new, "rope_parameters": parameters})
        assert old.rotary_dim == 128 and old.rope_type == "llama3"
        np.testing.assert_array_equal(old.inv_freq, current.inv_freq)

    def test_json_text_and_type_key(self):
        config = {**LLAMA_31, "rope_scaling": {"type": "linear", "factor": 2.0}}
        rope = rope_from_config(json.dumps(config))
        assert rope.rope_type == "linear"
        np.testing.assert_allclose(rope.inv_freq, np.array(ref_default(128, 5e5)) / 2, rtol=RTOL)

    def test_head_dim_and_text_config(self):
        config = {"text_config": {"head_dim": 96, "num_attention_heads": 8, "hidden_size": 512}}
        assert rope_from_config(config).rotary_dim == 96

    def test_phi3_top_level_original_length(self):
        config = {
            "hidden_size": 3072,
            "num_attention_heads": 32,
            "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
            "rope_scaling": {
                "type": "longrope",
                "short_factor": [1.0] * 48,
                "long_factor": [2.0] * 48,
            },
        }
        rope = rope_from_config(config, seq_len=5000)
        assert rope.training_length == 4096 and rope.parameters["factors_used"] == "long_factor"
        assert rope.attention_factor == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))

    @pytest.mark.parametrize(
        ("config", "message"),
        [
            ("{not json", "config is not valid JSON"),
            ({"rope_scaling": {}}, "head_dim, or hidden_size and num_attention_heads"),
            ({**LLAMA_31, "rope_scaling": {"rope_type": "linear"}}, "needs the key 'factor'"),
            (
                {**LLAMA_31, "rope_scaling": {"rope_type": "linear", "factor": 0.5}},
                r"scaling\['factor'\] must be a number >= 1, got 0.5",
            ),
            (
                {**LLAMA_31, "rope_scaling": {"rope_type": "ntk-by-parts"}},
                r"scaling\['rope_type'\] must be one",
            ),
            (
                {
                    **LLAMA_31,
                    "rope_scaling": {**LLAMA_31["rope_scaling"], "low_freq_factor": 5.0},
                },
                r"'high_freq_factor'\] must be at least scaling\['low_freq_factor'\]",
            ),
            (
                {
                    **LLAMA_31,
                    "rope_scaling": {
                        "rope_type": "longrope",
                        "short_factor": [1.0] * 3,
                        "long_factor": [1.0] * 64,
                    },
                },
                r"short_factor'\] must hold one factor per rotary pair \(rotary_dim // 2 = 64\)",
            ),
            ({**LLAMA_31, "rope_theta": -1}, r"config: base \(rope_theta\) must be > 1"),
            ({**LLAMA_31, "partial_rotary_factor": 1.5}, r"partial_rotary_factor must be in"),
        ],
        ids=[
            "json",
            "no-head",
            "no-factor",
            "small-factor",
            "unknown-type",
            "low-high",
            "list-length",
            "theta",
            "partial",
        ],
    )
    def test_errors_name_the_key_and_the_rule(self, config, message):
        with pytest.raises((ValueError, TypeError), match=message):
            rope_from_config(config)

    def test_warnings(self):
        with pytest.warns(UserWarning, match=r"beta_fast'\] should be greater"):
            rope_frequencies(
                64,
                scaling={"rope_type": "yarn", "factor": 2.0, "beta_fast": 1.0, "beta_slow": 4.0},
                max_position_embeddings=4096,
            )
        with pytest.warns(UserWarning, match=r"keys \['low_freq_factor'\] are not used"):
            rope_frequencies(64, scaling={"rope_type": "linear", "factor": 2, "low_freq_factor": 1})
        config = {**LLAMA_31, "max_position_embeddings": 8192}
        with pytest.warns(UserWarning, match="should be less than max_position_embeddings"):
            rope_from_config(config)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rope_from_config(LLAMA_31)  # a valid config: no warning


def hf_apply(x, positions, inv_freq, attention_factor):
    """Hugging Face's apply_rotary_pos_emb with rotate_half, in float64."""
    freqs = np.outer(positions, inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb) * attention_factor, np.sin(emb) * attention_factor
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


class TestApply:
    def test_equals_hugging_face_halves(self):
        rng = np.random.default_rng(0)
        x = rng.normal(size=(2, 3, 7, 16))
        positions = np.array([0, 1, 2, 5, 100, 4095, 4096])
        rope = rope_frequencies(
            16, scaling={"rope_type": "yarn", "factor": 4.0}, max_position_embeddings=4096
        )
        expected = hf_apply(x, positions, rope.inv_freq, rope.attention_factor)
        np.testing.assert_allclose(apply_rope(x, positions, rope), expected, rtol=0, atol=1e-12)

    def test_partial_rotation_leaves_the_rest(self):
        x = np.arange(2 * 8, dtype=np.float64).reshape(2, 8)
        rope = rope_frequencies(8, partial_rotary_factor=0.5)
        out = apply_rope(x, 2, rope)
        np.testing.assert_array_equal(out[:, 4:], x[:, 4:])
        np.testing.assert_allclose(out[:, :4], hf_apply(x[:, :4], [0, 1], rope.inv_freq, 1.0))

    def test_relative_position_only(self):
        # <R(m) q, R(n) k> depends on n - m alone (attention factor 1).
        rng = np.random.default_rng(1)
        q, k = rng.normal(size=(1, 32)), rng.normal(size=(1, 32))
        rope = rope_frequencies(32, base=10_000.0)
        scores = [
            float(apply_rope(q, [m], rope)[0] @ apply_rope(k, [m + 7], rope)[0])
            for m in (0, 13, 1000, 123_456)
        ]
        np.testing.assert_allclose(scores, scores[0], rtol=1e-9)

    def test_interleaved_and_the_weight_permutation(self):
        rng = np.random.default_rng(2)
        x = rng.normal(size=(5, 12))
        rope = rope_frequencies(12, partial_rotary_factor=2 / 3)  # 8 rotary columns of 12
        perm = pe_core.rope_permutation(12, 8)
        assert perm.tolist() == [0, 2, 4, 6, 1, 3, 5, 7, 8, 9, 10, 11]
        interleaved = apply_rope(x, 5, rope, layout="interleaved")
        halves = apply_rope(x[:, perm], 5, rope, layout="halves")
        np.testing.assert_allclose(halves, interleaved[:, perm], rtol=0, atol=1e-15)

    def test_permutation_is_the_conversion_script(self):
        # transformers/models/llama/convert_llama_weights_to_hf.py:
        # w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)
        n_heads, head_dim, hidden = 3, 8, 5
        w = np.arange(n_heads * head_dim * hidden, dtype=float).reshape(-1, hidden)
        converted = (
            w.reshape(n_heads, head_dim // 2, 2, hidden).transpose(0, 2, 1, 3).reshape(-1, hidden)
        )
        perm = pe_core.rope_permutation(head_dim, n_heads=n_heads)
        np.testing.assert_array_equal(w[perm], converted)

    def test_float32_in_float32_out(self):
        x = np.ones((3, 8), dtype=np.float32)
        assert apply_rope(x, 3, rope_frequencies(8)).dtype == np.float32

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            ((np.ones((3, 6)), 3), r"x must have rope.head_dim = 8 columns"),
            ((np.ones((3, 8)), 4), "one position per row of x"),
            ((np.ones(8), 1), r"shape \(\.\.\., n_positions, head_dim\)"),
        ],
    )
    def test_errors(self, args, message):
        with pytest.raises(ValueError, match=message):
            apply_rope(*args, rope_frequencies(8))


class TestCosSin:
    def test_is_hugging_face_cache(self):
        rope = rope_frequencies(
            64, scaling={"rope_type": "yarn", "factor": 8.0}, max_position_embeddings=4096
        )
        cos, sin = rope_cos_sin(100, rope, dtype=np.float64)
        freqs = np.outer(np.arange(100), rope.inv_freq)
        emb = np.concatenate([freqs, freqs], axis=1)
        # The plain reference rounds k * w (up to 100 radians) first: its angles are off by up
        # to about 100 * 2**-53 ~ 1e-14, so the tolerance is that of the reference.
        atol = 5e-14
        np.testing.assert_allclose(cos, np.cos(emb) * rope.attention_factor, rtol=0, atol=atol)
        np.testing.assert_allclose(sin, np.sin(emb) * rope.attention_factor, rtol=0, atol=atol)

    def test_float32_is_the_nearest_float32_at_long_context(self):
        rope = rope_frequencies(128, base=500_000.0)
        positions = np.array([0, 1, 131_071, 1_000_000])
        cos, _ = rope_cos_sin(positions, rope, dtype=np.float32)
        assert cos.dtype == np.float32 and cos.shape == (4, 128)
        # Exact reference: angles reduced in float64 are good to ~1e-10 at a million positions,
        # far below half a float32 ulp of the values (>= 3e-8 near 1).
        exact = np.cos(np.outer(positions, rope.inv_freq))
        np.testing.assert_allclose(cos[:, :64], exact.astype(np.float32), rtol=0, atol=6e-8)
        # Hugging Face's float32 angles (position * inv_freq in float32) are off by far more.
        hf = np.cos(np.float32(131_071) * rope.inv_freq.astype(np.float32))
        assert np.max(np.abs(hf - cos[2, :64])) > 1e-3


class TestScoresAndPrecision:
    def test_scores_of_all_ones(self):
        # q = k = ones, halves: score = af**2 * sum over pairs of 2 cos(offset * w_i).
        rope = rope_frequencies(
            16, scaling={"rope_type": "yarn", "factor": 4.0}, max_position_embeddings=64
        )
        offsets = np.array([0.0, 1.0, 7.0, 100.0, -3.0])
        scores = pe_core.rope_scores(offsets, rope, np.ones(16))
        expected = rope.attention_factor**2 * 2 * np.cos(np.outer(offsets, rope.inv_freq)).sum(1)
        np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)

    @pytest.mark.parametrize("layout", ["halves", "interleaved"])
    def test_scores_equal_rotating_q_and_k_with_apply_rope(self, layout):
        # The closed form (one sine and cosine per pair) against the definition: q rotated at
        # each offset and k at 0 by apply_rope, then their dot product. A partial head (its
        # last 32 columns pass through), an attention factor, whole offsets up to 10**7 (the
        # tables by digits) and offsets that are not whole (the direct tables).
        rope = rope_frequencies(
            96,
            base=1_000_000.0,
            partial_rotary_factor=2 / 3,
            scaling={"rope_type": "yarn", "factor": 8.0},
            max_position_embeddings=32_768,
        )
        assert rope.attention_factor != 1 and rope.rotary_dim == 64
        rng = np.random.default_rng(5)
        q, k = rng.normal(size=96), rng.normal(size=96)
        whole = np.unique(np.round(np.geomspace(1, 1.25e7, 300)))
        for offsets in (
            np.concatenate([-whole[::7], [0.0], whole]),
            np.array([-2.5, 0.25, 7e5 + 0.5]),
        ):
            rotated = apply_rope(
                np.broadcast_to(q, (offsets.size, 96)), offsets, rope, layout=layout
            )
            key = apply_rope(k[None, :], [0], rope, layout=layout)[0]
            scale = rope.attention_factor**2 * np.sum(np.abs(q * k))
            np.testing.assert_allclose(
                pe_core.rope_scores(offsets, rope, q, k, layout=layout),
                rotated @ key,
                rtol=0,
                atol=8 * np.finfo(float).eps * scale,
            )

    def test_decay_bound_holds_and_starts_at_its_maximum(self):
        rng = np.random.default_rng(3)
        rope = rope_frequencies(32, base=10_000.0)
        q, k = rng.normal(size=32), rng.normal(size=32)
        offsets = np.arange(0, 3000, 7)
        bound = pe_core.rope_decay_bound(offsets, rope)
        assert bound[0] == pytest.approx((16 + 1) / 2)  # S_j = j at offset 0
        # Su et al. 3.4.3 with h_i = q_i conj(k_i) (pairs i, i + 16), h_16 = 0.
        h = np.append((q[:16] + 1j * q[16:]) * np.conj(k[:16] + 1j * k[16:]), 0)
        step = np.max(np.abs(np.diff(h)))
        scores = pe_core.rope_scores(offsets, rope, q, k)
        assert np.all(np.abs(scores) <= step * 16 * bound * (1 + 1e-12))

    def test_merged_position_ids(self):
        for name, pair in [("bfloat16", (256, 257)), ("float16", (2048, 2049))]:
            assert pe_core.merged_position_ids(name) == pair
            before, first, second = pe_core.quantize([pair[0] - 1, *pair], name)
            assert first == second and before != first

    def test_angle_errors(self):
        rope = rope_frequencies(128, base=500_000.0)
        positions = np.array([0, 1, 257, 131_071])
        assert np.all(pe_core.rope_angle_errors(positions, rope, "float64") < 1e-9)
        # float32: the angle float32(float32(k) * float32(w)), as a float32 framework computes.
        f32 = (positions.astype(np.float32)[:, None] * rope.inv_freq.astype(np.float32)).astype(
            np.float64
        )
        expected = np.max(np.abs(f32 - np.outer(positions, rope.inv_freq)), axis=1)
        errors = pe_core.rope_angle_errors(positions, rope, "float32")
        np.testing.assert_allclose(errors, expected, rtol=1e-6, atol=1e-12)
        assert errors[-1] > 1e-3  # milliradians at 131,072 positions
        # bfloat16 position ids: 257 becomes 256, a whole radian off on the fastest pair.
        assert pe_core.rope_angle_errors([257], rope, "bfloat16")[0] >= 1.0 - 1e-2


HF = json.loads((DATA / "rope_hf_5_23.json").read_text())
#: Llama's own default function ignores partial_rotary_factor (GPT-NeoX's and every scaled
#: type honour it); pe_core follows the latter, as the case "..._gptneox" checks.
NOT_FOLLOWED = {"g_default_partial_rotary_0.5_llama_default_fn"}
FLOAT32_RTOL = 4 * float(np.finfo(np.float32).eps)  # their float32 pow and division
#: Cases whose "float64" column still holds float32 roundings, so only the float32 column is a
#: reference: LongRoPE builds its factor tensor with dtype=torch.float32 explicitly (1.01 is
#: rounded), and dynamic NTK with a tensor seq_len computes its base in float32.
FLOAT64_COLUMN_MIXED = {
    "c_dynamic_factor4_seq8192_tensor",
    "e_longrope_seq4096",
    "e_longrope_seq4097",
    "e_longrope_seq8192",
    "e_longrope_seqNone",
}


class TestHuggingFaceLiterals:
    """Literal values from transformers 5.23.0's own functions (tests/data/rope_hf_5_23.json)."""

    @pytest.mark.parametrize("case", sorted(set(HF["cases"]) - NOT_FOLLOWED))
    def test_inv_freq_and_attention_factor(self, case):
        data = HF["cases"][case]
        rope = rope_from_config(data["config"], seq_len=data["seq_len"])
        if case not in FLOAT64_COLUMN_MIXED:
            # Their source run in float64: the same formulas, equal to a few float64 ulps.
            np.testing.assert_allclose(rope.inv_freq, data["inv_freq_float64"], rtol=1e-14, atol=0)
        # Their float32 values: ours rounded to float32 agree to their float32 rounding.
        np.testing.assert_allclose(
            rope.inv_freq, data["inv_freq_float32"], rtol=FLOAT32_RTOL, atol=0
        )
        assert rope.attention_factor == pytest.approx(data["attention_factor"], rel=1e-15)

    @pytest.mark.parametrize("preset", sorted(HF["presets"]))
    def test_presets(self, preset):
        data = HF["presets"][preset]
        rope = rope_from_config(data["config"])
        np.testing.assert_allclose(
            rope.inv_freq, data["inv_freq_float32"], rtol=FLOAT32_RTOL, atol=0
        )
        assert rope.attention_factor == pytest.approx(data["attention_factor"], rel=1e-15)

    def test_gpt_oss_correction_range(self):
        data = HF["gpt_oss_correction_range"]
        args = data["args"]
        range_of = lambda truncate: pe_core.yarn_correction_range(  # noqa: E731
            args["beta_fast"],
            args["beta_slow"],
            args["dim"],
            args["base"],
            args["original_max_position_embeddings"],
            truncate=truncate,
        )
        assert list(range_of(False)) == data["truncate_false"]
        assert list(range_of(True)) == data["truncate_true"]

    @pytest.mark.parametrize("sample", sorted(HF["apply_samples"]))
    def test_apply_rotary_pos_emb(self, sample):
        data = HF["apply_samples"][sample]
        rope = rope_from_config(data["config"])
        assert rope.attention_factor == pytest.approx(data["attention_scaling"], rel=1e-15)
        positions = data["position_ids"]
        for given, expected in (("q", "q_embed"), ("k", "k_embed")):
            x = np.array(data[given], dtype=np.float32)
            ours = apply_rope(x, positions, rope)
            # Their float32 angles and products against our exact ones: float32 rounding.
            np.testing.assert_allclose(ours, np.array(data[expected]), rtol=0, atol=4e-6)


class TestScalingThatBreaksTheFrequencies:
    """Issue 40: "frequencies must be finite" came from the bank, naming no key of the config."""

    @pytest.mark.parametrize("tiny", [1e-320, 1e-310])
    def test_longrope_factors_that_make_infinite_frequencies_are_named(self, tiny):
        config = {
            "head_dim": 64,
            "max_position_embeddings": 4096,
            "rope_scaling": {
                "rope_type": "longrope",
                "short_factor": [tiny] * 32,
                "long_factor": [1.0] * 32,
            },
        }
        with pytest.raises(pe_core.InputError) as caught:
            rope_from_config(config, seq_len=1024)
        message = str(caught.value)
        assert "rope_type 'longrope' with 'long_factor', 'short_factor'" in message
        assert (
            "of its 32 frequencies (inv_freq) infinite, NaN or negative, the first at pair 0"
            in (message)
        )

    def test_finite_extreme_factors_still_work(self):
        rope = rope_from_config(
            {"head_dim": 64, "rope_scaling": {"rope_type": "linear", "factor": 1e308}}
        )
        assert np.all(np.isfinite(rope.inv_freq)) and np.all(rope.inv_freq > 0)


# --- the current sequence length --------------------------------------------------------

#: One scaling of each rope_type, for a 64-column head trained on 4,096 positions.
SCALING_OF = {
    "default": {"rope_type": "default"},
    "linear": {"rope_type": "linear", "factor": 4.0},
    "dynamic": {"rope_type": "dynamic", "factor": 4.0},
    "yarn": {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096},
    "longrope": {
        "rope_type": "longrope",
        "short_factor": [1.0] * 32,
        "long_factor": [float(1 + i) for i in range(32)],
        "original_max_position_embeddings": 4096,
    },
    "llama3": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 4096,
    },
    "proportional": {"rope_type": "proportional", "factor": 2.0},
}


class TestSequenceLength:
    """Whether a variant's frequencies follow the current sequence length is data on the
    variant (``depends_on_seq_len``), as transformers' ``dynamic_rope_update`` recomputes only
    dynamic NTK's and LongRoPE's; the target length is the configuration's for the others."""

    def test_every_rope_type_has_a_case(self):
        assert set(SCALING_OF) == set(pe_core.ROPE_TYPES)

    @pytest.mark.parametrize("rope_type", list(SCALING_OF))
    def test_the_flag_says_what_seq_len_changes(self, rope_type):
        def at(seq_len):
            return rope_frequencies(
                64,
                scaling=SCALING_OF[rope_type],
                max_position_embeddings=163_840,
                seq_len=seq_len,
                **({"partial_rotary_factor": 0.5} if rope_type == "proportional" else {}),
            )

        plain = at(None)
        lengths = (1, 1000, 4097, 163_840, 777_777)
        changed = [at(n).signature != plain.signature for n in lengths]
        assert any(changed) == pe_core.ROPE_VARIANTS[rope_type].depends_on_seq_len
        if not pe_core.ROPE_VARIANTS[rope_type].depends_on_seq_len:
            # A length passed changes neither the frequencies nor the length they are for.
            assert [at(n).target_length for n in lengths] == [plain.target_length] * 5
            assert [at(n).training_length for n in lengths] == [plain.training_length] * 5

    def test_yarn_is_for_its_configured_length_at_any_seq_len(self):
        # Issue 53, case 4: DeepSeek-V3 at rope_seq=777,777 drew "target length: 777,777", and
        # at 1,000 a target below the training length.
        config = {
            "model_type": "deepseek_v3",
            "hidden_size": 7168,
            "num_attention_heads": 128,
            "qk_rope_head_dim": 64,
            "max_position_embeddings": 163840,
            "rope_scaling": {
                "type": "yarn",
                "factor": 40,
                "original_max_position_embeddings": 4096,
            },
        }
        for seq_len in (None, 1000, 777_777):
            rope = rope_from_config(config, seq_len=seq_len)
            assert (rope.training_length, rope.target_length) == (4096, 163_840)

    def test_dynamic_ntk_is_for_the_longer_of_seq_len_and_its_length(self):
        scaling = SCALING_OF["dynamic"]
        for seq_len, target in ((None, 4096), (1000, 4096), (9000, 9000)):
            rope = rope_frequencies(
                64, scaling=scaling, max_position_embeddings=4096, seq_len=seq_len
            )
            assert rope.target_length == target

    @pytest.mark.library
    def test_the_flag_is_transformers_own(self):
        """Live: transformers 5.24's compute function of each rope_type, called with and
        without a sequence length, changes its frequencies exactly for the flagged ones."""
        torch = pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
        pytest.importorskip("transformers", minversion="5.24", reason="transformers 5.24")
        from transformers import LlamaConfig
        from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

        for rope_type, scaling in SCALING_OF.items():
            if rope_type == "default":
                continue  # not in ROPE_INIT_FUNCTIONS: the model computes base ** -(2i/d)
            parameters = {**scaling, "rope_theta": 10_000.0}
            if rope_type == "proportional":
                parameters["partial_rotary_factor"] = 0.5
            config = LlamaConfig(
                head_dim=64,
                hidden_size=512,
                num_attention_heads=8,
                max_position_embeddings=163_840,
                rope_parameters=parameters,
            )
            compute = ROPE_INIT_FUNCTIONS[rope_type]
            plain = compute(config, "cpu")[0]
            changed = any(
                not torch.equal(compute(config, "cpu", seq_len=n)[0], plain)
                for n in (1000, 4097, 777_777)
            )
            assert changed == pe_core.ROPE_VARIANTS[rope_type].depends_on_seq_len, rope_type


class TestVariantKnowledge:
    """What a variant knows of lengths and of its unscaled encoding lives on the RopeVariant
    (issue 49: the config reader, the identification and the lab each had a list of their
    own)."""

    def test_the_variants_that_read_the_original_length(self):
        reading = {v.name for v in pe_core.ROPE_VARIANTS.values() if v.reads_original_length}
        assert reading == {"yarn", "longrope", "llama3"}
        scaled = {v.name for v in pe_core.ROPE_VARIANTS.values() if v.scaled_length}
        assert scaled == {"linear"}

    @pytest.mark.library
    def test_they_are_those_whose_transformers_function_reads_it(self):
        """transformers 5.24's compute function of each rope_type, read from its own source."""
        import inspect

        pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
        rope_utils = pytest.importorskip("transformers.modeling_rope_utils")
        for name, function in rope_utils.ROPE_INIT_FUNCTIONS.items():
            reads = '["original_max_position_embeddings"]' in inspect.getsource(function)
            assert reads == pe_core.ROPE_VARIANTS[name].reads_original_length, name

    @pytest.mark.parametrize("rope_type", sorted(SCALING_OF))
    def test_the_unscaled_encoding_is_the_default_of_the_same_head(self, rope_type):
        extra = {"partial_rotary_factor": 0.5} if rope_type == "proportional" else {}
        rope = rope_frequencies(
            64,
            base=500_000.0,
            scaling=SCALING_OF[rope_type],
            max_position_embeddings=163_840,
            **extra,
        )
        plain = rope.unscaled()
        assert plain.rope_type == "default" and plain.attention_factor == 1.0
        assert (plain.head_dim, plain.rotary_dim, plain.base) == (64, rope.rotary_dim, 500_000.0)
        np.testing.assert_array_equal(plain.inv_freq, rope.original_inv_freq)
