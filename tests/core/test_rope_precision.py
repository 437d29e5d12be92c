"""RoPE's float32 arithmetic as transformers does it: its inv_freq bit for bit, the angle error
position by position, and the cos/sin cache of a bfloat16 / float16 model.

Reference values: tests/data/hf_configs/reference.json and tests/data/hf_families_5_24.json
(transformers 5.24.0 on torch 2.13.0+cpu, computed once by benchmarks/hf_reference.py and
benchmarks/hf_families.py: the model's own rotary class, inv_freq after a forward call at
positions up to 8,191); where PyTorch and transformers are installed (CI on Python 3.11), the
live test below also asks the library itself.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest

import pe_core
from pe_core._formats import round_to_precision
from pe_core._kernels import two_product
from tests import DATA

CORPUS = DATA / "hf_configs"
REFERENCE = json.loads((CORPUS / "reference.json").read_text())
FAMILIES = json.loads((DATA / "hf_families_5_24.json").read_text())["results"]
PRESETS = json.loads((DATA / "rope_hf_5_23.json").read_text())["presets"]
SEQ_LEN = max(REFERENCE["positions"]) + 1
#: Log-spaced whole positions up to float32's last exact integer.
POSITIONS = np.unique(np.round(np.geomspace(1, 2**24 - 1, 1200)))


def _cases():
    """(name, rope, transformers' float32 inv_freq) for every layer type of the corpus and of
    the families file."""
    for name, result in sorted(REFERENCE["results"].items()):
        if "error" in result:
            continue
        config = json.loads((CORPUS / name).read_text())
        yield from _layer_types(name, config, result)
    for name, result in sorted(FAMILIES.items()):
        yield from _layer_types(name, result["config"], result)
    # The RoPE lab's six presets (transformers 5.23.0, torch 2.13.0+cpu: rope_hf_5_23.json).
    for name, preset in sorted(PRESETS.items()):
        rope = pe_core.rope_from_config(preset["config"])
        yield f"preset {name}", rope, np.asarray(preset["inv_freq_float32"], dtype=np.float64)


def _layer_types(name, config, result):
    for layer_type, expected in result["per_layer_type"].items():
        inv_freq = expected.get("inv_freq_after_forward", expected["inv_freq"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "several layer types": chosen explicitly here
            rope = pe_core.rope_from_config(
                config, layer_type=None if layer_type == "all" else layer_type, seq_len=SEQ_LEN
            )
        yield f"{name}/{layer_type}", rope, np.asarray(inv_freq, dtype=np.float64)


CASES = list(_cases())


def _units_apart(a, b) -> np.ndarray:
    """How many float32 values lie between a and b (both positive float32)."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


def _error_of(angles, rope) -> np.ndarray:
    exact, error = two_product(POSITIONS[:, None], rope.inv_freq[None, :])
    turned = (angles - exact) - error
    return np.max(np.abs((turned + np.pi) % (2 * np.pi) - np.pi), axis=1)


def test_the_cases_cover_every_variant():
    assert len(CASES) >= 56
    assert {rope.rope_type for _, rope, _ in CASES} >= {
        "default",
        "linear",
        "yarn",
        "llama3",
        "longrope",
    }


def test_inv_freq_float32_is_transformers_own():
    """Bit for bit but for torch's float32 power (within one unit, not correctly rounded):
    5,044 of 5,088 frequencies identical at this commit (every one in 57 of the 93 layer types
    and presets), none more than 2 units apart (a
    one-unit power error that YaRN's blend carries). Correctly rounding the exact frequency
    instead (the old model) leaves 1,507 different (30%) and up to 6 units apart."""
    ours = np.concatenate([rope.inv_freq_float32 for _, rope, _ in CASES])
    theirs = np.concatenate([expected for _, _, expected in CASES]).astype(np.float32)
    rounded = np.concatenate([rope.inv_freq for _, rope, _ in CASES]).astype(np.float32)
    apart = _units_apart(ours, theirs)
    assert apart.max() <= 2
    assert np.mean(apart == 0) >= 0.985
    # The old model is far from it whatever the mix of cases (70% identical at this commit).
    assert np.mean(_units_apart(rounded, theirs) == 0) < np.mean(apart == 0) - 0.2


def test_angle_error_is_transformers_own_position_by_position():
    """transformers' angle at a position is fl32(fl32(p) * inv_freq32) (LlamaRotaryEmbedding's
    forward); its error against the exact p*w, from the library's own inv_freq, equals
    transformers_angle_errors exactly wherever the frequencies are bit-identical, and at this
    commit at every position for 51 of the 56 layer types and presets (5 of the lab's 6
    presets: not gpt-oss-20b), 98% of all positions; where torch's power put a frequency one
    unit off, the curves differ by at most
    that unit times the position (plus a rounding of the angle)."""
    equal = total = 0
    for case, rope, expected in CASES:
        angles = round_to_precision(POSITIONS[:, None] * expected[None, :], "float32")
        theirs = _error_of(angles, rope)
        ours = pe_core.transformers_angle_errors(POSITIONS, rope)
        if np.array_equal(rope.inv_freq_float32, expected.astype(np.float32)):
            np.testing.assert_array_equal(ours, theirs, err_msg=case)
        else:
            off = np.max(np.abs(rope.inv_freq_float32 - expected))
            bound = POSITIONS * (off + 2**-23 * rope.inv_freq.max())
            assert np.all(np.abs(ours - theirs) <= bound), case
        equal += int(np.sum(ours == theirs))
        total += POSITIONS.size
    assert equal / total >= 0.97


def test_the_float32_error_comes_earlier_than_correct_rounding_says():
    """Llama 3.1 8B (base 500,000): transformers' float32 angles pass 1e-3 rad at position
    16,982; correctly rounded float32 frequencies would only at 21,203 (from the reference's
    own inv_freq, test above)."""
    rope = next(rope for case, rope, _ in CASES if "Llama-3.1-8B" in case)
    ours = pe_core.transformers_angle_errors(POSITIONS, rope)
    rounded = pe_core.rope_angle_errors(POSITIONS, rope, "float32")
    assert POSITIONS[np.argmax(ours > 1e-3)] == 16_982
    assert POSITIONS[np.argmax(rounded > 1e-3)] == 21_203
    assert np.median(ours / rounded) > 1.3


def test_a_bfloat16_model_has_an_error_floor_from_the_first_positions():
    rope = pe_core.rope_frequencies(128, base=500_000.0)
    positions = np.arange(1, 65)
    float32 = pe_core.transformers_angle_errors(positions, rope)
    bfloat16 = pe_core.transformers_angle_errors(positions, rope, "bfloat16")
    float16 = pe_core.transformers_angle_errors(positions, rope, "float16")
    assert np.all(float32 < 1e-5)
    # Half a bfloat16 unit of a value near 1 is 2**-9; the angle of the rounded pair moves by
    # up to about that much.
    assert np.all((bfloat16 > 2**-12) & (bfloat16 < 2**-7))
    assert np.all(float16 < bfloat16)
    assert pe_core.transformers_angle_errors([0], rope, "bfloat16")[0] == 0.0


def test_the_angle_of_a_rounded_pair_matches_a_hand_computation():
    rope = pe_core.rope_frequencies(2, base=10_000.0)  # one pair, w = 1
    theta = np.float32(7.0)  # position 7: the float32 angle is exact
    cos, sin = (np.float64(np.float32(f(np.float64(theta)))) for f in (np.cos, np.sin))
    stored = [round_to_precision(v, "bfloat16") for v in (cos, sin)]
    turned = (np.arctan2(stored[1], stored[0]) - 7.0 + np.pi) % (2 * np.pi) - np.pi
    result = pe_core.transformers_angle_errors([7], rope, "bfloat16")[0]
    assert result == pytest.approx(abs(turned), rel=1e-9)


def test_without_float32_frequencies_the_exact_ones_are_rounded():
    rope = pe_core.rope_frequencies(64, base=10_000.0)
    bare = replace(rope, inv_freq_float32=None)
    np.testing.assert_array_equal(
        pe_core.transformers_angle_errors(POSITIONS, bare),
        pe_core.rope_angle_errors(POSITIONS, bare, "float32"),
    )


def test_an_error_is_a_rotation_at_most_pi():
    """bfloat16 position ids at a million: the angles are off by many turns; as a rotation the
    error is at most pi (a whole turn is no error)."""
    rope = pe_core.rope_frequencies(64)
    errors = pe_core.rope_angle_errors([999_000, 1_000_000], rope, "bfloat16")
    assert np.all((errors > 1.0) & (errors <= np.pi))
    unit_frequency = pe_core.rope_frequencies(2, base=10_000.0)  # w = 1
    merged = pe_core.rope_angle_errors([3 * 2**20 + 1], unit_frequency, "bfloat16")[0]
    assert merged == pytest.approx(1.0)  # the position rounds to 3 * 2**20: one radian off


def test_bad_arguments_name_the_rule():
    rope = pe_core.rope_frequencies(8)
    with pytest.raises(pe_core.InputError, match="dtype"):
        pe_core.transformers_angle_errors(4, rope, "float64")
    with pytest.raises(pe_core.InputError, match="inv_freq_float32 must have the shape"):
        replace(rope, inv_freq_float32=np.ones(3, dtype=np.float32))


# --- the library itself, where it installs (CI on Python 3.11) --------------------------------
LIVE = {
    "default": {"rope_type": "default", "rope_theta": 500_000.0},
    "linear": {"rope_type": "linear", "rope_theta": 1_000_000.0, "factor": 8.0},
    "dynamic": {"rope_type": "dynamic", "rope_theta": 10_000.0, "factor": 2.0},
    "yarn": {
        "rope_type": "yarn",
        "rope_theta": 150_000.0,
        "factor": 32.0,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "original_max_position_embeddings": 4_096,
    },
    "llama3": {
        "rope_type": "llama3",
        "rope_theta": 500_000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8_192,
    },
}


@pytest.mark.parametrize("name", sorted(LIVE))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_live_against_transformers_rotary_class(name, dtype):
    torch = pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
    transformers = pytest.importorskip("transformers", minversion="5", reason="transformers 5")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    parameters = LIVE[name]
    config = transformers.LlamaConfig(
        hidden_size=1024,
        num_attention_heads=8,
        head_dim=128,
        max_position_embeddings=131_072,
        rope_parameters=dict(parameters),
    )
    module = LlamaRotaryEmbedding(config)
    scaling = {k: v for k, v in parameters.items() if k != "rope_theta"}
    rope = pe_core.rope_frequencies(
        128,
        base=parameters["rope_theta"],
        scaling=scaling,
        max_position_embeddings=131_072,
    )
    theirs = module.inv_freq.numpy()
    assert _units_apart(rope.inv_freq_float32, theirs).max() <= 1

    positions = np.arange(0, 131_072, 97)
    ids = torch.tensor(positions[None, :], dtype=torch.int64)
    x = torch.zeros(1, dtype=getattr(torch, dtype))
    with torch.no_grad():
        cos, sin = module(x, ids)
    cos = cos[0, :, : rope.n_pairs].float().numpy().astype(np.float64)
    sin = sin[0, :, : rope.n_pairs].float().numpy().astype(np.float64)
    exact, error = two_product(positions[:, None].astype(np.float64), rope.inv_freq[None, :])
    turned = np.arctan2(sin, cos) - exact - error
    actual = np.max(np.abs((turned + np.pi) % (2 * np.pi) - np.pi), axis=1)
    ours = pe_core.transformers_angle_errors(positions, rope, dtype)
    # float32: the angle error plus torch's float32 cos/sin (within a unit: 1.2e-7 rad);
    # bfloat16/float16: the same pair rounded, but for a cos/sin that lands within a unit of a
    # rounding boundary (one format unit, 2**-8 / 2**-11, apart).
    slack = {"float32": 2.5e-7, "bfloat16": 2**-8, "float16": 2**-11}[dtype]
    assert np.all(np.abs(ours - actual) <= slack + 1e-7 * positions)
    assert np.mean(np.abs(ours - actual) <= 1e-6 + 1e-9 * positions) >= 0.95


def test_a_position_beyond_float16_is_inf_even_where_a_frequency_underflowed():
    """Base 1e9: the slowest frequencies underflow to 0 in float16, and a position past 65,504
    is inf: inf * 0 must not leak a NaN (or a warning); the error is inf there."""
    rope = pe_core.rope_frequencies(64, base=1e9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        errors = pe_core.rope_angle_errors([10, 100_000], rope, "float16")
    assert np.isfinite(errors[0]) and errors[1] == np.inf
