"""rope_from_config on the real config.json files (31) against transformers' own rotary classes.

The corpus (tests/data/hf_configs/, sources in SOURCES.md) and the reference values
(reference.json: transformers 5.24.0, torch 2.13.0+cpu, computed once by
benchmarks/hf_reference.py) were collected for issue 34. Each (file, layer type) is one case:
the rotary width, the frequencies and the attention factor the model's rotary class computes for
that layer type. Where pe_core does not read the config as transformers does yet, the case is a
strict xfail naming what is missing, so that it fails loudly once it is fixed.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import pe_core
from tests import DATA

CORPUS = DATA / "hf_configs"
REFERENCE = json.loads((CORPUS / "reference.json").read_text())
#: transformers computes inv_freq in float32 with its own operation order: up to a few float32
#: ulps (2**-24 relative) from the exact value; 4.1e-7 is the largest seen in this corpus.
INV_FREQ_RTOL = 1e-6
#: attention_scaling is a float32 value in transformers: one rounding.
FACTOR_RTOL = 2**-23

#: (file, layer type): what pe_core does not read yet (issue 34).
NOT_READ_YET: dict[tuple[str, str], str] = {}


def _cases():
    for name, result in sorted(REFERENCE["results"].items()):
        if "error" in result:  # remote-code models: transformers itself has no class
            continue
        for layer_type in result["per_layer_type"]:
            marks = ()
            if (name, layer_type) in NOT_READ_YET:
                reason = f"issue 34, not read yet: {NOT_READ_YET[name, layer_type]}"
                marks = pytest.mark.xfail(strict=True, reason=reason)
            yield pytest.param(name, layer_type, marks=marks, id=f"{name[:-5]}-{layer_type}")


def test_the_corpus_is_whole():
    files = {path.name for path in CORPUS.glob("*.json")} - {"reference.json"}
    assert len(files) >= 30
    assert files == set(REFERENCE["results"])
    sources = (CORPUS / "SOURCES.md").read_text()
    assert all(f"`{name}`" in sources for name in files)


@pytest.mark.parametrize(("name", "layer_type"), list(_cases()))
def test_frequencies_and_attention_factor_as_transformers(name, layer_type):
    config = json.loads((CORPUS / name).read_text())
    expected = REFERENCE["results"][name]["per_layer_type"][layer_type]
    # One forward call at positions up to 8191: length-dependent types (dynamic, LongRoPE) saw
    # a sequence of 8,192 and updated inv_freq from it.
    inv_freq = np.asarray(expected.get("inv_freq_after_forward", expected["inv_freq"]))
    seq_len = max(REFERENCE["positions"]) + 1
    if layer_type == "all":  # one encoding for every layer: no warning, no choice needed
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rope = pe_core.rope_from_config(config, seq_len=seq_len)
    else:
        rope = pe_core.rope_from_config(config, layer_type=layer_type, seq_len=seq_len)
    assert rope.rotary_dim == expected["rotary_dim"]
    np.testing.assert_allclose(rope.inv_freq, inv_freq, rtol=INV_FREQ_RTOL, atol=0)
    assert rope.attention_factor == pytest.approx(expected["attention_scaling"], rel=FACTOR_RTOL)
    assert rope.layout == REFERENCE["results"][name]["layout"]


@pytest.mark.parametrize(
    "name", sorted(n for n, r in REFERENCE["results"].items() if "error" not in r)
)
def test_which_layers_rotate_as_the_model_decides(name):
    """rope_layers: None exactly where the model's own attention code applies no rotary
    embedding (reference: the model's modeling file, rotating_layers_rule in reference.json)."""
    config = json.loads((CORPUS / name).read_text())
    expected = REFERENCE["results"][name]
    layers = pe_core.rope_layers(config)
    assert len(layers) == expected["num_hidden_layers"]
    assert [i for i, rope in enumerate(layers) if rope is not None] == expected["rotating_layers"]
    references = list(expected["per_layer_type"].values())
    for rope in {id(rope): rope for rope in layers if rope is not None}.values():
        # Each layer's encoding is one of the model's per-layer-type encodings (the frequency
        # test checks which is which).
        assert any(
            rope.rotary_dim == reference["rotary_dim"]
            and np.allclose(rope.inv_freq, reference["inv_freq"], rtol=INV_FREQ_RTOL, atol=0)
            for reference in references
        )


# --- the families the corpus lacks --------------------------------------------------------
# tests/data/hf_families_5_24.json: small configs built on each model class's defaults, with
# the family's own keys as its config.json files spell them (GPT-NeoX's rotary_pct, GPT-J's
# n_embd and rotary_dim, ModernBERT's global_rope_theta, Llama 4 Scout's equal llama3 factors,
# Qwen2-VL's "type": "mrope", ...), read by transformers 5.24 (benchmarks/hf_families.py).
FAMILIES = json.loads((CORPUS.parent / "hf_families_5_24.json").read_text())["results"]


def _family_cases():
    for name, result in sorted(FAMILIES.items()):
        for layer_type in result["per_layer_type"]:
            yield pytest.param(name, layer_type, id=f"{name}-{layer_type}")


@pytest.mark.parametrize(("name", "layer_type"), list(_family_cases()))
def test_families_as_transformers(name, layer_type):
    result = FAMILIES[name]
    expected = result["per_layer_type"][layer_type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Llama 4 Scout's hard step is warned
        rope = pe_core.rope_from_config(
            result["config"], layer_type=None if layer_type == "all" else layer_type
        )
    assert rope.rotary_dim == expected["rotary_dim"]
    np.testing.assert_allclose(rope.inv_freq, expected["inv_freq"], rtol=INV_FREQ_RTOL, atol=0)
    assert rope.attention_factor == pytest.approx(expected["attention_scaling"], rel=FACTOR_RTOL)
    assert rope.layout == result["layout"]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_families_rotating_layers(name):
    result = FAMILIES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        layers = pe_core.rope_layers(result["config"])
    assert len(layers) == result["num_hidden_layers"]
    assert [i for i, rope in enumerate(layers) if rope is not None] == result["rotating_layers"]


@pytest.mark.parametrize("name", [n for n, r in REFERENCE["results"].items() if "error" not in r])
def test_the_softmax_factor_outside_the_rotary_class(name):
    """DeepSeek's attention multiplies its softmax scale by mscale**2 under YaRN
    (yarn_apply_mscale): transformers' own attention module's scale, recorded in
    reference.json; every other model leaves it alone."""
    config = json.loads((CORPUS / name).read_text())
    expected = REFERENCE["results"][name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rope = pe_core.rope_from_config(config)
    if expected["text_model_type"].startswith("deepseek"):
        qk_head_dim = config["qk_nope_head_dim"] + config["qk_rope_head_dim"]
        assert qk_head_dim**-0.5 * rope.softmax_factor == pytest.approx(
            expected["attention_softmax_scaling"], rel=1e-15
        )
        assert rope.softmax_factor == pytest.approx(1.8738542, rel=1e-7)
    else:
        assert rope.softmax_factor == 1.0
