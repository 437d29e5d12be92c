"""Reading a cos/sin cache (or an ``inv_freq`` vector): the checks, the columns that rotate
and their pair layout, the format the values are stored in, and each pair's frequency measured
from its phases."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import as_array, as_real_array, check_size, describe
from pe_core._numerics.formats import PRECISIONS, round_to_precision
from pe_core._numerics.printing import Printing, shows_format
from pe_core.errors import InputError, InputTypeError

#: Rows compared before every row is (most explanations fail on these).
_SAMPLE_ROWS = 256


@dataclass
class _Cache:
    """A cache reduced to one cos and one sin column per pair, with what its columns show."""

    cos: np.ndarray  # (n, P), the dtype given (float32 stays float32)
    sin: np.ndarray
    positions: NDArray[np.float64]
    width: int
    rotary_columns: tuple[int, int]
    layout: str | None
    pair_columns: NDArray[np.int64]  # the column of each pair's first cos value
    storage: str
    full_cos: np.ndarray  # the arrays as given (2-D views), for what a column holds
    full_sin: np.ndarray
    #: Relative precision of the values when it is not their storage's rounding (a cache
    #: rebuilt from rotated vectors: the rotation's own rounding), else None.
    unit: float | None = None
    #: The format vectors were rotated in, for a cache rebuilt from them; else None.
    rotated: str | None = None
    #: For values written as decimal text: the digits they show ("8 significant digits");
    #: ``storage`` is then the format those digits show, or float64.
    written: str | None = None

    @property
    def u_data(self) -> float:
        """How precisely each value is known, relative to the amplitude."""
        return PRECISIONS[self.storage].unit_roundoff if self.unit is None else self.unit


def _squeeze(values: np.ndarray, name: str) -> np.ndarray:
    if values.ndim == 2:
        return values
    kept = [size for size in values.shape if size != 1]
    if values.ndim > 2 and len(kept) == 2:
        return values.reshape(kept)
    raise InputError(
        f"{name} must be 2-D (positions x rotary columns), or have only singleton axes beside "
        f"those two like transformers' (1, L, d), got an array of shape {values.shape}"
    )


def _storage(values: np.ndarray, dtype: np.dtype) -> str:
    """The smallest format that holds every value (a sample of rows, then every 97th value)."""
    if dtype == np.float16:
        return "float16"
    sample = np.asarray(values[_spread(values.shape[0], _SAMPLE_ROWS)], dtype=np.float64)
    sparse = np.asarray(values.reshape(-1)[::97], dtype=np.float64)
    for name in ("bfloat16", "float16"):
        with np.errstate(over="ignore"):
            holds = np.array_equal(round_to_precision(sample, name), sample) and np.array_equal(
                round_to_precision(sparse, name), sparse
            )
        if holds:
            return name
    if dtype == np.float32 or np.array_equal(sample.astype(np.float32).astype(np.float64), sample):
        return "float32"
    return "float64"


def _spread(n: int, count: int) -> NDArray[np.int64]:
    if n <= count:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, count).round().astype(np.int64))


def _as_cache_array(values: ArrayLike, name: str) -> tuple[np.ndarray, np.dtype]:
    given = as_array(values, name)
    if given.dtype.kind not in "iuf" or given.dtype == np.bool_:
        raise InputTypeError(f"{name} must be an array of real numbers, got {describe(values)}")
    squeezed = _squeeze(given, name)
    keep = squeezed.dtype if squeezed.dtype in (np.float32, np.float64) else np.float64
    array = np.asarray(squeezed, dtype=keep)
    if not np.all(np.isfinite(array)):
        raise InputError(f"{name} must be finite (no NaN or inf), got {describe(values)}")
    return array, given.dtype


def _read_cache(cos, sin, positions) -> _Cache:
    cos_values, dtype = _as_cache_array(cos, "cos")
    sin_values, _ = _as_cache_array(sin, "sin")
    if cos_values.shape != sin_values.shape:
        raise InputError(
            f"cos and sin must have the same shape, got {cos_values.shape} and {sin_values.shape}"
        )
    n, width = cos_values.shape
    check_size(n * width * 4, "identifying this cache")
    if n < 2:
        raise InputError(f"cos must have at least 2 rows (positions), got shape {(n, width)}")
    if positions is None:
        position_values = np.arange(n, dtype=np.float64)
    else:
        position_values = as_real_array(positions, "positions", ndim=1)
        if position_values.size != n:
            raise InputError(
                f"positions must give one position per row of cos ({n}), got {position_values.size}"
            )
        if np.unique(position_values).size != n:
            raise InputError("positions must be distinct (one row per position)")
    base, ladder = _ladder(position_values)
    nearest = abs(position_values[ladder[0]] - position_values[base])
    if nearest > 3:
        raise InputError(
            "positions must include two 1 to 3 apart, one of them the smallest (their phases "
            "fix each pair's frequency without ambiguity), got the nearest "
            f"{nearest:g} from position {position_values[base]:g}"
        )

    # Columns that do not rotate: sin 0 and cos constant in every row.
    sample = _spread(n, 64)
    passing = np.all(sin_values[sample] == 0, axis=0)  # most columns fail on a few rows
    for column in np.flatnonzero(passing):
        passing[column] = not np.any(sin_values[:, column]) and np.all(
            cos_values[:, column] == cos_values[0, column]
        )
    rotating = np.flatnonzero(~passing)
    if rotating.size == 0:
        raise InputError("cos and sin do not rotate: sin is 0 in every column")
    first, end = int(rotating[0]), int(rotating[-1]) + 1
    if rotating.size != end - first:
        # Pairs of frequency 0 among the rotary ones (proportional RoPE): in the halves layout
        # they leave a gap; the whole width is then the rotary block.
        first, end = 0, width
    m = end - first
    layout = None
    if m % 2 == 0:
        halves = np.array_equal(
            cos_values[:, first : first + m // 2], cos_values[:, first + m // 2 : end]
        ) and np.array_equal(
            sin_values[:, first : first + m // 2], sin_values[:, first + m // 2 : end]
        )
        interleaved = np.array_equal(
            cos_values[:, first:end:2], cos_values[:, first + 1 : end : 2]
        ) and np.array_equal(sin_values[:, first:end:2], sin_values[:, first + 1 : end : 2])
        if halves and not interleaved:
            layout = "halves"
        elif interleaved and not halves:
            layout = "interleaved"
        elif halves and interleaved and m > 2:
            layout = "halves"  # every pair the same frequency: either reading
    if layout is None and rotating.size != rotating[-1] - rotating[0] + 1:
        raise InputError(
            "the rotating columns of cos and sin must be contiguous, or pairs of one layout "
            f"(halves or interleaved) over the whole width, got columns {rotating[:8].tolist()}..."
        )
    if m == 2 and layout == "halves":  # one pair, both columns equal: either layout
        layout = None
        pair_columns = np.arange(first, first + 1)
    elif layout == "halves":
        pair_columns = np.arange(first, first + m // 2)
    elif layout == "interleaved":
        pair_columns = np.arange(first, end, 2)
    else:
        layout = "per_pair"
        pair_columns = np.arange(first, end)
    if pair_columns.size < 2:
        raise InputError(
            f"cos and sin must hold at least 2 rotating pairs to show a base (one pair turns "
            f"at base**0 = 1 radian per position for every base), got {pair_columns.size} "
            f"in shape {(n, width)}"
        )
    step = int(pair_columns[1] - pair_columns[0])
    columns = slice(int(pair_columns[0]), int(pair_columns[-1]) + 1, step)  # a view, no copy
    cos_pairs = cos_values[:, columns]
    sin_pairs = sin_values[:, columns]
    storage = _storage(cos_values[:, first:end], dtype)
    unit = written = None
    if storage == "float64":
        storage, unit, written = _printed(cos_values[:, first:end], sin_values[:, first:end])
    return _Cache(
        cos=cos_pairs,
        sin=sin_pairs,
        positions=position_values,
        width=width,
        rotary_columns=(first, end),
        layout=layout,
        pair_columns=pair_columns.astype(np.int64),
        storage=storage,
        full_cos=cos_values,
        full_sin=sin_values,
        unit=unit,
        written=written,
    )


def _printed(cos: np.ndarray, sin: np.ndarray) -> tuple[str, float | None, str | None]:
    """For float64 values that were written as decimal text (a CSV of a cos_sin_cache): the
    format the digits show (else float64), how precisely the values are known relative to
    their amplitude (that format's rounding and the printing's), and the digits in words;
    ``("float64", None, None)`` for values that show no printing."""
    rows = _spread(cos.shape[0], _SAMPLE_ROWS)
    sample = np.concatenate([np.ravel(cos[rows]), np.ravel(sin[rows])]).astype(np.float64)
    printing = Printing.of(sample)
    if printing is None:
        return "float64", None, None
    shown = next(
        (
            name
            for name in ("bfloat16", "float16", "float32")
            if shows_format(sample, printing, name, PRECISIONS[name].unit_roundoff)
        ),
        "float64",
    )
    scale = max(float(np.max(np.abs(sample))), 1e-300)
    half = float(np.max(printing.half_unit(sample)))
    return shown, PRECISIONS[shown].unit_roundoff + half / scale, printing.words


def _squeeze_vector(values: np.ndarray) -> np.ndarray:
    if values.ndim == 1:
        return values
    kept = [s for s in values.shape if s != 1]
    if len(kept) == 1:
        return values.reshape(kept)
    raise InputError(f"inv_freq must be 1-D (one frequency per pair), got shape {values.shape}")


# --- measuring the frequencies ---------------------------------------------------------------


def _ladder(positions: NDArray[np.float64]) -> tuple[int, NDArray[np.int64]]:
    """A base row (the smallest position) and rows whose distances from it at most double
    from one to the next, from the nearest: each unwraps the phase the previous predicts, as
    the rotation from the base row is ``(p - p_base) w``. Only positions exact in bfloat16
    when there are enough (a cache whose position ids were rounded is still measured at true
    positions)."""
    magnitude = np.abs(positions)
    exact = round_to_precision(magnitude, "bfloat16") == magnitude
    if np.count_nonzero(exact) < 2 or _nearest(positions, np.flatnonzero(exact)) > 3:
        # Too few such positions, or none 1 to 3 apart (a slice from position 1000: bfloat16
        # holds only every fourth there): every position.
        exact = np.ones(positions.size, dtype=bool)
    candidates = np.flatnonzero(exact)
    base = int(candidates[np.argmin(magnitude[candidates])])
    candidates = candidates[candidates != base]
    distance = np.abs(positions[candidates] - positions[base])
    order = np.argsort(distance, kind="stable")
    candidates, distance = candidates[order], distance[order]
    chosen = [0]
    while True:
        limit = 2.0 * distance[chosen[-1]]
        following = int(np.searchsorted(distance, limit, side="right")) - 1
        if following <= chosen[-1]:
            break
        chosen.append(following)
    return base, candidates[np.array(chosen)]


def _nearest(positions: NDArray[np.float64], rows: NDArray[np.int64]) -> float:
    """Distance from the smallest (in magnitude) of ``positions[rows]`` to its nearest other."""
    chosen = positions[rows]
    base = chosen[np.argmin(np.abs(chosen))]
    others = np.abs(chosen - base)
    others = others[others > 0]
    return float(np.min(others)) if others.size else np.inf


def _phases(cache: _Cache, rows) -> NDArray[np.float64]:
    return np.arctan2(
        np.asarray(cache.sin[rows], dtype=np.float64), np.asarray(cache.cos[rows], dtype=np.float64)
    )


def _measure(cache: _Cache) -> tuple[NDArray[np.float64], float]:
    """Each pair's frequency (radians per position, signed: negative when sin is negated) and
    the largest distance it was measured over: the phase from the base row unwrapped along the
    ladder, each step predicted by the last."""
    base, ladder = _ladder(cache.positions)
    phases = _phases(cache, ladder) - _phases(cache, [base])
    distances = cache.positions[ladder] - cache.positions[base]
    w = np.angle(np.exp(1j * phases[0])) / distances[0]  # |w d| < pi for d <= 3 as w <= 1
    for phase, distance in zip(phases[1:], distances[1:], strict=True):
        predicted = w * distance
        unwrapped = phase + 2 * np.pi * np.round((predicted - phase) / (2 * np.pi))
        w = unwrapped / distance
    return w, float(abs(distances[-1]))
