"""Embeddings + positional encoding: the forward pass of the encoding layer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import caching, claims, params, ui
from dashboard.config import Config
from dashboard.figures import charts, matrices
from dashboard.formatting import counted
from dashboard.view_parts.embedding import (
    MAX_EMBEDDING_COLUMNS,
    PAD,
    EmbeddingData,
    embedding_data,
    tokenize,
)

DEFAULT_SENTENCES = "the cat sat on the mat\na dog barked\nthe bird flew over the tall tree"
EMBEDDING_STDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
MAX_SEED = 2**31 - 1

MODE = params.Choice(
    "emb_mode",
    "Input",
    "sentences",
    options=("sentences", "random"),
    kind="segmented",
    help="sentences: your words, one sentence per line; random: random token vectors.",
)
TEXT = params.Text(
    "emb_text",
    "Sentences, one per line (split at spaces; shorter ones are padded with <pad>)",
    DEFAULT_SENTENCES,
    max_chars=600,
    area=True,
)
BATCH = params.Number("emb_batch", "Batch", 3, low=1, high=16)
SEQ = params.Number("emb_seq", "Sequence length", 8, low=1, high=256)
SEED = params.Number("emb_seed", "Embedding seed", 0, low=0, high=MAX_SEED)
STD = params.Choice(
    "emb_std",
    "Embedding std σ",
    0.02,
    options=EMBEDDING_STDS,
    convert=float,
    help="Standard deviation of the random embedding vectors (0.02 as in BERT and GPT-2).",
)
SCALE = params.Toggle("emb_scale", "Scale by √d_model", True)
DROPOUT = params.Slider("emb_dropout", "Dropout p", 0.0, low=0.0, high=0.9, step=0.05)
DROPOUT_SEED = params.Number("emb_dseed", "Dropout seed", 0, low=0, high=MAX_SEED)
PARAMS = (MODE, TEXT, BATCH, SEQ, SEED, STD, SCALE, DROPOUT, DROPOUT_SEED)


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"Token embeddings plus the encoding, as the first layer sees them: {config.summary}."


def render(config: Config) -> None:
    ui.explain(
        "A transformer's first layer adds the encoding to the token embeddings: "
        "x = dropout(E·√d_model + PE[:seq]). The same (seq × d_model) encoding is added to every "
        "sequence of the batch (broadcasting: (batch, seq, d) + (seq, d) → (batch, seq, d)). "
        "Whether the position signal drowns the meaning of the words depends on their sizes: "
        f"{claims.encoding_norm(config.layout)}, a random embedding with standard "
        "deviation σ has norm about σ·√d_model"
        + (
            ", and the paper's √d_model scaling (on here) multiplies that again by √d_model. "
            "With a small σ the encoding dominates at small d_model and the embeddings take over "
            "as d_model grows."
            if SCALE.value(config)
            else ". Without the paper's √d_model scaling (off here) both grow as √d_model: their "
            "ratio, about σ·√2, does not change with d_model."
        ),
        r"x_{b,k} = \mathrm{dropout}\!\left(\sqrt{d_{\mathrm{model}}}\,E[\mathrm{token}_{b,k}] + "
        r"PE(k)\right)",
    )
    sentences, shape = _inputs(config)
    if sentences is not None and not sentences:
        st.info("Type at least one sentence (one per line).")
        return
    data = embedding_data(
        config,
        sentences,
        shape,
        int(SEED.value(config)),
        float(STD.value(config)),
        bool(SCALE.value(config)),
        float(DROPOUT.value(config)),
        int(DROPOUT_SEED.value(config)),
    )
    _shapes(config, data)
    item = _chosen_sequence(data)
    _panels(config, data, item)
    ui.chart(caching.figure_of(charts.norms_chart, data.norms), "emb_norms")


def _shapes(config: Config, data: EmbeddingData) -> None:
    batch, seq, _ = data.total.shape
    d_model = config.d_model
    st.markdown(
        f"**Shapes:** embeddings ({batch}, {seq}, {d_model}) + encoding ({seq}, {d_model}) "
        f"→ output ({batch}, {seq}, {d_model}); the encoding is broadcast over the batch "
        f"of {batch}."
    )
    if seq > config.n_positions:
        st.caption(
            f"The sequences are longer than L = {config.n_positions}; the encoding is "
            f"computed for {counted(seq, 'position')}."
        )


def _chosen_sequence(data: EmbeddingData) -> int:
    batch = data.total.shape[0]
    if batch == 1:
        return 0
    return st.select_slider(
        "Sequence of the batch to show",
        options=list(range(batch)),
        format_func=lambda b: f"{b}: {' '.join(t for t in data.tokens[b] if t != PAD)[:40]}",
        key="emb_item",
    )


def _panels(config: Config, data: EmbeddingData, item: int) -> None:
    """The embeddings, the encoding and their sum as heatmaps (each its own colour range)."""
    seq, d_model = data.total.shape[1], config.d_model
    columns = list(range(min(d_model, MAX_EMBEDDING_COLUMNS)))
    shown = ""
    if d_model > MAX_EMBEDDING_COLUMNS:
        shown = f"first {MAX_EMBEDDING_COLUMNS} of {d_model} columns; "
    rows = [f"{k}: {token}" for k, token in enumerate(data.tokens[item])]
    positions = [f"position {k}" for k in range(seq)]
    # A row of at least 3 px, at most 24 px: a sequence of 256 tokens stays readable.
    height = 140 + seq * max(3, min(24, 600 // max(seq, 1)))
    st.caption(
        "Each panel has its own colour range (its largest |value|), so a small embedding is not "
        "drawn pale next to the encoding; compare sizes with the norms chart below."
    )
    scaled = " × √d_model" if SCALE.value(config) else ""
    dropped = " after dropout" if DROPOUT.value(config) else ""
    for values, title, key, labels in (
        (data.embeddings[item], "Token embeddings" + scaled, "emb_embeddings", rows),
        (
            data.encoding,
            "Positional encoding PE[:seq] (the same for every sequence)",
            "emb_encoding",
            positions,
        ),
        (data.total[item], "Sum: the layer's output" + dropped, "emb_total", rows),
    ):
        limit = float(np.max(np.abs(values[:, columns]), initial=0.0)) or 1.0
        ui.chart(
            caching.figure_of(
                matrices.matrix_heatmap,
                values[:, columns],
                rows=labels,
                columns=columns,
                title=title,
                subtitle=f"{shown}colour range ±{limit:.3g}",
                symmetric_range=limit,
                height=height,
            ),
            key,
        )
        if seq <= 12 and d_model <= 8:
            st.dataframe(pd.DataFrame(values, index=labels).round(4), width="stretch")


def _inputs(config: Config):
    MODE.widget(config)
    scaled = ", × √d_model" if SCALE.value(config) else ""
    dropout = float(DROPOUT.value(config))
    summary = (
        f"Embeddings: σ {float(STD.value(config)):g}, seed {int(SEED.value(config))}{scaled}; "
        f"dropout {dropout:g}" + (f", seed {int(DROPOUT_SEED.value(config))}" if dropout else "")
    )
    # The settings fold away under what they are set to: the charts come up the page.
    with st.expander(summary, key="emb_settings"):
        a, b, c = st.columns(3)
        STD.widget(config, a)
        SEED.widget(config, b)
        SCALE.widget(config, c)
        left, right = st.columns(2)
        DROPOUT.widget(config, left)
        DROPOUT_SEED.widget(config, right)
    if MODE.value(config) == "random":
        a, b = st.columns(2)
        BATCH.widget(config, a)
        SEQ.widget(config, b)
        return None, (int(BATCH.value(config)), int(SEQ.value(config)))
    TEXT.widget(config, height=100)
    sentences = tuple(tuple(s) for s in tokenize(TEXT.value(config)))
    return sentences, (0, 0)
