"""Learned absolute position embeddings (BERT, GPT-2, OPT): a trained table, one row per
position, with no structure built in. What a model starts from is a random initialisation;
this module draws one, as models do, so its (absence of) structure can be seen next to the
sinusoid's.

>>> learned_position_table(1024, 768).shape
(1024, 768)

As a family of :data:`pe_core.FAMILIES`, at initialisation: p(k)·p(k − d) for a table drawn as
models draw it, N(0, std²).

>>> import pe_core
>>> pe_core.FAMILIES["learned"].score(3, 4).shape
(3,)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.checks import (
    check_d_model,
    check_positive_int,
    check_positive_real,
    check_seed,
)
from pe_core.bank import FrequencyBank
from pe_core.errors import InputError
from pe_core.families.base import Family, FamilyParameter, dot_with_last, register

__all__ = ["LEARNED", "MAX_LEARNED_ELEMENTS", "learned_position_table"]


def _check_std(std: object) -> float:
    return check_positive_real(std, "std", at_most=1e300, why="draws stay finite")


#: Most values drawn for one table: 2**26 (512 MiB of float64, about 5 s of draws). Drawing
#: costs about 80 ns a value, so the core's general limit (MAX_ELEMENTS, 2**28) took 22 s.
MAX_LEARNED_ELEMENTS = 2**26


def learned_position_table(
    n_positions: int, d_model: int, *, std: float = 0.02, seed: int = 0
) -> NDArray[np.float64]:
    """A position table as a model initialises it before training.

    Parameters
    ----------
    n_positions : int
        Rows (the model's ``max_position_embeddings``).
    d_model : int
        Columns.
    std : float, default 0.02
        Standard deviation of the normal initialisation (``initializer_range`` of BERT and
        GPT-2 in Hugging Face transformers; > 0, at most 1e300).
    seed : int, default 0
        Seed of NumPy's default generator (the values differ from any framework's; their
        distribution is the same).

    Returns
    -------
    ndarray of float64, shape (n_positions, d_model)
        Independent draws from ``N(0, std**2)``.

    Raises
    ------
    InputError
        For invalid arguments, or a table of more than :data:`MAX_LEARNED_ELEMENTS` values
        (refused before anything is drawn).

    Notes
    -----
    Two different rows are independent, so their cosine similarity is about
    ``N(0, 1/d_model)`` at every offset: nothing tells near from far until training writes it
    in. Trained tables (GPT-2's, for one) do acquire smooth, sinusoid-like columns.
    """
    n_positions = check_positive_int(n_positions, "n_positions")
    d_model = check_d_model(d_model)
    std = _check_std(std)
    seed = check_seed(seed)
    if n_positions * d_model > MAX_LEARNED_ELEMENTS:
        raise InputError(
            f"the table is limited to {MAX_LEARNED_ELEMENTS:,} values (MAX_LEARNED_ELEMENTS, "
            f"2**26): n_positions x d_model = {n_positions:,} x {d_model:,} = "
            f"{n_positions * d_model:,} is more; ask for "
            "fewer positions or a smaller d_model"
        )
    return np.random.default_rng(seed).normal(0.0, std, size=(n_positions, d_model))


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
            FamilyParameter("seed", 0, "seed of NumPy's default generator", check_seed),
        ),
        scores=_scores,
        holds_table=True,
    )
)
