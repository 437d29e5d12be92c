"""One self-attention layer on a short sentence, before and after shuffling its words: what
the lesson's first step shows (without position codes the layer cannot tell the orders apart)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pe_core

#: The sentence, and the order its words are shuffled into (a reversal).
SENTENCE = ("the", "cat", "sat", "on", "a", "mat")
SHUFFLE = (5, 4, 3, 2, 1, 0)
WIDTH = 16
SEED = 0


@dataclass(frozen=True)
class Shuffled:
    """Each word's output of the layer (rows in the sentence's order), for the sentence as
    written and shuffled (the shuffled outputs put back in the sentence's order), without and
    with the sinusoidal encoding added to the word vectors."""

    panels: dict[str, np.ndarray]
    #: Largest difference between a word's output before and after the shuffle.
    change_without: float
    change_with: float


def _attention(x: np.ndarray, projections: tuple[np.ndarray, ...]) -> np.ndarray:
    """softmax(Q Kᵀ / √d) V: one head, with the layer's query, key and value projections."""
    d = x.shape[1]
    wq, wk, wv = projections
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = q @ k.T / np.sqrt(d)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v


def shuffle_outputs(width: int = WIDTH, base: float = 10_000.0) -> Shuffled:
    """The layer's outputs for the sentence and for its shuffle, without and with positions."""
    rng = np.random.default_rng(SEED)
    vocabulary = sorted(set(SENTENCE))
    vectors = dict(zip(vocabulary, rng.standard_normal((len(vocabulary), width)), strict=True))
    words = np.stack([vectors[w] for w in SENTENCE])
    order = np.asarray(SHUFFLE)
    back = np.argsort(order)  # row j of the shuffled sentence is word order[j]
    encoding = pe_core.sinusoidal_encoding(len(SENTENCE), width, base=base)
    layer = tuple(rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(3))
    panels, changes = {}, []
    for label, added in (("without position codes", 0.0), ("with position codes", encoding)):
        written = _attention(words + added, layer)
        # The positions stay 0, 1, 2...: the encoding is added to the words in their new order.
        shuffled = _attention(words[order] + added, layer)[back]
        panels[f"{label}: as written"] = written
        panels[f"{label}: shuffled, rows put back"] = shuffled
        changes.append(float(np.max(np.abs(shuffled - written))))
    return Shuffled(panels, *changes)


#: Where the query sits in the lesson's RoPE chart: three places far apart in the sequence.
ROPE_STARTS = (0, 1_000, 10_000)
ROPE_OFFSETS = 200


@dataclass(frozen=True)
class RotatedScores:
    """q·k after rotating a query at position n + δ and a key at n, for several n."""

    offsets: np.ndarray
    scores: dict[str, np.ndarray]
    #: Largest difference between the curves of different n (rounding, if RoPE is relative).
    spread: float


def rotated_scores(head_dim: int, base: float) -> RotatedScores:
    """One random query and key, rotated by pe_core.apply_rope at each pair of positions."""
    rope = pe_core.rope_frequencies(head_dim, base=base)
    rng = np.random.default_rng(SEED)
    q, k = rng.standard_normal((2, head_dim))
    offsets = np.arange(ROPE_OFFSETS + 1)
    scores = {}
    for start in ROPE_STARTS:
        keys = pe_core.apply_rope(k[None, :], [start], rope)[0]
        queries = pe_core.apply_rope(np.tile(q, (offsets.size, 1)), start + offsets, rope)
        scores[f"key at position {start:,}"] = queries @ keys
    curves = np.stack(list(scores.values()))
    return RotatedScores(offsets, scores, float(np.ptp(curves, axis=0).max()))
