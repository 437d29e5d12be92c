"""Identifying a rotary encoding from vectors before and after rotation (``identify_rope(before=,
after=)``): the cache rebuilt from them, its layout and rotating columns, the variant, parameters
and arithmetic, the catalogue's bugs, and bad input.

Reference data: tests/data/rope_caches/ (cos and sin computed by transformers 5.24's own rotary
classes, float32 and bfloat16, see SOURCES.md there), applied here to random vectors as
transformers' ``apply_rotary_pos_emb`` applies them, ``q * cos + rotate_half(q) * sin``, every
operation rounded to the vectors' format (:func:`rotate`). Where torch and transformers are
installed, the same is checked against their own ``apply_rotary_pos_emb`` (TestLiveTransformers).

Tolerances: a rebuilt cache is compared with ``8 u`` (times the attention factor) per entry in
place of the storage's rounding (``u`` the unit roundoff of the format the vectors were rotated
in; the rotation's own roundings are at most ``5.5 u`` of a pair's norm); attention factors to
``8 u``; correction ranges to 0.01 pair, as for caches.
"""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import pe_core
from pe_core import ROPE_BUGS, InputError, InputTypeError, identify_rope
from pe_core._numerics.formats import round_to_precision
from pe_core.rotary.identify._vectors import _rebuild
from tests.core.rope_caches import CASES, INDEX
from tests.core.rope_caches import reference as stored_reference

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
KINDS = ("float32", "bfloat16")
UNIT = {"float32": 2.0**-24, "bfloat16": 2.0**-8, "float64": 2.0**-53}
PARAMETERS = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")


def rounded(values, fmt):
    return round_to_precision(np.asarray(values, dtype=np.float64), fmt)


def rotate_half(x, layout):
    if layout == "halves":
        half = x.shape[-1] // 2
        return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    return out


def rotate(x, cos, sin, layout, fmt, first=0):
    """``x * cos + rotate_half(x) * sin`` on the columns ``first:first + cos.shape[1]`` of ``x``
    (the others pass through), cos and sin cast to ``fmt`` and each product and the sum
    rounded to it, as torch computes it in that dtype."""
    x = np.asarray(x, dtype=np.float64)
    width = cos.shape[-1]
    block = x[..., first : first + width]
    cos, sin = rounded(cos, fmt), rounded(sin, fmt)
    products = rounded(block * cos, fmt), rounded(rotate_half(block, layout) * sin, fmt)
    turned = rounded(products[0] + products[1], fmt)
    out = x.copy()
    out[..., first : first + width] = turned
    return out


def vectors(shape, fmt, seed=0):
    return rounded(np.random.default_rng(seed).standard_normal(shape), fmt)


@cache
def reference(case: str, kind: str):
    """(cos, sin, positions, config) of a stored case; cos and sin in halves columns (gpt-oss's
    one column per pair repeated, as its attention's halves use it)."""
    cos, sin, positions, config, arrays = stored_reference(case, kind)
    if cos.shape[1] == arrays["inv_freq"].size:
        cos, sin = np.concatenate([cos, cos], axis=1), np.concatenate([sin, sin], axis=1)
    return cos.astype(np.float64), sin.astype(np.float64), positions, config


