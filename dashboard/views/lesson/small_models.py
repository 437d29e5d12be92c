"""Small layers with random weights for the Lesson, in plain NumPy: a recurrent network, a
convolution and self-attention on a short sentence and on its reversal (without position codes
attention cannot tell the orders apart), and one rotary query and key (RoPE's score)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard.config import Config
from dashboard.view_parts.embedding import embedding_data, tokenize

#: The sentence, and the order its words are shuffled into (a reversal).
SENTENCE = ("the", "cat", "sat", "on", "a", "mat")
SHUFFLE = (5, 4, 3, 2, 1, 0)
WIDTH = 16
SEED = 0


def _attention(
    x: np.ndarray, projections: tuple[np.ndarray, ...], *, causal: bool = False
) -> np.ndarray:
    """softmax(Q Kᵀ / √d) V: one head, with the layer's query, key and value projections;
    ``causal``: each word attends to itself and the words before it only (a decoder's mask)."""
    d = x.shape[1]
    wq, wk, wv = projections
    queries, keys, values = x @ wq, x @ wk, x @ wv
    scores = queries @ keys.T / np.sqrt(d)
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ values


def _recurrent(x: np.ndarray, weights: tuple[np.ndarray, ...]) -> np.ndarray:
    """h_t = tanh(x_t W + h_(t-1) U): an RNN reads the words one after another."""
    w, u = weights
    state, outputs = np.zeros(w.shape[1]), []
    for row in x:  # in order: that is what a recurrent network is
        state = np.tanh(row @ w + state @ u)
        outputs.append(state)
    return np.stack(outputs)


def _convolution(x: np.ndarray, kernels: tuple[np.ndarray, ...]) -> np.ndarray:
    """y_t = tanh(x_(t-1) K_0 + x_t K_1 + x_(t+1) K_2): a window of three, zeros past the ends."""
    padded = np.vstack([np.zeros(x.shape[1]), x, np.zeros(x.shape[1])])
    return np.tanh(sum(padded[j : j + x.shape[0]] @ kernel for j, kernel in enumerate(kernels)))


def _causal_attention(x: np.ndarray, projections: tuple[np.ndarray, ...]) -> np.ndarray:
    """Self-attention with a decoder's causal mask."""
    return _attention(x, projections, causal=True)


#: The layers of the lesson's first step, by name: each maps the words' vectors (one row a
#: word, in the sentence's order) to one output a word.
LAYERS = (
    "recurrent network (RNN)",
    "convolution, window 3",
    "self-attention",
    "causal self-attention",
)
WITH_POSITIONS = "self-attention + PE(k)"


@dataclass(frozen=True)
class Reversal:
    """How much each layer's output for a word changes when the sentence is reversed (the
    outputs put back in the sentence's order): the largest over the words of
    ‖after − before‖ / ‖before‖, for each of :data:`LAYERS` and for self-attention with the
    sinusoidal encoding added to the words (:data:`WITH_POSITIONS`)."""

    changes: dict[str, float]

    @property
    def unchanged(self) -> tuple[str, ...]:
        """The layers that give each word the same output (to rounding, 1e-9)."""
        return tuple(name for name in LAYERS if self.changes[name] < 1e-9)


def reversal_changes(width: int = WIDTH, base: float = 10_000.0) -> Reversal:
    """Each layer run on :data:`SENTENCE` and on its reversal, random weights (seed 0)."""
    rng = np.random.default_rng(SEED)
    vocabulary = sorted(set(SENTENCE))
    vectors = dict(zip(vocabulary, rng.standard_normal((len(vocabulary), width)), strict=True))
    words = np.stack([vectors[w] for w in SENTENCE])
    order = np.asarray(SHUFFLE)
    back = np.argsort(order)  # row j of the shuffled sentence is word order[j]

    def scaled(count: int) -> tuple[np.ndarray, ...]:
        return tuple(rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(count))

    attention = scaled(3)
    runs = {
        LAYERS[0]: (_recurrent, scaled(2), 0.0),
        LAYERS[1]: (_convolution, scaled(3), 0.0),
        LAYERS[2]: (_attention, attention, 0.0),
        # The same layer with a decoder's mask: each word sees the words before it only.
        LAYERS[3]: (_causal_attention, attention, 0.0),
        # The same attention layer, the encoding added to the words at positions 0, 1, 2...
        WITH_POSITIONS: (
            _attention,
            attention,
            pe_core.sinusoidal_encoding(len(SENTENCE), width, base=base),
        ),
    }
    changes = {}
    for name, (layer, weights, added) in runs.items():
        before = layer(words + added, weights)
        after = layer(words[order] + added, weights)[back]
        change = np.linalg.norm(after - before, axis=1) / np.linalg.norm(before, axis=1)
        changes[name] = float(change.max())
    return Reversal(changes)


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


def _layer_norm(x: np.ndarray) -> np.ndarray:
    """Each row to mean 0 and standard deviation 1 (no learned gain or bias)."""
    centred = x - x.mean(axis=1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + 1e-5)


def _spread(x: np.ndarray) -> float:
    """How far apart the rows are, relative to their length: the root mean square of
    ‖x_k − mean‖ over the root mean square of ‖x_k‖ (0 when every row is the same vector)."""
    centred = x - x.mean(axis=0)
    return float(np.sqrt(np.sum(centred**2) / np.sum(x**2)))


#: The stack of the lesson's step on upper layers: as wide and as deep as a small model, on
#: one word repeated, so that the copies differ by their positions alone.
STACK_WIDTH = 64
STACK_LAYERS = 12
STACK_COPIES = 16


@dataclass(frozen=True)
class Stack:
    """How far apart the copies of one word at positions 0 .. copies - 1 are (their spread,
    :func:`_spread`) at the input (layer 0) and after each layer, with the residual
    connections and without them."""

    layers: np.ndarray
    with_residual: np.ndarray
    without_residual: np.ndarray
    copies: int
    width: int


def residual_stack(
    width: int = STACK_WIDTH,
    n_layers: int = STACK_LAYERS,
    copies: int = STACK_COPIES,
    base: float = 10_000.0,
) -> Stack:
    """One random word vector (standard deviation 1, seed 0) at positions 0 .. copies - 1, plus
    PE(k), through ``n_layers`` random transformer layers (seed 0): pre-norm attention, then a
    ReLU MLP four times as wide, each output added to its input (x + f(x)) or replacing it
    (f(x)); the same weights both ways."""
    rng = np.random.default_rng(SEED)
    start = rng.standard_normal(width) + pe_core.sinusoidal_encoding(copies, width, base=base)
    weights = [
        (
            tuple(rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(3)),
            rng.standard_normal((width, 4 * width)) / np.sqrt(width),
            rng.standard_normal((4 * width, width)) / np.sqrt(4 * width),
        )
        for _ in range(n_layers)
    ]
    spreads = {}
    for residual in (True, False):
        x, found = start, [_spread(start)]
        for attention, up, down in weights:
            update = _attention(_layer_norm(x), attention)
            x = x + update if residual else update
            update = np.maximum(_layer_norm(x) @ up, 0.0) @ down
            x = x + update if residual else update
            found.append(_spread(x))
        spreads[residual] = np.array(found)
    return Stack(np.arange(n_layers + 1), spreads[True], spreads[False], copies, width)


#: The head of the lesson's step on the student's own sentence: its width, its words at most,
#: and the word vectors' standard deviation (1: as large as the encoding's entries, so that
#: neither hides the other).
HEAD_WIDTH = 16
MAX_WORDS = 16
WORD_STD = 1.0


def words_of(text: str) -> tuple[str, ...]:
    """The words of ``text`` (split at spaces), at most :data:`MAX_WORDS`."""
    lines = tokenize(" ".join(text.split()))
    if not lines:
        raise pe_core.InputError(f"the sentence must hold at least one word, got {text!r}")
    return tuple(lines[0][:MAX_WORDS])


@dataclass(frozen=True)
class SentenceScores:
    """The scores q·k/√width of one head on a sentence (query word on the row, key word on
    the column), without and with the encoding added to the word vectors."""

    words: tuple[str, ...]
    without: np.ndarray
    with_positions: np.ndarray

    @property
    def repeated(self) -> dict[str, tuple[int, ...]]:
        """The words that occur more than once, with their positions."""
        places: dict[str, list[int]] = {}
        for k, word in enumerate(self.words):
            places.setdefault(word, []).append(k)
        return {word: tuple(ks) for word, ks in places.items() if len(ks) > 1}

    def gap(self, scores: np.ndarray, positions: tuple[int, ...]) -> float:
        """The largest difference between the rows of ``positions``, and between their
        columns (how differently the head treats the copies of one word)."""
        rows, columns = scores[list(positions)], scores[:, list(positions)]
        return float(max(np.ptp(rows, axis=0).max(), np.ptp(columns, axis=1).max()))


def sentence_scores(words: tuple[str, ...], width: int = HEAD_WIDTH) -> SentenceScores:
    """The Embeddings view's forward pass on ``words`` (vectors N(0, 1), seed 0, no √d
    scaling, no dropout) and one head with random query and key projections (seed 0)."""
    config = Config(len(words), width, 10_000.0, "vaswani")
    data = embedding_data(config, (words,), (0, 0), SEED, WORD_STD, False, 0.0, 0)
    wq, wk = head_projections(width)

    def scores(x: np.ndarray) -> np.ndarray:
        x = x.astype(np.float64)
        return (x @ wq) @ (x @ wk).T / np.sqrt(width)

    return SentenceScores(words, scores(data.embeddings[0]), scores(data.total[0]))


def head_projections(width: int = HEAD_WIDTH) -> tuple[np.ndarray, np.ndarray]:
    """The query and key projections W_Q and W_K of the head of :func:`sentence_scores`."""
    rng = np.random.default_rng(SEED)
    wq, wk = rng.standard_normal((2, width, width)) / np.sqrt(width)
    return wq, wk


def position_term(n_positions: int, offset: int = 1, width: int = HEAD_WIDTH) -> np.ndarray:
    """The term of the score that holds positions alone, PE(k + offset) W_Q W_Kᵀ PE(k)ᵀ / √width,
    for k = 0 .. n_positions - 1 - offset, with the projections of :func:`sentence_scores`:
    one value per k (a function of the offset alone would give one value)."""
    wq, wk = head_projections(width)
    table = pe_core.sinusoidal_encoding(n_positions, width)
    queries = table[offset:] @ wq
    keys = table[: n_positions - offset] @ wk
    return np.sum(queries * keys, axis=1) / np.sqrt(width)
