"""No positional encoding (NoPE) as a family: every distance scores the same.

>>> import pe_core
>>> pe_core.FAMILIES["nope"].score(3, 4).tolist()
[0.0, 0.0, 0.0]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pe_core.bank import FrequencyBank
from pe_core.families.base import Family, register

__all__ = ["NOPE"]


def _scores(distances: NDArray[np.int64], bank: FrequencyBank, base: float) -> NDArray[np.float64]:
    return np.zeros(distances.size)


NOPE = register(
    Family(
        key="nope",
        name="NoPE",
        order=4,
        note="No positional information: every distance scores the same. A causal decoder still "
        "tells order from the mask alone (a token sees only the earlier ones).",
        citation='A. Kazemnejad et al., "The Impact of Positional Encoding on Length '
        'Generalization in Transformers", NeurIPS 2023',
        reference="a decoder without a positional layer (the causal mask alone)",
        scores=_scores,
    )
)
