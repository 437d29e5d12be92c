"""Reference cos/sin caches for RoPE identification, computed with Hugging Face transformers.

Development-only: needs `transformers` and `torch` (not dependencies of the project). Run once:

    HF_HUB_OFFLINE=1 /tmp/hf-venv/bin/python benchmarks/hf_rope_caches.py

For each case below it builds the model's config from a file of tests/data/hf_configs (no hub
access, no weights; a few cases add a ``rope_scaling`` that the model's documentation gives, as
said in the case), instantiates the text model's own rotary-embedding class (found as
benchmarks/hf_reference.py finds it) and calls it once on all the listed positions, with an
input of dtype float32 and once of bfloat16 (transformers computes the angles in float32 and
casts cos and sin to the input's dtype). Written to tests/data/rope_caches/: per case
``<case>.npz`` (positions, inv_freq float32, cos/sin float32, cos/sin bfloat16 as uint16 bit
patterns, attention_scaling) and ``<case>.config.json`` (the config as given to transformers),
plus ``cases.json`` (versions, rotary class, what each case is).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import torch
import transformers
from transformers import CONFIG_MAPPING

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hf_reference import modeling_module, rotary_class, text_config_of  # noqa: E402

CORPUS = HERE.parent / "tests" / "data" / "hf_configs"
OUT = HERE.parent / "tests" / "data" / "rope_caches"

#: The first 32 positions, then rows spread to 131,071 (odd positions beyond 256 show position
#: ids rounded to bfloat16; powers of two let a fit double its reach at every step).
POSITIONS = [
    *range(32),
    *(48, 63, 64, 100, 127, 128, 255, 256, 257, 259, 511, 512, 1000, 1023, 1024, 2047, 2048),
    *(2049, 4095, 4096, 4097, 8191, 8192, 16384, 32768, 65536, 131071),
]

#: Qwen2.5's model card: "add the following to config.json to enable YaRN".
QWEN_YARN = {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}

CASES = {
    "llama3_1_8b": ("llama3.1-Llama-3.1-8B-Instruct.json", None, None, None, "llama3 factor 8"),
    "qwen2_5_7b_yarn": (
        "qwen2.5-Qwen2.5-7B-Instruct.json",
        QWEN_YARN,
        None,
        None,
        "yarn factor 4 (rope_scaling added as Qwen2.5's model card says)",
    ),
    "gpt_oss_120b": (
        "gptoss-gpt-oss-120b.json",
        None,
        None,
        None,
        "yarn factor 32, truncate false, theta 150000, head_dim 64",
    ),
    "phi3_5_longrope": (
        "phi3.5-Phi-3.5-vision-instruct-text.json",
        None,
        None,
        None,
        "longrope, 48 pairs of short/long factors (beyond 4096: long)",
    ),
    "gemma3_27b_linear": (
        "gemma3-gemma-3-27b-it-full.json",
        None,
        "full_attention",
        None,
        "linear factor 8 on the full-attention layers, theta 1e6",
    ),
    "llama2_dynamic_within": (
        "llama2-Llama-2-7b-chat-hf.json",
        {"type": "dynamic", "factor": 2.0},
        None,
        4095,
        "dynamic NTK factor 2 (rope_scaling added), positions within the 4,096 trained",
    ),
    "llama2_dynamic_beyond": (
        "llama2-Llama-2-7b-chat-hf.json",
        {"type": "dynamic", "factor": 2.0},
        None,
        16384,
        "dynamic NTK factor 2 (rope_scaling added), positions to 16,384: the NTK base",
    ),
    "qwen3_8b_default": ("qwen3-Qwen3-8B.json", None, None, None, "default, theta 1e6"),
    "phi1_partial": (
        "phi-phi-1.json",
        None,
        None,
        None,
        "default, partial_rotary_factor 0.5 (32 of 64 columns rotate)",
    ),
}


def bf16_bits(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16).copy()


def run_case(name: str, spec) -> dict:
    file, rope_scaling, layer_type, last, words = spec
    raw = json.loads((CORPUS / file).read_text(encoding="utf-8"))
    if rope_scaling is not None:
        raw = {**raw, "rope_scaling": rope_scaling}
    positions = [p for p in POSITIONS if last is None or p <= last]
    cfg = CONFIG_MAPPING[raw["model_type"]].from_dict(raw)
    text = text_config_of(cfg)
    module = modeling_module(text)
    cls = rotary_class(module)
    arrays: dict[str, np.ndarray] = {"positions": np.array(positions, dtype=np.int64)}
    for dtype, label in ((torch.float32, "float32"), (torch.bfloat16, "bfloat16")):
        rot = cls(config=text)  # fresh: dynamic and longrope update their buffers on forward
        prefix = f"{layer_type}_" if layer_type and hasattr(rot, f"{layer_type}_inv_freq") else ""
        kwargs = {"layer_type": layer_type} if prefix else {}
        ids = torch.tensor([positions], dtype=torch.long)
        width = 2 * getattr(rot, f"{prefix}inv_freq").numel()
        x = torch.zeros(1, len(positions), width, dtype=dtype)
        cos, sin = rot(x, ids, **kwargs)
        if label == "float32":
            arrays["inv_freq"] = getattr(rot, f"{prefix}inv_freq").detach().numpy().copy()
            scaling = getattr(rot, f"{prefix}attention_scaling", None)
            scaling = getattr(rot, "attention_scaling", 1.0) if scaling is None else scaling
            arrays["attention_scaling"] = np.array(float(scaling))
            arrays["cos_float32"] = cos[0].detach().numpy().copy()
            arrays["sin_float32"] = sin[0].detach().numpy().copy()
        else:
            arrays["cos_bfloat16_bits"] = bf16_bits(cos[0])
            arrays["sin_bfloat16_bits"] = bf16_bits(sin[0])
    np.savez_compressed(OUT / f"{name}.npz", **arrays)
    (OUT / f"{name}.config.json").write_text(json.dumps(raw, indent=1) + "\n", encoding="utf-8")
    return {
        "config_file": file,
        "rope_scaling_added": rope_scaling,
        "layer_type": layer_type,
        "rotary_class": f"{module.__name__}.{cls.__name__}",
        "what": words,
        "n_positions": len(positions),
        "rotary_dim": int(arrays["cos_float32"].shape[1]),
        "attention_scaling": float(arrays["attention_scaling"]),
    }


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    cases = {name: run_case(name, spec) for name, spec in CASES.items()}
    index = {
        "generator": "benchmarks/hf_rope_caches.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "positions": POSITIONS,
        "cases": cases,
    }
    (OUT / "cases.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: (v["rotary_class"], v["attention_scaling"]) for k, v in cases.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
