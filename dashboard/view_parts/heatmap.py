"""The encoding at display size, as the Heatmap view and the Conventions lab draw it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard.caching import cached
from dashboard.config import Config

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
