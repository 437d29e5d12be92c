"""Similarity between encoded positions: cosine similarity of rows, and the closed-form offset
profile that needs no ``L x L`` matrix."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.spatial.distance
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import (
    MAX_POSITION,
    Positions,
    as_real_array,
    check_choice,
    check_positions,
    check_positions_for,
    check_size,
)
from pe_core._numerics.kernels import (
    cos_sum_progression,
    distance_from_dot,
    dot_profile,
    encode,
    squared_distance_profile,
)
from pe_core.bank import FrequencyBank
from pe_core.errors import InputError
from pe_core.sinusoidal.conventions import resolve_bank

__all__ = ["cosine_similarity", "offset_similarity", "similarity_matrix"]

KINDS = ("cosine", "dot", "distance")


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
        raise InputError(
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


def _closed_form_bank(bank: FrequencyBank, kind: str) -> FrequencyBank:
    """``bank``, if the similarity of PE(k) and PE(k + offset) has a closed form in the offset."""
    if not bank.is_paired:
        raise InputError(
            f"the similarity of PE(k) and PE(k + offset) has no closed form for odd "
            f"d_model={bank.d_model} ({bank.description or 'this bank'}): its unpaired column "
            f"sin(k * w) has no cos partner, so the dot product depends on k, not only on the "
            f"offset; use an even d_model, the 'tensor2tensor' convention (its odd column is "
            f"zero), or cosine_similarity of encoding rows"
        )
    if kind == "cosine" and bank.n_frequencies == 0:
        raise InputError(
            f"cosine similarity is undefined for d_model={bank.d_model} "
            f"({bank.description or 'this bank'}): every encoding is the zero vector"
        )
    return bank


def _profile(offsets: Positions, freqs: NDArray[np.float64], kind: str) -> NDArray[np.float64]:
    """Dot product (``kind="dot"``) or distance of PE(k), PE(k + offset), for checked offsets."""
    if offsets.is_progression and offsets.n >= 64:
        dot = cos_sum_progression(float(offsets.start), float(offsets.step), offsets.n, freqs)
        if kind == "dot":
            return dot
        return distance_from_dot(dot, lambda index: offsets.values[index], freqs)
    if kind == "dot":
        return dot_profile(offsets.values, freqs)
    return np.sqrt(squared_distance_profile(offsets.values, freqs))


def offset_similarity(
    offsets: ArrayLike,
    d_model: int | FrequencyBank,
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
    d_model : int or FrequencyBank
        Width of the encoding, or a bank. With an unpaired sin column ("vaswani" and "split" at
        odd ``d_model``) there is no closed form (see Raises).
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

    It is even in the offset: the similarity alone does not tell which position comes first
    (the encodings do: ``PE(k + d)`` and ``PE(k - d)`` differ, see
    :func:`pe_core.relative_rotation`).
    Integer offsets in arithmetic progression (e.g. ``np.arange(L)``) are evaluated by two
    matrix products of small exact tables instead of ``L * h`` cosines.

    Examples
    --------
    >>> offset_similarity([0, 1, -1], 4, base=100.0).round(6)
    array([1.      , 0.767653, 0.767653])
    >>> float(offset_similarity(1.0, 512, kind="distance").round(4))
    3.7143
    """
    bank = resolve_bank(d_model, base, convention)
    kind = check_choice(kind, "kind", KINDS)
    _closed_form_bank(bank, kind)
    values = as_real_array(offsets, "offsets")
    flat = values.ravel()
    if flat.size and np.max(np.abs(flat)) > MAX_POSITION:
        raise InputError(
            f"offsets must lie within +/-2**53 (= {MAX_POSITION:.0f}), got an offset of "
            f"magnitude {np.max(np.abs(flat)):.6g}"
        )
    check_size(flat.size, "offsets")
    checked = check_positions_for(bank, flat, "offsets")
    result = _profile(checked, bank.frequencies, "distance" if kind == "distance" else "dot")
    if kind == "cosine":
        result = np.clip(result / bank.n_frequencies, -1.0, 1.0)
    return result.reshape(values.shape)


def similarity_matrix(
    positions: int | ArrayLike,
    d_model: int | FrequencyBank,
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
    bank = resolve_bank(d_model, base, convention)
    kind = check_choice(kind, "kind", KINDS)
    checked = check_positions(positions)
    check_size(checked.n * checked.n, f"a similarity matrix of {checked.n} x {checked.n}")
    if checked.n == 0:
        return np.zeros((0, 0))
    all_zero = bank.n_frequencies == 0  # cosine undefined in closed form: 0, as for rows
    if bank.is_paired and checked.is_progression and not all_zero:
        offsets = checked.step * np.arange(checked.n, dtype=np.float64)
        profile = offset_similarity(offsets, bank, kind=kind)
        return scipy.linalg.toeplitz(profile)
    rows = encode(check_positions_for(bank, positions), bank, np.dtype(np.float64))
    if kind == "cosine":
        return cosine_similarity(rows)
    if kind == "dot":
        return rows @ rows.T
    # Differences of rows, not the Gram identity |a|^2 + |b|^2 - 2 a.b, whose cancellation leaves
    # about 1e-7 where the distance is 0 (the diagonal) or tiny.
    return scipy.spatial.distance.squareform(scipy.spatial.distance.pdist(rows))
