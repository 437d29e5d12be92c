"""transformers' float32 arithmetic for RoPE, in NumPy.

transformers computes ``inv_freq`` with float32 tensors. PyTorch casts a Python number to the
tensor's float32 and rounds each operation once, as NumPy's float32 does (checked with torch
2.13/2.14 on CPU: ``x / c``, ``x * c``, ``x - c`` and ``c / x``, which torch computes as
``reciprocal(x) * c``). The one operation that differs is the power: torch's float32 ``pow``
(SLEEF, within 1 unit) and the correctly rounded power used here disagree by one float32 unit
in about 1% of the values. What matters more is the order: the exponent ``2i / d`` is rounded
to float32 *before* the power, an error that the power multiplies by ``ln(base)`` (up to five
float32 units for a head of 96 and base 1,000,000: :func:`pe_core.inv_freq_float32_ulps`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

F32 = np.float32


def exponents(stop: int, dim: int) -> NDArray[np.float32]:
    """``torch.arange(0, stop, 2, dtype=torch.int64).float() / dim``."""
    return np.arange(0, stop, 2, dtype=np.int64).astype(F32) / F32(dim)


def power(base: float, exponent: NDArray[np.float32]) -> NDArray[np.float32]:
    """``base ** exponent`` with ``base`` cast to float32, correctly rounded."""
    return (np.float64(F32(base)) ** exponent.astype(np.float64)).astype(F32)


def over(numerator: float, values: NDArray[np.float32]) -> NDArray[np.float32]:
    """``numerator / values`` as torch computes it: ``reciprocal(values) * numerator``."""
    return (F32(1) / values) * F32(numerator)


def inverse_powers(base: float, stop: int, dim: int) -> NDArray[np.float32]:
    """``1.0 / (base ** (torch.arange(0, stop, 2).float() / dim))``: plain RoPE's ``inv_freq``."""
    return over(1.0, power(base, exponents(stop, dim)))


def tensor(values: ArrayLike) -> NDArray[np.float32]:
    """``torch.tensor(values, dtype=torch.float32)``."""
    return np.asarray(values, dtype=np.float64).astype(F32)
