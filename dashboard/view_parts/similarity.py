"""The offset profile of the Similarity view, also drawn by the Lesson."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard import claims
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.data import PROFILE_POINTS, bucket_extremes, offset_profile, profile_span
from dashboard.figures import similarity

#: Direct checks drawn on the profile: offsets from each starting position.
CHECK_OFFSETS = 24


@dataclass(frozen=True)
class ProfileData:
    offsets: np.ndarray
    values: np.ndarray  # the closed form at ``offsets`` (or the bucket minimum when reduced)
    upper: np.ndarray | None  # bucket maximum when the profile was reduced to an envelope
    checks: dict[int, tuple[np.ndarray, np.ndarray]]  # start k -> (offsets, direct values)
    note: str


@cached
def profile_data(config: Config, kind: str) -> ProfileData:
    """Similarity against offset by closed form, and direct checks from a few starting positions:
    the offsets a sequence of L positions has, 0 to L − 1 (one position: offset 0 alone), and
    from a start k only those that stay in it, 0 to L − 1 − k."""
    n_offsets = config.n_positions
    checks = _direct_checks(config, kind, n_offsets)
    if not config.layout.is_paired:
        return ProfileData(np.zeros(0), np.zeros(0), None, checks, "")
    profile = offset_profile(
        config.d_model, config.base, config.convention, kind, profile_span(n_offsets)
    )[:n_offsets]
    if n_offsets <= PROFILE_POINTS * 2:
        return ProfileData(np.arange(n_offsets), profile, None, checks, "")
    bucket, lowest, highest = bucket_extremes(profile, PROFILE_POINTS)
    note = (
        f"envelope: lowest and highest value in each run of {bucket} offsets "
        f"(all {n_offsets:,} computed)"
    )
    return ProfileData(np.arange(lowest.size) * bucket, lowest, highest, checks, note)


def check_starts(length: int) -> tuple[int, ...]:
    """A few different starting positions k for the direct checks."""
    return tuple(sorted({0, length // 3, (2 * length) // 3}))


def _direct_checks(
    config: Config, kind: str, n_offsets: int
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    offsets = np.unique(np.linspace(0, n_offsets - 1, CHECK_OFFSETS).round().astype(int))
    checks = {}
    for start in check_starts(config.n_positions):
        inside = offsets[start + offsets <= config.n_positions - 1]  # pairs in the sequence
        rows = pe_core.sinusoidal_encoding(np.concatenate(([start], start + inside)), config.bank)
        anchor, shifted = rows[0], rows[1:]
        if kind == "dot":
            values = shifted @ anchor
        elif kind == "distance":
            values = np.linalg.norm(shifted - anchor, axis=1)
        else:
            values = pe_core.cosine_similarity(anchor[None, :], shifted)[0]
        checks[start] = (inside, values)
    return checks


def record_offsets(config: Config, kind: str) -> None:
    """The offsets the profile draws, as a claim (recorded on every run, outside the cached
    figure)."""
    profile = profile_data(config, kind)
    claims.offsets_drawn(config.n_positions, profile.offsets, profile.checks)


def profile_figure(config: Config, kind: str):
    profile = profile_data(config, kind)
    return similarity.offset_profile_chart(
        profile.offsets,
        profile.values,
        upper=profile.upper,
        checks=profile.checks,
        kind=kind,
        subtitle=_profile_subtitle(config, profile.note),
    )


def _profile_subtitle(config: Config, note: str) -> str:
    if not config.layout.is_paired:
        starts = len(check_starts(config.n_positions))
        return "no closed form (an unpaired sin column): markers computed directly from " + (
            f"{starts} starting positions k, which disagree"
            if starts > 1
            else "starting position 0 only"
        )
    return note or "closed form for every offset from 0 to L−1; markers: direct computation"
