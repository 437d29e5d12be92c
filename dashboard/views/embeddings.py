"""Embeddings + positional encoding: the forward pass of the encoding layer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import budget, claims, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.figures import charts, matrices
from dashboard.formatting import counted

DEFAULT_SENTENCES = "the cat sat on the mat\na dog barked\nthe bird flew over the tall tree"
EMBEDDING_STDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
MAX_SEED = 2**31 - 1
PAD = "<pad>"
#: The token of every position in random mode (each gets its own random vector).
RANDOM_TOKEN = "(random)"
#: Columns of the embeddings view's heatmaps (and of what its cache keeps).
MAX_EMBEDDING_COLUMNS = 256

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
    ui.chart(charts.norms_chart(data.norms), "emb_norms")


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
            matrices.matrix_heatmap(
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


@dataclass(frozen=True)
class EmbeddingData:
    tokens: list[list[str]]  # per sequence, padded
    embeddings: np.ndarray  # float32 (batch, seq, <= 256 columns): as added (scaled if asked)
    encoding: np.ndarray  # float32 (seq, <= 256 columns)
    total: np.ndarray  # float32 (batch, seq, <= 256 columns): the layer's output
    norms: dict[str, np.ndarray]  # per position (mean over the batch)


def tokenize(text: str, max_sequences: int = 16, max_tokens: int = 64) -> list[list[str]]:
    """Whitespace tokens of each non-empty line (at most ``max_sequences`` x ``max_tokens``)."""
    lines = [line.split()[:max_tokens] for line in text.splitlines() if line.split()]
    return lines[:max_sequences]


#: Values (rows x d_model) of embeddings computed at once: the forward pass runs a block of
#: token rows at a time, so its memory does not grow with the batch.
EMBEDDING_BLOCK_VALUES = 1 << 19


def embedding_request_bytes(batch: int, length: int, d_model: int, n_words: int = 0) -> int:
    """What :func:`embedding_data` allocates, at most: the encoding of the sequence, the word
    vectors, the shown columns of three (batch, seq) arrays, and the temporaries of one block
    of rows."""
    shown = min(d_model, MAX_EMBEDDING_COLUMNS)
    block_rows = max(1, min(length, EMBEDDING_BLOCK_VALUES // d_model))
    arrays = (length + n_words) * d_model + 3 * batch * length * shown
    return 8 * (arrays + 8 * block_rows * d_model)


@cached
def embedding_data(
    config: Config,
    sentences: tuple[tuple[str, ...], ...] | None,
    shape: tuple[int, int],
    seed: int,
    std: float,
    scale: bool,
    dropout: float,
    dropout_seed: int,
) -> EmbeddingData:
    """Embed sentences (or random tokens of ``shape``), add the encoding, as the layer does.

    Only the first :data:`MAX_EMBEDDING_COLUMNS` columns are kept for display; the norms use
    every column. The rows are drawn and added a block at a time from the same generators, so
    the numbers are those of one call on the whole batch (a generator's stream does not depend
    on how it is split), at a bounded cost in memory.
    """
    d_model = config.d_model
    if sentences is not None:
        batch, length = len(sentences), max(len(s) for s in sentences)
    else:
        batch, length = shape
    vocabulary = sorted({t for s in sentences for t in s}) if sentences is not None else []
    budget.check_request(
        embedding_request_bytes(batch, length, d_model, len(vocabulary)),
        f"the forward pass of {batch} x {length} tokens at d_model {d_model}",
    )
    if sentences is not None:
        tokens = [list(s) + [PAD] * (length - len(s)) for s in sentences]
    else:
        tokens = [[RANDOM_TOKEN] * length for _ in range(batch)]
    rng = np.random.default_rng(seed)
    dropout_rng = np.random.default_rng(dropout_seed)
    if sentences is not None:
        table = {word: rng.normal(0.0, std, d_model) for word in vocabulary}
        table[PAD] = np.zeros(d_model)  # padding embeds to zero, as with padding_idx
    encoding = pe_core.sinusoidal_encoding(length, config.bank)
    shown = min(d_model, MAX_EMBEDDING_COLUMNS)
    # For display only (the charts send float32): half the memory of float64 in the cache.
    embeddings = np.empty((batch, length, shown), dtype=np.float32)
    total = np.empty((batch, length, shown), dtype=np.float32)
    embedding_norms = np.empty((batch, length))
    total_norms = np.empty((batch, length))
    rows = max(1, EMBEDDING_BLOCK_VALUES // d_model)
    for b in range(batch):
        for first in range(0, length, rows):
            block = slice(first, min(first + rows, length))
            if sentences is None:
                vectors = rng.normal(0.0, std, (block.stop - block.start, d_model))
            else:
                vectors = np.array([table[t] for t in tokens[b][block]])
            output = pe_core.add_to_embeddings(
                vectors, encoding[block], scale=scale, dropout=dropout, rng=dropout_rng
            )
            if scale:
                vectors *= np.sqrt(d_model)
            embeddings[b, block] = vectors[:, :shown]
            total[b, block] = output[:, :shown]
            embedding_norms[b, block] = np.linalg.norm(vectors, axis=1)
            total_norms[b, block] = np.linalg.norm(output, axis=1)
    # Mean over the sequences that have a real token at each position (padding excluded).
    real = np.array([[t != PAD for t in row] for row in tokens], dtype=float)
    count = np.maximum(real.sum(axis=0), 1.0)
    norms = {
        "embedding" + (" × √d_model" if scale else ""): (embedding_norms * real).sum(0) / count,
        "encoding": np.linalg.norm(encoding, axis=1),
        "sum (layer output)": (total_norms * real).sum(0) / count,
    }
    return EmbeddingData(tokens, embeddings, encoding[:, :shown].astype(np.float32), total, norms)
