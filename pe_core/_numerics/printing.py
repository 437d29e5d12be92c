"""Numbers that went through decimal text: the decimals and significant digits a set of values
shows, and how far each written value may be from the number that was written (numerics only,
no domain module).

A value read from text (a CSV, a pasted numpy print, ``.tolist()``) is a decimal string parsed
to the nearest float64. What it was before it was written is known only to half a unit of its
last digit: :class:`Printing` says which digits those are for a whole table, from its values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

#: Most decimals or significant digits read as a printing: beyond, float64's own rounding of
#: the parsed value (about 2e-16 of it) is no longer far below the digit's unit, and a binary
#: float64 value would pass for a printed one.
MAX_DIGITS = 12

#: Relative error of a decimal string parsed to float64 and scaled by a power of ten (two
#: roundings of 2**-53, with a margin).
_PARSE_ERROR = 4.5e-16

#: Values examined at a time (the temporaries stay a few MiB).
_CHUNK = 1 << 18


def _chunks(values: NDArray) -> list[NDArray[np.float64]]:
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    return [flat[i : i + _CHUNK] for i in range(0, flat.size, _CHUNK)] or [flat]


def _whole(scaled: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Which ``scaled`` values are whole numbers up to the rounding of a parsed decimal."""
    with np.errstate(invalid="ignore"):
        return np.abs(scaled - np.rint(scaled)) <= _PARSE_ERROR * np.abs(scaled)


def _exponents(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``floor(log10 |v|)`` (0 for zeros), corrected where log10 lands a hair off a power."""
    magnitude = np.abs(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log10(np.where(magnitude > 0, magnitude, 1.0)))
        ones = np.ones_like(magnitude)
        exponent -= magnitude < _scaled(ones, exponent)  # 0.001 read as 1e-3 - 1 ulp
        exponent += magnitude >= _scaled(ones, exponent + 1)
    return exponent


#: Powers of ten exact in float64 (10**22 is the last), and beyond as near as float64 holds.
_POWERS_OF_TEN = 10.0 ** np.arange(0, 309, dtype=np.float64)


def _scaled(values: NDArray[np.float64], power: NDArray[np.float64] | int) -> NDArray[np.float64]:
    """``values * 10**power`` for whole ``power``, dividing by an exact power of ten where
    ``power`` is negative (a table lookup, not a power per value)."""
    power = np.asarray(power, dtype=np.float64)
    index = np.clip(np.abs(np.nan_to_num(power)), 0, _POWERS_OF_TEN.size - 1).astype(np.int64)
    factor = _POWERS_OF_TEN[index]
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(power >= 0, values * factor, values / factor)


def _decimals_of(values: NDArray[np.float64]) -> int | None:
    """The fewest decimals (up to :data:`MAX_DIGITS`) that every value is written with."""
    chunks = _chunks(values)
    for digits in range(MAX_DIGITS + 1):
        if all(np.all(_whole(_scaled(chunk, digits))) for chunk in chunks):
            return digits
    return None


def own_digits(values: NDArray) -> NDArray[np.float64]:
    """Each value's significant digits as the shortest decimal that parses to it (0 for a zero;
    ``inf`` beyond :data:`MAX_DIGITS` + 3: no decimal text of that length wrote it)."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    digits = np.full(flat.size, np.inf)
    digits[flat == 0] = 0.0
    for first in range(0, flat.size, _CHUNK):
        chunk = flat[first : first + _CHUNK]
        found = digits[first : first + _CHUNK]
        open_ = np.flatnonzero(~np.isfinite(found))  # the values still without their count
        part, exponent = chunk[open_], _exponents(chunk[open_])
        for count in range(1, MAX_DIGITS + 4):
            if not open_.size:
                break
            whole = _whole(_scaled(part, count - 1 - exponent))
            found[open_[whole]] = count
            open_, part, exponent = open_[~whole], part[~whole], exponent[~whole]
    return digits.reshape(np.shape(values))


def _significant_of(values: NDArray[np.float64], digits: NDArray | None = None) -> int | None:
    """The fewest significant digits (up to :data:`MAX_DIGITS`) every value is written with
    (``digits``: each value's own, when already known)."""
    if digits is not None:
        largest = float(np.max(digits, initial=0.0))
        return None if largest > MAX_DIGITS else max(1, int(largest))
    largest = 0.0
    for chunk in _chunks(values):
        largest = max(largest, float(np.max(own_digits(chunk), initial=0.0)))
        if largest > MAX_DIGITS:
            return None
    return max(1, int(largest))