def config_rope(case, positions):
    config = reference(case, "float32")[3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pe_core.rope_from_config(
            config, layer_type=CASES[case]["layer_type"], seq_len=int(np.max(positions)) + 1
        )


def identify(case=None, **kwargs):
    config = None if case is None else reference(case, "float32")[3]
    layer_type = None if case is None else CASES[case]["layer_type"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return identify_rope(config=config, layer_type=layer_type, **kwargs)


def case_vectors(case, kind, heads=2, seed=0):
    """Random vectors of the case's head size, and the same rotated by its stored cache."""
    cos, sin, positions, _ = reference(case, kind)
    rope = config_rope(case, positions)
    x = vectors((heads, positions.size, rope.head_dim), kind, seed)
    return x, rotate(x, cos, sin, "halves", kind), positions, rope


# --- literal cases -----------------------------------------------------------------------------


class TestVectorsLiteral:
    def test_plain_exact_rotation(self):
        rope = pe_core.rope_frequencies(64, base=10_000.0)
        cos, sin = pe_core.rope_cos_sin(512, rope, dtype=np.float64)
        x = vectors((512, 64), "float64")
        found = identify_rope(before=x, after=rotate(x, cos, sin, "halves", "float64"))
        assert found.source == "vectors"
        assert (found.rope_type, found.base, found.rotary_dim, found.layout) == (
            "default",
            10_000.0,
            64,
            "halves",
        )
        assert found.arithmetic == pe_core.RopeArithmetic(
            "float64", "exact", None, "exact", rotated="float64"
        )
        assert found.attention_factor == 1.0 and found.matches
        assert found.positions == (0.0, 511.0) and found.n_positions == 512
        np.testing.assert_allclose(found.inv_freq, rope.inv_freq, rtol=1e-9)
        assert "vectors rotated in float64" in found.summary()

    def test_rebuilt_cos_and_sin_are_the_rotation(self):
        # Halves of 4 columns: pair 0 is columns (0, 2), pair 1 is (1, 3). Row 0 does not
        # move; row 1 turns pair 0 by 90 degrees (1 -> i) and pair 1 by 180 (i -> -i); row 2
        # the same (3 + 4i -> -4 + 3i, 1 -> -1).
        x = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 0.0, 0.0, 1.0], [3.0, 1.0, 4.0, 0.0]])
        y = np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 1.0, -1.0], [-4.0, -1.0, 3.0, 0.0]])
        rebuilt = _rebuild(x, y, None)
        assert rebuilt.layout == "halves" and rebuilt.heads == 1
        np.testing.assert_array_equal(rebuilt.cos, [[1, 1, 1, 1], [0, -1, 0, -1], [0, -1, 0, -1]])
        np.testing.assert_array_equal(rebuilt.sin, [[0, 0, 0, 0], [1, 0, 1, 0], [1, 0, 1, 0]])
        assert rebuilt.largest_norm_change == 0.0

    def test_interleaved_layout(self):
        rope = pe_core.rope_frequencies(32, base=500_000.0)
        cos, sin = pe_core.rope_cos_sin(300, rope, layout="interleaved")
        x = vectors((300, 32), "float32")
        found = identify_rope(before=x, after=rotate(x, cos, sin, "interleaved", "float32"))
        assert (found.layout, found.base, found.rotary_dim) == ("interleaved", 500_000.0, 32)
        assert found.arithmetic.rotated == "float32"

    def test_batch_of_heads(self):
        rope = pe_core.rope_frequencies(64, base=10_000.0)
        cos, sin = pe_core.rope_cos_sin(200, rope)
        x = vectors((2, 3, 200, 64), "float32")
        found = identify_rope(before=x, after=rotate(x, cos, sin, "halves", "float32"))
        assert (found.rope_type, found.base, found.n_positions) == ("default", 10_000.0, 200)

    def test_columns_that_do_not_rotate(self):
        rope = pe_core.rope_frequencies(64, base=10_000.0, partial_rotary_factor=0.25)
        cos, sin = pe_core.rope_cos_sin(100, rope)
        x = vectors((100, 64), "float32")
        found = identify_rope(before=x, after=rotate(x, cos, sin, "halves", "float32"))
        assert (found.width, found.rotary_dim, found.rotary_columns) == (64, 16, (0, 16))
        last = identify_rope(before=x, after=rotate(x, cos, sin, "halves", "float32", first=48))
        assert last.rotary_columns == (48, 64)  # DeepSeek's [nope | rope]

    def test_attention_factor(self):
        scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
        rope = pe_core.rope_frequencies(128, base=10_000.0, scaling=scaling)
        positions = np.array([*range(32), 100, 1000, 4096, 20_000])
        cos, sin = pe_core.rope_cos_sin(positions, rope)
        x = vectors((4, positions.size, 128), "float32")
        found = identify_rope(
            before=x, after=rotate(x, cos, sin, "halves", "float32"), positions=positions
        )
        assert found.rope_type == "yarn" and found.parameters["factor"] == 4.0
        wanted = pytest.approx(rope.attention_factor, rel=8 * UNIT["float32"])
        assert found.attention_factor == wanted

    def test_a_zero_pair_in_one_head_is_carried_by_the_others(self):
        rope = pe_core.rope_frequencies(32, base=10_000.0)
        cos, sin = pe_core.rope_cos_sin(64, rope)
        x = vectors((2, 64, 32), "float32")
        x[0, 5, [3, 19]] = 0.0  # pair 3 of row 5 in head 0
        found = identify_rope(before=x, after=rotate(x, cos, sin, "halves", "float32"))
        assert found.rope_type == "default" and found.base == 10_000.0

    def test_positions_given(self):
        rope = pe_core.rope_frequencies(32, base=10_000.0)
        positions = np.array([0, 1, 2, 5, 9, 100, 1000, 4096, 70_000])
        cos, sin = pe_core.rope_cos_sin(positions, rope)
        x = vectors((positions.size, 32), "float32")
        found = identify_rope(
            before=x, after=rotate(x, cos, sin, "halves", "float32"), positions=positions
        )
        assert found.base == 10_000.0 and found.positions == (0.0, 70_000.0)


