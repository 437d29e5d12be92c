"""transformers' float32 arithmetic for RoPE, in NumPy, as torch computes it on an x86 CPU.

transformers computes ``inv_freq`` with float32 tensors. PyTorch casts a Python number to the
tensor's float32 and rounds each operation once, as NumPy's float32 does (checked with torch
2.13/2.14 on CPU: ``x / c``, ``x * c``, ``x - c`` and ``c / x``, which torch computes as
``reciprocal(x) * c``). The power is not correctly rounded: torch's CPU kernel for float32
``pow`` calls SLEEF's ``Sleef_powf8_u10`` (within one unit) on whole vectors and the C
library's ``powf`` on the trailing elements; :func:`power` and :func:`power_of` follow it,
calling the C library themselves for those few elements (measured bit-identical with torch
2.13.0+cpu on 4,000,000 random RoPE-range pairs and on RoPE's exponents at every length
1..300: benchmarks/torch_pow.py), where a correctly rounded power differs in about 1.8% of
the pairs.

What this emulates is the AVX2 kernel (and AVX-512's SLEEF call, steps of 32 elements, not
checked here). A torch running its DEFAULT kernel (``ATEN_CPU_CAPABILITY=default``, or a
CPU without AVX2) uses the C library's ``powf`` for every element (:func:`c_powf`; on this
AVX2 Linux machine NumPy's float32 ``power`` too: 0 of 2,000,000 random pairs differ), which
differs from :func:`sleef_powf` in 3,542 of 200,000. GPUs run CUDA's ``powf``, not modelled.

What matters more than the power is the order: the exponent ``2i / d`` is rounded to float32
*before* the power, an error that the power multiplies by ``ln(base)`` (up to five float32
units for a head of 96 and base 1,000,000: :func:`pe_core.inv_freq_float32_ulps`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys

import numpy as np
from numpy.typing import ArrayLike, NDArray

F32 = np.float32


def exponents(stop: int, dim: int) -> NDArray[np.float32]:
    """``torch.arange(0, stop, 2, dtype=torch.int64).float() / dim``."""
    return np.arange(0, stop, 2, dtype=np.int64).astype(F32) / F32(dim)


#: Elements torch's vectorized CPU loop takes per step on an AVX2 machine (two 8-lane vectors);
#: ``n % VECTOR_STEP`` trailing elements go through the scalar function instead.
VECTOR_STEP = 16


def power(base: float | np.float32, exponent: NDArray[np.float32]) -> NDArray[np.float32]:
    """``base ** exponent`` as torch computes it on an x86 CPU with AVX2: ``base`` (a Python
    number or a 0-d float32 tensor) cast to float32, a contiguous float32 ``exponent``.

    torch's ``pow`` kernel runs :func:`sleef_powf` on the first ``n - n % 16`` elements (two
    AVX2 vectors per step) and the C library's ``powf`` on the last ``n % 16``; the tail here
    calls that same ``powf`` (glibc's on Linux: within 0.82 units, not correctly rounded
    either), through :func:`c_powf`.

    Notes
    -----
    Other builds differ: the AVX-512 kernel steps by 32 elements (same SLEEF function), a
    DEFAULT-capability torch (``ATEN_CPU_CAPABILITY=default``) and non-x86 CPUs call the C
    library on every element, and CUDA has its own ``powf``.
    """
    exponent = np.asarray(exponent, dtype=F32)
    base32 = F32(base)
    vectorized = exponent.size - exponent.size % VECTOR_STEP
    result = np.empty(exponent.shape, dtype=F32)
    result[:vectorized] = sleef_powf(base32, exponent[:vectorized])
    result[vectorized:] = c_powf(base32, exponent[vectorized:])
    return result


def power_of(values: NDArray[np.float32], exponent: float) -> NDArray[np.float32]:
    """``values ** exponent`` for a contiguous float32 tensor and a Python number, as torch
    computes it on an x86 CPU with AVX2.

    torch takes 0 and 1 apart (a fill, a copy), and -1, 2, 3 and -2 as products and a
    reciprocal (0.5 and -0.5 take torch's square-root paths, which RoPE does not reach and
    this does not model: refused; torch's ``x ** 0.5`` is not even ``sqrt``); otherwise it
    runs :func:`sleef_powf` with the exponent rounded to float32 on the first ``n - n % 16``
    elements, and on the rest the C library's double ``pow`` of the float32 value and the
    exponent as a double, rounded to float32.
    """
    values = np.asarray(values, dtype=F32)
    special = {
        0.0: lambda x: np.ones_like(x),
        1.0: lambda x: x.copy(),
        -1.0: lambda x: F32(1) / x,
        2.0: lambda x: x * x,
        3.0: lambda x: x * x * x,
        -2.0: lambda x: F32(1) / (x * x),
    }
    if exponent in special:
        return special[exponent](values).astype(F32)
    if abs(exponent) == 0.5:
        raise ValueError(f"power_of does not model torch's square-root paths, got {exponent}")
    vectorized = values.size - values.size % VECTOR_STEP
    result = np.empty(values.shape, dtype=F32)
    result[:vectorized] = sleef_powf(values[:vectorized], F32(exponent))
    with np.errstate(over="ignore"):
        result[vectorized:] = c_pow(values[vectorized:], exponent).astype(F32)
    return result


@functools.cache
def c_library() -> ctypes.CDLL | None:
    """The C math library torch's scalar ``std::pow`` calls (None where it cannot be found)."""
    names = {"linux": ["libm.so.6"], "darwin": ["libSystem.dylib"]}.get(sys.platform, [])
    names += [n for n in (ctypes.util.find_library("m"), ctypes.util.find_library("c")) if n]
    for name in names:
        try:
            library = ctypes.CDLL(name)
            library.powf.argtypes, library.powf.restype = [ctypes.c_float] * 2, ctypes.c_float
            library.pow.argtypes, library.pow.restype = [ctypes.c_double] * 2, ctypes.c_double
        except (OSError, AttributeError):
            continue
        return library
    return None


def c_powf(base: np.float32, exponent: NDArray[np.float32]) -> NDArray[np.float32]:
    """The C library's ``powf(base, e)`` for each ``e`` (one call each: for the few elements of
    a vectorized loop's tail). Without a C library to call, NumPy's float32 power, which is
    usually the same ``powf`` (on an AVX2 Linux machine; not where NumPy has its own)."""
    library = c_library()
    exponent = np.asarray(exponent, dtype=F32)
    if library is None:  # pragma: no cover - every supported platform has one
        with np.errstate(all="ignore"):
            return np.power(F32(base), exponent)
    return np.array([library.powf(float(base), e) for e in exponent.tolist()], dtype=F32)


def c_pow(values: NDArray[np.float32], exponent: float) -> NDArray[np.float64]:
    """The C library's double ``pow(v, exponent)`` for each float32 ``v`` (see :func:`c_powf`)."""
    library = c_library()
    values = np.asarray(values, dtype=F32)
    if library is None:  # pragma: no cover - every supported platform has one
        with np.errstate(all="ignore"):
            return values.astype(np.float64) ** exponent
    return np.array([library.pow(v, exponent) for v in values.tolist()], dtype=np.float64)


def over(numerator: float, values: NDArray[np.float32]) -> NDArray[np.float32]:
    """``numerator / values`` as torch computes it: ``reciprocal(values) * numerator``."""
    return (F32(1) / values) * F32(numerator)


def inverse_powers(base: float, stop: int, dim: int) -> NDArray[np.float32]:
    """``1.0 / (base ** (torch.arange(0, stop, 2).float() / dim))``: plain RoPE's ``inv_freq``."""
    return over(1.0, power(base, exponents(stop, dim)))


def tensor(values: ArrayLike) -> NDArray[np.float32]:
    """``torch.tensor(values, dtype=torch.float32)``."""
    return np.asarray(values, dtype=np.float64).astype(F32)


# --- torch's float32 pow on x86 CPUs: SLEEF's xpowf (u10), FMA and all -------------------------
#
# A float32 value pair (hi, lo) is SLEEF's "double-float"; every helper below is the function of
# the same name in SLEEF's src/common/df.h (its ENABLE_FMA_SP branch, which the AVX2 and AVX-512
# builds use), and _log_kernel / _exp_kernel / sleef_powf are logkf, expkf and xpowf from
# src/libm/sleefsimdsp.c (the non-AVX-512 branch of logkf: the AVX-512 build takes the exponent
# and mantissa from vgetexp / vgetmant instead, the same values for normal inputs as far as the
# arithmetic shows, but not run here). Each float32 +, -, *, / rounds once, as NumPy's float32
# does; an FMA rounds a*b + c once, which fma reproduces exactly.

_F64 = np.float64
_I32 = np.int32


def fma(a: NDArray[np.float32], b: NDArray[np.float32], c: NDArray[np.float32]) -> NDArray:
    """``fmaf(a, b, c)``: ``a*b + c`` rounded once to float32.

    ``a*b`` is exact in float64 (two 24-bit significands); ``s = fl64(a*b + c)`` and its error
    ``e`` (TwoSum) hold the exact sum ``s + e``. Rounding ``s`` to float32 rounds the exact sum
    the same way unless ``s`` lies exactly halfway between two float32 values (a double is
    never on the far side of a float32 midpoint from the exact value it rounds): there the
    sign of ``e`` says which side the exact sum is on."""
    with np.errstate(all="ignore"):
        p = np.asarray(a, _F64) * np.asarray(b, _F64)
        c64 = np.asarray(c, _F64)
        s = np.asarray(p + c64)
        # Quick exit: a float32 midpoint in the normal range is a double whose 29 bits below
        # float32's significand are 1 followed by zeros (below the range, check them all).
        low = s.view(np.int64) & 0x1FFFFFFF
        if not np.any((low == 0x10000000) | ((np.abs(s) < 2.0**-126) & (s != 0))):
            return s.astype(F32)
        back = s - p
        e = (p - (s - back)) + (c64 - back)
        r = s.astype(F32)
        r64 = r.astype(_F64)
        beyond = np.nextafter(r, np.where(s > r64, F32(np.inf), F32(-np.inf)).astype(F32))
        halfway = (s != r64) & (s == (r64 + beyond.astype(_F64)) / 2) & (e != 0)
        # The exact sum is past the midpoint, away from r, when e points from r to s.
        past = np.sign(e) == np.sign(s - r64)
        return np.where(halfway & past, beyond, r).astype(F32)


def _split_sum(x, y):  # dfadd2_vf2_vf_vf: x + y exactly, as (sum, error)
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def _add_pair(x, y):  # dfadd_vf2_vf2_vf2 (|x| >= |y|)
    s = x[0] + y[0]
    return s, (((x[0] - s) + y[0]) + x[1]) + y[1]


def _add2_pair(x, y):  # dfadd2_vf2_vf2_vf2
    s = x[0] + y[0]
    v = s - x[0]
    t = (x[0] - (s - v)) + (y[0] - v)
    return s, t + (x[1] + y[1])


def _add2_pair_float(x, y):  # dfadd2_vf2_vf2_vf
    s = x[0] + y
    v = s - x[0]
    t = (x[0] - (s - v)) + (y - v)
    return s, t + x[1]


def _add_float_pair(x, y):  # dfadd_vf2_vf_vf2
    s = x + y[0]
    return s, ((x - s) + y[0]) + y[1]


def _normalize(t):  # dfnormalize_vf2_vf2
    s = t[0] + t[1]
    return s, (t[0] - s) + t[1]


def _mul_pair(x, y):  # dfmul_vf2_vf2_vf2
    s = x[0] * y[0]
    return s, fma(x[0], y[1], fma(x[1], y[0], fma(x[0], y[0], -s)))


def _mul_pair_float(x, y):  # dfmul_vf2_vf2_vf
    s = x[0] * y
    return s, fma(x[1], y, fma(x[0], y, -s))


def _square(x):  # dfsqu_vf2_vf2
    s = x[0] * x[0]
    return s, fma(x[0] + x[0], x[1], fma(x[0], x[0], -s))


def _divide(n, d):  # dfdiv_vf2_vf2_vf2
    t = F32(1) / d[0]
    s = n[0] * t
    u = fma(t, n[0], -s)
    v = fma(-d[1], t, fma(-d[0], t, F32(1)))
    return s, fma(s, v, fma(n[1], t, u))


def _log_kernel(d):
    """SLEEF's logkf: log(d) for d > 0 as a float32 pair."""
    tiny = d < F32(2.0**-126)
    d = np.where(tiny, d * F32(2.0**64), d).astype(F32)
    # vilogb2k of d * (1/0.75): the exponent field, so that m = d / 2**e is in [0.75, 1.5).
    e = ((d * (F32(1) / F32(0.75))).view(_I32) >> 23 & 0xFF) - 0x7F
    m = (d.view(_I32) - (e << 23)).astype(_I32).view(F32)
    e = np.where(tiny, e - 64, e)
    x = _divide(_split_sum(F32(-1), m), _split_sum(F32(1), m))
    x2 = _square(x)
    t = fma(F32(0.240320354700088500976562), x2[0], F32(0.285112679004669189453125))
    t = fma(t, x2[0], F32(0.400007992982864379882812))
    c = (F32(0.66666662693023681640625), F32(3.69183861259614332084311e-09))
    s = _mul_pair_float(
        (F32(0.69314718246459960938), F32(-1.904654323148236017e-09)), e.astype(F32)
    )
    s = _add_pair(s, (x[0] * F32(2), x[1] * F32(2)))
    return _add_pair(s, _mul_pair(_mul_pair(x2, x), _add2_pair(_mul_pair_float(x2, t), c)))


def _ldexp(x, q):
    """SLEEF's vldexp_vf_vf_vi2: x * 2**q as four multiplications by 2**(q // 4 rounded to
    16s) and one by the rest, each rounded (so a subnormal result rounds as SLEEF's does)."""
    m = q >> 31
    m = (((m + q) >> 6) - m) << 4
    q = q - (m << 2)
    m = m + 0x7F
    m = np.where(m > 0, m, 0)
    m = np.where(m > 0xFF, 0xFF, m)
    u = (m.astype(_I32) << 23).view(F32)
    x = ((x * u) * u) * u * u
    return x * ((q + 0x7F).astype(_I32) << 23).view(F32)


def _exp_kernel(d):
    """SLEEF's expkf: exp(d) of a float32 pair."""
    u = (d[0] + d[1]) * F32(1.442695040888963407359924681001892137426645954152985934135449406931)
    # _mm256_cvtps_epi32: round half to even; out of range (or NaN) gives INT_MIN.
    q = np.where(np.abs(u) < F32(2.0**31), np.rint(u), -(2.0**31)).astype(np.int64).astype(_I32)
    qf = q.astype(F32)
    s = _add2_pair_float(d, qf * F32(-0.693145751953125))
    s = _add2_pair_float(s, qf * F32(-1.428606765330187045e-06))
    s = _normalize(s)
    u = F32(0.00136324646882712841033936)
    u = fma(u, s[0], F32(0.00836596917361021041870117))
    u = fma(u, s[0], F32(0.0416710823774337768554688))
    u = fma(u, s[0], F32(0.166665524244308471679688))
    u = fma(u, s[0], F32(0.499999850988388061523438))
    t = _add_pair(s, _mul_pair_float(_square(s), u))
    t = _add_float_pair(F32(1), t)
    u = _ldexp(t[0] + t[1], q)
    return np.where(d[0] < F32(-104), F32(0), u).astype(F32)


def _with_sign_of(x, y):  # vmulsign_vf_vf_vf: x with its sign flipped where y is negative
    sign = np.asarray(y, F32).view(_I32) & np.int32(-(2**31))
    return (np.asarray(x, F32).view(_I32) ^ sign).view(F32)


def sleef_powf(x: ArrayLike, y: ArrayLike) -> NDArray[np.float32]:
    """SLEEF's ``xpowf`` (``Sleef_powf8_u10``, within 1 float32 unit), bit for bit, as torch's
    AVX2 / AVX-512 CPU kernels call it for a float32 ``pow``, special values included.

    ``x`` and ``y`` are float32 (broadcast against each other); the result is
    ``exp(log|x| * y)`` with the logarithm and the product carried as float32 pairs and every
    step rounded as the vector instructions round it, including the fused multiply-adds.
    """
    x, y = np.broadcast_arrays(np.asarray(x, F32), np.asarray(y, F32))
    x, y = np.array(x, dtype=F32, ndmin=1), np.array(y, dtype=F32, ndmin=1)
    with np.errstate(all="ignore"):
        ay = np.abs(y)
        big = ay > F32(2.0**24)
        yisint = (np.trunc(y) == y) | big
        truncated = np.where(ay < F32(2.0**31), np.trunc(y), -(2.0**31)).astype(np.int64)
        yisodd = ((truncated & 1) == 1) & yisint & (ay < F32(2.0**24))

        result = _exp_kernel(_mul_pair_float(_log_kernel(np.abs(x)), y))
        result = np.where(np.isnan(result), F32(np.inf), result).astype(F32)
        sign = np.where(
            x > 0, F32(1), np.where(yisint, np.where(yisodd, F32(-1), F32(1)), F32(np.nan))
        )
        result = (result * sign).astype(F32)

        efx = _with_sign_of(np.abs(x) - F32(1), y)
        at_inf_y = np.where(efx < 0, F32(0), np.where(efx == 0, F32(1), F32(np.inf)))
        result = np.where(np.isinf(y), at_inf_y, result)
        at_edge_x = _with_sign_of(
            np.where(np.signbit(y) ^ (x == 0), F32(0), F32(np.inf)),
            np.where(yisodd, x, F32(1)),
        )
        result = np.where(np.isinf(x) | (x == 0), at_edge_x, result)
        result = np.where(np.isnan(x) | np.isnan(y), F32(np.nan), result)
        return np.where((y == 0) | (x == 1), F32(1), result).astype(F32)
