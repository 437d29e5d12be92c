"""Do positions get distinct, well-separated encodings, also after rounding to low precision?"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import (
    Positions,
    as_real_array,
    check_choice,
    check_d_model,
    check_positions_for,
    check_precision,
    check_representable,
)
from pe_core._numerics.formats import FloatFormat
from pe_core._numerics.kernels import (
    cos_sum_progression,
    distance_from_dot,
    encode_into,
    round_to_precision,
)
from pe_core.bank import ColumnLayout, FrequencyBank
from pe_core.errors import InputError
from pe_core.sinusoidal.conventions import resolve_bank

__all__ = [
    "UniquenessReport",
    "nearest_neighbor_distances",
    "pairwise_limit",
    "uniqueness_report",
]

CASTS = ("positions", "angles", "outputs")

#: Largest n for which arbitrary positions are compared pair by pair (n^2 d work).
PAIRWISE_LIMIT = 4096
_PAIRWISE_WORK = 2**33


def pairwise_limit(d_model: int) -> int:
    """The most positions compared pair by pair at this width: :data:`PAIRWISE_LIMIT`, fewer
    when n^2 * d_model would pass 2**33.

    >>> pairwise_limit(512), pairwise_limit(8191)
    (4096, 1024)
    """
    return min(PAIRWISE_LIMIT, math.isqrt(_PAIRWISE_WORK // check_d_model(d_model)))


#: Largest number of values (positions x d_model) computed and hashed to find duplicates.
_HASH_WORK = 2**25

#: Bound on the float64 evaluation error of one encoding entry (a few ulps).
_EVALUATION_ERROR = 4e-16

#: Number of offsets listed in :attr:`UniquenessReport.nearest_offsets`.
_N_NEAREST = 10

_HASH_MULTIPLIERS = np.random.default_rng(20170612).integers(
    1, 2**63, size=1 << 16, dtype=np.uint64
) | np.uint64(1)


@dataclass(frozen=True)
class UniquenessReport:
    """Whether positions get distinct encodings, and how close the closest two are.

    Attributes
    ----------
    n_positions : int
        Number of positions analysed.
    n_distinct : int
        Number of different rows after rounding.
    n_duplicates : int
        Rows equal to an earlier row at the chosen precision (``n_positions - n_distinct``).
    first_collision : float or None
        The first position whose encoding equals an earlier position's, or None.
    collides_with : float or None
        The earlier position that ``first_collision`` equals.
    min_distance : float or None
        Smallest Euclidean distance between the encodings of two different positions
        (0 when there are duplicates; None for fewer than two positions).
    closest_pair : tuple of two floats, or None
        Two positions at ``min_distance``.
    max_cosine : float or None
        Largest cosine similarity between two different positions.
    distance_error_bound : float
        ``min_distance`` is within this of the smallest distance between the rounded rows.
        0 when the rounded rows were compared themselves; otherwise the closed form on the
        exact encoding was used together with a rigorous bound on what rounding can change.
    precision : str
        float64, float32, float16 or bfloat16.
    cast : str
        Where the rounding happens: "positions", "angles" or "outputs".
    method : str
        "closed form" (offset profile, no matrix) or "pairwise" (rows compared directly).
    nearest_offsets : tuple of (offset, distance) pairs
        Closed form only: the offsets at the deepest local minima of the distance, closest
        first, including far-apart near-collisions.
    collisions : tuple of (earlier, later) position pairs
        The first few collisions (at most 10), in the order of the later position: each later
        position's encoding equals the earlier one's.
    """

    n_positions: int
    n_distinct: int
    n_duplicates: int
    first_collision: float | None
    collides_with: float | None
    min_distance: float | None
    closest_pair: tuple[float, float] | None
    max_cosine: float | None
    distance_error_bound: float
    precision: str
    cast: str
    method: str
    nearest_offsets: tuple[tuple[float, float], ...] = ()
    collisions: tuple[tuple[float, float], ...] = ()

    @property
    def all_distinct(self) -> bool:
        """True when no two positions share an encoding."""
        return self.n_duplicates == 0

    def summary(self) -> str:
        """A plain-English verdict, e.g. "all 2048 positions have distinct encodings; ..."."""
        if self.n_positions < 2:
            return f"{self.n_positions} position: nothing to compare"
        if not self.all_distinct:
            return (
                f"positions {_fmt(self.collides_with)} and {_fmt(self.first_collision)} collide "
                f"at {self.precision} (cast: {self.cast}); {self.n_duplicates:,} of "
                f"{self.n_positions:,} positions repeat an earlier encoding"
            )
        a, b = self.closest_pair
        return (
            f"all {self.n_positions:,} positions have distinct encodings; the closest two are "
            f"{_fmt(abs(b - a))} apart at distance {self.min_distance:.3g}"
        )


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


def _position(value: float) -> float:
    return int(value) if float(value).is_integer() else float(value)


def _row_error_bound(
    positions: Positions, layout: ColumnLayout, freqs, fmt: FloatFormat, cast: str
) -> float:
    """Largest Euclidean distance between any rounded row and its exact row."""
    evaluation = _EVALUATION_ERROR * math.sqrt(layout.d_model)
    u, a = fmt.unit_roundoff, fmt.subnormal_half_spacing
    if cast == "outputs":
        row_norm = math.sqrt(layout.n_sin)  # sin^2 + cos^2 = 1 per pair
        return u * row_norm + a * math.sqrt(layout.d_model) + evaluation
    if cast == "positions":
        moved = np.max(np.abs(round_to_precision(positions.values, fmt.name) - positions.values))
        return float(moved) * float(np.linalg.norm(freqs)) + evaluation
    # angles: fl(fl(k) * fl(w)) differs from k * w by at most about 3u|kw| plus underflow terms,
    # and a (sin, cos) pair moves by a chord no longer than the change of its angle.
    k = positions.max_abs
    angle_error = (3.01 * u * k) * freqs + (2.0 * k + 1.0) * a
    return float(np.linalg.norm(angle_error)) + evaluation


def rounded_rows(values, layout: ColumnLayout, freqs, fmt: FloatFormat, cast: str):
    """The rows a model stores for ``values`` when rounding happens at ``cast``."""
    out = np.empty((values.size, layout.d_model))
    if cast == "angles":
        angles = round_to_precision(
            round_to_precision(values, fmt.name)[:, None] * round_to_precision(freqs, fmt.name),
            fmt.name,
        )
        for column in layout.zero_columns:
            out[:, column] = 0.0
        out[:, layout.sin_columns] = np.sin(angles[:, : layout.n_sin])
        out[:, layout.cos_columns] = np.cos(angles[:, : layout.n_cos])
        return out
    if cast == "positions":
        values = round_to_precision(values, fmt.name)
    encode_into(out, Positions(values), freqs, layout)
    return out if cast == "positions" else round_to_precision(out, fmt.name)


def _find_duplicates(positions: Positions, row_maker, n_columns: int):
    """Indices of rows equal to an earlier row, and the index of the first such earlier row.

    Rows are hashed a few thousand at a time (memory stays small for a million positions), and
    every hash match is confirmed by comparing the rows themselves.
    """
    n = positions.n
    chunk = max(1, (1 << 20) // max(1, n_columns))
    multipliers = np.resize(_HASH_MULTIPLIERS, n_columns)
    hashes = np.empty(n, dtype=np.uint64)
    for first in range(0, n, chunk):
        rows = row_maker(positions.values[first : first + chunk]) + 0.0  # -0.0 becomes 0.0
        bits = rows.view(np.uint64)
        hashes[first : first + chunk] = (bits ^ (bits >> np.uint64(29))) @ multipliers
    _, first_index, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    earlier = first_index[inverse]
    candidates = np.flatnonzero(earlier < np.arange(n))
    confirmed = np.zeros(candidates.size, dtype=bool)
    for first in range(0, candidates.size, chunk):
        some = candidates[first : first + chunk]
        later_rows = row_maker(positions.values[some]) + 0.0
        earlier_rows = row_maker(positions.values[earlier[some]]) + 0.0
        confirmed[first : first + chunk] = np.all(later_rows == earlier_rows, axis=1)
    duplicates = candidates[confirmed]
    return duplicates, earlier[duplicates]


def _nearest_offsets(offsets, distances) -> tuple[tuple[float, float], ...]:
    """The deepest local minima of the distance profile, closest first (``offsets(m)`` is the
    offset of ``distances[m]``)."""
    is_minimum = np.ones(distances.size, dtype=bool)
    is_minimum[1:] &= distances[1:] <= distances[:-1]
    is_minimum[:-1] &= distances[:-1] <= distances[1:]
    minima = np.flatnonzero(is_minimum)
    best = minima[np.argsort(distances[minima], kind="stable")[:_N_NEAREST]]
    return tuple((_position(offsets(m)), float(distances[m])) for m in best)


def uniqueness_report(
    positions: int | ArrayLike,
    d_model: int | FrequencyBank,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
    precision: str = "float64",
    cast: str = "outputs",
    offset_dots: ArrayLike | None = None,
) -> UniquenessReport:
    """Check that ``positions`` get distinct encodings, at a chosen precision.

    Parameters
    ----------
    positions : int or array_like of float
        As for :func:`pe_core.sinusoidal_encoding`.
    d_model, base, convention
        As for :func:`pe_core.sinusoidal_encoding`.
    precision : {"float64", "float32", "float16", "bfloat16"}, optional
        The format a model would keep the numbers in.
    cast : {"outputs", "positions", "angles"}, optional
        Where the rounding happens, as in real models: "positions" (position ids stored in
        ``precision``, encoding computed exactly from them), "angles" (``k * w_i`` computed in
        ``precision``, i.e. ``fl(fl(k) * fl(w_i))``, then sin and cos exactly) or "outputs"
        (encoding computed exactly, then stored in ``precision``).
    offset_dots : array_like of float, optional
        ``PE(k) . PE(k + m * step)`` for ``m = 1, 2, ...``: at least ``n - 1`` values (only the
        first ``n - 1`` are read), as ``offset_similarity(step * np.arange(1, n), bank,
        kind="dot")`` gives them, for a caller that holds this profile already (e.g. for a
        longer run of offsets); used by the closed form only, and computed when not given.

    Returns
    -------
    UniquenessReport
        Its ``summary()`` gives the verdict in words.

    Raises
    ------
    ValueError
        For invalid arguments; for positions (cast "positions", "angles") or angles (cast
        "angles") beyond the largest finite number of ``precision``; and for more than
        :data:`PAIRWISE_LIMIT` positions that the closed form does not cover (positions not in
        arithmetic progression, or odd ``d_model`` with an unpaired sin column); and when
        duplicates of rounded outputs can only be found by comparing more than 2**25 values.

    Notes
    -----
    For evenly spaced positions the distance between two encodings depends only on their offset
    (:func:`pe_core.offset_similarity`), so the smallest distance over all pairs is the smallest
    value of the offset profile: computed for a million positions without any ``L x L`` or
    ``L x d_model`` matrix. Rounding then moves each row by at most a bound ``eps`` (from the
    format's unit roundoff); when the closest exact pair is more than ``2 eps`` apart no two
    rounded rows can coincide. Otherwise, when the rounding is at the positions or the angles,
    two rows are equal exactly when the rounded positions are (pair 0 has ``w_0 = 1``); when it
    is at the outputs, the rounded rows are hashed a chunk at a time (at most 2**25 values) and
    every match is confirmed row by row. Duplicates are always counted exactly.

    Known facts: with ``cast="positions"`` bfloat16 first collides at position 257 (which rounds
    to 256) and float16 at 2049 (to 2048).

    Examples
    --------
    >>> uniqueness_report(2048, 512).summary()
    'all 2,048 positions have distinct encodings; the closest two are 1 apart at distance 3.71'
    >>> report = uniqueness_report(1000, 512, precision="bfloat16", cast="positions")
    >>> report.first_collision, report.collides_with
    (257, 256)
    """
    bank = resolve_bank(d_model, base, convention)
    fmt = check_precision(precision)
    cast = check_choice(cast, "cast", CASTS)
    checked = check_positions_for(bank, positions)
    layout, freqs, d_model = bank.layout, bank.frequencies, bank.d_model
    n = checked.n
    if n < 2:
        return UniquenessReport(n, n, 0, None, None, None, None, None, 0.0, fmt.name, cast, "none")
    check_representable(checked, freqs, fmt, cast)

    def row_maker(values):
        return rounded_rows(values, layout, freqs, fmt, cast)

    if layout.is_paired and checked.is_progression:
        dot = _offset_dots(offset_dots, checked, freqs)
        return _closed_form_report(checked, layout, freqs, fmt, cast, row_maker, dot)
    if n > pairwise_limit(d_model):
        why = (
            "they are not evenly spaced integers"
            if not checked.is_progression
            else f"odd d_model={d_model} leaves the {convention!r} sin column unpaired"
        )
        raise InputError(
            f"uniqueness_report compares {n:,} positions pair by pair because {why}; that is "
            f"limited to {pairwise_limit(d_model):,} positions at d_model {d_model:,} "
            f"(PAIRWISE_LIMIT, and n^2 * d_model <= 2**33): pass fewer positions, an int L, or "
            f"an even d_model"
        )
    return _pairwise_report(checked, layout, fmt, cast, row_maker)


def _offset_dots(given, checked, freqs) -> NDArray[np.float64]:
    """``PE(k) . PE(k + m * step)`` for ``m = 1 .. n - 1``: ``given`` (checked, copied), or
    computed by the closed form."""
    n, step = checked.n, float(checked.step)
    if given is None:
        return cos_sum_progression(step, step, n - 1, freqs)
    values = as_real_array(given, "offset_dots")
    if values.ndim != 1 or values.size < n - 1:
        raise InputError(
            f"offset_dots must be a 1-D array of at least n - 1 = {n - 1:,} values (offsets "
            f"1 .. {n - 1:,} steps), got shape {values.shape}"
        )
    dots = np.array(values[: n - 1], dtype=np.float64)
    bound = freqs.size * (1.0 + 1e-9)  # |sum of h cosines| <= h
    if dots.size and not np.all(np.abs(dots) <= bound):
        raise InputError(
            f"offset_dots must be finite dot products of {freqs.size:,} sin/cos pairs, each "
            f"within +/-{freqs.size:,}, got {dots[~(np.abs(dots) <= bound)][0]!r}"
        )
    return dots


def _closed_form_report(checked, layout, freqs, fmt, cast, row_maker, dot) -> UniquenessReport:
    n, step = checked.n, float(checked.step)

    def offsets(index):  # distances[m] is at offset step * (m + 1)
        return step * (np.asarray(index, dtype=np.float64) + 1)

    max_cosine = float(np.max(dot)) / freqs.size if freqs.size else 0.0
    distances = distance_from_dot(dot, offsets, freqs)
    nearest = int(np.argmin(distances))
    exact_min = float(distances[nearest])
    row_error = _row_error_bound(checked, layout, freqs, fmt, cast)
    common = dict(precision=fmt.name, cast=cast, method="closed form")
    nearest_offsets = _nearest_offsets(offsets, distances)

    first = checked.values[0]
    # The exact closed form, with the bound on how far rounding can move each distance.
    bounded = UniquenessReport(
        n,
        n,
        0,
        None,
        None,
        exact_min,
        (_position(first), _position(first + offsets(nearest))),
        min(max_cosine, 1.0),
        2 * row_error,
        nearest_offsets=nearest_offsets,
        **common,
    )
    if exact_min > 2 * row_error:  # no two rounded rows can coincide
        return bounded
    if layout.n_cos == 0:  # no sin/cos pair at all: every row is the zero vector
        duplicates, matches = np.arange(1, n), np.zeros(n - 1, dtype=np.int64)
    elif cast in ("positions", "angles"):
        # Pair 0 has w_0 = 1 in every convention, so its angle is the rounded position itself:
        # rows are equal exactly when the rounded (integer) positions are. (Distinct integers
        # a, b below 2**53 are never equal modulo 2 pi to within float64 rounding.)
        duplicates, matches = _repeats(round_to_precision(checked.values, fmt.name))
    else:
        work = n * layout.d_model
        if work > _HASH_WORK:
            raise InputError(
                f"at {fmt.name} the closest exact pair ({exact_min:.3g} apart) is within "
                f"rounding reach ({2 * row_error:.3g}), so every rounded row must be compared: "
                f"{n:,} positions x d_model {layout.d_model} = {work:,} values, more than the "
                f"limit of {_HASH_WORK:,} (2**25); check fewer positions or a smaller d_model"
            )
        duplicates, matches = _find_duplicates(checked, row_maker, layout.d_model)
    if duplicates.size:
        return _collision_report(
            checked, duplicates, matches, freqs.size > 0, nearest_offsets, common
        )
    if n <= pairwise_limit(layout.d_model):
        return _pairwise_report(checked, layout, fmt, cast, row_maker)
    return bounded


def _repeats(keys: np.ndarray, axis: int | None = None):
    """Indices of entries (rows, with ``axis=0``) equal to an earlier one, and of that one."""
    _, first_index, inverse = np.unique(keys, axis=axis, return_index=True, return_inverse=True)
    earlier = first_index[inverse.ravel()]
    duplicates = np.flatnonzero(earlier < np.arange(earlier.size))
    return duplicates, earlier[duplicates]


def _collision_report(checked, duplicates, matches, nonzero, nearest_offsets, common):
    """The report when some rows repeat: distance 0 between the first repeat and its twin."""
    n = checked.n
    later, match = checked.values[duplicates[0]], checked.values[matches[0]]
    first = np.argsort(duplicates, kind="stable")[:_N_NEAREST]
    collisions = tuple(
        (_position(checked.values[matches[j]]), _position(checked.values[duplicates[j]]))
        for j in first
    )
    return UniquenessReport(
        n,
        n - duplicates.size,
        int(duplicates.size),
        _position(later),
        _position(match),
        0.0,
        (_position(match), _position(later)),
        1.0 if nonzero else 0.0,
        0.0,
        nearest_offsets=nearest_offsets,
        collisions=collisions,
        **common,
    )


def _pairwise_report(checked, layout, fmt, cast, row_maker) -> UniquenessReport:
    n = checked.n
    rows = row_maker(checked.values) + 0.0  # -0.0 becomes 0.0
    duplicates, matches = _repeats(rows, axis=0)
    common = dict(precision=fmt.name, cast=cast, method="pairwise")
    if duplicates.size:
        return _collision_report(checked, duplicates, matches, bool(np.any(rows)), (), common)
    squared_norms = np.einsum("ij,ij->i", rows, rows)
    gram = rows @ rows.T
    squared = squared_norms[:, None] + squared_norms[None, :] - 2.0 * gram
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    squared = np.where(upper, squared, np.inf)
    # The Gram trick loses digits to cancellation: recompute the near-minimal pairs exactly.
    slack = 1e-12 * max(1.0, float(squared_norms.max()))
    a_index, b_index = np.nonzero(squared <= squared.min() + slack)
    exact = np.linalg.norm(rows[a_index] - rows[b_index], axis=1)
    best = int(np.argmin(exact))
    norms = np.sqrt(squared_norms)
    cosine = np.where(upper, gram / np.maximum(np.outer(norms, norms), 1e-300), -np.inf)
    return UniquenessReport(
        n,
        n,
        0,
        None,
        None,
        float(exact[best]),
        (_position(checked.values[a_index[best]]), _position(checked.values[b_index[best]])),
        float(np.clip(cosine.max(), -1.0, 1.0)),
        0.0,
        **common,
    )


def nearest_neighbor_distances(
    positions: int | ArrayLike,
    d_model: int | FrequencyBank,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
    offset_dots: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Distance from each position's encoding to the nearest other position's (float64).

    For evenly spaced positions and paired columns, position ``j`` of ``n`` has neighbours at
    every offset up to ``max(j, n - 1 - j)`` steps, so its nearest distance is a running
    minimum of the offset profile: ``O(n)`` memory, no matrix. Otherwise rows are compared
    pairwise (at most :data:`PAIRWISE_LIMIT` positions).

    ``offset_dots`` (optional) is that profile's dot products, as for
    :func:`uniqueness_report`: given, it is not computed again.

    Returns
    -------
    ndarray of float64, shape (n_positions,)
        ``inf`` if there is only one position.

    Examples
    --------
    >>> nearest_neighbor_distances(5, 4, base=100.0).round(4)
    array([0.964, 0.964, 0.964, 0.964, 0.964])
    """
    bank = resolve_bank(d_model, base, convention)
    checked = check_positions_for(bank, positions)
    layout, freqs, d_model = bank.layout, bank.frequencies, bank.d_model
    n = checked.n
    if n < 2:
        return np.full(n, np.inf)
    if layout.is_paired and checked.is_progression:
        step = float(checked.step)
        dot = _offset_dots(offset_dots, checked, freqs)
        distances = distance_from_dot(dot, lambda index: step * (index + 1.0), freqs)
        running_min = np.minimum.accumulate(distances, out=distances)
        # Position j reaches offsets up to max(j, n - 1 - j) steps: the running minimum there.
        nearest = np.empty(n)
        half = n // 2
        nearest[:half] = running_min[n - 1 - half : n - 1][::-1]
        nearest[half:] = running_min[half - 1 : n - 1]
        return nearest
    if n > pairwise_limit(d_model):
        raise InputError(
            f"nearest_neighbor_distances compares {n:,} positions pair by pair (not evenly "
            f"spaced integers, or an unpaired sin column); limited to "
            f"{pairwise_limit(d_model):,} at d_model {d_model:,}"
        )
    rows = np.empty((n, d_model))
    encode_into(rows, checked, freqs, layout)
    squared_norms = np.einsum("ij,ij->i", rows, rows)
    squared = squared_norms[:, None] + squared_norms[None, :] - 2.0 * (rows @ rows.T)
    np.fill_diagonal(squared, np.inf)
    return np.sqrt(np.maximum(squared.min(axis=1), 0.0))
