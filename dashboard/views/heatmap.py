"""Encoding heatmap: positions x dimensions, with a textbook table for small configurations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import compute, figures, state, ui
from dashboard.compute import Config

TABLE_MAX_ROWS, TABLE_MAX_COLUMNS = 32, 16


def render(config: Config) -> None:
    ui.explain(
        "Each row is one position k, each column one dimension of the encoding. Column pairs "
        "share a frequency ω_i: the first pairs oscillate fast (one cycle every 2π ≈ 6.3 "
        "positions), the last ones so slowly that they barely change. Every row is a different "
        "pattern, which is how the model can tell positions apart. Hover a cell for its pair, "
        "sin or cos, frequency and wavelength.",
        r"PE(k, 2i) = \sin(k\,\omega_i), \quad PE(k, 2i+1) = \cos(k\,\omega_i), \quad "
        r"\omega_i = \mathrm{base}^{-2i/d_{\mathrm{model}}}",
    )
    _heatmap(config)
    if config.n_positions <= TABLE_MAX_ROWS and config.d_model <= TABLE_MAX_COLUMNS:
        _table(config)
    ui.matrix_downloads(config)


@st.fragment
def _heatmap(config: Config) -> None:
    first_column, stop_column = compute.column_window(config.d_model, state.value("hm_col"))
    rows = compute.row_budget(stop_column - first_column)
    if config.n_positions > rows or config.d_model > compute.MAX_CELLS_SIDE:
        left, middle, right = st.columns(3)
        if config.n_positions > rows:
            with left:
                st.segmented_control(
                    "Rows",
                    options=["blocks", "window"],
                    format_func={"blocks": "Block means", "window": "Window"}.get,
                    key="hm_mode",
                    persist_state="session",
                    help=f"At most {rows:,} rows are drawn: average blocks of positions "
                    "(exact closed form) "
                    "or show a window of consecutive positions.",
                )
            if state.value("hm_mode") == "window":
                with middle:
                    state.clamp("hm_start", 0, config.n_positions - rows)
                    st.number_input(
                        "First position",
                        min_value=0,
                        max_value=config.n_positions - rows,
                        step=max(1, rows // 2),
                        key="hm_start",
                        persist_state="session",
                    )
        if config.d_model > compute.MAX_CELLS_SIDE:
            with right:
                state.clamp("hm_col", 0, config.d_model - compute.MAX_CELLS_SIDE)
                st.number_input(
                    "First column",
                    min_value=0,
                    max_value=config.d_model - compute.MAX_CELLS_SIDE,
                    step=256,
                    key="hm_col",
                    persist_state="session",
                    help=f"{compute.MAX_CELLS_SIDE} of the {config.d_model:,} columns "
                    "are drawn at a time.",
                )
    fig = compute.figure(
        _heatmap_figure,
        config,
        state.value("hm_mode"),
        state.value("hm_start"),
        state.value("hm_col"),
    )
    ui.chart(fig, "heatmap_main")
    state.sync_url()


def _heatmap_figure(config: Config, mode: str, first_position: int, first_column: int):
    data = compute.heatmap_data(config, mode, first_position, first_column)
    info = compute.column_info(config.d_model, config.base, config.convention)
    columns = np.arange(data.first_column, data.first_column + data.values.shape[1])
    return figures.encoding_heatmap(
        data.values,
        rows=figures.row_labels(data.row_first.tolist(), data.row_last.tolist()),
        row_numbers=data.row_first.tolist(),
        row_last=data.row_last.tolist(),
        columns=figures.column_labels(
            columns.tolist(),
            info.pair[columns].tolist(),
            info.role[columns].tolist(),
            info.frequency[columns].tolist(),
            info.wavelength[columns].tolist(),
        ),
        column_numbers=columns.tolist(),
        title=f"Positional encoding: {config.n_positions:,} positions × d_model {config.d_model:,} "
        f"({config.convention}, base {config.base:,g})",
        subtitle=data.note or "every position and every column",
    )


def _table(config: Config) -> None:
    values = compute.rows_at(config, tuple(range(config.n_positions)))
    info = compute.column_info(config.d_model, config.base, config.convention)
    header = [
        f"{j}: {kind} i={i}" if kind != "zero" else f"{j}: zero"
        for j, (i, kind) in enumerate(zip(info.pair.tolist(), info.role.tolist(), strict=True))
    ]
    frame = pd.DataFrame(values, columns=header).round(4)
    frame.index.name = "position"
    st.markdown("**The same numbers as a table** (4 decimals; the downloads keep every digit)")
    st.dataframe(frame, width="stretch")
