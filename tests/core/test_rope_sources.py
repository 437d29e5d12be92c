"""rope_config_sources: where each value of a config's RoPE came from, and what was not read
(issue 34: "a 'read from' table ... Nothing silently dropped")."""

from __future__ import annotations

import json

import pytest

import pe_core
from pe_core.rotary.config import _encodings, _text_part, rope_config_sources
from tests import DATA

REFERENCE = json.loads((DATA / "hf_configs" / "reference.json").read_text())
#: The corpus's configs that transformers reads with its own classes (not the remote-code ones).
CORPUS = sorted(
    DATA / "hf_configs" / name
    for name, result in REFERENCE["results"].items()
    if "error" not in result
)


def _sources(found) -> dict[str, tuple[object, str]]:
    return {s.key: (s.value, s.source) for s in found.used}


class TestLiteralCases:
    def test_gpt_neox_legacy_spellings_are_named(self):
        pythia = {
            "model_type": "gpt_neox",
            "hidden_size": 768,
            "num_attention_heads": 12,
            "rotary_pct": 0.25,
            "rotary_emb_base": 10000,
        }
        found = _sources(rope_config_sources(pythia))
        assert found["rope_theta"] == (10000, "config.json: rotary_emb_base")
        assert found["partial_rotary_factor"] == (0.25, "config.json: rotary_pct")
        assert found["hidden_size"] == (768, "config.json")

    def test_a_key_the_rope_type_does_not_take_is_unused_and_warned(self):
        config = {
            "head_dim": 128,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "foo": 1,
            },
            "rotary_emb_base": 3,  # GPT-NeoX's key, in a config that is not GPT-NeoX's
        }
        found = rope_config_sources(config)
        assert found.unused == ("rope_scaling.foo", "rotary_emb_base")
        assert any("foo" in w for w in found.warnings)
        assert _sources(found)["rope_scaling.factor"] == (8.0, "config.json")

    def test_an_absent_base_is_the_model_class_default(self):
        config = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32}
        assert _sources(rope_config_sources(config))["rope_theta"] == (
            10000.0,
            "default of llama",
        )

    def test_a_scaling_from_the_model_class_is_listed(self):
        # gpt-oss's class applies YaRN x32 when the config has no rope_scaling of its own
        # (transformers 5.24, models/gpt_oss/configuration_gpt_oss.py): the table says so.
        found = _sources(rope_config_sources({"model_type": "gpt_oss"}))
        assert found["rope_scaling.factor"] == (32.0, "default of gpt_oss")
        assert found["rope_scaling.rope_type"] == ("yarn", "default of gpt_oss")
        # A config's own rope_scaling replaces the class's whole: nothing of it is listed.
        own = {"model_type": "gpt_oss", "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
        found = _sources(rope_config_sources(own))
        assert found["rope_scaling.factor"] == (2.0, "config.json")
        assert not [
            key
            for key, (_, source) in found.items()
            if "rope_scaling" in key and source != "config.json"
        ]

    def test_phi_rotary_dim_is_not_read(self):
        # transformers' PhiConfig reads partial_rotary_factor; phi-1's config.json also carries
        # the original repository's rotary_dim, which transformers ignores (5.24,
        # models/phi/configuration_phi.py).
        config = json.loads((DATA / "hf_configs" / "phi-phi-1.json").read_text())
        found = rope_config_sources(config)
        assert found.unused == ("rotary_dim",)
        assert _sources(found)["partial_rotary_factor"] == (0.5, "config.json")

    def test_smollm3_interval_is_not_read_when_the_list_is_given(self):
        # SmolLM3Config builds no_rope_layers from no_rope_layer_interval only when the list
        # is absent (transformers 5.24, models/smollm3/configuration_smollm3.py).
        config = json.loads((DATA / "hf_configs" / "smollm3-SmolLM3-3B.json").read_text())
        assert "no_rope_layers" in config
        assert rope_config_sources(config).unused == ("no_rope_layer_interval",)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_every_value_said_to_come_from_the_file_is_the_file_s(path):
    config = json.loads(path.read_text())
    text = _text_part(config)[0]  # a multimodal config's text_config (InternVL's llm_config)
    found = rope_config_sources(config)
    for source in found.used:
        if source.source != "config.json":
            continue
        node = text
        parts = source.key.split(".")
        for part in parts[:-1]:
            node = node[part]
        assert node[parts[-1]] == source.value, source


class TestEssentials:
    """rope_config_essentials: the short config that gives the same RoPE, layer by layer (the
    RoPE lab's short links)."""

    @pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
    def test_real_configs_shrink_and_keep_their_encodings(self, path):
        config = json.loads(path.read_text())
        essentials = pe_core.rope_config_essentials(config)
        assert _encodings(essentials) == _encodings(config)
        assert set(essentials) < set(_text_part(config)[0])  # something was left out
        assert len(json.dumps(essentials)) < len(json.dumps(config))

    def test_the_file_spelling_is_kept(self):
        pythia = {
            "model_type": "gpt_neox",
            "hidden_size": 768,
            "num_attention_heads": 12,
            "rotary_pct": 0.25,
            "rotary_emb_base": 10000,
            "vocab_size": 50304,
            "use_parallel_residual": True,
        }
        assert pe_core.rope_config_essentials(pythia) == {
            "model_type": "gpt_neox",
            "hidden_size": 768,
            "num_attention_heads": 12,
            "rotary_pct": 0.25,
            "rotary_emb_base": 10000,
        }

    def test_a_multimodal_config_gives_its_text_part(self):
        gemma = {
            "model_type": "gemma3",
            "text_config": {"model_type": "gemma3_text", "num_hidden_layers": 12, "vocab_size": 9},
            "vision_config": {"hidden_size": 1152},
        }
        essentials = pe_core.rope_config_essentials(gemma)
        assert essentials == {"model_type": "gemma3_text", "num_hidden_layers": 12}
        assert _encodings(essentials) == _encodings(gemma)

    def test_bad_input_is_named(self):
        with pytest.raises(pe_core.InputError, match="config"):
            pe_core.rope_config_essentials("[1, 2]")
