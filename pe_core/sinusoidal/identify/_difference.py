"""What the difference between a table and an exact encoding is: the formats and decimals
its values are written in, and the simplest story (exact, a rounding, arithmetic in a format)
that explains the difference on every row."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pe_core._numerics.formats import PRECISIONS, round_to_precision
from pe_core.sinusoidal.identify.results import _EXACT, _NO_MATCH, Precision, PrecisionKind

#: A float64 table within this of the exact one is "exact in float64" (a few ulps of 1).
_FLOAT64_EXACT = 4e-15

#: The smaller formats a table may have been stored or computed in, most precise first.
_FORMATS = ("float32", "float16", "bfloat16")

#: Rows used to rank candidates and to try a format on first (spread out).
_RANK_ROWS = 64


def _representable(values: np.ndarray, name: str) -> bool:
    """Whether every value is a number of format ``name`` (a sample of rows first: most tables
    are refused by it at once)."""

    def holds(part):
        with np.errstate(over="ignore"):
            return bool(np.array_equal(round_to_precision(part, name), part))

    return holds(values[_rank_rows(values.shape[0])]) and holds(values)


def _decimals(values: np.ndarray) -> int | None:
    """The smallest number of decimals (up to 9) that every value is written with, or None."""

    def written_with(part, digits):
        with np.errstate(over="ignore", invalid="ignore"):  # beyond 1.8e299: inf, not written
            scaled = part * 10.0**digits
            fraction = np.abs(scaled - np.round(scaled))
        return np.all(fraction <= 1e-6 * np.maximum(1.0, np.abs(scaled)))

    sample = values[_rank_rows(values.shape[0])]
    for digits in range(1, 10):
        if written_with(sample, digits) and written_with(values, digits):
            return digits
    return None


@dataclass(frozen=True)
class _Storage:
    """What the matrix's own values say about how it was stored."""

    formats: tuple[str, ...]  # smaller formats every value is exactly representable in
    decimals: int | None

    @property
    def arithmetic(self) -> str:
        """The format the values could have been computed in, as far as they tell: the least
        precise format they all fit in (float16 values are float32 values too), else float64."""
        return self.formats[-1] if self.formats else "float64"


def _storage(values: np.ndarray, dtype: np.dtype) -> _Storage:
    """The formats the values fit in (an array of float32 or float16 needs no check for those)."""
    known = {"float16": ("float32", "float16"), "float32": ("float32",)}.get(dtype.name, ())
    formats = tuple(name for name in _FORMATS if name in known or _representable(values, name))
    return _Storage(formats, _decimals(values) if not formats else None)


def _explain(row_errors: np.ndarray, positions: np.ndarray, storage: _Storage) -> Precision:
    """Name the difference between a matrix and an exact encoding, per row ``row_errors``."""
    largest = float(np.max(row_errors))
    if largest <= _FLOAT64_EXACT:
        return _EXACT
    for name in storage.formats:  # most precise first
        if largest <= PRECISIONS[name].unit_roundoff * (1 + 1e-9) + _FLOAT64_EXACT:
            return Precision(PrecisionKind.ROUNDED, format=name)
    if storage.decimals is not None and largest <= 0.5 * 10.0**-storage.decimals * (1 + 1e-6):
        return Precision(PrecisionKind.DECIMALS, decimals=storage.decimals)
    # Angles k * w computed in a format: k and w rounded, then their product, so the angle is off
    # by up to about 3u|k w| <= 3u|k| (w <= 1), and sin and cos move as much; plus the rounding
    # of the result (and a lenient factor for the libraries' own sin and exp).
    # A table stored in float64 may still have been computed in float32 (diffusers forms its
    # 2-D coordinates in float32 and the rest in float64): the least precise story is tried last.
    for name in dict.fromkeys([storage.arithmetic, "float32"]):
        u = PRECISIONS[name].unit_roundoff
        bound = 4.0 * u * (np.abs(positions) + 1.0) + _FLOAT64_EXACT
        # Errors beyond a quarter radian would no longer say anything: noise fits as well.
        if largest <= _ARITHMETIC_LIMIT and np.all(row_errors <= bound):
            return Precision(PrecisionKind.COMPUTED, format=name)
    return _NO_MATCH


#: Largest difference still explained by computing in a smaller format.
_ARITHMETIC_LIMIT = 0.25


def _spread_rows(n: int, count: int) -> np.ndarray:
    """At most ``count`` of the rows ``0 .. n-1``, evenly spread, the first and last included."""
    if n <= count:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, count).round().astype(np.int64))


def _rank_rows(n: int) -> np.ndarray:
    return _spread_rows(n, _RANK_ROWS)
