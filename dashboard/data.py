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
