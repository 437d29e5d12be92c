"""What a framework's arithmetic does to RoPE's angles: the error against the exact
``position * w`` when position ids, frequencies, their product or the cos/sin cache are rounded.

transformers' RoPE computes ``inv_freq`` in float32 with its own operation order
(:attr:`pe_core.RotaryEncoding.inv_freq_float32`), the angles ``position * inv_freq`` in float32,
their cos and sin in float32, and casts them to the model's dtype: :func:`transformers_angle_errors`
is that error, position by position. :func:`rope_angle_errors` is a framework that rounds every
step to one format (positions included, as some ports do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import (
    check_choice,
    check_positions_for,
    check_precision,
    check_real,
    check_size,
    describe,
)
from pe_core._numerics.formats import round_to_precision
from pe_core._numerics.kernels import two_product
from pe_core.errors import InputError, InputTypeError
from pe_core.rotary.encoding import RotaryEncoding, check_rope

__all__ = [
    "MODEL_DTYPES",
    "AngleErrorCrossing",
    "first_angle_error_above",
    "inv_freq_float32_ulps",
    "merged_position_ids",
    "rope_angle_errors",
    "transformers_angle_errors",
]

#: The dtypes a model's cos/sin cache is cast to (transformers' ``cos.to(dtype=x.dtype)``).
MODEL_DTYPES = ("float32", "bfloat16", "float16")


def inv_freq_float32_ulps(rope: RotaryEncoding) -> NDArray[np.float64]:
    """Per pair, how far transformers' float32 ``inv_freq`` is from the exact frequency, in
    float32 units of that frequency (correct rounding is at most 0.5; 0 for a pair that does not
    rotate).

    The exponent ``2i/d`` is rounded to float32 before the power, which multiplies its error by
    ``ln(base)``: several units where ``2i/d`` is not exact in binary (head widths 80, 96, 192),
    about one where it is (the power and the reciprocal, each rounded once):

    >>> from pe_core import rope_frequencies
    >>> for head_dim in (96, 128):
    ...     rope = rope_frequencies(head_dim, base=1_000_000.0)
    ...     print(head_dim, f"{inv_freq_float32_ulps(rope).max():.2f}")
    96 5.06
    128 1.29
    """
    rope = check_rope(rope)
    exact = rope.inv_freq
    float32 = (
        rope.inv_freq_float32 if rope.inv_freq_float32 is not None else exact.astype(np.float32)
    )
    unit = np.spacing(np.abs(float32)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ulps = np.abs(float32.astype(np.float64) - exact) / unit
    return np.where(exact == 0, 0.0, ulps)


def rope_angle_errors(
    positions: int | ArrayLike, rope: RotaryEncoding, precision: str = "float32"
) -> NDArray[np.float64]:
    """The largest error over pairs of the angle ``position * w`` when the position ids, the
    frequencies and their product are rounded to ``precision``, as a framework computing in that
    format does (radians, one value per position, as a rotation: at most pi).

    The frequencies are ``rope.inv_freq`` correctly rounded (for transformers' own float32
    frequencies, see :func:`transformers_angle_errors`). A position (or angle) beyond the
    format's range gives inf (float16 overflows at 65,520). Implementations that cast position
    ids to bfloat16 give 256 and 257 the same angle (see :func:`merged_position_ids`).
    """
    rope = check_rope(rope)
    fmt = check_precision(precision)
    checked = check_positions_for(rope.bank(), positions)
    check_size(checked.n * rope.n_pairs * 2, "the angles")
    exact, error = two_product(checked.values[:, None], rope.inv_freq[None, :])
    # Beyond the format's range a position is inf, as a real cast gives (times a frequency that
    # underflowed to 0: NaN, reported as inf below).
    with np.errstate(over="ignore", invalid="ignore"):
        rounded_positions = round_to_precision(checked.values, fmt.name)
        rounded_freqs = round_to_precision(rope.inv_freq, fmt.name)
        # A product of two numbers of at most 24 significant bits is exact in float64.
        angles = round_to_precision(rounded_positions[:, None] * rounded_freqs[None, :], fmt.name)
        errors = np.max(np.abs(_turn((angles - exact) - error)), axis=1, initial=0.0)
    errors[~np.isfinite(rounded_positions)] = np.inf
    return errors


def transformers_angle_errors(
    positions: int | ArrayLike, rope: RotaryEncoding, dtype: str = "float32"
) -> NDArray[np.float64]:
    """The largest error over pairs of the rotation transformers' RoPE applies at each position
    (radians, at most pi), against the exact angle ``position * w``.

    Parameters
    ----------
    positions : int or array_like
        Positions (an int ``n``: 0 .. n-1), whole and below 2**24 (float32 position ids are
        exact there).
    rope : RotaryEncoding
        Its ``inv_freq_float32`` (transformers' float32 frequencies, as
        :func:`pe_core.rope_frequencies` computes them) is used; without it, ``inv_freq``
        rounded to float32.
    dtype : {"float32", "bfloat16", "float16"}
        The model's dtype. "float32": the error of the float32 angle ``fl(position *
        inv_freq)``. "bfloat16" / "float16": the error of the angle of the ``(cos, sin)`` pair
        after the cast to that dtype (computed in float32, multiplied by the attention factor,
        then cast): a floor of about half a unit of the format from the first positions on.

    Returns
    -------
    ndarray of float64, shape (n_positions,)

    Notes
    -----
    Equal to transformers' own error wherever its float32 ``inv_freq`` equals
    ``rope.inv_freq_float32``, which follows torch's CPU arithmetic, its SLEEF ``pow``
    included (see :mod:`pe_core.rotary.float32`): on the 56 layer types of real configurations and
    the RoPE lab's presets in the tests, every frequency is bit-identical with transformers 5.24
    on torch 2.13's AVX2 CPU kernel (GPT-J's reference aside: it is recovered through float32
    sin and asin). A torch on another CPU kernel or a GPU computes its power differently, by up
    to a unit.
    """
    rope = check_rope(rope)
    dtype = check_choice(dtype, "dtype", MODEL_DTYPES)
    checked = check_positions_for(rope.bank(), positions)
    check_size(checked.n * rope.n_pairs * 4, "the angles")
    # Passed on without a name here: the helper lets go of them once it has used them.
    return _transformers_angle_errors(
        checked.values, rope, dtype, *two_product(checked.values[:, None], rope.inv_freq[None, :])
    )


def _transformers_angle_errors(
    positions: NDArray[np.float64],
    rope: RotaryEncoding,
    dtype: str,
    exact: NDArray[np.float64],
    error: NDArray[np.float64],
) -> NDArray[np.float64]:
    """:func:`transformers_angle_errors` of checked positions, given ``two_product(positions,
    rope.inv_freq)`` (a caller that has it already: the GGUF check's scan)."""
    inv_freq32 = (
        rope.inv_freq_float32
        if rope.inv_freq_float32 is not None
        else rope.inv_freq.astype(np.float32)
    ).astype(np.float32)
    with np.errstate(over="ignore"):
        positions32 = positions.astype(np.float32)
        # float32 times float32, correctly rounded: the float64 product of two float32 numbers
        # is exact, so this is the same number as rounding that product to float32.
        angles = (positions32[:, None] * inv_freq32[None, :]).astype(np.float64)
    with np.errstate(invalid="ignore"):
        angle_error = (angles - exact) - error
    del exact, error
    if dtype != "float32":
        scale = round_to_precision(rope.attention_factor, "float32")
        cos_sin = (np.cos(angles), np.sin(angles))  # each once: the pair and the angle read them
        del angles  # the full-size arrays, each let go of once used (the request budget)
        pair = []
        for value in cos_sin:
            value = round_to_precision(value, "float32")
            if scale != 1.0:  # times 1 is exact, and the value is a float32 already
                value = round_to_precision(value * scale, "float32")
            pair.append(round_to_precision(value, dtype))
        # The angle of the stored pair, against the float32 angle it was computed from.
        turned = np.arctan2(pair[1], pair[0])
        del pair
        turned -= np.arctan2(cos_sin[1], cos_sin[0])
        del cos_sin
        angle_error += _turn(turned)
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(_turn(angle_error)), axis=1, initial=0.0)


