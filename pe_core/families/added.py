"""The added sinusoid (Vaswani et al. 2017) as a family: PE(k)·PE(k − d), the encoding added
to the token's vector, read back by a dot product.

>>> import pe_core
>>> pe_core.FAMILIES["added"].score(3, 4).round(6).tolist()
[2.0, 1.540252, 0.583653]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pe_core.bank import FrequencyBank
from pe_core.families.base import Family, dot_with_last, register
from pe_core.sinusoidal import sinusoidal_encoding

__all__ = ["ADDED"]


def _scores(distances: NDArray[np.int64], bank: FrequencyBank, base: float) -> NDArray[np.float64]:
    return dot_with_last(lambda rows: sinusoidal_encoding(rows, bank), distances.size)


ADDED = register(
    Family(
        key="added",
        name="added sinusoid",
        order=0,
        note="PE(k)·PE(k − δ) with the sidebar's encoding, the query at the largest distance "
        "shown (as if the query and key projections were the identity). Absolute: the "
        "position is in the token's vector, and every layer can read it; the dot product of "
        "two positions depends only on their distance when d_model is even.",
        citation='A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017',
        reference="pe_core.sinusoidal_encoding (the paper's formula, exact in float64; "
        "conventions of tensor2tensor, fairseq, MAE, diffusers)",
        scores=_scores,
    )
)
