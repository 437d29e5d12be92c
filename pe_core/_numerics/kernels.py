"""The numerical kernels: exact phasor tables, the angle-addition fill, the cosine-sum product,
distances from dot products, rounding to a smaller format. They trust their arguments (the
public functions check them, in :mod:`pe_core._numerics.checks`).

Everything fast in :mod:`pe_core` rests on one identity, the relative-position rotation of the
encoding itself: ``exp(i(a + b)w) = exp(iaw) * exp(ibw)``. Splitting a position
``k = start + step * (q * B + r)`` turns the ``n x h`` table of ``exp(ikw)`` into the product of a
coarse table (one row per block ``q``) and a fine table (one row per offset ``r`` in a block), each
only about ``sqrt(n) x h`` entries. The small tables are computed exactly (compensated angles,
see :func:`phasors`), so the products carry only the rounding of one complex multiplication.
"""

from __future__ import annotations

import itertools
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.checks import Positions
from pe_core._numerics.formats import round_to_precision
from pe_core.bank import FrequencyBank

#: Veltkamp's constant 2**27 + 1: splits a float64 into two halves whose products are exact.
_VELTKAMP = 134217729.0

#: Below this angle the correction term is small enough for a two-term series.
_SERIES_LIMIT = 2.0**40

#: Rows per block in the blocked generator: the fine table (block x pairs) then stays in cache.
_BLOCK_BYTES = 1024 * 1024

#: Outputs of at least this many elements are filled by several threads.
_THREADED_ELEMENTS = 1 << 22
_MAX_WORKERS = 4

#: Frequencies per slice in the offset-profile matrix product (bounds the tables' memory).
_PROFILE_PAIRS = 512


