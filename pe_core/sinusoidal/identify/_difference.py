"""What the difference between a table and an exact encoding is: the formats its values are
stored in and the decimals they were written with, and the simplest story (exact, a rounding,
arithmetic in a format, each possibly written as decimal text afterwards) that explains the
difference on every row."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pe_core._numerics.formats import PRECISIONS, round_to_precision
from pe_core._numerics.printing import Printing, own_digits, own_unit
from pe_core.sinusoidal.identify.results import _NO_MATCH, Precision, PrecisionKind

#: A float64 table within this of the exact one is "exact in float64" (a few ulps of 1).
_FLOAT64_EXACT = 4e-15

#: The smaller formats a table may have been stored or computed in, most precise first.
_FORMATS = ("float32", "float16", "bfloat16")

#: Rows used to rank candidates and to try a format on first (spread out).
_RANK_ROWS = 64

#: Values compared at a time when a table is checked against a format.
_CHUNK_VALUES = 1 << 18


def _representable(values: np.ndarray, name: str) -> bool:
    """Whether every value is a number of format ``name`` (a sample of rows first: most tables
    are refused by it at once)."""

    def holds(part):
        with np.errstate(over="ignore"):
            return bool(np.array_equal(round_to_precision(part, name), part))

    return holds(values[_rank_rows(values.shape[0])]) and holds(values)


def _written_from(values: np.ndarray, name: str, unit: np.ndarray) -> bool:
    """Whether decimal text could have written numbers of format ``name`` as ``values``: each
    value within one unit (``unit``: of its own last digit) of a number of the format (a
    correctly rounded decimal is within half of it; numpy's shortest form, at a power of two,
    within one). Only a printing finer than the format's spacing can refuse a format."""
    flat, units = values.reshape(-1), unit.reshape(-1)
    for i in range(0, flat.size, _CHUNK_VALUES):
        part = flat[i : i + _CHUNK_VALUES]
        with np.errstate(over="ignore", invalid="ignore"):
            moved = np.abs(round_to_precision(part, name) - part)
        if not np.all(moved <= units[i : i + _CHUNK_VALUES] * (1 + 1e-9)):
            return False
    return True


@dataclass(frozen=True)
class _Storage:
    """What the matrix's own values say about how it was stored and written."""

    formats: tuple[str, ...]  # smaller formats every value is exactly representable in
    #: The decimals or significant digits the values were written with, when they are no
    #: binary numbers of any smaller format (else None).
    printing: Printing | None = None
    #: With a printing: the formats the written numbers may have been (the printing cannot
    #: rule them out), most precise first.
    printed_formats: tuple[str, ...] = ()
    #: ``(scale, offset)`` when the values judged are ``scale * written + offset`` (a
    #: rescaled table undone): the printing is the written values', scaled.
    affine: tuple[float, float] | None = None

    @property
    def decimals(self) -> int | None:
        """The decimals written, when the printing's rule is a number of decimals."""
        if self.printing is None:
            return None
        return self.printing.decimals if self.printing.by_decimals else None

    @property
    def stories(self) -> tuple[str, ...]:
        """The formats the values may have been stored in before any printing."""
        return self.printed_formats if self.printing is not None else self.formats

    @property
    def arithmetic(self) -> str:
        """The format the values could have been computed in, as far as they tell: the least
        precise format they all fit in (float16 values are float32 values too), else float64."""
        return self.stories[-1] if self.stories else "float64"

    def slacks(self, values: np.ndarray, stories) -> dict:
        """:meth:`slack` for several stories at once (the printing's half units computed
        once)."""
        if self.printing is None:
            return dict.fromkeys(stories)
        scale = 1.0
        if self.affine is not None:
            scale, offset = self.affine
            values = (values - offset) / scale
        rule = self.printing.half_unit(values)
        found = {}
        for story in stories:
            slack = rule
            if story is not None:
                with np.errstate(over="ignore", invalid="ignore"):
                    moved = np.abs(round_to_precision(values, story) - values)
                slack = np.maximum(rule, moved)
            found[story] = abs(scale) * slack
        return found

    def slack(self, values: np.ndarray, story: str | None) -> np.ndarray | None:
        """How far each written value may be from the number it wrote under a story (None: the
        exact values written; a format: its numbers written, by a rule of digits or in the
        format's shortest form); None without a printing (the values are what was stored)."""
        if self.printing is None:
            return None
        scale = 1.0
        if self.affine is not None:
            scale, offset = self.affine
            values = (values - offset) / scale
        rule = self.printing.half_unit(values)
        if story is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                moved = np.abs(round_to_precision(values, story) - values)
            rule = np.maximum(rule, moved)
        return abs(scale) * rule

    def precision(self, kind: PrecisionKind, fmt: str | None = None) -> Precision:
        """A :class:`Precision` of this kind, with the printing's digits."""
        if self.printing is None:
            return Precision(kind, format=fmt)
        if kind is PrecisionKind.EXACT:
            kind = PrecisionKind.DECIMALS
        return Precision(
            kind,
            format=fmt,
            decimals=self.printing.decimals,
            significant=self.printing.significant,
        )