def _turn(angles: NDArray[np.float64]) -> NDArray[np.float64]:
    """Angles as rotations, in [-pi, pi): an error of a whole turn is no error (inf stays inf,
    for a position beyond the format's range).

    ``(angle + pi) % 2pi - pi``, with the remainder taken only where ``angle + pi`` lies
    outside ``[0, 2pi)``: inside, NumPy's remainder returns it unchanged, so the result is the
    same to the bit, at a fraction of the cost (the errors measured here are small angles)."""
    shifted = angles + np.pi
    if angles.size and angles.min() > -3.0 and angles.max() < 3.0:  # NaN compares False
        shifted -= np.pi  # every angle + pi lies in [0, 2pi): nothing to take away
        return shifted
    with np.errstate(invalid="ignore"):
        outside = ~((shifted >= 0.0) & (shifted < 2 * np.pi))  # NaN and inf included
    if outside.any():
        with np.errstate(invalid="ignore"):
            shifted[outside] = shifted[outside] % (2 * np.pi)
    turned = shifted - np.pi
    not_finite = ~np.isfinite(angles)
    turned[not_finite] = angles[not_finite]
    return turned


def merged_position_ids(precision: str) -> tuple[int, int]:
    """The first two consecutive integer positions that ``precision`` cannot tell apart.

    >>> merged_position_ids("bfloat16"), merged_position_ids("float16")
    ((256, 257), (2048, 2049))
    """
    fmt = check_precision(precision)
    # Integers are exact up to 2**p (p significand bits); 2**p + 1 is a tie that rounds to even.
    first = 2**fmt.significand_bits
    return first, first + 1


