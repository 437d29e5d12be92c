"""The shared parameters every view reads: positions, d_model, base and convention."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pe_core
from dashboard.formatting import counted, number_text


@dataclass(frozen=True)
class Config:
    """The sidebar's parameters (small and hashable: the key of every cached computation)."""

    n_positions: int
    d_model: int
    base: float
    convention: str

    @property
    def base_text(self) -> str:
        """The base with every digit, as prose reads it: 10,000, 1,000,001.5."""
        return number_text(self.base, grouping=True)

    @property
    def base_digits(self) -> str:
        """The base with every digit, as a formula, code or a file name has it: 10000."""
        return number_text(self.base)

    @property
    def bank(self) -> pe_core.FrequencyBank:
        """The frequencies and column layout these parameters describe."""
        return _bank(self.convention, self.d_model, self.base)

    @property
    def layout(self) -> pe_core.ColumnLayout:
        """Where the sin, cos and zero columns are."""
        return self.bank.layout

    @property
    def summary(self) -> str:
        """The parameters as a page's subtitle says them (the convention in plain words)."""
        return (
            f"{counted(self.n_positions, 'position')}, d_model {self.d_model:,}, "
            f"base {self.base_text}, {convention_words(self.convention)}"
        )


def convention_words(name: str) -> str:
    """How a convention lays out its columns and spaces its frequencies, in words a student
    reads without knowing the conventions' names (the name follows, for the sidebar's list)."""
    convention = pe_core.CONVENTIONS[name]
    if convention.layout == "interleaved":
        layout = "sin and cos interleaved"
    else:
        first, then = ("sines", "cosines") if convention.first == "sin" else ("cosines", "sines")
        layout = f"all {first}, then all {then}"
    if convention.spacing == "paper":
        frequencies = "the paper's frequencies"
    elif convention.shift == 1:
        frequencies = "frequencies from 1 down to exactly 1/base"
    else:
        frequencies = "frequencies base^(−i/h)"
    if name == "vaswani" and convention.spacing == "paper":
        return f"{layout}, as in the paper"
    return f"{layout}, {frequencies} (the {name} convention)"


@functools.lru_cache(maxsize=64)
def _bank(convention: str, d_model: int, base: float) -> pe_core.FrequencyBank:
    """One bank per (convention, d_model, base), kept: a view reads ``config.bank`` ten to twenty
    times a run, and building it calls ``math.pow`` once per pair (15 ms at d_model 8,192). A
    bank is immutable (its frequencies are read-only); 64 of them hold at most 2 MiB."""
    return pe_core.CONVENTIONS[convention].bank(d_model, base)
