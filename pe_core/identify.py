"""Identify an encoding matrix: which convention, base and first position produced it?"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from pe_core._validation import as_real_array, check_size
from pe_core.conventions import CONVENTIONS
from pe_core.encoding import sinusoidal_encoding

__all__ = ["Identification", "identify_encoding"]

#: Largest difference still called a match: bfloat16 rounds values near 1 by up to 2**-9.
MATCH_TOLERANCE = 4e-3

_PRECISION_LEVELS = (
    (1e-12, "exact in float64"),
    (2e-7, "float32 rounding"),
    (1e-3, "float16 rounding"),
    (MATCH_TOLERANCE, "bfloat16 rounding"),
)


@dataclass(frozen=True)
class Candidate:
    """One explanation tried: a convention with the base and first position that fit it best."""

    convention: str
    base: float
    start: float
    max_abs_error: float
    worst_cell: tuple[int, int]


@dataclass(frozen=True)
class Identification:
    """The best explanation of a matrix, and how well it fits.

    Attributes
    ----------
    matches : bool
        True when the best candidate reproduces every entry within :data:`MATCH_TOLERANCE`.
    convention, base, start : str, float, float
        The best candidate: rows are positions ``start, start + 1, ...``.
    max_abs_error : float
        Largest absolute difference between the matrix and the candidate's encoding.
    worst_cell : tuple of int
        (row, column) of that largest difference, in the matrix as given.
    transposed : bool
        True when the matrix fits with positions in columns (it was transposed back).
    precision : str
        What the error looks like: "exact in float64", "float32 rounding", ... or "no match".
    candidates : tuple of Candidate
        Every convention tried, best first.
    """

    matches: bool
    convention: str
    base: float
    start: float
    max_abs_error: float
    worst_cell: tuple[int, int]
    transposed: bool
    precision: str
    candidates: tuple[Candidate, ...] = field(default=())

    def summary(self) -> str:
        orientation = " (transposed: positions were in columns)" if self.transposed else ""
        if self.matches:
            return (
                f"{self.convention} convention, base {self.base:g}, positions from "
                f"{self.start:g}{orientation}; largest difference {self.max_abs_error:.2g} "
                f"({self.precision})"
            )
        row, column = self.worst_cell
        return (
            f"no convention explains this matrix: the closest is {self.convention} with base "
            f"{self.base:g} from position {self.start:g}{orientation}, but it differs by up to "
            f"{self.max_abs_error:.3g} (row {row}, column {column})"
        )


def _pair_phases(matrix, sin_columns, cos_columns, n_pairs):
    """Unwrapped phase of every sin/cos pair down the rows: atan2(sin, cos)."""
    sines = matrix[:, sin_columns][:, :n_pairs]
    cosines = matrix[:, cos_columns][:, :n_pairs]
    return np.unwrap(np.arctan2(sines, cosines), axis=0)


def _fit(matrix: np.ndarray, name: str) -> Candidate | None:
    """The base and first position that best explain ``matrix`` under convention ``name``."""
    n, d_model = matrix.shape
    conv = CONVENTIONS[name]
    layout = conv.column_layout(d_model)
    n_pairs = layout.n_cos
    if n_pairs == 0:
        return None
    phases = _pair_phases(matrix, layout.sin_columns, layout.cos_columns, n_pairs)
    # Phase advance per row of pair i is w_i; the first pair has w_0 = 1 in every convention.
    advance = (phases[-1] - phases[0]) / (n - 1)
    index = np.arange(n_pairs, dtype=np.float64)
    if layout.n_sin > n_pairs:  # an unpaired sin column (odd d_model) carries one more frequency
        unpaired = matrix[:, layout.sin_columns][:, n_pairs]
        advance = np.append(advance, _sin_column_frequency(unpaired))
        index = np.append(index, float(n_pairs))
    reliable = (advance > 0) & (advance < np.pi)
    if np.count_nonzero(reliable & (index > 0)) == 0:
        bases = [10_000.0]
    else:
        # log w_i = -i * s with s = 2 ln(base) / d ("paper") or ln(base) / (h - 1) ("endpoints").
        # Weighted least squares through the origin: the error of log w_i is about
        # noise / (total phase change), so slow pairs, whose phase barely moves, count little.
        i, w = index[reliable], advance[reliable]
        weight = ((n - 1) * w) ** 2
        denominator = float(np.sum(weight * i**2))
        bases = []
        if denominator > 0:  # 0 when every reliable phase advance is vanishingly small
            slope = -float(np.sum(weight * i * np.log(w))) / denominator
            scale = d_model / 2 if conv.spacing == "paper" else max(n_pairs - 1, 1)
            with np.errstate(over="ignore"):
                estimate = float(np.exp(slope * scale))
            bases = [estimate, float(np.round(estimate)), float(f"{estimate:.3g}")]
        bases = [b for b in bases if 1.0 < b < 1e12] or [10_000.0]
    tried = []
    for base in dict.fromkeys(bases):
        freqs = conv.frequencies(d_model, base)[:n_pairs]
        start = _start_position(phases[0], freqs)
        # + 0.0 turns -0.0 into 0.0, so that no report says "from position -0".
        for first in dict.fromkeys([start + 0.0, float(np.round(start)) + 0.0]):
            encoding = sinusoidal_encoding(
                first + np.arange(n), d_model, base=base, convention=name
            )
            error = np.abs(encoding - matrix)
            worst = np.unravel_index(int(np.argmax(error)), error.shape)
            tried.append(
                Candidate(name, base, first, float(error[worst]), (int(worst[0]), int(worst[1])))
            )
    return _simplest(tried)


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


def _simplest(candidates: list[Candidate]) -> Candidate:
    """Among candidates that fit about equally well, the simplest: a whole first position, then a
    round base (fitted values carry the matrix's rounding noise, and some conventions coincide:
    tensor2tensor with base b is split with base b**(h/(h-1)))."""
    least = min(c.max_abs_error for c in candidates)
    good = [c for c in candidates if c.max_abs_error <= 1.5 * least + 1e-12]
    return min(good, key=lambda c: (c.start != round(c.start), _digits(c.base), c.max_abs_error))


def _digits(value: float) -> int:
    """Significant digits of a number as written: 10000 has 1, 10000.5 has 6."""
    mantissa = f"{value:.15e}".split("e")[0].replace(".", "").replace("-", "")
    return len(mantissa.rstrip("0"))


#: First positions are searched up to this value (the app's largest sequence is 10**6).
MAX_START = 2.0**20


#: Widest matrix (columns = d_model) that is tried as an encoding.
_MAX_COLUMNS = 16384

#: Bound on the start search's work (shifts x pairs).
_SEARCH_WORK = 1 << 21


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


def _start_position(first_phases: np.ndarray, freqs: np.ndarray) -> float:
    """The position whose pair phases are ``first_phases`` (radians).

    The slowest pair fixes the position up to its wavelength ``L``; each faster pair then refines
    it by the phase difference it sees. Every starting point ``m * L`` apart up to
    :data:`MAX_START` is refined at once, and among those that explain all phases equally well
    (commensurate frequencies repeat with a common period) the smallest non-negative whole
    position wins.
    """
    order = _ladder(freqs)
    slowest = order[0]
    wavelength = 2 * np.pi / freqs[slowest]
    first_guess = float(_wrap(first_phases[slowest])) / freqs[slowest]

    def refine(positions):
        for i in order[1:]:
            positions = positions + _wrap(first_phases[i] - positions * freqs[i]) / freqs[i]
        misfit = np.abs(_wrap(first_phases[None, :] - positions[:, None] * freqs[None, :]))
        return positions, np.max(misfit, axis=1)

    nearest, nearest_misfit = refine(np.array([first_guess]))
    if (
        nearest_misfit[0] <= 1e-3
        and abs(nearest[0] - round(nearest[0])) <= 1e-3
        and nearest[0] >= 0
    ):
        return float(nearest[0])  # the usual case: a small whole first position
    n_shifts = min(int(MAX_START / wavelength) + 2, _SEARCH_WORK // max(1, freqs.size))
    positions, misfit = refine(first_guess + np.arange(-2, n_shifts) * wavelength)
    plausible = positions[misfit <= misfit.min() + 1e-3]
    # A position is "whole" within what the phase noise allows the fastest pair to resolve.
    tolerance = max(1e-6, 10 * float(misfit.min()) / float(np.max(freqs)))
    whole = np.abs(plausible - np.round(plausible)) <= tolerance
    order_key = np.lexsort((np.abs(plausible), plausible < 0, ~whole))
    return float(plausible[order_key[0]])


def identify_encoding(matrix: ArrayLike) -> Identification:
    """Find the convention, base and first position that explain a positional-encoding matrix.

    Parameters
    ----------
    matrix : array_like, shape (n_positions, d_model)
        An encoding with positions in rows (a transposed matrix is detected and reported), at
        least 2 rows and 2 columns, consecutive positions (step 1) from any start.

    Returns
    -------
    Identification
        The best candidate, its largest absolute error and whether that is within rounding.

    Raises
    ------
    ValueError
        For a matrix that is not 2-D, has fewer than 2 rows and columns, holds NaN or inf, or
        exceeds the memory budget. TypeError for a non-numeric matrix.

    Notes
    -----
    Each pair's phase ``atan2(sin, cos)`` advances by ``w_i`` per row; a least-squares fit of
    ``log w_i`` against ``i`` gives the base, the phases of the first row give the first
    position (unwrapped from the slowest pair to the fastest, which resolves the ``2*pi``
    ambiguity), and the candidate encoding is then compared entry by entry.

    Examples
    --------
    >>> matrix = sinusoidal_encoding(2 + np.arange(50), 16, convention="tensor2tensor")
    >>> found = identify_encoding(matrix)
    >>> found.convention, found.base, found.start, found.matches
    ('tensor2tensor', 10000.0, 2.0, True)
    """
    values = as_real_array(matrix, "matrix", ndim=2)
    check_size(values.size * 4, "identifying this matrix")
    if min(values.shape) < 2:
        raise ValueError(
            f"matrix must have at least 2 rows (positions) and 2 columns, got shape {values.shape}"
        )
    candidates = []
    for oriented, transposed in ((values, False), (values.T, True)):
        if oriented.shape[1] > _MAX_COLUMNS:  # wider than any encoding we identify
            continue
        for name in CONVENTIONS:
            fitted = _fit(oriented, name)
            if fitted is not None:
                if transposed:
                    fitted = Candidate(
                        fitted.convention, fitted.base, fitted.start, fitted.max_abs_error,
                        fitted.worst_cell[::-1],
                    )  # fmt: skip
                candidates.append((fitted, transposed))
    if not candidates:
        raise ValueError(
            f"matrix of shape {values.shape} cannot be an encoding: it needs a sin/cos pair "
            f"(2 columns) and at most {_MAX_COLUMNS} columns, positions in rows or in columns"
        )
    best = _simplest([c for c, _ in candidates])
    transposed = next(t for c, t in candidates if c is best)
    precision = next(
        (label for limit, label in _PRECISION_LEVELS if best.max_abs_error <= limit), "no match"
    )
    return Identification(
        matches=best.max_abs_error <= MATCH_TOLERANCE,
        convention=best.convention,
        base=best.base,
        start=best.start,
        max_abs_error=best.max_abs_error,
        worst_cell=best.worst_cell,
        transposed=transposed,
        precision=precision,
        candidates=tuple(
            sorted((c for c, t in candidates if t == transposed), key=lambda c: c.max_abs_error)
        ),
    )
