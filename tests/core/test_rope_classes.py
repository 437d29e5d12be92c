"""Configs that leave keys out read with their class's defaults, as transformers 5.24 reads them.

Reference: tests/data/hf_class_defaults_5_24.json, transformers 5.24.0 on torch 2.13.0+cpu
(benchmarks/hf_class_defaults.py): for every model type of transformers with a rotary
embedding, sparse configs (``{"model_type": t}``; with 12 layers; with a YaRN or dynamic NTK
``rope_scaling`` and no lengths) read by transformers' own config class and rotary class:
``inv_freq`` per layer type, attention factor, layer count, which layers rotate (the rules of
benchmarks/hf_reference.py). pe_core reads each of them the same way, or refuses it with the
reason; it never answers with other frequencies or another layer map. The model types of
``pe_core.MODEL_ROPES`` (the table) are all read, none refused.
"""

from __future__ import annotations

import base64
import json
import warnings

import numpy as np
import pytest

import pe_core
from pe_core.rotary.classes import (
    CLASS_DEFAULTS,
    IGNORED_ROPE_KEYS,
    LAYER_TYPE_NAMES,
    NO_ROTARY,
    TRANSFORMERS_VERSION,
    WRAPPERS,
)
from tests import DATA

REFERENCE = json.loads((DATA / "hf_class_defaults_5_24.json").read_text())
CONFIGS = REFERENCE["configs"]
RESULTS = REFERENCE["results"]
#: inv_freq after the reference's forward call at positions up to 8,191 (dynamic NTK grows).
SEQ_LEN = 8192


def _inv_freq(encoded: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(encoded), dtype=np.float32).astype(np.float64)


def _cases():
    for model_type, records in sorted(RESULTS.items()):
        for name, record in records.items():
            if "error" not in record:
                yield model_type, name


CASES = list(_cases())


def _config(model_type: str, name: str) -> dict:
    return {"model_type": model_type, **json.loads(json.dumps(CONFIGS[name]))}


def _read(model_type, name, layer_type):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return pe_core.rope_from_config(
            _config(model_type, name),
            layer_type=None if layer_type == "all" else layer_type,
            seq_len=SEQ_LEN,
        )


def test_the_reference_covers_the_table_and_more():
    assert REFERENCE["source"].startswith(f"transformers {TRANSFORMERS_VERSION}")
    assert len(RESULTS) >= 370
    table = {t for t in pe_core.MODEL_ROPES if t in RESULTS}
    assert len(table) >= 60
    assert len(CASES) >= 1000


#: Refusals of model types in the table, at sparse configs, with the rule that refuses them:
#: transformers accepts these (and computes 1 + rotary_dim // 2 frequencies for an odd rotary
#: width, where pe_core takes only even rotary widths).
TABLE_REFUSALS = {
    "glm4_moe": "must be even",  # its class: head_dim 4096 // 96 = 42, times 0.5
    "qwen3_omni_moe": "must be even",
    # A flat rope_scaling: transformers takes each layer type's fraction from per_layer_config.
    "dots3_note": "per_layer_config",
    "dots3_note_text": "per_layer_config",
}


def _refusal_allowed(model_type, record, error) -> bool:
    entry = pe_core.MODEL_ROPES.get(model_type)
    if entry is None or entry.unread:
        return True  # not in the table: read or refused
    if "1" not in record["rotating_layers"] and "no layer of this model uses RoPE" in str(error):
        return True  # transformers builds its rotary class, but no layer applies it
    return TABLE_REFUSALS.get(model_type, "\0") in str(error)


@pytest.mark.parametrize(("model_type", "name"), CASES, ids=[f"{t}-{n}" for t, n in CASES])
def test_a_sparse_config_reads_as_transformers_or_is_refused(model_type, name):
    record = RESULTS[model_type][name]
    for layer_type, expected in record["per_layer_type"].items():
        try:
            rope = _read(model_type, name, layer_type)
        except pe_core.InputError as error:
            assert _refusal_allowed(model_type, record, error), f"{model_type}: {error}"
            continue
        theirs = _inv_freq(expected["inv_freq_float32"])
        assert rope.rotary_dim == expected["rotary_dim"], (model_type, layer_type)
        np.testing.assert_allclose(rope.inv_freq, theirs, rtol=1e-6, atol=1e-30)
        assert rope.attention_factor == pytest.approx(expected["attention_scaling"], rel=2**-22)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            layers = pe_core.rope_layers(_config(model_type, name))
    except pe_core.InputError as error:
        assert str(error)
        return
    assert len(layers) == record["num_hidden_layers"], model_type
    rotating = "".join("0" if rope is None else "1" for rope in layers)
    text_type = WRAPPERS.get(model_type, (model_type,))[0]
    entry = pe_core.MODEL_ROPES.get(model_type) or pe_core.MODEL_ROPES.get(text_type)
    if entry is None or entry.rotates == "attention":
        # The reference's rotating layers are benchmarks/hf_reference.py's rules (linear
        # attention, convolution, NoPE lists); where the table has a rule of its model's
        # attention code (Cohere 2's sliding layers, Mllama's cross-attention, Falcon's ALiBi),
        # that rule is tested against the model's own code in test_rope_families.py.
        assert rotating == record["rotating_layers"], model_type


