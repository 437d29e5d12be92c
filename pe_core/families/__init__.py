"""Positional families as data: what each family is (its name, its parameters, its score
against the distance between query and key, its citation), one :class:`Family` per module of
this package, collected in :data:`FAMILIES`.

A family module builds its :class:`Family` from the core's own functions (through the wings'
fronts, :mod:`pe_core.sinusoidal` and :mod:`pe_core.rotary`; a family that is not a bank, such
as ALiBi, T5's buckets or a learned table, holds its own functions too) and passes it to
:func:`register`; its import line below puts it in :data:`FAMILIES` (ordered by
:attr:`Family.order`). What a family knows lives on it, so no other module branches on a
family's name. A new family is one module here plus its import line.

>>> import pe_core
>>> list(pe_core.FAMILIES)[:5]
['added', 'rope', 'alibi', 'learned', 'nope']
>>> pe_core.FAMILIES["alibi"].score(4, 8).tolist()
[0.0, -0.00390625, -0.0078125, -0.01171875]
"""

from pe_core.families.base import FAMILIES, Coincidence, Family, FamilyParameter, register

# One line a family: importing its module registers it.
from pe_core.families import added, alibi, learned, nope, rotary, t5, xpos  # noqa: F401  # isort: skip

# The functions of the families that are not a bank (ALiBi's slopes, T5's buckets, a learned
# table), beside their Family.
from pe_core.families.alibi import alibi_bias, alibi_slopes  # isort: skip
from pe_core.families.learned import MAX_LEARNED_ELEMENTS, learned_position_table  # isort: skip
from pe_core.families.t5 import t5_relative_buckets  # isort: skip

__all__ = [
    "FAMILIES",
    "MAX_LEARNED_ELEMENTS",
    "Coincidence",
    "Family",
    "FamilyParameter",
    "alibi_bias",
    "alibi_slopes",
    "learned_position_table",
    "register",
    "t5_relative_buckets",
]
