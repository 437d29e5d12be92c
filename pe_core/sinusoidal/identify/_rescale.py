"""A table that is an encoding only after an affine rescaling (PatchTST normalizes its table):
the rescaling found by fitting each pair to a circle, undone, and named when known code
applies it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pe_core.sinusoidal.conventions import CONVENTIONS
from pe_core.sinusoidal.encoding import sinusoidal_encoding
from pe_core.sinusoidal.identify._difference import _spread_rows, _storage
from pe_core.sinusoidal.identify._search import _MAX_COLUMNS, _identify_values
from pe_core.sinusoidal.identify.results import Identification

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
    # table's rounding times s), which identify's float32 arithmetic bound allows. Values
    # written as text keep their printing, scaled.
    written = _storage(values, dtype)

    def identified(scale, offset):
        storage = replace(written, affine=(scale, offset)) if written.printing is not None else None
        return _identify_values(
            scale * values + offset, np.dtype(np.float64), squeezed_from, storage=storage
        )

    found = identified(scale, offset)
    oriented_shape = values.shape[::-1] if found.transposed else values.shape
    positions = found.start + found.step * np.arange(oriented_shape[0], dtype=np.float64)
    exact = sinusoidal_encoding(
        positions, oriented_shape[1], base=found.base, convention=found.convention
    )
    for name, rescaling in _NORMALIZATIONS.items():
        known_scale, known_offset = rescaling(exact)
        if abs(known_scale - scale) <= 1e-4 * scale and abs(known_offset - offset) <= 1e-4 * scale:
            if not found.matches:
                # The fitted rescaling is a little off (a small table, or values written with
                # few digits): judged again under the known code's own.
                found = identified(known_scale, known_offset)
                if not found.matches:
                    continue
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
    if not found.matches:
        return None
    return replace(found, scale=scale, offset=offset)
