"""Rebuilding a cos/sin cache from vectors before and after rotation: the pair layout in which
the rotation preserves each pair's norm, each pair's angle and norm ratio at each position (over
every head given), and how precisely the rotation's own arithmetic lets them be read."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import as_array, as_real_array, check_size, describe
from pe_core._numerics.formats import PRECISIONS, round_to_precision
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
    #: When the rotation pairs columns in the other layout than the cache it applied (a
    #: cache of cat(freqs, freqs) with an interleaved rotate, or the reverse): that pairing.
    rotate_pairs: str | None = None


def _vector_array(values: ArrayLike, name: str) -> tuple[np.ndarray, np.dtype]:
    """The array as given (float32 and float64 kept, others widened exactly), checked."""
    given = as_array(values, name)
    if given.dtype.kind not in "iuf" or given.dtype == np.bool_:
        raise InputTypeError(f"{name} must be an array of real numbers, got {describe(values)}")
    if given.ndim < 2:
        raise InputError(
            f"{name} must have shape (positions, head_dim) or (..., positions, head_dim), "
            f"got shape {given.shape}"
        )
    if given.dtype == np.float16:
        array = given.astype(np.float32)
    elif given.dtype in (np.float32, np.float64):
        array = given
    else:
        with np.errstate(over="ignore"):  # long doubles beyond float64 become inf, refused below
            array = np.asarray(given, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise InputError(
            f"{name} must be finite in float64 (no NaN, inf or number beyond 1.8e308), "
            f"got {describe(values)}"
        )
    return array, given.dtype


def _format(arrays, dtypes) -> str:
    """The format the rotation was computed in: of the coarsest formats of ``_FORMATS`` that
    hold every value of each array (float16 only for an array given as float16; a sample of
    values), the coarser (a float32 query saved before its cast to bfloat16 and its bfloat16
    rotation: bfloat16)."""
    found = []
    for array, dtype in zip(arrays, dtypes, strict=True):
        sample = np.asarray(array.reshape(-1)[:: max(1, array.size // 65_536)], dtype=np.float64)
        holds = "float64"
        for name in _FORMATS[:-1]:
            if name == "float16" and dtype != np.float16:
                continue
            with np.errstate(over="ignore"):
                if np.array_equal(round_to_precision(sample, name), sample):
                    holds = name
                    break
        found.append(holds)
    return max(found, key=lambda name: PRECISIONS[name].unit_roundoff)


def _pairs(x: np.ndarray, first: int, end: int, layout: str):
    """Each pair's two columns of ``x[..., first:end]`` as float64 (..., n, pairs)."""
    block = x[..., first:end]
    if layout == "halves":
        half = (end - first) // 2
        a, b = block[..., :half], block[..., half:]
    else:
        a, b = block[..., 0::2], block[..., 1::2]
    return np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)


