"""Learned absolute position tables (BERT, GPT-2) as a family, at initialisation:
p(k)·p(k − d) for a table drawn as models draw it, N(0, std²).

>>> import pe_core
>>> pe_core.FAMILIES["learned"].score(3, 4).shape
(3,)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pe_core.bank import FrequencyBank
from pe_core.families.base import Family, FamilyParameter, dot_with_last, register
from pe_core.learned import _check_seed, _check_std, learned_position_table

__all__ = ["LEARNED"]


def _scores(
    distances: NDArray[np.int64], bank: FrequencyBank, base: float, *, std: float, seed: int
) -> NDArray[np.float64]:
    table = learned_position_table(distances.size, bank.d_model, std=std, seed=seed)
    return dot_with_last(lambda rows: table[rows], distances.size)


LEARNED = register(
    Family(
        key="learned",
        name="learned (at initialisation)",
        order=3,
        note="p(k)·p(k − δ) for a table drawn as models initialise it (N(0, 0.02²), seed 0). "
        "Before training, nothing tells near from far; training writes whatever helps, and no "
        "position beyond the table exists.",
        citation='J. Devlin et al., "BERT", NAACL 2019; A. Radford et al., "Language Models '
        'are Unsupervised Multitask Learners" (GPT-2), 2019',
        reference="initializer_range 0.02 of BERT and GPT-2 in Hugging Face transformers "
        "(pe_core.learned_position_table; NumPy's draws, the same distribution)",
        parameters=(
            FamilyParameter("std", 0.02, "standard deviation of the draws", _check_std),
            FamilyParameter("seed", 0, "seed of NumPy's default generator", _check_seed),
        ),
        scores=_scores,
        holds_table=True,
    )
)
