"""The uniqueness report and nearest-neighbour chart of the Uniqueness view (the Lesson too)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.data import PROFILE_POINTS, bucket_extremes, offset_profile, profile_span
from dashboard.figures import similarity

#: Where the rounding happens, as a sentence ends: "... at bfloat16, {words}".
CAST_WORDS = {
    "outputs": "the encoding computed exactly, then stored",
    "angles": "the angles k·ω computed in that format",
    "positions": "the position ids stored in that format",
}


def neighbour_figure(
    config: Config, precision: str, cast: str, collisions: tuple[tuple[float, float], ...]
):
    data = neighbour_distances(config, precision, cast)
    label = f"at {precision}: {CAST_WORDS[cast]}" if precision != "float64" else ""
    return similarity.neighbour_distance_chart(
        data.positions,
        data.exact_next,
        exact_nearest=data.exact_nearest,
        stored_positions=data.stored_positions,
        stored=data.stored,
        stored_label=label,
        collision=collisions[0] if collisions else None,
        subtitle=data.note or "every position",
    )


def representable_positions(n_positions: int, precision: str, cast: str) -> int:
    """How many of the positions 0 .. n-1 a model can hold when rounding at ``cast``: with the
    position ids or the angles in ``precision``, those from its overflow threshold on become
    inf (float16: from 65,520). With the stored encoding rounded, all of them."""
    if cast == "outputs":
        return n_positions
    threshold = pe_core.PRECISIONS[precision].overflow_threshold
    if not math.isfinite(threshold):  # float64: nothing a position can reach overflows
        return n_positions
    return int(min(n_positions, math.ceil(threshold)))


def offset_dots(config: Config, n: int) -> np.ndarray | None:
    """PE(k)·PE(k + m) for m = 1 .. n - 1 from the shared profile of the offsets (cached for a
    run of offsets that covers nearby L too, :func:`dashboard.data.profile_span`), for the core's
    closed form; None where there is none (an unpaired column) or nothing to compare."""
    if n < 2 or not config.layout.is_paired:
        return None
    span = profile_span(n)
    return offset_profile(config.d_model, config.base, config.convention, "dot", span)[1:n]


@cached
def uniqueness(config: Config, precision: str, cast: str) -> pe_core.UniquenessReport:
    n = representable_positions(config.n_positions, precision, cast)
    return pe_core.uniqueness_report(
        n, config.bank, precision=precision, cast=cast, offset_dots=offset_dots(config, n)
    )


#: Largest number of rounded values (rows x d_model) computed for the neighbour chart when
#: rounding happens at the angles or the stored encoding; beyond it, positions are sampled.
NEIGHBOUR_VALUES = 1 << 22


@dataclass(frozen=True)
class NeighbourData:
    """Distances between the encodings of neighbouring positions, as stored and exactly."""

    positions: np.ndarray  # k (or the first k of each run) of the exact series
    exact_next: np.ndarray  # |PE(k+1) - PE(k)| in exact arithmetic (float64)
    exact_nearest: np.ndarray | None  # float64 distance to the nearest of all other positions
    stored_positions: np.ndarray  # k of the stored series (all, run starts, or a sample)
    stored: np.ndarray | None  # |E(k+1) - E(k)| as stored at the precision (None: float64)
    note: str


@cached
def neighbour_distances(config: Config, precision: str, cast: str) -> NeighbourData:
    """Distance from each position's encoding to the next position's, as a model stores it at
    ``precision`` (collisions are zeros), with the exact values for comparison. Long sequences
    are shown as the lowest value in each run of positions; when the rounded rows would be too
    many to compute, a sample of positions stands for the rest (the note says so)."""
    n = representable_positions(config.n_positions, precision, cast)
    kwargs = {"d_model": config.bank}
    k = np.arange(max(n - 1, 0), dtype=np.float64)
    exact_next = pe_core.encoding_distances(k, k + 1, **kwargs)
    exact_nearest = None
    if config.layout.is_paired or n <= pe_core.PAIRWISE_LIMIT:
        exact_nearest = pe_core.nearest_neighbor_distances(
            n, offset_dots=offset_dots(config, n), **kwargs
        )[:-1]
    notes = []
    stored, sampled = None, k
    if precision != "float64":
        if cast != "positions" and 2 * k.size * config.d_model > NEIGHBOUR_VALUES:
            count = max(2, NEIGHBOUR_VALUES // (2 * config.d_model))
            sampled = np.unique(np.linspace(0, k.size - 1, count).round())
            notes.append(f"at {precision}: {sampled.size:,} positions sampled evenly")
        stored = pe_core.encoding_distances(
            sampled, sampled + 1, precision=precision, cast=cast, **kwargs
        )
    if k.size <= PROFILE_POINTS * 2:
        return NeighbourData(k, exact_next, exact_nearest, sampled, stored, "; ".join(notes))
    bucket, lowest_next, _ = bucket_extremes(exact_next, PROFILE_POINTS)
    starts = np.arange(lowest_next.size) * bucket
    if exact_nearest is not None:
        exact_nearest = bucket_extremes(exact_nearest, PROFILE_POINTS)[1]
    if stored is not None and sampled.size == k.size:  # every position: lowest per run too
        stored = bucket_extremes(stored, PROFILE_POINTS)[1]
        sampled = starts
    notes.insert(0, f"lowest value in each run of {bucket:,} positions")
    return NeighbourData(starts, lowest_next, exact_nearest, sampled, stored, "; ".join(notes))
