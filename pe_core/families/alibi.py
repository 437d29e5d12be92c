"""ALiBi (Press et al. 2022) as a family: no encoding, the bias −m·d on the score of a key d
positions back.

>>> import pe_core
>>> pe_core.FAMILIES["alibi"].score(3, 8, slope=0.5).tolist()
[0.0, -0.5, -1.0]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pe_core._validation import check_real
from pe_core.alibi import alibi_bias, alibi_slopes
from pe_core.bank import FrequencyBank
from pe_core.errors import InputError
from pe_core.families.base import Family, FamilyParameter, register

__all__ = ["ALIBI"]


def _check_slope(slope: object) -> float:
    slope = check_real(slope, "slope")
    if not 0 < slope <= 1e300:
        raise InputError(f"slope must be > 0 and at most 1e300, got {slope}")
    return slope


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
                _check_slope,
            ),
        ),
        scores=_scores,
    )
)
