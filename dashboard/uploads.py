"""The Check page's limits on an uploaded or pasted table, over the one reader every road uses
(:mod:`pe_core.files`: never unpickles, never trusts a header, counts values before reading
them): .npy, .npz, .safetensors, .csv/.txt files, and pasted rows, numpy prints and lists."""

from __future__ import annotations

import numpy as np

import pe_core
from pe_core import files

#: Largest upload accepted: 20 MB, the cutoff the browser applies for ``maxUploadSize = 20``
#: (.streamlit/config.toml), so the page and this module refuse the same files.
MAX_UPLOAD_MB = 20
MAX_BYTES = MAX_UPLOAD_MB * 1_000_000
#: Largest matrix accepted, in elements.
MAX_ELEMENTS = 1 << 22
MAX_COLUMNS = 8192
#: What the page reads (the uploader takes any file, so that the others get a message here).
FORMATS = files.FORMATS
ACCEPTED = (
    ".npy, .npz, .safetensors, or .csv/.txt (one position per row, or numpy's print), "
    f"at most {MAX_UPLOAD_MB} MB"
)


class UploadError(pe_core.InputError):
    """A file that cannot be read as an encoding matrix; the message says why, for a person
    (bad input, like the core's own errors)."""


def read_table(name: str, data: bytes) -> tuple[np.ndarray, files.Written]:
    """An uploaded file's table (its one array; the only one of an .npz or .safetensors) and
    how it was written, checked as :func:`load_matrix` checks it.

    Raises
    ------
    UploadError
        For every file that is not a plain numeric matrix within the limits (its message is
        the reader's: the format, the size, pickled objects, a header that promises more than
        the file holds, text that is no number, NaN or inf, the shape).
    pe_core.files.WrongFamily
        A file of a rotary cache (cos and sin, inv_freq, vectors): the RoPE check reads it.
    """
    _check_size(data, "the file")
    suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
    # Text is named by its kind ("row 2 of the .csv file"), a binary file as "the file".
    label = f"the {suffix} file" if suffix in files.TEXT_FORMATS else "the file"
    if suffix not in files.FORMATS:  # refused by name, with what to do instead
        label = repr(name)
    try:
        arrays = files.load_arrays(
            data, name, max_unpacked_bytes=MAX_BYTES, max_values=MAX_ELEMENTS, label=label
        )
        key, matrix = files.table_array(arrays, choose="save the one table with np.save")
    except files.WrongFamily:
        raise
    except pe_core.InputError as error:
        raise UploadError(str(error)) from None
    return _check_matrix(matrix), arrays.written[key]


def load_matrix(name: str, data: bytes) -> np.ndarray:
    """Parse an uploaded file into a 2-D array of finite numbers, in its own float type.

    Raises
    ------
    UploadError
        For every file that is not a plain numeric matrix within the limits: wrong extension,
        empty, too large, pickled objects, a header that promises more data than the file holds,
        wrong number of dimensions, text in a CSV, NaN or inf.
    """
    return read_table(name, data)[0]


def read_pasted(text: str) -> tuple[np.ndarray, files.Written]:
    """Rows pasted into a text box (as a .csv file is read, or numpy's print of an array, or
    a list) and how they were written; messages speak of "the pasted text".

    Raises
    ------
    UploadError
        As :func:`load_matrix` does for a .csv file.
    """
    data = text.encode("utf-8", errors="surrogatepass")
    _check_size(data.strip(), "the pasted text")
    try:
        arrays = files.parse_text(data, what="the pasted text", max_values=MAX_ELEMENTS)
    except pe_core.InputError as error:
        raise UploadError(str(error)) from None
    return _check_matrix(arrays["array"]), arrays.written["array"]


def load_pasted(text: str) -> np.ndarray:
    """:func:`read_pasted`'s matrix."""
    return read_pasted(text)[0]


def _check_size(data: bytes, what: str) -> None:
    """Refuse empty data and data over :data:`MAX_BYTES`, before anything is read from it."""
    if not data:
        raise UploadError(f"{what} is empty")
    if len(data) > MAX_BYTES:
        raise UploadError(
            f"{what} has {len(data):,} bytes, more than the limit of {MAX_BYTES:,} "
            f"({MAX_UPLOAD_MB} MB)"
        )


def _matrix_axes(shape: tuple[int, ...]) -> tuple[int, int] | None:
    """The two axes of a matrix stored with extra axes of length 1 ((1, L, d), (L, 1, d)), or
    None when the shape is not such a matrix."""
    if len(shape) < 2:
        return None
    if len(shape) == 2:
        return tuple(shape)
    kept = [size for size in shape if size != 1]
    return tuple(kept) if len(kept) == 2 else None


def _check_matrix(matrix: np.ndarray) -> np.ndarray:
    """The uploaded values, checked, in their own float type (the precision they were stored
    in counts when the matrix is identified) with any extra axes of length 1 kept (the caller
    reports that it drops them)."""
    if matrix.dtype.kind not in "iuf":
        raise UploadError(
            f"the file holds {matrix.dtype} values; only plain numbers are accepted "
            "(pickled objects are never loaded)"
        )
    axes = _matrix_axes(matrix.shape)
    if axes is None:
        raise UploadError(
            "the matrix must be 2-D (positions x dimensions), or have only axes of length 1 "
            f"beside those two, like a (1, L, d_model) buffer; this one has shape {matrix.shape}"
        )
    if min(axes) < 2:
        raise UploadError(
            f"the matrix must have at least 2 rows and 2 columns, got shape {matrix.shape}"
        )
    if max(axes) > max(MAX_COLUMNS, MAX_ELEMENTS // 2) or axes[1] > MAX_ELEMENTS // 2:
        raise UploadError(f"the matrix of shape {matrix.shape} is too large")
    values = matrix if matrix.dtype.kind == "f" else matrix.astype(np.float64)
    finite = np.isfinite(values.reshape(axes))
    if not np.all(finite):
        bad = np.argwhere(~finite)[0]
        raise UploadError(
            f"the matrix holds NaN or inf (the first at index [{bad[0]}, {bad[1]}], counting "
            "from 0)"
        )
    return values
