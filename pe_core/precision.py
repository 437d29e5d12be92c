"""Rounding to the floating-point formats that models store encodings in."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._validation import as_real_array, check_choice

__all__ = ["PRECISIONS", "FloatFormat", "quantize"]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: significand bits (with the implicit one), exponent range."""

    name: str
    significand_bits: int
    min_exponent: int  # exponent of the smallest normal number, 2**min_exponent
    max_finite: float

    @property
    def unit_roundoff(self) -> float:
        """Largest relative rounding error for normal numbers: ``2**-significand_bits``."""
        return 2.0**-self.significand_bits

    @property
    def overflow_threshold(self) -> float:
        """Smallest magnitude that rounds to inf: the largest finite number plus half its ulp
        (65520 for float16: 65505 to 65519 still round down to 65504)."""
        _, exponent = math.frexp(self.max_finite)  # max_finite = m * 2**exponent, 0.5 <= m < 1
        return self.max_finite + 2.0 ** (exponent - 1 - self.significand_bits)

    @property
    def subnormal_half_spacing(self) -> float:
        """Largest absolute rounding error among subnormal numbers."""
        return 2.0 ** (self.min_exponent - self.significand_bits)


#: The four precisions of :func:`quantize` and :func:`pe_core.uniqueness_report`.
PRECISIONS: MappingProxyType[str, FloatFormat] = MappingProxyType(
    {
        "float64": FloatFormat("float64", 53, -1022, float(np.finfo(np.float64).max)),
        "float32": FloatFormat("float32", 24, -126, float(np.finfo(np.float32).max)),
        "float16": FloatFormat("float16", 11, -14, 65504.0),
        "bfloat16": FloatFormat("bfloat16", 8, -126, float.fromhex("0x1.fep127")),
    }
)


_CHUNK = 1 << 16


def check_precision(precision: object) -> FloatFormat:
    """Look up a precision by name (or a NumPy/ml_dtypes dtype with one of those names)."""
    if precision is not None and not isinstance(precision, str):
        with contextlib.suppress(TypeError, ValueError):  # not a dtype: check_choice explains
            precision = np.dtype(precision).name
    return PRECISIONS[check_choice(precision, "precision", tuple(PRECISIONS))]


def round_to_precision(values: NDArray, name: str) -> NDArray[np.float64]:
    """Round float64 ``values`` to the nearest number of format ``name`` (ties to even), as float64.

    No range checks: values beyond the format's range become inf, as a real cast would.
    """
    values = np.asarray(values, dtype=np.float64)
    if name == "float64":
        return values.copy()
    if name in ("float32", "float16"):
        return values.astype(name).astype(np.float64)  # NumPy rounds float64 directly
    fmt = PRECISIONS[name]
    rounded = np.empty_like(values)
    flat_in, flat_out = values.reshape(-1), rounded.reshape(-1)
    for first in range(0, flat_in.size, _CHUNK):  # chunks: the temporaries stay small
        chunk = flat_in[first : first + _CHUNK]
        # Scale so that the last significand bit has weight 1, round ties to even, scale back.
        # Scaling by a power of two is exact, so this is one correct rounding from float64.
        _, exponent = np.frexp(chunk)
        lowest_bit = np.maximum(exponent - 1, fmt.min_exponent) - (fmt.significand_bits - 1)
        result = np.ldexp(np.round(np.ldexp(chunk, -lowest_bit)), lowest_bit)
        with np.errstate(over="ignore"):
            overflow = np.abs(result) > fmt.max_finite
        result[overflow] = np.copysign(np.inf, chunk[overflow])
        flat_out[first : first + _CHUNK] = result
    return rounded


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
        raise ValueError(
            f"x has values beyond the largest finite {fmt.name} number {fmt.max_finite:.6g}: "
            f"largest |x| is {np.max(np.abs(values)):.6g} (a cast would give inf)"
        )
    return rounded