def veltkamp_split(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(high, low)`` with ``high + low == x`` exactly, each of at most 26 significant bits."""
    scaled = _VELTKAMP * x
    high = scaled - (scaled - x)
    return high, x - high


def two_product(a: NDArray[np.float64], b: NDArray[np.float64]):
    """``(p, e)`` with ``p = fl(a * b)`` and ``p + e == a * b`` exactly (Dekker 1971).

    Exact as long as nothing overflows, which ``_validation.check_angles`` guarantees.
    """
    product = a * b
    a_high, a_low = veltkamp_split(a)
    b_high, b_low = veltkamp_split(b)
    if not a_low.any():  # a fits in 26 bits (positions below 2**26): the terms of a_low are 0
        return product, (a_high * b_high - product) + a_high * b_low
    error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    return product, error


def phasors(multipliers: NDArray[np.float64], freqs: NDArray[np.float64]) -> NDArray[np.complex128]:
    """``exp(i * m * w)`` for every multiplier ``m`` (rows) and frequency ``w`` (columns).

    The angle ``m * w`` is carried as ``p + e`` (:func:`two_product`), so every entry is the
    correctly rounded value of the exact angle up to about one ulp: unlike ``np.sin(m * w)``,
    whose error grows with the angle (about 1e-11 at 1e5 radians).
    """
    angle, error = two_product(multipliers[:, None], freqs[None, :])
    sin_angle, cos_angle = np.sin(angle), np.cos(angle)
    if angle.size and np.max(np.abs(angle)) < _SERIES_LIMIT:
        # |error| <= 2**-53 |angle| < 2**-13: the series is exact to well below 1e-17.
        squared = error * error
        sin_error = error * (1.0 - squared / 6.0)
        cos_error = 1.0 - 0.5 * squared
    else:
        sin_error, cos_error = np.sin(error), np.cos(error)
    table = np.empty(angle.shape, dtype=np.complex128)
    table.real = cos_angle * cos_error - sin_angle * sin_error
    table.imag = sin_angle * cos_error + cos_angle * sin_error
    return table


def phasor_progression(
    start: float, step: float, count: int, freqs: NDArray[np.float64]
) -> NDArray[np.complex128]:
    """``exp(i (start + step * j) w)`` for ``j = 0 .. count-1``: :func:`phasors` of a
    progression, from two exact tables of about ``sqrt(count)`` rows and one complex product
    per entry (so within a few ulps, at a fraction of the cost of ``count`` sines)."""
    if count <= 64:
        return phasors(start + step * np.arange(count, dtype=np.float64), freqs)
    block = math.isqrt(count - 1) + 1
    n_blocks = -(-count // block)
    coarse = phasors(start + step * block * np.arange(n_blocks, dtype=np.float64), freqs)
    fine = phasors(step * np.arange(block, dtype=np.float64), freqs)
    product = coarse[:, None, :] * fine[None, :, :]
    return product.reshape(n_blocks * block, freqs.size)[:count]


#: Bits of one digit of a whole multiplier in :class:`WholePhasors`: tables of 64 rows a digit.
_DIGIT_BITS = 6


class WholePhasors:
    """:func:`phasors` of whole multipliers (any order, any spacing, ``|m| < 2**53``), from one
    exact table per base-64 digit: ``exp(i m w) = prod_k exp(i d_k 64**k w)``.

    At most 64 rows of sines and cosines per digit (about 256 for multipliers up to 10**7,
    however many there are), then one complex product per entry and further nonzero digit; a
    digit 0 multiplies by exactly ``1 + 0j``. Each table is within about an ulp of the exact
    value (:func:`phasors`), so an entry of ``K`` digits is within about ``K`` ulps: 4e-16 was
    the largest difference from :func:`phasors` over 645 offsets up to 5,120 and 4,096
    frequencies of RoPE (2 digits), 1e-7 to 1e7. A negative multiplier is the conjugate.

    :meth:`rows` gives a block of rows, so that a caller bounds its temporaries.
    """

    def __init__(self, multipliers: NDArray[np.float64], freqs: NDArray[np.float64]) -> None:
        whole = np.abs(multipliers).astype(np.int64)
        self.negative = multipliers < 0
        self.n_columns = freqs.size
        top = int(whole.max(initial=0))
        n_digits = max(1, -(-top.bit_length() // _DIGIT_BITS))
        base = 1 << _DIGIT_BITS
        self.tables, self.indices = [], []
        for k in range(n_digits):
            digits = (whole >> (_DIGIT_BITS * k)) & (base - 1)
            used, index = np.unique(digits, return_inverse=True)
            if k and used.tolist() == [0]:
                continue  # a digit that is 0 everywhere multiplies by 1
            # used * 64**k is below 2**53: exact in float64.
            self.tables.append(phasors(used.astype(np.float64) * float(base**k), freqs))
            self.indices.append(index.reshape(-1))

    def rows(self, chunk: slice) -> NDArray[np.complex128]:
        """``exp(i m w)`` for the multipliers in ``chunk`` (rows) and every frequency."""
        table = self.tables[0][self.indices[0][chunk]]
        for digit_table, index in zip(self.tables[1:], self.indices[1:], strict=True):
            table *= digit_table[index[chunk]]
        negative = self.negative[chunk]
        if negative.any():
            table[negative] = np.conj(table[negative])
        return table


def exact_phasor_rows(multipliers: NDArray[np.float64], freqs: NDArray[np.float64], rows: int):
    """``(chunk, exp(i m w))`` for blocks of ``rows`` multipliers: by :class:`WholePhasors`
    when every multiplier is whole and below 2**53 in size, else by :func:`phasors`."""
    whole = multipliers.size and bool(
        np.all(np.abs(multipliers) < 2.0**53) and np.all(multipliers == np.round(multipliers))
    )
    source = WholePhasors(multipliers, freqs) if whole else None
    for first in range(0, multipliers.size, rows):
        chunk = slice(first, first + rows)
        yield chunk, (source.rows(chunk) if whole else phasors(multipliers[chunk], freqs))


def _worker_count(n_elements: int) -> int:
    """Threads for a blocked fill: NumPy's multiply releases the GIL, so large outputs are
    written by several cores at once (the write, not the arithmetic, is the bottleneck)."""
    if n_elements < _THREADED_ELEMENTS:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, _MAX_WORKERS))


def encode_into(out, positions: Positions, freqs, layout) -> None:
    """Fill ``out`` (``n x d_model``, float32 or float64) with the encoding of ``positions``.

    Integer progressions use the blocked angle-addition product; any other positions use
    :func:`phasors` directly, a few thousand rows at a time.
    """
    n = positions.n
    for column in layout.zero_columns:
        out[:, column] = 0.0
    if n == 0 or layout.n_frequencies == 0:
        return
    if not positions.is_progression:
        rows = max(1, (1 << 16) // max(1, layout.n_frequencies))
        for first in range(0, n, rows):
            chunk = slice(first, min(first + rows, n))
            table = phasors(positions.values[chunk], freqs)
            np.clip(table.view(np.float64), -1.0, 1.0, out=table.view(np.float64))
            out[chunk, layout.sin_columns] = table.imag[:, : layout.n_sin]
            out[chunk, layout.cos_columns] = table.real[:, : layout.n_cos]
        return

    # Every value is computed in float64 (within a few ulps of 1 of the exact value) and rounded
    # once to the output's type, so a float32 output holds the nearest float32 of each value.
    block = int(np.clip(_BLOCK_BYTES // (layout.n_frequencies * 16), 16, n))
    n_blocks = -(-n // block)
    step = float(positions.step)
    # i * conj(exp(i theta)) = sin(theta) + i cos(theta): the real part is the sin column and the
    # imaginary part the cos column, so for the interleaved layout a complex view of the output
    # row is exactly [sin_0, cos_0, sin_1, cos_1, ...] and the product writes it in place.
    fine = np.conj(phasor_progression(0.0, step, block, freqs))
    coarse = 1j * np.conj(phasor_progression(positions.start, step * block, n_blocks, freqs))
    interleaved = layout.is_interleaved
    complex_out = np.complex64 if out.dtype == np.float32 else np.complex128
    out_complex = out.view(complex_out) if interleaved else None

    # A product of two rounded unit phasors can exceed 1 by an ulp where the exact value is 1
    # (cos 0): clipping the block while it is in cache costs little and keeps every value the
    # nearest float to one in [-1, 1]. (Clipping after the rounding to float32 is the same as
    # before it: the bounds are floats of every type.)
    def fill(blocks: range) -> None:
        buffer = None if interleaved else np.empty((block, layout.n_frequencies), np.complex128)
        for q in blocks:  # blocks, not positions: the fine table stays in cache
            first = q * block
            rows = min(block, n - first)
            if interleaved:  # computed in complex128, rounded once on the way into ``out``
                target = out_complex[first : first + rows]
                np.multiply(fine[:rows], coarse[q], out=target, casting="same_kind")
                np.clip(out[first : first + rows], -1.0, 1.0, out=out[first : first + rows])
                continue
            np.multiply(fine[:rows], coarse[q], out=buffer[:rows])
            values = buffer[:rows].view(np.float64)
            np.clip(values, -1.0, 1.0, out=values)
            out[first : first + rows, layout.sin_columns] = buffer.real[:rows, : layout.n_sin]
            out[first : first + rows, layout.cos_columns] = buffer.imag[:rows, : layout.n_cos]

    workers = min(_worker_count(out.size), n_blocks)
    if workers == 1:
        fill(range(n_blocks))
        return
    bounds = np.linspace(0, n_blocks, workers + 1).astype(int)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(fill, [range(a, b) for a, b in itertools.pairwise(bounds)]))


def cos_sum_progression(
    start: float, step: float, n: int, freqs: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``f(m) = sum_i cos(w_i * (start + step * m))`` for ``m = 0 .. n-1``, by matrix products.

    With ``m = q * B + r``, ``sum_i Re(T[q, i] * F[r, i])`` is ``Re(T @ F.T)``: two real matrix
    products of a ``(n/B) x h`` and an ``h x B`` table instead of ``n * h`` cosines. The
    absolute error is about ``h * 1e-16``.
    """
    if n == 0:
        return np.zeros(0)
    block = max(1, math.isqrt(n - 1) + 1)
    n_blocks = -(-n // block)
    total = np.zeros((n_blocks, block))
    coarse_multipliers = start + step * block * np.arange(n_blocks, dtype=np.float64)
    fine_multipliers = step * np.arange(block, dtype=np.float64)
    for first in range(0, freqs.size, _PROFILE_PAIRS):
        some = freqs[first : first + _PROFILE_PAIRS]
        coarse = phasors(coarse_multipliers, some)
        fine = phasors(fine_multipliers, some)
        total += coarse.real @ fine.real.T
        total -= coarse.imag @ fine.imag.T
    return total.ravel()[:n]


def encode(positions: Positions, bank: FrequencyBank, dtype: np.dtype) -> np.ndarray:
    """The encoding of checked positions under ``bank``, in ``dtype`` (the shared body of every
    public function that returns encodings): float64 values within 5e-16 of the exact ones,
    rounded once to a smaller type."""
    native = dtype.newbyteorder("=")
    work_dtype = np.float32 if native == np.float32 else np.float64
    out = np.empty((positions.n, bank.d_model), dtype=work_dtype)
    encode_into(out, positions, bank.frequencies, bank.layout)
    if native.name in ("float16", "bfloat16"):
        # Round once, from float64, to the nearest value of the target type.
        out = round_to_precision(out, native.name)
    return out if out.dtype == dtype else out.astype(dtype)


#: Below this squared distance the matrix-product profile is recomputed term by term (its
#: absolute error, about h * 1e-16, would otherwise dominate the square root).
_REFINE_SQUARED_DISTANCE = 1e-4


def distance_from_dot(dot: NDArray[np.float64], offsets_at, freqs) -> NDArray[np.float64]:
    """Distances ``sqrt(2 (h - dot))``, overwriting ``dot``; where cancellation would show,
    recomputed term by term at the offsets ``offsets_at(index)``."""
    squared = dot
    squared *= -2.0
    squared += 2.0 * freqs.size
    np.maximum(squared, 0.0, out=squared)
    close = np.flatnonzero(squared < _REFINE_SQUARED_DISTANCE)
    if close.size:
        squared[close] = squared_distance_profile(offsets_at(close), freqs)
    return np.sqrt(squared, out=squared)


def squared_distance_profile(offsets: NDArray[np.float64], freqs) -> NDArray[np.float64]:
    """``|PE(k) - PE(k + offset)|^2 = 4 sum_i sin^2(w_i offset / 2)``, with no cancellation."""

    def squared_distance(chunk):
        return 4.0 * np.sum(phasors(0.5 * chunk, freqs).imag ** 2, axis=1)

    return chunked(offsets, freqs, squared_distance)


def dot_profile(offsets: NDArray[np.float64], freqs) -> NDArray[np.float64]:
    """``PE(k) . PE(k + offset) = sum_i cos(w_i offset)`` term by term."""
    return chunked(offsets, freqs, lambda chunk: phasors(chunk, freqs).real.sum(1))


def chunked(values, freqs, function) -> NDArray[np.float64]:
    """``function`` of ``values`` a chunk at a time (a chunk's table stays about 8 MB)."""
    rows = max(1, (1 << 20) // max(1, freqs.size))
    parts = [function(values[first : first + rows]) for first in range(0, values.size, rows)]
    return np.concatenate(parts) if parts else np.zeros(0)


def dirichlet(size: int, half_angle: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sin(size x) / (size sin x)``: the mean of ``exp(2ijx)`` over a centred block."""
    denominator = size * np.sin(half_angle)
    tiny = np.abs(denominator) < 1e-300  # step * w a multiple of 2 pi: every term is equal
    return np.where(tiny, 1.0, np.sin(size * half_angle) / np.where(tiny, 1.0, denominator))
