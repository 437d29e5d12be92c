"""The wavelength chart of the Wavelengths view, also drawn by the Conventions lab and Lesson."""

from __future__ import annotations

import numpy as np

from dashboard import formatting
from dashboard.config import Config
from dashboard.data import wavelengths_by_convention
from dashboard.figures import sinusoidal
from dashboard.formatting import counted


def wavelength_marks(config: Config, current: np.ndarray) -> list[sinusoidal.Mark]:
    """The reference lines, each value from pe_core's wavelengths of the current convention
    (and the paper's statement, named as such)."""
    marks = [
        sinusoidal.Mark(
            config.n_positions, f"L = {counted(config.n_positions, 'position')}", "#d62728"
        )
    ]
    if current.size == 0:  # no pair at all (one zero column): nothing else to mark
        return marks
    marks.insert(
        0, sinusoidal.Mark(current[0], f"fastest pair: λ_0 = {current[0]:.3g} (2π)", "#555555")
    )
    paper = 2 * np.pi * config.base
    if current.size > 1:
        longest = f"slowest pair: λ_{current.size - 1} = {formatting.format_number(current[-1])}"
        if np.isclose(current[-1], paper, rtol=1e-12):
            longest += " = 2π·base, the paper's upper end"
        marks.append(sinusoidal.Mark(current[-1], longest, "#1f77b4"))
    if current.size <= 1 or not np.isclose(current[-1], paper, rtol=1e-12):
        marks.append(
            sinusoidal.Mark(
                paper,
                f'2π·base = {formatting.format_number(paper)}: the paper\'s "up to 10000·2π", '
                f"not reached by {config.convention} here",
                "#999999",
            )
        )
    return marks


def convention_names(all_wavelengths: dict[str, np.ndarray]) -> dict[str, str]:
    """Legend names that say when a convention's wavelengths equal an earlier one's."""
    names = {}
    seen: list[str] = []
    for name, lam in all_wavelengths.items():
        same = next((o for o in seen if np.array_equal(all_wavelengths[o], lam)), None)
        names[name] = f"{name} (same wavelengths as {same})" if same else name
        seen.append(name)
    return names


def wavelength_figure(config: Config, overlay: bool, small: bool = False):
    """The wavelength chart (also used, smaller, by the conventions lab)."""
    all_wavelengths = wavelengths_by_convention(config.d_model, config.base)
    shown = all_wavelengths if overlay else {config.convention: all_wavelengths[config.convention]}
    shown = {name: lam for name, lam in shown.items() if lam.size}
    return sinusoidal.wavelength_chart(
        shown,
        current=config.convention,
        marks=wavelength_marks(config, all_wavelengths[config.convention]),
        names=convention_names(shown),
        title="Wavelengths" if small else sinusoidal.WAVELENGTH_TITLE,
        height=420 if small else 500,
    )
