"""Check my GGUF, on the Check page: upload the first megabytes of a GGUF file (or paste what
gguf-dump prints), optionally with the config.json it was converted from, and get whether
llama.cpp rotates it as the config says, layer by layer (pe_core.check_gguf)."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

import pe_core
from dashboard import uploads
from dashboard.formatting import escape_markdown
from pe_core.rotary.gguf import NON_ROTARY_ARCHS, Origin

#: Characters accepted in each box: a gguf-dump output (a few hundred lines), a config.json.
MAX_CHARS = 200_000
#: Checks kept between reruns (shared by sessions: the result is frozen) and for how long.
CHECKED_ENTRIES = 4
CHECKED_SECONDS = 15 * 60

CUT_COMMAND = "head -c 20000000 model.gguf > model-head.gguf   # the metadata: first 20 MB"
DUMP_COMMAND = "gguf-dump model.gguf > dump.txt   # pip install gguf"


@st.cache_resource(max_entries=CHECKED_ENTRIES, ttl=CHECKED_SECONDS, show_spinner=False)
def checked(key: str, config: str | None, n_ctx: int | None, _data: bytes | None, _text: str):
    """``pe_core.check_gguf`` once per input (``key``: a hash of its bytes or text), config and
    context size, or the InputError it raised (the result is frozen: sessions share it)."""
    try:
        if _data is not None:
            meta = pe_core.read_gguf_bytes(_data, name="the file")
        else:
            meta = pe_core.parse_gguf_dump(_text)
        return pe_core.check_gguf(meta, config, n_ctx=n_ctx)
    except pe_core.InputError as error:
        return error


def render() -> None:
    arches = len(set(pe_core.LLAMA_CPP_ARCHS) - NON_ROTARY_ARCHS)
    st.markdown(
        "Does a GGUF file (llama.cpp, ollama, LM Studio, koboldcpp) rotate as the model it came "
        "from? Upload the **first megabytes** of the file (its metadata and RoPE tensors: the "
        "weights are not needed) or paste what `gguf-dump` prints, and add the config.json it "
        f"was converted from. The answer is {pe_core.LLAMA_CPP_VERSION}'s, whose table of "
        f"{arches} architectures with RoPE is read here: each layer's base, rotated columns, "
        "scaling, factor tensors and attention factor against transformers' reading of the "
        "config, with the key to fix and the command that fixes it. The same check runs in "
        "CI: `python -m pe_core check-gguf model.gguf --config config.json`."
    )
    st.code(f"{CUT_COMMAND}\n{DUMP_COMMAND}", language="bash")
    upload = st.file_uploader(
        f"GGUF file, or its first megabytes (at most {uploads.MAX_UPLOAD_MB} MB)",
        type=None,
        key="gguf_check_upload",
        max_upload_size=uploads.MAX_UPLOAD_MB,
    )
    dump_text = st.text_area(
        f"…or paste gguf-dump's output, llama.cpp's loader log or key = value lines (up to "
        f"{MAX_CHARS:,} characters)",
        key="gguf_check_dump",
        height=120,
    )
    config_text = st.text_area(
        f"config.json it was converted from (optional; up to {MAX_CHARS:,} characters)",
        key="gguf_check_config",
        height=100,
    )
    n_ctx = st.number_input(
        "llama.cpp's context size -c (0: the file's context_length)",
        min_value=0,
        max_value=1 << 24,
        value=0,
        step=1024,
        key="gguf_check_ctx",
        help="LongRoPE's long or short factors are chosen by it.",
    )
    for what, text in (("gguf-dump text", dump_text), ("config.json", config_text)):
        if len(text) > MAX_CHARS:
            st.error(
                f"The pasted {what} has {len(text):,} characters, more than the {MAX_CHARS:,} "
                "this box takes."
            )
            return
    config = config_text if config_text.strip() else None
    if upload is not None:
        data = upload.getvalue()
        if len(data) > uploads.MAX_BYTES:
            st.error(
                f"The file has {len(data):,} bytes, more than {uploads.MAX_BYTES:,}: upload its "
                "first megabytes (the command above)."
            )
            return
        what = escape_markdown(upload.name)
        key = "file " + hashlib.blake2b(data, digest_size=16).hexdigest()
        text = ""
    elif dump_text.strip():
        what, data, text = "the pasted metadata", None, dump_text
        key = "text " + hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    else:
        st.info("Upload a GGUF file's first megabytes or paste gguf-dump's output to check it.")
        return
    with st.spinner(f"Checking {what}…"):
        found = checked(key, config, int(n_ctx) or None, data, text)
    if isinstance(found, pe_core.InputError):
        st.error(f"Cannot check {what}: {escape_markdown(found)}.")
        return
    _verdict(found, what)
    _layers(found)


def _verdict(found, what: str) -> None:
    rope = found.rope
    st.caption(
        f"{what}: {found.architecture}, {len(rope.layers)} layers, run with -c "
        f"{rope.n_ctx:,} ({found.version})."
    )
    head = found.headline()
    if not found.has_config:
        st.info(escape_markdown(head))
    elif found.matches:
        st.success(escape_markdown(head))
    else:
        st.error(escape_markdown(head))
    for finding in found.file_findings:
        _finding(finding)
    unchecked = [f for f in found.findings if f.origin is Origin.INPUT]
    if unchecked:
        st.warning(
            "Not checked (the input does not hold it): "
            + "; ".join(escape_markdown(f"{f.key}: {f.title}") for f in unchecked)
        )
    if found.llama_cpp_findings:
        st.markdown("**llama.cpp itself** (not the file) differs from transformers:")
        for finding in found.llama_cpp_findings:
            _finding(finding)
    if not found.has_config:
        for line in found.description:
            st.markdown("- " + escape_markdown(line))
    for line in found.notes:
        if line:
            st.caption(escape_markdown(line))
    if found.missing:
        st.caption("Missing from the input: " + escape_markdown("; ".join(found.missing)))


def _layer_words(layers) -> str:
    if len(layers) == 1:
        return f"layer {layers[0]}"
    return "layers " + ", ".join(str(i) for i in layers)


def _finding(finding) -> None:
    layers = _layer_words(finding.layers)
    if finding.first_position is not None:
        where = f"off by more than 1e-3 rad from position **{finding.first_position:,}**"
    elif finding.error_at_context is None and finding.read_here:
        where = "the angles are the config's (the difference is their magnitude)"
    else:
        where = f"within 1e-3 rad over {finding.searched:,} positions"
    error = (
        f", {finding.error_at_context:.3g} rad at position {finding.searched - 1:,}"
        if finding.error_at_context is not None
        else ""
    )
    inert = "" if finding.read_here else " (not read by this llama.cpp: inert here)"
    st.markdown(
        f"- `{finding.key.replace('`', '')}`: {escape_markdown(finding.title)}{inert}. "
        f"File: {escape_markdown(finding.file_value)}; config: "
        f"{escape_markdown(finding.config_value)}. {layers.capitalize()}: {where}{error}."
    )
    if finding.fix.startswith("llama-cli"):
        st.code(finding.fix, language="bash", wrap_lines=True)
    else:
        st.caption("Fix: " + escape_markdown(finding.fix))


def _layers(found) -> None:
    rows = []
    for check in found.layers:
        layer = check.llama_cpp
        rows.append(
            {
                "layer": layer.index,
                "sliding window": "yes" if layer.is_swa else "",
                "RoPE (llama.cpp)": "yes" if layer.rotates else "no",
                "RoPE (config)": ""
                if not found.has_config
                else ("yes" if check.config is not None else "no"),
                "base": layer.freq_base,
                "columns": layer.n_dims,
                "scale": layer.freq_scale,
                "factors": layer.factors_tensor or "",
                "cos/sin ×": round(check.cos_sin_factor, 6),
                "max error (rad)": check.max_error if found.has_config else None,
            }
        )
    with st.expander("Layer by layer", expanded=False):
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