class TestVectorsInvalid:
    def setup_method(self):
        rope = pe_core.rope_frequencies(16, base=10_000.0)
        cos, sin = pe_core.rope_cos_sin(8, rope)
        self.x = vectors((8, 16), "float32")
        self.y = rotate(self.x, cos, sin, "halves", "float32")

    def test_one_without_the_other(self):
        with pytest.raises(InputError, match="before and after must be given together"):
            identify_rope(before=self.x)
        with pytest.raises(InputError, match="give one of a cache"):
            identify_rope(np.ones((4, 4)), np.zeros((4, 4)), before=self.x, after=self.y)

    def test_shapes_differ(self):
        with pytest.raises(InputError, match="before and after must have the same shape"):
            identify_rope(before=self.x, after=self.y[:, :8])

    def test_one_dimensional(self):
        with pytest.raises(InputError, match=r"before must have shape \(positions, head_dim\)"):
            identify_rope(before=self.x[0], after=self.y[0])

    def test_not_numbers(self):
        with pytest.raises(InputTypeError, match="after"):
            identify_rope(before=self.x, after=np.full(self.x.shape, "a"))

    def test_not_finite(self):
        y = self.y.copy()
        y[2, 3] = np.inf
        with pytest.raises(InputError, match="after must be finite"):
            identify_rope(before=self.x, after=y)

    def test_a_long_double_beyond_float64_is_refused_without_a_warning(self):
        # Fuzz finding (test_fuzz_one_bad_argument[rope_cache_from_vectors], 2026-11-28): a
        # long double of 1e400 became inf in float64 with NumPy's RuntimeWarning first.
        before = np.zeros((2, 8), dtype=np.longdouble)
        before[1, 1] = np.longdouble("1e400")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(InputError, match="before must be finite in float64"):
                identify_rope(before=before, after=self.y[:2, :8])

    def test_zero_vectors(self):
        with pytest.raises(InputError, match="before must not be zero"):
            identify_rope(before=np.zeros((8, 16)), after=np.zeros((8, 16)))

    def test_a_pair_zero_everywhere(self):
        x, y = self.x.copy(), self.y.copy()
        x[3, [2, 10]] = y[3, [2, 10]] = 0.0
        with pytest.raises(InputError, match=r"before is zero in pair 2 at position 3 \(row 3\)"):
            identify_rope(before=x, after=y)

    def test_not_rotated(self):
        with pytest.raises(InputError, match="after equals before in every column"):
            identify_rope(before=self.x, after=self.x)

    @pytest.mark.parametrize("heads", [1, 3])
    def test_not_a_rotation(self, heads):
        x = vectors((heads, 8, 16), "float32")
        noise = vectors(x.shape, "float32", seed=1)
        with pytest.raises(InputError, match="after is not a rotation of before"):
            identify_rope(before=x, after=noise)

    def test_positions_not_increasing(self):
        positions = [0, 1, 2, 3, 5, 4, 6, 7]
        with pytest.raises(InputError, match=r"strictly increasing.*rows 4 and 5"):
            identify_rope(before=self.x, after=self.y, positions=positions)

    def test_positions_length(self):
        with pytest.raises(InputError, match=r"one position per row of before \(8\), got 3"):
            identify_rope(before=self.x, after=self.y, positions=[0, 1, 2])

    def test_too_few_positions_or_columns(self):
        with pytest.raises(InputError, match="at least 2 positions"):
            identify_rope(before=self.x[:1], after=self.y[:1])
        with pytest.raises(InputError, match="at least 4 columns"):
            identify_rope(before=self.x[:, :2], after=self.y[:, :2])


# --- transformers' caches applied to vectors -----------------------------------------------------


CASE_KINDS = [(case, kind) for case in CASES for kind in KINDS]


