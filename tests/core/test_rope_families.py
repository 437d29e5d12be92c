"""Model families added to pe_core.rotary.models from a walk over transformers 5.24's model types
(benchmarks/hf_model_types.py): InternVL's remote-code llm_config and InternLM2, Mistral 4's
multi-head latent attention, DeepSeek V3.2-style sparse attention, models that rotate adjacent
pairs. The stored values (tests/data/hf_families_5_24.json, hf_configs/reference.json) are
checked in tests/core/test_hf_corpus.py; here, literal cases and the same comparisons made live
against transformers' own classes where torch and transformers 5.24 are installed."""

from __future__ import annotations

import json
import math
import sys
import warnings

import numpy as np
import pytest

import pe_core
from tests import DATA, ROOT

CORPUS = DATA / "hf_configs"
INTERNLM2 = json.loads((CORPUS / "internlm2-InternVL2_5-8B-MPO.json").read_text())
INTERNVL3 = json.loads((CORPUS / "internvl-InternVL3-2B.json").read_text())
FAMILIES = json.loads((DATA / "hf_families_5_24.json").read_text())["results"]
#: The families added with the walk (the older ones are compared in test_hf_corpus.py only).
OLDER = {"gpt_neox", "gptj", "cohere", "cohere2", "glm", "modernbert", "llama4", "qwen2_vl"}
OLDER |= {"qwen3_next", "gemma3_text", "exaone4", "gpt_oss"}
ADDED = sorted(name for name in FAMILIES if name.split("-")[0] not in OLDER)


class TestInternVL:
    """configuration_internvl_chat.py (OpenGVLab/InternVL): the language model's config is
    llm_config, built with the class its architectures name."""

    def test_the_llm_config_is_read(self):
        rope = pe_core.rope_from_config(INTERNLM2)
        llm = INTERNLM2["llm_config"]
        assert rope.base == llm["rope_theta"] == 1_000_000
        assert (rope.rope_type, rope.parameters["factor"]) == ("dynamic", 2.0)
        assert rope.head_dim == llm["hidden_size"] // llm["num_attention_heads"] == 128
        assert len(pe_core.rope_layers(INTERNLM2)) == llm["num_hidden_layers"]

    def test_a_qwen2_language_model_under_a_top_level_hidden_size(self):
        # InternVL3-2B's top level has hidden_size (1536) but no heads: the heads are the
        # llm_config's (12), so 128 columns a head.
        assert "hidden_size" in INTERNVL3 and "num_attention_heads" not in INTERNVL3
        rope = pe_core.rope_from_config(INTERNVL3)
        assert (rope.head_dim, rope.base, rope.rope_type) == (128, 1_000_000.0, "dynamic")

    def test_dynamic_scaling_beyond_the_training_length(self):
        # Dynamic NTK past max_position_embeddings (32,768): the base grows as transformers'
        # _compute_dynamic_ntk_parameters (and InternLM2's remote copy of Llama's) computes it.
        rope = pe_core.rope_from_config(INTERNLM2, seq_len=65_536)
        factor, dim, length = 2.0, 128, 32_768
        base = 1e6 * (factor * 65_536 / length - (factor - 1)) ** (dim / (dim - 2))
        np.testing.assert_allclose(rope.inv_freq, base ** (-np.arange(0, dim, 2) / dim), rtol=1e-12)

    def test_the_short_config_is_the_llm_config(self):
        essentials = pe_core.rope_config_essentials(INTERNVL3)
        assert essentials["model_type"] == "qwen2"
        assert essentials["rope_scaling"] == INTERNVL3["llm_config"]["rope_scaling"]
        assert "vision_config" not in essentials and "llm_config" not in essentials

    def test_sources_name_the_llm_config_keys(self):
        found = {s.key: (s.value, s.source) for s in pe_core.rope_config_sources(INTERNLM2).used}
        assert found["rope_theta"] == (1_000_000, "config.json")
        assert found["rope_scaling.factor"] == (2.0, "config.json")

    def test_internlm2_class_defaults(self):
        # configuration_internlm2.py: hidden_size 4096, 32 heads, 32 layers, max 2048, 10,000.
        rope = pe_core.rope_from_config({"model_type": "internlm2"})
        assert (rope.head_dim, rope.base, rope.training_length) == (128, 10_000.0, 2048)
        assert len(pe_core.rope_layers({"model_type": "internlm2"})) == 32

    def test_a_wrapper_without_its_llm_config_is_refused(self):
        with pytest.raises(pe_core.InputError, match="head_dim, or hidden_size"):
            pe_core.rope_from_config({"model_type": "internvl_chat", "llm_config": None})


