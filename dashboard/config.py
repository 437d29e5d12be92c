"""The shared parameters every view reads: positions, d_model, base and convention."""

from __future__ import annotations

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
        return pe_core.CONVENTIONS[self.convention].bank(self.d_model, self.base)

    @property
    def layout(self) -> pe_core.ColumnLayout:
        """Where the sin, cos and zero columns are."""
        return self.bank.layout

    @property
    def summary(self) -> str:
        """The parameters as a page's subtitle says them."""
        return (
            f"{counted(self.n_positions, 'position')}, d_model {self.d_model:,}, "
            f"base {self.base_text}, {self.convention} convention"
        )
