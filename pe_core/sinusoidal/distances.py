"""Distances between the encodings of given positions, exactly or as a framework rounds them
(positions, angles or outputs in float32, float16 or bfloat16): the pairs that
:func:`pe_core.uniqueness_report` summarizes, one by one."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import (
    as_real_array,
    check_choice,
    check_positions_for,
    check_precision,
    check_representable,
    check_size,
)
from pe_core._numerics.kernels import (
    phasors,
    round_to_precision,
    squared_distance_profile,
)
from pe_core.bank import ColumnLayout, FrequencyBank
from pe_core.errors import InputError
from pe_core.sinusoidal.conventions import resolve_bank
from pe_core.sinusoidal.uniqueness import CASTS, rounded_rows

__all__ = ["encoding_distances"]


#: Values (rows x d_model) of rounded encodings computed at once by :func:`encoding_distances`.
_DISTANCE_BLOCK = 1 << 18


def encoding_distances(
    first: ArrayLike,
    second: ArrayLike,
    d_model: int | FrequencyBank,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
    precision: str = "float64",
    cast: str = "outputs",
) -> NDArray[np.float64]:
    """Euclidean distance between the encodings of ``first[j]`` and ``second[j]``, as a model
    stores them.

    Parameters
    ----------
    first, second : array_like of float, same shape
        Positions, compared element by element (``second = first + 1``: each position with the
        next).
    d_model, base, convention
        As for :func:`pe_core.sinusoidal_encoding`.
    precision, cast
        As for :func:`uniqueness_report`: the format and where the rounding happens.

    Returns
    -------
    ndarray of float64, same shape as ``first``
        0 where the two stored encodings are equal: a collision.

    Raises
    ------
    ValueError
        For invalid arguments, shapes that differ, positions or angles that overflow
        ``precision`` (cast "positions", "angles"), and more than :data:`pe_core.MAX_ELEMENTS`
        rounded values to compute (cast "angles" and "outputs" compute both rows).

    Notes
    -----
    In float64 and with ``cast="positions"`` the distance has a closed form in the (rounded)
    offset, :math:`2\\sqrt{\\sum_i \\sin^2(w_i \\delta / 2)}`, plus the unpaired column's
    own term for odd ``d_model``; no row is built. With "angles" and "outputs" the rounded rows
    are computed a block at a time and subtracted.

    Examples
    --------
    >>> encoding_distances([256, 302], [257, 303], 512, precision="bfloat16", cast="positions")
    array([0.    , 6.9665])
    """
    bank = resolve_bank(d_model, base, convention)
    fmt = check_precision(precision)
    cast = check_choice(cast, "cast", CASTS)
    first_values = as_real_array(first, "first")
    second_values = as_real_array(second, "second")
    if first_values.shape != second_values.shape:
        raise InputError(
            f"first and second must have the same shape, got first of shape "
            f"{first_values.shape} and second of shape {second_values.shape}"
        )
    layout, freqs, d_model = bank.layout, bank.frequencies, bank.d_model
    flat_a = check_positions_for(bank, first_values.ravel(), "first")
    flat_b = check_positions_for(bank, second_values.ravel(), "second")
    for checked in (flat_a, flat_b):
        check_representable(checked, freqs, fmt, cast)
    if fmt.name == "float64" or cast == "positions":
        ka = round_to_precision(flat_a.values, fmt.name)
        kb = round_to_precision(flat_b.values, fmt.name)
        distances = _closed_form_distance(ka, kb, layout, freqs)
    else:
        check_size(2 * flat_a.n * d_model, f"{flat_a.n:,} pairs of rounded rows")
        distances = np.empty(flat_a.n)
        rows = max(1, _DISTANCE_BLOCK // d_model)
        for start in range(0, flat_a.n, rows):
            block = slice(start, start + rows)
            row_a = rounded_rows(flat_a.values[block], layout, freqs, fmt, cast)
            row_b = rounded_rows(flat_b.values[block], layout, freqs, fmt, cast)
            distances[block] = np.linalg.norm(row_a - row_b, axis=1)
    return distances.reshape(first_values.shape)


def _closed_form_distance(ka, kb, layout: ColumnLayout, freqs) -> NDArray[np.float64]:
    """``|PE(ka) - PE(kb)|`` without rows: each pair contributes ``4 sin^2(w (kb - ka) / 2)``
    (no cancellation), an unpaired sin column ``(sin(kb w) - sin(ka w))^2``."""
    squared = np.zeros(ka.shape)
    paired = freqs[: layout.n_cos]
    if paired.size:
        # The pairs' part depends on the offset only: computed once per distinct offset (a few
        # for neighbours whose positions were rounded, instead of one per pair of positions).
        offsets, inverse = np.unique(kb - ka, return_inverse=True)
        squared += squared_distance_profile(offsets, paired)[inverse.ravel()]
    for i in range(layout.n_cos, layout.n_sin):  # the unpaired sin column of an odd d_model
        sin_a = phasors(ka, freqs[i : i + 1]).imag[:, 0]
        sin_b = phasors(kb, freqs[i : i + 1]).imag[:, 0]
        squared += (sin_b - sin_a) ** 2
    return np.sqrt(squared)
