"""One safe reader for every way an array arrives: a file or an upload (.npy, .npz, .safetensors,
.csv, .txt), pasted rows as numpy prints them, a pasted list (``.tolist()``), a repr
(``array([...], dtype=float32)``, ``tensor([...])``); each array with what is known about how it
was written (:class:`Written`: its container format, the decimal digits its text shows). Nothing
is unpickled, every size is checked before the data it describes is read, and a path that is
not a regular file is refused before it is opened. The command line (``python -m pe_core``) and
the Check page's uploads and paste boxes read through it.

>>> found = parse_text("[[0.8415, 0.5403], [0.9093, -0.4161]]")
>>> found["array"].shape, found.written["array"].printing.words
((2, 2), '4 decimals')
"""

from __future__ import annotations

import io
import itertools
import lzma
import math
import os
import re
import stat
import struct
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pe_core._numerics.checks import MAX_ELEMENTS, load_json
from pe_core._numerics.printing import Printing
from pe_core.errors import InputError

__all__ = [
    "FORMATS",
    "MAX_CONFIG_BYTES",
    "MAX_FILE_BYTES",
    "SINGLE_ARRAY_RULE",
    "VECTOR_NAMES",
    "ArrayFile",
    "Printing",
    "Written",
    "WrongFamily",
    "find_vectors",
    "load_arrays",
    "parse_text",
    "read_arrays",
    "read_bounded",
    "read_config",
    "rope_inputs",
    "table_array",
]

#: The suffixes read: binary arrays, and decimal text (comma or whitespace separated rows,
#: numpy's print, a list or a repr).
BINARY_FORMATS = (".npy", ".npz", ".safetensors")
TEXT_FORMATS = (".csv", ".txt")
FORMATS = BINARY_FORMATS + TEXT_FORMATS

#: A safetensors header larger than this is refused (real ones are kilobytes to a few MB).
MAX_HEADER_BYTES = 100 * 1024 * 1024

#: Most bytes an archive may unpack to by default: MAX_ELEMENTS float64 values.
MAX_UNPACKED_BYTES = MAX_ELEMENTS * 8

#: Most bytes a file is read for by default (the command line): a float64 array of
#: MAX_ELEMENTS values and a generous header. Checked on the file's size before it is opened.
MAX_FILE_BYTES = MAX_UNPACKED_BYTES + (1 << 20)

#: Most bytes of a config.json the command line reads: real ones are 1 to 60 kB, the largest
#: (a vision model's ImageNet-22k label map) about 1 MB.
MAX_CONFIG_BYTES = 1 << 22

#: safetensors dtypes read, as NumPy little-endian dtypes (BF16 is widened to float32 below).
_SAFETENSORS_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "<u2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
}

#: Formats people try, and what to do instead (never opened: a .pt is a pickle).
_OTHER_FORMATS = {
    ".pt": "a PyTorch file (pickled), which is never loaded: save the tensor with "
    'np.save("table.npy", tensor.float().cpu().numpy()), or for a cache '
    "numpy.savez('cache.npz', cos=cos.float().numpy(), sin=sin.float().numpy())",
    ".pth": "a PyTorch file (pickled), which is never loaded: save the tensor with "
    'np.save("table.npy", tensor.float().cpu().numpy())',
    ".bin": "a PyTorch file (pickled), which is never loaded: save the tensor with np.save",
    ".pkl": "a pickle, which is never loaded: save the array with np.save",
    ".pickle": "a pickle, which is never loaded: save the array with np.save",
    ".zip": "an archive, which is not opened: give the array inside it",
    ".gz": "a compressed file, which is not opened: give it uncompressed",
    ".json": "JSON: save the array with np.save, or as .csv",
    ".xlsx": "a spreadsheet: save the sheet as .csv",
}

#: The formats read, in words.
ACCEPTED = ".npy, .npz, .safetensors, or .csv/.txt (rows of numbers, or numpy's print)"


class WrongFamily(InputError):
    """The input is a readable array of another family than the check asked for: a sinusoidal
    table given to the RoPE check (``family`` "sinusoidal"), or a rotary cache given to the
    table check (``family`` "rotary"). The message says what it is and which check reads it."""

    def __init__(self, message: str, *, family: str):
        super().__init__(message)
        self.family = family


