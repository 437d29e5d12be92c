"""Encoding heatmap: positions x dimensions, with a textbook table for small configurations."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import encoding_image, formatting, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.data import column_info, rows_at

TABLE_MAX_ROWS, TABLE_MAX_COLUMNS = 32, 16
#: Largest number of columns of the image.
MAX_CELLS_SIDE = 1024
#: Largest number of rows: the default 2,048 positions are drawn one row each (the browser shows
#: local means where the screen has fewer pixels, and hover reads single positions).
MAX_ROWS = 2048
#: Largest number of cells in one image: one byte each, about 0.9 MB of PNG at the most.
MAX_CELLS = 1 << 21


def column_window(d_model: int, first_column: int) -> tuple[int, int]:
    """The displayed columns ``[first, stop)``: all of them, or a window of ``MAX_CELLS_SIDE``."""
    first = min(max(0, first_column), max(0, d_model - MAX_CELLS_SIDE))
    return first, min(d_model, first + MAX_CELLS_SIDE)


def row_budget(n_columns: int) -> int:
    """Rows a heatmap of ``n_columns`` columns may show."""
    return min(MAX_ROWS, MAX_CELLS // max(1, n_columns))


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


@dataclass(frozen=True)
class HeatmapData:
    """What the encoding heatmap shows: values, rows and columns, and how they were reduced."""

    values: np.ndarray  # float32, (rows, columns)
    row_first: np.ndarray  # first position of each row
    row_last: np.ndarray  # last position of each row (equal to first unless block means)
    first_column: int
    note: str


@cached
def heatmap_data(config: Config, mode: str, first_position: int, first_column: int) -> HeatmapData:
    """The encoding at display size: every row, block means, or a window of rows."""
    length, d_model = config.n_positions, config.d_model
    col_first, col_stop = column_window(d_model, first_column)
    rows = row_budget(col_stop - col_first)
    notes = []
    if col_stop - col_first < d_model:
        notes.append(f"columns {col_first:,}–{col_stop - 1:,} of {d_model:,}")
    if length <= rows:
        positions = np.arange(length)
        values = _shown_columns(config, positions, col_first, col_stop)
        last = positions
    elif mode == "blocks":
        block = math.ceil(length / rows)
        values = _block_means(config, block, col_first, col_stop)
        positions = np.arange(values.shape[0]) * block
        last = np.minimum(positions + block - 1, length - 1)
        notes.append(
            f"each row is the mean of {block:,} consecutive positions (closed form): "
            f"{values.shape[0]:,} rows for {length:,} positions"
        )
    else:
        first = min(max(0, first_position), length - rows)
        positions = first + np.arange(rows)
        values = _shown_columns(config, positions, col_first, col_stop)
        last = positions
        notes.append(f"positions {first:,}–{first + rows - 1:,} of {length:,} at full resolution")
    if values.shape[1] != col_stop - col_first:  # block means come with every column
        values = values[:, col_first:col_stop]
    return HeatmapData(
        np.ascontiguousarray(values, dtype=np.float32), positions, last, col_first, "; ".join(notes)
    )


#: Block means are computed this many rows at a time (every column of them, float64), so that
#: d_model 8192 stays within the request budget.
BLOCK_ROWS_AT_ONCE = 256


def _block_means(config: Config, block: int, first: int, stop: int) -> np.ndarray:
    """Means of blocks of ``block`` positions in columns ``first .. stop - 1``, as float32."""
    length = config.n_positions
    n_rows = math.ceil(length / block)
    out = np.empty((n_rows, stop - first), dtype=np.float32)
    for row in range(0, n_rows, BLOCK_ROWS_AT_ONCE):
        positions = np.arange(row * block, min((row + BLOCK_ROWS_AT_ONCE) * block, length))
        means = pe_core.block_mean_encoding(positions, config.bank, block)
        out[row : row + means.shape[0]] = means[:, first:stop]
    return out


def _shown_columns(config: Config, positions: np.ndarray, first: int, stop: int) -> np.ndarray:
    """The encoding of ``positions`` in columns ``first .. stop - 1`` only."""
    if stop - first == config.d_model:
        return pe_core.sinusoidal_encoding(positions, config.bank)
    return pe_core.encoding_columns(positions, config.bank, np.arange(first, stop))


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
        title=f"Positional encoding: {config.n_positions:,} positions × d_model "
        f"{config.d_model:,} ({config.convention}, base {config.base_text})",
        subtitle=data.note or "every position and every column",
        description=f"Heatmap of the encoding: {rows:,} rows (positions) by {n_columns:,} "
        "columns, blue for −1 through the colour of the page (0) to red for +1.",
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