@pytest.mark.parametrize(("case", "kind"), CASE_KINDS)
def test_vectors_rotated_by_transformers_caches(case, kind):
    x, y, positions, rope = case_vectors(case, kind)
    found = identify(case, before=x, after=y, positions=positions)
    wanted = "default" if rope.rope_type == "dynamic" else rope.rope_type
    assert found.rope_type == wanted, found.summary()
    wanted_columns = (rope.rotary_dim, "halves", rope.head_dim)
    assert (found.rotary_dim, found.layout, found.width) == wanted_columns
    if found.base_snapped:
        assert found.base == rope.effective_base
    else:  # dynamic NTK's base, or LongRoPE's: within the fit's uncertainty
        assert found.base == pytest.approx(rope.effective_base, rel=1e-3)
    for key in PARAMETERS:
        if key in rope.parameters and rope.rope_type not in ("dynamic", "longrope"):
            assert found.parameters[key] == rope.parameters[key]
    if rope.rope_type == "yarn":
        np.testing.assert_allclose(
            found.parameters["correction_range"], rope.parameters["correction_range"], atol=0.01
        )
    assert found.attention_factor == pytest.approx(rope.attention_factor, rel=8 * UNIT[kind])
    assert found.arithmetic.rotated == found.arithmetic.storage == kind
    assert found.arithmetic.positions == "exact" and found.arithmetic.inv_freq is None
    # float32's rounding of the angles shows at these positions (to 131,071) through a float32
    # rotation; a bfloat16 rotation's own rounding (up to 8 u = 0.03) hides it.
    assert found.arithmetic.angles == ("float32" if kind == "float32" else "unresolved")
    assert f"vectors rotated in {kind}" in found.summary()
    assert found.config_matches is True, found.summary()
    assert found.bugs == ()


def test_bfloat16_rotation_error_is_within_the_model():
    # The rebuilt entries' largest error from the exact cache, in bfloat16 unit roundoffs:
    # below ROTATION_ULPS (the bound), and above 1 (the model is not loose by an order).
    from pe_core.rotary.identify._vectors import ROTATION_ULPS

    x, y, positions, rope = case_vectors("llama3_1_8b", "bfloat16")
    rebuilt = _rebuild(x, y, positions)
    angles = np.multiply.outer(positions, rope.inv_freq)
    half = rope.rotary_dim // 2
    error = max(
        np.max(np.abs(rebuilt.cos[:, :half] - np.cos(angles))),
        np.max(np.abs(rebuilt.sin[:, :half] - np.sin(angles))),
    )
    assert 1 < error / UNIT["bfloat16"] < ROTATION_ULPS


def bug_cases():
    cases = []
    for case in ("llama3_1_8b", "qwen2_5_7b_yarn", "qwen3_8b_default", "phi1_partial"):
        _, _, positions, _ = reference(case, "float32")
        rope = config_rope(case, positions)
        for kind in KINDS:
            for bug in ROPE_BUGS.values():
                if bug.applies(rope) and bug.name != "exponent_i_over_d":
                    cases.append((case, kind, bug.name))
    return cases


@pytest.mark.parametrize(("case", "kind", "name"), bug_cases())
def test_injected_bug_is_named(case, kind, name):
    """Vectors rotated by a cache with the bug injected (the wrong layout: rotated in the
    other layout; the wrong columns: the last rotary_dim columns rotated)."""
    cos, sin, positions, _ = reference(case, kind)
    rope = config_rope(case, positions)
    x = vectors((2, positions.size, rope.head_dim), kind)
    if name == "wrong_pair_layout":
        wrong_cos, wrong_sin = ROPE_BUGS[name].inject(cos, sin, positions, rope)
        y = rotate(x, wrong_cos, wrong_sin, "interleaved", kind)
    elif name == "partial_rotary_wrong_columns":
        y = rotate(x, cos, sin, "halves", kind, first=rope.head_dim - rope.rotary_dim)
    else:
        wrong_cos, wrong_sin = ROPE_BUGS[name].inject(cos, sin, positions, rope)
        y = rotate(x, wrong_cos, wrong_sin, "halves", kind)
    found = identify(case, before=x, after=y, positions=positions)
    assert found.config_matches is False
    assert name in found.bugs, found.summary()
    assert found.likely_cause == name or {name, found.likely_cause} == {
        "base_off_by_100x",
        "exponent_i_over_d",
    }


