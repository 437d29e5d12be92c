"""RoPE lab: rotary encodings of real models, their context-extension methods, exactly.

The paper's frequencies, or a real model's, applied as a rotation to queries and keys:
every number here comes from :mod:`pe_core.rotary` (Hugging Face transformers 5.23 semantics
in float64).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, claims, formatting, params, sidebar, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.figures import charts, rotary
from dashboard.views.rope import code as rope_code
from dashboard.views.rope import layers as rope_layers
from dashboard.views.rope import layouts as rope_layouts
from dashboard.views.rope import precision as rope_precision
from dashboard.views.rope.pairs import encoding_key, pair_figure
from pe_core.families.rotary import query_and_key

#: Public configurations (the rotary part of each config.json). Sources, checked 2026-11-22:
#: - Llama 2 7B: meta-llama/Llama-2-7b-hf config.json (mirrors philschmid/Llama-2-7b-hf
#:   7efb34f; the original has no rope_theta key, so transformers' default 10000 applies).
#: - Llama 3 8B: meta-llama/Meta-Llama-3-8B config.json (rope_theta 500000, 8192 positions).
#: - Llama 3.1 8B: meta-llama/Llama-3.1-8B config.json (mirrors NbAiLab/nb-llama-3.1-8B,
#:   mlx-community/Meta-Llama-3.1-8B-bf16): rope_scaling llama3, factor 8, low 1, high 4,
#:   original 8192, 131072 positions.
#: - Qwen2.5 7B Instruct: config.json (rope_theta 1e6, 32768 positions, no rope_scaling) plus
#:   the YaRN block its model card ("Processing Long Texts") says to add: factor 4, original
#:   32768.
#: - gpt-oss-20b: openai/gpt-oss-20b config.json (head_dim 64, rope_theta 150000, yarn factor
#:   32, beta_fast 32, beta_slow 1, truncate false, original 4096, 131072 positions); the same
#:   as transformers 5.23's GptOssConfig defaults.
#: - DeepSeek-V3: deepseek-ai/DeepSeek-V3 config.json (qk_rope_head_dim 64, rope_theta 10000,
#:   yarn factor 40, mscale 1, mscale_all_dim 1, original 4096, 163840 positions).
#: Their inv_freq and attention factors equal transformers' own: tests/data/rope_hf_5_23.json.
#: Each keeps its model_type, so that what transformers knows of the model (pair layout,
#: DeepSeek's softmax factor) applies as it does to the whole file.
PRESETS: dict[str, dict] = {
    "Llama 2 7B": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": None,
    },
    "Llama 3 8B": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 8192,
        "rope_theta": 500000.0,
        "rope_scaling": None,
    },
    "Llama 3.1 8B (llama3 scaling)": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    },
    "Qwen2.5 7B Instruct (YaRN x4)": {
        "model_type": "qwen2",
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
    },
    "gpt-oss-20b (YaRN x32)": {
        "model_type": "gpt_oss",
        "hidden_size": 2880,
        "num_attention_heads": 64,
        "head_dim": 64,
        "max_position_embeddings": 131072,
        "rope_theta": 150000,
        "rope_scaling": {
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "rope_type": "yarn",
            "truncate": False,
        },
    },
    "DeepSeek-V3 (YaRN x40, mscale)": {
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "qk_rope_head_dim": 64,
        "max_position_embeddings": 163840,
        "rope_theta": 10000,
        "rope_scaling": {
            "beta_fast": 32,
            "beta_slow": 1,
            "factor": 40,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
            "type": "yarn",
        },
    },
}
SIDEBAR = "The sidebar's sinusoid"
PASTE = "Paste a config.json"
#: Offsets drawn in the score and bound charts.
CURVE_POINTS = 1200
MAX_CONFIG_CHARS = 20_000


SOURCE = params.Choice(
    "rope_model",
    "Configuration",
    SIDEBAR,
    options=(SIDEBAR, *PRESETS, PASTE),
    help="A real model's rotary configuration, the sidebar's sinusoid as RoPE, or your own "
    "config.json.",
)
#: The pasted config, kept in the link as typed, broken or not (issue 53): what is wrong with it
#: is said beside the box, where it can be fixed, not by emptying the box on the next visit.
#: The box takes as many characters as the page reads (its counter says the same limit as its
#: label); a longer paste is not taken by the browser, as the label says.
CONFIG_TEXT = params.Text(
    "rope_json",
    f"config.json (the whole file or its rotary keys; at most {MAX_CONFIG_CHARS:,} characters: "
    "a longer paste is not taken)",
    "",
    max_chars=MAX_CONFIG_CHARS,
    area=True,
)
SEQ_LEN = params.Number(
    "rope_seq",
    "Current sequence length (0: none)",
    0,
    low=0,
    high=10**7,
    help="Dynamic NTK and LongRoPE change with the sequence length, as in Hugging Face's "
    "functions; 0 passes none.",
)
VECTOR = params.Choice(
    "rope_qk",
    "query q and key κ",
    "ones",
    options=("ones", "random", "one pair"),
    kind="segmented",
    help="All-ones (as in the RoFormer paper), a random pair of vectors (seed 0), or q = k "
    "holding only the slowest rotating pair.",
)


def _layer_type_options(config: Config) -> tuple[str, ...]:
    return rope_layers.layer_types(rope_layers.layer_map(_config_text(config)))


def _default_layer_type(config: Config) -> str:
    options = _layer_type_options(config)
    return "full_attention" if "full_attention" in options else options[0]


LAYER_TYPE = params.Choice(
    "rope_layer",
    "Layer type",
    _default_layer_type,
    options=_layer_type_options,
    kind="segmented",
    help="The layers whose rotary encoding the charts show: this model's layer types use "
    "different ones.",
)
PARAMS = (SOURCE, CONFIG_TEXT, SEQ_LEN, LAYER_TYPE, VECTOR, rope_precision.PRECISION)


def _sidebar_config(config: Config) -> dict:
    head_dim = max(2, config.d_model - config.d_model % 2)
    return {
        "head_dim": head_dim,
        "rope_theta": config.base,
        "max_position_embeddings": config.n_positions,
    }


def _chosen_config(config: Config) -> dict | str:
    source = SOURCE.value(config)
    if source == SIDEBAR:
        return _sidebar_config(config)
    if source == PASTE:
        return CONFIG_TEXT.value(config)
    return PRESETS[source]


def _config_text(config: Config) -> str:
    """The chosen configuration as JSON text (a small hashable cache key)."""
    chosen = _chosen_config(config)
    return chosen if isinstance(chosen, str) else json.dumps(chosen)


@dataclass(frozen=True)
class RopeData:
    rope: pe_core.RotaryEncoding
    original: pe_core.RotaryEncoding  # plain RoPE of the same head, base and rotary part
    offsets: np.ndarray
    scores: dict
    bounds: dict


@cached
def rope_data(
    config_text: str, seq_len: int, vector: str, layer_type: str | None = None
) -> RopeData:
    """Everything the lab draws, for one configuration (as JSON text: a hashable key) and one
    of its layer types (None: its only one). The score and bound curves are computed once per
    encoding (:func:`score_curve`, :func:`bound_curve`): another configuration that rotates
    alike (the sidebar's at another L, a sequence length that changes nothing, another layer
    type with the same encoding) and another q and k share them."""
    rope = pe_core.rope_from_config(config_text, layer_type=layer_type, seq_len=seq_len or None)
    if rope.head_dim > sidebar.MAX_D_MODEL:
        # Its charts, tables and downloads grow with the head: bounded as the sidebar's d_model.
        raise pe_core.InputError(
            f"a head of {rope.head_dim:,} columns is wider than the {sidebar.MAX_D_MODEL:,} this "
            "lab draws (the sidebar's widest d_model); pe_core.rope_from_config(config) computes "
            "its frequencies in Python"
        )
    original = rope.unscaled()
    reach = max(rope.target_length or 0, rope.training_length or 0, 4096)
    if rope.inv_freq.tolist() == original.inv_freq.tolist() and rope.attention_factor == 1:
        versions = {"no scaling": rope}
    else:
        versions = {"before scaling": original, "after scaling": rope}
    shown = encoding_key(rope)
    scores = {
        name: score_curve(encoding_key(r), reach, vector, shown, r, rope)
        for name, r in versions.items()
    }
    bounds = {name: bound_curve(encoding_key(r), reach, r) for name, r in versions.items()}
    return RopeData(rope, original, score_offsets(reach), scores, bounds)


def score_offsets(reach: int) -> np.ndarray:
    """The offsets of the score and bound charts, for positions up to ``reach``.

    Log-spaced: the decay reads on a log axis, and a linear sample of a curve that oscillates
    every few positions would only show its aliasing.
    """
    return np.unique(np.round(np.geomspace(1, min(1.25 * reach, 10**7), CURVE_POINTS)))


@cached
def score_curve(
    key: str,
    reach: int,
    vector: str,
    shown_key: str,
    _rope: pe_core.RotaryEncoding,
    _shown: pe_core.RotaryEncoding,
) -> np.ndarray:
    """q·k after rotation by ``_rope`` at :func:`score_offsets` of ``reach`` (pe_core.rope_scores),
    for the q and k ``vector`` of the encoding on screen, ``_shown`` (its "one pair" is the
    slowest pair of ``_shown``, the same q and k before and after scaling). ``key`` and
    ``shown_key`` are their :func:`encoding_key`: everything the scores read of them."""
    q, k = query_and_key(_shown, vector)
    return pe_core.rope_scores(score_offsets(reach), _rope, q, k)


@cached
def bound_curve(key: str, reach: int, _rope: pe_core.RotaryEncoding) -> np.ndarray:
    """RoFormer's relative upper bound at :func:`score_offsets` of ``reach``
    (pe_core.rope_decay_bound); ``key`` is ``_rope``'s :func:`encoding_key`."""
    return pe_core.rope_decay_bound(score_offsets(reach), _rope)


