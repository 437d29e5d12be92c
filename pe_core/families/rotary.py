"""Rotary position embeddings (Su et al. 2021) as a family: q·k after rotating q at the query's
position and k at the key's, with the paper's frequencies on a head of ``d_model`` columns.

>>> import pe_core
>>> pe_core.FAMILIES["rope"].score(3, 4).round(6).tolist()
[4.0, 3.080505, 1.167306]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pe_core.bank import FrequencyBank
from pe_core.families.base import Coincidence, Family, FamilyParameter, check_in, register
from pe_core.rotary import RotaryEncoding, rope_frequencies, rope_scores

__all__ = ["ROPE", "VECTORS", "VECTORS_PARAMETER", "query_and_key"]

#: The q and k a score is drawn with: all ones, a random pair (seed 0), the slowest pair only.
VECTORS = ("ones", "random", "one pair")
#: The q and k a rotary family scores (xPos shares it).
VECTORS_PARAMETER = FamilyParameter(
    "vectors",
    "ones",
    "q and k: all ones, a random pair (seed 0), or only the slowest pair",
    check_in(VECTORS, "vectors"),
    options=VECTORS,
)


def query_and_key(rope: RotaryEncoding, vectors: str) -> tuple[np.ndarray, np.ndarray]:
    """The q and k of one of :data:`VECTORS` ("ones", "random" with seed 0, "one pair": the
    slowest rotating pair only), for a head of ``rope``."""
    if vectors == "random":
        rng = np.random.default_rng(0)
        return rng.normal(size=rope.head_dim), rng.normal(size=rope.head_dim)
    if vectors == "one pair":
        q = np.zeros(rope.head_dim)
        slowest = int(np.argmin(np.where(rope.inv_freq > 0, rope.inv_freq, np.inf)))
        q[slowest] = q[slowest + rope.rotary_dim // 2] = 1.0
        return q, q
    ones = np.ones(rope.head_dim)
    return ones, ones


def _scores(
    distances: NDArray[np.int64], bank: FrequencyBank, base: float, *, vectors: str
) -> NDArray[np.float64]:
    # A head of d_model columns (an odd one drops its unpaired column; at least one pair).
    head_dim = max(2, bank.d_model - bank.d_model % 2)
    rope = rope_frequencies(head_dim, base=base)
    q, k = query_and_key(rope, vectors)
    return rope_scores(distances, rope, q, k)


ROPE = register(
    Family(
        key="rope",
        name="RoPE",
        order=1,
        note="q·k after rotating q at the query's position and k at the key's, with the "
        "paper's frequencies base^(−2i/head_dim) (whatever the sidebar's convention) on a head "
        "of the sidebar's d_model, rounded down to an even width of at least 2. Relative by "
        "construction: only the "
        "distance enters the score; beyond the training length the slow pairs reach angles "
        "never seen.",
        citation='J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position '
        'Embedding", 2021',
        reference="Hugging Face transformers' rotate_half and default rope_type "
        "(pe_core.rope_scores)",
        parameters=(VECTORS_PARAMETER,),
        scores=_scores,
        coincidence=Coincidence(
            other="added",
            when={"vectors": "ones"},
            text="With q = k = all ones, RoPE's score is 2·Σ cos(d·ω_i) over the pairs: the "
            "added sinusoid's dot product doubled, so once scaled the two lines coincide.",
        ),
    )
)
