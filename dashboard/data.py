"""Cached data that several views draw: which column is which, rows of the encoding,
wavelengths of every convention, and the reduction of long curves to display size."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard.caching import cached
from dashboard.config import Config

#: Points of a curve drawn as it is; longer ones are reduced to runs (lowest and highest).
PROFILE_POINTS = 2000
#: Past this many offsets an offset profile is computed for a longer run of offsets, shared by
#: every L it covers (see :func:`profile_span`).
SHARED_PROFILE_FROM = 1 << 16


@dataclass(frozen=True)
class ColumnInfo:
    """Per-column facts for hover text: pair index, role, frequency and wavelength."""

    pair: np.ndarray
    role: np.ndarray
    frequency: np.ndarray
    wavelength: np.ndarray


@cached
def column_info(config: Config) -> ColumnInfo:
    bank = config.bank
    pair, role = bank.column_roles()
    freqs = bank.frequencies
    per_column = np.where(pair >= 0, freqs[np.maximum(pair, 0)] if freqs.size else 0.0, np.nan)
    with np.errstate(divide="ignore"):
        wavelength = 2 * np.pi / per_column
    return ColumnInfo(pair, role, per_column, wavelength)


@cached
def rows_at(config: Config, positions: tuple[int, ...]) -> np.ndarray:
    """Full encoding rows of a few positions."""
    return pe_core.sinusoidal_encoding(list(positions), config.bank)


@cached
def wavelengths_by_convention(d_model: int, base: float) -> dict[str, np.ndarray]:
    return {
        name: pe_core.wavelengths(d_model, base=base, convention=name)
        for name in pe_core.CONVENTIONS
    }


def bucket_extremes(values: np.ndarray, n_buckets: int) -> tuple[int, np.ndarray, np.ndarray]:
    """Split ``values`` into at most ``n_buckets`` runs of equal length (the last may be
    shorter); return the run length and each run's minimum and maximum."""
    bucket = math.ceil(values.size / n_buckets)
    count = math.ceil(values.size / bucket)
    padded = np.pad(values, (0, count * bucket - values.size), mode="edge").reshape(count, bucket)
    return bucket, padded.min(axis=1), padded.max(axis=1)


def profile_span(n_offsets: int) -> int:
    """How many offsets (0 .. span - 1) to compute for a profile of ``n_offsets``: the count
    itself up to :data:`SHARED_PROFILE_FROM`, beyond it rounded up to a multiple of an eighth
    of its power of two (at most 25 % more offsets). The profile of offsets 0 .. n - 1 does not
    depend on L otherwise, so moving L then reuses one cached computation instead of another
    pass over up to a million offsets (about 1.4 s of CPU at d_model 8,192)."""
    if n_offsets <= SHARED_PROFILE_FROM:
        return n_offsets
    quantum = 1 << (n_offsets.bit_length() - 3)
    return -(-n_offsets // quantum) * quantum


@cached
def offset_profile(d_model: int, base: float, convention: str, kind: str, span: int) -> np.ndarray:
    """Similarity of PE(k) and PE(k + offset) by the closed form at every offset 0 .. span - 1
    (:func:`pe_core.offset_similarity`; paired layouts only). The cosine is the dot product
    divided by the number of pairs, as the core computes it, so the Similarity view's default
    measure and the Uniqueness view (which reads the dot products) share one computation."""
    bank = pe_core.CONVENTIONS[convention].bank(d_model, base)
    if kind == "cosine" and bank.n_frequencies:
        dot = offset_profile(d_model, base, convention, "dot", span)
        return np.clip(dot / bank.n_frequencies, -1.0, 1.0)
    return pe_core.offset_similarity(np.arange(span), bank, kind=kind)