class TestMistral4:
    """modeling_mistral4.py: head_dim = qk_nope_head_dim + qk_rope_head_dim; the rotary class
    rotates head_dim * partial_rotary_factor (qk_rope_head_dim / head_dim) columns."""

    def test_class_defaults(self):
        rope = pe_core.rope_from_config({"model_type": "mistral4"})
        assert (rope.head_dim, rope.rotary_dim, rope.layout) == (128, 64, "interleaved")
        assert (rope.rope_type, rope.parameters["factor"]) == ("yarn", 128.0)
        # yarn_apply_mscale: (0.1 * 1.0 * ln 128 + 1) ** 2.
        assert rope.softmax_factor == pytest.approx((0.1 * math.log(128) + 1) ** 2, rel=1e-15)
        found = pe_core.rope_query_temperature({"model_type": "mistral4"})
        assert (found.beta, found.length, found.layers) == (0.1, 8192, "rope")

    def test_the_rotary_width_follows_qk_rope_head_dim(self):
        config = {"model_type": "mistral4", "qk_nope_head_dim": 96, "qk_rope_head_dim": 32}
        rope = pe_core.rope_from_config({**config, "rope_interleave": False})
        assert (rope.head_dim, rope.rotary_dim, rope.layout) == (128, 32, "halves")
        # The frequencies are those of a 32-column head (transformers: dim = int(128 * 0.25)).
        yarn = {"rope_type": "yarn", "factor": 128.0, "original_max_position_embeddings": 8192}
        yarn |= {"beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0, "mscale": 1.0}
        alone = pe_core.rope_frequencies(32, scaling=yarn, max_position_embeddings=1_048_576)
        np.testing.assert_array_equal(rope.inv_freq, alone.inv_freq)

    def test_a_bad_qk_nope_head_dim_is_named(self):
        with pytest.raises(pe_core.InputError, match=r"config\['qk_nope_head_dim'\]"):
            pe_core.rope_from_config({"model_type": "mistral4", "qk_nope_head_dim": "64"})


class TestSparseAttention:
    def test_indexed_attention_layers_rotate(self):
        # DeepSeek V3.2: every layer is "indexed_attention" (sparse), rotated in adjacent pairs.
        config = {"model_type": "deepseek_v32", "qk_rope_head_dim": 64, "num_hidden_layers": 3}
        layers = pe_core.rope_layers(config)
        assert [rope.layer_type for rope in layers] == ["indexed_attention"] * 3
        assert layers[0].layout == "interleaved"

    def test_mistral_large4_no_rope_layers(self):
        config = {"model_type": "mistral_large4_text", "qk_rope_head_dim": 64}
        layers = pe_core.rope_layers({**config, "num_hidden_layers": 8})
        assert [rope is not None for rope in layers] == [True, True, True, False] * 2

    def test_qwen4_exp_pattern(self):
        config = {"model_type": "qwen4_exp_text", "head_dim": 256, "num_hidden_layers": 8}
        layers = pe_core.rope_layers({**config, "full_attention_interval": 2})
        assert [rope is not None for rope in layers] == [False, True] * 4


@pytest.mark.parametrize(
    ("name", "qk_head_dim"),
    [
        ("mistral4-class-defaults", 128),
        ("mistral4-small4-style", 128),
        ("deepseek_v32-yarn", 192),
        ("mistral_large4-class-defaults", 128),
    ],
)
def test_the_softmax_factor_of_mla_families(name, qk_head_dim):
    """yarn_apply_mscale, as transformers' own attention module sets its scale (stored)."""
    result = FAMILIES[name]
    rope = pe_core.rope_from_config(result["config"])
    assert qk_head_dim**-0.5 * rope.softmax_factor == pytest.approx(
        result["attention_softmax_scaling"], rel=1e-15
    )


# --- live: transformers' own classes ------------------------------------------------------


@pytest.fixture(scope="module")
def reference():
    """benchmarks/hf_reference.py's reading (transformers' rotary class, pair layout from the
    model's code, rotating layers), where transformers 5.24 is installed."""
    pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
    pytest.importorskip("transformers", minversion="5.24", reason="transformers 5.24")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import hf_reference
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return hf_reference


def _compare(record: dict, config: dict, seq_len: int | None = None) -> None:
    for layer_type, expected in record["per_layer_type"].items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            rope = pe_core.rope_from_config(
                config, layer_type=None if layer_type == "all" else layer_type, seq_len=seq_len
            )
        inv_freq = expected.get("inv_freq_after_forward", expected["inv_freq"])
        assert rope.rotary_dim == expected["rotary_dim"]
        np.testing.assert_allclose(rope.inv_freq, inv_freq, rtol=1e-6, atol=0)
        assert rope.attention_factor == pytest.approx(expected["attention_scaling"], rel=2**-23)
        assert rope.layout == record["layout"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        layers = pe_core.rope_layers(config)
    assert [i for i, rope in enumerate(layers) if rope is not None] == record["rotating_layers"]


@pytest.mark.library
@pytest.mark.parametrize("name", ADDED)
def test_live_families(reference, name):
    config = FAMILIES[name]["config"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = reference.compute_config(json.loads(json.dumps(config)))
    assert record["layout"] == FAMILIES[name]["layout"]  # the stored values are still true
    _compare(record, config)


@pytest.mark.library
@pytest.mark.parametrize("config", [INTERNLM2, INTERNVL3], ids=["InternVL2_5-8B", "InternVL3-2B"])
def test_live_internvl_beyond_the_training_length(reference, config):
    """The dynamic scaling at 65,536 positions (twice max_position_embeddings): transformers'
    class for the llm_config's architecture (Llama's standing in for InternLM2's remote copy)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = reference.compute_config(json.loads(json.dumps(config)))
    rotary = record["rotary_class"].rsplit(".", 1)
    module = __import__(rotary[0], fromlist=[rotary[1]])
    import torch
    from transformers import CONFIG_MAPPING

    llm = config["llm_config"]
    text_type = reference.INTERNVL_LLM.get(llm["architectures"][0], "llama")
    text = CONFIG_MAPPING[text_type].from_dict({**llm, "model_type": text_type})
    module_class = getattr(module, rotary[1])(config=text)
    x = torch.zeros(1, 1, 128)
    module_class(x, torch.tensor([[65_535]]))  # dynamic_rope_update: seq_len 65,536
    rope = pe_core.rope_from_config(config, seq_len=65_536)
    np.testing.assert_allclose(rope.inv_freq, module_class.inv_freq.numpy(), rtol=1e-6, atol=0)


def test_mistral4_saved_config_reads_quietly():
    """A config saved by transformers 5 keeps max_position_embeddings inside Mistral 4's
    rope_parameters (Mistral4Config: ignore_keys_at_rope_validation): not read, not warned
    about, listed as unused."""
    parameters = {"type": "yarn", "rope_theta": 10_000.0, "factor": 128.0}
    parameters |= {"original_max_position_embeddings": 8192, "max_position_embeddings": 1_048_576}
    config = {"model_type": "mistral4", "rope_parameters": parameters}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope = pe_core.rope_from_config(config)
    assert rope.parameters["factor"] == 128.0
    found = pe_core.rope_config_sources(config)
    assert found.unused == ("rope_parameters.max_position_embeddings",)
    assert found.warnings == ()


GRANITE_H = {"model_type": "granitemoehybrid", "hidden_size": 1536, "num_attention_heads": 12}
GRANITE_H |= {"num_hidden_layers": 4, "layer_types": ["mamba", "mamba", "mamba", "attention"]}


class TestGranite4:
    """modeling_granitemoehybrid.py: ``self.rotary_emb = ... if config.position_embedding_type
    == "rope" else None``; its config turns "mamba" / "attention" into "linear_attention" /
    "full_attention"."""

    def test_rope_on_the_attention_layers_only_when_asked(self):
        layers = pe_core.rope_layers({**GRANITE_H, "position_embedding_type": "rope"})
        assert [rope is not None for rope in layers] == [False, False, False, True]

    @pytest.mark.parametrize("kind", ["nope", None])
    def test_no_rope_otherwise(self, kind):
        config = {**GRANITE_H, "position_embedding_type": kind}
        assert pe_core.rope_layers(config) == [None] * 4
        with pytest.raises(pe_core.InputError, match="no layer of this model uses RoPE"):
            pe_core.rope_from_config(config)


def test_encoder_decoder_wrappers_read_their_decoder():
    decoder = {"model_type": "t5_gemma_module", "head_dim": 256, "num_hidden_layers": 2}
    config = {"model_type": "t5gemma", "encoder": {"head_dim": 64}, "decoder": decoder}
    assert pe_core.rope_from_config(config).head_dim == 256
    omni = {"model_type": "qwen2_5_omni", "thinker_config": {"model_type": "qwen2_5_omni_thinker"}}
    omni["thinker_config"]["text_config"] = {"model_type": "qwen2_5_omni_text", "head_dim": 128}
    assert pe_core.rope_from_config(omni).head_dim == 128


GEMMA4 = {"model_type": "gemma4_text", "head_dim": 256, "num_hidden_layers": 6}


class TestGemma4:
    """configuration_gemma4.py: global_head_dim (default 512) becomes per_layer_config[i]
    ["head_dim"] for the full-attention layers; their "proportional" RoPE rotates a quarter."""

    def test_full_attention_layers_have_their_own_head_width(self):
        layers = pe_core.rope_layers(GEMMA4)
        assert [rope.head_dim for rope in layers] == [256] * 5 + [512]
        assert layers[-1].rope_type == "proportional"
        assert np.count_nonzero(layers[-1].inv_freq) == 512 // 4 // 2

    def test_per_layer_config_comes_first(self):
        config = {
            **GEMMA4,
            "global_head_dim": 384,
            "per_layer_config": {"05": {"head_dim": 128}},
        }
        assert pe_core.rope_layers(config)[-1].head_dim == 128
        assert pe_core.rope_layers({**config, "per_layer_config": {}})[-1].head_dim == 384

    @pytest.mark.parametrize(
        ("key", "value", "named"),
        [
            ("global_head_dim", 0, r"config\['global_head_dim'\]"),
            ("per_layer_config", {"5": {"head_dim": -2}}, r"config\['per_layer_config'\]\['5'\]"),
        ],
    )
    def test_a_bad_width_is_named(self, key, value, named):
        with pytest.raises(pe_core.InputError, match=named):
            pe_core.rope_from_config({**GEMMA4, key: value}, layer_type="full_attention")


def test_gemma4_sources_name_the_global_head_width():
    found = pe_core.rope_config_sources(GEMMA4, layer_type="full_attention")
    assert ("global_head_dim", 512, "default of gemma4_text") in {
        (s.key, s.value, s.source) for s in found.used
    }


@pytest.mark.parametrize(
    "model_type",
    sorted(name for name, entry in pe_core.MODEL_ROPES.items() if entry.unread),
)
def test_a_model_read_differently_is_refused_with_the_reason(model_type):
    """benchmarks/hf_model_types.py found these read by transformers 5.24 in ways no entry can
    say: a config of one is refused, naming its model_type and why, never misread."""
    config = {"model_type": model_type, "hidden_size": 1024, "num_attention_heads": 16}
    reason = pe_core.MODEL_ROPES[model_type].unread
    for read in (pe_core.rope_from_config, pe_core.rope_layers):
        with pytest.raises(pe_core.InputError, match=f"model_type '{model_type}' is not read"):
            read(config)
    with pytest.raises(pe_core.InputError) as caught:
        pe_core.rope_from_config({"model_type": "llava", "text_config": config})
    assert reason in str(caught.value)
