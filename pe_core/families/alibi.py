"""ALiBi (attention with linear biases): no encoding at all, a penalty on the score that grows
linearly with the distance between query and key, with one slope per head.

The slopes are those of the paper's reference code (``get_slopes`` in Press et al.'s
``attention_with_linear_biases``), in float64: for ``n`` heads, a power of two, the geometric
sequence ``2**(-8/n), 2**(-16/n), ..., 2**-8``; for other head counts, the slopes of the power
of two below, followed by every other slope of the power of two above.

>>> alibi_slopes(8)
array([0.5       , 0.25      , 0.125     , 0.0625    , 0.03125   ,
       0.015625  , 0.0078125 , 0.00390625])

As a family of :data:`pe_core.FAMILIES`: no encoding, the bias −m·d on the score of a key d
positions back.

>>> import pe_core
>>> pe_core.FAMILIES["alibi"].score(3, 8, slope=0.5).tolist()
[0.0, -0.5, -1.0]
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import (
    as_integer_array,
    as_real_array,
    check_positive_int,
    check_positive_real,
    check_size,
    describe,
)
from pe_core.bank import FrequencyBank
from pe_core.errors import InputError, InputTypeError
from pe_core.families.base import Family, FamilyParameter, register

__all__ = ["ALIBI", "MAX_HEADS", "alibi_bias", "alibi_slopes"]

#: More heads than any model has; the slopes of a larger count underflow towards 2**-8 steps
#: of no meaning.
MAX_HEADS = 4096


def _slopes_power_of_2(n: int) -> list[float]:
    # Verbatim arithmetic of the reference code: start = ratio, slope_i = start * ratio**i, in
    # Python floats (libm's pow), so the values are the reference's to the last bit.
    start = 2 ** (-(2 ** -(math.log2(n) - 3)))
    ratio = start
    return [start * ratio**i for i in range(n)]


def _slopes(n: int) -> list[float]:
    if math.log2(n).is_integer():
        return _slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        _slopes_power_of_2(closest_power_of_2)
        + _slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def alibi_slopes(n_heads: int) -> NDArray[np.float64]:
    """The ALiBi slope of every head.

    Parameters
    ----------
    n_heads : int
        Number of attention heads (1 to :data:`MAX_HEADS`).

    Returns
    -------
    ndarray of float64, shape (n_heads,)
        Head ``h``'s slope ``m_h``; its bias on a key ``d`` positions away is ``-m_h * d``.

    Raises
    ------
    TypeError, ValueError
        If ``n_heads`` is not an integer in ``[1, MAX_HEADS]``.

    Notes
    -----
    For ``n`` a power of two, ``m_h = 2**(-8 (h + 1) / n)``. Otherwise, with ``p`` the largest
    power of two below ``n``, the ``p`` slopes of ``p`` heads followed by the first ``n - p``
    of the slopes of ``2p`` heads at even indices (those that fall between the others). Hugging
    Face's BLOOM (``build_alibi_tensor``) computes the same rule in float32; MPT
    (``gen_slopes``) orders non-powers of two differently.

    References
    ----------
    O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention with Linear Biases
    Enables Input Length Extrapolation", ICLR 2022; ``get_slopes`` in
    github.com/ofirpress/attention_with_linear_biases.

    Examples
    --------
    >>> alibi_slopes(12)[8:]
    array([0.70710678, 0.35355339, 0.1767767 , 0.08838835])
    """
    n_heads = check_positive_int(n_heads, "n_heads")
    if n_heads > MAX_HEADS:
        raise InputError(f"n_heads must be at most {MAX_HEADS}, got {n_heads}")
    return np.array(_slopes(n_heads))


def alibi_bias(
    offsets: ArrayLike, slopes: ArrayLike, *, causal: bool = True
) -> NDArray[np.float64]:
    """The bias ALiBi adds to the attention score, against the offset, for each head.

    Parameters
    ----------
    offsets : array_like of int, 1-D
        Query position minus key position (positive: the key is earlier).
    slopes : array_like, 1-D
        One slope per head (>= 0), as :func:`alibi_slopes` gives.
    causal : bool, default True
        A decoder's mask: a key after the query (negative offset) is not attended, its bias is
        ``-inf``. With False, the symmetric variant ``-m |offset|`` of encoders.

    Returns
    -------
    ndarray of float64, shape (n_heads, n_offsets)
        ``-m_h * |offset|`` (``-inf`` where masked).

    Notes
    -----
    The reference code adds ``m_h * (key - query)``, and BLOOM adds ``m_h * key`` to every
    query's row; the two differ from ``-m_h |offset|`` by a constant per query, which the
    softmax ignores, so all three give the same attention.
    """
    offsets = as_integer_array(offsets, "offsets")
    slopes = as_real_array(slopes, "slopes", ndim=1)
    if np.any(slopes < 0):
        raise InputError(
            "slopes must be >= 0 (a penalty that grows with distance), "
            f"got {describe(slopes.tolist())}"
        )
    if not isinstance(causal, (bool, np.bool_)):
        raise InputTypeError(f"causal must be True or False, got {causal!r}")
    check_size(slopes.size * offsets.size, "the bias")
    bias = 0.0 - slopes[:, None] * np.abs(offsets)[None, :].astype(np.float64)  # 0, not -0
    if causal:
        bias[:, offsets < 0] = -np.inf
    return bias


def _scores(
    distances: NDArray[np.int64], bank: FrequencyBank, base: float, *, slope: float
) -> NDArray[np.float64]:
    return alibi_bias(distances, [slope])[0]


ALIBI = register(
    Family(
        key="alibi",
        name="ALiBi",
        order=2,
        note="The bias −m·δ (the same line for every head once scaled; the slopes m are below). "
        "Relative, monotone, no oscillation: far tokens are always penalised, which is why it "
        "extrapolates gracefully and cannot express 'exactly 5 tokens back'.",
        citation='O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention with '
        'Linear Biases Enables Input Length Extrapolation", ICLR 2022',
        reference="get_slopes in github.com/ofirpress/attention_with_linear_biases "
        "(pe_core.alibi_slopes, pe_core.alibi_bias)",
        parameters=(
            FamilyParameter(
                "slope",
                float(alibi_slopes(1)[0]),
                "the head's slope m (> 0); the default 2**-8 is a one-head model's",
                lambda value: check_positive_real(value, "slope", at_most=1e300),
            ),
        ),
        scores=_scores,
    )
)