def _storage(values: np.ndarray, dtype: np.dtype) -> _Storage:
    """The formats the values fit in (an array of float32 or float16 needs no check for those);
    for values that fit none, the printing they show and the formats it may have written."""
    known = {"float16": ("float32", "float16"), "float32": ("float32",)}.get(dtype.name, ())
    formats = tuple(name for name in _FORMATS if name in known or _representable(values, name))
    if formats:
        return _Storage(formats)
    sample = values[_rank_rows(values.shape[0])]
    if Printing.of(sample) is None:  # binary float64 values: most are refused by the sample
        return _Storage(())
    digits = own_digits(values)
    printing = Printing.of(values, digits=digits)
    if printing is None:
        return _Storage(())
    unit = own_unit(values, digits)
    printed = tuple(name for name in _FORMATS if _written_from(values, name, unit))
    return _Storage((), printing, printed)


def _explain(
    row_excess: dict[str | None, np.ndarray], positions: np.ndarray, storage: _Storage
) -> Precision:
    """Name the difference between a matrix and an exact encoding from each story's largest
    difference per row beyond what its printing explains (``row_excess[None]`` for the exact
    values written, ``row_excess[format]`` for that format's numbers written; all the same
    array when nothing was printed)."""
    exact = row_excess[None]
    if float(np.max(exact)) <= _FLOAT64_EXACT:
        return storage.precision(PrecisionKind.EXACT)
    for name in storage.stories:  # most precise first
        largest = float(np.max(row_excess.get(name, exact)))
        if largest <= PRECISIONS[name].unit_roundoff * (1 + 1e-9) + _FLOAT64_EXACT:
            return storage.precision(PrecisionKind.ROUNDED, name)
    # Angles k * w computed in a format: k and w rounded, then their product, so the angle is off
    # by up to about 3u|k w| <= 3u|k| (w <= 1), and sin and cos move as much; plus the rounding
    # of the result (and a lenient factor for the libraries' own sin and exp).
    # A table stored in float64 may still have been computed in float32 (diffusers forms its
    # 2-D coordinates in float32 and the rest in float64): the least precise story is tried last.
    for name in dict.fromkeys([storage.arithmetic, "float32"]):
        row_errors = row_excess.get(name, exact)
        u = PRECISIONS[name].unit_roundoff
        bound = 4.0 * u * (np.abs(positions) + 1.0) + _FLOAT64_EXACT
        # Errors beyond a quarter radian would no longer say anything: noise fits as well.
        if float(np.max(row_errors)) <= _ARITHMETIC_LIMIT and np.all(row_errors <= bound):
            return storage.precision(PrecisionKind.COMPUTED, name)
    return _NO_MATCH


#: Largest difference still explained by computing in a smaller format.
_ARITHMETIC_LIMIT = 0.25


def _hidden_formats(storage: _Storage, precision: Precision) -> tuple[str, ...]:
    """The formats a printed table may have been stored in that its digits cannot show (they
    are coarser than the format's rounding), beside the story named: "exact, written with 6
    significant digits" may as well be float32 numbers written so."""
    if storage.printing is None or precision.kind not in (
        PrecisionKind.DECIMALS,
        PrecisionKind.ROUNDED,
    ):
        return ()
    named = precision.format
    order = ("float64", *_FORMATS)
    after = order.index(named) + 1 if named in order else 1
    hidden = []
    for name in order[after:]:
        if name in storage.printed_formats:
            hidden.append(name)
        else:
            break
    return tuple(hidden)


def _spread_rows(n: int, count: int) -> np.ndarray:
    """At most ``count`` of the rows ``0 .. n-1``, evenly spread, the first and last included."""
    if n <= count:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, count).round().astype(np.int64))


def _rank_rows(n: int) -> np.ndarray:
    return _spread_rows(n, _RANK_ROWS)
