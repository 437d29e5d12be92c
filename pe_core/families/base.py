"""The :class:`Family` object and the :data:`FAMILIES` registry the family modules fill."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.checks import check_base, check_choice, check_positive_int, describe
from pe_core.bank import FrequencyBank
from pe_core.errors import InputError, InputTypeError
from pe_core.sinusoidal import resolve_bank

__all__ = ["FAMILIES", "Coincidence", "Family", "FamilyParameter", "register"]


@dataclass(frozen=True)
class FamilyParameter:
    """One parameter of a family's score.

    Attributes
    ----------
    name : str
        Its keyword in :meth:`Family.score`.
    default : object
        The value used when it is not given (the one the Distance view draws).
    help : str
        What it is, for a person.
    check : callable
        ``check(value) -> value``: the value, normalised, or :class:`~pe_core.InputError` naming
        the parameter and the rule (pe_core's own checks).
    options : tuple or None
        The values it takes, for a parameter that is a choice (a widget offers these); None for
        a number or a flag.
    """

    name: str
    default: Any
    help: str
    check: Callable[[Any], Any]
    options: tuple | None = None


@dataclass(frozen=True)
class Coincidence:
    """A fact that holds between two families' curves for some parameters: ``text`` states it,
    for the parameters ``when`` of the family that carries it, against the family ``other``."""

    other: str
    when: Mapping[str, Any]
    text: str


@dataclass(frozen=True)
class Family:
    """A positional family: how it makes the attention score change with distance.

    Attributes
    ----------
    key : str
        Key in :data:`FAMILIES`.
    name : str
        Its name in legends and links.
    order : int
        Its place in :data:`FAMILIES` (and so in lists and legends).
    note : str
        What its curve is and what it means, in words true for every accepted parameter.
    citation : str
        The paper.
    reference : str
        The implementation whose numbers the core's function matches.
    parameters : tuple of FamilyParameter
        The keywords of :meth:`score`, with defaults and checks.
    scores : callable or None
        ``scores(distances, bank, base, **parameters)``: the score (or bias) at each distance
        ``d`` of ``distances = 0 .. n - 1``, the query at position ``n - 1`` and the key at
        ``n - 1 - d``; ``bank`` and ``base`` are the sinusoidal encoding the family is drawn
        with (the families that need one read them). None for a family whose score is learned
        per bucket and has no values before training (T5).
    holds_table : bool
        Its score holds an ``(n, d_model)`` table in memory, so a display limits ``n``.
    coincidence : Coincidence or None
        A fact shared with another family's curve, where it holds.
    """

    key: str
    name: str
    order: int
    note: str
    citation: str
    reference: str
    parameters: tuple[FamilyParameter, ...] = ()
    scores: Callable[..., NDArray[np.float64]] | None = field(default=None, repr=False)
    holds_table: bool = False
    coincidence: Coincidence | None = None

    @property
    def defaults(self) -> dict[str, Any]:
        """Every parameter's default, by name."""
        return {p.name: p.default for p in self.parameters}

    def checked(self, **parameters: Any) -> dict[str, Any]:
        """The parameters with defaults filled in, each checked; unknown names are refused."""
        known = {p.name: p for p in self.parameters}
        unknown = sorted(set(parameters) - set(known))
        if unknown:
            accepted = ", ".join(known) or "none"
            raise InputError(
                f"{self.key} has no parameter {', '.join(unknown)} (its parameters: {accepted})"
            )
        return {
            name: parameter.check(parameters.get(name, parameter.default))
            for name, parameter in known.items()
        }

    def score(
        self,
        n_distances: int,
        bank: FrequencyBank | int,
        *,
        base: float = 10_000.0,
        **parameters: Any,
    ) -> NDArray[np.float64]:
        """The score at the distances ``0 .. n_distances - 1`` (query at ``n_distances - 1``).

        Parameters
        ----------
        n_distances : int
            How many distances (at least 1).
        bank : FrequencyBank or int
            The sinusoidal encoding the absolute families add (``d_model``: the paper's, at
            ``base``), and whose ``d_model`` the others use.
        base : float, default 10000.0
            The base of the rotary frequencies (RoPE's families).
        **parameters
            The family's :attr:`parameters`; left out, their defaults.

        Returns
        -------
        ndarray of float64, shape (n_distances,)

        Raises
        ------
        InputError
            For a bad argument or parameter, or a family with no score (T5).
        """
        if self.scores is None:
            raise InputError(
                f"{self.key} has no score against distance before training (its bias is learned "
                "per bucket)"
            )
        n = check_positive_int(n_distances, "n_distances")
        base = check_base(base)
        if not isinstance(bank, FrequencyBank):  # d_model: the paper's encoding at this base
            bank = resolve_bank(bank, base, "vaswani")
        return self.scores(np.arange(n), bank, base, **self.checked(**parameters))


_REGISTRY: dict[str, Family] = {}
#: Every family, in :attr:`Family.order`; filled by the family modules as pe_core imports them.
FAMILIES: MappingProxyType[str, Family] = MappingProxyType(_REGISTRY)


def register(family: Family) -> Family:
    """Put ``family`` in :data:`FAMILIES` (in its order) and return it."""
    if family.key in _REGISTRY and _REGISTRY[family.key] is not family:
        raise InputError(f"a family with key {family.key!r} is already registered")
    ordered = sorted([*_REGISTRY.values(), family], key=lambda f: f.order)
    _REGISTRY.clear()
    _REGISTRY.update((f.key, f) for f in ordered)
    return family


def dot_with_last(
    rows_of: Callable[[NDArray], NDArray], n_rows: int, block: int = 256
) -> NDArray[np.float64]:
    """``row(n_rows - 1) . row(n_rows - 1 - d)`` for d = 0 .. n_rows - 1, a block of rows at a
    time (an absolute family's score, the projections taken as the identity)."""
    last = rows_of(np.array([n_rows - 1]))[0]
    dots = np.empty(n_rows)
    for first in range(0, n_rows, block):
        keys = np.arange(first, min(first + block, n_rows))
        dots[n_rows - 1 - keys] = rows_of(keys) @ last
    return dots


def check_in(choices: tuple[str, ...], name: str) -> Callable[[Any], str]:
    """A parameter check: one of ``choices``."""
    return lambda value: check_choice(value, name, choices)


def check_flag(name: str) -> Callable[[Any], bool]:
    """A parameter check: True or False."""

    def check(value: Any) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise InputTypeError(f"{name} must be True or False, got {describe(value)}")
        return bool(value)

    return check
