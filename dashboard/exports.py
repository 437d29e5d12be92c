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
    start = buffer.tell()
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
    ``(2, n_positions, rotary_dim)``), without the stacked copy."""
    n_values = 2 * n_positions * rope.rotary_dim
    return npy_file(
        (2, n_positions, rope.rotary_dim),
        np.float32,
        lambda: pe_core.rope_cos_sin(n_positions, rope),
        f"a cos/sin cache of {n_positions:,} positions",
        # float64 table (scaled by the attention factor), its float32 copy, and the file
        work_bytes=(8 + 4 + 4) * n_values,
    )


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