@dataclass(frozen=True)
class Written:
    """What is known about how an array was written.

    Attributes
    ----------
    format : str
        ".npy", ".npz", ".safetensors", or "text" (a .csv or .txt file, or pasted text).
    container : str
        The dtype the values were stored with ("float32", "float16", "bfloat16" for a
        safetensors BF16 tensor, whose values are returned as float32, "int64" ...), or
        "decimal" for text.
    printing : Printing or None
        For text: the decimals or significant digits its numbers were written with, as the
        values show them (None when every value is a float64 written in full).
    declared : str or None
        A dtype the text names (numpy's repr ``dtype=float32``, torch's ``dtype=torch.float16``).
    """

    format: str
    container: str
    printing: Printing | None = None
    declared: str | None = None

    @property
    def words(self) -> str:
        """ "float32 values in a .npy file", "decimal text, 8 significant digits"."""
        if self.container != "decimal":
            return f"{self.container} values in a {self.format} file"
        digits = (
            f", {self.printing.words}" if self.printing is not None else ", each number in full"
        )
        declared = f" (it names dtype {self.declared})" if self.declared else ""
        return f"decimal text{digits}{declared}"

    def to_dict(self) -> dict:
        printing = self.printing
        return {
            "format": self.format,
            "container": self.container,
            "decimals": None if printing is None else printing.decimals,
            "significant_digits": None if printing is None else printing.significant,
            "printing": None if printing is None else printing.words,
            "declared": self.declared,
        }


class ArrayFile(Mapping):
    """The arrays read from one source, by name (a mapping of str to ndarray), with what is
    known about how each was written (``written[name]``)."""

    def __init__(self, arrays: dict[str, np.ndarray], written: dict[str, Written], name: str):
        self._arrays = arrays
        self.written = written
        self.name = name

    def __getitem__(self, key: str) -> np.ndarray:
        return self._arrays[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k!r}: {v.shape}" for k, v in self._arrays.items())
        return f"ArrayFile({self.name!r}, {{{shapes}}})"


