"""A bank of sinusoids: angular frequencies plus the columns their sin and cos occupy.

Every sinusoidal family is one: the paper's encoding and the layouts libraries use, rotary
encodings after any scaling, each axis of a 2-D encoding. The analyses of :mod:`pe_core`
(wavelengths, similarity, the rotation, uniqueness at low precision) take a bank wherever they
take a ``d_model``, so a family that builds a bank gets all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pe_core.errors import InputError, InputTypeError

__all__ = ["ColumnLayout", "FrequencyBank"]


@dataclass(frozen=True)
class ColumnLayout:
    """Where each frequency's sin and cos land in a row of ``d_model`` columns.

    ``sin_columns`` holds ``sin(k * w_i)`` for ``i = 0 .. n_sin - 1`` in order, ``cos_columns``
    holds ``cos(k * w_i)`` for ``i = 0 .. n_cos - 1``; the ``zero_columns`` are always 0.
    """

    d_model: int
    n_frequencies: int
    sin_columns: slice
    cos_columns: slice
    n_sin: int
    n_cos: int
    zero_columns: tuple[int, ...] = ()

    @classmethod
    def interleaved(cls, d_model: int) -> ColumnLayout:
        """``sin_0, cos_0, sin_1, cos_1, ...``; an odd last column is an unpaired sin."""
        half_up = (d_model + 1) // 2
        return cls(
            d_model,
            half_up,
            slice(0, d_model, 2),
            slice(1, d_model, 2),
            half_up,
            d_model // 2,
        )

    @classmethod
    def halves(cls, d_model: int, *, odd: str = "sin", first: str = "sin") -> ColumnLayout:
        """``[sin_0 .. sin_(h-1) | cos_0 .. cos_(h-1)]``, or the cos half first
        (``first="cos"``). For odd ``d_model`` the extra column is one more sin (``odd="sin"``)
        or a zero column at the end (``odd="zero"``)."""
        half_down = d_model // 2
        if odd == "zero":
            zeros = (d_model - 1,) if d_model % 2 else ()
            n_sin = n_cos = half_down
        else:
            zeros, n_sin, n_cos = (), (d_model + 1) // 2, half_down
        if first == "cos":
            cos_columns, sin_columns = slice(0, n_cos), slice(n_cos, n_cos + n_sin)
        else:
            sin_columns, cos_columns = slice(0, n_sin), slice(n_sin, n_sin + n_cos)
        return cls(d_model, n_sin, sin_columns, cos_columns, n_sin, n_cos, zeros)

    def __hash__(self) -> int:  # slices are not hashable before Python 3.12
        def key(columns: slice) -> tuple:
            return columns.start, columns.stop, columns.step

        return hash(
            (
                self.d_model,
                self.n_frequencies,
                key(self.sin_columns),
                key(self.cos_columns),
                self.n_sin,
                self.n_cos,
                self.zero_columns,
            )
        )

    @property
    def is_paired(self) -> bool:
        """True when every sin column has its cos partner (no unpaired sin column)."""
        return self.n_sin == self.n_cos

    def pair_columns(self, pair: int) -> tuple[int, int]:
        """The sin column and the cos column of frequency ``pair``, the two a relative shift
        rotates together.

        Examples
        --------
        >>> ColumnLayout.interleaved(8).pair_columns(2)
        (4, 5)
        >>> ColumnLayout.halves(8, first="cos").pair_columns(2)
        (6, 2)
        """
        n_pairs = min(self.n_sin, self.n_cos)
        if not 0 <= pair < n_pairs:
            raise InputError(f"pair must be in [0, {n_pairs}), got {pair}")
        columns = range(self.d_model)
        return columns[self.sin_columns][pair], columns[self.cos_columns][pair]

    @property
    def is_interleaved(self) -> bool:
        """True for ``sin_0, cos_0, sin_1, cos_1, ...`` over all columns (an even ``d_model``)."""
        return (
            self.d_model % 2 == 0
            and self.sin_columns == slice(0, self.d_model, 2)
            and self.cos_columns == slice(1, self.d_model, 2)
        )

    def column_roles(self) -> tuple[NDArray[np.int64], NDArray[np.str_]]:
        """Pair index (``-1`` for a zero column) and role (``"sin"``, ``"cos"``, ``"zero"``)
        of every column."""
        pair = np.full(self.d_model, -1, dtype=np.int64)
        role = np.full(self.d_model, "zero", dtype="<U4")
        pair[self.sin_columns] = np.arange(self.n_sin)
        role[self.sin_columns] = "sin"
        pair[self.cos_columns] = np.arange(self.n_cos)
        role[self.cos_columns] = "cos"
        return pair, role

    def permutation_from(self, other: ColumnLayout) -> NDArray[np.int64]:
        """Column indices ``p`` with ``row_in_self = row_in_other[p]``: where each of this
        layout's (pair, role) columns sits in ``other`` (the same d_model and pairs)."""
        if (self.d_model, self.n_sin, self.n_cos) != (other.d_model, other.n_sin, other.n_cos):
            raise InputError(
                "layouts must have the same d_model and the same sin and cos pairs to be "
                f"permuted into each other, got {self} and {other}"
            )
        pair, role = self.column_roles()
        other_pair, other_role = other.column_roles()
        where = {
            (int(i), str(r)): j for j, (i, r) in enumerate(zip(other_pair, other_role, strict=True))
        }
        zeros = iter(j for j, r in enumerate(other_role) if r == "zero")
        columns = [
            next(zeros) if r == "zero" else where[(int(i), str(r))]
            for i, r in zip(pair, role, strict=True)
        ]
        return np.array(columns, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class FrequencyBank:
    """Angular frequencies ``w_i`` (radians per position) and the columns of their sin and cos.

    Validated once, when it is made: one finite, non-negative frequency per pair of the layout.
    The frequencies are kept as a read-only float64 array. Two banks are equal when their
    layouts and frequencies are (so a bank can key a cache).

    Attributes
    ----------
    frequencies : ndarray of float64, shape (layout.n_frequencies,)
    layout : ColumnLayout
    description : str
        What the bank is, in words (e.g. "vaswani, base 10000").

    Examples
    --------
    >>> bank = FrequencyBank(np.array([1.0, 0.1]), ColumnLayout.interleaved(4), "mine")
    >>> bank.d_model, bank.wavelengths.round(3).tolist()
    (4, [6.283, 62.832])
    """

    frequencies: NDArray[np.float64]
    layout: ColumnLayout
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.layout, ColumnLayout):
            raise InputTypeError(f"layout must be a ColumnLayout, got {self.layout!r}")
        try:
            freqs = np.array(self.frequencies, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputTypeError(
                f"frequencies must be a 1-D array of real numbers, got {self.frequencies!r}"
            ) from None
        if freqs.ndim != 1 or freqs.size != self.layout.n_frequencies:
            raise InputError(
                f"frequencies must be 1-D with one value per pair of the layout "
                f"({self.layout.n_frequencies}), got shape {freqs.shape}"
            )
        if not np.all(np.isfinite(freqs)) or np.any(freqs < 0):
            raise InputError("frequencies must be finite and >= 0 (radians per position)")
        freqs.flags.writeable = False
        object.__setattr__(self, "frequencies", freqs)

    @property
    def d_model(self) -> int:
        return self.layout.d_model

    @property
    def n_frequencies(self) -> int:
        return self.layout.n_frequencies

    @property
    def wavelengths(self) -> NDArray[np.float64]:
        """``2*pi / w_i`` in positions (inf for a frequency of 0)."""
        with np.errstate(divide="ignore"):
            return 2.0 * math.pi / self.frequencies

    @property
    def is_paired(self) -> bool:
        return self.layout.is_paired

    def column_roles(self) -> tuple[NDArray[np.int64], NDArray[np.str_]]:
        return self.layout.column_roles()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrequencyBank):
            return NotImplemented
        return self.layout == other.layout and np.array_equal(self.frequencies, other.frequencies)

    def __hash__(self) -> int:
        return hash((self.layout, self.frequencies.tobytes()))

    def __repr__(self) -> str:
        name = f"{self.description!r}, " if self.description else ""
        return f"FrequencyBank({name}d_model={self.d_model}, n_frequencies={self.n_frequencies})"