def test_base_times_100_without_config_is_another_base():
    cos, sin, positions, _ = reference("qwen3_8b_default", "float32")
    rope = config_rope("qwen3_8b_default", positions)
    wrong = ROPE_BUGS["base_off_by_100x"].inject(cos, sin, positions, rope)
    x = vectors((positions.size, rope.head_dim), "float32")
    found = identify(before=x, after=rotate(x, *wrong, "halves", "float32"), positions=positions)
    assert found.base == rope.base / 100 and found.rope_type == "default"


def test_bf16_positions_named_without_config():
    cos, sin, positions, _ = reference("llama3_1_8b", "float32")
    rope = config_rope("llama3_1_8b", positions)
    wrong = ROPE_BUGS["bf16_positions"].inject(cos, sin, positions, rope)
    x = vectors((positions.size, rope.head_dim), "bfloat16")
    found = identify(before=x, after=rotate(x, *wrong, "halves", "bfloat16"), positions=positions)
    assert "bf16_positions" in found.bugs and found.arithmetic.positions == "bfloat16"
    assert found.arithmetic.rotated == "bfloat16"


# --- live: transformers' own apply_rotary_pos_emb ------------------------------------------------

#: (name, config file of tests/data/hf_configs or a model_type for transformers' default config,
#: rope_scaling added): Llama 3.1's llama3, Qwen2.5's YaRN (as its model card adds it), Qwen3's
#: plain RoPE, Phi-1's partial rotary (NeoX style, halves), Cohere's interleaved pairs and GLM's
#: interleaved partial rotary (the class defaults: neither is in the corpus).
LIVE = {
    "llama3_1": ("llama3.1-Llama-3.1-8B-Instruct.json", None),
    "qwen2_5_yarn": (
        "qwen2.5-Qwen2.5-7B-Instruct.json",
        {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
    ),
    "qwen3_default": ("qwen3-Qwen3-8B.json", None),
    "phi1_partial": ("phi-phi-1.json", None),
    "cohere_interleaved": ("cohere", None),
    "glm_interleaved_partial": ("glm", None),
}


def live_vectors(name, dtype_name, positions, apply_from=None, heads=2):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import importlib

    source, scaling = LIVE[name]
    if source.endswith(".json"):
        raw = json.loads((CONFIGS / source).read_text(encoding="utf-8"))
    else:
        raw = {"model_type": source}
    if scaling is not None:
        raw["rope_scaling"] = scaling
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = {k: v for k, v in raw.items() if k != "model_type"}
        config = transformers.CONFIG_MAPPING[raw["model_type"]](**settings)
    package = type(config).__module__.rpartition(".")[0]
    modeling = importlib.import_module(f"{package}.modeling_{raw['model_type']}")
    rotary = next(
        getattr(modeling, n)
        for n in dir(modeling)
        if n.endswith("RotaryEmbedding") and getattr(modeling, n).__module__ == modeling.__name__
    )(config=config)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    dtype = getattr(torch, dtype_name)
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, heads, len(positions), head_dim, generator=generator).to(dtype)
    if apply_from is not None:  # another model's apply_rotary_pos_emb (a port's mix-up)
        path = f"transformers.models.{apply_from}.modeling_{apply_from}"
        modeling = importlib.import_module(path)
    cos, sin = rotary(q, torch.tensor(positions)[None])
    width = cos.shape[-1]
    if width < head_dim and raw["model_type"] != "glm":  # Phi splits before the call, GLM inside
        turned, _ = modeling.apply_rotary_pos_emb(q[..., :width], q[..., :width], cos, sin)
        q_embed = torch.cat([turned, q[..., width:]], dim=-1)
    else:
        q_embed, _ = modeling.apply_rotary_pos_emb(q, q, cos, sin)
    return q.float().numpy(), q_embed.float().numpy(), config.to_dict()


