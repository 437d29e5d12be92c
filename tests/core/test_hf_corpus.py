"""rope_from_config on 30 real config.json files against transformers' own rotary classes.

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
NOT_READ_YET = {
    ("gemma3-gemma-3-27b-it-full.json", "sliding_attention"): (
        "rope_local_base_freq (10,000, unscaled) on sliding layers"
    ),
    ("gemma3-gemma-3-27b-it.json", "full_attention"): (
        "Gemma 3's class default for an absent rope_theta (1,000,000 on global layers)"
    ),
    ("gemma3-gemma-3-27b-it.json", "sliding_attention"): (
        "rope_local_base_freq and the class defaults of a sparse text_config"
    ),
    ("gemma3-gemma-3-4b-it.json", "full_attention"): (
        "a sparse text_config: the class's defaults (head_dim 256, rope_theta 1e6)"
    ),
    ("gemma3-gemma-3-4b-it.json", "sliding_attention"): (
        "a sparse text_config: the class's defaults (head_dim 256, local base 10,000)"
    ),
    ("olmo3-Olmo-3.1-32B-Instruct.json", "sliding_attention"): (
        "YaRN on full-attention layers only: sliding layers use the default frequencies"
    ),
    ("qwen2.5vl-Qwen2.5-VL-7B-Instruct.json", "all"): (
        'rope_scaling {"type": "mrope"}: default frequencies plus M-RoPE sections'
    ),
}


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. several layer types: full attention
        rope = pe_core.rope_from_config(config, seq_len=max(REFERENCE["positions"]) + 1)
    assert rope.rotary_dim == expected["rotary_dim"]
    np.testing.assert_allclose(rope.inv_freq, inv_freq, rtol=INV_FREQ_RTOL, atol=0)
    assert rope.attention_factor == pytest.approx(expected["attention_scaling"], rel=FACTOR_RTOL)
