"""What :func:`pe_core.identify_encoding` returns: what the difference from the exact encoding
is (:class:`Precision`, :class:`PrecisionKind`), each explanation tried (:class:`Candidate`)
and the best one with its verdict in words (:class:`Identification`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from pe_core._numerics.text import number_words

__all__ = ["Candidate", "Identification", "Precision", "PrecisionKind"]


class PrecisionKind(enum.Enum):
    """What the difference between a table and the exact encoding is, simplest story first."""

    #: Equal to the exact encoding within a few ulps of float64.
    EXACT = "exact"
    #: The exact values rounded once to a smaller format (stored in it): ``Precision.format``;
    #: then written as decimal text when ``decimals`` or ``significant`` is set.
    ROUNDED = "rounded"
    #: The exact values written as decimal text (``Precision.decimals`` decimals, or
    #: ``Precision.significant`` significant digits: ``%.4f``, ``%.8g``).
    DECIMALS = "decimals"
    #: The angles k·ω computed in ``Precision.format``: the error grows with the position.
    COMPUTED = "computed"
    #: No rounding of any format or of the angles explains the difference.
    NO_MATCH = "no match"


#: The simpler story first (a rounding is simpler than arithmetic in a format).
_KIND_RANK = {
    PrecisionKind.EXACT: 0,
    PrecisionKind.ROUNDED: 1,
    PrecisionKind.DECIMALS: 1,
    PrecisionKind.COMPUTED: 2,
    PrecisionKind.NO_MATCH: 3,
}


@dataclass(frozen=True)
class Precision:
    """What the difference between a table and the exact encoding is, as fields.

    Attributes
    ----------
    kind : PrecisionKind
    format : str or None
        The floating-point format (a key of :data:`pe_core.PRECISIONS`) the values were rounded
        to (``ROUNDED``) or the angles computed in (``COMPUTED``); else None.
    decimals, significant : int or None
        For values written as decimal text (``DECIMALS``, or a format's numbers written so:
        ``ROUNDED`` and ``COMPUTED`` with them set): the most decimals and the most significant
        digits the values show (``%.4f`` writes 4 decimals, ``%.8g`` 8 significant digits;
        the one that bounds the values names the printing, :attr:`printing`). None for
        values that are binary numbers.

    >>> Precision(PrecisionKind.ROUNDED, format="float32").words
    'float32 rounding'
    >>> Precision(PrecisionKind.ROUNDED, format="float16", decimals=8, significant=5).words
    'float16 rounding, written with 5 significant digits'
    """

    kind: PrecisionKind
    format: str | None = None
    decimals: int | None = None
    significant: int | None = None

    @property
    def printed(self) -> bool:
        """Whether the values were written as decimal text."""
        return self.decimals is not None or self.significant is not None

    @property
    def printing_words(self) -> str:
        """ "4 decimals", "8 significant digits", or "" for binary values."""
        if not self.printed:
            return ""
        by_decimals = self.decimals is not None and (
            self.significant is None or self.decimals <= self.significant
        )
        if by_decimals:
            return f"{self.decimals} decimal" + ("" if self.decimals == 1 else "s")
        return f"{self.significant} significant digit" + ("" if self.significant == 1 else "s")

    @property
    def explained(self) -> bool:
        """Whether the difference is explained (anything but ``NO_MATCH``)."""
        return self.kind is not PrecisionKind.NO_MATCH

    @property
    def rank(self) -> int:
        """0 for exact, 1 for a rounding, 2 for arithmetic in a format, 3 for no match."""
        return _KIND_RANK[self.kind]

    @property
    def words(self) -> str:
        """The difference in a few words, for display: "exact in float64", "float32
        rounding", "rounded to 4 decimals", "float32 arithmetic" or "no match"."""
        written = f", written with {self.printing_words}" if self.printed else ""
        if self.kind is PrecisionKind.EXACT:
            return "exact in float64"
        if self.kind is PrecisionKind.ROUNDED:
            return f"{self.format} rounding{written}"
        if self.kind is PrecisionKind.DECIMALS:
            if self.printing_words.endswith("decimals") or self.printing_words.endswith("decimal"):
                return f"rounded to {self.printing_words}"
            return f"written with {self.printing_words}"
        if self.kind is PrecisionKind.COMPUTED:
            return f"{self.format} arithmetic{written}"
        return "no match"


_EXACT = Precision(PrecisionKind.EXACT)
_NO_MATCH = Precision(PrecisionKind.NO_MATCH)


@dataclass(frozen=True)
class Candidate:
    """One explanation tried: a convention with the base, first position and direction that
    fit it best, and how far its encoding is from the matrix."""

    convention: str
    base: float
    start: float
    max_abs_error: float
    worst_cell: tuple[int, int]
    step: float = 1.0
    precision: Precision = _NO_MATCH
    #: Rows the error was measured on (all of them, or a spread-out sample for a convention
    #: that was clearly worse: its error is then a lower bound).
    rows_compared: int | None = None