@pytest.mark.library
@pytest.mark.parametrize("dtype_name", KINDS)
@pytest.mark.parametrize("name", list(LIVE))
def test_live_apply_rotary_pos_emb(name, dtype_name):
    positions = [int(p) for p in INDEX["positions"]]
    x, y, config = live_vectors(name, dtype_name, positions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rope = pe_core.rope_from_config(config, seq_len=max(positions) + 1)
        found = identify_rope(before=x, after=y, positions=positions, config=config)
    assert found.config_matches is True, found.summary()
    assert (found.rope_type, found.base, found.rotary_dim, found.layout) == (
        rope.rope_type,
        rope.base,
        rope.rotary_dim,
        rope.layout,
    )
    for key in PARAMETERS:
        if key in rope.parameters:
            assert found.parameters[key] == rope.parameters[key]
    assert found.attention_factor == pytest.approx(rope.attention_factor, rel=8 * UNIT[dtype_name])
    assert found.arithmetic.rotated == dtype_name
    assert found.arithmetic.angles == ("float32" if dtype_name == "float32" else "unresolved")
    assert found.bugs == ()


@pytest.mark.library
@pytest.mark.parametrize("dtype_name", KINDS)
def test_live_llama_cache_by_coheres_interleaved_rotate(dtype_name):
    # Llama 3.1's cos and sin (cat(freqs, freqs)) given to Cohere's apply_rotary_pos_emb,
    # which pairs columns (2i, 2i+1): named, and the cache still identified.
    positions = [int(p) for p in INDEX["positions"]]
    x, y, config = live_vectors("llama3_1", dtype_name, positions, apply_from="cohere", heads=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = identify_rope(before=x, after=y, positions=positions, config=config)
    assert found.likely_cause == "wrong_pair_layout", found.summary()
    assert found.findings[0].evidence == {"cache_layout": "halves", "rotated_pairs": "interleaved"}
    assert (found.rope_type, found.base, found.layout) == ("llama3", 500_000.0, "halves")


@pytest.mark.library
def test_live_wrong_layout_is_named():
    # Cohere's interleaved rotation checked against a config of halves (Llama's): the layout.
    positions = [int(p) for p in INDEX["positions"]]
    x, y, config = live_vectors("cohere_interleaved", "float32", positions)
    config = {**config, "model_type": "llama"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = identify_rope(before=x, after=y, positions=positions, config=config)
    assert found.likely_cause == "wrong_pair_layout", found.summary()


def test_a_float32_query_saved_before_its_bfloat16_rotation():
    # The query dumped in float32, then cast to bfloat16 and rotated there: the coarser format
    # of the two arrays is the rotation's.
    cos, sin, positions, _ = reference("qwen3_8b_default", "bfloat16")
    x = vectors((2, positions.size, 128), "float32")
    y = rotate(rounded(x, "bfloat16"), cos, sin, "halves", "bfloat16")
    found = identify("qwen3_8b_default", before=x, after=y, positions=positions)
    assert found.arithmetic.rotated == "bfloat16" and found.config_matches is True


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("cache_layout", "rotate_pairs"), [("halves", "interleaved"), ("interleaved", "halves")]
)
def test_a_cache_applied_by_the_other_layouts_rotate(kind, cache_layout, rotate_pairs):
    """transformers' cache (cat(freqs, freqs)) applied by an interleaved rotate, and an
    interleaved cache (repeat_interleave) by rotate_half: not a rotation of any pair, but each
    column is ``x_j c_j +- x_partner s_j``, solved over 4 heads: the cache is identified and
    the mistake named."""
    cos, sin, positions, _ = reference("llama3_1_8b", kind)
    rope = config_rope("llama3_1_8b", positions)
    if cache_layout == "interleaved":
        cos, sin = ROPE_BUGS["wrong_pair_layout"].inject(cos, sin, positions, rope)
    x = vectors((4, positions.size, 128), kind)
    y = rotate(x, cos, sin, rotate_pairs, kind)
    alone = identify(before=x, after=y, positions=positions)
    assert (alone.rope_type, alone.base, alone.layout) == ("llama3", 500_000.0, cache_layout)
    assert alone.bugs[0] == "wrong_pair_layout" and not alone.matches
    evidence = alone.findings[0].evidence
    assert (evidence["cache_layout"], evidence["rotated_pairs"]) == (cache_layout, rotate_pairs)
    found = identify("llama3_1_8b", before=x, after=y, positions=positions)
    assert found.config_matches is False and found.likely_cause == "wrong_pair_layout"
    d = found.departure
    assert d.array == "after" and d.position == 1.0  # position 0 does not rotate
    assert abs(d.value - d.expected) > d.tolerance
    assert "wrong pair layout" in found.summary()


def test_one_head_of_a_mismatched_rotate_is_not_a_rotation():
    # One head gives each column's two unknowns one equation: not solvable, refused as such.
    cos, sin, positions, _ = reference("llama3_1_8b", "float32")
    x = vectors((positions.size, 128), "float32")
    with pytest.raises(InputError, match="after is not a rotation of before"):
        identify(before=x, after=rotate(x, cos, sin, "interleaved", "float32"), positions=positions)
