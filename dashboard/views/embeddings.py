"""Embeddings + positional encoding: the forward pass of the encoding layer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import compute, figures, state, ui
from dashboard.compute import Config

MAX_COLUMNS_SHOWN = compute.MAX_EMBEDDING_COLUMNS


def render(config: Config) -> None:
    ui.explain(
        "A transformer's first layer adds the encoding to the token embeddings: "
        "x = dropout(E·√d_model + PE[:seq]). The same (seq × d_model) encoding is added to every "
        "sequence of the batch (broadcasting: (batch, seq, d) + (seq, d) → (batch, seq, d)). "
        "Whether the position signal drowns the meaning of the words depends on their sizes: the "
        "encoding has norm √(d_model/2) at every position, a random embedding with standard "
        "deviation σ has norm about σ·√d_model, and the paper's √d_model scaling multiplies that "
        "again by √d_model. With a small σ the encoding dominates at small d_model and the "
        "embeddings take over as d_model grows.",
        r"x_{b,k} = \mathrm{dropout}\!\left(\sqrt{d_{\mathrm{model}}}\,E[\mathrm{token}_{b,k}] + "
        r"PE(k)\right)",
    )
    sentences, shape = _inputs(config)
    if sentences is not None and not sentences:
        st.info("Type at least one sentence (one per line).")
        return
    data = compute.embedding_data(
        config,
        sentences,
        shape,
        int(state.value("emb_seed")),
        float(state.value("emb_std")),
        bool(state.value("emb_scale")),
        float(state.value("emb_dropout")),
        int(state.value("emb_dseed")),
    )
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
            f"computed for {seq} positions."
        )
    item = 0
    if batch > 1:
        item = st.select_slider(
            "Sequence of the batch to show",
            options=list(range(batch)),
            format_func=lambda b: (
                f"{b}: {' '.join(t for t in data.tokens[b] if t != compute.PAD)[:40]}"
            ),
            key="emb_item",
        )
    columns = list(range(min(d_model, MAX_COLUMNS_SHOWN)))
    shown = (
        "" if d_model <= MAX_COLUMNS_SHOWN else f"first {MAX_COLUMNS_SHOWN} of {d_model} columns; "
    )
    rows = [f"{k}: {token}" for k, token in enumerate(data.tokens[item])]
    positions = [f"position {k}" for k in range(seq)]
    # A row of at least 3 px, at most 24 px: a sequence of 256 tokens stays readable.
    height = 140 + seq * max(3, min(24, 600 // max(seq, 1)))
    st.caption(
        "Each panel has its own colour range (its largest |value|), so a small embedding is not "
        "drawn pale next to the encoding; compare sizes with the norms chart below."
    )
    for values, title, key, labels in (
        (
            data.embeddings[item],
            "Token embeddings" + (" × √d_model" if state.value("emb_scale") else ""),
            "emb_embeddings",
            rows,
        ),
        (
            data.encoding,
            "Positional encoding PE[:seq] (the same for every sequence)",
            "emb_encoding",
            positions,
        ),
        (
            data.total[item],
            "Sum: the layer's output" + (" after dropout" if state.value("emb_dropout") else ""),
            "emb_total",
            rows,
        ),
    ):
        limit = float(np.max(np.abs(values[:, columns]), initial=0.0)) or 1.0
        ui.chart(
            figures.matrix_heatmap(
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
    ui.chart(figures.norms_chart(data.norms), "emb_norms")


def _inputs(config: Config):
    left, right = st.columns([1, 2])
    left.segmented_control(
        "Input",
        options=["sentences", "random"],
        format_func={"sentences": "Sentences", "random": "Random tokens"}.get,
        key="emb_mode",
        persist_state="session",
    )
    with right:
        a, b, c = st.columns(3)
        a.selectbox(
            "Embedding std σ",
            options=list(state.EMBEDDING_STDS),
            key="emb_std",
            persist_state="session",
            help="Standard deviation of the random embedding vectors (0.02 as in BERT and GPT-2).",
        )
        b.number_input(
            "Embedding seed",
            min_value=0,
            max_value=2**31 - 1,
            key="emb_seed",
            persist_state="session",
        )
        c.toggle("Scale by √d_model", key="emb_scale", persist_state="session")
    left2, right2 = st.columns(2)
    left2.slider(
        "Dropout p",
        min_value=0.0,
        max_value=0.9,
        step=0.05,
        key="emb_dropout",
        persist_state="session",
    )
    right2.number_input(
        "Dropout seed", min_value=0, max_value=2**31 - 1, key="emb_dseed", persist_state="session"
    )
    if state.value("emb_mode") == "random":
        a, b = st.columns(2)
        a.number_input("Batch", min_value=1, max_value=16, key="emb_batch", persist_state="session")
        b.number_input(
            "Sequence length", min_value=1, max_value=256, key="emb_seq", persist_state="session"
        )
        return None, (int(state.value("emb_batch")), int(state.value("emb_seq")))
    st.text_area(
        "Sentences, one per line (split at spaces; shorter ones are padded with <pad>)",
        key="emb_text",
        max_chars=600,
        height=100,
        persist_state="session",
    )
    sentences = tuple(tuple(s) for s in compute.tokenize(state.value("emb_text")))
    return sentences, (0, 0)