@pytest.mark.parametrize("model_type", sorted(t for t in pe_core.MODEL_ROPES if t in RESULTS))
def test_the_tables_model_types_read_their_class_defaults(model_type):
    """Every model type of the table that transformers reads bare is read bare too (not
    refused), with its class's layer count."""
    record = RESULTS[model_type]["defaults"]
    if "error" in record or pe_core.MODEL_ROPES[model_type].unread:
        pytest.skip(f"{model_type}: not read bare by transformers, or unread here")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            rope = pe_core.rope_from_config({"model_type": model_type})
    except pe_core.InputError as error:
        assert _refusal_allowed(model_type, record, error), error
        return
    assert rope.rotary_dim >= 2


class TestIssue53:
    """Issue 53, cases 3 and 13, literally."""

    def test_absent_lengths_take_llamas_class_default(self):
        # Refused before ("needs original_max_position_embeddings or
        # max_position_embeddings"); transformers uses LlamaConfig's 2048.
        for rope_type in ("yarn", "dynamic"):
            config = {
                "model_type": "llama",
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "rope_scaling": {"rope_type": rope_type, "factor": 1.0001},
            }
            rope = pe_core.rope_from_config(config)
            assert (
                rope.training_length == 2048 == CLASS_DEFAULTS["llama"]["max_position_embeddings"]
            )
        longrope = {
            "model_type": "llama",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "rope_scaling": {
                "rope_type": "longrope",
                "short_factor": [1.0] * 64,
                "long_factor": [2.0] * 64,
                "factor": 4.0,
            },
        }
        assert pe_core.rope_from_config(longrope).training_length == 2048

    def test_another_class_has_another_default(self):
        # Mistral's class says 131,072 positions, Qwen2's 32,768: not Llama's 2,048.
        for model_type, length in (("mistral", 131_072), ("qwen2", 32_768)):
            config = {
                "model_type": model_type,
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
            }
            assert pe_core.rope_from_config(config).training_length == length

    @pytest.mark.parametrize(
        ("scaling", "unread"),
        [
            ({"rope_type": "linear", "factor": 2.0, "beta_fast": 3.0}, "{'beta_fast'}"),
            (
                {"rope_type": "dynamic", "factor": 2.0, "short_factor": [1.0] * 64},
                "{'short_factor'}",
            ),
            ({"rope_type": "default", "factor": 2.0}, "{'factor'}"),
            ({"type": "linear", "factor": 2.0, "mrope_section": [16, 24, 24]}, "{'mrope_section'}"),
        ],
    )
    def test_a_key_the_rope_type_does_not_take_is_warned_about_as_transformers_does(
        self, scaling, unread
    ):
        config = {"model_type": "llama", "head_dim": 128, "rope_scaling": scaling}
        rope_type = scaling.get("rope_type", scaling.get("type"))
        expected = f"Unrecognized keys in `rope_parameters` for 'rope_type'='{rope_type}': {unread}"
        with pytest.warns(UserWarning) as caught:
            pe_core.rope_from_config(config)
        assert [str(w.message) for w in caught] == [expected]

    def test_a_class_that_ignores_a_key_is_not_warned_about(self):
        # Qwen2.5-VL's class tells transformers not to validate mrope_section.
        config = {
            "model_type": "qwen2_5_vl",
            "hidden_size": 3584,
            "num_attention_heads": 28,
            "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
        }
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pe_core.rope_from_config(config)

    def test_yarn_without_a_factor_is_refused_as_transformers_refuses_it(self):
        config = {"model_type": "llama", "head_dim": 64, "rope_scaling": {"rope_type": "yarn"}}
        with pytest.raises(pe_core.InputError, match=r"needs the key 'factor': transformers 5\.24"):
            pe_core.rope_from_config(config)

    def test_absent_num_hidden_layers_takes_the_class_default(self):
        layers = pe_core.rope_layers({"model_type": "llama", "head_dim": 64})
        assert len(layers) == 32 == CLASS_DEFAULTS["llama"]["num_hidden_layers"]
        layers = pe_core.rope_layers({"model_type": "qwen3_next", "head_dim": 256})
        assert len(layers) == 48
        assert [rope is not None for rope in layers[:8]] == [False, False, False, True] * 2

    def test_lfm2_reads_full_attn_idxs(self):
        config = json.loads((DATA / "hf_configs" / "lfm2-LFM2-1.2B.json").read_text())
        assert "layer_types" not in config and config["full_attn_idxs"] == [2, 5, 8, 10, 12, 14]
        layers = pe_core.rope_layers(config)
        assert [i for i, rope in enumerate(layers) if rope is not None] == [2, 5, 8, 10, 12, 14]
        assert len(layers) == 16

    @pytest.mark.parametrize(
        ("config", "key"),
        [
            ({"model_type": "llama", "head_dim": 64, "full_attn_idxs": [1]}, "full_attn_idxs"),
            ({"model_type": "minimax", "head_dim": 64, "attn_type_list": [0, 1]}, "attn_type_list"),
            (
                {"model_type": "mistral", "head_dim": 64, "hybrid_override_pattern": "M*M*"},
                "hybrid_override_pattern",
            ),
            ({"head_dim": 64, "num_hidden_layers": 4, "layers_block_type": ["mamba"]}, "layers_"),
        ],
    )
    def test_a_layer_key_not_read_is_refused_never_answered_with_a_rotation(self, config, key):
        with pytest.raises(pe_core.InputError, match=rf"config\['{key}"):
            pe_core.rope_layers(config)

    def test_a_layer_type_not_known_is_refused(self):
        config = {"head_dim": 64, "layer_types": ["hybrid", "full_attention"]}
        with pytest.raises(pe_core.InputError, match="layer type 'hybrid' is neither"):
            pe_core.rope_layers(config)

    def test_a_class_deriving_layer_types_by_a_rule_not_read_is_refused(self):
        with pytest.raises(pe_core.InputError, match="derives its layer types"):
            pe_core.rope_layers({"model_type": "minimax", "head_dim": 64})
        # With its layer types listed, it is read.
        listed = {
            "model_type": "minimax",
            "head_dim": 64,
            "layer_types": ["linear_attention"] * 7 + ["full_attention"],
        }
        layers = pe_core.rope_layers(listed)
        assert [rope is not None for rope in layers] == [False] * 7 + [True]

    @pytest.mark.parametrize("model_type", ["gpt2", "bert", "t5", "jamba", "nemotron_h", "mpt"])
    def test_a_model_type_with_no_rotary_embedding_is_refused(self, model_type):
        assert model_type in NO_ROTARY
        config = {"model_type": model_type, "hidden_size": 768, "num_attention_heads": 12}
        with pytest.raises(pe_core.InputError, match="has no rotary position embedding"):
            pe_core.rope_from_config(config)

    def test_falcon_with_alibi_has_no_rope(self):
        config = {"model_type": "falcon", "hidden_size": 64, "num_attention_heads": 4}
        assert all(rope is not None for rope in pe_core.rope_layers(config))
        with pytest.raises(pe_core.InputError, match="no layer of this model uses RoPE"):
            pe_core.rope_from_config({**config, "alibi": True})

    def test_mllama_cross_attention_layers_do_not_rotate(self):
        config = {"model_type": "mllama_text_model", "num_hidden_layers": 10}
        rotating = [rope is not None for rope in pe_core.rope_layers(config)]
        assert rotating == [True, True, True, False, True, True, True, True, False, True]

    def test_granite_40s_first_spelling_of_layer_types(self):
        config = {
            "model_type": "granitemoehybrid",
            "head_dim": 64,
            "position_embedding_type": "rope",
            "layers_block_type": ["mamba", "attention", "mamba", "attention"],
        }
        rotating = [rope is not None for rope in pe_core.rope_layers(config)]
        assert rotating == [False, True, False, True]


