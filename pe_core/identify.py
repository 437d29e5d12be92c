"""Identify an encoding table: which convention, base, first position and direction produced it,
and in which arithmetic (exact, rounded once to a smaller format, or computed in one)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from pe_core._formats import PRECISIONS, round_to_precision
from pe_core._validation import as_array, as_real_array, check_size
from pe_core.conventions import CONVENTIONS, Convention
from pe_core.encoding import sinusoidal_encoding
from pe_core.errors import InputError

__all__ = ["Identification", "Precision", "PrecisionKind", "identify_encoding"]

#: A float64 table within this of the exact one is "exact in float64" (a few ulps of 1).
_FLOAT64_EXACT = 4e-15

#: The smaller formats a table may have been stored or computed in, most precise first.
_FORMATS = ("float32", "float16", "bfloat16")

#: Rows used to fit the frequencies (the first ones) and to rank candidates (spread out).
_FIT_ROWS = 512
_RANK_ROWS = 64

#: First positions are searched up to this value (the app's largest sequence is 10**6).
MAX_START = 2.0**20

#: Widest matrix (columns = d_model) that is tried as an encoding.
_MAX_COLUMNS = 16384

#: Phase differences (radians) that a table's own noise can explain.
_PHASE_NOISE = 0.05

#: Bound on the start search's work (shifts x pairs of the ladder).
_SEARCH_WORK = 1 << 18

#: The bases libraries use, most used first: between two equally round bases that give the same
#: table (at small d_model, tensor2tensor with base 10,000 is split with base 100,000 at
#: d_model 10), the more usual one names it.
USUAL_BASES = (10_000.0, 100_000.0, 1_000.0, 100.0, 500_000.0, 1_000_000.0, 10.0)


class PrecisionKind(enum.Enum):
    """What the difference between a table and the exact encoding is, simplest story first."""

    #: Equal to the exact encoding within a few ulps of float64.
    EXACT = "exact"
    #: The exact values rounded once to a smaller format (stored in it): ``Precision.format``.
    ROUNDED = "rounded"
    #: The exact values written with ``Precision.decimals`` decimals.
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
    decimals : int or None
        The number of decimals, for ``DECIMALS``; else None.

    >>> Precision(PrecisionKind.ROUNDED, format="float32").words
    'float32 rounding'
    """

    kind: PrecisionKind
    format: str | None = None
    decimals: int | None = None

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
        if self.kind is PrecisionKind.EXACT:
            return "exact in float64"
        if self.kind is PrecisionKind.ROUNDED:
            return f"{self.format} rounding"
        if self.kind is PrecisionKind.DECIMALS:
            return f"rounded to {self.decimals} decimals"
        if self.kind is PrecisionKind.COMPUTED:
            return f"{self.format} arithmetic"
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
        spacing = f" in steps of {_number(abs(self.step))}" if abs(self.step) != 1 else ""
        if self.matches:
            orientation = " (transposed: positions were in columns)" if self.transposed else ""
            return (
                f"{self.convention} convention, {base}, positions from {_number(self.start)} to "
                f"{_number(self.end)}{spacing}{direction}{orientation}{self._padding_words()}"
                f"{self._rescaling_words()}; largest "
                f"difference {self.max_abs_error:.2g} "
                f"({_difference_words(self.precision)})"
            )
        row, column = self.worst_cell
        return (
            f"no convention explains this matrix: the closest is {self.convention} with {base} "
            f"from position {_number(self.start)}, but it differs by up to "
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
        return f"{precision.words}: the angles k·ω were computed in {precision.format}"
    return precision.words


def _number(value: float) -> str:
    """A position in words: whole with thousands separators (also when it is whole but for the
    rounding of ``start + step * row``: 200/3 * 15), else to 6 significant digits."""
    value = float(value) + 0.0  # no "-0"
    if abs(value - round(value)) <= 1e-12 * max(1.0, abs(value)):
        return f"{round(value) + 0:,}"
    return f"{value:.6g}"


# --- Fitting ------------------------------------------------------------------------------------


#: Phases computed at a time when a table is fitted (8 MiB of float64 and a few temporaries).
_PHASE_VALUES = 1 << 20


def _pair_phases(matrix, layout, n_pairs) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's phase ``atan2(sin, cos)`` at the first row, and its mean change per row
    (the phase unwrapped down the rows): a block of pairs at a time."""
    columns = np.arange(matrix.shape[1])
    sines, cosines = columns[layout.sin_columns][:n_pairs], columns[layout.cos_columns][:n_pairs]
    first, advance = np.empty(n_pairs), np.empty(n_pairs)
    block = max(1, _PHASE_VALUES // matrix.shape[0])
    for start in range(0, n_pairs, block):
        pairs = slice(start, start + block)
        phases = np.unwrap(np.arctan2(matrix[:, sines[pairs]], matrix[:, cosines[pairs]]), axis=0)
        first[pairs] = phases[0]
        advance[pairs] = (phases[-1] - phases[0]) / max(1, matrix.shape[0] - 1)
    return first, advance


def _sin_column_frequency(values: np.ndarray) -> float:
    """The frequency ``w`` in [0, pi] of a column ``sin(k w)`` at consecutive positions ``k``.

    From the three-term recurrence ``2 s_k - s_(k-1) - s_(k+1) = 4 sin^2(w/2) s_k``, by least
    squares; written with the second difference, which keeps slow frequencies accurate. NaN when
    the column has fewer than 3 rows or is all zero.
    """
    if values.size < 3:
        return float("nan")
    middle = values[1:-1]
    second_difference = 2.0 * middle - values[:-2] - values[2:]
    energy = float(np.dot(middle, middle))
    if energy == 0.0:
        return float("nan")
    squared_half_sine = float(np.dot(middle, second_difference)) / (4.0 * energy)
    return 2.0 * float(np.arcsin(np.sqrt(np.clip(squared_half_sine, 0.0, 1.0))))


def _base_candidates(
    matrix, conv: Convention, layout, advance: np.ndarray, n_rows: int, scaled: bool
) -> tuple[list[float], bool]:
    """Bases worth trying for ``conv``, and whether the matrix determines the base at all.

    ``advance`` holds each pair's phase change per unit of position (its frequency), from
    ``n_rows`` rows; ``scaled`` when the rows are not consecutive positions (an unpaired sin
    column's frequency is then not read: it may be aliased).
    """
    d_model = matrix.shape[1]
    n_pairs = layout.n_cos
    index = np.arange(n_pairs, dtype=np.float64)
    if layout.n_sin > n_pairs and not scaled:  # an unpaired sin column: one more frequency
        unpaired = matrix[:, layout.sin_columns][:, n_pairs]
        advance = np.append(advance, _sin_column_frequency(unpaired))
        index = np.append(index, float(n_pairs))
    if index.size <= 1:  # only w_0 = 1: every base gives this table
        return [10_000.0], False
    reliable = (advance > 0) & (advance < np.pi) & (index > 0)
    if not np.any(reliable):
        return [10_000.0], True
    # log w_i = -i * ln(base) / D with D = d/2 ("paper") or h - shift ("shifted").
    # Weighted least squares through the origin: the error of log w_i is about
    # noise / (total phase change), so slow pairs, whose phase barely moves, count little.
    i, w = index[reliable], advance[reliable]
    weight = ((n_rows - 1) * w) ** 2
    denominator = float(np.sum(weight * i**2))
    if denominator <= 0:  # every reliable phase advance is vanishingly small
        return [10_000.0], True
    slope = -float(np.sum(weight * i * np.log(w))) / denominator
    scale = conv.denominator(d_model)
    with np.errstate(over="ignore"):
        estimate = float(np.exp(slope * scale))
    if not 1.0 < estimate < 1e12:
        return [10_000.0], True
    rounded = [float(f"{estimate:.{digits}g}") for digits in (2, 3, 4)]
    return list(dict.fromkeys([estimate, float(np.round(estimate)), *rounded])), True


def _wrap(angle):
    """Angle folded into [-pi, pi)."""
    return np.mod(angle + np.pi, 2 * np.pi) - np.pi


def _ladder(freqs: np.ndarray) -> np.ndarray:
    """Pair indices from the slowest frequency to the fastest, each at least 1.5 times the
    previous: enough to unwrap the position step by step, with few steps at large d_model."""
    order = np.argsort(freqs)
    chosen = [order[0]]
    for i in order[1:]:
        if freqs[i] >= 1.5 * freqs[chosen[-1]]:
            chosen.append(i)
    if chosen[-1] != order[-1]:
        chosen.append(order[-1])
    return np.array(chosen)


def _start_position(first_phases: np.ndarray, freqs: np.ndarray, search: bool = True) -> float:
    """The position whose pair phases are ``first_phases`` (radians).

    The slowest pair fixes the position up to its wavelength ``L``; each faster pair then refines
    it by the phase difference it sees. When that does not explain every phase, every starting
    point ``m * L`` apart up to :data:`MAX_START` is refined at once on the ladder of pairs, and
    among those that explain all phases equally well (commensurate frequencies repeat with a
    common period) the smallest non-negative whole position wins.
    """
    order = _ladder(freqs)
    slowest = order[0]
    wavelength = 2 * np.pi / freqs[slowest]
    first_guess = float(_wrap(first_phases[slowest])) / freqs[slowest]

    def refine(positions, pairs):
        for i in order[1:]:
            positions = positions + _wrap(first_phases[i] - positions * freqs[i]) / freqs[i]
        misfit = np.abs(_wrap(first_phases[None, pairs] - positions[:, None] * freqs[None, pairs]))
        return positions, np.max(misfit, axis=1)

    all_pairs = np.arange(freqs.size)
    nearest, nearest_misfit = refine(np.array([first_guess]), all_pairs)
    # The usual case: a small whole first position that explains every phase to within the
    # noise of a low-precision table (positions a slowest wavelength apart do not: the faster
    # pairs' phases then disagree by far more).
    if not search or (
        nearest_misfit[0] <= _PHASE_NOISE
        and abs(nearest[0] - round(nearest[0])) <= _PHASE_NOISE
        and nearest[0] >= 0
    ):
        return float(nearest[0])
    n_shifts = min(int(MAX_START / wavelength) + 2, _SEARCH_WORK // max(1, order.size))
    shifts = first_guess + np.arange(-2, n_shifts) * wavelength
    positions, misfit = refine(shifts, order)  # on the ladder's pairs only: cheap
    keep = misfit <= misfit.min() + 1e-3
    positions, misfit = refine(positions[keep], all_pairs)
    plausible = positions[misfit <= misfit.min() + 1e-3]
    # A position is "whole" within what the phase noise allows the fastest pair to resolve.
    tolerance = max(1e-6, 10 * float(misfit.min()) / float(np.max(freqs)))
    whole = np.abs(plausible - np.round(plausible)) <= tolerance
    order_key = np.lexsort((np.abs(plausible), plausible < 0, ~whole))
    return float(plausible[order_key[0]])


@dataclass(frozen=True)
class _Trial:
    """A fitted explanation before its full evaluation."""

    convention: str
    base: float
    start: float  # the position of the first row of the matrix as given
    step: float
    base_determined: bool


def _fit(matrix: np.ndarray, name: str) -> list[_Trial]:
    """The bases and first positions that could explain ``matrix`` under convention ``name``."""
    n, d_model = matrix.shape
    conv = CONVENTIONS[name]
    layout = conv.column_layout(d_model)
    n_pairs = layout.n_cos
    if n_pairs == 0:
        return []
    fitted = matrix[:_FIT_ROWS]
    first_phases, advance = _pair_phases(fitted, layout, n_pairs)
    advance = _frequencies_times_spacing(advance)
    # Rows in decreasing order (Transformer-XL and XLNet list positions L-1 ... 0): fit the
    # rows reversed, then carry the first position back.
    sign = -1.0 if advance[0] < 0 else 1.0
    if sign < 0:
        fitted = fitted[::-1] if n <= _FIT_ROWS else matrix[-_FIT_ROWS:][::-1]
        first_phases, advance = _pair_phases(fitted, layout, n_pairs)
        advance = _frequencies_times_spacing(advance)
    # Pair 0 turns by w_0 = 1 radian per unit of position: its turn per row is the spacing.
    spacing = float(advance[0])
    # Rows that barely turn pair 0 (a row repeated down the table) are not read as a spacing.
    scaled = abs(spacing - 1.0) > _SPACING_TOLERANCE and spacing * (len(fitted) - 1) > _PHASE_NOISE
    if not scaled:
        spacing = 1.0
    spacings = _round_spacings(spacing) if scaled else [spacing]
    bases, determined = _base_candidates(
        fitted, conv, layout, advance / spacing, fitted.shape[0], scaled
    )
    trials = []
    for base in bases:
        freqs = conv.frequencies(d_model, base)[:n_pairs]
        for step in spacings:
            # Only frequencies that match the phases' own advance per row can explain the
            # matrix; for the others the nearest start is enough (it is compared, and it loses).
            plausible = bool(np.all(np.abs(advance / step - freqs) <= 0.05 * freqs + 0.05))
            start = _start_position(first_phases, freqs, search=plausible)  # first row fitted
            if sign < 0:  # the fitted rows were the last ones, reversed
                start += step * (fitted.shape[0] - 1) if n <= _FIT_ROWS else step * (n - 1)
            for first in dict.fromkeys([start + 0.0, float(np.round(start)) + 0.0]):
                trials.append(_Trial(name, base, first, sign * step, determined))
    return trials


#: A turn of pair 0 per row this far from 1 radian is a spacing other than 1 (table noise
#: moves it far less: float16's rounding over two rows is 1e-3).
_SPACING_TOLERANCE = 0.01


def _frequencies_times_spacing(advance: np.ndarray) -> np.ndarray:
    """Each pair's true phase change per row, ``spacing * w_i``, from the measured ones.

    A pair whose true change exceeds pi a row is seen turned back by a multiple of 2 pi (rows
    ``1000/15`` positions apart turn pair 0 by 66.7 radians). For consecutive positions
    (pair 0 turns by 1 radian) nothing is aliased and the advances are returned as they are.
    Otherwise, since the frequencies fall geometrically with the pair index, the slowest pairs
    are not aliased: each faster pair's change is the measured one plus the multiple of 2 pi
    nearest what the pairs below predict (a weighted line through ``log`` of their changes,
    the fast ones weighing most, as their phases are the least noisy).
    """
    if abs(abs(advance[0]) - 1.0) <= _SPACING_TOLERANCE or advance.size < 2:
        return advance
    slow = advance[-max(1, advance.size // 8) :]
    sign = -1.0 if slow.sum() < 0 else 1.0
    measured = sign * advance
    if not 0.0 < measured[-1] < np.pi / 2:
        return advance  # even the slowest pair is aliased, or does not turn
    true = measured.copy()
    # Running sums of the weighted least squares of log(change) against the pair index.
    sums = np.zeros(5)  # weights, w*i, w*y, w*i*i, w*i*y
    for i in range(advance.size - 1, -1, -1):
        if i < advance.size - 1:
            fit = _weighted_line(sums)
            predicted = true[i + 1] if fit is None else np.exp(fit[0] + fit[1] * i)
            true[i] = measured[i] + 2 * np.pi * np.round((predicted - measured[i]) / (2 * np.pi))
        if not true[i] > 0:
            return advance
        weight = true[i] ** 2
        y = np.log(true[i])
        sums += weight * np.array([1.0, i, y, i * i, i * y])
    # A geometric fall explains every pair (as it does for a scaled table; the phases of
    # another convention's columns do not fall like that), at a spacing within reach.
    fit = _weighted_line(sums)
    if fit is None:  # the weights of all but one pair vanished: no fall to check
        return advance
    line = np.exp(fit[0] + fit[1] * np.arange(advance.size))
    if np.any(np.abs(true - line) > 0.05 * line + 0.05) or not true[0] <= MAX_START:
        return advance
    return sign * true


def _weighted_line(sums) -> tuple[float, float] | None:
    """(intercept, slope) of the weighted least-squares line with the running sums ``(weights,
    w*x, w*y, w*x*x, w*x*y)``; None when they do not determine one (fewer than two points of
    weight that counts)."""
    total, sx, sy, sxx, sxy = sums
    spread = total * sxx - sx * sx
    if not spread > 0:
        return None
    slope = (total * sxy - sx * sy) / spread
    return (sy - slope * sx) / total, slope


#: Spacings ``p / q`` with ``q`` up to this are "round" (timesteps spaced by 1000 / (L - 1)).
_SPACING_DENOMINATORS = 4096


def _ratio_near(value: float, tolerance: float) -> float | None:
    """The ratio of whole numbers (denominator up to :data:`_SPACING_DENOMINATORS`) nearest
    ``value`` when it is within ``tolerance`` of it (relative), else None."""
    ratio = Fraction(value).limit_denominator(_SPACING_DENOMINATORS)
    near = ratio.numerator / ratio.denominator
    return near if near > 0 and abs(near - value) <= tolerance * abs(value) else None


def _round_spacings(spacing: float) -> list[float]:
    """The fitted spacing and the round number near it worth trying first (1000/15 is fitted
    as 66.66666668)."""
    ratio = _ratio_near(spacing, 1e-6)
    return [spacing] if ratio is None else list(dict.fromkeys([ratio, spacing]))


def _round_spacing(step: float) -> bool:
    """Whether ``step`` is (the float of) a ratio of whole numbers with a small denominator."""
    return _ratio_near(abs(step), 1e-15) is not None


def _positions(trial: _Trial, rows: np.ndarray) -> np.ndarray:
    return trial.start + trial.step * rows.astype(np.float64)


def _encode(trial: _Trial, rows: np.ndarray, d_model: int) -> np.ndarray:
    return sinusoidal_encoding(
        _positions(trial, rows), d_model, base=trial.base, convention=trial.convention
    )


# --- What the difference is ------------------------------------------------------------------


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


# --- The search --------------------------------------------------------------------------------


def _spread_rows(n: int, count: int) -> np.ndarray:
    """At most ``count`` of the rows ``0 .. n-1``, evenly spread, the first and last included."""
    if n <= count:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, count).round().astype(np.int64))


def _rank_rows(n: int) -> np.ndarray:
    return _spread_rows(n, _RANK_ROWS)


#: Entries compared at a time when a candidate is evaluated on every row (8 MiB of float64):
#: the largest table is compared without a full-size copy of its differences.
_EVALUATE_VALUES = 1 << 20


def _evaluate(
    matrix, trial: _Trial, storage: _Storage, padding: np.ndarray
) -> tuple[Candidate, np.ndarray]:
    n, d_model = matrix.shape
    row_errors = np.empty(n)
    largest, worst = -1.0, (0, 0)
    chunk = max(1, _EVALUATE_VALUES // d_model)
    for first in range(0, n, chunk):
        rows = np.arange(first, min(n, first + chunk))
        error = _encode(trial, rows, d_model)
        error -= matrix[first : first + chunk]
        np.abs(error, out=error)
        error[padding[first : first + chunk]] = 0.0
        row_errors[rows] = np.max(error, axis=1)
        cell = int(np.argmax(error))
        if error.flat[cell] > largest:  # the first largest, in row order, as argmax gives it
            largest = float(error.flat[cell])
            worst = (first + cell // d_model, cell % d_model)
    precision = _explain(row_errors, _positions(trial, np.arange(n)), storage)
    candidate = Candidate(
        trial.convention,
        trial.base,
        trial.start,
        largest,
        (int(worst[0]), int(worst[1])),
        trial.step,
        precision,
        rows_compared=n,
    )
    return candidate, row_errors


def _padding(matrix) -> np.ndarray:
    """Rows that are all zeros, when the others are not (each row True or False)."""
    zero = ~np.any(matrix, axis=1)
    return zero if 0 < np.count_nonzero(zero) <= matrix.shape[0] - 2 else np.zeros_like(zero)


def _longest_run(padding: np.ndarray) -> tuple[int, int]:
    """First and end row of the longest run of rows that are not padding."""
    edges = np.flatnonzero(np.diff(np.concatenate([[1], padding.astype(np.int8), [1]])))
    starts, ends = edges[::2], edges[1::2]
    longest = int(np.argmax(ends - starts))
    return int(starts[longest]), int(ends[longest])


def _fit_around_padding(matrix, name: str, padding: np.ndarray) -> list[_Trial]:
    """:func:`_fit` on the longest run of rows between padding rows, with the first position
    carried back to the matrix's first row."""
    if not padding.any():
        return _fit(matrix, name)
    first, end = _longest_run(padding)
    if end - first < 2:
        return []
    return [replace(t, start=t.start - t.step * first) for t in _fit(matrix[first:end], name)]


def _best_of_orientation(matrix, storage: _Storage, padding: np.ndarray):
    """Every convention's trials ranked on a sample of rows; the few best evaluated on every row.

    Returns the candidates, best first (each convention's best among them, those not
    shortlisted compared on the sample rows only, as their ``rows_compared`` says), and a map
    from each fully evaluated candidate to its trial. ``padding`` rows are not compared.
    """
    n, d_model = matrix.shape
    trials = [t for name in CONVENTIONS for t in _fit_around_padding(matrix, name, padding)]
    if not trials:
        return [], {}
    sample = _rank_rows(n)
    rough = {}  # trial -> (largest difference on the sample rows, its cell)
    for trial in trials:
        error = np.abs(_encode(trial, sample, d_model) - matrix[sample])
        error[padding[sample]] = 0.0
        worst = np.unravel_index(int(np.argmax(error)), error.shape)
        rough[trial] = (float(error[worst]), (int(sample[worst[0]]), int(worst[1])))
    least = min(largest for largest, _ in rough.values())
    ordered = sorted(trials, key=lambda t: rough[t][0])
    close = [t for t in ordered if rough[t][0] <= 4 * least + 1e-9]
    # The closest few and the simplest few (a whole start, a round base): the rounded trials'
    # differences are a little larger, and the fitted ones alone would fill the shortlist.
    simplest = sorted(
        close,
        key=lambda t: (t.start != round(t.start), _digits(t.base), _usual_rank(t.base)),
    )
    half = _SHORTLIST // 2
    shortlist = list(dict.fromkeys([*close[:half], *simplest[:half], *close]))[:_SHORTLIST]
    evaluated = {_evaluate(matrix, trial, storage, padding)[0]: trial for trial in shortlist}
    candidates = list(evaluated)
    for name in CONVENTIONS:  # each convention's best, for the record
        if any(c.convention == name for c in candidates):
            continue
        own = [t for t in ordered if t.convention == name]
        if own:
            largest, cell = rough[own[0]]
            candidates.append(
                Candidate(
                    name,
                    own[0].base,
                    own[0].start,
                    largest,
                    cell,
                    own[0].step,
                    _NO_MATCH,
                    rows_compared=sample.size,
                )
            )
    return sorted(candidates, key=lambda c: c.max_abs_error), evaluated


#: Trials evaluated on every row.
_SHORTLIST = 6


def _simplest(candidates: list[Candidate]) -> Candidate:
    """Among candidates that are all explained (or, if none is, about equally good), the simplest:
    a whole first position, then a round base (the more usual of equally round ones), then the
    smaller error (fitted values carry the matrix's rounding noise, and some conventions
    coincide: tensor2tensor with base b is split with base b**(h/(h-1)))."""
    explained = [c for c in candidates if c.precision.explained]
    if explained:
        good = explained
    else:
        least = min(c.max_abs_error for c in candidates)
        good = [c for c in candidates if c.max_abs_error <= 1.5 * least + 1e-12]
    return min(good, key=_simplicity)


def _simplicity(c: Candidate) -> tuple:
    """The order of :func:`_simplest`: the simpler story, whole start, round spacing and base."""
    return (
        c.precision.rank,
        c.start != round(c.start),
        abs(c.step) != 1 and not _round_spacing(c.step),
        _digits(c.base),
        _usual_rank(c.base),
        c.max_abs_error,
    )


def _usual_rank(base: float) -> int:
    """The base's place in :data:`USUAL_BASES` (after all of them when it is none)."""
    return USUAL_BASES.index(base) if base in USUAL_BASES else len(USUAL_BASES)


def _digits(value: float) -> int:
    """Significant digits of a number as written: 10000 has 1, 10000.5 has 6."""
    mantissa = f"{value:.15e}".split("e")[0].replace(".", "").replace("-", "")
    return len(mantissa.rstrip("0"))


def _equivalents(
    best: Candidate, candidates: list[Candidate], d_model: int, base_determined: bool
) -> tuple[str, ...]:
    """Other explained candidates, said in words: the same frequencies or a fit within the
    input's own rounding."""
    notes = []
    best_freqs = CONVENTIONS[best.convention].frequencies(d_model, best.base)
    for other in sorted(candidates, key=_simplicity):  # each convention's simplest fit
        if other is best or not other.precision.explained or other.convention == best.convention:
            continue
        if any(other.convention in note for note in notes):
            continue
        freqs = CONVENTIONS[other.convention].frequencies(d_model, other.base)
        same_layout = _columns(other.convention, d_model) == _columns(best.convention, d_model)
        same = (
            same_layout
            and freqs.shape == best_freqs.shape
            and np.allclose(freqs, best_freqs, rtol=1e-12, atol=0)
        )
        described = f"{other.convention} with " + (
            f"base {other.base:g}" if base_determined else "any base"
        )
        if same:
            notes.append(
                f"{described} is the same table at d_model {d_model}: the same frequencies in "
                "the same columns, under another convention's rule"
            )
        else:
            notes.append(
                f"{described} also fits (largest difference {other.max_abs_error:.2g}), within "
                "the input's own rounding: the table cannot tell the two apart"
            )
    return tuple(notes)


def _columns(name: str, d_model: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The sin columns and the cos columns of a convention, in pair order."""
    layout = CONVENTIONS[name].column_layout(d_model)
    columns = np.arange(d_model)
    return tuple(columns[layout.sin_columns].tolist()), tuple(columns[layout.cos_columns].tolist())


def _squeezed(values: np.ndarray) -> tuple[np.ndarray, tuple[int, ...] | None]:
    if values.ndim == 2:
        return values, None
    kept = [axis for axis, size in enumerate(values.shape) if size != 1]
    if values.ndim > 2 and len(kept) == 2:
        return values.reshape([values.shape[axis] for axis in kept]), values.shape
    raise InputError(
        f"matrix must be 2-D (positions x d_model), or have only singleton axes beside those two "
        f"like a (1, L, d_model) buffer, got an array of shape {values.shape}"
    )


def identify_encoding(matrix: ArrayLike) -> Identification:
    """Find the convention, base, positions and arithmetic that explain an encoding matrix.

    Parameters
    ----------
    matrix : array_like, shape (n_positions, d_model)
        An encoding with positions in rows (a transposed matrix is detected and reported), at
        least 2 rows and 2 columns, consecutive positions in increasing or decreasing order
        from any start. Singleton axes are dropped first, so the (1, L, d_model) buffer of the
        PyTorch tutorial is accepted. Its dtype counts: a float32 array is known to hold
        float32 values.

    Returns
    -------
    Identification
        The best candidate, its largest absolute error and what that error is (exact, rounding,
        or arithmetic in a smaller format), with the other explanations that fit as well.

    Raises
    ------
    ValueError
        For a matrix with more than two non-singleton axes, fewer than 2 rows and columns,
        NaN or inf, or beyond the memory budget. TypeError for a non-numeric matrix.

    Notes
    -----
    Each pair's phase ``atan2(sin, cos)`` advances by ``w_i`` per row (``-w_i`` for decreasing
    positions); a least-squares fit of ``log w_i`` against ``i`` gives the base (an unpaired sin
    column adds its frequency, from ``s_(k-1) + s_(k+1) = 2 cos(w) s_k``), the phases of the first
    row give the first position (unwrapped from the slowest pair to the fastest, which resolves
    the ``2*pi`` ambiguity). Candidates are ranked on a sample of rows, and the best are compared
    entry by entry. The difference is then named by what the values themselves show: values that
    are all float16 numbers and differ by at most float16's rounding are "float16 rounding";
    differences that grow with the position like the rounding of the angle ``k * w`` are that
    format's arithmetic. Among explanations that all fit this way, the simplest is reported (a
    whole first position, a round base) and the others are listed as equivalents.

    Examples
    --------
    >>> matrix = sinusoidal_encoding(2 + np.arange(50), 16, convention="tensor2tensor")
    >>> found = identify_encoding(matrix)
    >>> found.convention, found.base, found.start, found.matches
    ('tensor2tensor', 10000.0, 2.0, True)
    """
    given = as_array(matrix, "matrix")
    dtype = given.dtype
    values = as_real_array(given, "matrix")
    values, squeezed_from = _squeezed(values)
    check_size(values.size * 4, "identifying this matrix")
    if min(values.shape) < 2:
        raise InputError(
            f"matrix must have at least 2 rows (positions) and 2 columns, got shape {values.shape}"
        )
    found = _identify_values(values, dtype, squeezed_from)
    if found.matches:
        return found
    rescaled = _rescaled(values, dtype, squeezed_from)
    return rescaled if rescaled is not None else found


def _identify_values(values: np.ndarray, dtype: np.dtype, squeezed_from) -> Identification:
    """:func:`identify_encoding` on a checked 2-D float64 ``values`` of input dtype ``dtype``."""
    results = {}
    # Values near the float64 limit (a table of 1e300s) overflow the fits' products: such a
    # table matches nothing and is reported as no match, without NumPy's warnings.
    with np.errstate(over="ignore", invalid="ignore"):
        storage = _storage(values, dtype)
        for transposed in (False, True):
            oriented = values.T if transposed else values
            if oriented.shape[1] > _MAX_COLUMNS:  # wider than any encoding we identify
                continue
            padding = _padding(oriented)
            ranked, trials = _best_of_orientation(oriented, storage, padding)
            if ranked:
                results[transposed] = (ranked, trials, padding)
                if any(c.precision.explained for c in ranked):
                    break  # explained: no need to try the other orientation
    if not results:
        raise InputError(
            f"matrix of shape {values.shape} cannot be an encoding: it needs a sin/cos pair "
            f"(2 columns) and at most {_MAX_COLUMNS} columns, positions in rows or in columns"
        )
    # Transposed only when positions in columns explain the matrix (or are the only reading).
    transposed = True in results and (
        False not in results or any(c.precision.explained for c in results[True][0])
    )
    ranked, trials, padding = results[transposed]
    best = _simplest([c for c in ranked if c in trials])  # fully evaluated ones only
    oriented_shape = values.shape[::-1] if transposed else values.shape
    worst = best.worst_cell[::-1] if transposed else best.worst_cell
    return Identification(
        matches=best.precision.explained,
        convention=best.convention,
        base=best.base,
        start=best.start,
        max_abs_error=best.max_abs_error,
        worst_cell=worst,
        transposed=transposed,
        precision=best.precision,
        candidates=tuple(ranked),
        step=best.step,
        n_positions=oriented_shape[0],
        squeezed_from=squeezed_from,
        base_determined=trials[best].base_determined,
        equivalents=_equivalents(best, ranked, oriented_shape[1], trials[best].base_determined),
        padding_rows=tuple(np.flatnonzero(padding).tolist()) if best.precision.explained else (),
    )


#: Rows sampled to fit an affine rescaling (the whole table is compared afterwards).
_AFFINE_ROWS = 64

#: How far from the unit circle a rescaled pair may be and still be worth identifying.
_AFFINE_MISFIT = 1e-3


def _affine_fit(values: np.ndarray) -> tuple[float, float] | None:
    """``(s, m)`` with every (sin, cos) pair of ``s * values + m`` on the unit circle, under the
    convention whose pairing fits best; None when no pairing does, or for the identity.

    Each pair ``(a, b)`` of ``values`` then lies on the circle of centre ``(c, c)``, ``c =
    -m / s``, and radius ``R = 1 / s``: ``a^2 + b^2 = 2c (a + b) + K`` with ``K = R^2 - 2c^2``,
    linear in ``(c, K)`` (a least-squares circle fit over a sample of rows).
    """
    sample = values[_spread_rows(values.shape[0], _AFFINE_ROWS)]
    best = None
    for name, conv in CONVENTIONS.items():
        layout = conv.column_layout(values.shape[1])
        pairs = min(layout.n_sin, layout.n_cos)
        if pairs < 2:
            continue
        a = sample[:, layout.sin_columns][:, :pairs].ravel()
        b = sample[:, layout.cos_columns][:, :pairs].ravel()
        system = np.stack([2.0 * (a + b), np.ones_like(a)], axis=1)
        squares = a * a + b * b
        if not (np.all(np.isfinite(system)) and np.all(np.isfinite(squares))):
            continue
        (centre, k), *_ = np.linalg.lstsq(system, squares, rcond=None)
        radius_squared = float(k + 2.0 * centre * centre)
        if not (np.isfinite(radius_squared) and radius_squared > 0):
            continue
        scale = 1.0 / float(np.sqrt(radius_squared))
        offset = -scale * float(centre)
        misfit = float(np.max(np.abs((scale * a + offset) ** 2 + (scale * b + offset) ** 2 - 1)))
        if best is None or misfit < best[0]:
            best = (misfit, scale, offset, name)
    if best is None or best[0] > _AFFINE_MISFIT:
        return None
    _, scale, offset, _ = best
    if abs(scale - 1.0) <= 1e-6 and abs(offset) <= 1e-6:
        return None  # the table itself: nothing to undo
    if not (1 / _AFFINE_RANGE <= scale <= _AFFINE_RANGE and abs(offset) <= _AFFINE_RANGE):
        return None  # a table of 1e300s is no normalized encoding
    return scale, offset


#: Rescalings undone: scale within [1/1000, 1000], offset within 1000 (PatchTST's is about 6
#: and 0.4).
_AFFINE_RANGE = 1e3


#: Code known to rescale an encoding table, and the (scale, offset) it applies to the exact
#: table ``E``: transformers' PatchTST (``positional_encoding_type="sincos"``) writes
#: ``(E - E.mean()) / (E.std() * 10)``, torch's std with Bessel's correction.
_NORMALIZATIONS = {
    "transformers' PatchTST ((PE - PE.mean()) / (10 * PE.std()))": lambda table: (
        10.0 * float(np.std(table, ddof=1)),
        float(np.mean(table)),
    ),
}


def _rescaled(values: np.ndarray, dtype: np.dtype, squeezed_from) -> Identification | None:
    """The identification of ``s * values + m`` when an affine rescaling makes an encoding of
    ``values`` (PatchTST's normalized table); None otherwise."""
    if not np.max(np.abs(values)) <= 2 * _AFFINE_RANGE**2:  # beyond any rescaling undone
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        fit = _affine_fit(values)
        if fit is None and values.shape[0] <= _MAX_COLUMNS:  # positions in columns
            fit = _affine_fit(values.T)
    if fit is None:
        return None
    scale, offset = fit
    # Float64 values: the rescaling's own rounding is below the input format's (a float32
    # table's rounding times s), which identify's float32 arithmetic bound allows.
    found = _identify_values(scale * values + offset, np.dtype(np.float64), squeezed_from)
    if not found.matches:
        return None
    oriented_shape = values.shape[::-1] if found.transposed else values.shape
    positions = found.start + found.step * np.arange(oriented_shape[0], dtype=np.float64)
    exact = sinusoidal_encoding(
        positions, oriented_shape[1], base=found.base, convention=found.convention
    )
    for name, rescaling in _NORMALIZATIONS.items():
        known_scale, known_offset = rescaling(exact)
        if abs(known_scale - scale) <= 1e-4 * scale and abs(known_offset - offset) <= 1e-4 * scale:
            oriented = values.T if found.transposed else values
            difference = np.abs(known_scale * oriented + known_offset - exact)
            difference[list(found.padding_rows)] = 0.0
            return replace(
                found,
                scale=known_scale,
                offset=known_offset,
                normalization=name,
                max_abs_error=float(np.max(difference)),
            )
    return replace(found, scale=scale, offset=offset)