# --- the first position whose float32 angle is off by more than a threshold --------------

#: The float32 frequencies :func:`first_angle_error_above` can use: transformers' own (its
#: operation order, :attr:`RotaryEncoding.inv_freq_float32`) or the exact ones correctly
#: rounded (:func:`rope_angle_errors` at "float32").
FLOAT32_FREQUENCIES = ("transformers", "rounded")
#: Float32 position ids are whole numbers exactly below this.
_FLOAT32_WHOLE = 2**24
#: Angle errors computed exactly, at most, by one call (about a second on one core): past it
#: the first crossing is given as a range.
_SCAN_BUDGET = 2**23
#: Angle errors computed per block of positions.
_SCAN_BLOCK = 2**18


@dataclass(frozen=True)
class AngleErrorCrossing:
    """Where a float32 angle error first exceeds a threshold: the first position is in
    ``[low, high]`` (one position when ``exact``).

    Attributes
    ----------
    low : int
        No position below it has an error above the threshold.
    high : int or None
        A position at or below it has; None: none below ``stop`` (then ``low == stop``, or
        ``low`` is as far as the exact scan went, see ``exact``).
    stop : int
        The positions considered are ``0 .. stop - 1``.
    threshold : float
        Radians.
    """

    low: int
    high: int | None
    stop: int
    threshold: float

    @property
    def exact(self) -> bool:
        """Known position by position: the first crossing (``low == high``), or none below
        ``stop``."""
        return self.low == self.high or (self.high is None and self.low == self.stop)