def SHARED(value) -> tuple[str, ...]:
    """The sidebar's positions, d_model and base: read only when they make the head."""
    return ("L", "d", "base") if value(SOURCE) == SIDEBAR else ()


def subtitle(config: Config) -> str:
    """The page's one-line subtitle: whose rotary encoding is on screen."""
    source = SOURCE.value(config)
    if source == SIDEBAR:
        head_dim = _sidebar_config(config)["head_dim"]
        return (
            f"Rotary position embeddings on {claims.head_width(config.d_model, head_dim)}, base "
            f"{config.base_text}, trained on {formatting.counted(config.n_positions, 'position')} "
            "(the sidebar's parameters): the paper's frequencies base^(−2i/head_dim), applied "
            "as a rotation."
        )
    if source == PASTE:
        return "Rotary position embeddings as your config.json sets them, layer by layer."
    return f"Rotary position embeddings of {source}, as its config.json sets them, layer by layer."


def render(config: Config) -> None:
    ui.explain(
        "Rotary position embeddings (RoPE) use the sinusoid's frequencies "
        "ω_i = base^(−2i/d_head) differently: instead of adding sin and cos to the embedding, "
        "they rotate each pair of the query q and of the key κ by the angle k·ω_i at their "
        "position k. The score q·κ then depends only on the offset δ between the two "
        "positions. R(k) turns each pair anticlockwise; the Relative position view's M(δ) turns "
        "the sinusoid's (sin, cos) pairs clockwise only because the sinusoid writes sin first: "
        "with the two coordinates swapped, M(δ) is R(δ), the same rotation. Context-extension "
        "methods change the frequencies: linear interpolation "
        "slows every pair, NTK raises the base, YaRN and Llama 3 leave fast pairs alone, slow "
        "the pairs that never completed a turn in training, and ramp in between.",
        r"\begin{aligned}\mathrm{score}(k{+}\delta, k) &= \langle R(k{+}\delta)\,q,\; "
        r"R(k)\,\kappa \rangle = \langle q,\; R(-\delta)\,\kappa \rangle \\ R(k) &= "
        r"\mathrm{diag}_i \begin{pmatrix}\cos k\omega_i & -\sin k\omega_i\\ "
        r"\sin k\omega_i & \cos k\omega_i\end{pmatrix}\end{aligned}",
    )
    left, right = st.columns([2, 1])
    SOURCE.widget(config, left)
    SEQ_LEN.widget(config, right)
    if SOURCE.value(config) == PASTE:
        CONFIG_TEXT.widget(config, height=160)
        if not CONFIG_TEXT.value(config).strip():
            st.info(
                "Paste a model's config.json (or just its rope keys) to see its rotary encoding."
            )
            return
    text = _config_text(config)
    rows = rope_layers.layer_map(text)
    layer_types = rope_layers.layer_types(rows)
    layer_type = None
    if len(layer_types) > 1:
        LAYER_TYPE.widget(config)
        layer_type = LAYER_TYPE.value(config)
    try:
        data = rope_data(
            text,
            SEQ_LEN.value(config),
            VECTOR.value(config),
            layer_type,
        )
    except pe_core.InputError as error:
        st.warning(f"This configuration cannot be used: {error}")
        return
    _summary(config, data.rope)
    rope_layers.temperature_caption(text, data.rope)
    if SOURCE.value(config) != SIDEBAR:
        rope_layers.read_from(text, data.rope.layer_type)
    if SOURCE.value(config) == PASTE:
        rope_layers.offer_short_link(text, CONFIG_TEXT.key)
    if rows is not None and (len(layer_types) > 1 or any(row.rope is None for row in rows)):
        # Layers that differ: which rotate, and with which encoding.
        rope_layers.render(rows, data.rope)
    chosen = ui.selected_whole_x(PAIRS_KEY, data.rope.n_pairs, shown=data.rope)
    _pairs(data.rope, chosen)
    _scores(config, data)
    rope_layouts.render(data.rope, chosen)
    rope_precision.render(config, data.rope)
    rope_code.render(text, data.rope, layer_type)