@dataclass(frozen=True)
class Identification:
    """The best explanation of a matrix, how well it fits, and what else fits as well.

    Attributes
    ----------
    matches : bool
        True when the best candidate reproduces every entry up to an explained difference: the
        rounding of a floating-point format or of a number of decimals, or the error of
        computing the angles in a floating-point format (see ``precision``).
    convention, base, start : str, float, float
        The best candidate: the first row is position ``start``, the next ``start + step``...
    max_abs_error : float
        Largest absolute difference between the matrix and the candidate's exact encoding.
    worst_cell : tuple of int
        (row, column) of that largest difference, in the matrix as given (after squeezing).
    transposed : bool
        True when the matrix matches with positions in columns (it was transposed back). Only
        set for a match: for a matrix that matches nothing no orientation is asserted.
    precision : Precision
        What the difference is: exact in float64; the exact values rounded once to a format
        (``kind`` ROUNDED, ``format`` "float32", "float16" or "bfloat16"); written with a number
        of decimals (DECIMALS, ``decimals``); the angles computed in a format (COMPUTED,
        ``format`` "float64" ... "bfloat16": the error grows with the position); or NO_MATCH.
        ``precision.words`` says it in words.
    candidates : tuple of Candidate
        Every convention tried in the reported orientation, best first.
    step : float
        The difference between consecutive rows' positions: +1 for consecutive positions in
        increasing order, -1 in decreasing order, another number for positions spaced
        otherwise (diffusers' ``scale`` multiplies them: ``scale=1000`` on 16 timesteps in
        [0, 1] spaces them by 1000/15).
    squeezed_from : tuple of int or None
        The shape given, when singleton axes were dropped (a (1, L, d) buffer); else None.
    base_determined : bool
        False when the table cannot tell the base: its only frequency is w_0 = 1 (one sin/cos
        pair and nothing else), the same for every base.
    equivalents : tuple of str
        Other explanations that reproduce the matrix as well, in words (the same frequencies
        under another name, or a fit within the input's own rounding).
    scale, offset : float
        For a matrix that is an encoding only after an affine rescaling (1 and 0 otherwise):
        ``scale * matrix + offset`` is the encoding, ``max_abs_error`` is measured on it.
    normalization : str
        The code known to rescale a table so, when ``scale`` and ``offset`` are its (PatchTST
        subtracts the table's mean and divides by 10 times its standard deviation); else "".
    padding_rows : tuple of int
        Rows (columns when ``transposed``) that are all zeros while the others are an encoding:
        the padding row that fairseq and the transformers models copied from it (M2M100, XGLM,
        NLLB-MoE, ...) write at ``padding_idx``. They are left out of the fit and of the
        differences; the positions count them (row ``r`` is position ``start + step * r``).
    """

    matches: bool
    convention: str
    base: float
    start: float
    max_abs_error: float
    worst_cell: tuple[int, int]
    transposed: bool
    precision: Precision
    candidates: tuple[Candidate, ...] = field(default=())
    step: float = 1.0
    n_positions: int = 0
    squeezed_from: tuple[int, ...] | None = None
    base_determined: bool = True
    equivalents: tuple[str, ...] = ()
    padding_rows: tuple[int, ...] = ()
    scale: float = 1.0
    offset: float = 0.0
    normalization: str = ""

    @property
    def rescaled(self) -> bool:
        """Whether the matrix is the encoding only after ``scale * matrix + offset``."""
        return self.scale != 1.0 or self.offset != 0.0

    @property
    def end(self) -> float:
        """The position of the last row."""
        return self.start + self.step * (self.n_positions - 1)

    def summary(self) -> str:
        """The verdict in one sentence."""
        base = f"base {self.base:g}" if self.base_determined else "any base"
        direction = " (rows in decreasing order)" if self.step < 0 else ""
        spacing = f" in steps of {number_words(abs(self.step))}" if abs(self.step) != 1 else ""
        if self.matches:
            orientation = " (transposed: positions were in columns)" if self.transposed else ""
            return (
                f"{self.convention} convention, {base}, positions from "
                f"{number_words(self.start)} to {number_words(self.end)}{spacing}{direction}"
                f"{orientation}{self._padding_words()}"
                f"{self._rescaling_words()}; largest "
                f"difference {self.max_abs_error:.2g} "
                f"({_difference_words(self.precision)})"
            )
        row, column = self.worst_cell
        return (
            f"no convention explains this matrix: the closest is {self.convention} with {base} "
            f"from position {number_words(self.start)}, but it differs by up to "
            f"{self.max_abs_error:.3g} (row {row}, column {column}), more than the rounding of "
            "any floating-point format or of the angles can explain"
        )

    def _rescaling_words(self) -> str:
        """ ", rescaled: the table is (encoding - m) / s ..." or "" for the encoding itself."""
        if not self.rescaled:
            return ""
        known = f", as {self.normalization} does" if self.normalization else ""
        return (
            f", rescaled: the table is (encoding - {self.offset:.6g}) / {self.scale:.6g}{known} "
            "(differences are in the encoding's units)"
        )

    def _padding_words(self) -> str:
        """ ", except that row 1 is all zeros (...)", or "" without padding rows."""
        count = len(self.padding_rows)
        if not count:
            return ""
        listed = ", ".join(str(r) for r in self.padding_rows[:5])
        more = f" and {count - 5} more" if count > 5 else ""
        kind = "column" if self.transposed else "row"  # of the matrix as given
        return (
            f", except that {kind}{'s' if count > 1 else ''} {listed}{more} "
            f"{'are' if count > 1 else 'is'} all zeros (padding, as fairseq writes a zero row at "
            "padding_idx)"
        )


def _difference_words(precision: Precision) -> str:
    """The difference as a verdict says it (arithmetic in a format explained)."""
    if precision.kind is PrecisionKind.COMPUTED:
        written = f", then written with {precision.printing_words}" if precision.printed else ""
        return (
            f"{precision.format} arithmetic: the angles k·ω were computed in "
            f"{precision.format}{written}"
        )
    return precision.words
