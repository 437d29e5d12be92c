"""Safe parsing of uploaded encoding matrices (.npy or .csv): never unpickles, never trusts a
header, refuses anything larger than the limits before reading it."""

from __future__ import annotations

import ast
import io
import re
import unicodedata

import numpy as np

import pe_core

#: Largest upload accepted: 20 MB, the cutoff the browser applies for ``maxUploadSize = 20``
#: (.streamlit/config.toml), so the page and this module refuse the same files.
MAX_UPLOAD_MB = 20
MAX_BYTES = MAX_UPLOAD_MB * 1_000_000
#: Largest matrix accepted, in elements.
MAX_ELEMENTS = 1 << 22
MAX_COLUMNS = 8192
#: What the page reads (the uploader takes any file, so that the others get a message here).
FORMATS = (".npy", ".csv", ".txt")
ACCEPTED = f".npy or .csv/.txt, one position per row, at most {MAX_UPLOAD_MB} MB"
#: Formats people try, and what to do instead. Never opened here: an .npz or .zip may be a bomb
#: (Check my RoPE reads .npz through pe_core, its unpacked size checked first).
_OTHER_FORMATS = {
    ".npz": "a NumPy archive of several arrays (np.savez), which the sinusoidal check does not "
    "open (the RoPE check reads a cos/sin .npz): save the one table with "
    'np.save("table.npy", table)',
    ".zip": "an archive, which this page does not open: upload the table inside it",
    ".gz": "a compressed file, which this page does not open: upload the table uncompressed",
    ".pt": "a PyTorch file (pickled), which this page never loads: save the tensor with "
    'np.save("table.npy", tensor.cpu().numpy())',
    ".pth": "a PyTorch file (pickled), which this page never loads: save the tensor with "
    'np.save("table.npy", tensor.cpu().numpy())',
    ".pkl": "a pickle, which this page never loads: save the table with np.save",
    ".safetensors": "a safetensors file, which the sinusoidal check does not open (the RoPE "
    "check reads a cos/sin .safetensors): save the one table with np.save",
    ".json": "JSON: save the table with np.save, or as .csv",
    ".xlsx": "a spreadsheet: save the sheet as .csv",
}


class UploadError(pe_core.InputError):
    """A file that cannot be read as an encoding matrix; the message says why, for a person
    (bad input, like the core's own errors)."""


def load_matrix(name: str, data: bytes) -> np.ndarray:
    """Parse an uploaded .npy or .csv file into a 2-D float64 array of finite numbers.

    Raises
    ------
    UploadError
        For every file that is not a plain numeric matrix within the limits: wrong extension,
        empty, too large, pickled objects, a header that promises more data than the file holds,
        wrong number of dimensions, text in a CSV, NaN or inf.
    """
    _check_size(data, "the file")
    lower = name.lower()
    if lower.endswith(".npy"):
        matrix = _load_npy(data)
    elif lower.endswith(".csv") or lower.endswith(".txt"):
        matrix = _load_csv(data)
    else:
        suffix = "." + lower.rsplit(".", 1)[-1] if "." in lower else ""
        what = _OTHER_FORMATS.get(suffix, "a format this page does not read")
        raise UploadError(f"'{name}' is {what}; the page reads {ACCEPTED}")
    return _check_matrix(matrix)


def load_pasted(text: str) -> np.ndarray:
    """Parse rows pasted into a text box, like a .csv file; messages speak of "the pasted
    text". Classic Mac line ends (a lone carriage return) end a row, as copying from some
    programs gives them.

    Raises
    ------
    UploadError
        As :func:`load_matrix` does for a .csv file.
    """
    data = text.encode("utf-8", errors="surrogatepass")
    _check_size(data.strip(), "the pasted text")
    return _check_matrix(_load_csv(data, what="the pasted text"))