def _summary(config: Config, rope: pe_core.RotaryEncoding) -> None:
    columns = st.columns(4)
    columns[0].metric("rope_type", rope.rope_type)
    columns[1].metric(
        "Rotary columns",
        f"{rope.rotary_dim} of {rope.head_dim}",
        help="head_dim x partial_rotary_factor; the other columns pass through unrotated.",
    )
    base = formatting.number_text(rope.base, grouping=True)
    if rope.effective_base != rope.base:
        base += f" → {rope.effective_base:,.6g}"
    columns[2].metric("Base (rope_theta)", base)
    columns[3].metric(
        "Attention factor",
        f"{rope.attention_factor:.6g}",
        help="Multiplies cos and sin (Hugging Face's attention_scaling): scores scale by its "
        "square.",
    )
    if SEQ_LEN.value(config):
        st.caption(claims.sequence_length(rope, SEQ_LEN.value(config)))
    if rope.softmax_factor != 1:
        st.caption(
            f"Outside the rotary class, this model's attention also multiplies its softmax "
            f"scale by {rope.softmax_factor:.6g} (DeepSeek's mscale², from mscale_all_dim): "
            f"scores scale by {rope.attention_factor:.6g}² × {rope.softmax_factor:.6g} = "
            f"{rope.attention_factor**2 * rope.softmax_factor:.6g} in all."
        )


