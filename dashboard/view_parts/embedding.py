"""The forward pass of the encoding layer as the Embeddings view and the Lesson draw it: a
sentence's words (or random tokens) embedded, and the encoding added (pe_core.add_to_embeddings)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard import budget
from dashboard.caching import cached
from dashboard.config import Config

PAD = "<pad>"
#: The token of every position in random mode (each gets its own random vector).
RANDOM_TOKEN = "(random)"
#: Columns of the embeddings view's heatmaps (and of what its cache keeps).
MAX_EMBEDDING_COLUMNS = 256


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