def _check_size(data: bytes, what: str) -> None:
    """Refuse empty data and data over :data:`MAX_BYTES`, before anything is read from it."""
    if not data:
        raise UploadError(f"{what} is empty")
    if len(data) > MAX_BYTES:
        raise UploadError(
            f"{what} has {len(data):,} bytes, more than the limit of {MAX_BYTES:,} "
            f"({MAX_UPLOAD_MB} MB)"
        )


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
    if isinstance(shape, tuple) and not all(
        isinstance(size, int) and not isinstance(size, bool) and size >= 0 for size in shape
    ):
        raise UploadError(
            f"the .npy header gives the shape {shape!r}: every length must be a whole number "
            "≥ 0 (the file was not written by np.save)"
        )
    if dtype.hasobject or dtype.kind not in "iuf" or not isinstance(shape, tuple):
        raise UploadError(
            f"the .npy file holds {dtype} values; only plain numbers are accepted "
            "(pickled objects are never loaded)"
        )
    if _matrix_axes(shape) is None:
        raise UploadError(
            f"the matrix must be 2-D (positions x dimensions), or have only axes of length 1 "
            f"beside those two, like a (1, L, d_model) buffer; this one has shape {shape}"
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


#: Bytes a numeric CSV may hold after its header line: digits, signs, points, exponents, the
#: letters of nan and inf, separators and line ends. Anything else is refused before parsing.
_NUMERIC_BYTES = np.zeros(256, dtype=bool)
_NUMERIC_BYTES[np.frombuffer(b"0123456789+-.eEnaifNAIF,;\t \r\n", dtype=np.uint8)] = True
#: Bytes that separate values (a line end does too).
_SEPARATOR_BYTES = np.zeros(256, dtype=bool)
_SEPARATOR_BYTES[np.frombuffer(b",;\t \r\n", dtype=np.uint8)] = True
#: Every separator to a space, for the parser (which splits at any whitespace).
_TO_SPACES = bytes(32 if chr(b) in ",;\t\r" else b for b in range(256))
_CHUNK_BYTES = 1 << 20
_NEWLINE, _COMMA = ord("\n"), ord(",")


def _load_csv(data: bytes, what: str = "the .csv file") -> np.ndarray:
    """A numeric CSV (comma or whitespace separated, an optional header line) as a matrix;
    ``what`` names the source in messages.

    The values are counted on the raw bytes before anything is converted, so a file with too
    many values is refused at the cost of a few small arrays; then one pass parses the numbers
    straight into the result (no Python string per value).
    """
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark
        data = data[3:]
    if b"\r" in data and b"\n" not in data:  # classic Mac line ends
        data = data.replace(b"\r", b"\n")
    first_end = data.find(b"\n")
    first_end = len(data) if first_end < 0 else first_end
    try:
        first_line = data[: min(first_end, 4096)].decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError(f"{what} is not UTF-8 text") from None
    if b"\x00" in data:
        raise UploadError(f"{what} contains binary data")
    comma = b"," in data
    first_field = re.split(r"[,;\s]+", first_line.strip(), maxsplit=1)[0]
    header = _is_header(first_line, first_field)
    body = np.frombuffer(data, dtype=np.uint8)[first_end + 1 if header else 0 :]
    columns = _row_lengths(body, comma, what, first_row=2 if header else 1)
    if columns is None:
        raise UploadError(
            f"{what} has a header but no rows of numbers" if header else f"{what} has no rows"
        )
    n_rows, n_columns = columns
    if header and n_rows < 2:
        raise UploadError(
            f"{what} has {_count(n_rows, 'row')} of numbers after its first line, which was read "
            f"as a header because {first_field!r} is not a number; a table needs at least 2 rows"
        )
    text = body.tobytes().translate(_TO_SPACES)
    try:
        values = np.fromstring(text, dtype=np.float64, sep=" ")
    except ValueError:
        raise UploadError(
            f"{what} holds something that is not a number (for example 1.2.3 or e5)"
        ) from None
    if values.size != n_rows * n_columns:
        raise UploadError(f"{what} holds something that is not a number (for example 1.2.3 or e5)")
    matrix = values.reshape(n_rows, n_columns)
    # Our own CSV download starts with a "position" column: drop it.
    if header and first_field.lower() == "position" and n_columns > 1:
        matrix = matrix[:, 1:]
    return matrix


def _row_lengths(
    body: np.ndarray, comma: bool, what: str, first_row: int = 1
) -> tuple[int, int] | None:
    """``(rows, columns)`` of the numbers in ``body`` (raw bytes), counted a chunk at a time;
    None when it holds no number. Refuses, naming the row (``body``'s first line is row
    ``first_row`` of ``what``), a character that cannot be part of a number, a file of more
    than :data:`MAX_ELEMENTS` values, rows of different lengths and (with commas) empty
    fields."""
    tokens_per_line: list[np.ndarray] = []
    commas_per_line: list[np.ndarray] = []
    total = 0
    line = 0  # lines started before the chunk
    carry_tokens = carry_commas = 0  # counts of the line in progress at the end of a chunk
    previous_separator = True
    for first in range(0, body.size, _CHUNK_BYTES):
        chunk = body[first : first + _CHUNK_BYTES]
        allowed = _NUMERIC_BYTES[chunk]
        if not allowed.all():
            position = int(np.argmin(allowed))
            row = line + int(np.count_nonzero(chunk[:position] == _NEWLINE)) + first_row
            raise UploadError(
                f"row {row:,} of {what} holds something that is not a number "
                f"({_character_at(body, first + position)})"
            )
        separator = _SEPARATOR_BYTES[chunk]
        starts = ~separator
        starts[1:] &= separator[:-1]
        starts[0] &= previous_separator
        previous_separator = bool(separator[-1])
        total += int(np.count_nonzero(starts))
        if total > MAX_ELEMENTS:
            raise UploadError(f"{what} has more than {MAX_ELEMENTS:,} values")
        newlines = np.flatnonzero(chunk == _NEWLINE)
        # Line of each token start and each comma, counted per line of this chunk.
        n_lines = newlines.size + 1
        token_lines = np.searchsorted(newlines, np.flatnonzero(starts))
        counts = np.bincount(token_lines, minlength=n_lines)
        comma_counts = np.bincount(
            np.searchsorted(newlines, np.flatnonzero(chunk == _COMMA)), minlength=n_lines
        )
        # The chunk's first line continues the line in progress; its last line goes on.
        counts[0] += carry_tokens
        comma_counts[0] += carry_commas
        tokens_per_line.append(counts[:-1])
        commas_per_line.append(comma_counts[:-1])
        carry_tokens, carry_commas = counts[-1], comma_counts[-1]
        line += newlines.size
    tokens_per_line.append(np.array([carry_tokens]))
    commas_per_line.append(np.array([carry_commas]))
    if not total:
        return None
    tokens = np.concatenate(tokens_per_line)
    commas = np.concatenate(commas_per_line)
    rows = np.flatnonzero(tokens)  # blank lines are skipped
    n_columns = int(tokens[rows[0]])
    if comma:
        # A row with fewer numbers than fields has an empty one ("1,,3"): say so, before a
        # ragged row is reported (its count would be off by the empty fields).
        empty = rows[commas[rows] + 1 > tokens[rows]]
        if empty.size:
            raise UploadError(
                f"row {int(empty[0]) + first_row:,} of {what} has an empty field (two commas in "
                "a row, or one at the start or end of the line)"
            )
    uneven = rows[tokens[rows] != n_columns]
    if uneven.size:
        row = int(uneven[0])
        raise UploadError(
            f"row {row + first_row:,} of {what} has {_count(int(tokens[row]), 'number')} where the "
            f"first row has {n_columns:,}: every row must have the same number of values"
        )
    if comma:
        mixed = rows[commas[rows] != n_columns - 1]
        if mixed.size:
            raise UploadError(
                f"row {int(mixed[0]) + first_row:,} of {what} separates its values with spaces "
                "as well as commas: use one separator"
            )
    return rows.size, n_columns


def _character_at(data: np.ndarray, index: int) -> str:
    """Words for the character starting at byte ``index`` of UTF-8 ``data``: itself, and its
    Unicode name when it is not ASCII ("the character '−' (MINUS SIGN)"), or the byte when
    no UTF-8 character starts there."""
    for length in range(1, 5):
        try:
            character = data[index : index + length].tobytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        if character.isascii():
            return f"the character {character!r}"
        shown = repr(character) if character.isprintable() else f"U+{ord(character):04X}"
        name = unicodedata.name(character, "")
        return f"the character {shown}" + (f" ({name})" if name else "")
    return f"the byte 0x{int(data[index]):02x}"


def _is_header(first_line: str, first_field: str) -> bool:
    """Whether the first line names the columns: its first field is not a number and the line
    holds a character no number has (so a mistyped first row, "1e 1", is an error and not a
    header)."""
    if not first_field or _is_number(first_field):
        return False
    return any(not (c.isascii() and _NUMERIC_BYTES[ord(c)]) for c in first_line)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


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
    axes = _matrix_axes(matrix.shape)
    if axes is None:
        raise UploadError(f"the matrix must be 2-D, got shape {matrix.shape}")
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
