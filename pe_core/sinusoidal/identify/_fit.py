"""Fitting a table under one convention: each pair's phase and its advance per row give the
spacing of the positions, the bases worth trying and the first position, as trials to compare."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from pe_core.sinusoidal.conventions import CONVENTIONS, Convention
from pe_core.sinusoidal.encoding import sinusoidal_encoding

#: Rows used to fit the frequencies (the first ones).
_FIT_ROWS = 512

#: First positions are searched up to this value (the app's largest sequence is 10**6).
MAX_START = 2.0**20

#: Phase differences (radians) that a table's own noise can explain.
_PHASE_NOISE = 0.05

#: Bound on the start search's work (shifts x pairs of the ladder).
_SEARCH_WORK = 1 << 18

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
        unpaired = _sin_column_frequency(matrix[:, layout.sin_columns][:, n_pairs])
        # Its index is the largest, so its frequency is the smallest; one read above the
        # slowest pair's is the table's rounding (a column so slow that its second difference
        # is below the format's step), and is left out.
        if unpaired < advance[-1]:
            advance = np.append(advance, unpaired)
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
    """Angle less its nearest whole number of turns, in [-pi, pi] (as accurate as a remainder
    after adding pi, and a tenth of its time: NumPy's float ``mod`` is a loop of ``fmod``)."""
    return angle - (2 * np.pi) * np.rint(angle / (2 * np.pi))


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
