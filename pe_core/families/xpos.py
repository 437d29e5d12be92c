"""xPos (Sun et al. 2022) as a family: RoPE whose pair ``i`` also decays with the distance, the
score of a key ``d`` positions back multiplied, pair by pair, by ``zeta_i ** (d / scale_base)``.

Notes
-----
With ``h = head_dim`` and pair ``i`` of frequency ``theta_i = base**(-2i/h)`` (RoPE's), xPos
scales the query at position ``n`` by ``zeta_i ** (n / scale_base)`` and the key at ``m`` by
``zeta_i ** (-m / scale_base)`` before the rotation, with

    zeta_i = (2i/h + gamma) / (1 + gamma),    gamma = 0.4, scale_base = 512,

so the score ``sum_i zeta_i ** ((n - m) / scale_base) * <R(n theta_i) q_i, R(m theta_i) k_i>``
depends on the distance ``n - m`` alone, and its slow pairs (``zeta_i`` near 1) decay least.
Here the query is rotated at ``d`` and scaled by ``zeta ** (d / scale_base)``, the key at 0,
with :func:`pe_core.apply_rope` (pairs in halves, as the RoPE family's q and k).

References
----------
Y. Sun et al., "A Length-Extrapolatable Transformer", ACL 2023 (arXiv:2212.10554, 2022),
eq. 6-8; ``XPOS`` in microsoft/torchscale, ``torchscale/component/xpos_relative_position.py``
(``scale = (arange(0, head_dim, 2) + 0.4 * head_dim) / (1.4 * head_dim)``, ``scale_base=512``).

>>> import pe_core
>>> pe_core.FAMILIES["xpos"].score(3, 4).round(6).tolist()
[4.0, 3.076139, 1.167921]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.checks import check_positive_real
from pe_core.bank import FrequencyBank
from pe_core.families.base import Family, FamilyParameter, register
from pe_core.families.rotary import VECTORS_PARAMETER, query_and_key
from pe_core.rotary import apply_rope, rope_frequencies

__all__ = ["XPOS"]

#: Distances rotated at once (the queries of a block are ``block x head_dim`` values).
_BLOCK_VALUES = 2**18


def _check_gamma(gamma: object) -> float:
    return check_positive_real(gamma, "gamma", at_most=1e6)


def _check_scale_base(scale_base: object) -> float:
    return check_positive_real(scale_base, "scale_base", at_most=1e300)


def decay_rates(head_dim: int, gamma: float) -> NDArray[np.float64]:
    """``zeta_i = (2i/head_dim + gamma) / (1 + gamma)``, one per pair (torchscale's ``scale``)."""
    return (np.arange(0, head_dim, 2) / head_dim + gamma) / (1 + gamma)


def _scores(
    distances: NDArray[np.int64],
    bank: FrequencyBank,
    base: float,
    *,
    vectors: str,
    gamma: float,
    scale_base: float,
) -> NDArray[np.float64]:
    head_dim = max(2, bank.d_model - bank.d_model % 2)  # a head as the RoPE family's
    rope = rope_frequencies(head_dim, base=base)
    q, k = query_and_key(rope, vectors)
    zeta = np.tile(decay_rates(head_dim, gamma), 2)  # halves: pair i is columns i, i + h/2
    rotated_k = apply_rope(k[None, :], [0], rope)[0]
    scores = np.empty(distances.size)
    block = max(1, _BLOCK_VALUES // head_dim)
    for first in range(0, distances.size, block):
        d = distances[first : first + block]
        queries = q * zeta ** (d[:, None] / scale_base)
        scores[first : first + d.size] = apply_rope(queries, d, rope) @ rotated_k
    return scores


XPOS = register(
    Family(
        key="xpos",
        name="xPos",
        order=6,
        note="RoPE's q·k (the same q and k) with the term of pair i multiplied by "
        "ζ_i^(d/scale_base), ζ_i = (2i/head_dim + γ)/(1 + γ) < 1 (γ = 0.4, scale_base = 512): "
        "relative, and the fast pairs fade first, which the paper finds lets the score "
        "extrapolate beyond the training length.",
        citation='Y. Sun et al., "A Length-Extrapolatable Transformer", ACL 2023 '
        "(arXiv:2212.10554)",
        reference="XPOS in microsoft/torchscale (torchscale/component/xpos_relative_position.py)",
        parameters=(
            VECTORS_PARAMETER,
            FamilyParameter(
                "gamma", 0.4, "γ of ζ_i = (2i/d + γ)/(1 + γ) (> 0; the paper's 0.4)", _check_gamma
            ),
            FamilyParameter(
                "scale_base",
                512.0,
                "the distance over which pair i decays by ζ_i (> 0; the paper's 512)",
                _check_scale_base,
            ),
        ),
        scores=_scores,
    )
)
