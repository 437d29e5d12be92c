"""The model knowledge of rope_from_config and rope_layers (pe_core.rotary.models, issue 34):
layer types, which layers rotate, pair layouts, refusals. The real configs and the families are
compared with transformers' own values in tests/core/test_hf_corpus.py."""

import dataclasses
import warnings

import numpy as np
import pytest

import pe_core

BASE = {"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 4096}
GEMMA3 = {
    "model_type": "gemma3_text",
    "num_hidden_layers": 6,
    "rope_theta": 1_000_000.0,
    "rope_local_base_freq": 10_000.0,
    "rope_scaling": {"rope_type": "linear", "factor": 8.0},
}
COHERE = {"model_type": "cohere", "head_dim": 8, "rope_theta": 100.0}


class TestLayerTypes:
    """rope_from_config(layer_type=) and rope_layers (issue 34); the real configs and the
    families are compared with transformers in tests/core/test_hf_corpus.py."""

    def test_several_layer_types_warn_and_give_full_attention(self):
        with pytest.warns(
            UserWarning, match="full_attention, sliding_attention|sliding_attention, full_attention"
        ):
            rope = pe_core.rope_from_config(GEMMA3)
        assert (rope.base, rope.rope_type) == (1_000_000.0, "linear")
        sliding = pe_core.rope_from_config(GEMMA3, layer_type="sliding_attention")
        assert (sliding.base, sliding.rope_type) == (10_000.0, "default")

    def test_one_encoding_for_every_type_does_not_warn(self):
        config = {**BASE, "layer_types": ["sliding_attention", "full_attention"]}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rope = pe_core.rope_from_config(config)
        assert rope.head_dim == 16

    @pytest.mark.parametrize(
        ("config", "layer_type", "message"),
        [
            (GEMMA3, "chunked_attention", "the config has no 'chunked_attention' layers"),
            (
                {
                    "model_type": "exaone4",
                    "head_dim": 8,
                    "num_hidden_layers": 4,
                    "sliding_window": 128,
                },
                "full_attention",
                "has no RoPE in its 'full_attention' layers",
            ),
            (GEMMA3, 3, "layer_type must be a string"),
        ],
    )
    def test_bad_layer_type(self, config, layer_type, message):
        with pytest.raises(pe_core.InputError, match=message):
            pe_core.rope_from_config(config, layer_type=layer_type)

    def test_a_model_without_rope(self):
        config = {"model_type": "lfm2", "head_dim": 8, "layer_types": ["conv", "conv"]}
        with pytest.raises(pe_core.InputError, match="no layer of this model uses RoPE"):
            pe_core.rope_from_config(config)
        assert pe_core.rope_layers(config) == [None, None]

    def test_rope_layers_needs_the_layer_count(self):
        with pytest.raises(pe_core.InputError, match="num_hidden_layers"):
            pe_core.rope_layers(BASE)

    def test_layers_of_one_type_share_one_encoding(self):
        layers = pe_core.rope_layers(GEMMA3)
        assert [rope.base for rope in layers] == [1e4] * 5 + [1e6]
        assert layers[0] is layers[4]

    def test_qk_rope_head_dim_zero_is_refused(self):
        # It used to fall back silently to head_dim.
        config = {**BASE, "qk_rope_head_dim": 0}
        with pytest.raises(pe_core.InputError, match=r"config\['qk_rope_head_dim'\]"):
            pe_core.rope_from_config(config)

    def test_mrope_sections_are_kept_with_the_parameters(self):
        config = {**BASE, "rope_scaling": {"type": "mrope", "mrope_section": [4, 2, 2]}}
        rope = pe_core.rope_from_config(config)
        assert rope.rope_type == "default"
        assert rope.parameters["mrope_section"] == [4, 2, 2]


class TestLayout:
    def test_the_model_layout_is_the_default(self):
        rope = pe_core.rope_from_config(COHERE)
        assert rope.layout == "interleaved"
        x = np.arange(2 * 3 * 8, dtype=np.float64).reshape(2, 3, 8)
        np.testing.assert_array_equal(
            pe_core.apply_rope(x, 3, rope), pe_core.apply_rope(x, 3, rope, layout="interleaved")
        )
        assert not np.allclose(
            pe_core.apply_rope(x, 3, rope), pe_core.apply_rope(x, 3, rope, layout="halves")
        )

    def test_interleaved_cache_repeats_each_pair(self):
        # transformers' repeat_interleave layout (Cohere, GLM): each pair's cos twice, side by side.
        rope = pe_core.rope_from_config(COHERE)
        cos, sin = pe_core.rope_cos_sin(5, rope, dtype=np.float64)
        halves_cos, halves_sin = pe_core.rope_cos_sin(5, rope, dtype=np.float64, layout="halves")
        np.testing.assert_array_equal(cos, np.repeat(halves_cos[:, :4], 2, axis=1))
        np.testing.assert_array_equal(sin, np.repeat(halves_sin[:, :4], 2, axis=1))
        # Rotating with the cache as transformers' rotate_every_two does equals apply_rope.
        x = np.random.default_rng(0).normal(size=(5, 8))
        rotated_pairs = np.stack([-x[:, 1::2], x[:, ::2]], axis=-1).reshape(5, 8)
        np.testing.assert_allclose(
            x * cos + rotated_pairs * sin, pe_core.apply_rope(x, 5, rope), rtol=0, atol=1e-12
        )

    def test_a_bad_layout_is_refused(self):
        rope = pe_core.rope_from_config(COHERE)
        with pytest.raises(pe_core.InputError, match="layout"):
            dataclasses.replace(rope, layout="pairs")


class TestVariants:
    """The scaling variants as data (pe_core.rotary.variants): each owns its keys."""

    def test_the_registry_is_the_list_of_rope_types(self):
        assert tuple(pe_core.ROPE_VARIANTS) == pe_core.ROPE_TYPES
        for name, variant in pe_core.ROPE_VARIANTS.items():
            assert variant.name == name
            assert set(variant.required) <= variant.keys

    @pytest.mark.parametrize("name", [n for n in pe_core.ROPE_VARIANTS if n != "default"])
    def test_a_missing_required_key_is_named(self, name):
        for key in pe_core.ROPE_VARIANTS[name].required:
            scaling = {
                "rope_type": name,
                "factor": 2.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "short_factor": [1.0] * 4,
                "long_factor": [1.0] * 4,
            }
            del scaling[key]
            with pytest.raises(pe_core.InputError, match=repr(key)):
                pe_core.rope_frequencies(8, scaling=scaling, max_position_embeddings=64)

    def test_keys_of_another_variant_are_warned_about(self):
        with pytest.warns(UserWarning, match=r"\['beta_fast'\] are not used by rope_type 'linear'"):
            pe_core.rope_frequencies(
                8, scaling={"rope_type": "linear", "factor": 2.0, "beta_fast": 32}
            )


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({**BASE, "num_hidden_layers": 10**9}, "num_hidden_layers"),
        ({**GEMMA3, "num_hidden_layers": 10**9}, "num_hidden_layers"),
        ({**BASE, "layer_types": ["full_attention"] * 5000}, "layer_types"),
    ],
)
def test_an_absurd_layer_count_is_refused_before_building_layers(config, key):
    for read in (pe_core.rope_from_config, pe_core.rope_layers):
        with pytest.raises(pe_core.InputError, match=rf"config\['{key}'\] must be at most 4,096"):
            read(config)


