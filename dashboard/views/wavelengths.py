"""Wavelengths: a geometric progression from 2π to about 2π·base."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import compute, figures, state, ui
from dashboard.compute import Config


def render(config: Config) -> None:
    ui.explain(
        "Pair i turns at ω_i radians per position, so it repeats every λ_i = 2π/ω_i positions. "
        "The wavelengths grow by the same factor base^(2/d_model) from one pair to the next: a "
        "geometric progression, a straight line on a log axis. The fastest pair repeats every "
        "2π ≈ 6.28 positions; the slowest every 2π·base^(1−2/d_model) positions (the paper "
        "rounds this to 2π·base). Pairs whose wavelength is longer than the sequence never "
        "complete a cycle in it: they act like a smooth ramp that tells early from late.",
        r"\lambda_i = \frac{2\pi}{\omega_i} = 2\pi\,\mathrm{base}^{2i/d_{\mathrm{model}}}, "
        r"\qquad i = 0, \dots, \lceil d_{\mathrm{model}}/2 \rceil - 1",
    )
    all_wavelengths = compute.wavelengths_by_convention(config.d_model, config.base)
    current = all_wavelengths[config.convention]
    if current.size == 0:
        st.info(
            "With d_model = 1 the tensor2tensor convention has no sin/cos pair (one zero column)."
        )
        return
    full_cycles = int(np.sum(current <= config.n_positions))
    left, middle, right = st.columns(3)
    left.metric("Pairs", f"{current.size:,}")
    middle.metric(
        "Complete a full cycle within L",
        f"{full_cycles:,} of {current.size:,}",
        help=f"Pairs with wavelength at most L = {config.n_positions:,} positions.",
    )
    right.metric("Longest wavelength", f"{current[-1]:,.6g}", help="In positions.")
    st.toggle("Overlay the other conventions", key="overlay", persist_state="session")
    ui.chart(compute.figure(wavelength_figure, config, state.value("overlay")), "wavelengths_main")
    frequencies = 2 * np.pi / current
    table = pd.DataFrame(
        {
            "pair i": np.arange(current.size),
            "frequency ω_i (rad/position)": frequencies,
            "wavelength λ_i (positions)": current,
            f"cycles within L = {config.n_positions:,}": config.n_positions / current,
        }
    )
    st.dataframe(table, width="stretch", hide_index=True, height=320)


def wavelength_figure(config: Config, overlay: bool):
    """The wavelength chart (also used, smaller, by the conventions lab)."""
    all_wavelengths = compute.wavelengths_by_convention(config.d_model, config.base)
    shown = all_wavelengths if overlay else {config.convention: all_wavelengths[config.convention]}
    return figures.wavelength_chart(
        shown,
        current=config.convention,
        n_positions=config.n_positions,
        base=config.base,
        d_model=config.d_model,
    )
