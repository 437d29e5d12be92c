"""Wavelengths: a geometric progression from 2π to about 2π·base."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, claims, params, ui
from dashboard.config import Config, convention_words
from dashboard.data import wavelengths_by_convention
from dashboard.formatting import counted, format_number
from dashboard.view_parts.wavelengths import wavelength_figure, wavelength_marks

OVERLAY = params.Toggle(
    "overlay",
    "Compare with the other conventions",
    False,
    help="Draw the wavelengths of the other ways libraries write the encoding beside this one; "
    "each is described under the chart.",
)
PARAMS = (OVERLAY,)


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"How many positions each frequency takes to repeat: {config.summary}."


def render(config: Config) -> None:
    all_wavelengths = wavelengths_by_convention(config.d_model, config.base)
    current = all_wavelengths[config.convention]
    convention = pe_core.CONVENTIONS[config.convention]
    ui.explain(
        f"Pair i turns at ω_i radians per position ({convention.formula}), "
        "so it repeats every λ_i = 2π/ω_i positions. "
        f"{_counter_words(current)}{_range_words(current, config.base)}Pairs whose wavelength "
        "is longer than the sequence never complete a cycle in it: they act like a smooth ramp "
        "that tells early from late.",
        r"\lambda_i = \frac{2\pi}{\omega_i}",
    )
    if current.size == 0:
        zeros = len(config.layout.zero_columns)
        st.info(
            f"With d_model = {config.d_model:,} the {config.convention} convention has no sin/cos "
            f"pair ({counted(zeros, 'zero column')}): there is no wavelength to show."
        )
        return
    # Positions 0 to L - 1 are L - 1 steps apart: a pair completes a cycle over them when its
    # wavelength is at most L - 1.
    span = config.n_positions - 1
    full_cycles = int(np.sum(current <= span))
    left, middle, right = st.columns(3)
    left.metric(
        "Pairs",
        claims.pair_count(config.layout),
        help="Columns sin(k·ω_i) and cos(k·ω_i) of one frequency; a sin column without its cos "
        "(an odd d_model) is not a pair.",
    )
    middle.metric(
        "Full cycles within L",
        f"{full_cycles:,} of {current.size:,}",
        help=f"Frequencies (a lone sin column's too) whose wavelength is at most L − 1 = "
        f"{span:,}: positions 0 to {span:,} are {counted(span, 'step')} apart.",
    )
    right.metric("Longest wavelength", format_number(current[-1]), help="In positions.")
    OVERLAY.widget(config)
    title = claims.wavelength_title(current)
    marks = tuple(wavelength_marks(config, current))
    figure = caching.figure(wavelength_figure, config, OVERLAY.value(config), False, title, marks)
    ui.chart(figure, "wavelengths_main")
    if OVERLAY.value(config):
        _conventions_words()
    table = pd.DataFrame(
        {
            "pair i": np.arange(current.size),
            "frequency ω_i (rad/position)": 2 * np.pi / current,
            "wavelength λ_i (positions)": current,
            f"cycles over positions 0 to {span:,}": span / current,
        }
    )
    st.dataframe(
        table,
        width="stretch",
        hide_index=True,
        height=ui.table_height(len(table)),
        column_config={
            # Plain decimals a student reads (0.9647, 12,345.6), not 9.6466e-1.
            "frequency ω_i (rad/position)": st.column_config.NumberColumn(format="%.6f"),
            "wavelength λ_i (positions)": st.column_config.NumberColumn(format="localized"),
            f"cycles over positions 0 to {span:,}": st.column_config.NumberColumn(
                format="localized"
            ),
        },
    )


def _conventions_words() -> None:
    """What each overlaid convention is, where the chart names it."""
    st.markdown(
        "\n".join(
            f"- **{name}**: {convention_words(name)}; used by "
            f"{', '.join(convention.libraries[:2]) or 'no library we know of'}."
            for name, convention in pe_core.CONVENTIONS.items()
        )
    )


def _counter_words(current: np.ndarray) -> str:
    """Why the wavelengths grow geometrically, with this configuration's factor."""
    if current.size < 2:
        return ""
    factor = claims.ratio_text(current[1] / current[0])
    claims.record("ratio", factor, ratio=float(current[1] / current[0]))
    return (
        "Why geometrically? Think of a binary counter: each bit flips half as often as the one "
        "before it, and together n bits give each number below 2ⁿ its own pattern. The "
        f"pairs do the same with sinusoids: here each pair turns {factor} times more slowly "
        "than the one before it (a counter's factor is 2). "
    )


def _range_words(current: np.ndarray, base: float) -> str:
    """The fastest and the slowest wavelength, against the paper's 2π·base."""
    if current.size == 0:
        return ""
    if current.size == 1:
        return (
            f"With one frequency there is one wavelength, {format_number(current[0])} positions. "
        )
    paper = 2 * np.pi * base
    papers = ', the paper\'s "up to 10000·2π"' if base == claims.PAPER_BASE else ""
    return (
        "The wavelengths form a geometric progression, a straight line on a log axis: the "
        f"fastest pair repeats every {format_number(current[0])} positions, the slowest every "
        f"{format_number(current[-1])} ({100 * current[-1] / paper:.3g}% of 2π·base = "
        f"{format_number(paper)}{papers}). "
    )
