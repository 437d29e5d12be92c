"""The binary floating-point formats encodings are stored and computed in, and rounding to them
(data and one kernel, no argument checks)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray


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


#: The four precisions of :func:`pe_core.quantize` and :func:`pe_core.uniqueness_report`.
PRECISIONS: MappingProxyType[str, FloatFormat] = MappingProxyType(
    {
        "float64": FloatFormat("float64", 53, -1022, float(np.finfo(np.float64).max)),
        "float32": FloatFormat("float32", 24, -126, float(np.finfo(np.float32).max)),
        "float16": FloatFormat("float16", 11, -14, 65504.0),
        "bfloat16": FloatFormat("bfloat16", 8, -126, float.fromhex("0x1.fep127")),
    }
)


_ROUNDING_CHUNK = 1 << 16


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
    for first in range(0, flat_in.size, _ROUNDING_CHUNK):  # chunks: the temporaries stay small
        chunk = flat_in[first : first + _ROUNDING_CHUNK]
        # Scale so that the last significand bit has weight 1, round ties to even, scale back.
        # Scaling by a power of two is exact, so this is one correct rounding from float64.
        _, exponent = np.frexp(chunk)
        lowest_bit = np.maximum(exponent - 1, fmt.min_exponent) - (fmt.significand_bits - 1)
        result = np.ldexp(np.round(np.ldexp(chunk, -lowest_bit)), lowest_bit)
        with np.errstate(over="ignore"):
            overflow = np.abs(result) > fmt.max_finite
        result[overflow] = np.copysign(np.inf, chunk[overflow])
        flat_out[first : first + _ROUNDING_CHUNK] = result
    return rounded