class TestMRopeSections:
    """A multimodal entry's default split of the pairs among (temporal, height, width) is its
    rotary class's: ``config.rope_parameters.get("mrope_section", default)`` in transformers
    5.24's modeling_qwen2_vl.py ([16, 24, 24]) and modeling_qwen3_vl.py ([24, 20, 20], with
    apply_interleaved_mrope)."""

    @pytest.mark.parametrize(
        ("model_type", "sections", "interleaved"),
        [
            ("qwen2_vl", (16, 24, 24), False),
            ("qwen2_5_vl", (16, 24, 24), False),
            ("qwen3_vl", (24, 20, 20), True),
        ],
    )
    def test_literal(self, model_type, sections, interleaved):
        mrope = pe_core.MODEL_ROPES[model_type].mrope
        assert (mrope.sections, mrope.interleaved) == (sections, interleaved)
        assert sum(mrope.sections) == 128 // 2  # the head_dim of both families' language models

    @pytest.mark.library
    @pytest.mark.parametrize(
        ("model_type", "module", "rotary"),
        [
            ("qwen2_vl", "qwen2_vl", "Qwen2VLRotaryEmbedding"),
            ("qwen3_vl", "qwen3_vl", "Qwen3VLTextRotaryEmbedding"),
        ],
    )
    def test_transformers_class_default(self, model_type, module, rotary):
        pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
        transformers = pytest.importorskip("transformers")
        modeling = __import__(f"transformers.models.{module}.modeling_{module}", fromlist=[rotary])
        config_class = getattr(
            transformers, "Qwen2VLTextConfig" if module == "qwen2_vl" else "Qwen3VLTextConfig"
        )
        rotary_embedding = getattr(modeling, rotary)(config_class())
        assert (
            tuple(rotary_embedding.mrope_section) == pe_core.MODEL_ROPES[model_type].mrope.sections
        )

    def test_only_multimodal_entries_have_sections(self):
        with_sections = {t for t, m in pe_core.MODEL_ROPES.items() if m.mrope is not None}
        assert with_sections == {
            "qwen2_vl",
            "qwen2_vl_text",
            "qwen2_5_vl",
            "qwen2_5_vl_text",
            "qwen3_vl",
            "qwen3_vl_text",
        }
