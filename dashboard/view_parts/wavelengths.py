"""The wavelength chart of the Wavelengths view, also drawn by the Conventions lab and Lesson."""

from __future__ import annotations

import numpy as np

from dashboard import claims
from dashboard.config import Config
from dashboard.data import wavelengths_by_convention
from dashboard.figures import sinusoidal


def wavelength_marks(config: Config, current: np.ndarray) -> list[sinusoidal.Mark]:
    """The reference lines, each value from pe_core's wavelengths of the current convention
    (and 2π·base, named the paper's only at the paper's base): their labels are claims
    (:func:`dashboard.claims.wavelength_mark`)."""
    marks = [
        sinusoidal.Mark(
            config.n_positions,
            claims.wavelength_mark("length", config.n_positions, config=config, current=current),
            "#d62728",
        )
    ]
    if current.size == 0:  # no pair at all (one zero column): nothing else to mark
        return marks
    marks.insert(
        0,
        sinusoidal.Mark(
            current[0],
            claims.wavelength_mark("fastest", current[0], config=config, current=current),
            "#555555",
        ),
    )
    paper = 2 * np.pi * config.base
    if current.size > 1:
        slowest = claims.wavelength_mark("slowest", current[-1], config=config, current=current)
        marks.append(sinusoidal.Mark(current[-1], slowest, "#1f77b4"))
    if current.size <= 1 or not np.isclose(current[-1], paper, rtol=1e-12):
        marks.append(
            sinusoidal.Mark(
                paper,
                claims.wavelength_mark("two_pi_base", paper, config=config, current=current),
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


def wavelength_figure(
    config: Config,
    overlay: bool,
    small: bool = False,
    title: str | None = None,
    marks: tuple[sinusoidal.Mark, ...] | None = None,
):
    """The wavelength chart (also used, smaller, by the conventions lab). ``title`` and
    ``marks`` are claims (:func:`dashboard.claims.wavelength_title`, :func:`wavelength_marks`):
    a view that passes them has them recorded on every run, not only when the figure is
    built."""
    all_wavelengths = wavelengths_by_convention(config.d_model, config.base)
    current = all_wavelengths[config.convention]
    shown = all_wavelengths if overlay else {config.convention: current}
    shown = {name: lam for name, lam in shown.items() if lam.size}
    if title is None:
        title = "Wavelengths" if small else claims.wavelength_title(current)
    return sinusoidal.wavelength_chart(
        shown,
        current=config.convention,
        marks=wavelength_marks(config, current) if marks is None else marks,
        names=convention_names(shown),
        title=title,
        height=420 if small else 500,
    )
