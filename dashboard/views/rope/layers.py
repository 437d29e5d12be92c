"""The RoPE lab's reading of a config.json: what was read and from where (and what was not),
and the per-layer map, as transformers builds the model (pe_core.rope_config_sources,
pe_core.rope_layers)."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from urllib.parse import quote

import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, formatting, ui
from dashboard.caching import cached
from dashboard.figures import rotary


@dataclass(frozen=True)
class LayerRow:
    """One decoder layer of a configuration: its layer type and rotary encoding (None: the
    layer has no positional encoding)."""

    index: int
    layer_type: str | None
    rope: pe_core.RotaryEncoding | None


@cached
def layer_map(config_text: str) -> tuple[LayerRow, ...] | None:
    """Each layer of the configuration, as transformers builds it (pe_core.rope_layers);
    None when the configuration does not say how many layers it has, or cannot be read."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # shown with the chosen encoding
            layers = pe_core.rope_layers(config_text)
    except pe_core.InputError:
        return None
    return tuple(
        LayerRow(i, None if rope is None else rope.layer_type, rope)
        for i, rope in enumerate(layers)
    )


def layer_types(rows: tuple[LayerRow, ...] | None) -> tuple[str, ...]:
    """The layer types to choose between: those with RoPE, in order of first appearance, when
    their encodings differ; else the one whose encoding every rotating layer shares (or
    "full_attention" when the layers are not known)."""
    rotating = [row for row in rows or () if row.rope is not None]
    if not rotating:
        return ("full_attention",)
    kinds = tuple(dict.fromkeys(row.layer_type for row in rotating))
    if len({row.rope.signature for row in rotating}) == 1:
        return ("full_attention",) if "full_attention" in kinds else kinds[:1]
    return kinds


@cached
def config_sources(config_text: str, layer_type: str | None) -> pe_core.RopeConfigSources:
    """Where each value of the configuration's RoPE came from (pe_core.rope_config_sources)."""
    return pe_core.rope_config_sources(config_text, layer_type=layer_type)


def read_from(text: str, layer_type: str | None) -> None:
    """What was read from the config.json and from where; nothing dropped without a word."""
    found = config_sources(text, layer_type)
    if found.unused:
        # A code span shows its text as it is (no Markdown inside), once backticks are gone.
        names = ", ".join(f"`{key.replace('`', '')}`" for key in found.unused)
        st.warning(
            f"Not read (transformers does not use {'it' if len(found.unused) == 1 else 'them'} "
            f"for this model's RoPE): {names}.",
            icon=":material/visibility_off:",
        )
    for message in found.warnings:
        if "layer types with different RoPE" not in message:  # the layer choice says it
            st.caption(f":orange[transformers would warn: {formatting.escape_markdown(message)}.]")
    with st.expander("Where each value came from"):
        frame = pd.DataFrame(
            {
                "key": [s.key for s in found.used],
                "value": [json.dumps(s.value)[:80] for s in found.used],
                "from": [s.source for s in found.used],
            }
        )
        st.dataframe(frame, hide_index=True, width="stretch", height=ui.table_height(len(frame)))


def _layer_words(rope: pe_core.RotaryEncoding | None) -> str:
    if rope is None:
        return "no positional encoding"
    return (
        f"RoPE {rope.rope_type}, base {formatting.number_text(rope.base, grouping=True)}, "
        f"{rope.rotary_dim} of {rope.head_dim} columns rotate"
    )


def render(rows: tuple[LayerRow, ...], shown: pe_core.RotaryEncoding) -> None:
    """The per-layer map: which layers rotate, with which encoding."""
    n_rope = sum(row.rope is not None for row in rows)
    label = [row.layer_type if row.rope is not None else "no RoPE" for row in rows]
    hover = [
        f"layer {row.index}: {row.layer_type or 'full_attention'}, {_layer_words(row.rope)}"
        for row in rows
    ]
    fig = caching.figure(
        rotary.layer_strip,
        tuple(label),
        tuple(hover),
        formatting.counted(len(rows), "layer")
        + (
            f": {n_rope:,} with RoPE, {len(rows) - n_rope:,} without"
            if n_rope < len(rows)
            else ", all with RoPE"
        ),
    )
    ui.chart(fig, "rope_layer_map")
    distinct = {}
    for row in rows:
        key = row.layer_type if row.rope is not None else None
        distinct.setdefault(key, []).append(row.index)
    table = pd.DataFrame(
        [
            {
                "layer type": kind or "no RoPE",
                "layers": len(indices),
                "first layers": ", ".join(map(str, indices[:6]))
                + (", …" if len(indices) > 6 else ""),
                "encoding": _layer_words(rows[indices[0]].rope),
            }
            for kind, indices in distinct.items()
        ]
    )
    st.dataframe(table, hide_index=True, width="stretch")
    count = sum(row.rope is not None and row.layer_type == shown.layer_type for row in rows)
    st.caption(
        f"The charts below show the {shown.layer_type} layers' encoding ({count:,} of "
        f"{formatting.counted(len(rows), 'layer')})."
    )


@cached
def essentials(config_text: str) -> str | None:
    """The pasted config cut to the keys that set its RoPE (pe_core.rope_config_essentials),
    as compact JSON; None when it cannot be read."""
    try:
        kept = pe_core.rope_config_essentials(config_text)
    except pe_core.InputError:
        return None
    return json.dumps(kept, separators=(",", ":"))


def offer_short_link(config_text: str, key: str) -> None:
    """A button that keeps only the keys that set RoPE in the box bound to the URL under
    ``key``, when that makes the link shorter; the encodings stay the same (checked by the
    core)."""
    short = essentials(config_text)
    if short is None:
        return
    before, after = len(quote(config_text)), len(quote(short))
    if after >= 0.9 * before:
        return
    kept = len(json.loads(short))

    def keep_essentials() -> None:
        st.session_state[key] = short

    st.button(
        f"Keep only the {kept} keys that set RoPE: the same encodings, a link of "
        f"{after:,} characters for the config instead of {before:,}",
        on_click=keep_essentials,
        icon=":material/link:",
        key=f"{key}_short",
    )


@cached
def query_temperature(config_text: str) -> pe_core.QueryTemperature | str | None:
    """The attention temperature the config sets beside its RoPE (None: none), or why its keys
    cannot be read."""
    try:
        return pe_core.rope_query_temperature(config_text)
    except pe_core.InputError as error:
        return str(error)


def temperature_caption(config_text: str, rope: pe_core.RotaryEncoding) -> None:
    """Llama 4's and Ministral 3's factor on the queries, outside the rotary class, in numbers."""
    found = query_temperature(config_text)
    if found is None:
        return
    if isinstance(found, str):
        st.warning(f"This model's attention temperature cannot be read: {found}.")
        return
    beta_key, length_key = found.keys
    first = found.length - found.shift  # the first position whose factor is above 1
    shifted = f"(p + {found.shift})" if found.shift else "p"
    where = "with RoPE (these charts)" if found.layers == "rope" else "without RoPE"
    far = max(rope.target_length or 0, 4 * found.length)
    scale_first, scale_far = found.scale([first, far])
    st.caption(
        f"Outside the rotary class, this model's attention also multiplies its queries on its "
        f"layers {where} by 1 + β·ln(1 + ⌊{shifted} / L⌋), β = {found.beta:g} (`{beta_key}`), "
        f"L = {found.length:,} (`{length_key}`): 1 up to position {first - 1:,}, "
        f"{scale_first:.4g} from {first:,}, {scale_far:.4g} at {far:,}. Scores scale with it; "
        "cos and sin do not."
    )
