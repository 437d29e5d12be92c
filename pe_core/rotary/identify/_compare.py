"""A cache against a rotary encoding computed in a given arithmetic: the expected values
(exact phasor tables for whole positions), the tolerance the data's precision gives each entry,
and the first entry beyond it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.formats import PRECISIONS, round_to_precision
from pe_core._numerics.kernels import phasors
from pe_core.rotary.identify._cache import _SAMPLE_ROWS, _Cache, _ladder, _spread

#: Unit roundoff of float32, the format transformers computes the angles in.
_U32 = PRECISIONS["float32"].unit_roundoff

#: Relative error of float32 frequencies, in float32 unit roundoffs: transformers computes the
#: scaled ones with a few float32 operations (Llama 3's smoothing, LongRoPE's division), and the
#: angle ``p w`` adds one more rounding.
_FREQ_ULPS = 16

#: Relative difference of an inv_freq vector from a config's that float32 frequencies explain
#: (a vector in a smaller format is itself the bf16_inv_freq bug).
_INV_FREQ_TOLERANCE = _U32 + _FREQ_ULPS * _U32

#: Entries compared at a time when every row is (8 MiB of float64 per array).
_CHUNK_VALUES = 1 << 20


def _angles(positions, inv_freq, *, freq_format=None, positions_format=None, angle_format=None):
    w = inv_freq
    p = positions
    if angle_format is not None:
        freq_format = freq_format or angle_format
        positions_format = positions_format or angle_format
    if freq_format is not None:
        w = round_to_precision(w, freq_format)
    if positions_format is not None:
        with np.errstate(over="ignore"):
            p = round_to_precision(p, positions_format)
    angles = p[:, None] * w[None, :]
    if angle_format is not None:
        angles = round_to_precision(angles, angle_format)
    return angles


#: Block of positions for the phasor tables (positions q * _BLOCK + r).
_BLOCK = 1024


def _phasor_table(positions: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray:
    """``exp(i p w)`` for whole positions, each within a few ulps of the exact value."""
    n = positions.size
    first = positions[0] if n else 0.0
    if (
        n % _BLOCK == 0
        and n
        and first % _BLOCK == 0
        and positions[-1] == first + n - 1
        and np.all(np.diff(positions) == 1)
    ):
        # Consecutive whole blocks (a cache from position 0): a broadcast product, no gather.
        coarse = phasors(first + _BLOCK * np.arange(n // _BLOCK, dtype=np.float64), w)
        fine = phasors(np.arange(_BLOCK, dtype=np.float64), w)
        return (coarse[:, None, :] * fine[None, :, :]).reshape(n, w.size)
    coarse_index = np.floor_divide(positions, _BLOCK)
    fine_index = positions - coarse_index * _BLOCK
    coarse_values, coarse_at = np.unique(coarse_index, return_inverse=True)
    fine_values, fine_at = np.unique(fine_index, return_inverse=True)
    coarse = phasors(coarse_values * _BLOCK, w)
    fine = phasors(fine_values, w)
    return coarse[coarse_at] * fine[fine_at]


@dataclass(frozen=True)
class _Model:
    """A cache as a rotary encoding computes it: frequencies, attention factor, and the
    roundings of its arithmetic."""

    inv_freq: NDArray[np.float64]
    attention_factor: float
    freq_format: str | None = None
    positions_format: str | None = None
    angle_format: str | None = None
    sin_sign: float = 1.0


class _Comparison:
    """Data (reduced to pairs) against models, with the tolerance its precision gives."""

    def __init__(self, cache: _Cache):
        self.cache = cache
        self.u_storage = cache.u_data
        self._scans: dict = {}
        n = cache.positions.size
        base, ladder = _ladder(cache.positions)
        self.sample = np.unique(np.concatenate([_spread(n, _SAMPLE_ROWS), ladder, [base]]))
        magnitude = np.abs(cache.positions)
        self.whole = bool(np.all(cache.positions == np.round(cache.positions))) and bool(
            np.max(magnitude) < 2.0**40
        )
        #: xPos's per-pair decay, when the cache carries it: ``(centre, scale_base, zeta)``,
        #: each entry's amplitude ``zeta_i ** ((p - centre) / scale_base)`` times the model's.
        self.xpos: tuple[float, float, NDArray[np.float64]] | None = None

    def amplitude(self, rows) -> NDArray[np.float64] | float:
        """The amplitude every model's entries carry besides its attention factor: xPos's
        ``zeta_i ** ((p - centre) / scale_base)`` per row and pair, else 1."""
        if self.xpos is None:
            return 1.0
        centre, scale_base, zeta = self.xpos
        power = (self.cache.positions[rows] - centre) / scale_base
        return zeta[None, :] ** power[:, None]

    def tolerance(self, model: _Model, rows) -> NDArray[np.float64]:
        """Largest difference explained per entry: the storage's rounding, and the rounding
        of ``p w`` in float32 (with float32 frequencies) plus float32's cos."""
        a = abs(model.attention_factor) * self.amplitude(rows)
        bound = np.multiply.outer(np.abs(self.cache.positions[rows]), model.inv_freq)
        bound *= a * _FREQ_ULPS * _U32
        bound += a * (self.u_storage + 4 * _U32) + 1e-12
        return bound

    def errors(self, model: _Model, rows):
        """(|cos - expected|, |sin - expected|, tolerance, expected cos, expected sin)."""
        positions = self.cache.positions[rows]
        fmt = model.positions_format or model.angle_format
        if fmt is not None and np.max(np.abs(positions)) >= PRECISIONS[fmt].overflow_threshold:
            # Position ids beyond the format's range (float16 above 65,519) are inf there: no
            # cache was computed that way.
            shape = (positions.size, model.inv_freq.size)
            infinite = np.full(shape, np.inf)
            return infinite, infinite, self.tolerance(model, rows), infinite, infinite
        if model.angle_format is None and self.whole:
            # Whole positions p = q B + r: exp(i p w) = exp(i q B w) exp(i r w), two small
            # exact tables and one complex product per entry instead of a sine and a cosine.
            w = model.inv_freq
            if model.freq_format is not None:
                w = round_to_precision(w, model.freq_format)
            if model.positions_format is not None:
                positions = round_to_precision(positions, model.positions_format)
            phasor = _phasor_table(positions, w)
            cos = model.attention_factor * phasor.real
            sin = model.attention_factor * phasor.imag
        else:
            angles = _angles(
                positions,
                model.inv_freq,
                freq_format=model.freq_format,
                positions_format=model.positions_format,
                angle_format=model.angle_format,
            )
            cos = model.attention_factor * np.cos(angles)
            sin = model.attention_factor * np.sin(angles)
        if self.xpos is not None:
            scale = self.amplitude(rows)
            cos, sin = cos * scale, sin * scale
        cos_error = np.abs(np.asarray(self.cache.cos[rows], dtype=np.float64) - cos)
        sin = sin if model.sin_sign > 0 else -sin
        sin_error = np.abs(np.asarray(self.cache.sin[rows], dtype=np.float64) - sin)
        return cos_error, sin_error, self.tolerance(model, rows), cos, sin

    def excess(self, model: _Model, rows=None) -> float:
        """Largest error over tolerance on ``rows`` (the sample by default): <= 1 explained."""
        rows = self.sample if rows is None else rows
        cos_error, sin_error, tolerance, _, _ = self.errors(model, rows)
        return float(max(np.max(cos_error / tolerance), np.max(sin_error / tolerance)))

    def largest(self, model: _Model, rows=None) -> float:
        """Largest absolute difference on ``rows`` (the sample by default)."""
        rows = self.sample if rows is None else rows
        cos_error, sin_error, _, _, _ = self.errors(model, rows)
        return float(max(np.max(cos_error), np.max(sin_error)))

    def explains(self, model: _Model) -> bool:
        """Whether ``model`` explains the sample rows (a cheap test)."""
        if model.inv_freq.size != self.cache.cos.shape[1]:
            return False
        return self.excess(model) <= 1.0

    def scan(self, model: _Model):
        """:meth:`_scan`, remembered per model (the identified encoding and the config's are
        often the same)."""
        key = (
            model.inv_freq.tobytes(),
            model.attention_factor,
            model.freq_format,
            model.positions_format,
            model.angle_format,
            model.sin_sign,
        )
        if key not in self._scans:
            self._scans[key] = self._scan(model)
        return self._scans[key]

    def _scan(self, model: _Model):
        """Every row, in order of position: the largest absolute error, the largest error
        beyond the storage's rounding alone, and the first departure beyond tolerance
        (row, pair, array, value, expected, tolerance) or None."""
        n = self.cache.positions.size
        order = np.argsort(np.abs(self.cache.positions), kind="stable")
        chunk = max(1, _CHUNK_VALUES // max(1, self.cache.cos.shape[1]))
        largest, beyond_storage, departure = 0.0, 0.0, None
        a = abs(model.attention_factor)
        for first in range(0, n, chunk):
            rows = order[first : first + chunk]
            cos_error, sin_error, tolerance, cos, sin = self.errors(model, rows)
            largest = max(largest, float(cos_error.max()), float(sin_error.max()))
            storage = a * self.amplitude(rows) * self.u_storage * 1.01 + 1e-15
            beyond_storage = max(
                beyond_storage,
                float(np.max(cos_error - storage)),
                float(np.max(sin_error - storage)),
            )
            if departure is None:
                for name, error, expected, values in (
                    ("cos", cos_error, cos, self.cache.cos),
                    ("sin", sin_error, sin, self.cache.sin),
                ):
                    bad = error > tolerance
                    if bad.any():
                        hit = np.argwhere(bad)[0]
                        row, pair = int(rows[hit[0]]), int(hit[1])
                        found = (
                            row,
                            pair,
                            name,
                            float(values[row, pair]),
                            float(expected[hit[0], hit[1]]),
                            float(tolerance[hit[0], hit[1]]),
                        )
                        if departure is None or abs(self.cache.positions[row]) < abs(
                            self.cache.positions[departure[0]]
                        ):
                            departure = found
        return largest, beyond_storage, departure
