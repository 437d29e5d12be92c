"""rope_query_temperature: the position-dependent factor on the queries that Llama 4 (layers
without RoPE) and Ministral 3 / Devstral 2 (layers with RoPE) apply outside the rotary class
(issue 34: "show such factors, and Llama 4's attention temperature, as what they are")."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pe_core
from tests import DATA

DEVSTRAL = json.loads(
    (DATA / "hf_configs" / "mistral3-Devstral-Small-2-24B-Instruct.json").read_text()
)
SCOUT = {"model_type": "llama4_text", "head_dim": 128, "num_hidden_layers": 48}
POSITIONS = np.array([0, 1, 8190, 8191, 8192, 16383, 16384, 10**6])


def test_devstral_reads_llama_4_scaling_beta_from_its_rope_parameters():
    found = pe_core.rope_query_temperature(DEVSTRAL)
    parameters = DEVSTRAL["text_config"]["rope_parameters"]
    assert (found.beta, found.length, found.shift, found.layers) == (
        parameters["llama_4_scaling_beta"],
        parameters["original_max_position_embeddings"],
        0,
        "rope",
    )
    assert found.keys == ("llama_4_scaling_beta", "original_max_position_embeddings")
    # modeling_ministral3.get_llama_4_attn_scale: 1 + beta * log(1 + floor(p / L)).
    expected = 1 + 0.1 * np.log(1 + np.floor(POSITIONS / 8192))
    np.testing.assert_allclose(found.scale(POSITIONS), expected, rtol=1e-15)


def test_llama4_on_its_layers_without_rope():
    found = pe_core.rope_query_temperature(SCOUT)
    assert (found.beta, found.length, found.shift, found.layers) == (0.1, 8192, 1, "nope")
    # modeling_llama4.py: log1p(floor((p + 1) / floor_scale)) * attn_scale + 1.
    expected = np.log1p(np.floor((POSITIONS + 1.0) / 8192)) * 0.1 + 1.0
    np.testing.assert_allclose(found.scale(POSITIONS), expected, rtol=1e-15)
    # Every 4th layer is without RoPE (no_rope_layers' default): that is where it applies.
    layers = pe_core.rope_layers(SCOUT)
    assert [i for i, rope in enumerate(layers) if rope is None] == list(range(3, 48, 4))


def test_switched_off_or_absent():
    assert pe_core.rope_query_temperature({**SCOUT, "attn_temperature_tuning": False}) is None
    assert pe_core.rope_query_temperature({"head_dim": 64}) is None
    plain = {**DEVSTRAL["text_config"]}
    plain["rope_parameters"] = {
        k: v for k, v in plain["rope_parameters"].items() if k != "llama_4_scaling_beta"
    }
    assert pe_core.rope_query_temperature(plain) is None


def test_bad_values_name_the_key():
    with pytest.raises(pe_core.InputError, match="attn_scale"):
        pe_core.rope_query_temperature({**SCOUT, "attn_scale": "hot"})
    with pytest.raises(pe_core.InputError, match="floor_scale"):
        pe_core.rope_query_temperature({**SCOUT, "floor_scale": 0})


@pytest.mark.library
def test_live_ministral3_function_and_class_defaults():
    """transformers' own function and Ministral3Config's defaults (where it installs)."""
    torch = pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
    transformers = pytest.importorskip("transformers", minversion="5", reason="transformers 5")
    from transformers.models.ministral3 import modeling_ministral3

    found = pe_core.rope_query_temperature(DEVSTRAL)
    ids = torch.tensor(POSITIONS[None, :], dtype=torch.float32)
    theirs = modeling_ministral3.get_llama_4_attn_scale(ids, found.beta, found.length)
    np.testing.assert_allclose(theirs.reshape(-1).numpy(), found.scale(POSITIONS), rtol=1e-6)
    # A config that leaves rope_parameters to the class: its default YaRN and beta.
    sparse = {"model_type": "ministral3", "head_dim": 128, "max_position_embeddings": 262_144}
    config = transformers.AutoConfig.for_model(**sparse)
    rotary = modeling_ministral3.Ministral3RotaryEmbedding(config)
    rope = pe_core.rope_from_config(sparse)
    np.testing.assert_allclose(rotary.inv_freq.numpy(), rope.inv_freq, rtol=1e-6)
    assert rotary.attention_scaling == pytest.approx(rope.attention_factor, rel=1e-12)
    default = pe_core.rope_query_temperature(sparse)
    assert default.beta == config.rope_parameters["llama_4_scaling_beta"]
    assert default.length == config.rope_parameters["original_max_position_embeddings"]