@dataclass(frozen=True)
class Printing:
    """How a table's values were written as decimal text, as far as the values show.

    Attributes
    ----------
    decimals : int or None
        Every value has at most this many digits after the point (``%.4f`` writes 4); None
        when some value has more than :data:`MAX_DIGITS`.
    significant : int or None
        Every value has at most this many significant digits (``%.8g`` writes 8, numpy's print
        of a float16 array at most 5); None beyond :data:`MAX_DIGITS`.

    A value so written is within :meth:`half_unit` of the number that was written: half a unit
    of the digit at ``max(-decimals, exponent + 1 - significant)``, whichever rule wrote it.

    >>> Printing.of(np.array([0.8415, 0.5403, 0.0004])).words
    '4 decimals'
    >>> Printing.of(np.array([0.84147098, 6.3095734e-05])).words
    '8 significant digits'
    """

    decimals: int | None
    significant: int | None

    @classmethod
    def of(cls, values: NDArray, *, digits: NDArray | None = None) -> Printing | None:
        """The printing the values show, or None when they show none (binary float64 values,
        or an empty array); ``digits``, each value's :func:`own_digits` when known."""
        values = np.asarray(values, dtype=np.float64)
        if values.size == 0 or not np.all(np.isfinite(values)):
            return None
        decimals, significant = _decimals_of(values), _significant_of(values, digits)
        if decimals is None and significant is None:
            return None
        return cls(decimals, significant)

    @property
    def by_decimals(self) -> bool:
        """Whether the decimals are the rule that bounds the values (``%.4f``, numpy's print
        of float64 at 8 decimals) rather than the significant digits (``%.8g``)."""
        return self.decimals is not None and (
            self.significant is None or self.decimals <= self.significant
        )

    @property
    def words(self) -> str:
        """ "4 decimals" or "8 significant digits"."""
        if self.by_decimals:
            return f"{self.decimals} decimal" + ("" if self.decimals == 1 else "s")
        return f"{self.significant} significant digit" + ("" if self.significant == 1 else "s")

    @property
    def code(self) -> str:
        """A printf format that writes so: ``%.4f`` or ``%.8g``."""
        return f"%.{self.decimals}f" if self.by_decimals else f"%.{self.significant}g"

    def half_unit(self, values: NDArray) -> NDArray[np.float64]:
        """How far each written value may be from the number it wrote (half a unit of the last
        digit the rule writes; for a zero, of the last decimal, or 0 when only significant
        digits are known: ``%.8g`` writes no number as 0 but zero itself)."""
        values = np.asarray(values, dtype=np.float64)
        exponent = _exponents(values)
        last = np.full(values.shape, -np.inf)
        if self.decimals is not None:
            last = np.maximum(last, -float(self.decimals))
        if self.significant is not None:
            last = np.maximum(last, np.where(values != 0, exponent + 1 - self.significant, -np.inf))
        with np.errstate(over="ignore"):
            return np.where(np.isfinite(last), 0.5 * _scaled(np.ones_like(values), last), 0.0)

    def round(self, values: NDArray) -> NDArray[np.float64]:
        """``values`` written by this printing and read back (to within float64's rounding of
        the decimal: a half-way digit may round either way)."""
        values = np.asarray(values, dtype=np.float64)
        exponent = _exponents(values)
        last = np.full(values.shape, -np.inf)
        if self.decimals is not None:
            last = np.maximum(last, -float(self.decimals))
        if self.significant is not None:
            last = np.maximum(last, np.where(values != 0, exponent + 1 - self.significant, -np.inf))
        last = np.where(np.isfinite(last), last, 0.0)
        return _scaled(np.rint(_scaled(values, -last)), last)


def own_unit(values: NDArray, digits: NDArray | None = None) -> NDArray[np.float64]:
    """The unit of each value's last significant digit as the shortest decimal writes it
    (0 for zeros and for values no short decimal wrote); ``digits``, the values' own when
    known."""
    values = np.asarray(values, dtype=np.float64)
    digits = own_digits(values) if digits is None else digits
    last = _exponents(values) + 1 - digits
    return np.where(np.isfinite(digits) & (values != 0), _scaled(np.ones_like(values), last), 0.0)


def shows_format(values: NDArray, printing: Printing, name: str, unit_roundoff: float) -> bool:
    """Whether written ``values`` show that they were numbers of format ``name`` (of this unit
    roundoff): the digits are finer than the format's spacing, and each value reads back within
    its written half unit of a number of the format (half a unit of the printing's last digit,
    or of its own last digit for numpy's shortest form of each number)."""
    from pe_core._numerics.formats import round_to_precision

    values = np.asarray(values, dtype=np.float64).reshape(-1)
    values = values[values != 0]
    if values.size == 0:
        return False
    rule = printing.half_unit(values)
    # Where the digits are finer than the format's spacing, a value not of the format is
    # caught (8 digits of a mantissa near 1 are coarser than float32's, of one near 9 finer):
    # on at least half of the values, and four, the test says something.
    telling = np.count_nonzero(rule < 0.5 * unit_roundoff * np.abs(values))
    if telling < max(4, values.size // 2):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        moved = np.abs(round_to_precision(values, name) - values)
    allowed = np.maximum(rule, 0.5 * own_unit(values)) * (1 + 1e-9) + 4 * _PARSE_ERROR * np.abs(
        values
    )
    return bool(np.all(moved <= allowed))
