"""What RoPE's rotation does to attention scores: ``q . k`` against the offset, and RoFormer's
relative upper bound on its decay."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import as_real_array, check_positions_for, check_size
from pe_core._numerics.kernels import phasors
from pe_core.errors import InputError
from pe_core.rotary.encoding import RotaryEncoding, apply_rope, check_rope

__all__ = ["rope_decay_bound", "rope_scores"]


def _rows_per_block(width: int) -> int:
    """Rows of ``width`` values processed at once: about 2**18 values (a few MB) a block."""
    return max(1, 2**18 // max(1, width))


def rope_scores(
    offsets: ArrayLike,
    rope: RotaryEncoding,
    q: ArrayLike,
    k: ArrayLike | None = None,
    *,
    layout: str | None = None,
) -> NDArray[np.float64]:
    """The attention score ``rotate(q, m) . rotate(k, n)`` against the offset ``m - n``.

    Parameters
    ----------
    offsets : array_like
        Query position minus key position (1-D).
    rope : RotaryEncoding
    q, k : array_like, shape (head_dim,)
        The query and key before rotation (``k`` defaults to ``q``).
    layout : {"halves", "interleaved"}, optional
        By default ``rope.layout``.

    Returns
    -------
    ndarray of float64, the shape of ``offsets``
        Each score computed by rotating ``q`` at the offset and ``k`` at 0 with
        :func:`apply_rope` (the score depends on the offset alone), attention factor included.
    """
    rope = check_rope(rope)
    checked = check_positions_for(rope.bank(), offsets, "offsets")
    check_size(checked.n * rope.head_dim, "the rotated queries")
    vectors = []
    for name, value in (("q", q), ("k", q if k is None else k)):
        vector = as_real_array(value, name, ndim=1)
        if vector.size != rope.head_dim:
            raise InputError(
                f"{name} must have rope.head_dim = {rope.head_dim} values, got {vector.size}"
            )
        vectors.append(vector)
    q_vector, k_vector = vectors
    rotated_k = apply_rope(k_vector[None, :], [0], rope, layout=layout)[0]
    scores = np.empty(checked.n)
    for first in range(0, checked.n, _rows_per_block(rope.head_dim)):  # bounded temporaries
        block = checked.values[first : first + _rows_per_block(rope.head_dim)]
        queries = np.broadcast_to(q_vector, (block.size, rope.head_dim))
        scores[first : first + block.size] = apply_rope(queries, block, rope, layout=layout) @ (
            rotated_k
        )
    return scores


def rope_decay_bound(offsets: ArrayLike, rope: RotaryEncoding) -> NDArray[np.float64]:
    """RoFormer's relative upper bound on the score at each offset (Su et al., section 3.4.3).

    With ``S_j = sum_{i<j} exp(i * offset * w_i)``, the score of any q and k satisfies
    ``|score| <= (max_i |h_(i+1) - h_i|) * sum_j |S_j|``; the paper plots
    ``(1 / n) * sum_(j=1..n) |S_j|`` (``n`` pairs, fast pairs first), which decays with the
    offset. Pairs with frequency 0 (proportional RoPE's last ones) count as in the paper.

    Returns
    -------
    ndarray of float64, the shape of ``offsets``
    """
    rope = check_rope(rope)
    checked = check_positions_for(rope.bank(), offsets, "offsets")
    check_size(checked.n * rope.n_pairs * 2, "the partial sums")
    bound = np.empty(checked.n)
    rows = _rows_per_block(rope.n_pairs)
    for first in range(0, checked.n, rows):  # bounded temporaries
        block = checked.values[first : first + rows]
        partial = np.cumsum(phasors(block, rope.inv_freq), axis=1)
        bound[first : first + block.size] = np.abs(partial).mean(axis=1)
    return bound