def _half_unit(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Half a float32 unit in the last place of each (non-negative, normal) value: the most
    that rounding it to float32 moves it."""
    _, exponent = np.frexp(values)
    return np.where(values > 0, np.ldexp(1.0, exponent - 25), 0.0)


def _first_position(condition, n_pairs: int, stop: int) -> NDArray[np.int64]:
    """Per pair, the first whole position in ``[0, stop)`` where the non-decreasing
    ``condition(positions)`` (an (n_pairs,) boolean array of positions, one per pair) holds;
    ``stop`` where it never does. Bisection on every pair at once."""
    low = np.zeros(n_pairs, dtype=np.int64)
    high = np.full(n_pairs, stop, dtype=np.int64)
    while np.any(low < high):
        middle = (low + high) // 2
        holds = condition(middle.astype(np.float64)) & (low < high)
        high = np.where(holds, middle, high)
        low = np.where(~holds & (low < high), middle + 1, low)
    return low


def first_angle_error_above(
    rope: RotaryEncoding,
    threshold: float = 1e-3,
    *,
    frequencies: str = "transformers",
    stop: int = _FLOAT32_WHOLE,
) -> AngleErrorCrossing:
    """The first position whose float32 angle ``fl(position * inv_freq32)`` is further than
    ``threshold`` from the exact ``position * w`` on some pair, found position by position.

    Parameters
    ----------
    rope : RotaryEncoding
    threshold : float
        Radians, above 0.
    frequencies : {"transformers", "rounded"}
        transformers' float32 ``inv_freq`` (as :func:`transformers_angle_errors` at float32), or
        the exact frequencies correctly rounded to float32 (as :func:`rope_angle_errors`).
    stop : int
        Positions ``0 .. stop - 1`` are considered (at most 2**24: float32 position ids are whole
        numbers below it).

    Returns
    -------
    AngleErrorCrossing
        Exact (one position, or none below ``stop``) unless more than about 8 million angle
        errors would have to be computed, in which case a range that holds the first one.

    Notes
    -----
    Pair ``i``'s error at position ``p`` is ``(fl(p f_i) - p f_i) + p (f_i - w_i)``, at most
    ``U_i(p) = u(p f_i) / 2 + p |f_i - w_i|`` (``u``: the float32 unit at that angle) and at least
    ``L_i(p) = p |f_i - w_i| - u(p f_i) / 2``, both non-decreasing in ``p``. No position before
    the first where some ``U_i`` exceeds the threshold can cross, and the first where some
    ``L_i`` does certainly crosses; between them the errors are computed exactly, position by
    position, for the pairs whose ``U_i`` exceeds the threshold there. The sampled curve of
    :func:`transformers_angle_errors` can miss the first crossing by thousands of positions
    (244 positions below the first sampled one at 10,000 and head_dim 512).

    Examples
    --------
    >>> from pe_core import rope_frequencies
    >>> rope = rope_frequencies(512, base=10_000.0)
    >>> first_angle_error_above(rope, 1e-3).low, first_angle_error_above(
    ...     rope, 1e-3, frequencies="rounded").low
    (13614, 16990)
    """
    rope = check_rope(rope)
    threshold = check_real(threshold, "threshold")
    if not 0 < threshold < math.pi:
        raise InputError(f"threshold must be in (0, pi) radians, got {threshold:g}")
    check_choice(frequencies, "frequencies", FLOAT32_FREQUENCIES)
    if isinstance(stop, bool) or not isinstance(stop, (int, np.integer)):
        raise InputTypeError(f"stop must be an integer, got {describe(stop)}")
    if not 1 <= stop <= _FLOAT32_WHOLE:
        raise InputError(f"stop must be an integer from 1 to 2**24, got {stop}")
    stop = int(stop)
    exact_freqs = rope.inv_freq
    if frequencies == "transformers" and rope.inv_freq_float32 is not None:
        float32 = rope.inv_freq_float32.astype(np.float64)
    else:
        float32 = round_to_precision(exact_freqs, "float32")
    drift = np.abs(float32 - exact_freqs)
    # A hair of slack on each bound (the float64 arithmetic of the bounds themselves): a pair
    # is scanned a little early, never late, and certain a little late, never early.
    slack = 1 + 2.0**-40

    def upper(positions):
        angles = positions * float32
        return (_half_unit(angles) + positions * drift) * slack > threshold

    def lower(positions):
        angles = positions * float32
        return (positions * drift - _half_unit(angles)) > threshold * slack

    may = _first_position(upper, exact_freqs.size, stop)  # per pair: no crossing before
    must = _first_position(lower, exact_freqs.size, stop)  # per pair: a crossing by
    low = int(may.min(initial=stop))
    certain = int(must.min(initial=stop))
    high = certain if certain < stop else None
    budget = _SCAN_BUDGET
    start = low
    end = certain + 1 if high is not None else stop
    # Blocks that grow from a thousand positions: the first crossing is usually close to the
    # first position the bound allows.
    reach = 1024
    while start < end:
        pairs = np.flatnonzero(may < min(end, start + reach))
        if budget < pairs.size:
            break
        width = max(1, min(end - start, reach, _SCAN_BLOCK // pairs.size, budget // pairs.size))
        reach = min(2 * reach, _SCAN_BLOCK)
        positions = np.arange(start, start + width, dtype=np.float64)
        exact, error = two_product(positions[:, None], exact_freqs[None, pairs])
        angles = (positions[:, None] * float32[None, pairs]).astype(np.float32)
        errors = np.abs(_turn((angles.astype(np.float64) - exact) - error))
        above = np.flatnonzero(np.any(errors > threshold, axis=1))
        budget -= width * pairs.size
        if above.size:
            first = start + int(above[0])
            return AngleErrorCrossing(first, first, stop, threshold)
        start += width
    if start >= end and high is None:
        return AngleErrorCrossing(stop, None, stop, threshold)
    return AngleErrorCrossing(start, high, stop, threshold)
