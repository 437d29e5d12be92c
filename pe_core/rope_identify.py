"""Identify a rotary encoding from its numbers: the base, rotary columns, pair layout, scaling
variant and its parameters, attention factor and arithmetic behind a dumped cos/sin cache or
``inv_freq`` vector, the RoPE bugs of :data:`pe_core.ROPE_BUGS` it shows, and where it departs
from the config.json it should implement."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._formats import PRECISIONS, round_to_precision
from pe_core._kernels import phasors
from pe_core._validation import _describe, as_array, as_real_array, check_size
from pe_core.errors import InputError, InputTypeError
from pe_core.rope import RotaryEncoding, rope_frequencies
from pe_core.rope_bugs import ROPE_BUGS, Finding
from pe_core.rope_config import rope_from_config

__all__ = ["Departure", "Finding", "RopeArithmetic", "RopeIdentification", "identify_rope"]

#: Unit roundoff of float32, the format transformers computes the angles in.
_U32 = PRECISIONS["float32"].unit_roundoff

#: Rows compared before every row is (most explanations fail on these).
_SAMPLE_ROWS = 256

#: Relative error of float32 frequencies, in float32 unit roundoffs: transformers computes the
#: scaled ones with a few float32 operations (Llama 3's smoothing, LongRoPE's division), and the
#: angle ``p w`` adds one more rounding.
_FREQ_ULPS = 16

#: Relative difference of an inv_freq vector from a config's that float32 frequencies explain
#: (a vector in a smaller format is itself the bf16_inv_freq bug).
_INV_FREQ_TOLERANCE = _U32 + _FREQ_ULPS * _U32

#: Entries compared at a time when every row is (8 MiB of float64 per array).
_CHUNK_VALUES = 1 << 20

#: Round RoPE bases of released models, tried when the fit's own rounding does not settle.
COMMON_BASES = (
    10_000.0,
    50_000.0,
    100_000.0,
    150_000.0,
    250_000.0,
    500_000.0,
    1_000_000.0,
    5_000_000.0,
    10_000_000.0,
    100_000_000.0,
)


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RopeArithmetic:
    """The arithmetic a cache or ``inv_freq`` was computed in, as fields.

    Attributes
    ----------
    storage : str
        The smallest format that holds every value ("float64", "float32", "bfloat16",
        "float16"): a bfloat16 cache is a float32 one cast once.
    angles : str or None
        "exact" when the values equal the exact ``cos(p w)`` to their storage's rounding;
        "float32" when they differ by up to the rounding of ``p w`` computed in float32, as
        transformers computes it (``inv_freq @ position_ids`` in float32); "bfloat16" or
        "float16" when the product itself was computed in that format (matmul under
        autocast); None for an ``inv_freq`` vector, or when no arithmetic explains a cache.
    inv_freq : str or None
        "bfloat16" or "float16" when the frequencies were rounded to that format; the dtype
        of an ``inv_freq`` vector given as such; None when a cache cannot tell (frequencies in
        float32 or finer).
    positions : str
        "exact", or "bfloat16" / "float16" when the position ids were rounded to that format
        (positions 256 and 257 become one in bfloat16).
    """

    storage: str
    angles: str | None
    inv_freq: str | None
    positions: str = "exact"

    @property
    def words(self) -> str:
        """The arithmetic in a few words."""
        if self.angles is None and self.inv_freq is None:
            return f"no arithmetic explains it (values stored as {self.storage})"
        parts = []
        if self.angles == "exact":
            parts.append("exact angles")
        elif self.angles == "float32":
            parts.append("float32 angles, as transformers computes them")
        elif self.angles is not None:
            parts.append(f"angles computed in {self.angles}")
        if self.inv_freq in ("bfloat16", "float16"):
            parts.append(f"inv_freq rounded to {self.inv_freq}")
        elif self.inv_freq is not None and self.angles is None:
            parts.append(f"inv_freq in {self.inv_freq}")
        if self.positions != "exact":
            parts.append(f"position ids rounded to {self.positions}")
        parts.append(f"stored as {self.storage}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Departure:
    """Where the data first departs from a config by more than its precision explains.

    Attributes
    ----------
    row, column : int
        In the array as given (``column`` is a pair's index for ``inv_freq``).
    position : float
        The position of that row (None for ``inv_freq``).
    array : str
        "cos", "sin" or "inv_freq".
    value, expected, tolerance : float
        The value found, the config's, and the largest difference the data's precision
        explains there.
    """

    row: int
    column: int
    position: float | None
    array: str
    value: float
    expected: float
    tolerance: float


@dataclass(frozen=True)
class RopeIdentification:
    """What :func:`identify_rope` found, as fields.

    Attributes
    ----------
    source : {"cache", "inv_freq"}
    base, base_fit, base_uncertainty : float
        The base (``rope_theta``), snapped to a round value when the fit allows it, the fitted
        value and its relative uncertainty (the evidence: ``base_snapped`` says whether
        ``base`` is a rounding of ``base_fit`` within it).
    base_snapped : bool
    rotary_dim : int
        Rotating columns (twice the pairs).
    width : int
        Columns given (``rotary_dim`` plus columns that do not rotate: cos 1, sin 0).
    rotary_columns : tuple of int
        The first and one past the last rotating column: (0, rotary_dim) for the common
        [rope | pass] split, (width - rotary_dim, width) for DeepSeek's [nope | rope].
    layout : {"halves", "interleaved", "per_pair"} or None
        Where each pair's two columns are ("per_pair": one column per pair, as vLLM's and
        flash-attn's caches); None for ``inv_freq`` or a single pair.
    rope_type : str or None
        The scaling variant (a key of :data:`pe_core.ROPE_VARIANTS`) that explains the
        frequencies; None when none of them does (``scale`` holds the per-pair ratio).
    parameters : mapping
        The variant's parameters as measured (``factor``, ``low_freq_factor``,
        ``correction_range``, per-pair ``factors`` ...).
    inv_freq : ndarray of float64, shape (rotary_dim // 2,)
        The frequencies measured from the data.
    scale : ndarray of float64
        ``base**(-2i/rotary_dim) / inv_freq`` per pair: how much slower each pair turns than
        plain RoPE with ``base``.
    attention_factor : float or None
        The amplitude of cos and sin (transformers' ``attention_scaling`` folded in); None
        for ``inv_freq``.
    arithmetic : RopeArithmetic
    positions : tuple of float
        The first and last position (``()`` for ``inv_freq``); ``n_positions`` rows.
    max_abs_error : float
        Largest difference between the data and the encoding identified, in the arithmetic
        identified.
    explained : bool
        Whether that difference is within what the arithmetic found explains, on every entry
        (False: ``arithmetic.angles`` is None and the data is not that encoding).
    findings : tuple of Finding
        Bugs of :data:`pe_core.ROPE_BUGS` and observations, each with its evidence.
    config_matches : bool or None
        With a config: whether the data is that config's encoding within its precision.
    departure : Departure or None
        With a config that the data does not match: the first position and column that
        departs.
    likely_cause : str or None
        With such a departure: the bug (a key of :data:`pe_core.ROPE_BUGS`) that reproduces
        the data, or "parameters" when the data is another encoding (the differences are in
        the findings), or None.
    expected : RotaryEncoding or None
        The config's encoding.
    """

    source: str
    base: float
    base_fit: float
    base_uncertainty: float
    base_snapped: bool
    rotary_dim: int
    width: int
    rotary_columns: tuple[int, int]
    layout: str | None
    rope_type: str | None
    parameters: Mapping
    inv_freq: NDArray[np.float64]
    scale: NDArray[np.float64]
    attention_factor: float | None
    arithmetic: RopeArithmetic
    positions: tuple[float, ...]
    n_positions: int
    max_abs_error: float
    explained: bool = True
    findings: tuple[Finding, ...] = ()
    config_matches: bool | None = None
    departure: Departure | None = None
    likely_cause: str | None = None
    expected: RotaryEncoding | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", MappingProxyType(dict(self.parameters)))
        for name in ("inv_freq", "scale"):
            values = np.array(getattr(self, name), dtype=np.float64)
            values.flags.writeable = False
            object.__setattr__(self, name, values)

    @property
    def bugs(self) -> tuple[str, ...]:
        """The names of the catalogue's bugs among the findings."""
        return tuple(f.name for f in self.findings if f.bug is not None)

    @property
    def matches(self) -> bool:
        """With a config: ``config_matches``. Without: a known variant explains the data and
        no bug was found."""
        if self.config_matches is not None:
            return self.config_matches
        return self.rope_type is not None and self.explained and not self.bugs

    def summary(self) -> str:
        """The verdict in one paragraph."""
        what = _variant_words(self)
        text = f"{what}; {self.arithmetic.words}"
        if self.source == "cache":
            first, last = self.positions
            text += (
                f"; positions {_number(first)} to {_number(last)} ({self.n_positions:,} rows), "
                f"largest difference from that encoding {self.max_abs_error:.2g}"
            )
            if not self.explained:
                text += ", more than any arithmetic explains"
        text += "."
        if self.config_matches is True:
            text += " It matches the config within its precision."
        elif self.config_matches is False:
            d = self.departure
            where = (
                f"pair {d.column}"
                if d.position is None
                else f"position {_number(d.position)} (row {d.row}), column {d.column}"
            )
            text += (
                f" It departs from the config at {where}: {d.array} {d.value:.6g} where the "
                f"config gives {d.expected:.6g} (precision explains {d.tolerance:.2g})."
            )
            if self.likely_cause in ROPE_BUGS:
                bug = ROPE_BUGS[self.likely_cause]
                text += f" Likely cause: {bug.title}. Fix: {bug.fix}."
            elif self.likely_cause == "parameters":
                text += " Likely cause: different parameters (see the findings)."
        for finding in self.findings:
            if finding.name != self.likely_cause:
                text += f" Found: {finding.title}."
        return text

    def to_dict(self) -> dict:
        """The result as JSON-ready data (what ``python -m pe_core check-rope --json``
        prints)."""

        def plain(value):
            if isinstance(value, np.ndarray):
                return [plain(v) for v in value.tolist()]
            if isinstance(value, (np.floating, float)):
                value = float(value)
                return value if math.isfinite(value) else str(value)
            if isinstance(value, (np.integer,)):
                return int(value)
            if isinstance(value, Mapping):
                return {str(k): plain(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value

        d = self.departure
        return {
            "matches": self.matches,
            "summary": self.summary(),
            "source": self.source,
            "base": self.base,
            "base_fit": self.base_fit,
            "base_uncertainty": self.base_uncertainty,
            "base_snapped": self.base_snapped,
            "rotary_dim": self.rotary_dim,
            "width": self.width,
            "rotary_columns": list(self.rotary_columns),
            "layout": self.layout,
            "rope_type": self.rope_type,
            "parameters": plain(self.parameters),
            "inv_freq": plain(self.inv_freq),
            "scale": plain(self.scale),
            "attention_factor": self.attention_factor,
            "arithmetic": {
                "storage": self.arithmetic.storage,
                "angles": self.arithmetic.angles,
                "inv_freq": self.arithmetic.inv_freq,
                "positions": self.arithmetic.positions,
                "words": self.arithmetic.words,
            },
            "positions": list(self.positions),
            "n_positions": self.n_positions,
            "max_abs_error": self.max_abs_error,
            "explained": self.explained,
            "findings": [
                {
                    "name": f.name,
                    "title": f.title,
                    "evidence": plain(f.evidence),
                    "references": list(f.references),
                    "bug": f.bug is not None,
                    "fix": f.bug.fix if f.bug is not None else None,
                }
                for f in self.findings
            ],
            "config_matches": self.config_matches,
            "departure": None
            if d is None
            else {
                "row": d.row,
                "column": d.column,
                "position": d.position,
                "array": d.array,
                "value": d.value,
                "expected": d.expected,
                "tolerance": d.tolerance,
            },
            "likely_cause": self.likely_cause,
        }


def _number(value: float) -> str:
    value = float(value)
    return f"{round(value):,}" if value == round(value) else f"{value:.6g}"


def _variant_words(found: RopeIdentification) -> str:
    if found.parameters.get("base_assumed"):
        note = " (the common base under which every pair's factor is >= 1)"
    else:
        note = "" if found.base_snapped else " (fitted, not round)"
    base = f"base {found.base:,.10g}{note}"
    if found.rope_type is None:
        kind = "rotary frequencies of no known variant (per-pair ratio in scale)"
    elif found.rope_type == "default":
        kind = "plain RoPE"
    else:
        shown = {
            k: v
            for k, v in found.parameters.items()
            if k in ("factor", "low_freq_factor", "high_freq_factor", "correction_range")
            or k == "original_max_position_embeddings"
        }
        listed = ", ".join(f"{k} {_param(v)}" for k, v in shown.items())
        kind = f"RoPE {found.rope_type}" + (f" ({listed})" if listed else "")
    columns = f"{found.rotary_dim} rotary columns"
    if found.width != found.rotary_dim:
        first, end = found.rotary_columns
        columns += f" (columns {first} to {end - 1} of {found.width})"
    layout = f", {found.layout} layout" if found.layout else ""
    factor = (
        f", attention factor {found.attention_factor:.6g}"
        if found.attention_factor is not None
        else ""
    )
    return f"{kind}, {base}, {columns}{layout}{factor}"


def _param(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_param(v) for v in value) + ")"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


# --- reading the data ------------------------------------------------------------------------


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
    pass_value: float  # cos of the columns that do not rotate (1), NaN when there are none
    full_cos: np.ndarray  # the arrays as given (2-D views), for what a column holds
    full_sin: np.ndarray


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
        raise InputTypeError(f"{name} must be an array of real numbers, got {_describe(values)}")
    squeezed = _squeeze(given, name)
    keep = squeezed.dtype if squeezed.dtype in (np.float32, np.float64) else np.float64
    array = np.asarray(squeezed, dtype=keep)
    if not np.all(np.isfinite(array)):
        raise InputError(f"{name} must be finite (no NaN or inf), got {_describe(values)}")
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
    step = int(pair_columns[1] - pair_columns[0]) if pair_columns.size > 1 else 1
    columns = slice(int(pair_columns[0]), int(pair_columns[-1]) + 1, step)  # a view, no copy
    cos_pairs = cos_values[:, columns]
    sin_pairs = sin_values[:, columns]
    pass_value = float(cos_values[0, np.flatnonzero(passing)[0]]) if passing.any() else math.nan
    return _Cache(
        cos=cos_pairs,
        sin=sin_pairs,
        positions=position_values,
        width=width,
        rotary_columns=(first, end),
        layout=layout,
        pair_columns=pair_columns.astype(np.int64),
        storage=_storage(cos_values[:, first:end], dtype),
        pass_value=pass_value,
        full_cos=cos_values,
        full_sin=sin_values,
    )


# --- measuring the frequencies ---------------------------------------------------------------


def _ladder(positions: NDArray[np.float64]) -> tuple[int, NDArray[np.int64]]:
    """A base row (the smallest position) and rows whose distances from it at most double
    from one to the next, from the nearest: each unwraps the phase the previous predicts, as
    the rotation from the base row is ``(p - p_base) w``. Only positions exact in bfloat16
    when there are enough (a cache whose position ids were rounded is still measured at true
    positions)."""
    magnitude = np.abs(positions)
    exact = round_to_precision(magnitude, "bfloat16") == magnitude
    if np.count_nonzero(exact) < 2:
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


# --- fitting a variant -----------------------------------------------------------------------


@dataclass
class _Fit:
    rope_type: str | None
    base: float
    base_fit: float
    base_uncertainty: float
    base_snapped: bool
    parameters: dict
    model: NDArray[np.float64]  # the variant's frequencies with the parameters found
    scale: NDArray[np.float64]
    explained: bool


def _significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


def _snap(value: float, relative: float, max_digits: int = 4) -> tuple[float, bool]:
    """The roundest number within ``relative`` of ``value`` (fewest significant digits)."""
    for digits in range(1, max_digits + 1):
        candidate = _significant(value, digits)
        if abs(candidate - value) <= relative * abs(value):
            return candidate, True
    return value, False


def _base_from_fast_pairs(w, sigma, rotary_dim) -> tuple[float, float]:
    """Base and its relative uncertainty from the fastest pairs (the ones that context
    extension leaves alone): ``log w_i = c - (2i/d) ln base`` by weighted least squares over
    the first quarter of the pairs (at least 3)."""
    n = w.size
    k = min(n, max(3, n // 4))
    i = np.arange(k, dtype=np.float64)
    y = np.log(w[:k])
    weight = 1.0 / np.maximum(sigma[:k], 1e-15) ** 2
    mean_i = np.sum(weight * i) / np.sum(weight)
    mean_y = np.sum(weight * y) / np.sum(weight)
    spread = np.sum(weight * (i - mean_i) ** 2)
    slope = np.sum(weight * (i - mean_i) * (y - mean_y)) / spread
    slope_sigma = 1.0 / math.sqrt(spread)
    log_base = -slope * rotary_dim / 2
    return math.exp(log_base), slope_sigma * rotary_dim / 2


def _consistent(q, tolerance) -> bool:
    return bool(np.all(np.abs(q - 1.0) <= tolerance))


def _fit_variant(
    w: NDArray[np.float64], sigma: NDArray[np.float64], amplitude, rotary_dim: int | None = None
) -> _Fit:
    """The variant, base and parameters that explain the frequencies ``w`` to their relative
    uncertainty ``sigma`` (the first pairs of ``rotary_dim`` columns, by default all)."""
    n = w.size
    d = 2 * n if rotary_dim is None else rotary_dim
    exponent = np.arange(n, dtype=np.float64) * 2 / d
    estimate, log_sigma = _base_from_fast_pairs(w, sigma, d)
    tolerance = 4 * sigma + 4 * _U32

    def scale_for(base):
        return base**-exponent / w

    # The base: the roundest value the fast pairs allow, then the common ones near the fit.
    candidates = []
    for digits in (1, 2):  # released bases are round: 10,000, 500,000, 1.5e5 ...
        candidates.append(_significant(estimate, digits))
    candidates += [b for b in COMMON_BASES if abs(math.log(b / estimate)) < 0.2]
    fast = min(n, max(3, n // 4))
    base, snapped = estimate, False
    for candidate in dict.fromkeys(candidates):
        q = scale_for(candidate)
        if _consistent(q[:fast] / q[0], tolerance[:fast]):
            base, snapped = candidate, True
            break
    assumed = False
    if not snapped:
        # LongRoPE's own factor on every pair, the fastest too: the common base near the fit
        # under which every pair turns at most as fast as plain RoPE (factors >= 1, the first
        # within 10% of 1).
        for candidate in sorted(COMMON_BASES, key=lambda b: abs(math.log(b / estimate))):
            q = scale_for(candidate)
            near = abs(math.log(candidate / estimate)) < 0.2
            if near and np.all(q >= 1 - tolerance) and q[0] <= 1.1:
                base, assumed = candidate, True
                break
    q = scale_for(base)
    result = dict(
        base=base,
        base_fit=estimate,
        base_uncertainty=min(1.0, math.expm1(3 * log_sigma)),
        base_snapped=snapped,
        scale=q,
    )
    original = base**-exponent

    # default: every pair as base**(-2i/d).
    if _consistent(q, tolerance):
        return _Fit("default", parameters={}, model=original, explained=True, **result)
    # linear: every pair divided by one factor.
    factor, uncertainty = _weighted_mean(q, tolerance)
    if factor > 1 and _consistent(q / factor, tolerance):
        factor, _ = _snap(factor, 3 * uncertainty + 1e-12)
        return _Fit(
            "linear",
            parameters={"factor": factor},
            model=original / factor,
            explained=_consistent(q / factor, tolerance),
            **result,
        )
    fast_unchanged = abs(q[0] - 1.0) <= tolerance[0]
    ramped = np.all(np.diff(q) >= -tolerance[1:] * q[1:])
    if fast_unchanged and ramped and q[-1] > 1 + tolerance[-1]:
        scaled = _scaled_band(q, tolerance)
        if scaled is not None:
            factor, uncertainty = scaled
            factor, _ = _snap(factor, 3 * uncertainty + 1e-12)
            fit = _ramp_variant(w, q, tolerance, factor, original, base, d, amplitude)
            if fit is not None:
                rope_type, parameters, model = fit
                explained = _consistent(model / w, tolerance)
                return _Fit(
                    rope_type, parameters=parameters, model=model, explained=explained, **result
                )
    if np.all(q >= 1 - tolerance):
        # LongRoPE: a factor of its own per pair.
        parameters = {"factors": tuple(float(v) for v in q)}
        if assumed:
            parameters["base_assumed"] = True
        return _Fit(
            "longrope",
            parameters=parameters,
            model=w.copy(),
            explained=True,
            **result,
        )
    return _Fit(None, parameters={}, model=w.copy(), explained=False, **result)


def _weighted_mean(values, tolerance) -> tuple[float, float]:
    """Mean of ``values`` weighted by ``1 / tolerance**2``, and its relative uncertainty."""
    weight = 1.0 / np.maximum(tolerance, 1e-15) ** 2
    return float(np.sum(weight * values) / np.sum(weight)), float(1.0 / np.sqrt(np.sum(weight)))


def _scaled_band(q, tolerance) -> tuple[float, float] | None:
    """The whole factor of the slowest pairs and its relative uncertainty: pairs taken from
    the slowest while each agrees with the mean of those before it; None for fewer than two."""
    factor, uncertainty = float(q[-1]), float(tolerance[-1])
    count = 1
    for i in range(q.size - 2, -1, -1):
        if abs(q[i] / factor - 1) > tolerance[i] + uncertainty:
            break
        count += 1
        factor, uncertainty = _weighted_mean(q[i:], tolerance[i:])
    return (factor, uncertainty) if count >= 2 else None


def _ramp_variant(w, q, tolerance, factor, original, base, d, amplitude):
    """YaRN (ramp linear in the pair index) or Llama 3 (smoothing linear in 1/wavelength)
    between the unchanged fast pairs and the slow pairs divided by ``factor``."""
    n = w.size
    index = np.arange(n, dtype=np.float64)
    ramp = (np.abs(q - 1) > tolerance) & (np.abs(q / factor - 1) > tolerance)
    results = []
    # YaRN: w/w_o = 1 - r (1 - 1/F), r = (i - low) / (high - low) clipped.
    r = (1 - 1 / q) / (1 - 1 / factor)
    if np.count_nonzero(ramp) >= 2:
        slope, intercept = np.polyfit(index[ramp], r[ramp], 1)
        low, high = -intercept / slope, (1 - intercept) / slope
    else:
        # No pair inside the ramp: it lies between the last unchanged and first scaled pair.
        last_unchanged = np.flatnonzero(np.abs(q - 1) <= tolerance)[-1]
        low, high = float(last_unchanged), float(last_unchanged + 1)
    yarn_ratio = np.clip((index - low) / (high - low), 0, 1)
    yarn = original * (1 - yarn_ratio) + original / factor * yarn_ratio
    yarn_error = float(np.max(np.abs(yarn / w - 1) / tolerance))
    parameters = {"factor": factor, "correction_range": (_tidy(low), _tidy(high))}
    parameters.update(_yarn_lengths(low, high, base, d))
    expected_attention = 0.1 * math.log(factor) + 1
    parameters["attention_factor_formula"] = expected_attention
    results.append((yarn_error, "yarn", parameters, yarn))
    # Llama 3: w = (1 - s) w_o / F + s w_o, s = a w_o + b (linear in 1 / wavelength).
    s = (1 / q - 1 / factor) / (1 - 1 / factor)
    if np.count_nonzero(ramp) >= 2:
        a, b = np.polyfit(original[ramp], s[ramp], 1)
        smooth = np.clip(a * original + b, 0, 1)
        llama = (1 - smooth) * original / factor + smooth * original
        llama_error = float(np.max(np.abs(llama / w - 1) / tolerance))
        parameters3 = {"factor": factor, **_llama3_factors(a, b)}
        results.append((llama_error, "llama3", parameters3, llama))
    # A ramp that fits both equally (one pair): YaRN when the amplitude is YaRN's.
    results.sort(key=lambda item: item[0])
    if (
        len(results) == 2
        and results[1][0] <= 1
        and amplitude is not None
        and abs(amplitude - expected_attention) < 1e-3
    ):
        results.sort(key=lambda item: item[1] != "yarn")
    _, rope_type, parameters, model = results[0]
    exact = _variant_frequencies(rope_type, parameters, base, d)
    if exact is not None and np.all(np.abs(exact / w - 1) <= tolerance):
        model = exact  # the formula with the round parameters found
    return rope_type, parameters, model


def _variant_frequencies(rope_type, parameters, base, d):
    """The variant's frequencies from :func:`pe_core.rope_frequencies` with the parameters
    found, when they are complete; else None."""
    keys = {
        "llama3": ("factor", "low_freq_factor", "high_freq_factor"),
        "yarn": ("factor", "truncate"),
    }[rope_type]
    if "original_max_position_embeddings" not in parameters or any(
        k not in parameters for k in keys
    ):
        return None
    scaling = {"rope_type": rope_type, **{k: parameters[k] for k in keys}}
    scaling["original_max_position_embeddings"] = parameters["original_max_position_embeddings"]
    try:
        rope = rope_frequencies(d, base=base, scaling=scaling)
    except InputError:
        return None
    return rope.inv_freq


#: A ramp end this close to a whole number is one (transformers truncates them by default).
_WHOLE = 0.05


def _tidy(value: float) -> float:
    """A ramp end, whole when it is within the fit's noise of a whole number (transformers
    truncates them by default)."""
    return float(round(value)) if abs(value - round(value)) < _WHOLE else float(value)


def _yarn_lengths(low, high, base, d) -> dict:
    """The training length and betas a YaRN correction range implies, when a round one does
    (beta_fast 32 and beta_slow 1, transformers' defaults)."""
    truncate = bool(abs(low - round(low)) < _WHOLE and abs(high - round(high)) < _WHOLE)

    def dimension(length, turns):
        return d * math.log(length / (turns * 2 * math.pi)) / (2 * math.log(base))

    for power in range(8, 24):
        length = 2**power
        lo, hi = dimension(length, 32), dimension(length, 1)
        if truncate:
            lo, hi = max(math.floor(lo), 0), min(math.ceil(hi), d - 1)
            if lo == round(low) and hi == round(high):
                return {"original_max_position_embeddings": length, "truncate": True}
        elif abs(lo - low) < 0.05 and abs(hi - high) < 0.05:
            return {"original_max_position_embeddings": length, "truncate": False}
    return {"truncate": truncate}


def _llama3_factors(a, b) -> dict:
    """Llama 3's ``low_freq_factor``, ``high_freq_factor`` and training length from the
    smoothing line ``s = a w + b`` (``a = L / (2 pi (h - l))``, ``b = -l / (h - l)``), with a
    whole low factor."""
    for low in (1.0, 2.0, 0.5):
        gap = -low / b if b < 0 else math.nan
        if not math.isfinite(gap) or gap <= 0:
            continue
        high = low + gap
        length = 2 * math.pi * a * gap
        snapped_high, ok = _snap(high, 0.02)
        power = 2 ** round(math.log2(length)) if length > 0 else math.nan
        if ok and abs(power / length - 1) < 0.02:
            return {
                "low_freq_factor": low,
                "high_freq_factor": snapped_high,
                "original_max_position_embeddings": int(power),
            }
    return {"smoothing_slope": float(a), "smoothing_intercept": float(b)}


# --- comparing with an encoding ----------------------------------------------------------------


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
        self.u_storage = PRECISIONS[cache.storage].unit_roundoff
        self._scans: dict = {}
        n = cache.positions.size
        base, ladder = _ladder(cache.positions)
        self.sample = np.unique(np.concatenate([_spread(n, _SAMPLE_ROWS), ladder, [base]]))
        magnitude = np.abs(cache.positions)
        self.whole = bool(np.all(cache.positions == np.round(cache.positions))) and bool(
            np.max(magnitude) < 2.0**40
        )

    def tolerance(self, model: _Model, rows) -> NDArray[np.float64]:
        """Largest difference explained per entry: the storage's rounding, and the rounding
        of ``p w`` in float32 (with float32 frequencies) plus float32's cos."""
        a = abs(model.attention_factor)
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
            storage = a * self.u_storage * 1.01 + 1e-15
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


# --- identification --------------------------------------------------------------------------


def identify_rope(
    cos: ArrayLike | None = None,
    sin: ArrayLike | None = None,
    *,
    inv_freq: ArrayLike | None = None,
    positions: ArrayLike | None = None,
    config: Mapping | str | bytes | None = None,
    layer_type: str | None = None,
) -> RopeIdentification:
    """Name the rotary encoding behind a cos/sin cache or an ``inv_freq`` vector, and its bugs.

    Parameters
    ----------
    cos, sin : array_like, shape (n_positions, columns)
        The cache as a framework returns it (singleton axes such as transformers' (1, L, d)
        are dropped): the halves layout (``cat(freqs, freqs)``, rotate_half), the
        interleaved one (each pair's value twice side by side) or one column per pair; the
        attention factor folded in or not; columns that do not rotate (cos 1, sin 0) before
        or after the rotary ones. float16 and bfloat16 values are recognized as such.
    inv_freq : array_like, shape (rotary_dim // 2,), optional
        Instead of a cache: the frequencies (radians per position), one per pair.
    positions : array_like, optional
        The position of each row of the cache (by default 0, 1, ...): any whole or real
        positions, with one 1 to 3 from the smallest (a slice of a long cache, 1000 to 1063,
        is fine).
    config : mapping, or str or bytes of JSON, optional
        The config.json the data should implement, read by :func:`pe_core.rope_from_config`
        (at ``seq_len`` = the largest position + 1, as transformers' dynamic and LongRoPE
        updates see it).
    layer_type : str, optional
        For a config with layer types of different RoPE.

    Returns
    -------
    RopeIdentification
        The base, rotary columns, layout, variant and parameters, attention factor,
        arithmetic and findings; with a config, whether the data matches it, where it first
        departs and the likely cause.

    Raises
    ------
    InputError
        Neither a cache nor ``inv_freq`` (or both); cos and sin of different shapes; fewer
        than 2 rows; non-finite values; positions without two 1 to 3 apart; a bad config.
    InputTypeError
        Non-numeric arrays.

    Notes
    -----
    Each pair's phase ``atan2(sin, cos)`` is ``p w_i``, so its change from the row of the
    smallest position is ``(p - p_0) w_i``: it is unwrapped along rows whose distances from
    that row at most double (from one 1 to 3 away, where ``|d w| < pi`` as ``w <= 1``), so a
    frequency is measured to the phase noise over the largest distance. ``log w_i`` of the
    fastest pairs (which context extension leaves alone) gives the base, snapped to the
    roundest value within its uncertainty; the ratio of ``base**(-2i/d)`` to each measured
    frequency then names the variant: 1 everywhere (default), one factor (linear), 1 then a
    ramp then a factor (YaRN, ramp linear in ``i``; Llama 3, linear in ``1/wavelength``),
    a factor of its own per pair (LongRoPE). The amplitude ``sqrt(cos^2 + sin^2)`` is the
    attention factor. The data is then compared entry by entry with the encoding found, in
    the arithmetic that explains it: exact, ``p w`` in float32 as transformers computes it
    (differences up to ``4 u32 (p w + 1)``), or with position ids, frequencies or the
    product rounded to bfloat16 or float16. With a config, the tolerance of each entry is
    the storage's rounding plus the float32 angle's, and each bug of
    :data:`pe_core.ROPE_BUGS` is asked whether it reproduces a departure.

    References
    ----------
    Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding" (2021);
    Hugging Face transformers' ``modeling_rope_utils`` (the variants' definitions).

    Examples
    --------
    >>> import pe_core
    >>> rope = pe_core.rope_frequencies(128, base=500_000.0)
    >>> cos, sin = pe_core.rope_cos_sin(4096, rope)
    >>> found = identify_rope(cos, sin)
    >>> found.rope_type, found.base, found.rotary_dim, found.layout, found.arithmetic.angles
    ('default', 500000.0, 128, 'halves', 'exact')
    """
    if (cos is None) != (sin is None):
        raise InputError("cos and sin must be given together (the cache), or neither")
    if (cos is None) == (inv_freq is None):
        raise InputError("give either a cache (cos and sin) or inv_freq, not both or neither")
    cache = None if cos is None else _read_cache(cos, sin, positions)
    expected = None
    if config is not None:
        if cache is not None:
            reach = cache.positions
        elif positions is not None:
            reach = as_real_array(positions, "positions", ndim=1)
        else:
            reach = np.empty(0)
        seq_len = int(np.max(np.abs(reach))) + 1 if reach.size else None
        if seq_len is not None and seq_len > 2**53:
            raise InputError(
                f"positions must be at most 2**53 to compare with a config, got {seq_len - 1:g}"
            )
        expected = rope_from_config(config, layer_type=layer_type, seq_len=seq_len)
    if cache is None:
        return _identify_inv_freq(inv_freq, expected)
    return _identify_cache(cache, expected)


@dataclass
class Context:
    """What a bug's detector sees: the data, what was measured and fitted, the config's
    encoding (or None) and a comparison that tells whether a model explains the data."""

    cache: _Cache | None
    measured: NDArray[np.float64]
    sigma: NDArray[np.float64]
    fit: _Fit
    amplitude: float | None
    expected: RotaryEncoding | None
    comparison: _Comparison | None
    inv_freq_format: str | None = None
    sin_sign: float = 1.0
    explained: bool = True  # the data is the identified encoding in the arithmetic found

    def explains(self, inv_freq, attention_factor=None, **arithmetic) -> bool:
        """Whether a cache with these frequencies (and attention factor, and roundings)
        explains the data's rows, on a sample then on every row."""
        inv_freq = np.asarray(inv_freq, dtype=np.float64)
        if self.comparison is None:  # inv_freq data
            if inv_freq.size != self.measured.size:
                return False
            if arithmetic.get("sin_sign", 1.0) < 0:
                return False
            fmt = arithmetic.get("freq_format")
            w = round_to_precision(inv_freq, fmt) if fmt else inv_freq
            return bool(np.all(np.abs(self.measured / w - 1) <= _INV_FREQ_TOLERANCE))
        factor = self.amplitude if attention_factor is None else attention_factor
        model = _Model(inv_freq, factor, **arithmetic)
        if not self.comparison.explains(model):
            return False
        return self.comparison.scan(model)[2] is None


def _identify_cache(cache: _Cache, expected) -> RopeIdentification:
    comparison = _Comparison(cache)
    rows = comparison.sample
    amplitude_values = np.hypot(
        np.asarray(cache.cos[rows], dtype=np.float64), np.asarray(cache.sin[rows], dtype=np.float64)
    )
    amplitude = float(np.mean(amplitude_values))
    signed, reach = _measure(cache)
    # sin = -sin(p w) (exp(-i p w), or rotate_half's halves swapped) makes every phase run
    # backwards: measured as such, named by the catalogue's negated_sin.
    sin_sign = -1.0 if np.median(signed) < 0 else 1.0
    measured = np.abs(signed)
    u_storage = comparison.u_storage
    # A phase read from values rounded to the storage moves by about 2u; float32 angles add
    # their own rounding, relative to the angle.
    with np.errstate(divide="ignore"):
        sigma = 2 * u_storage / (measured * reach) + 2 * _U32
    still = np.all(cache.sin == 0, axis=0)
    if still.any():
        fit = _proportional_fit(measured, sigma, amplitude, still)
    else:
        fit = _fit_variant(measured, sigma, amplitude)
    loose = not fit.explained or fit.rope_type in (None, "longrope")
    if loose and _on_grid(measured, sigma, "bfloat16"):
        # Frequencies rounded to bfloat16 (a model cast to it): fit the variant to that
        # rounding; the arithmetic below then names it. (LongRoPE's factors of its own per
        # pair would absorb any rounding: a structured variant is preferred.)
        coarse = _fit_variant(measured, np.maximum(sigma, 2.0**-8), amplitude)
        if coarse.explained and coarse.rope_type not in (None, "longrope"):
            fit = coarse
    amplitude = _snap_attention(amplitude, fit, u_storage)
    context = Context(
        cache, measured, sigma, fit, amplitude, expected, comparison, sin_sign=sin_sign
    )

    # The arithmetic: the simplest model that explains every row.
    reference = fit.model if fit.explained else measured
    arithmetic, model, findings = _arithmetic(context, reference, amplitude)
    largest, beyond_storage, departure = comparison.scan(model)
    explained = departure is None
    context.explained = explained
    if not explained:  # no arithmetic explains every row: none of its roundings is named
        arithmetic = RopeArithmetic(cache.storage, None, None)
        findings = []
    elif beyond_storage <= 0 and arithmetic.angles == "float32":
        arithmetic = RopeArithmetic(cache.storage, "exact", arithmetic.inv_freq)
    findings += _blind_findings(context)
    config_matches, departure_found, cause = None, None, None
    if expected is not None:
        config_matches, departure_found, cause, more = _against_config(context)
        findings += more
    return RopeIdentification(
        source="cache",
        base=fit.base,
        base_fit=fit.base_fit,
        base_uncertainty=fit.base_uncertainty,
        base_snapped=fit.base_snapped,
        rotary_dim=2 * measured.size,
        width=cache.width,
        rotary_columns=cache.rotary_columns,
        layout=cache.layout,
        rope_type=fit.rope_type,
        parameters=fit.parameters,
        inv_freq=measured,
        scale=fit.scale,
        attention_factor=amplitude,
        arithmetic=arithmetic,
        positions=(float(np.min(cache.positions)), float(np.max(cache.positions))),
        n_positions=int(cache.positions.size),
        max_abs_error=largest,
        explained=explained,
        findings=_unique(findings),
        config_matches=config_matches,
        departure=departure_found,
        likely_cause=cause,
        expected=expected,
    )


def _proportional_fit(measured, sigma, amplitude, still) -> _Fit:
    """Pairs of frequency 0 after the rotating ones (proportional RoPE: the first
    ``partial_rotary_factor * head_dim / 2`` pairs keep ``base**(-2i/head_dim)``, all divided
    by ``factor``, the others do not rotate): the rotating ones fitted at the whole width."""
    n = measured.size
    rotating = int(np.argmax(still))
    if rotating < 2 or not np.all(still[rotating:]):
        nothing = np.full(n, math.nan)
        return _Fit(None, math.nan, math.nan, math.nan, False, {}, measured.copy(), nothing, False)
    head = _fit_variant(measured[:rotating], sigma[:rotating], amplitude, rotary_dim=2 * n)
    if head.rope_type not in ("default", "linear"):
        head.rope_type, head.explained = None, False
        return head
    model = np.concatenate([head.model, np.zeros(n - rotating)])
    scale = np.concatenate([head.scale, np.full(n - rotating, np.inf)])
    parameters = {
        "factor": head.parameters.get("factor", 1.0),
        "rotating_pairs": rotating,
        "partial_rotary_factor": rotating / n,
    }
    return _Fit(
        "proportional",
        head.base,
        head.base_fit,
        head.base_uncertainty,
        head.base_snapped,
        parameters,
        model,
        scale,
        head.explained,
    )


def _on_grid(measured, sigma, fmt: str) -> bool:
    """Whether the frequencies measured precisely enough (to 2**-11) are numbers of ``fmt``
    (at least 4 of them)."""
    precise = sigma < 2.0**-11
    if np.count_nonzero(precise) < 4:
        return False
    grid = round_to_precision(measured[precise], fmt)
    return bool(np.all(np.abs(measured[precise] / grid - 1) <= 4 * sigma[precise]))


def _unique(findings) -> tuple[Finding, ...]:
    seen, kept = set(), []
    for finding in findings:
        if finding.name not in seen:
            seen.add(finding.name)
            kept.append(finding)
    return tuple(kept)


def _snap_attention(amplitude: float, fit: _Fit, u_storage: float) -> float:
    """The amplitude, snapped to 1 or to its variant's formula when within the rounding."""
    targets = [1.0]
    if fit.rope_type == "longrope":
        found = _longrope_attention(amplitude, u_storage)
        if found is not None:
            fit.parameters.update(found)
            targets.append(found["attention_factor_formula"])
    formula = fit.parameters.get("attention_factor_formula")
    if formula is not None:
        targets += [formula, formula**2]
    for target in targets:
        if abs(amplitude - target) <= 2 * u_storage * target + 1e-7:
            return float(target)
    return amplitude


def _longrope_attention(amplitude: float, u_storage: float) -> dict | None:
    """The LongRoPE factor and training length whose attention factor ``sqrt(1 + ln(factor) /
    ln(L))`` is the amplitude, both powers of two (Phi-3's 32 and 4,096), or None."""
    if amplitude <= 1:
        return None
    ratio = amplitude**2 - 1
    best = None
    for power in range(8, 21):
        length = 2**power
        rounded = 2.0 ** round(math.log2(length**ratio))
        formula = math.sqrt(1 + math.log(rounded) / math.log(length))
        if best is None or abs(formula - amplitude) < abs(best[2] - amplitude):
            best = (rounded, length, formula)
    if best is None or abs(best[2] - amplitude) > 2 * u_storage * amplitude + 1e-7:
        return None
    return {
        "factor": best[0],
        "original_max_position_embeddings": best[1],
        "attention_factor_formula": best[2],
    }


#: Roundings tried, simplest story first: (arithmetic fields, model keywords).
_ROUNDINGS = (
    ({}, {}),
    ({"positions": "bfloat16"}, {"positions_format": "bfloat16"}),
    ({"positions": "float16"}, {"positions_format": "float16"}),
    ({"inv_freq": "bfloat16"}, {"freq_format": "bfloat16"}),
    ({"inv_freq": "float16"}, {"freq_format": "float16"}),
    (
        {"angles": "bfloat16", "positions": "bfloat16", "inv_freq": "bfloat16"},
        {"angle_format": "bfloat16"},
    ),
    (
        {"angles": "float16", "positions": "float16", "inv_freq": "float16"},
        {"angle_format": "float16"},
    ),
)

#: The catalogue's name for each rounding.
_ROUNDING_BUGS = {
    "positions_format": "bf16_positions",
    "freq_format": "bf16_inv_freq",
    "angle_format": "bf16_angles",
}


def _arithmetic(context: Context, reference, amplitude):
    """The simplest rounding that explains the sample rows, with its model and findings."""
    comparison = context.comparison
    storage = context.cache.storage
    sign = context.sin_sign
    for fields, keywords in _ROUNDINGS:
        model = _Model(reference, amplitude, sin_sign=sign, **keywords)
        if not comparison.explains(model):
            continue
        arithmetic = RopeArithmetic(
            storage,
            fields.get("angles", "float32"),
            fields.get("inv_freq"),
            fields.get("positions", "exact"),
        )
        findings = []
        plain = _Model(reference, amplitude, sin_sign=sign)
        for key, fmt in keywords.items():
            evidence = {
                "format": fmt,
                "explained_by": arithmetic.words,
                "largest_difference_without": comparison.largest(plain),
                "largest_difference_with": comparison.largest(model),
            }
            if key != "freq_format":
                positions = np.abs(context.cache.positions)
                moved = positions[round_to_precision(positions, fmt) != positions]
                if moved.size:
                    evidence["first_position_rounded"] = float(np.min(moved))
            findings.append(ROPE_BUGS[_ROUNDING_BUGS[key]].finding(**evidence))
        return arithmetic, model, findings
    # Nothing explains it: report against the plain model.
    model = _Model(reference, amplitude, sin_sign=sign)
    return RopeArithmetic(storage, "float32", None), model, []


def _blind_findings(context: Context) -> list[Finding]:
    found = []
    for bug in ROPE_BUGS.values():
        if bug.detect_blind is None:
            continue
        evidence = bug.detect_blind(context)
        if evidence is not None:
            found.append(bug.finding(**evidence))
    return found


def _against_config(context: Context):
    """(matches, departure, likely cause, findings) of the data against the config."""
    expected = context.expected
    cache = context.cache
    findings: list[Finding] = []
    # Structure first: the columns that rotate and the pair layout.
    structural = []
    if cache is not None:
        for bug in ROPE_BUGS.values():
            if bug.detect_structure is not None:
                evidence = bug.detect_structure(context)
                if evidence is not None:
                    structural.append(bug.finding(**evidence))
    if cache is None:
        departure, cause, more = _inv_freq_departure(context)
        return departure is None, departure, cause, more
    if structural:
        return False, _structural_departure(context), structural[0].name, structural
    if cache.cos.shape[1] != expected.n_pairs:
        departure = Departure(0, 0, float(cache.positions[0]), "cos", math.nan, math.nan, 0.0)
        findings.append(
            Finding(
                "rotary_dim_differs",
                f"{2 * cache.cos.shape[1]} rotary columns where the config has "
                f"{expected.rotary_dim}",
                {"rotary_dim": 2 * cache.cos.shape[1], "config_rotary_dim": expected.rotary_dim},
            )
        )
        return False, departure, "parameters", findings
    model = _Model(expected.inv_freq, expected.attention_factor)
    _, _, hit = context.comparison.scan(model)
    if hit is None:
        return True, None, None, findings
    row, pair, array, value, wanted, tolerance = hit
    column = int(cache.pair_columns[pair])
    departure = Departure(row, column, float(cache.positions[row]), array, value, wanted, tolerance)
    named = _named_bugs(context)
    if named:
        return False, departure, named[0].name, findings + named
    findings += _parameter_findings(context)
    return False, departure, "parameters", findings


def _named_bugs(context: Context) -> list[Finding]:
    """Every bug of the catalogue that reproduces the data from the config (two can make the
    same cache: at base 10,000 the exponent i/d gives base 100, as a base off by 100x does)."""
    named = []
    for bug in ROPE_BUGS.values():
        if bug.detect is None:
            continue
        evidence = bug.detect(context)
        if evidence is not None:
            named.append(bug.finding(**evidence))
    return named


def _structural_departure(context: Context) -> Departure | None:
    """The first row (by position) and column where the array as given departs from the
    config's cache laid out as the config says (its rotary columns first, in its layout, the
    others cos 1 and sin 0), comparing every column."""
    cache, expected = context.cache, context.expected
    width, rotary_dim, half = cache.width, expected.rotary_dim, expected.rotary_dim // 2
    columns = np.arange(min(width, rotary_dim))
    pair_of = columns % half if expected.layout == "halves" else columns // 2
    a = expected.attention_factor
    order = np.argsort(np.abs(cache.positions), kind="stable")
    chunk = max(1, _CHUNK_VALUES // max(1, width))
    u = PRECISIONS[cache.storage].unit_roundoff
    for first in range(0, order.size, chunk):
        rows = order[first : first + chunk]
        angles = np.multiply.outer(cache.positions[rows], expected.inv_freq[pair_of])
        for name, data, function, passing in (
            ("cos", cache.full_cos, np.cos, 1.0),
            ("sin", cache.full_sin, np.sin, 0.0),
        ):
            wanted = np.full((rows.size, width), passing)
            wanted[:, : columns.size] = a * function(angles)
            tolerance = np.full((rows.size, width), 4 * _U32 + u)
            tolerance[:, : columns.size] = abs(a) * (
                u + _FREQ_ULPS * _U32 * np.abs(angles) + 4 * _U32
            )
            error = np.abs(np.asarray(data[rows], dtype=np.float64) - wanted)
            bad = np.argwhere(error > tolerance)
            if bad.size:
                i, column = (int(v) for v in bad[0])
                row = int(rows[i])
                return Departure(
                    row,
                    column,
                    float(cache.positions[row]),
                    name,
                    float(data[row, column]),
                    float(wanted[i, column]),
                    float(tolerance[i, column]),
                )
    return None


def _parameter_findings(context: Context) -> list[Finding]:
    """What differs between the data's encoding and the config's, when no bug explains it."""
    fit, expected = context.fit, context.expected
    found = []
    if fit.rope_type != expected.rope_type:
        found.append(
            Finding(
                "rope_type_differs",
                f"the data is RoPE {fit.rope_type or 'of no known variant'}, the config "
                f"{expected.rope_type}",
                {"rope_type": str(fit.rope_type), "config_rope_type": expected.rope_type},
            )
        )
    if not math.isclose(fit.base, expected.effective_base, rel_tol=1e-6):
        found.append(
            Finding(
                "base_differs",
                f"base {fit.base:,.10g} where the config gives {expected.effective_base:,.10g}",
                {"base": fit.base, "config_base": expected.effective_base},
            )
        )
    if context.amplitude is not None and not math.isclose(
        context.amplitude, expected.attention_factor, rel_tol=1e-3
    ):
        found.append(
            Finding(
                "attention_factor_differs",
                f"attention factor {context.amplitude:.6g} where the config gives "
                f"{expected.attention_factor:.6g}",
                {
                    "attention_factor": context.amplitude,
                    "config_attention_factor": expected.attention_factor,
                },
            )
        )
    return found


def _inv_freq_departure(context: Context):
    expected = context.expected
    findings: list[Finding] = []
    if context.measured.size != expected.n_pairs:
        findings.append(
            Finding(
                "rotary_dim_differs",
                f"{2 * context.measured.size} rotary columns where the config has "
                f"{expected.rotary_dim}",
                {
                    "rotary_dim": 2 * context.measured.size,
                    "config_rotary_dim": expected.rotary_dim,
                },
            )
        )
        return Departure(0, 0, None, "inv_freq", math.nan, math.nan, 0.0), "parameters", findings
    relative = np.abs(context.measured / expected.inv_freq - 1)
    allowed = np.full(relative.size, _INV_FREQ_TOLERANCE)
    bad = np.flatnonzero(relative > allowed)
    if bad.size == 0:
        return None, None, findings
    pair = int(bad[0])
    departure = Departure(
        0,
        pair,
        None,
        "inv_freq",
        float(context.measured[pair]),
        float(expected.inv_freq[pair]),
        float(allowed[pair] * expected.inv_freq[pair]),
    )
    named = _named_bugs(context)
    if named:
        return departure, named[0].name, findings + named
    return departure, "parameters", findings + _parameter_findings(context)


def _identify_inv_freq(inv_freq, expected) -> RopeIdentification:
    given = as_array(inv_freq, "inv_freq")
    values = np.abs(as_real_array(_squeeze_vector(given), "inv_freq", ndim=1))
    if values.size < 2:
        raise InputError(f"inv_freq must hold at least 2 frequencies, got {values.size}")
    if np.any(values == 0):
        raise InputError("inv_freq must hold frequencies > 0 (a pair of frequency 0 is not RoPE)")
    check_size(values.size, "identifying inv_freq")
    if given.dtype == np.float16:
        fmt = "float16"
    elif given.dtype == np.float32:
        fmt = "float32"
    else:
        fmt = "float64"
    if fmt != "float16" and np.array_equal(round_to_precision(values, "bfloat16"), values):
        fmt = "bfloat16"
    u = PRECISIONS[fmt].unit_roundoff
    sigma = np.full(values.size, u)
    fit = _fit_variant(values, sigma, None)
    context = Context(None, values, sigma, fit, None, expected, None, inv_freq_format=fmt)
    findings = _blind_findings(context)
    if fmt in ("bfloat16", "float16"):
        findings.append(ROPE_BUGS["bf16_inv_freq"].finding(format=fmt))
    reference = fit.model if fit.explained else values
    largest = float(np.max(np.abs(values - reference)))
    config_matches = departure = cause = None
    if expected is not None:
        config_matches, departure, cause, more = _against_config(context)
        findings += more
    return RopeIdentification(
        source="inv_freq",
        base=fit.base,
        base_fit=fit.base_fit,
        base_uncertainty=fit.base_uncertainty,
        base_snapped=fit.base_snapped,
        rotary_dim=2 * values.size,
        width=2 * values.size,
        rotary_columns=(0, 2 * values.size),
        layout=None,
        rope_type=fit.rope_type,
        parameters=fit.parameters,
        inv_freq=values,
        scale=fit.scale,
        attention_factor=None,
        arithmetic=RopeArithmetic(fmt, None, fmt),
        positions=(),
        n_positions=0,
        max_abs_error=largest,
        explained=fit.explained,
        findings=_unique(findings),
        config_matches=config_matches,
        departure=departure,
        likely_cause=cause,
        expected=expected,
    )


def _squeeze_vector(values: np.ndarray) -> np.ndarray:
    if values.ndim == 1:
        return values
    kept = [s for s in values.shape if s != 1]
    if len(kept) == 1:
        return values.reshape(kept)
    raise InputError(f"inv_freq must be 1-D (one frequency per pair), got shape {values.shape}")