#: Values of before read at a time (a few MB of float64 temporaries per layout).
_CHUNK_VALUES = 1 << 18


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
    check_size(x.size, "rebuilding the rotation from these vectors")
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

    if not np.any(x):
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

    # The layout: the pairing in which every pair keeps its norm (times one factor, read
    # from a sample of rows), every row checked a chunk at a time. Alongside, each pair's
    # cos + i sin at each position: the least-squares ratio over the heads (in real
    # arithmetic, so that a pair that did not move gives cos exactly 1 and sin exactly 0).
    layouts = ("halves", "interleaved")
    sample = np.unique(np.linspace(0, n - 1, min(n, 256)).round().astype(np.int64))
    factors = {}
    for layout in layouts:
        xa, xb = _pairs(x[:, sample], first, end, layout)
        ya, yb = _pairs(y[:, sample], first, end, layout)
        size = np.hypot(xa, xb)
        informative = size > floor
        ratio = np.hypot(ya, yb)[informative] / size[informative]
        factors[layout] = float(np.median(ratio)) if ratio.size else np.nan
    pairs = (end - first) // 2
    sums = {layout: np.zeros((3, n, pairs)) for layout in layouts}
    change = dict.fromkeys(layouts, 0.0)
    step = max(1, _CHUNK_VALUES // (heads * width))
    for row in range(0, n, step):
        rows = slice(row, row + step)
        for layout in layouts:
            xa, xb = _pairs(x[:, rows], first, end, layout)
            ya, yb = _pairs(y[:, rows], first, end, layout)
            weight = xa * xa + xb * xb
            sums[layout][0, rows] = np.sum(weight, axis=0)
            sums[layout][1, rows] = np.sum(xa * ya + xb * yb, axis=0)
            sums[layout][2, rows] = np.sum(xa * yb - xb * ya, axis=0)
            size = np.sqrt(weight)
            informative = size > floor
            if np.any(informative) and factors[layout] > 0:
                ratio = np.hypot(ya, yb)[informative] / size[informative]
                change[layout] = max(
                    change[layout], float(np.max(np.abs(ratio / factors[layout] - 1)))
                )
            elif not factors[layout] > 0:
                change[layout] = np.inf
    layout = min(layouts, key=lambda name: change[name])
    if not change[layout] <= 2 * unit and heads >= 2:
        mixed = _mixed(x, y, first, end, unit)
        if mixed is not None:
            cache_layout, rotate_pairs, cos_pairs, sin_pairs, amplification = mixed
            cos, sin = _full(cos_pairs, sin_pairs, n, width, first, end, cache_layout)
            return _Rebuilt(
                cos=cos,
                sin=sin,
                positions=position_values,
                rotated=rotated,
                unit=unit * amplification,
                layout=cache_layout,
                heads=heads,
                largest_norm_change=change[layout],
                rotate_pairs=rotate_pairs,
            )
    if not change[layout] <= 2 * unit:
        raise InputError(
            "after is not a rotation of before in either pair layout (halves i, i + d/2, or "
            f"interleaved 2i, 2i+1): pair norms change by up to {change[layout]:.2g} relative, "
            f"more than the {2 * unit:.2g} that rotating in {rotated} explains (rows of after "
            "not matching those of before; or, for a single vector, a cache of one layout "
            "applied by the other layout's rotate, which 2 or more heads let be named)"
        )
    weight, dot, cross = sums[layout]
    empty = np.sqrt(weight) <= floor
    if np.any(empty):
        row, pair = (int(v) for v in np.argwhere(empty)[0])
        raise InputError(
            f"before is zero in pair {pair} at position {position_values[row]:g} (row {row}) "
            f"in every vector: a pair of zeros shows no rotation there (use random vectors, "
            "torch.randn)"
        )
    cos_pairs, sin_pairs = dot / weight, cross / weight
    cos, sin = _full(cos_pairs, sin_pairs, n, width, first, end, layout)
    return _Rebuilt(
        cos=cos,
        sin=sin,
        positions=position_values,
        rotated=rotated,
        unit=unit,
        layout=layout,
        heads=heads,
        largest_norm_change=change[layout],
    )


def _full(cos_pairs, sin_pairs, n: int, width: int, first: int, end: int, layout: str):
    """Full-width cos and sin: each pair's values in both its columns of ``first:end``, the
    other columns cos 1 and sin 0."""
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
    return cos, sin


def _partners(m: int, layout: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each column's partner in a pair of ``layout`` and the sign of its sin term in a
    rotation (``y_j = x_j cos_j - x_partner sin_j`` for a pair's first column, ``+`` for its
    second)."""
    columns = np.arange(m)
    if layout == "halves":
        return (columns + m // 2) % m, np.where(columns < m // 2, -1.0, 1.0)
    return columns ^ 1, np.where(columns % 2 == 0, -1.0, 1.0)


#: Entries whose heads leave the two unknowns of a column this ill-conditioned (det / (a11 a22)
#: of the 2 x 2 least squares) are not used to decide (their rounding is amplified).
_CONDITIONED = 0.05


def _mixed(x, y, first: int, end: int, unit: float):
    """A cache of one layout applied by the other layout's rotate: ``(cache layout, rotate
    pairing, cos per pair, sin per pair, noise amplification)``, else None.

    Each column ``j`` of such a rotation is ``y_j = x_j c_j + s x_partner(j) s_j`` with the
    partner of the rotate's pairing and the cache's own values ``c_j, s_j`` per column, solved
    per position by least squares over the heads (2 or more). It is that mistake when, for one
    pairing, the solutions have one amplitude and pair up in the other layout's columns.
    """
    m = end - first
    block_x = np.asarray(x[..., first:end], dtype=np.float64)
    block_y = np.asarray(y[..., first:end], dtype=np.float64)
    for rotate, cache_layout in (("halves", "interleaved"), ("interleaved", "halves")):
        partner, sign = _partners(m, rotate)
        xp = block_x[..., partner] * sign
        a11 = np.sum(block_x * block_x, axis=0)
        a12 = np.sum(block_x * xp, axis=0)
        a22 = np.sum(xp * xp, axis=0)
        b1 = np.sum(block_x * block_y, axis=0)
        b2 = np.sum(xp * block_y, axis=0)
        det = a11 * a22 - a12 * a12
        with np.errstate(divide="ignore", invalid="ignore"):
            cond = det / (a11 * a22)
            c = (b1 * a22 - b2 * a12) / det
            s = (a11 * b2 - a12 * b1) / det
        good = np.isfinite(c) & np.isfinite(s) & (cond > _CONDITIONED)
        if np.count_nonzero(good) < good.size // 2:
            continue
        amplitude = np.hypot(c, s)
        factor = float(np.median(amplitude[good]))
        if not factor > 0:
            continue
        allowed = 4 * unit / np.sqrt(_CONDITIONED)
        if np.max(np.abs(amplitude[good] / factor - 1)) > allowed:
            continue
        mate, _ = _partners(m, cache_layout)
        both = good & good[:, mate]
        if not np.any(both) or (
            np.max(np.abs(c - c[:, mate])[both]) > allowed * factor
            or np.max(np.abs(s - s[:, mate])[both]) > allowed * factor
        ):
            continue
        # Each pair: its two columns' values weighted by how well the heads determine them.
        weight = np.where(np.isfinite(cond), np.maximum(cond, 0.0), 0.0)
        columns = np.arange(m // 2) if cache_layout == "halves" else np.arange(0, m, 2)
        w1, w2 = weight[:, columns], weight[:, mate[columns]]
        total = w1 + w2
        if np.any(total <= 0):
            return None
        c = np.where(np.isfinite(c), c, 0.0)
        s = np.where(np.isfinite(s), s, 0.0)
        cos_pairs = (w1 * c[:, columns] + w2 * c[:, mate[columns]]) / total
        sin_pairs = (w1 * s[:, columns] + w2 * s[:, mate[columns]]) / total
        # The least squares amplify the rotation's rounding by up to 1 / sqrt(cond) of the
        # better-determined column of each pair.
        amplification = float(1 / np.sqrt(np.min(np.maximum(w1, w2))))
        return cache_layout, rotate, cos_pairs, sin_pairs, max(1.0, amplification)
    return None