#: The wavelength chart of the pairs: a pair clicked there is described under it and its
#: columns are shaded in the layouts chart.
PAIRS_KEY = "rope_pairs"


def _pairs(rope: pe_core.RotaryEncoding, chosen: int | None) -> None:
    st.subheader("Each rotary pair, before and after scaling")
    band = rope.band
    counts = ", ".join(
        f"{int(np.sum(band == b)):,} {b}" for b in rotary.BAND_COLOURS if np.any(band == b)
    )
    st.caption(
        f"{formatting.counted(rope.n_pairs, 'pair')}: {counts}. A pair whose wavelength "
        "exceeds the training length "
        "never completed a turn in training; the methods slow those down so that longer "
        "contexts stay within the angles the model has seen."
    )
    factors = rope.parameters.get("factors_used")
    if factors is not None:
        # LongRoPE: one factor per pair, from one of two lists chosen by the sequence length.
        training = rope.training_length
        other = "long_factor" if factors == "short_factor" else "short_factor"
        when = (
            f"a current sequence length above {training:,} positions"
            if other == "long_factor"
            else f"one of at most {training:,} positions"
        )
        st.caption(
            f"LongRoPE divides each pair's frequency by its own factor: drawn here, the "
            f"config's `{factors}` list; transformers uses `{other}` for {when} (set above)."
        )
    ui.chart(caching.figure(pair_figure, rope), PAIRS_KEY, select=True)
    if chosen is None:
        st.caption("Click a pair's marker to see its numbers and its columns in the head.")
    else:
        st.caption(_chosen_words(rope, chosen))
    with np.errstate(divide="ignore"):
        table = pd.DataFrame(
            {
                "pair i": np.arange(rope.n_pairs),
                "ω before": rope.original_inv_freq,
                "ω after": rope.inv_freq,
                "λ before": rope.original_wavelengths,
                "λ after": rope.wavelengths,
                "λ after / before": rope.scale,
                "band": band,
            }
        )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=ui.table_height(len(table), most=300),
        column_config={
            name: st.column_config.NumberColumn(format="%.6g")
            for name in ("ω before", "ω after", "λ before", "λ after", "λ after / before")
        },
    )


