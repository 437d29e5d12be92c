"""Similarity between encoded positions: cosine similarity of rows, and the closed-form offset
profile that needs no ``L x L`` matrix."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.spatial.distance
from numpy.typing import ArrayLike, NDArray

from pe_core._phasors import check_angles, cos_sum_progression, phasors
from pe_core._validation import (
    MAX_POSITION,
    Positions,
    as_real_array,
    check_base,
    check_choice,
    check_d_model,
    check_positions,
    check_size,
)
from pe_core.conventions import Convention, get_convention
from pe_core.encoding import _encode

__all__ = ["cosine_similarity", "offset_similarity", "similarity_matrix"]

KINDS = ("cosine", "dot", "distance")

#: Below this squared distance the matrix-product profile is recomputed term by term (its
#: absolute error, about h * 1e-16, would otherwise dominate the square root).
_REFINE_SQUARED_DISTANCE = 1e-4


def cosine_similarity(a: ArrayLike, b: ArrayLike | None = None) -> NDArray[np.float64]:
    """Cosine similarity between the rows of ``a`` (and the rows of ``b``).

    Parameters
    ----------
    a : array_like, shape (n, d)
        Finite real rows.
    b : array_like, shape (m, d), optional
        Finite real rows; ``a`` itself if omitted.

    Returns
    -------
    ndarray of float64, shape (n, m)
        Entry ``[j, k]`` is ``a[j] . b[k] / (|a[j]| |b[k]|)``, clipped to [-1, 1]. A zero row has
        similarity 0 with everything (no NaN). Without ``b`` the result is exactly symmetric
        with a unit diagonal (for nonzero rows).

    Raises
    ------
    ValueError
        For arrays that are not 2-D, rows of different lengths, NaN or inf, or a result beyond
        the memory budget.
    TypeError
        For non-numeric input.

    Examples
    --------
    >>> cosine_similarity([[1.0, 0.0], [1.0, 1.0]]).round(4)
    array([[1.    , 0.7071],
           [0.7071, 1.    ]])
    """
    rows_a = as_real_array(a, "a", ndim=2)
    rows_b = rows_a if b is None else as_real_array(b, "b", ndim=2)
    if rows_a.shape[1] != rows_b.shape[1]:
        raise ValueError(
            f"a and b must have rows of the same length, got a of shape {rows_a.shape} and b of "
            f"shape {rows_b.shape}"
        )
    check_size(rows_a.shape[0] * rows_b.shape[0], "the similarity matrix")
    if rows_a.shape[1] == 0:  # rows of length 0 are zero vectors: similarity 0
        return np.zeros((rows_a.shape[0], rows_b.shape[0]))
    unit_a = _unit_rows(rows_a)
    unit_b = unit_a if b is None else _unit_rows(rows_b)
    similarity = np.clip(unit_a @ unit_b.T, -1.0, 1.0)
    if b is None:
        similarity = 0.5 * (similarity + similarity.T)
        nonzero = np.any(rows_a != 0, axis=1)
        similarity[np.diag_indices_from(similarity)] = np.where(nonzero, 1.0, 0.0)
    return similarity


def _unit_rows(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    scale = np.max(np.abs(rows), axis=1, keepdims=True)  # avoids overflow in the norm
    scale[scale == 0] = 1.0
    scaled = rows / scale
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return scaled / norms


def _closed_form_convention(d_model: int, convention: str) -> tuple[Convention, int]:
    """The convention and its number of sin/cos pairs, if the offset closed form holds."""
    conv = get_convention(convention)
    layout = conv.column_layout(d_model)
    if not layout.is_paired:
        raise ValueError(
            f"the similarity of PE(k) and PE(k + offset) has no closed form for odd "
            f"d_model={d_model} with the {convention!r} convention: its unpaired column "
            f"sin(k * w) has no cos partner, so the dot product depends on k, not only on the "
            f"offset; use an even d_model, the 'tensor2tensor' convention (its odd column is "
            f"zero), or cosine_similarity of encoding rows"
        )
    return conv, layout.n_frequencies


def _profile(offsets: Positions, freqs: NDArray[np.float64], kind: str) -> NDArray[np.float64]:
    """Dot product (``kind="dot"``) or distance of PE(k), PE(k + offset), for checked offsets."""
    if offsets.is_progression and offsets.n >= 64:
        dot = cos_sum_progression(float(offsets.start), float(offsets.step), offsets.n, freqs)
        if kind == "dot":
            return dot
        return distance_from_dot(dot, lambda index: offsets.values[index], freqs)
    if kind == "dot":
        return _chunked(offsets.values, freqs, lambda chunk: phasors(chunk, freqs).real.sum(1))
    return np.sqrt(_direct_squared_distance(offsets.values, freqs))


def distance_from_dot(dot: NDArray[np.float64], offsets_at, freqs) -> NDArray[np.float64]:
    """Distances ``sqrt(2 (h - dot))``, overwriting ``dot``; where cancellation would show,
    recomputed term by term at the offsets ``offsets_at(index)``."""
    squared = dot
    squared *= -2.0
    squared += 2.0 * freqs.size
    np.maximum(squared, 0.0, out=squared)
    close = np.flatnonzero(squared < _REFINE_SQUARED_DISTANCE)
    if close.size:
        squared[close] = _direct_squared_distance(offsets_at(close), freqs)
    return np.sqrt(squared, out=squared)


def _direct_squared_distance(offsets: NDArray[np.float64], freqs: NDArray[np.float64]):
    """``|PE(k) - PE(k + offset)|^2 = 4 sum_i sin^2(w_i offset / 2)``, with no cancellation."""

    def squared_distance(chunk):
        return 4.0 * np.sum(phasors(0.5 * chunk, freqs).imag ** 2, axis=1)

    return _chunked(offsets, freqs, squared_distance)


def _chunked(values, freqs, function) -> NDArray[np.float64]:
    rows = max(1, (1 << 20) // max(1, freqs.size))
    parts = [function(values[first : first + rows]) for first in range(0, values.size, rows)]
    return np.concatenate(parts) if parts else np.zeros(0)


def offset_similarity(
    offsets: ArrayLike,
    d_model: int,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
    kind: str = "cosine",
) -> NDArray[np.float64]:
    """Similarity of ``PE(k)`` and ``PE(k + offset)`` by closed form: the same for every ``k``.

    Parameters
    ----------
    offsets : float or array_like of float
        Offsets between positions (any real numbers within ``+/-2**53``).
    d_model : int
        Width of the encoding. For "vaswani" and "split" it must be even (see Raises).
    base, convention
        As for :func:`pe_core.sinusoidal_encoding`.
    kind : {"cosine", "dot", "distance"}, optional
        Cosine similarity (default), dot product, or Euclidean distance.

    Returns
    -------
    ndarray of float64, same shape as ``offsets``

    Raises
    ------
    ValueError
        For odd ``d_model`` with an unpaired sin column ("vaswani", "split"): the similarity then
        depends on ``k``, so no closed form in the offset exists. For ``kind="cosine"`` when the
        encoding is all zeros (``d_model=1``, "tensor2tensor"). For invalid arguments.

    Notes
    -----
    With ``h`` sin/cos pairs, by :math:`\\sin a \\sin b + \\cos a \\cos b = \\cos(a - b)`:

    .. math::

        PE(k) \\cdot PE(k + \\delta) = \\sum_{i<h} \\cos(w_i \\delta), \\qquad
        \\cos\\theta = \\frac{1}{h} \\sum_{i<h} \\cos(w_i \\delta), \\qquad
        |PE(k) - PE(k + \\delta)|^2 = 4 \\sum_{i<h} \\sin^2(w_i \\delta / 2).

    It is even in the offset: the encoding alone does not tell which position comes first.
    Integer offsets in arithmetic progression (e.g. ``np.arange(L)``) are evaluated by two
    matrix products of small exact tables instead of ``L * h`` cosines.

    Examples
    --------
    >>> offset_similarity([0, 1, -1], 4, base=100.0).round(6)
    array([1.      , 0.767653, 0.767653])
    >>> float(offset_similarity(1.0, 512, kind="distance").round(4))
    3.7143
    """
    d_model = check_d_model(d_model)
    base = check_base(base)
    kind = check_choice(kind, "kind", KINDS)
    conv, n_pairs = _closed_form_convention(d_model, convention)
    values = as_real_array(offsets, "offsets")
    flat = values.ravel()
    if flat.size and np.max(np.abs(flat)) > MAX_POSITION:
        raise ValueError(
            f"offsets must lie within +/-2**53 (= {MAX_POSITION:.0f}), got an offset of "
            f"magnitude {np.max(np.abs(flat)):.6g}"
        )
    if kind == "cosine" and n_pairs == 0:
        raise ValueError(
            f"cosine similarity is undefined for d_model={d_model} with the {convention!r} "
            f"convention: every encoding is the zero vector"
        )
    check_size(flat.size, "offsets")
    freqs = conv.frequencies(d_model, base)
    checked = check_positions(flat, "offsets")
    check_angles(checked, freqs)
    result = _profile(checked, freqs, "distance" if kind == "distance" else "dot")
    if kind == "cosine":
        result = np.clip(result / n_pairs, -1.0, 1.0)
    return result.reshape(values.shape)


def similarity_matrix(
    positions: int | ArrayLike,
    d_model: int,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
    kind: str = "cosine",
) -> NDArray[np.float64]:
    """Similarity between every pair of ``positions``, from the closed form where it holds.

    For evenly spaced integer positions (an int ``L``, or ``start + step * arange(n)``) and a
    convention with paired columns the matrix is Toeplitz, ``S[a, b] = f(b - a)``, so only the
    profile ``f`` at ``n`` offsets is computed and no encoding is built. Otherwise the rows are
    encoded and compared directly.

    Parameters
    ----------
    positions : int or array_like of float
        As for :func:`pe_core.sinusoidal_encoding`; for display keep ``n`` around 1000.
    d_model, base, convention
        As for :func:`pe_core.sinusoidal_encoding`.
    kind : {"cosine", "dot", "distance"}, optional

    Returns
    -------
    ndarray of float64, shape (n, n)

    Examples
    --------
    >>> similarity_matrix(3, 4, base=100.0).round(4)
    array([[1.    , 0.7677, 0.282 ],
           [0.7677, 1.    , 0.7677],
           [0.282 , 0.7677, 1.    ]])
    """
    d_model = check_d_model(d_model)
    base = check_base(base)
    kind = check_choice(kind, "kind", KINDS)
    conv = get_convention(convention)
    checked = check_positions(positions)
    check_size(checked.n * checked.n, f"a similarity matrix of {checked.n} x {checked.n}")
    if checked.n == 0:
        return np.zeros((0, 0))
    layout = conv.column_layout(d_model)
    all_zero = layout.n_frequencies == 0  # cosine undefined in closed form: 0, as for rows
    if layout.is_paired and checked.is_progression and not all_zero:
        offsets = checked.step * np.arange(checked.n, dtype=np.float64)
        profile = offset_similarity(offsets, d_model, base=base, convention=convention, kind=kind)
        return scipy.linalg.toeplitz(profile)
    rows = _encode(checked, d_model, base, convention, np.dtype(np.float64))
    if kind == "cosine":
        return cosine_similarity(rows)
    if kind == "dot":
        return rows @ rows.T
    # Differences of rows, not the Gram identity |a|^2 + |b|^2 - 2 a.b, whose cancellation leaves
    # about 1e-7 where the distance is 0 (the diagonal) or tiny.
    return scipy.spatial.distance.squareform(scipy.spatial.distance.pdist(rows))
