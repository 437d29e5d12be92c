"""Rounding to the floating-point formats that models store encodings in."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import as_real_array, check_precision
from pe_core._numerics.formats import PRECISIONS, FloatFormat
from pe_core._numerics.kernels import round_to_precision
from pe_core.errors import InputError

__all__ = ["PRECISIONS", "FloatFormat", "quantize"]


def quantize(x: ArrayLike, precision: str) -> NDArray[np.float64]:
    """Round ``x`` to ``precision`` and return it as float64 for analysis.

    Parameters
    ----------
    x : array_like of float
        Finite real values.
    precision : {"float64", "float32", "float16", "bfloat16"}
        The format to round to (round to nearest, ties to even, directly from float64).

    Returns
    -------
    ndarray of float64, same shape as ``x``
        Every value is exactly representable in ``precision``.

    Raises
    ------
    ValueError
        For NaN or inf in ``x``, an unknown precision, or values beyond the format's largest
        finite number (65504 for float16), which a real cast would turn into inf.
    TypeError
        For a non-numeric ``x``.

    Notes
    -----
    bfloat16 keeps float32's exponent range with an 8-bit significand; it is rounded here
    without ml_dtypes, in one step from float64 (no double rounding through float32).

    Examples
    --------
    >>> quantize([257.0, 1 / 3], "bfloat16").tolist()
    [256.0, 0.333984375]
    >>> quantize([2049.0], "float16").tolist()
    [2048.0]
    """
    fmt = check_precision(precision)
    values = as_real_array(x, "x")
    with np.errstate(over="ignore"):
        rounded = round_to_precision(values, fmt.name)
    if not np.all(np.isfinite(rounded)):
        raise InputError(
            f"x has values beyond the largest finite {fmt.name} number {fmt.max_finite:.6g}: "
            f"largest |x| is {np.max(np.abs(values)):.6g} (a cast would give inf)"
        )
    return rounded
