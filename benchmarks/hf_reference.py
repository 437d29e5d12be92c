"""Reference RoPE values for the real config.json corpus, computed with Hugging Face transformers.

Development-only: needs `transformers` and `torch` (not dependencies of the project). Run once, e.g.

    python3 -m venv /tmp/hf-venv
    /tmp/hf-venv/bin/pip install torch==2.13.0 transformers numpy
    HF_HUB_OFFLINE=1 /tmp/hf-venv/bin/python benchmarks/hf_reference.py

For each tests/data/hf_configs/*.json it builds the model's config from the file (no hub access,
no weights), finds the text model's rotary-embedding class in
`transformers.models.<name>.modeling_<name>`, instantiates it directly and records, per distinct
layer type: inv_freq (float32), attention_scaling, rotary dim, pair layout and cos/sin at a few
positions, plus which layers rotate as the model's own attention code decides. The result is
written to tests/data/hf_configs/reference.json.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch
import transformers
from transformers import CONFIG_MAPPING

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "tests" / "data" / "hf_configs"
OUT = CORPUS / "reference.json"
POSITIONS = [0, 1, 4095, 8191]


def _floats(t: torch.Tensor) -> list[float]:
    return [float(v) for v in t.detach().to(torch.float32).reshape(-1).tolist()]


def text_config_of(cfg):
    """The decoder's config: nested text_config / llm_config where there is one."""
    if getattr(cfg, "text_config", None) is not None:
        return cfg.text_config
    try:
        return cfg.get_text_config(decoder=True)
    except Exception:  # older signature
        return cfg.get_text_config()


def modeling_module(text_cfg):
    conf_mod = type(text_cfg).__module__  # transformers.models.<name>.configuration_<name>
    pkg, _, leaf = conf_mod.rpartition(".")
    return importlib.import_module(f"{pkg}.{leaf.replace('configuration_', 'modeling_', 1)}")


def rotary_class(module):
    names = [
        n
        for n in dir(module)
        if n.endswith("RotaryEmbedding") and "Vision" not in n and "Vit" not in n
    ]
    if not names:
        raise LookupError(f"no text RotaryEmbedding class in {module.__name__}")
    text_named = [n for n in names if "Text" in n]
    return getattr(module, (text_named or sorted(names, key=len))[0])


def pair_layout(module, text_cfg) -> tuple[str, str]:
    """'halves' (rotate_half: cat(-x2, x1)) or 'interleaved' (pairs (0,1), (2,3), ...).

    Read from the model's code: first the text attention's own forward (an unconditional
    apply_rotary_pos_emb_interleave, as DeepSeek V3.2's, is adjacent pairs whatever the module's
    rotate_half, which may serve an indexer), then rotate_half / apply_rotary_emb.
    """
    skip = ("Vision", "Vit", "Audio", "Indexer", "Cross", "Delta", "Linear", "Mamba", "Sam")
    for name in sorted(dir(module)):
        cls = getattr(module, name)
        if not (isinstance(cls, type) and name.endswith(("Attention", "MLA"))) or any(
            s in name for s in skip
        ):
            continue
        try:
            src = inspect.getsource(cls.forward)
        except (OSError, TypeError):
            continue
        if "apply_rotary_pos_emb_interleave(" in src and "rope_interleave" not in src:
            return "interleaved", f"{name}.forward: apply_rotary_pos_emb_interleave"
    apply = getattr(module, "apply_rotary_pos_emb", None)
    if apply is not None and "-1, 1, 2)" in inspect.getsource(apply):
        return "interleaved", "apply_rotary_pos_emb: a 2x2 rotation of each adjacent pair"
    if getattr(text_cfg, "rope_interleave", False) and hasattr(
        module, "apply_rotary_pos_emb_interleave"
    ):
        return "interleaved", "apply_rotary_pos_emb_interleave (config.rope_interleave=True)"
    rot = getattr(module, "rotate_half", None)
    if rot is not None:
        src = inspect.getsource(rot)
        if "::2" in src or "stack" in src:
            return "interleaved", "rotate_half on even/odd pairs"
        if "cat((-x2, x1)" in src.replace(" ", "").replace("cat((-x2,x1)", "cat((-x2, x1)"):
            return "halves", "rotate_half: cat(-x2, x1)"
    for fn_name in ("_apply_rotary_emb", "apply_rotary_emb"):
        fn = getattr(module, fn_name, None)
        if fn is not None:
            src = inspect.getsource(fn)
            if "view_as_complex" in src and "-1, 2)" in src:
                return "interleaved", f"{fn_name}: complex numbers of adjacent columns"
            if "chunk(2" in src or "chunk(" in src:
                return "halves", f"{fn_name}: chunk into halves"
            if "::2" in src:
                return "interleaved", f"{fn_name}: even/odd"
    return "unknown", "no rotate_half / apply_rotary_emb found"


