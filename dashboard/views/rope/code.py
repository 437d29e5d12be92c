"""The RoPE lab's last section: code that reproduces the numbers on screen (pe_core and
PyTorch) and the inv_freq and cos/sin cache as NPY downloads, within one download's budget."""

from __future__ import annotations

import io
import pprint

import numpy as np
import streamlit as st

import pe_core
from dashboard import exports

#: Positions of the downloadable cos/sin cache (float32, 2 x rotary_dim columns each).
CACHE_POSITIONS = 8192


def snippets(
    config: dict, rope: pe_core.RotaryEncoding, layer_type: str | None = None
) -> tuple[str, str]:
    """Code that reproduces ``rope``'s inv_freq and attention factor: with pe_core, and with
    PyTorch (transformers' own functions on the model's own config class, or the plain formula
    for unscaled RoPE)."""
    literal = pprint.pformat(config, width=88, sort_dicts=False)
    layer_argument = f", layer_type={layer_type!r}" if layer_type else ""
    pe_core_code = (
        "import pe_core\n\n"
        f"config = {literal}  # or json.load(open('config.json'))\n"
        f"rope = pe_core.rope_from_config(config{layer_argument})\n"
        "inv_freq, attention_factor = rope.inv_freq, rope.attention_factor\n"
        "cos, sin = pe_core.rope_cos_sin(4096, rope)  # as Hugging Face's rotary embedding\n"
    )
    if rope.rope_type == "default":
        torch_code = (
            "import torch\n\n"
            f"dim, base = {rope.rotary_dim}, {rope.base!r}\n"
            "inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))\n"
            "attention_factor = 1.0\n"
        )
    elif isinstance(config.get("model_type"), str):
        # The model's own config class reads its keys (legacy spellings, defaults, nested
        # text_config, per-layer-type rope_parameters) as transformers does.
        init = f"ROPE_INIT_FUNCTIONS[{rope.rope_type!r}]"
        layer = f", layer_type={layer_type!r}" if layer_type else ""
        readable, why = _transformers_readable(config)
        readable = pprint.pformat(readable, width=88, sort_dicts=False)
        torch_code = (
            "# transformers >= 5, float32 (pe_core's rope.inv_freq_float32 is this, bit for bit\n"
            "# with torch's AVX2 CPU kernel)\n"
            f"{why}"
            "from transformers import AutoConfig\n"
            "from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS\n\n"
            f"config = AutoConfig.for_model(**{readable})\n"
            "text = config.get_text_config(decoder=True)\n"
            f"inv_freq, attention_factor = {init}(text, None{layer})\n"
        )
    else:
        # No model_type: LlamaConfig, with head_dim explicit (it knows neither
        # qk_rope_head_dim nor a head_dim other than hidden_size // num_attention_heads).
        with_head = pprint.pformat(
            {**config, "head_dim": rope.head_dim}, width=88, sort_dicts=False
        )
        torch_code = (
            "# transformers >= 5, float32 (pe_core's rope.inv_freq_float32 is this, bit for bit\n"
            "# with torch's AVX2 CPU kernel)\n"
            "from transformers import LlamaConfig\n"
            "from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS\n\n"
            f"config = LlamaConfig(**{with_head})\n"
            f"inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[{rope.rope_type!r}](config, None)\n"
        )
    return pe_core_code, torch_code


def _transformers_readable(config: dict) -> tuple[dict, str]:
    """The config that transformers' AutoConfig can build for a remote-code model, with a
    comment saying why it is not the pasted one: a wrapper's language model (InternVL's
    llm_config), under the model type whose classes stand in for remote code (InternLM2's copy
    of Llama's rotary classes); else the config itself and no comment."""
    notes = []
    wrapper = pe_core.MODEL_ROPES.get(config["model_type"])
    inner = config.get(wrapper.text_key) if wrapper is not None else None
    if wrapper is not None and wrapper.text_key != "text_config" and isinstance(inner, dict):
        notes.append(
            f"{config['model_type']} is remote code: the RoPE keys of its {wrapper.text_key}"
        )
        config = pe_core.rope_config_essentials(config)  # the llm_config's, checked equal
    model = pe_core.MODEL_ROPES.get(config.get("model_type")) if isinstance(config, dict) else None
    if model is not None and model.stand_in:
        notes.append(
            f"{config['model_type']} is remote code whose rotary classes are transformers' "
            f"{model.stand_in} ones"
        )
        config = {**config, "model_type": model.stand_in}
    return config, "".join(f"# {note}\n" for note in notes)


def render(text: str, rope: pe_core.RotaryEncoding, layer_type: str | None = None) -> None:
    st.subheader("Reproduce these numbers")
    code, torch_code = snippets(pe_core.load_json(text, name="config"), rope, layer_type)
    numpy_tab, torch_tab = st.tabs(["pe_core", "PyTorch"])
    numpy_tab.code(code, language="python")
    torch_tab.code(torch_code, language="python")
    left, right = st.columns(2)
    left.download_button(
        "inv_freq as NPY",
        data=lambda: _npy(rope.inv_freq),
        file_name=f"inv_freq_{rope.rope_type}.npy",
        mime="application/octet-stream",
        key="rope_inv_freq",
        on_click="ignore",
        icon=":material/download:",
    )
    # Within one download's size (a head of 16,384 columns would make a 1 GiB file).
    n_cache = exports.cos_sin_positions(CACHE_POSITIONS, rope)
    if n_cache:
        right.download_button(
            f"cos/sin cache ({n_cache:,} positions, {rope.layout} layout) as NPY",
            data=lambda: exports.cos_sin_npy(n_cache, rope),
            file_name=f"cos_sin_{rope.rope_type}.npy",
            mime="application/octet-stream",
            key="rope_cos_sin",
            on_click="ignore",
            icon=":material/download:",
        )
    if n_cache < CACHE_POSITIONS:
        full = 2 * CACHE_POSITIONS * rope.rotary_dim * 4
        right.caption(
            f"The cache of {CACHE_POSITIONS:,} positions would be a file of "
            f"{full / 2**20:,.0f} MiB, more than the {exports.MAX_DOWNLOAD_BYTES // 2**20} MiB "
            f"this app builds for one download; with the pe_core code above: "
            f"`np.save('cos_sin.npy', np.stack(pe_core.rope_cos_sin({CACHE_POSITIONS}, rope)))`."
        )


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()
