"""What RoPE's rotation does to attention scores: ``q . k`` against the offset, and RoFormer's
relative upper bound on its decay."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import (
    as_real_array,
    check_choice,
    check_positions_for,
    check_size,
)
from pe_core._numerics.kernels import exact_phasor_rows
from pe_core.errors import InputError
from pe_core.rotary.encoding import LAYOUTS, RotaryEncoding, check_rope

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
        The score of ``q`` rotated at the offset and ``k`` at 0 by :func:`apply_rope` (the
        score depends on the offset alone), attention factor included.

    Notes
    -----
    With the attention factor ``A`` and, for each rotating pair ``i`` (columns ``1`` and ``2``
    of the layout), ``u_i = q1 k1 + q2 k2`` and ``v_i = q1 k2 - q2 k1``, the score is
    ``A^2 sum_i (u_i cos(d w_i) + v_i sin(d w_i)) + sum_j q_j k_j`` over the columns ``j``
    that do not rotate. The angles are exact (:func:`pe_core.sinusoidal_encoding`'s phasor
    tables, by digits for whole offsets): the score is within a few units of float64's
    rounding of ``A^2 sum_i (|u_i| + |v_i|)`` of the exact one.
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
    # Rotating q by the angle a of pair i and k by 0 (both scaled by the attention factor A)
    # gives A^2 (cos a (q1 k1 + q2 k2) + sin a (q1 k2 - q2 k1)) for the pair's columns 1 and 2,
    # plus q . k over the columns that do not rotate: one sine and cosine per pair and
    # offset, where rotating q computes each pair's twice (cat(freqs, freqs)) over a copy of q
    # per offset. Equal to rotating with apply_rope within rounding (tests/core/test_rope.py).
    first, second = _pair_columns(rope, layout)
    q1, q2, k1, k2 = q_vector[first], q_vector[second], k_vector[first], k_vector[second]
    scale = rope.attention_factor**2
    # Re(exp(ia) (u - iv)) = u cos a + v sin a: one complex product of the contiguous table
    # (BLAS sums it as accurately as apply_rope's dot; the strided real and imaginary parts
    # summed separately lost up to 10 units of rounding at 4,096 pairs).
    weights = scale * (q1 * k1 + q2 * k2) - 1j * scale * (q1 * k2 - q2 * k1)
    unrotated = float(q_vector[rope.rotary_dim :] @ k_vector[rope.rotary_dim :])
    scores = np.empty(checked.n)
    rows = _rows_per_block(2 * rope.n_pairs)  # bounded temporaries
    for chunk, table in exact_phasor_rows(checked.values, rope.inv_freq, rows):
        scores[chunk] = (table @ weights).real + unrotated
    return scores


def _pair_columns(rope: RotaryEncoding, layout: str | None) -> tuple[slice, slice]:
    """The columns of each pair's first and second member in ``layout`` (by default the
    encoding's), as :func:`apply_rope` pairs them."""
    layout = rope.layout if layout is None else check_choice(layout, "layout", LAYOUTS)
    d, half = rope.rotary_dim, rope.rotary_dim // 2
    if layout == "halves":
        return slice(0, half), slice(half, d)
    return slice(0, d, 2), slice(1, d, 2)


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
    rows = _rows_per_block(rope.n_pairs)  # bounded temporaries
    for chunk, table in exact_phasor_rows(checked.values, rope.inv_freq, rows):
        bound[chunk] = np.abs(np.cumsum(table, axis=1)).mean(axis=1)
    return bound
