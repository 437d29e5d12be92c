"""The encoding as files to download (.npy and CSV), built on click and within the budget."""

from __future__ import annotations

import io

import numpy as np

import pe_core
from dashboard import budget
from dashboard.config import Config

#: Largest matrix offered for download as .npy (float64, 32 MB).
MAX_DOWNLOAD_ELEMENTS = 1 << 22
#: Largest matrix offered as CSV: about 24 bytes a value as text, so at most about 25 MB (a CSV of
#: the largest .npy would be 100 MB and take seconds to write).
MAX_CSV_ELEMENTS = 1 << 20
CSV_BYTES_PER_VALUE = 24


def encoding_npy(config: Config) -> bytes:
    """The full float64 encoding as an .npy file."""
    n_values = config.n_positions * config.d_model
    budget.check_request(2 * 8 * n_values, f"an .npy file of {n_values:,} values")
    values = pe_core.sinusoidal_encoding(config.n_positions, config.bank)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(values))
    return header.getvalue() + values.data  # one copy of the values, not two


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
