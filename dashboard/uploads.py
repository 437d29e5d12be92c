"""Safe parsing of uploaded encoding matrices (.npy or .csv): never unpickles, never trusts a
header, refuses anything larger than the limits before reading it."""

from __future__ import annotations

import ast
import io

import numpy as np

#: Largest upload accepted (the server's own limit, .streamlit/config.toml, is 20 MB).
MAX_BYTES = 20 * 1024 * 1024
#: Largest matrix accepted, in elements.
MAX_ELEMENTS = 1 << 22
MAX_COLUMNS = 8192


class UploadError(ValueError):
    """A file that cannot be read as an encoding matrix; the message says why, for a person."""


def load_matrix(name: str, data: bytes) -> np.ndarray:
    """Parse an uploaded .npy or .csv file into a 2-D float64 array of finite numbers.

    Raises
    ------
    UploadError
        For every file that is not a plain numeric matrix within the limits: wrong extension,
        empty, too large, pickled objects, a header that promises more data than the file holds,
        wrong number of dimensions, text in a CSV, NaN or inf.
    """
    if not data:
        raise UploadError("the file is empty")
    if len(data) > MAX_BYTES:
        raise UploadError(f"the file has {len(data):,} bytes, more than the limit of {MAX_BYTES:,}")
    lower = name.lower()
    if lower.endswith(".npy"):
        matrix = _load_npy(data)
    elif lower.endswith(".csv") or lower.endswith(".txt"):
        matrix = _load_csv(data)
    else:
        raise UploadError(f"'{name}' is neither a .npy nor a .csv file")
    return _check_matrix(matrix)


def _load_npy(data: bytes) -> np.ndarray:
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
    except ValueError:
        raise UploadError("this is not a NumPy .npy file (its first bytes are wrong)") from None
    try:
        header = stream.read(
            int.from_bytes(stream.read(2 if version == (1, 0) else 4), "little")
        ).decode("latin1")
        fields = ast.literal_eval(header)  # a dict of literals; never evaluates code
        shape, fortran, descr = fields["shape"], fields["fortran_order"], fields["descr"]
        dtype = np.dtype(descr)
    except Exception:  # any malformed header: the message below is the whole story
        raise UploadError("the .npy header is malformed") from None
    if dtype.hasobject or dtype.kind not in "iuf" or not isinstance(shape, tuple):
        raise UploadError(
            f"the .npy file holds {dtype} values; only plain numbers are accepted "
            "(pickled objects are never loaded)"
        )
    if len(shape) != 2:
        raise UploadError(
            f"the matrix must be 2-D (positions x dimensions), this one has shape {shape}"
        )
    n_elements = int(np.prod(shape, dtype=object))
    if n_elements > MAX_ELEMENTS:
        raise UploadError(
            f"the matrix has {n_elements:,} values, more than the limit of {MAX_ELEMENTS:,}"
        )
    expected = stream.tell() + n_elements * dtype.itemsize
    if len(data) != expected:
        raise UploadError(
            f"the header promises {shape} {dtype} values ({expected:,} bytes) but the file has "
            f"{len(data):,} bytes"
        )
    del fortran
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError) as error:
        raise UploadError(f"the .npy file could not be read: {error}") from None


def _load_csv(data: bytes) -> np.ndarray:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UploadError("the .csv file is not UTF-8 text") from None
    if "\x00" in text:
        raise UploadError("the .csv file contains binary data")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise UploadError("the .csv file has no rows")
    delimiter = "," if "," in lines[0] else None
    first = lines[0].split(delimiter)
    skip_header = not _all_numbers(first)
    rows = lines[1:] if skip_header else lines
    if not rows:
        raise UploadError("the .csv file has a header but no rows of numbers")
    if len(rows) * len(first) > MAX_ELEMENTS:
        raise UploadError(f"the .csv file has more than {MAX_ELEMENTS:,} values")
    try:
        matrix = np.loadtxt(rows, delimiter=delimiter, dtype=np.float64, ndmin=2)
    except ValueError as error:
        raise UploadError(f"the .csv file holds something that is not a number ({error})") from None
    # Our own CSV download starts with a "position" column: drop it.
    if skip_header and first[0].strip().lower() == "position" and matrix.shape[1] > 1:
        matrix = matrix[:, 1:]
    return matrix


def _all_numbers(fields: list[str]) -> bool:
    try:
        [float(f) for f in fields]
    except ValueError:
        return False
    return True


def _check_matrix(matrix: np.ndarray) -> np.ndarray:
    if matrix.ndim != 2:
        raise UploadError(f"the matrix must be 2-D, got shape {matrix.shape}")
    if min(matrix.shape) < 2:
        raise UploadError(
            f"the matrix must have at least 2 rows and 2 columns, got shape {matrix.shape}"
        )
    if (
        max(matrix.shape) > max(MAX_COLUMNS, MAX_ELEMENTS // 2)
        or matrix.shape[1] > MAX_ELEMENTS // 2
    ):
        raise UploadError(f"the matrix of shape {matrix.shape} is too large")
    values = matrix.astype(np.float64)
    if not np.all(np.isfinite(values)):
        bad = np.argwhere(~np.isfinite(values))[0]
        raise UploadError(f"the matrix holds NaN or inf (first at row {bad[0]}, column {bad[1]})")
    return values
