"""Rebuilding a cos/sin cache from vectors before and after rotation: the pair layout in which
the rotation preserves each pair's norm, each pair's angle and norm ratio at each position (over
every head given), and how precisely the rotation's own arithmetic lets them be read."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._formats import PRECISIONS, round_to_precision
from pe_core._validation import _describe, as_array, as_real_array, check_size
from pe_core.errors import InputError, InputTypeError

#: A rotated pair's error in unit roundoffs of the format it was rotated in, relative to its
#: norm (times the attention factor): ``x cos - x' sin`` rounds cos and sin to that format (u
#: each, as transformers casts them to the input's dtype), each product (u) and the sum (u), at
#: most ``3.9 u |z|`` per component and ``5.5 u |z|`` for the pair. The rebuilt ``cos + i sin
#: = z_after conj(z_before) / |z_before|^2`` inherits it; 8 leaves room for float32 cos and sin
#: (one more rounding each).
ROTATION_ULPS = 8.0

#: Formats a rotation is recognized in, coarsest first (the values of both vectors are numbers
#: of it).
_FORMATS = ("bfloat16", "float16", "float32", "float64")


@dataclass
class _Rebuilt:
    """A cache rebuilt from vectors: full-width cos and sin in the layout found (columns that
    do not rotate are cos 1, sin 0), and what the vectors show."""

    cos: NDArray[np.float64]  # (n_positions, head_dim)
    sin: NDArray[np.float64]
    positions: NDArray[np.float64]
    rotated: str  # the format the vectors were rotated in
    unit: float  # relative precision of the rebuilt cos and sin: ROTATION_ULPS u
    layout: str
    heads: int  # vectors per position (the leading axes, flattened)
    largest_norm_change: float  # of the pairs, relative, after the attention factor


def _vector_array(values: ArrayLike, name: str) -> tuple[np.ndarray, np.dtype]:
    given = as_array(values, name)
    if given.dtype.kind not in "iuf" or given.dtype == np.bool_:
        raise InputTypeError(f"{name} must be an array of real numbers, got {_describe(values)}")
    if given.ndim < 2:
        raise InputError(
            f"{name} must have shape (positions, head_dim) or (..., positions, head_dim), "
            f"got shape {given.shape}"
        )
    array = np.asarray(given, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise InputError(f"{name} must be finite (no NaN or inf), got {_describe(values)}")
    return array, given.dtype


def _format(arrays, dtypes) -> str:
    """The coarsest format of ``_FORMATS`` that holds every value of both arrays (float16 only
    when one of them was given as float16; a sample of values)."""
    samples = [a.reshape(-1)[:: max(1, a.size // 65_536)] for a in arrays]
    for name in _FORMATS[:-1]:
        if name == "float16" and not any(d == np.float16 for d in dtypes):
            continue
        with np.errstate(over="ignore"):
            if all(np.array_equal(round_to_precision(s, name), s) for s in samples):
                return name
    return "float64"


def _pairs(x: np.ndarray, first: int, end: int, layout: str) -> np.ndarray:
    """Complex ``x_a + i x_b`` of each pair of columns ``first:end`` (..., n, pairs)."""
    block = x[..., first:end]
    if layout == "halves":
        half = (end - first) // 2
        return block[..., :half] + 1j * block[..., half:]
    return block[..., 0::2] + 1j * block[..., 1::2]


def _check_positions(positions, n: int) -> NDArray[np.float64]:
    if positions is None:
        return np.arange(n, dtype=np.float64)
    values = as_real_array(positions, "positions")
    kept = [s for s in values.shape if s != 1]
    if len(kept) > 1:
        raise InputError(
            f"positions must be 1-D (one position per row of before), got shape {values.shape}"
        )
    values = values.reshape(-1)
    if values.size != n:
        raise InputError(
            f"positions must give one position per row of before ({n}), got {values.size}"
        )
    if n > 1 and not np.all(np.diff(values) > 0):
        at = int(np.flatnonzero(np.diff(values) <= 0)[0])
        raise InputError(
            "positions must be strictly increasing (one row per position, in order), got "
            f"{values[at]:g} then {values[at + 1]:g} at rows {at} and {at + 1}"
        )
    return values


def _rebuild(before: ArrayLike, after: ArrayLike, positions) -> _Rebuilt:
    """The cos/sin cache that rotates ``before`` into ``after``; raises InputError for what
    is not such a pair of vectors."""
    x, x_dtype = _vector_array(before, "before")
    y, y_dtype = _vector_array(after, "after")
    if x.shape != y.shape:
        raise InputError(f"before and after must have the same shape, got {x.shape} and {y.shape}")
    n, width = x.shape[-2], x.shape[-1]
    check_size(x.size * 6, "rebuilding the rotation from these vectors")
    if n < 2:
        raise InputError(
            f"before must hold at least 2 positions (its second-to-last axis), got shape {x.shape}"
        )
    if width < 4:
        raise InputError(f"before must have at least 4 columns (2 pairs), got {width}")
    position_values = _check_positions(positions, n)
    x = x.reshape(-1, n, width)
    y = y.reshape(-1, n, width)
    heads = x.shape[0]
    rotated = _format((x, y), (x_dtype, y_dtype))
    u = PRECISIONS[rotated].unit_roundoff
    unit = ROTATION_ULPS * u
    # Below this a pair's values are subnormal: its rounding is no longer relative to it.
    floor = 2.0 ** PRECISIONS[rotated].min_exponent / u

    norms = np.sqrt(np.sum(x * x, axis=(0, 1)))
    if np.all(norms == 0):
        raise InputError("before must not be zero: a zero vector shows no rotation")

    # Columns that pass through unchanged (after == before at every position and head).
    passing = np.all(x == y, axis=(0, 1))
    rotating = np.flatnonzero(~passing)
    if rotating.size == 0:
        raise InputError("after equals before in every column: the vectors were not rotated")
    first, end = int(rotating[0]), int(rotating[-1]) + 1
    if rotating.size != end - first or (end - first) % 2:
        # Pairs that did not turn among the rotating ones (halves layout): the whole width.
        first, end = 0, width
    if (end - first) % 2:
        raise InputError(
            f"the columns that rotate ({first} to {end - 1}) must be an even number (pairs)"
        )

    # The layout: the pairing in which every pair keeps its norm (times one factor).
    best = None
    for layout in ("halves", "interleaved"):
        zx = _pairs(x, first, end, layout)
        zy = _pairs(y, first, end, layout)
        size = np.abs(zx)
        informative = size > floor
        if not np.any(informative):
            continue
        ratio = np.abs(zy)[informative] / size[informative]
        factor = float(np.median(ratio))
        change = float(np.max(np.abs(ratio / factor - 1))) if factor > 0 else np.inf
        if best is None or change < best[1]:
            best = (layout, change, zx, zy, factor)
    if best is None:
        raise InputError("before must not be zero in the columns that rotate")
    layout, change, zx, zy, factor = best
    if not change <= 2 * unit:
        raise InputError(
            "after is not a rotation of before in either pair layout (halves i, i + d/2, or "
            f"interleaved 2i, 2i+1): pair norms change by up to {change:.2g} relative, more "
            f"than the {2 * unit:.2g} that rotating in {rotated} explains (a cache of one layout "
            "applied with the other's rotate, or rows of after not matching those of before)"
        )

    # Each pair's cos + i sin at each position: the least-squares ratio over the heads.
    # (In real arithmetic: a pair that did not move gives cos exactly 1 and sin exactly 0.)
    weight = np.sum(zx.real * zx.real + zx.imag * zx.imag, axis=0)
    dot = np.sum(zx.real * zy.real + zx.imag * zy.imag, axis=0)
    cross = np.sum(zx.real * zy.imag - zx.imag * zy.real, axis=0)
    empty = np.sqrt(weight) <= floor
    if np.any(empty):
        row, pair = (int(v) for v in np.argwhere(empty)[0])
        raise InputError(
            f"before is zero in pair {pair} at position {position_values[row]:g} (row {row}) "
            f"in every vector: a pair of zeros shows no rotation there (use random vectors, "
            "torch.randn)"
        )
    cos_pairs, sin_pairs = dot / weight, cross / weight
    cos = np.ones((n, width))
    sin = np.zeros((n, width))
    if layout == "halves":
        half = (end - first) // 2
        for offset in (first, first + half):
            cos[:, offset : offset + half] = cos_pairs
            sin[:, offset : offset + half] = sin_pairs
    else:
        for offset in (first, first + 1):
            cos[:, offset:end:2] = cos_pairs
            sin[:, offset:end:2] = sin_pairs
    return _Rebuilt(
        cos=cos,
        sin=sin,
        positions=position_values,
        rotated=rotated,
        unit=unit,
        layout=layout,
        heads=heads,
        largest_norm_change=change,
    )
