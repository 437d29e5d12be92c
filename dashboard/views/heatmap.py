"""Encoding heatmap: positions x dimensions, with a textbook table for small configurations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import claims, encoding_image, formatting, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.data import column_info, rows_at
from dashboard.view_parts.heatmap import MAX_CELLS_SIDE, column_window, heatmap_data, row_budget

TABLE_MAX_ROWS, TABLE_MAX_COLUMNS = 32, 16


def _rows_shown(config: Config) -> int:
    first, stop = column_window(config.d_model, 0)
    return row_budget(stop - first)


MODE = params.Choice(
    "hm_mode",
    "Rows",
    "blocks",
    options=("blocks", "window"),
    kind="segmented",
    help="Too many positions to draw one row each: average blocks of positions (exact closed "
    "form), or show a window of consecutive positions.",
)
FIRST_POSITION = params.Number(
    "hm_start",
    "First position",
    0,
    low=0,
    high=lambda config: max(0, config.n_positions - _rows_shown(config)),
)
FIRST_COLUMN = params.Number(
    "hm_col",
    "First column",
    0,
    low=0,
    high=lambda config: max(0, config.d_model - MAX_CELLS_SIDE),
    step=256,
    help=f"{MAX_CELLS_SIDE} columns are drawn at a time.",
)
PARAMS = (MODE, FIRST_POSITION, FIRST_COLUMN)


#: The paper's formula, shown as a formula for its own convention (the others' are in words).
VASWANI_LATEX = (
    r"\begin{gathered}PE(k, 2i) = \sin(k\,\omega_i), \quad PE(k, 2i+1) = \cos(k\,\omega_i)"
    r"\\ \omega_i = \mathrm{base}^{-2i/d_{\mathrm{model}}}\end{gathered}"
)


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"Every position and every column of the encoding: {config.summary}."


def render(config: Config) -> None:
    shown = heatmap_data(
        config, MODE.value(config), FIRST_POSITION.value(config), FIRST_COLUMN.value(config)
    )
    ui.explain(
        f"{claims.rows(config.n_positions, shown.row_first, shown.row_last)} "
        f"{claims.column_words(config)}. {claims.pace(config.bank, config.n_positions)} A "
        "pattern that differs from row to row is what lets a model tell positions apart (the "
        "Uniqueness view checks it). Hover a cell for its pair, sin or cos, frequency and "
        "wavelength.",
        VASWANI_LATEX if config.convention == "vaswani" else None,
    )
    _heatmap(config)
    if config.n_positions <= TABLE_MAX_ROWS and config.d_model <= TABLE_MAX_COLUMNS:
        _table(config)
    ui.matrix_downloads(config)


@ui.fragment
def _heatmap(config: Config) -> None:
    rows = _rows_shown(config)
    if config.n_positions > rows or config.d_model > MAX_CELLS_SIDE:
        left, middle, right = st.columns(3)
        if config.n_positions > rows:
            MODE.widget(config, left)
            if MODE.value(config) == "window":
                FIRST_POSITION.widget(config, middle)
        if config.d_model > MAX_CELLS_SIDE:
            FIRST_COLUMN.widget(config, right)
    arguments = (
        config,
        MODE.value(config),
        FIRST_POSITION.value(config),
        FIRST_COLUMN.value(config),
    )
    encoding_image.show(heatmap_image(*arguments), key="heatmap_main")
    ui.png_download(
        lambda: heatmap_png(*arguments),
        f"heatmap_L{config.n_positions}_d{config.d_model}.png",
        key="heatmap_main",
    )


@cached
def heatmap_image(config: Config, mode: str, first_position: int, first_column: int) -> bytes:
    """What the image heatmap draws (:func:`dashboard.encoding_image.payload`)."""
    data = heatmap_data(config, mode, first_position, first_column)
    info = column_info(config)
    columns = np.arange(data.first_column, data.first_column + data.values.shape[1])
    rows, n_columns = data.values.shape
    return encoding_image.payload(
        data.values,
        row_first=data.row_first,
        row_last=data.row_last,
        column_numbers=columns,
        column_labels=formatting.column_labels(
            columns.tolist(),
            info.pair[columns].tolist(),
            info.role[columns].tolist(),
            info.frequency[columns].tolist(),
            info.wavelength[columns].tolist(),
        ),
        title="Positional encoding: "
        f"{formatting.counted(config.n_positions, 'position')} × d_model "
        f"{config.d_model:,} ({config.convention}, base {config.base_text})",
        subtitle=data.note or "every position and every column",
        description=f"Heatmap of the encoding: {formatting.counted(rows, 'row')} (positions) by "
        f"{formatting.counted(n_columns, 'column')}, "
        "blue for −1 through the colour of the page (0) to red for +1.",
    )


def heatmap_png(config: Config, mode: str, first_position: int, first_column: int) -> bytes:
    """The shown matrix as a coloured PNG, one pixel a cell."""
    data = heatmap_data(config, mode, first_position, first_column)
    return encoding_image.png(
        encoding_image.gray_levels(data.values), palette=encoding_image.PALETTE
    )


def _table(config: Config) -> None:
    values = rows_at(config, tuple(range(config.n_positions)))
    info = column_info(config)
    header = [
        f"{j}: {kind} i={i}" if kind != "zero" else f"{j}: zero"
        for j, (i, kind) in enumerate(zip(info.pair.tolist(), info.role.tolist(), strict=True))
    ]
    frame = pd.DataFrame(values, columns=header).round(4)
    frame.index.name = "position"
    st.markdown("**The same numbers as a table** (4 decimals; the downloads keep every digit)")
    st.dataframe(frame, width="stretch")
