"""Files to download (.npy and CSV), built on click, within the budget.

Streamlit keeps a finished file in memory until the page no longer shows its button, so a file
is capped at :data:`MAX_DOWNLOAD_BYTES` (a larger one is offered as the code that builds it) and
written straight into the buffer Streamlit keeps (not as an array and a copy of it).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable

import numpy as np

import pe_core
from dashboard import budget
from dashboard.config import Config

#: Largest matrix offered for download as .npy (float64, 32 MB).
MAX_DOWNLOAD_ELEMENTS = 1 << 22
#: Largest file built for one download: the largest matrix as .npy.
MAX_DOWNLOAD_BYTES = 8 * MAX_DOWNLOAD_ELEMENTS
#: Largest matrix offered as CSV: about 24 bytes a value as text, so at most about 25 MB (a CSV of
#: the largest .npy would be 100 MB and take seconds to write).
MAX_CSV_ELEMENTS = 1 << 20
CSV_BYTES_PER_VALUE = 24
#: Values of a cos/sin cache (cos and sin each) computed at a time: 4 MiB of float64 each (a
#: call has a cost that grows with the head, not the positions: 64 positions at a head of 8,192).
BLOCK_VALUES = 1 << 19


def _npy_buffer(
    shape: tuple[int, ...], dtype: np.dtype, what: str, work_bytes: int
) -> tuple[io.BytesIO, int, int]:
    """The checks of :func:`npy_file`, then a buffer holding the .npy header:
    ``(buffer, where the data starts, its bytes)``."""
    n_bytes = math.prod(shape) * dtype.itemsize
    if n_bytes > MAX_DOWNLOAD_BYTES:
        raise pe_core.InputError(
            f"{what} would be a file of {n_bytes / 2**20:,.0f} MiB, more than the "
            f"{MAX_DOWNLOAD_BYTES // 2**20} MiB this app builds for one download"
        )
    budget.check_request(work_bytes, what)
    buffer = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer, buffer.tell(), n_bytes


def npy_file(
    shape: tuple[int, ...],
    dtype,
    parts: Callable[[], Iterable[np.ndarray]],
    what: str,
    *,
    work_bytes: int,
) -> bytes:
    """An .npy file of ``shape`` and ``dtype`` whose data, in C order, is the concatenation of
    the arrays ``parts()`` yields; refuses a file over :data:`MAX_DOWNLOAD_BYTES`, or
    ``work_bytes`` (what computing the parts takes) over the budget, before computing any.

    The parts are written in order and the buffer read back once (``BytesIO.getvalue`` hands
    over its buffer without a copy): the file is held once, not as an array and a copy.
    """
    dtype = np.dtype(dtype)
    buffer, start, n_bytes = _npy_buffer(shape, dtype, what, work_bytes)
    for part in parts():
        buffer.write(np.ascontiguousarray(part, dtype=dtype).data)
    if buffer.tell() - start != n_bytes:
        raise RuntimeError(f"{what}: the parts do not fill {shape}")  # a bug, not advice
    return buffer.getvalue()


def encoding_npy(config: Config) -> bytes:
    """The full float64 encoding as an .npy file: the numbers of
    ``pe_core.sinusoidal_encoding(L, bank)`` to the last bit (computed in one call: a block of
    positions on its own is rounded differently)."""
    n_values = config.n_positions * config.d_model
    return npy_file(
        (config.n_positions, config.d_model),
        np.float64,
        lambda: [pe_core.sinusoidal_encoding(config.n_positions, config.bank)],
        f"an .npy file of {n_values:,} values",
        work_bytes=2 * 8 * n_values,  # the array and the file
    )


def cos_sin_positions(wanted: int, rope: pe_core.RotaryEncoding) -> int:
    """The most positions, up to ``wanted``, whose float32 cos/sin cache fits one download (a
    power of two when fewer than ``wanted``); 0 when not even one does."""
    fit = MAX_DOWNLOAD_BYTES // (2 * 4 * rope.rotary_dim)
    if fit >= wanted:
        return wanted
    return 1 << (fit.bit_length() - 1) if fit else 0


def cos_sin_npy(n_positions: int, rope: pe_core.RotaryEncoding) -> bytes:
    """``np.stack(pe_core.rope_cos_sin(n_positions, rope))`` as an .npy file (float32, shape
    ``(2, n_positions, rotary_dim)``), without the stacked copy.

    Computed :data:`BLOCK_VALUES` cache values at a time (every value is computed on its own,
    so a block of positions gives the same numbers as the whole) and written in place: the
    work beside the file is a block's (23 MiB at a head of 8,192 with YaRN), not the whole
    table in float64 and its float32 copy (96 MiB beside the 32 MiB file), and it leaves no
    large blocks in the heap.
    """
    d = rope.rotary_dim
    block = max(1, BLOCK_VALUES // d)  # positions a block
    buffer, start, _ = _npy_buffer(
        (2, n_positions, d),
        np.dtype(np.float32),
        f"a cos/sin cache of {n_positions:,} positions",
        # the file, and a block's work: measured 2.9 times its float64 table (cos and sin)
        work_bytes=4 * 2 * n_positions * d + 3 * 8 * 2 * min(block, n_positions) * d,
    )
    # Room for the whole file at once (BytesIO sizes its buffer to the last byte written, zeros
    # before it): one allocation, filled in place and freed as one block. Grown block by block,
    # it would leave medium blocks in the heap, which glibc keeps (issue 40).
    n_bytes = 4 * 2 * n_positions * d
    if n_bytes:
        buffer.seek(start + n_bytes - 1)
        buffer.write(b"\0")
    row = 4 * d
    for first in range(0, n_positions, block):
        cos, sin = pe_core.rope_cos_sin(np.arange(first, min(first + block, n_positions)), rope)
        buffer.seek(start + first * row)
        buffer.write(np.ascontiguousarray(cos, dtype=np.float32).data)
        buffer.seek(start + (n_positions + first) * row)
        buffer.write(np.ascontiguousarray(sin, dtype=np.float32).data)
    return buffer.getvalue()


def encoding_csv(config: Config) -> bytes:
    """The full encoding as CSV, each value in the shortest form that reads back exactly."""
    n_values = config.n_positions * config.d_model
    if n_values > MAX_CSV_ELEMENTS:
        raise pe_core.InputError(
            f"a CSV of {n_values:,} values is more than the {MAX_CSV_ELEMENTS:,} offered here; "
            "download the .npy file instead"
        )
    budget.check_request(CSV_BYTES_PER_VALUE * 3 * n_values, f"a CSV file of {n_values:,} values")
    values = pe_core.sinusoidal_encoding(config.n_positions, config.bank)
    # repr of a float is its shortest decimal form that reads back as the same float64.
    lines = ["position," + ",".join(f"dim_{j}" for j in range(config.d_model))]
    lines += [f"{k}," + ",".join(map(repr, row)) for k, row in enumerate(values.tolist())]
    lines.append("")
    return "\n".join(lines).encode()
