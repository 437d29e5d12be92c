"""Literal reference values for the model families of pe_core.rotary.models, from transformers.

Development only: needs torch and transformers (not dependencies of the project), e.g.
``pip install torch==2.13.0 transformers``. For each family that the real-config corpus
(tests/data/hf_configs/) does not cover, a small config is built on the model class's own
defaults with the family's distinctive keys, as its config.json files spell them; transformers
reads it (``CONFIG_MAPPING[model_type].from_dict``, no hub, no weights) and its rotary class
computes ``inv_freq`` and the attention factor for each layer type, the pair layout is read from
the model's code and the rotating layers from its attention code (see hf_reference.py). Written
to tests/data/hf_families_5_24.json; run with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import transformers  # noqa: E402
from hf_reference import (  # noqa: E402
    CONFIG_MAPPING,
    _floats,
    compute_config,
    modeling_module,
    text_config_of,
)
from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "hf_families_5_24.json"

#: name -> a config.json as the family spells it (built here, not collected).
CONFIGS = {
    "gpt_neox-pythia-style": {
        "model_type": "gpt_neox",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "num_hidden_layers": 2,
        "rotary_pct": 0.25,
        "rotary_emb_base": 10000,
        "max_position_embeddings": 2048,
    },
    "gpt_neox-class-defaults": {
        "model_type": "gpt_neox",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "num_hidden_layers": 2,
    },
    "gptj": {
        "model_type": "gptj",
        "n_embd": 512,
        "n_head": 8,
        "n_layer": 2,
        "rotary_dim": 32,
        "n_positions": 2048,
    },
    "cohere": {
        "model_type": "cohere",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "num_hidden_layers": 2,
    },
    "cohere2": {
        "model_type": "cohere2",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "num_hidden_layers": 8,
        "sliding_window": 4096,
        "rope_theta": 50000,
    },
    "glm": {
        "model_type": "glm",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "head_dim": 64,
        "num_hidden_layers": 2,
    },
    "modernbert": {"model_type": "modernbert", "num_hidden_layers": 6},
    "modernbert-thetas": {
        "model_type": "modernbert",
        "num_hidden_layers": 6,
        "global_rope_theta": 8000000.0,
        "local_rope_theta": 20000.0,
    },
    "llama4-scout-style": {
        "model_type": "llama4_text",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "head_dim": 64,
        "num_hidden_layers": 8,
        "max_position_embeddings": 131072,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 16.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
        },
    },
    "qwen2_vl-mrope": {
        "model_type": "qwen2_vl",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "num_hidden_layers": 2,
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 8, 8]},
    },
    "qwen3_next": {
        "model_type": "qwen3_next",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 8,
    },
    "gemma3_text-pattern": {
        "model_type": "gemma3_text",
        "num_hidden_layers": 12,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0},
    },
    # (EXAONE 4's "sliding_window_pattern": "LLLG" without layer_types: transformers 5.24's
    # config raises TypeError on it, so there is no reference for that spelling.)
    "exaone4-pattern": {
        "model_type": "exaone4",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "num_hidden_layers": 8,
        "sliding_window": 4096,
        "sliding_window_pattern": 4,
    },
    "gpt_oss-class-pattern": {"model_type": "gpt_oss", "num_hidden_layers": 4},
    # --- families of transformers 5.24 added from benchmarks/hf_model_types.py's walk; no real
    # config.json of these was found in the code index: class defaults plus the family's keys.
    "mistral4-class-defaults": {"model_type": "mistral4", "num_hidden_layers": 4},
    "mistral4-small4-style": {
        "model_type": "mistral3",
        "text_config": {
            "model_type": "mistral4",
            "num_hidden_layers": 4,
            "rope_parameters": {
                "type": "yarn",
                "rope_theta": 10000.0,
                "factor": 128.0,
                "original_max_position_embeddings": 8192,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "mscale_all_dim": 1.0,
                "mscale": 1.0,
                "llama_4_scaling_beta": 0.1,
            },
        },
    },
    "mistral4-no-interleave": {
        "model_type": "mistral4",
        "num_hidden_layers": 2,
        "qk_nope_head_dim": 96,
        "qk_rope_head_dim": 32,
        "rope_interleave": False,
    },
    "mistral_large4-class-defaults": {"model_type": "mistral_large4_text", "num_hidden_layers": 8},
    "deepseek_v32-yarn": {
        "model_type": "deepseek_v32",
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "num_hidden_layers": 4,
        "rope_theta": 10000,
        "rope_scaling": {
            "type": "yarn",
            "factor": 40,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
        },
    },
    "glm_moe_dsa-class-defaults": {"model_type": "glm_moe_dsa", "num_hidden_layers": 4},
    "axk2-class-defaults": {"model_type": "axk2", "num_hidden_layers": 4},
    "bailing_hybrid-class-defaults": {"model_type": "bailing_hybrid", "num_hidden_layers": 8},
    "hy_v4-class-defaults": {"model_type": "hy_v4", "num_hidden_layers": 4},
    "hy_v4_vl_text-class-defaults": {"model_type": "hy_v4_vl_text", "num_hidden_layers": 4},
    "axk1-class-defaults": {"model_type": "axk1", "num_hidden_layers": 4},
    "glm4_moe_lite-class-defaults": {"model_type": "glm4_moe_lite", "num_hidden_layers": 4},
    "youtu-class-defaults": {"model_type": "youtu", "num_hidden_layers": 4},
    # (dots.llm3's class pattern, full for i < 2 or i % 4 == 1, is not one pe_core knows: the
    # layer types written out, as a saved config lists them.)
    "dots3_note_text-class-defaults": {
        "model_type": "dots3_note_text",
        "num_hidden_layers": 6,
        "layer_types": ["indexed_attention"] * 2
        + ["sliding_attention"] * 3
        + ["indexed_attention"],
    },
    "qwen4_exp_text-class-defaults": {"model_type": "qwen4_exp_text", "num_hidden_layers": 8},
    "ernie4_5-class-defaults": {"model_type": "ernie4_5", "num_hidden_layers": 2},
    "ernie4_5_moe-class-defaults": {"model_type": "ernie4_5_moe", "num_hidden_layers": 2},
    "helium-class-defaults": {"model_type": "helium", "num_hidden_layers": 2},
    "blt_global_transformer-class-defaults": {"model_type": "blt_global_transformer"},
    "blt_patcher-class-defaults": {"model_type": "blt_patcher"},
    "moonshine_streaming-class-defaults": {"model_type": "moonshine_streaming"},
    "openai_privacy_filter-class-defaults": {"model_type": "openai_privacy_filter"},
    "pe_audio_encoder-class-defaults": {"model_type": "pe_audio_encoder"},
    "glm4_moe-glm45-style": {
        "model_type": "glm4_moe",
        "hidden_size": 5120,
        "num_attention_heads": 96,
        "head_dim": 128,
        "num_hidden_layers": 2,
        "rope_theta": 1000000,
        "max_position_embeddings": 131072,
    },
    "gemma4_text-class-defaults": {"model_type": "gemma4_text", "num_hidden_layers": 12},
    # A Gemma 4 config.json as saved before per_layer_config (global_head_dim at the top).
    "gemma4_text-global_head_dim": {
        "model_type": "gemma4_text",
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "head_dim": 256,
        "global_head_dim": 512,
        "num_hidden_layers": 6,
        "sliding_window": 512,
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {
                "rope_type": "proportional",
                "partial_rotary_factor": 0.25,
                "rope_theta": 1000000.0,
            },
        },
    },
    "granite4-micro-style": {
        "model_type": "granitemoehybrid",
        "hidden_size": 2560,
        "num_attention_heads": 40,
        "num_hidden_layers": 4,
        "layer_types": ["attention"] * 4,
        "position_embedding_type": "rope",
        "rope_theta": 10000000,
        "mamba_n_heads": 128,
        "mamba_d_head": 40,
    },
    "granite4-h-style": {
        "model_type": "granitemoehybrid",
        "hidden_size": 1536,
        "num_attention_heads": 12,
        "num_hidden_layers": 4,
        "layer_types": ["mamba", "mamba", "mamba", "attention"],
        "position_embedding_type": "rope",
        "mamba_n_heads": 48,
        "mamba_d_head": 64,
    },
    "moonshine-class-defaults": {"model_type": "moonshine"},
    "jetmoe-class-defaults": {"model_type": "jetmoe", "num_hidden_layers": 2},
    "jetmoe-kv_channels": {"model_type": "jetmoe", "num_hidden_layers": 2, "kv_channels": 64},
    "internvl-hf-qwen2": {
        "model_type": "internvl",
        "text_config": {
            "model_type": "qwen2",
            "hidden_size": 896,
            "num_attention_heads": 14,
            "num_hidden_layers": 24,
            "rope_theta": 1000000.0,
            "max_position_embeddings": 32768,
        },
    },
}


#: The keys that give a model's shape, as a saved config.json lists them: a "-class-defaults"
#: config above gets the class's own values of those it lacks (the rest, RoPE's keys included,
#: stay absent so that the model class's defaults are what is read).
SHAPE_KEYS = (
    "hidden_size",
    "num_attention_heads",
    "num_hidden_layers",
    "head_dim",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
)
#: Configs whose model entry in pe_core.rotary.models carries the shape too: left sparse.
SPARSE = {"mistral4-class-defaults", "moonshine-class-defaults"}


def with_shape(name: str, raw: dict) -> dict:
    if not name.endswith("-class-defaults") or name in SPARSE:
        return raw
    defaults = CONFIG_MAPPING[raw["model_type"]]().to_dict()
    shape = {k: defaults[k] for k in SHAPE_KEYS if defaults.get(k) is not None and k not in raw}
    if "num_layers" in raw:  # LongCat-Flash's own name of the layer count
        shape.pop("num_hidden_layers", None)
    return {**raw, **shape}


def gptj_inv_freq(raw: dict) -> list[float]:
    """GPT-J has no inv_freq buffer: its frequencies from its own table's row at position 1
    (``create_sinusoidal_positions``: sin of each pair's angle, first half; angles <= 1)."""
    table = create_sinusoidal_positions(2, raw["rotary_dim"])
    return _floats(torch.asin(table[1, : raw["rotary_dim"] // 2]))


def compute(raw: dict) -> dict:
    if raw["model_type"] == "gptj":
        cfg = CONFIG_MAPPING["gptj"].from_dict(dict(raw))
        module = modeling_module(cfg)
        return {
            "config": raw,
            "rotary_class": f"{module.__name__}.create_sinusoidal_positions",
            # rotate_every_two: x[..., ::2] and x[..., 1::2], adjacent columns
            "layout": "interleaved" if "::2" in inspect.getsource(module.rotate_every_two) else "?",
            "num_hidden_layers": int(cfg.num_hidden_layers),
            "rotating_layers": list(range(int(cfg.num_hidden_layers))),
            "per_layer_type": {
                "all": {
                    "inv_freq": gptj_inv_freq(raw),
                    "attention_scaling": 1.0,
                    "rotary_dim": raw["rotary_dim"],
                }
            },
        }
    record = compute_config(copy.deepcopy(raw))  # transformers writes into nested dicts
    if record["text_model_type"] == "cohere2":  # RoPE only where the layer has a window
        text = text_config_of(CONFIG_MAPPING["cohere2"].from_dict(dict(raw)))
        record["rotating_layers"] = [
            i for i, kind in enumerate(text.layer_types) if kind == "sliding_attention"
        ]
        record["rotating_layers_rule"] = (
            "Cohere2Attention: apply_rotary_pos_emb only if self.sliding_window is not None"
        )
    for entry in record["per_layer_type"].values():  # keep the file small
        for key in ("cos", "sin", "positions", "position_ids"):
            entry.pop(key, None)
    return {"config": raw, **record}


def main() -> int:
    results = {name: compute(with_shape(name, raw)) for name, raw in CONFIGS.items()}
    document = {
        "generator": "benchmarks/hf_families.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "note": "configs built on each class's defaults with the family's own keys, not collected",
        "results": results,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(results)} configs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
