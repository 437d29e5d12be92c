"""Distance: how each positional family shapes the attention score as query and key move apart,
side by side; ALiBi's slopes, T5's buckets, and the multi-axis rotary ids of vision-language
models. Every number comes from :mod:`pe_core`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.figures import charts, rotary
from dashboard.figures.base import HALF_LEGEND_WIDTH, LEGEND_WIDTH
from dashboard.formatting import counted

#: Distances drawn: 0 .. min(L - 1, MAX_DISTANCE), every one (the sinusoid and RoPE oscillate
#: every few positions: a sparser sample would draw its aliasing).
MAX_DISTANCE = 4096
#: Values of the learned table drawn at most (its rows beyond are left out, and the chart says
#: so).
LEARNED_VALUES = 2**22
#: Tokens listed in the multi-axis table.
TABLE_TOKENS = 2000

#: The families drawn on the common axis (those with a score before training), in order; each
#: is a :class:`pe_core.Family`, which knows its name, its note and its score.
DRAWN = tuple(f for f in pe_core.FAMILIES.values() if f.scores is not None)
FAMILIES = tuple(f.name for f in DRAWN)
BY_NAME = {f.name: f for f in DRAWN}
#: How the rotary pairs are shared among the axes: the Qwen2-VL and Qwen3-VL language models'
#: class defaults (their model entries: sections, interleaving, base; head_dim 128), and
#: Qwen2-VL's vision encoder (1280 / 16 heads = 80, VisionRotaryEmbedding's theta 10,000).
_QWEN2_VL, _QWEN3_VL = pe_core.MODEL_ROPES["qwen2_vl"], pe_core.MODEL_ROPES["qwen3_vl"]
LAYOUTS = {
    "blocked (Qwen2-VL)": {"model": _QWEN2_VL},
    "interleaved (Qwen3-VL)": {"model": _QWEN3_VL},
    "axial 2-D (Qwen2-VL's vision encoder)": {"head_dim": 80, "base": 10_000.0},
}
MROPE_HEAD_DIM = 128

SHOWN = params.Multi(
    "dist_fam",
    "Families",
    list(FAMILIES),
    options=FAMILIES,
    convert=str,
    help="The families drawn in the comparison.",
)
#: The families' own parameters (their defaults, options and help drive the widgets below).
_VECTORS = next(p for p in pe_core.FAMILIES["rope"].parameters if p.name == "vectors")
_T5 = {p.name: p for p in pe_core.FAMILIES["t5"].parameters}
VECTOR = params.Choice(
    "dist_qk",
    "q and k of RoPE",
    _VECTORS.default,
    options=_VECTORS.options,
    kind="segmented",
    help=f"As in the RoPE lab: {_VECTORS.help.removeprefix('q and k: ')}.",
)
#: The widgets that set a family parameter of that name (the families' other parameters keep
#: their defaults).
FAMILY_WIDGETS = {"vectors": VECTOR}
HEADS = params.Number("alibi_heads", "ALiBi heads", 8, low=1, high=256)
BUCKETS = params.Number(
    "t5_buckets",
    "T5 buckets",
    _T5["num_buckets"].default,
    low=2,
    high=1024,
    help=f"T5's num_buckets: {_T5['num_buckets'].help}.",
)
MAX_T5_DISTANCE = params.Number(
    "t5_max",
    "T5 max_distance",
    _T5["max_distance"].default,
    low=2,
    high=100_000,
    help=f"T5's max_distance: {_T5['max_distance'].help}.",
)
BIDIRECTIONAL = params.Toggle(
    "t5_bidir",
    "Bidirectional (encoder)",
    _T5["bidirectional"].default,
    help="An encoder's buckets tell keys before the query from keys after it; a decoder's "
    "put every later key in bucket 0.",
)
TEXT_BEFORE = params.Number("mm_text", "Text tokens before", 3, low=0, high=10_000)
FRAMES = params.Number("mm_t", "Frames T (1: an image)", 1, low=1, high=16)
PATCHES_H = params.Number("mm_h", "Patch rows H", 8, low=2, high=64, step=2)
PATCHES_W = params.Number("mm_w", "Patch columns W", 12, low=2, high=64, step=2)
TEXT_AFTER = params.Number("mm_after", "Text tokens after", 4, low=0, high=10_000)
LAYOUT = params.Choice(
    "mm_layout",
    "Pairs per axis",
    "blocked (Qwen2-VL)",
    options=tuple(LAYOUTS),
    kind="segmented",
)
PARAMS = (
    SHOWN,
    VECTOR,
    HEADS,
    BUCKETS,
    MAX_T5_DISTANCE,
    BIDIRECTIONAL,
    TEXT_BEFORE,
    FRAMES,
    PATCHES_H,
    PATCHES_W,
    TEXT_AFTER,
    LAYOUT,
)


@dataclass(frozen=True)
class Comparison:
    distances: np.ndarray
    curves: dict  # family name -> score(d) - score(0), scaled to [-1, 1]
    rows: dict  # family name -> the distances drawn (fewer for a family that holds a table)


def _scaled(change: np.ndarray) -> np.ndarray:
    largest = float(np.max(np.abs(change))) if change.size else 0.0
    return change / largest if largest > 0 else change


def _settings(config: Config) -> tuple:
    """The family parameters this view's widgets set, as ``(name, value)`` pairs (hashable, for
    the cache)."""
    return tuple((name, widget.value(config)) for name, widget in FAMILY_WIDGETS.items())


def _parameters(family: pe_core.Family, settings: tuple) -> dict:
    """The settings that are parameters of ``family`` (the others keep their defaults)."""
    declared = {p.name for p in family.parameters}
    return {name: value for name, value in settings if name in declared}


def drawn_config(config: Config) -> Config:
    """``config`` with L cut to the distances drawn (0 .. ``MAX_DISTANCE``): the comparison
    depends on nothing else of L, so every L past the cut shares one cached computation."""
    return dataclasses.replace(config, n_positions=min(config.n_positions, MAX_DISTANCE + 1))


@cached
def comparison(config: Config, settings: tuple) -> Comparison:
    """Every family's score against the distance d = query - key, from 0 to the largest shown
    (called with :func:`drawn_config`, so that L past ``MAX_DISTANCE`` costs nothing new)."""
    n = min(config.n_positions, MAX_DISTANCE + 1)
    curves, rows = {}, {}
    for family in DRAWN:
        # A family that holds an (n, d_model) table is drawn for the distances it fits.
        drawn = max(2, min(n, LEARNED_VALUES // config.d_model)) if family.holds_table else n
        score = family.score(drawn, config.bank, base=config.base, **_parameters(family, settings))
        curves[family.name] = np.full(n, np.nan)  # distances beyond those drawn: no value
        curves[family.name][:drawn] = _scaled(score - score[0])[:n]
        rows[family.name] = drawn
    return Comparison(np.arange(n), curves, rows)


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return (
        "How each family makes the score change with the distance between query and key: "
        f"{config.summary}."
    )


def render(config: Config) -> None:
    ui.explain(
        "Attention turns scores q·κ (query q, key κ) into weights with a softmax, which ignores "
        "a constant added "
        "to all the scores of one query. So what a positional family does to attention is how "
        "it makes the score change as the key moves away from the query. Added sinusoids and "
        "learned tables put the position into the token's vector; RoPE rotates q and κ so "
        "that only the distance enters the score; ALiBi and T5 add a bias that depends on the "
        "distance alone; NoPE adds nothing and leaves order to the causal mask. Here δ is the "
        "distance: the query's position minus the key's.",
        # One line each: on one line it was cut at the right of a 390-pixel phone.
        r"\begin{gathered}\mathrm{softmax}_{\kappa}\!\left(\frac{q\cdot\kappa}"
        r"{\sqrt{d_{\mathrm{head}}}} + b(\delta)\right)\\ b_{\mathrm{ALiBi}}(\delta) = -m_h\,\delta"
        r" \\ b_{\mathrm{T5}}(\delta) = \beta_h[\mathrm{bucket}(\delta)]\end{gathered}",
    )
    _comparison(config)
    _alibi(config)
    _t5(config)
    _multi_axis(config)


def _comparison(config: Config) -> None:
    st.subheader("The score against the distance, every family")
    left, right = st.columns([3, 2])
    SHOWN.widget(config, left)
    VECTOR.widget(config, right)
    shown = SHOWN.value(config)
    settings = _settings(config)
    drawn = drawn_config(config)
    data = comparison(drawn, settings)
    largest = int(data.distances[-1])
    ui.chart(
        caching.figure(_comparison_figure, drawn, settings, tuple(shown)),
        "distance_families",
    )
    families = [BY_NAME[name] for name in shown]
    notes = [f"- **{family.name}**: {family.note}" for family in families]
    for family in families:
        fact = family.coincidence
        if (
            fact is not None
            and pe_core.FAMILIES[fact.other].name in shown
            and all(_parameters(family, settings).get(k) == v for k, v in fact.when.items())
            and np.allclose(
                data.curves[pe_core.FAMILIES[fact.other].name],
                data.curves[family.name],
                rtol=0,
                atol=1e-9,
            )
        ):
            notes.append(f"- {fact.text}")
    for family in families:
        if family.holds_table and data.rows[family.name] < data.distances.size:
            rows = data.rows[family.name]
            notes.append(
                f"- The {family.key} table is drawn for the first {rows:,} distances "
                f"({counted(rows, 'row')} of {counted(config.d_model, 'value')})."
            )
    undrawn = " ".join(f.note for f in pe_core.FAMILIES.values() if f.scores is None)
    st.markdown(
        f"Each curve is score(δ) − score(0), divided by its largest magnitude over the "
        f"distances 0 to {largest:,} (L − 1"
        + (f", at most {MAX_DISTANCE:,}" if config.n_positions - 1 > MAX_DISTANCE else "")
        + "), so that the shapes compare; 0 means scored like the query's own position. "
        + undrawn
        + "\n"
        + "\n".join(notes)
    )


def _comparison_figure(config: Config, settings: tuple, shown: tuple) -> object:
    data = comparison(config, settings)
    return charts.curves(
        data.distances,
        {name: data.curves[name] for name in shown},
        title="How the score changes with distance",
        subtitle=f"d_model {config.d_model:,}, base {config.base_text}; "
        f"RoPE q, k: {dict(settings)['vectors']}",
        x_title="distance δ = query position − key position",
        y_title="score(δ) − score(0), scaled",
        height=420,
    )


def _alibi(config: Config) -> None:
    st.subheader("ALiBi: one slope per head")
    HEADS.widget(config, st.columns(3)[0])
    n_heads = HEADS.value(config)
    power = n_heads & (n_heads - 1) == 0
    st.caption(
        f"{counted(n_heads, 'head')}: slopes 2^(−8h/{n_heads}) for h = 1 … {n_heads}"
        if power
        else f"{n_heads} heads (not a power of two): the {2 ** int(np.log2(n_heads))} slopes of "
        f"{2 ** int(np.log2(n_heads))} heads, then {n_heads - 2 ** int(np.log2(n_heads))} of the "
        f"slopes of {2 ** (int(np.log2(n_heads)) + 1)} heads that lie between them (the "
        "reference code's rule)."
    )
    ui.chart(
        caching.figure(_slopes_figure, n_heads),
        "distance_alibi",
    )


def _slopes_figure(n_heads: int) -> object:
    slopes = pe_core.alibi_slopes(n_heads)
    return charts.bars(
        np.arange(1, n_heads + 1),
        slopes,
        title="Slope m of each head",
        subtitle="bias −m·δ on a key δ positions back (Press et al., get_slopes)",
        x_title="head h",
        y_title="slope m",
        log_y=True,
        hover="head %{x}: m = %{y:.6g}",
    )


def _t5(config: Config) -> None:
    st.subheader("T5: the bucket of each relative position")
    columns = st.columns(3)
    BUCKETS.widget(config, columns[0])
    MAX_T5_DISTANCE.widget(config, columns[1])
    with columns[2]:
        BIDIRECTIONAL.widget(config)
    n_buckets, max_distance = BUCKETS.value(config), MAX_T5_DISTANCE.value(config)
    bidirectional = BIDIRECTIONAL.value(config)
    try:
        relative, buckets = t5_buckets(n_buckets, max_distance, bidirectional)
    except pe_core.InputError as error:
        st.warning(f"These buckets cannot be computed: {error}")
        return
    exact = (n_buckets // 2 if bidirectional else n_buckets) // 2
    past = buckets[relative <= 0][::-1]  # by growing distance back
    last = int(past[-1])
    reached = int(np.argmax(past == last))  # the first distance in the last bucket
    after = (
        f"keys after the query use buckets of their own, the last one {buckets[-1]}."
        if bidirectional
        else "every key after the query shares bucket 0 with the query itself."
    )
    st.caption(
        f"Distances below {exact} have a bucket each; then the buckets widen "
        f"logarithmically, and every key {reached:,} or more positions back shares the last "
        f"one, {last} (max_distance {max_distance:,} sets how fast they widen); {after}"
    )
    ui.chart(
        caching.figure(_buckets_figure, n_buckets, max_distance, bidirectional),
        "distance_t5",
    )


@cached
def t5_buckets(n_buckets: int, max_distance: int, bidirectional: bool):
    reach = int(min(max(200, 1.5 * max_distance), 100_000))
    relative = np.arange(-reach, reach + 1)
    return relative, pe_core.t5_relative_buckets(
        relative, bidirectional=bidirectional, num_buckets=n_buckets, max_distance=max_distance
    )


def _buckets_figure(n_buckets: int, max_distance: int, bidirectional: bool) -> object:
    relative, buckets = t5_buckets(n_buckets, max_distance, bidirectional)
    return charts.curves(
        relative,
        {"bucket": buckets},
        title="Bucket of each key − query offset",
        subtitle=f"{n_buckets} buckets, max_distance {max_distance:,}, "
        + ("bidirectional" if bidirectional else "causal"),
        x_title="key position − query position (T5's relative_position)",
        y_title="bucket",
        steps=True,
    )


def _multi_axis(config: Config) -> None:
    st.subheader("Multi-axis RoPE: position ids of text, images and video")
    columns = st.columns(5)
    for column, param in zip(
        columns, (TEXT_BEFORE, FRAMES, PATCHES_H, PATCHES_W, TEXT_AFTER), strict=True
    ):
        param.widget(config, column)
    LAYOUT.widget(config)
    segments = _segments(config)
    try:
        ids = multi_axis_ids(segments)
    except pe_core.InputError as error:
        st.warning(f"This sequence cannot be built: {error}")
        ui.chart(caching.figure(_axes_figure, LAYOUT.value(config)), "distance_mrope_pairs")
        return
    frames, rows, cols = FRAMES.value(config), PATCHES_H.value(config), PATCHES_W.value(config)
    before, _, after = segments
    parts = [
        *([counted(before - 1, "text token")] if before > 1 else []),
        "<|vision_start|>",
        f"{frames} × {rows // 2} × {cols // 2} vision tokens ({frames} × {rows} × {cols} patches "
        "merged 2 × 2)",
        "<|vision_end|>",
        *([counted(after - 1, "text token")] if after > 1 else []),
    ]
    st.caption(
        f"{counted(ids.shape[1], 'token')}: {', '.join(parts)}. "
        "Text tokens carry one id on all three axes; vision tokens their frame, row and "
        "column, from the id where the vision block starts (Hugging Face transformers 5.23's "
        "get_rope_index)."
        + (
            " The vision encoder's axial RoPE (right) is another attention: it turns by each "
            "patch's row and column within its image, before the 2 × 2 merge, not by these ids."
            if "head_dim" in LAYOUTS[LAYOUT.value(config)]
            else ""
        )
    )
    left, right = st.columns(2)
    with left:
        ui.chart(caching.figure(_ids_figure, segments), "distance_mrope_ids")
    with right:
        ui.chart(caching.figure(_axes_figure, LAYOUT.value(config), True), "distance_mrope_pairs")
    shown = ids[:, :TABLE_TOKENS]
    st.dataframe(
        pd.DataFrame(
            {
                "token": np.arange(shown.shape[1]),
                "kind": _kinds(segments)[:TABLE_TOKENS],
                "temporal": shown[0],
                "height": shown[1],
                "width": shown[2],
            }
        ),
        hide_index=True,
        width="stretch",
        height=ui.table_height(shown.shape[1], most=280),
    )


def _segments(config: Config) -> tuple:
    frames, rows, cols = FRAMES.value(config), PATCHES_H.value(config), PATCHES_W.value(config)
    before, after = TEXT_BEFORE.value(config) + 1, TEXT_AFTER.value(config) + 1
    return (before, (frames, rows, cols), after)


def _kinds(segments: tuple) -> list[str]:
    before, (frames, rows, cols), after = segments
    vision = "video" if frames > 1 else "image"
    return (
        ["text"] * (before - 1)
        + ["<|vision_start|>"]
        + [vision] * (frames * (rows // 2) * (cols // 2))
        + ["<|vision_end|>"]
        + ["text"] * (after - 1)
    )


@cached
def multi_axis_ids(segments: tuple) -> np.ndarray:
    return pe_core.mrope_position_ids(list(segments), spatial_merge_size=2)


def _ids_figure(segments: tuple) -> object:
    ids = multi_axis_ids(segments)
    return charts.curves(
        np.arange(ids.shape[1]),
        dict(zip(pe_core.rotary.mrope.AXES, ids, strict=True)),
        title="Position id of each token, per axis",
        subtitle="Qwen2-VL's M-RoPE, spatial_merge_size 2",
        x_title="token",
        y_title="position id",
        steps=True,
    )


def _axes_figure(layout: str, half: bool = False) -> object:
    """Which axis turns each pair of ``layout``; ``half``: drawn in one of two columns."""
    chosen = LAYOUTS[layout]
    if "head_dim" in chosen:  # the vision encoder's 2-D RoPE: row and column, same frequencies
        base, head_dim = chosen["base"], chosen["head_dim"]
        inv_freq, axes = pe_core.axial_rope_frequencies(head_dim, base=base)
        details = "row and column, each over half the pairs"
    else:
        model = chosen["model"]
        base, head_dim = model.default_theta, MROPE_HEAD_DIM
        inv_freq = pe_core.rope_frequencies(head_dim, base=base).inv_freq
        axes = pe_core.mrope_axes(
            inv_freq.size, model.mrope.sections, interleaved=model.mrope.interleaved
        )
        details = f"mrope_section {list(model.mrope.sections)}"
    return rotary.pairs_by_axis(
        2 * np.pi / inv_freq,
        axes,
        pe_core.rotary.mrope.AXES,
        title="Which axis turns each pair",
        subtitle=f"head_dim {head_dim}, base {base:,g}, {details}",
        legend_width=HALF_LEGEND_WIDTH if half else LEGEND_WIDTH,
    )