def rotating_layers(model_type: str, text_cfg) -> tuple[list[int], str]:
    n = int(text_cfg.num_hidden_layers)
    layer_types = getattr(text_cfg, "layer_types", None)
    mt = getattr(text_cfg, "model_type", model_type)
    if (
        mt in ("smollm3", "llama4_text", "mistral_large4_text")
        and getattr(text_cfg, "no_rope_layers", None) is not None
    ):
        return [
            i for i, v in enumerate(text_cfg.no_rope_layers[:n]) if v
        ], "no_rope_layers[i] truthy -> use_rope"
    if mt == "exaone4":
        if getattr(text_cfg, "sliding_window", None) is None:
            return list(range(n)), "sliding_window is None: every layer rotates"
        return [
            i for i, t in enumerate(layer_types) if t == "sliding_attention"
        ], "Exaone4Attention: rope only if sliding_window is None or layer is sliding_attention"
    cross = getattr(text_cfg, "cross_attention_layers", None)
    if mt == "mllama_text_model" and cross:
        # MllamaTextModel builds a cross-attention layer at these indices, whose attention
        # (MllamaTextCrossAttention.forward) is handed no position embeddings.
        return [
            i for i in range(n) if i not in set(cross)
        ], "cross_attention_layers attend to the image without RoPE"
    if layer_types is not None and any(
        t in ("linear_attention", "conv", "mamba") for t in layer_types
    ):
        return [
            i for i, t in enumerate(layer_types) if t in ("full_attention", "indexed_attention")
        ], "only attention layers apply rotary (linear_attention / conv layers have none)"
    return list(range(n)), "every attention layer rotates"


def call_rotary(rot, x, positions: list[int], layer_type):
    pos2 = torch.tensor([positions], dtype=torch.long)
    kwargs = {}
    if layer_type is not None and "layer_type" in inspect.signature(rot.forward).parameters:
        kwargs["layer_type"] = layer_type
    try:
        cos, sin = rot(x, pos2, **kwargs)
        shape = "2d"
    except Exception:
        pos3 = pos2[None].expand(
            3, 1, len(positions)
        )  # multimodal RoPE: same t/h/w index for text tokens
        cos, sin = rot(x, pos3, **kwargs)
        shape = "3d (t=h=w=position)"
    return cos[0], sin[0], shape


def compute(path: Path) -> dict:
    return compute_config(json.loads(path.read_text(encoding="utf-8")))


#: InternVL's remote configuration_internvl_chat.py builds its language model's config from
#: llm_config with the class named by llm_config["architectures"][0].
INTERNVL_LLM = {
    "LlamaForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    "Phi3ForCausalLM": "phi3",
    "Gemma2ForCausalLM": "gemma2",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "GptOssForCausalLM": "gpt_oss",
}
#: Remote-code language models whose rotary classes are copies of a transformers class, which
#: stands in for them here (InternLM2's modeling_internlm2.py: "Copied from
#: transformers.model.llama.modeling_llama.LlamaDynamicNTKScalingRotaryEmbedding").
REMOTE_STAND_IN = {"InternLM2ForCausalLM": "llama"}