def _chosen_words(rope: pe_core.RotaryEncoding, pair: int) -> str:
    """The pair clicked on the wavelength chart, in numbers, and where its columns are."""
    halves, interleaved = rope_layouts.pair_columns(rope, pair)
    words = (
        f"Pair {pair} ({rope.band[pair]}), clicked: ω {rope.original_inv_freq[pair]:.6g} → "
        f"{rope.inv_freq[pair]:.6g}, λ {rope.original_wavelengths[pair]:,.6g} → "
        f"{rope.wavelengths[pair]:,.6g} positions"
    )
    columns = (
        f"columns {halves[0]} and {halves[1]} of the head in the halves layout, "
        f"{interleaved[0]} and {interleaved[1]} in the interleaved one"
    )
    scale = float(rope.scale[pair])
    if rope.inv_freq[pair] == 0:
        words += f". It does not rotate: its {columns} pass through unchanged"
    else:
        if scale > 1:
            words += f" (slowed by {scale:.6g})"
        elif scale < 1:
            words += f" (sped up by {1 / scale:.6g})"
        words += f". It rotates {columns}"
    return words + (
        " (shaded in the layouts chart below where shown). Double-click an empty spot of the "
        "chart to clear."
    )


def _scores(config: Config, data: RopeData) -> None:
    st.subheader("Score against offset")
    VECTOR.widget(config)
    left, right = st.columns(2)
    with left:
        ui.chart(
            caching.figure_of(
                charts.curves,
                data.offsets,
                data.scores,
                title="q·κ after rotation",
                subtitle=f"q, κ: {VECTOR.value(config)}; attention factor included",
                x_title="offset δ between query and key (positions)",
                y_title="score",
                log_x=True,
            ),
            "rope_scores",
        )
    with right:
        ui.chart(
            caching.figure_of(
                charts.curves,
                data.offsets,
                data.bounds,
                title="RoFormer's relative upper bound",
                subtitle="(1/n) Σ_j |S_j|, S_j = Σ_(i<j) exp(i δ ω_i) (Su et al., §3.4.3)",
                x_title="offset m − n (positions)",
                y_title="relative upper bound",
                log_x=True,
            ),
            "rope_bound",
        )