def read_bounded(
    path: str | os.PathLike,
    *,
    max_bytes: int | None,
    what: str | None = None,
    head: int | None = None,
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, refused before it is opened
    otherwise (a directory, /dev/zero, a FIFO, a socket, or a file too large); with ``head``,
    only its first ``head`` bytes, whatever its size (a GGUF file's magic).

    Raises
    ------
    InputError
        Naming the path and the rule.
    """
    path = Path(path)
    what = f"{str(path)!r}" if what is None else what
    try:
        info = os.stat(path)
    except OSError as error:
        raise InputError(f"{what} cannot be read: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = (
            "a directory"
            if stat.S_ISDIR(info.st_mode)
            else "a device"
            if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
            else "a FIFO"
            if stat.S_ISFIFO(info.st_mode)
            else "a socket"
            if stat.S_ISSOCK(info.st_mode)
            else "not a regular file"
        )
        raise InputError(f"{what} is {kind}: only a regular file is read")
    if head is not None:
        try:
            with open(path, "rb") as handle:
                return handle.read(head)
        except OSError as error:
            raise InputError(f"{what} cannot be read: {error.strerror or error}") from None
    if info.st_size > max_bytes:
        raise InputError(
            f"{what} has {info.st_size:,} bytes, more than the {max_bytes:,} read at most"
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise InputError(f"{what} cannot be read: {error.strerror or error}") from None
    if len(data) > max_bytes:  # it grew since it was measured
        raise InputError(f"{what} has more than the {max_bytes:,} bytes read at most")
    return data


def read_config(path: str | os.PathLike, *, max_bytes: int = MAX_CONFIG_BYTES) -> object:
    """A config.json read from a regular file of at most ``max_bytes`` and parsed with the
    project's nesting limit (:func:`pe_core.load_json`)."""
    data = read_bounded(path, max_bytes=max_bytes, what=f"--config {str(path)!r}")
    return load_json(data, name="config")


def read_arrays(
    path: str | os.PathLike,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    max_values: int = MAX_ELEMENTS,
) -> ArrayFile:
    """The arrays in a file, by name: :func:`load_arrays` on its bytes, read only when it is a
    regular file of at most ``max_bytes``.

    Parameters
    ----------
    path : str or path-like
        A ``.npy``, ``.npz``, ``.safetensors``, ``.csv`` or ``.txt`` file.
    max_bytes, max_values : int
        The most bytes read, and the most values a text file may hold.

    Returns
    -------
    ArrayFile

    Raises
    ------
    InputError
        A file that cannot be read, is not a regular file, is too large, of another kind, or
        whose contents are malformed.
    """
    path = Path(path)
    label = f"FILE {str(path)!r}"
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(_other_format(label, suffix))
    data = read_bounded(path, max_bytes=max_bytes, what=label)
    return load_arrays(
        data, path.name, label=label, max_values=max_values, max_unpacked_bytes=max_bytes
    )


def load_arrays(
    data: bytes,
    name: str,
    *,
    max_unpacked_bytes: int = MAX_UNPACKED_BYTES,
    max_values: int = MAX_ELEMENTS,
    label: str | None = None,
) -> ArrayFile:
    """The arrays in a file's bytes, by name, read without unpickling anything.

    Parameters
    ----------
    data : bytes
        The file's contents.
    name : str
        The file's name; its suffix says the format: ``.npy`` (one array, named "array"),
        ``.npz`` (``np.savez``'s zip archive of .npy files), ``.safetensors`` (its JSON header
        parsed here; BF16 tensors are returned as float32, exactly), ``.csv`` or ``.txt``
        (decimal text, one array named "array": see :func:`parse_text`).
    max_unpacked_bytes : int
        Most bytes the members of a ``.npz`` may unpack to, from the sizes the archive declares,
        checked before anything is decompressed (a zip bomb is refused unopened).
    max_values : int
        Most values a text file may hold, counted on its bytes before any is converted.
    label : str, optional
        How messages name the file (by default its name, quoted).

    Returns
    -------
    ArrayFile
        Arrays of real numbers (object arrays, which only a pickle could fill, are refused),
        with how each was written.

    Raises
    ------
    InputError
        Data of another format, malformed, or larger than the limits.
    """
    label = repr(name) if label is None else label
    suffix = Path(name).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(_other_format(label, suffix))
    if not data:
        raise InputError(f"{label} is empty")
    if suffix in TEXT_FORMATS:
        return parse_text(data, what=f"{label}", max_values=max_values, name=name)
    try:
        if suffix == ".npy":
            arrays = {"array": _npy(data, label, max_values)}
            containers = {"array": arrays["array"].dtype.name}
        elif suffix == ".npz":
            arrays = _read_npz(data, label, max_unpacked_bytes, max_values)
            containers = {key: value.dtype.name for key, value in arrays.items()}
        else:
            arrays, containers = _read_safetensors(data, label, max_values)
    except InputError:
        raise
    except (OSError, ValueError, EOFError, struct.error, zipfile.BadZipFile) as error:
        raise InputError(f"{label} cannot be read as {suffix}: {error}") from None
    written = {key: Written(suffix, containers[key]) for key in arrays}
    return ArrayFile(arrays, written, name)


def _other_format(label: str, suffix: str) -> str:
    what = _OTHER_FORMATS.get(suffix)
    if what is not None:
        return f"{label} is {what}; the formats read are {ACCEPTED}"
    return (
        f"{label} must be a .npy, .npz, .safetensors, .csv or .txt file (never a pickle such "
        "as .pt); from PyTorch: numpy.savez('cache.npz', cos=cos.float().numpy(), "
        "sin=sin.float().numpy()) or safetensors.torch.save_file({'cos': cos, 'sin': sin}, "
        "'cache.safetensors')"
    )


def _npy(raw: bytes, label: str, max_values: int = MAX_ELEMENTS) -> np.ndarray:
    """One .npy file's array, its header checked against its length before any value is read."""
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
    except ValueError:
        raise InputError(f"{label} is not a NumPy .npy file (its first bytes are wrong)") from None
    if version not in ((1, 0), (2, 0)):
        raise InputError(f"{label}: .npy format version {version} is not read (1.0 and 2.0 are)")
    read_header = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    try:
        shape, fortran, dtype = read_header(stream)
    except Exception:  # NumPy's header parser raises ValueError, SyntaxError, TokenError ...
        raise InputError(f"{label}: the .npy header is malformed") from None
    if dtype.hasobject:
        raise InputError(
            f"{label} holds Python objects (dtype {dtype}), which only unpickling could read: "
            "pickles are never loaded; save the numbers (tensor.float().numpy())"
        )
    if dtype.kind not in "iuf" or dtype.subdtype is not None:
        raise InputError(f"{label} must hold real numbers, got dtype {dtype}")
    if not all(size >= 0 for size in shape):
        raise InputError(
            f"{label}: the .npy header gives the shape {shape}, with a negative length"
        )
    count = math.prod(shape)
    if count > max_values:
        raise InputError(f"{label} has {count:,} values, more than the limit of {max_values:,}")
    if len(raw) - stream.tell() != count * dtype.itemsize:
        raise InputError(
            f"{label}: the header promises {shape} {dtype} values ({count * dtype.itemsize:,} "
            f"bytes) but {len(raw) - stream.tell():,} bytes follow it"
        )
    if count == 0:
        array = np.zeros(shape, dtype=dtype)
    else:
        array = np.frombuffer(raw, dtype=dtype, count=count, offset=stream.tell())
        array = array.reshape(shape, order="F" if fortran else "C")
    return array.astype(dtype.newbyteorder("="), copy=False)


def _read_npz(
    data: bytes, label: str, max_unpacked_bytes: int, max_values: int
) -> dict[str, np.ndarray]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(f"{label} is not a .npz file (not a zip archive)") from None
    except (NotImplementedError, OSError, EOFError, ValueError, struct.error) as error:
        # A damaged table of contents: a zip version zipfile lacks (NotImplementedError), a
        # name that is not the UTF-8 its flag says (UnicodeDecodeError), ...
        raise InputError(f"{label}: its zip table of contents cannot be read: {error}") from None
    with archive:
        members = archive.infolist()
        unpacked = sum(member.file_size for member in members)
        if unpacked > max_unpacked_bytes:
            raise InputError(
                f"{label} declares {unpacked:,} bytes once unpacked, more than the limit of "
                f"{max_unpacked_bytes:,}: it was not unpacked"
            )
        arrays = {}
        for member in members:
            key = member.filename.removesuffix(".npy")
            what = f"{label} (its array {key!r})"
            try:
                with archive.open(member) as handle:
                    raw = handle.read(member.file_size + 1)
            except (
                zipfile.BadZipFile,
                RuntimeError,  # encrypted
                NotImplementedError,  # a compression zipfile lacks
                OSError,
                EOFError,
                ValueError,
                zlib.error,
                lzma.LZMAError,
            ) as error:
                raise InputError(f"{what} cannot be unpacked: {error}") from None
            if len(raw) != member.file_size:
                raise InputError(
                    f"{what} unpacks to {len(raw):,} bytes where the archive declares "
                    f"{member.file_size:,}"
                )
            arrays[key] = _npy(raw, what, max_values)
    return arrays


def _read_safetensors(
    data: bytes, label: str, max_values: int
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    size = len(data)
    if size < 8:
        raise InputError(f"{label} is too short for a safetensors header")
    (header_size,) = struct.unpack("<Q", data[:8])
    if header_size > min(MAX_HEADER_BYTES, size - 8):
        raise InputError(
            f"{label}: the safetensors header declares {header_size:,} bytes, "
            f"more than the file holds or than {MAX_HEADER_BYTES:,}"
        )
    header = load_json(data[8 : 8 + header_size], name="the safetensors header")
    data_start = 8 + header_size
    if not isinstance(header, dict):
        raise InputError(f"{label}: the safetensors header must be a JSON object")
    arrays, containers = {}, {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        arrays[name] = _tensor(data, name, entry, data_start, size, max_values)
        containers[name] = _SAFETENSORS_NAMES.get(entry["dtype"], arrays[name].dtype.name)
    return arrays, containers


#: The container of each safetensors dtype, in NumPy's names (BF16: "bfloat16").
_SAFETENSORS_NAMES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32", "F64": "float64"}


def _tensor(
    data: bytes, name: str, entry, data_start: int, size: int, max_values: int
) -> np.ndarray:
    if not isinstance(entry, dict):
        raise InputError(f"safetensors tensor {name!r}: its header entry must be an object")
    dtype_name, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype_name not in _SAFETENSORS_DTYPES:
        raise InputError(
            f"safetensors tensor {name!r}: dtype must be one of "
            f"{', '.join(_SAFETENSORS_DTYPES)}, got {dtype_name!r}"
        )
    valid_shape = isinstance(shape, list) and all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    )
    valid_offsets = (
        isinstance(offsets, list)
        and len(offsets) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in offsets)
    )
    if not (valid_shape and valid_offsets):
        raise InputError(
            f"safetensors tensor {name!r}: shape and data_offsets must be lists of "
            f"non-negative integers, got {shape!r} and {offsets!r}"
        )
    dtype = np.dtype(_SAFETENSORS_DTYPES[dtype_name])
    count = math.prod(shape)
    begin, end = offsets
    if count > max_values or not 0 <= begin <= end or data_start + end > size:
        raise InputError(
            f"safetensors tensor {name!r}: data_offsets {offsets} lie outside the file or "
            f"the shape {shape} is beyond the memory budget"
        )
    if end - begin != count * dtype.itemsize:
        raise InputError(
            f"safetensors tensor {name!r}: {end - begin} bytes for shape {shape} of "
            f"{dtype_name} ({count * dtype.itemsize} expected)"
        )
    if count == 0:
        array = np.zeros(shape, dtype=dtype)
    else:
        array = np.frombuffer(data, dtype=dtype, count=count, offset=data_start + begin)
        array = array.reshape(shape)
    if dtype_name == "BF16":  # the upper half of a float32: exact
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(array.dtype.newbyteorder("="))


# --- decimal text ------------------------------------------------------------------------------

#: Bytes numeric text may hold: digits, signs, points, exponents, the letters of nan and inf,
#: separators and line ends. Anything else is refused before parsing.
_NUMERIC_BYTES = np.zeros(256, dtype=bool)
_NUMERIC_BYTES[np.frombuffer(b"0123456789+-.eEnaifNAIF,;\t \r\n", dtype=np.uint8)] = True
#: The same with the brackets of numpy's print and of a list.
_BRACKETED_BYTES = _NUMERIC_BYTES.copy()
_BRACKETED_BYTES[[ord("["), ord("]")]] = True
#: Bytes that separate values (a line end does too).
_SEPARATOR_BYTES = np.zeros(256, dtype=bool)
_SEPARATOR_BYTES[np.frombuffer(b",;\t \r\n", dtype=np.uint8)] = True
#: Every separator to a space, for the parser (which splits at any whitespace).
_TO_SPACES = bytes(32 if chr(b) in ",;\t\r" else b for b in range(256))
_CHUNK_BYTES = 1 << 20
_NEWLINE, _COMMA = ord("\n"), ord(",")

#: A repr's call around the brackets: ``array(``, ``tensor(``, ``np.array(``, ``x = ``.
_CALL = re.compile(rb"\A\s*(?:[A-Za-z_][\w.]*\s*=\s*)?(?:[A-Za-z_][\w.]*\s*\(\s*)?(?=\[)")
#: Its end: keyword arguments after the last bracket (``dtype=float32``, ``device='cuda:0'``,
#: ``grad_fn=<AddBackward0>``, ``requires_grad=True``) and the closing parenthesis.
_CALL_END = re.compile(rb"\]\s*((?:,\s*[A-Za-z_]\w*\s*=\s*[^,\[\]]*?)*)\s*\)?\s*\Z")
_DTYPE = re.compile(rb"dtype\s*=\s*(?:torch\.|np\.|numpy\.)?([A-Za-z0-9_]+)")


def parse_text(
    text: str | bytes,
    *,
    what: str = "the pasted text",
    max_values: int = MAX_ELEMENTS,
    name: str = "pasted text",
) -> ArrayFile:
    """An array written as decimal text: rows of numbers separated by commas, semicolons,
    tabs or spaces (an optional header line; a first column named "position", as this app's
    CSV download has, is dropped), numpy's print of an array (its brackets, and rows wrapped
    over several lines), a list (``.tolist()``), or a repr (``array([...], dtype=float32)``,
    ``tensor([...])``, whose dtype is kept in :attr:`Written.declared`).

    Parameters
    ----------
    text : str or bytes
        UTF-8 text; a byte-order mark and Windows or classic Mac line ends are read.
    what : str
        How messages name the text ("the pasted text", "FILE 'table.csv'").
    max_values : int
        Most values read, counted on the bytes before any is converted.
    name : str
        The name of the source, kept on the result.

    Returns
    -------
    ArrayFile
        One array, "array": float64, of the shape the brackets give (2-D for rows; 1-D for a
        flat list), with how it was written (its :class:`Printing`).

    Raises
    ------
    InputError
        Empty text, anything that is not a number (named with its row and character), rows of
        different lengths, an empty field, more than ``max_values`` values, or numpy's
        summarized print (``...`` in place of rows).
    """
    data = text.encode("utf-8", errors="surrogatepass") if isinstance(text, str) else bytes(text)
    if not data.strip():
        raise InputError(f"{what} is empty")
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark
        data = data[3:]
    if b"\r" in data and b"\n" not in data:  # classic Mac line ends
        data = data.replace(b"\r", b"\n")
    call = _CALL.match(data)
    declared = None
    if call is not None:
        values, declared = _bracketed(data, call.end(), what, max_values)
    else:
        values = _rows(data, what, max_values)
    written = Written("text", "decimal", Printing.of(values), declared)
    return ArrayFile({"array": values}, {"array": written}, name)


def _bracketed(data: bytes, start: int, what: str, max_values: int):
    """The array written inside brackets from ``data[start]`` (numpy's print, a list, the
    inside of a repr), and the dtype the repr names."""
    end = _CALL_END.search(data)
    if end is None:
        raise InputError(
            f"{what} starts with a bracket but does not end with one: paste the whole array"
        )
    declared = _DTYPE.search(end.group(1))
    body = np.frombuffer(data, dtype=np.uint8)[start : end.start() + 1]
    if b"..." in data[start : end.start()]:
        raise InputError(
            f"{what} is numpy's summarized print ('...' in place of the middle values): print "
            "it whole with np.set_printoptions(threshold=sys.maxsize), or save it with np.save"
        )
    allowed = _BRACKETED_BYTES[body]
    if not allowed.all():
        position = int(np.argmin(allowed))
        line = int(np.count_nonzero(body[:position] == _NEWLINE)) + 1
        raise InputError(
            f"line {line:,} of {what} holds something that is not a number "
            f"({_character_at(body, position)})"
        )
    steps = (body == ord("[")).astype(np.int64) - (body == ord("]"))
    depth = np.cumsum(steps)
    if depth.size == 0 or depth.min() < 0 or depth[-1] != 0:
        raise InputError(f"{what} has brackets that do not pair up ('[' without ']')")
    ndim = int(depth.max())
    # The depth a byte is inside of (an opening bracket counts with what it opens).
    inside = depth + (body == ord("]"))
    opened = [int(np.count_nonzero((body == ord("[")) & (depth == k))) for k in range(1, ndim + 1)]
    if opened[0] != 1:
        raise InputError(
            f"{what} holds {opened[0]} arrays side by side ('[...] [...]'): give one array"
        )
    shape = [1]
    for outer, inner in itertools.pairwise(opened):
        if inner % outer:
            raise InputError(
                f"{what} has rows of different lengths: {inner} brackets inside {outer} "
                "(every row of an array has as many values)"
            )
        shape.append(inner // outer)
    brackets = (body == ord("[")) | (body == ord("]"))
    stray = ~brackets & (inside < ndim) & ~_SEPARATOR_BYTES[body]
    if stray.any():
        position = int(np.argmax(stray))
        line = int(np.count_nonzero(body[:position] == _NEWLINE)) + 1
        raise InputError(
            f"line {line:,} of {what} has a number beside a bracketed row: rows of an array "
            "hold numbers, and an array holds rows"
        )
    # Each innermost bracket is one row: its line breaks (numpy wraps long rows) become
    # spaces, its closing bracket a line end, and whatever lies between rows a space.
    rows = body.copy()
    in_row = (inside == ndim) & ~brackets
    rows[~in_row] = ord(" ")
    rows[in_row & (body == _NEWLINE)] = ord(" ")
    rows[(body == ord("]")) & (inside == ndim)] = _NEWLINE
    if not np.any(rows[in_row] != ord(" ")):
        raise InputError(f"{what} holds an empty array")
    values = _rows(rows.tobytes(), what, max_values, header=False, row_word="row")
    n_rows = values.shape[0]
    if n_rows != opened[-1]:
        raise InputError(
            f"{what} has {opened[-1]:,} rows in brackets but {n_rows:,} hold numbers: an "
            "empty row ('[]')"
        )
    full = (*shape[1:], values.shape[1]) if ndim > 1 else (values.shape[1],)
    return values.reshape(full), None if declared is None else declared.group(1).decode()


def _rows(
    data: bytes,
    what: str,
    max_values: int,
    *,
    header: bool | None = None,
    row_word: str = "row",
) -> np.ndarray:
    """Numeric rows (comma or whitespace separated, an optional header line) as a matrix.

    The values are counted on the raw bytes before anything is converted, so text with too
    many values is refused at the cost of a few small arrays; then one pass parses the numbers
    straight into the result (no Python string per value).
    """
    first_end = data.find(b"\n")
    first_end = len(data) if first_end < 0 else first_end
    try:
        first_line = data[: min(first_end, 4096)].decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{what} is not UTF-8 text") from None
    if b"\x00" in data:
        raise InputError(f"{what} contains binary data")
    comma = b"," in data
    first_field = re.split(r"[,;\s]+", first_line.strip(), maxsplit=1)[0]
    if header is None:
        header = _is_header(first_line, first_field)
    body = np.frombuffer(data, dtype=np.uint8)[first_end + 1 if header else 0 :]
    columns = _row_lengths(body, comma, what, max_values, first_row=2 if header else 1)
    if columns is None:
        raise InputError(
            f"{what} has a header but no rows of numbers" if header else f"{what} has no rows"
        )
    n_rows, n_columns = columns
    if header and n_rows < 2:
        raise InputError(
            f"{what} has {_count(n_rows, 'row')} of numbers after its first line, which was read "
            f"as a header because {first_field!r} is not a number; a table needs at least 2 rows"
        )
    text = body.tobytes().translate(_TO_SPACES)
    try:
        values = np.fromstring(text, dtype=np.float64, sep=" ")
    except ValueError:
        raise InputError(
            f"{what} holds something that is not a number (for example 1.2.3 or e5)"
        ) from None
    if values.size != n_rows * n_columns:
        raise InputError(f"{what} holds something that is not a number (for example 1.2.3 or e5)")
    matrix = values.reshape(n_rows, n_columns)
    # This app's CSV download starts with a "position" column: drop it.
    if header and first_field.lower() == "position" and n_columns > 1:
        matrix = matrix[:, 1:]
    return matrix


def _row_lengths(
    body: np.ndarray, comma: bool, what: str, max_values: int, first_row: int = 1
) -> tuple[int, int] | None:
    """``(rows, columns)`` of the numbers in ``body`` (raw bytes), counted a chunk at a time;
    None when it holds no number. Refuses, naming the row (``body``'s first line is row
    ``first_row`` of ``what``), a character that cannot be part of a number, more than
    ``max_values`` values, rows of different lengths and (with commas) empty fields."""
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
            raise InputError(
                f"row {row:,} of {what} holds something that is not a number "
                f"({_character_at(body, first + position)})"
            )
        separator = _SEPARATOR_BYTES[chunk]
        starts = ~separator
        starts[1:] &= separator[:-1]
        starts[0] &= previous_separator
        previous_separator = bool(separator[-1])
        total += int(np.count_nonzero(starts))
        if total > max_values:
            raise InputError(f"{what} has more than {max_values:,} values")
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
            raise InputError(
                f"row {int(empty[0]) + first_row:,} of {what} has an empty field (two commas in "
                "a row, or one at the start or end of the line)"
            )
    uneven = rows[tokens[rows] != n_columns]
    if uneven.size:
        row = int(uneven[0])
        raise InputError(
            f"row {row + first_row:,} of {what} has {_count(int(tokens[row]), 'number')} where the "
            f"first row has {n_columns:,}: every row must have the same number of values"
        )
    if comma:
        mixed = rows[commas[rows] != n_columns - 1]
        if mixed.size:
            raise InputError(
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


# --- which array is what -------------------------------------------------------------------------


def table_array(
    arrays: Mapping[str, np.ndarray],
    name: str | None = None,
    *,
    choose: str = "choose one with --name",
) -> tuple[str, np.ndarray]:
    """The one array of a file that is a table to identify: ``name``, or the only one.

    Raises
    ------
    WrongFamily
        For a file that holds a rotary cache, inv_freq or vectors before and after rotation
        (by their names): the RoPE check reads those.
    InputError
        No such array, or several without a name (``choose`` says how to name one).
    """
    if name is not None:
        if name not in arrays:
            raise InputError(f"no array named {name!r} in the file (it has {sorted(arrays)})")
        return name, np.asarray(arrays[name])
    lowered = {key.lower() for key in arrays}
    rotary = [
        key
        for key in sorted(arrays)
        if any(word in key.lower() for word in ("cos", "sin", "inv_freq"))
    ]
    vectors = [f"{a} and {b}" for a, b in VECTOR_NAMES if a in lowered and b in lowered]
    if (len(arrays) > 1 and rotary) or vectors:
        held = vectors[0] if vectors else " and ".join(rotary)
        raise WrongFamily(
            f"the file holds {held}: a rotary (RoPE) encoding, not a sinusoidal table; the "
            "RoPE check reads it (python -m pe_core check-rope FILE, or What to check: RoPE "
            "on the Check page)",
            family="rotary",
        )
    if len(arrays) != 1:
        raise InputError(f"the file holds {sorted(arrays)}: {choose}")
    key = next(iter(arrays))
    return key, np.asarray(arrays[key])


#: How a file's single array is read (a .npy holds one): by its shape.
SINGLE_ARRAY_RULE = (
    "a 1-D array is inv_freq; (2, L, d) is cos and sin stacked (np.stack([cos, sin])); "
    "(L, d) is a cos_sin_cache with cos in its first d/2 columns and sin in the others "
    "(vLLM's); a cos or a sin cache alone is refused (save both)"
)


def _named(
    arrays: Mapping[str, np.ndarray], wanted: str | None, words: tuple[str, ...]
) -> str | None:
    """The array named ``wanted``, else the one whose name is one of ``words``, else the one
    whose name contains the first word; None if none."""
    if wanted is not None:
        if wanted not in arrays:
            raise InputError(f"no array named {wanted!r} in the file (it has {sorted(arrays)})")
        return wanted
    for name in arrays:
        if name.lower() in words:
            return name
    for name in arrays:
        if words[0] in name.lower():
            return name
    return None


#: Names of vectors before and after rotation, as pairs: ours, then transformers'
#: ``apply_rotary_pos_emb`` (``q, k`` in, ``q_embed, k_embed`` out). A file with both the q and
#: the k pair is read as one batch (the same rotation, more heads).
VECTOR_NAMES = (("before", "after"), ("q", "q_embed"), ("k", "k_embed"))


def find_vectors(
    arrays: Mapping[str, np.ndarray], before: str | None, after: str | None
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]] | None:
    """Vectors before and after rotation found by name (:data:`VECTOR_NAMES`, or the names
    given): ``(before, after, names used)``, the q and k pairs joined as one batch of heads;
    None when the file has none.

    Raises
    ------
    InputError
        One array of a pair without the other, or the two of different shapes.
    """
    if (before is None) != (after is None):
        raise InputError("name both arrays of the vectors: before and after")
    if before is not None:
        pairs = [(before, after)]
        for name in pairs[0]:
            if name not in arrays:
                raise InputError(f"no array named {name!r} in the file (it has {sorted(arrays)})")
    else:
        lowered = {name.lower(): name for name in arrays}
        pairs = [(lowered[a], lowered[b]) for a, b in VECTOR_NAMES if a in lowered and b in lowered]
        half = [
            f"{a!r} without {b!r}" if a in lowered else f"{b!r} without {a!r}"
            for a, b in VECTOR_NAMES
            if (a in lowered) != (b in lowered)
        ]
        if not pairs and half and not any("cos" in n or "inv_freq" in n for n in lowered):
            raise InputError(
                f"the file has {half[0]}: vectors are read in pairs before and after rotation "
                f"({', '.join(f'{a} and {b}' for a, b in VECTOR_NAMES)})"
            )
        if not pairs:
            return None
        pairs = pairs[:1] if pairs[0][0].lower() == "before" else pairs
    befores, afters = [], []
    for a, b in pairs:
        x, y = np.asarray(arrays[a]), np.asarray(arrays[b])
        if x.shape != y.shape:
            raise InputError(
                f"arrays {a!r} and {b!r} must have the same shape (a vector before and after "
                f"rotation), got {x.shape} and {y.shape}"
            )
        if x.ndim < 2:
            raise InputError(
                f"array {a!r} must have shape (..., positions, head_dim), got {x.shape}"
            )
        befores.append(x)
        afters.append(y)
    if len(pairs) > 1:
        shapes = {x.shape[-2:] for x in befores}
        if len(shapes) > 1:
            raise InputError(
                f"arrays {[a for a, _ in pairs]} must have the same last two axes "
                f"(positions, head_dim) to be read together, got {sorted(shapes)}"
            )
        dtype = np.result_type(*befores, *afters)
        x = np.concatenate([v.reshape(-1, *v.shape[-2:]).astype(dtype) for v in befores])
        y = np.concatenate([v.reshape(-1, *v.shape[-2:]).astype(dtype) for v in afters])
        return x, y, tuple(name for pair in pairs for name in pair)
    return befores[0], afters[0], pairs[0]


def rope_inputs(
    arrays: Mapping[str, np.ndarray],
    *,
    cos: str | None = None,
    sin: str | None = None,
    inv_freq: str | None = None,
    before: str | None = None,
    after: str | None = None,
    positions: str | None = None,
    hint: str = "",
) -> dict[str, np.ndarray | None]:
    """The keyword arguments of :func:`pe_core.identify_rope` found in a file's arrays.

    Parameters
    ----------
    arrays : mapping of str to ndarray
        What :func:`load_arrays` returned.
    cos, sin, inv_freq, before, after, positions : str, optional
        Names of the arrays to use; by default found by name: vectors before and after
        rotation (``before`` and ``after``, or transformers' ``q`` and ``q_embed`` and/or
        ``k`` and ``k_embed``: :data:`VECTOR_NAMES`), else ``cos`` and ``sin`` (or names
        containing them, such as ``cos_cached``), else ``inv_freq``; ``positions`` (or
        ``position_ids``). A file with one array is read by its shape
        (:data:`SINGLE_ARRAY_RULE`).
    hint : str
        Appended to the message when no array can be chosen (the command line's options).

    Returns
    -------
    dict
        ``{"before", "after", "positions"}``, ``{"cos", "sin", "positions"}`` or
        ``{"inv_freq"}``.

    Raises
    ------
    InputError
        No vectors, no cos and sin, no inv_freq and not a single array of a readable shape;
        one vector of a pair without the other, or the two of different shapes.
    """
    positions_name = _named(arrays, positions, ("positions", "position_ids"))
    found_positions = None if positions_name is None else np.asarray(arrays[positions_name]).ravel()
    if cos is None and sin is None and inv_freq is None:
        vectors = find_vectors(arrays, before, after)
        if vectors is not None:
            x, y, _ = vectors
            return {"before": x, "after": y, "positions": found_positions}
    cos_name = _named(arrays, cos, ("cos", "cos_cached"))
    if cos_name is not None:
        sin_name = sin or cos_name.replace("cos", "sin").replace("COS", "SIN")
        if sin_name not in arrays:
            sin_name = _named(arrays, None, ("sin", "sin_cached"))
        if sin_name is None or sin_name not in arrays:
            raise InputError(f"the file has a cos array ({cos_name!r}) but no sin array")
        return {"cos": arrays[cos_name], "sin": arrays[sin_name], "positions": found_positions}
    freq_name = _named(arrays, inv_freq, ("inv_freq",))
    if freq_name is not None:
        return {"inv_freq": arrays[freq_name]}
    others = [name for name in arrays if name != positions_name]
    if len(others) != 1:
        raise InputError(
            f"the file must hold vectors before and after rotation, cos and sin, inv_freq, or "
            f"a single array; it has "
            f"{sorted(arrays)}{hint}"
        )
    array = np.asarray(arrays[others[0]])
    kept = [n for n in array.shape if n != 1]
    if len(kept) == 1:
        return {"inv_freq": array.reshape(kept)}
    if array.ndim >= 3 and array.shape[0] == 2:
        return {"cos": array[0], "sin": array[1], "positions": found_positions}
    matrix = array.reshape(kept) if len(kept) == 2 else None
    if matrix is not None and matrix.shape[1] % 2 == 0:
        half = matrix.shape[1] // 2
        # transformers' cat(freqs, freqs) repeats each half; repeat_interleave each column
        if np.array_equal(matrix[:, :half], matrix[:, half:]) or np.array_equal(
            matrix[:, 0::2], matrix[:, 1::2]
        ):
            raise InputError(
                f"the single array of the file has shape {array.shape} and repeats each "
                "column (as a cos or a sin cache does): it is one of the two, and a check needs "
                "both: save cos and sin together, np.savez('cache.npz', cos=cos, sin=sin)"
            )
        return {"cos": matrix[:, :half], "sin": matrix[:, half:], "positions": found_positions}
    raise InputError(
        f"the single array of the file has shape {array.shape}: not inv_freq (1-D), cos and sin "
        "stacked (2, L, d) or a cos_sin_cache (L, d)"
    )