def compute_config(raw: dict) -> dict:
    """transformers' reading of one config.json (a dict): see the module docstring."""
    model_type = raw.get("model_type")
    rec: dict = {"model_type": model_type}
    if model_type == "internvl_chat":  # remote code: its llm_config, by architecture
        llm = raw["llm_config"]
        architecture = llm["architectures"][0]
        if architecture in REMOTE_STAND_IN:
            rec["stand_in"] = (
                f"{architecture} is remote code: transformers' {REMOTE_STAND_IN[architecture]} "
                "classes stand in for its copies of them"
            )
        raw = {**llm, "model_type": INTERNVL_LLM.get(architecture) or REMOTE_STAND_IN[architecture]}
        model_type = raw["model_type"]
    if model_type not in CONFIG_MAPPING:
        raise KeyError(
            f"model_type {model_type!r} has no config class in this transformers (remote code only)"
        )
    cfg = CONFIG_MAPPING[model_type].from_dict(raw)  # as from_pretrained would, without the hub
    text = text_config_of(cfg)
    rec["text_model_type"] = getattr(text, "model_type", None)
    module = modeling_module(text)
    cls = rotary_class(module)
    rec["rotary_class"] = f"{module.__name__}.{cls.__name__}"
    rec["rope_parameters"] = json.loads(
        json.dumps(getattr(text, "rope_parameters", None), default=str)
    )
    try:
        head_dim = (
            getattr(text, "qk_rope_head_dim", None)
            or getattr(text, "head_dim", None)
            or text.hidden_size // text.num_attention_heads
        )
    except Exception as exc:  # Gemma 4: head_dim is per layer (per_layer_config)
        if type(exc).__name__ != "AmbiguousGlobalPerLayerAttributeError":
            raise
        head_dim = None
    rec["head_dim"] = None if head_dim is None else int(head_dim)  # qk_rope_head_dim for MLA
    rec["layout"], rec["layout_source"] = pair_layout(module, text)
    rec["rotating_layers"], rec["rotating_layers_rule"] = rotating_layers(model_type, text)
    rec["num_hidden_layers"] = int(text.num_hidden_layers)
    layer_types = getattr(text, "layer_types", None)
    rot = cls(config=text)
    per_type_buffers = any(hasattr(rot, f"{lt}_inv_freq") for lt in (layer_types or []))
    types = sorted(set(layer_types)) if (layer_types and per_type_buffers) else [None]
    rec["layer_types"] = sorted(set(layer_types)) if layer_types else None
    out_types = {}
    for lt in types:
        prefix = f"{lt}_" if lt is not None else ""
        inv = getattr(rot, f"{prefix}inv_freq")
        scaling = getattr(rot, f"{prefix}attention_scaling", getattr(rot, "attention_scaling", 1.0))
        inv0 = _floats(inv)
        x = torch.zeros(1, len(POSITIONS), 2 * len(inv0), dtype=torch.float32)
        entry = {
            "inv_freq": inv0,
            "attention_scaling": float(scaling),
            "rotary_dim": 2 * len(inv0),
        }
        try:
            cos, sin, pos_shape = call_rotary(rot, x, POSITIONS, lt)
        except ValueError:  # Llama 4's rotary class returns complex freqs_cis, not cos, sin
            pos_shape = None
        else:
            entry["positions"] = POSITIONS
            entry["position_ids"] = pos_shape
            entry["cos"] = [_floats(cos[i]) for i in range(len(POSITIONS))]
            entry["sin"] = [_floats(sin[i]) for i in range(len(POSITIONS))]
        inv_after = _floats(getattr(rot, f"{prefix}inv_freq"))
        if inv_after != inv0:
            entry["inv_freq_after_forward"] = inv_after
            entry["note"] = f"dynamic update: forward saw max position + 1 = {max(POSITIONS) + 1}"
        out_types[lt if lt is not None else "all"] = entry
    rec["per_layer_type"] = out_types
    rec["attention_softmax_scaling"] = attention_scaling_of(module, text, rec["rotating_layers"])
    if (
        isinstance(rec["rope_parameters"], dict)
        and "llama_4_scaling_beta" in rec["rope_parameters"]
    ):
        rec["note"] = (
            "llama_4_scaling_beta: the attention code also scales queries by a "
            "position-dependent factor (attention temperature); that is outside the rotary "
            "class and not in cos/sin here"
        )
    return rec


def attention_scaling_of(module, text_cfg, rotating: list[int]):
    """The softmax scale of the model's attention module, built on the meta device.

    DeepSeek, for one, multiplies it by mscale**2.
    """
    layer_cls = [
        getattr(module, n) for n in dir(module) if n.endswith("DecoderLayer") and "Vision" not in n
    ]
    if not layer_cls:
        return None
    idx = rotating[0] if rotating else 0
    try:
        with torch.device("meta"):
            layer = layer_cls[0](text_cfg, idx)
        attn = getattr(layer, "self_attn", None) or getattr(layer, "attention", None)
        value = getattr(attn, "scaling", None)
        return None if value is None else float(value)
    except Exception as exc:  # pragma: no cover - recorded, not fatal
        return f"not computed: {type(exc).__name__}: {exc}"


def main() -> int:
    results = {}
    for path in sorted(CORPUS.glob("*.json")):
        if path.name == "reference.json":
            continue
        try:
            results[path.name] = compute(path)
        except Exception as exc:  # record, do not hide
            results[path.name] = {
                "model_type": json.loads(path.read_text(encoding="utf-8")).get("model_type"),
                "error": f"{type(exc).__name__}: {exc}",
                "traceback_tail": traceback.format_exc().strip().splitlines()[-3:],
            }
    doc = {
        "generator": "benchmarks/hf_reference.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "positions": POSITIONS,
        "dtype": "float32",
        "notes": [
            "cos/sin are the rotary class's own forward outputs (already multiplied by "
            "attention_scaling),",
            "for one call holding all listed positions, so dynamic types see seq_len = max "
            "position + 1.",
            "rotary_dim = 2 * len(inv_freq); cos/sin have rotary_dim entries laid out as the "
            "model applies them.",
        ],
        "results": results,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    bad = [k for k, v in results.items() if "error" in v]
    print(f"{len(results) - len(bad)} computed, {len(bad)} failed: {bad}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