def test_class_defaults_and_the_tables_defaults_agree():
    """Where the table's entry and the generated class defaults both give a key, the same
    value (the table adds remote-code classes and nested rope parameters)."""
    for model_type, entry in pe_core.MODEL_ROPES.items():
        generated = CLASS_DEFAULTS.get(model_type, {})
        for key, value in entry.defaults.items():
            if key in generated and key not in ("rope_parameters", "rope_scaling"):
                assert generated[key] == value, (model_type, key)
        if "rope_theta" in generated and entry.default_theta != 10_000.0:
            assert generated["rope_theta"] == entry.default_theta, model_type


@pytest.mark.library
@pytest.mark.slow  # 23 s: every configuration class of transformers instantiated
def test_live_class_defaults_are_transformers_own():
    """Where transformers 5.24 is installed: the generated table is its classes' defaults."""
    pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
    transformers = pytest.importorskip("transformers", minversion="5.24", reason="transformers")
    if transformers.__version__ != TRANSFORMERS_VERSION:
        pytest.skip(f"the table is of transformers {TRANSFORMERS_VERSION}")
    import sys

    from tests import ROOT

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import hf_class_defaults

    defaults, none, layer_types, ignored, wrappers = hf_class_defaults.tables()
    assert set(none) == NO_ROTARY
    assert defaults == {t: dict(v) for t, v in CLASS_DEFAULTS.items()}
    assert layer_types == dict(LAYER_TYPE_NAMES)
    assert ignored == dict(IGNORED_ROPE_KEYS)
    assert wrappers == dict(WRAPPERS)
