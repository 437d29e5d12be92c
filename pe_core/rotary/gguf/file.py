"""Reading what a GGUF file (llama.cpp's model format) says about RoPE: its metadata and its small
RoPE tensors, never its weights.

:func:`read_gguf` reads a file through a read-only memory map (or bytes: the first megabytes of
a file are enough when they hold the metadata), :func:`parse_gguf_dump` the text ``gguf-dump``
prints (or ``key = value`` lines, or llama.cpp's own loader log), which has the keys but not the
values of the RoPE tensors. Both give a :class:`GgufMetadata`.

The format (GGUF versions 2 and 3, little-endian): the magic ``GGUF``, a version, the tensor and
key counts, the key/value pairs (typed), the tensor descriptions (name, shape, type, offset),
then, aligned to ``general.alignment`` (32 by default), the tensor data.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pe_core._numerics.checks import describe
from pe_core.errors import InputError, InputTypeError

__all__ = [
    "GGUF_ROPE_TENSORS",
    "MAX_GGUF_TEXT",
    "GgufMetadata",
    "GgufTensor",
    "parse_gguf_dump",
    "read_gguf",
    "read_gguf_bytes",
]

#: The tensors that hold RoPE factors (llama.cpp's LLM_TENSOR_ROPE_FREQS, ROPE_FACTORS_LONG,
#: ROPE_FACTORS_SHORT), read with the metadata; every other tensor is only described.
GGUF_ROPE_TENSORS = ("rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight")

#: Most key/value pairs and tensors a file may declare (real ones: a few dozen keys, up to some
#: tens of thousands of tensors), so a corrupt count is refused before anything is allocated.
MAX_KEYS = 1 << 16
MAX_TENSORS = 1 << 20
#: Most characters of pasted metadata text.
MAX_GGUF_TEXT = 2_000_000
#: Most characters of the name messages give to bytes read (read_gguf_bytes' ``name``).
_MAX_NAME = 200
#: Most elements of one RoPE tensor (a head has at most a few thousand rotary pairs).
_MAX_ROPE_ELEMENTS = 1 << 16

_MAGIC = b"GGUF"
# value type -> (struct format, size) for the fixed-size types
_SCALARS = {
    0: ("<B", 1, "UINT8"),
    1: ("<b", 1, "INT8"),
    2: ("<H", 2, "UINT16"),
    3: ("<h", 2, "INT16"),
    4: ("<I", 4, "UINT32"),
    5: ("<i", 4, "INT32"),
    6: ("<f", 4, "FLOAT32"),
    7: ("<?", 1, "BOOL"),
    10: ("<Q", 8, "UINT64"),
    11: ("<q", 8, "INT64"),
    12: ("<d", 8, "FLOAT64"),
}
_NUMPY_SCALARS = {0: "u1", 1: "i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "u1"}
_NUMPY_SCALARS.update({10: "<u8", 11: "<i8", 12: "<f8"})
_STRING, _ARRAY = 8, 9
#: ggml tensor types a RoPE tensor may be stored in: (name, NumPy dtype).
_TENSOR_TYPES = {0: ("F32", "<f4"), 1: ("F16", "<f2"), 28: ("F64", "<f8"), 30: ("BF16", "<u2")}


@dataclass(frozen=True)
class GgufTensor:
    """One tensor's description: its name, shape (GGUF's order, fastest axis first), ggml type
    number and name, and its values when it is a RoPE tensor whose bytes were there."""

    name: str
    shape: tuple[int, ...]
    type_id: int
    type_name: str
    values: np.ndarray | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class GgufMetadata:
    """What a GGUF file says, as far as RoPE goes.

    Attributes
    ----------
    metadata : mapping of str to value
        Every key/value pair (arrays as tuples, strings as str; the tokenizer's long arrays are
        skipped, their lengths kept in ``skipped_arrays``).
    value_types : mapping of str to str
        Each key's GGUF type (``FLOAT32``, ``UINT32``, ``STRING``, ``ARRAY[INT32]``...).
    tensors : mapping of str to GgufTensor
        Every tensor described (empty when the source had no tensor list).
    version : int or None
        The GGUF version (None for pasted text).
    source : {"file", "bytes", "dump"}
    truncated : bool
        The data ended before the end of the file's RoPE tensors (a file cut after its metadata).
    missing : tuple of str
        What the source does not give that a check needs (each a short phrase: "the values of
        rope_freqs.weight (a dump lists tensors but not their values)").
    """

    metadata: Mapping[str, object]
    value_types: Mapping[str, str]
    tensors: Mapping[str, GgufTensor]
    version: int | None
    source: str
    truncated: bool = False
    missing: tuple[str, ...] = ()
    skipped_arrays: Mapping[str, int] = field(default_factory=dict)
    has_tensor_list: bool = True

    @property
    def architecture(self) -> str | None:
        value = self.metadata.get("general.architecture")
        return value if isinstance(value, str) else None

    def key(self, suffix: str) -> object | None:
        """The value of ``{architecture}.{suffix}`` (None when absent)."""
        return self.metadata.get(f"{self.architecture}.{suffix}")

    def has_key(self, suffix: str) -> bool:
        return f"{self.architecture}.{suffix}" in self.metadata


class _Cursor:
    """Reads little-endian values from a buffer, refusing to run past its end."""

    def __init__(self, buffer, label: str) -> None:
        self.buffer = buffer
        self.size = len(buffer)
        self.at = 0
        self.label = label
        self.where = "the header"

    def take(self, n: int) -> bytes:
        # slices are copies (a memoryview of a memory map would keep it open past its close)
        if n < 0 or self.at + n > self.size:
            raise _Truncated(self.where)
        piece = self.buffer[self.at : self.at + n]
        self.at += n
        return piece

    def skip(self, n: int) -> None:
        if n < 0 or self.at + n > self.size:
            raise _Truncated(self.where)
        self.at += n

    def unpack(self, fmt: str, size: int):
        return struct.unpack(fmt, self.take(size))[0]

    def u32(self) -> int:
        return self.unpack("<I", 4)

    def u64(self) -> int:
        return self.unpack("<Q", 8)

    def string(self) -> str:
        length = self.u64()
        if length > self.size:
            raise InputError(
                f"{self.label} is not a valid GGUF file: a string in {self.where} claims "
                f"{length:,} bytes, more than the file holds"
            )
        return bytes(self.take(length)).decode("utf-8", errors="replace")


class _Truncated(Exception):
    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


#: Arrays longer than this are not kept (the tokenizer's vocabulary and merges); RoPE's arrays
#: (M-RoPE sections, a per-layer sliding-window pattern) have at most a few hundred elements.
_KEEP_ARRAY = 4096


def _value(cursor: _Cursor, value_type: int, key: str) -> tuple[object, str]:
    if value_type in _SCALARS:
        fmt, size, name = _SCALARS[value_type]
        value = cursor.unpack(fmt, size)
        return value, name
    if value_type == _STRING:
        return cursor.string(), "STRING"
    if value_type == _ARRAY:
        element_type = cursor.u32()
        count = cursor.u64()
        if element_type in _SCALARS:
            size = _SCALARS[element_type][1]
            if count > (cursor.size - cursor.at) // size:
                raise _Truncated(cursor.where)
            name = f"ARRAY[{_SCALARS[element_type][2]}]"
            if count > _KEEP_ARRAY:
                cursor.skip(count * size)
                return _Skipped(count), name
            raw = cursor.take(count * size)
            values = np.frombuffer(raw, dtype=_NUMPY_SCALARS[element_type]).tolist()
            if element_type == 7:
                values = [bool(v) for v in values]
            return tuple(values), name
        if element_type == _STRING:
            if count > (cursor.size - cursor.at) // 8:
                raise _Truncated(cursor.where)
            kept = []
            for _ in range(count):
                length = cursor.u64()
                if count <= _KEEP_ARRAY:
                    kept.append(bytes(cursor.take(length)).decode("utf-8", errors="replace"))
                else:
                    cursor.skip(length)
            if count > _KEEP_ARRAY:
                return _Skipped(count), "ARRAY[STRING]"
            return tuple(kept), "ARRAY[STRING]"
        raise InputError(
            f"{cursor.label} is not a valid GGUF file: key {key!r} is an array of type "
            f"{element_type} (GGUF's element types are 0-12, nested arrays unsupported)"
        )
    raise InputError(
        f"{cursor.label} is not a valid GGUF file: key {key!r} has value type {value_type} "
        "(GGUF's types are 0-12)"
    )


@dataclass(frozen=True)
class _Skipped:
    count: int


def read_gguf(path: str | os.PathLike) -> GgufMetadata:
    """Read a GGUF file's metadata and RoPE tensors through a read-only memory map.

    Only the pages holding the metadata, the tensor descriptions and the RoPE tensors are
    touched: a 40 GB file is read in the time and memory of a small one. A file cut after its
    metadata (the first megabytes of a model) is read too; its RoPE tensors are then missing
    when their bytes are past the cut (``truncated``).

    Parameters
    ----------
    path : str or path-like
        A regular file.

    Returns
    -------
    GgufMetadata

    Raises
    ------
    InputError
        A path that is not a regular file or cannot be read, a file that is not GGUF, one cut
        inside its metadata, or malformed.
    """
    if not isinstance(path, str | os.PathLike):
        raise InputTypeError(f"path must be a str or path-like (a GGUF file), got {describe(path)}")
    try:
        path = Path(path)
    except TypeError:  # a path-like whose __fspath__ gives bytes or another type
        raise InputTypeError(
            f"path must be a str or path-like (a GGUF file), got {describe(path)}"
        ) from None
    label = f"path {str(path)!r}"
    try:
        if not path.is_file():
            what = "does not exist" if not path.exists() else "is not a regular file"
            raise InputError(f"{label} {what}")
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                raise InputError(f"{label} is empty, not a GGUF file")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return _parse(mapped, label, source="file")
    except OSError as error:
        raise InputError(f"{label} cannot be read: {error}") from None


def read_gguf_bytes(data: bytes, *, name: str = "the data") -> GgufMetadata:
    """:func:`read_gguf` on bytes (an upload, or the first megabytes of a file).

    Parameters
    ----------
    data : bytes, bytearray or memoryview
        The file's bytes, or its first megabytes (enough to hold the metadata).
    name : str, optional
        What the data is, for error messages (the Check page says ``"the file"``): a short
        printable text.

    Returns
    -------
    GgufMetadata

    Raises
    ------
    InputError
        Data that is not GGUF, is cut inside its metadata, or is malformed (as
        :func:`read_gguf`); :class:`InputTypeError` for data that is not bytes, or a ``name``
        that is not a short printable text.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InputTypeError(f"data must be bytes, got {describe(data)}")
    if not isinstance(name, str):
        raise InputTypeError(f"name must be a short printable text, got {describe(name)}")
    if not name.strip() or not name.isprintable() or len(name) > _MAX_NAME:
        raise InputError(
            f"name must be a short printable text (1 to {_MAX_NAME} characters, not only "
            f"spaces), as error messages name the data by it, got {describe(name)}"
        )
    if not isinstance(data, bytes):  # bytes of the buffer, whatever its item size
        data = bytes(data)
    if len(data) == 0:
        raise InputError(f"{name} is empty, not a GGUF file")
    return _parse(data, name, source="bytes")


def _parse(buffer, label: str, *, source: str) -> GgufMetadata:
    cursor = _Cursor(buffer, label)
    head = bytes(buffer[:4])
    if head != _MAGIC:
        raise InputError(
            f"{label} is not a GGUF file: it starts with {head!r}, a GGUF file with b'GGUF'"
        )
    try:
        cursor.take(4)
        version = cursor.u32()
        if version not in (2, 3):
            swapped = struct.unpack(">I", struct.pack("<I", version))[0]
            if swapped in (2, 3):
                raise InputError(
                    f"{label} is a big-endian GGUF file; convert it with gguf-convert-endian "
                    "(this reader reads little-endian files, as llama.cpp on x86 and ARM does)"
                )
            raise InputError(f"{label} is GGUF version {version}; versions 2 and 3 are read")
        n_tensors = cursor.u64()
        n_keys = cursor.u64()
        if n_keys > MAX_KEYS or n_tensors > MAX_TENSORS:
            raise InputError(
                f"{label} is not a valid GGUF file: it declares {n_keys:,} keys and "
                f"{n_tensors:,} tensors (at most {MAX_KEYS:,} and {MAX_TENSORS:,} are read)"
            )
        metadata: dict[str, object] = {}
        types: dict[str, str] = {}
        skipped: dict[str, int] = {}
        for index in range(n_keys):
            cursor.where = f"the metadata (key {index + 1} of {n_keys})"
            key = cursor.string()
            value, type_name = _value(cursor, cursor.u32(), key)
            types[key] = type_name
            if isinstance(value, _Skipped):
                skipped[key] = value.count
            else:
                metadata[key] = value
        tensors: dict[str, tuple] = {}
        for index in range(n_tensors):
            cursor.where = f"the tensor list (tensor {index + 1} of {n_tensors})"
            name = cursor.string()
            n_dims = cursor.u32()
            if n_dims > 8:
                raise InputError(
                    f"{label} is not a valid GGUF file: tensor {name!r} has {n_dims} dimensions "
                    "(ggml has at most 4)"
                )
            shape = tuple(cursor.u64() for _ in range(n_dims))
            type_id = cursor.u32()
            offset = cursor.u64()
            tensors[name] = (shape, type_id, offset)
    except _Truncated as cut:
        raise InputError(
            f"{label} is truncated: it ends inside {cut.where}, at byte {cursor.size:,} "
            "(give at least the whole metadata: the first megabytes of the file)"
        ) from None
    alignment = metadata.get("general.alignment", 32)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise InputError(
            f"{label} is not a valid GGUF file: general.alignment must be a power of two, "
            f"got {alignment!r}"
        )
    data_start = -(-cursor.at // alignment) * alignment
    described: dict[str, GgufTensor] = {}
    truncated = False
    missing = []
    for name, (shape, type_id, offset) in tensors.items():
        type_name = _TENSOR_TYPES.get(type_id, (f"type {type_id}", None))[0]
        values = None
        if name in GGUF_ROPE_TENSORS:
            values, why = _rope_tensor(buffer, label, name, shape, type_id, data_start + offset)
            if why == "truncated":
                truncated = True
                missing.append(f"the values of {name} (the data ends before them)")
        described[name] = GgufTensor(name, shape, type_id, type_name, values)
    return GgufMetadata(
        metadata=metadata,
        value_types=types,
        tensors=described,
        version=version,
        source=source,
        truncated=truncated,
        missing=tuple(missing),
        skipped_arrays=skipped,
    )


def _rope_tensor(buffer, label, name, shape, type_id, start) -> tuple[np.ndarray | None, str]:
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if type_id not in _TENSOR_TYPES:
        raise InputError(
            f"{label}: tensor {name!r} is of ggml type {type_id}; llama.cpp's RoPE factors are "
            "F32 (F16, BF16 and F64 are also read here)"
        )
    if count > _MAX_ROPE_ELEMENTS:
        raise InputError(
            f"{label}: tensor {name!r} has {count:,} elements; a RoPE factor tensor has one "
            "per rotary pair"
        )
    dtype = np.dtype(_TENSOR_TYPES[type_id][1])
    end = start + count * dtype.itemsize
    if end > len(buffer):
        return None, "truncated"
    raw = np.frombuffer(bytes(buffer[start:end]), dtype=dtype)
    if type_id == 30:  # bfloat16: the upper half of a float32
        raw = (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(np.float32), ""


# --- pasted text: gguf-dump's output, llama.cpp's loader log, or key = value lines ------------

_DUMP_LINE = re.compile(
    r"^\s*\d+:\s*(?P<type>\[*[A-Z0-9]+\]*)\s*\|\s*(?P<count>\d+)\s*\|\s*(?P<key>[\w.\-]+)"
    r"(?:\s*=\s*(?P<value>.*))?$"
)
_DUMP_TENSOR = re.compile(
    r"^\s*\d+:\s*(?P<n>\d+)\s*\|\s*(?P<shape>[\d,\s]+)\|\s*(?P<type>\w+)\s*\|\s*(?P<name>\S+)\s*$"
)
_LOADER_LINE = re.compile(
    r"llama_model_loader:\s*-\s*kv\s+\d+:\s*(?P<key>[\w.\-]+)\s+(?P<type>(?:arr\[)?[\w,\s]+\]?)"
    r"\s*=\s*(?P<value>.*)$"
)
_LOADER_TYPES = {"f32": "FLOAT32", "f64": "FLOAT64", "u32": "UINT32", "i32": "INT32"}
_LOADER_TYPES.update({"u64": "UINT64", "i64": "INT64", "bool": "BOOL", "str": "STRING"})
_PLAIN_LINE = re.compile(r"^\s*(?P<key>[A-Za-z_][\w\-]*(?:\.[\w\-]+)+)\s*[=:]\s*(?P<value>.+)$")


def _literal(text: str) -> object:
    text = text.strip().rstrip(",")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text.startswith("["):
        inner = text.strip("[]").replace("...", "")
        items = [p.strip() for p in inner.split(",") if p.strip()]
        return tuple(_literal(item) for item in items)
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_gguf_dump(text: str) -> GgufMetadata:
    """Read pasted metadata: the output of ``gguf-dump`` (gguf-py's script), llama.cpp's loader
    log (``llama_model_loader: - kv 12: llama.rope.freq_base f32 = 500000.000000``), or
    ``key = value`` lines.

    A dump has no tensor values: a RoPE tensor it lists (``rope_freqs.weight``) is known to be
    there but its factors are not (``missing`` says so); without a tensor list (the loader log,
    ``--no-tensors``, plain lines) it is unknown whether the file has one. Arrays longer than six
    elements are cut by gguf-dump ("...") and flagged the same way.

    Raises
    ------
    InputError
        Text longer than :data:`MAX_GGUF_TEXT` characters, or with no metadata line.
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a string, got {type(text).__name__}")
    if len(text) > MAX_GGUF_TEXT:
        raise InputError(
            f"text must be at most {MAX_GGUF_TEXT:,} characters of metadata, got {len(text):,}"
        )
    metadata: dict[str, object] = {}
    types: dict[str, str] = {}
    tensors: dict[str, GgufTensor] = {}
    cut: list[str] = []
    has_tensor_list = False
    for line in text.splitlines():
        if "Dumping" in line and "tensor" in line:
            has_tensor_list = True
            continue
        if match := _DUMP_TENSOR.match(line):
            has_tensor_list = True
            shape = tuple(int(v) for v in match["shape"].split(",") if v.strip())
            while len(shape) > 1 and shape[-1] == 1:
                shape = shape[:-1]
            name = match["name"]
            tensors[name] = GgufTensor(name, shape, -1, match["type"])
            continue
        if match := _DUMP_LINE.match(line):
            key, value = match["key"], match["value"]
            kind = match["type"].strip("[]")
            nested = match["type"].startswith("[")
            types[key] = f"ARRAY[{kind}]" if nested else kind
            if value is None:
                continue
            parsed = _literal(value)
            if nested:
                parsed = parsed if isinstance(parsed, tuple) else (parsed,)
                if "..." in value or int(match["count"]) != len(parsed):
                    cut.append(key)
                    continue
            metadata[key] = parsed
            continue
        if match := _LOADER_LINE.match(line):
            key, kind = match["key"], match["type"].strip()
            value = match["value"]
            if kind.startswith("arr"):
                types[key] = "ARRAY"
                if "..." in value:
                    cut.append(key)
                    continue
                metadata[key] = _literal(value)
                continue
            types[key] = _LOADER_TYPES.get(kind, kind.upper())
            metadata[key] = _literal(value)
            continue
        if match := _PLAIN_LINE.match(line):
            key = match["key"]
            if key.startswith("GGUF.") or key in metadata:
                continue
            metadata[key] = _literal(match["value"])
            types[key] = "?"
    for key in ("GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"):
        metadata.pop(key, None)
        types.pop(key, None)
    if not metadata:
        raise InputError(
            "text has no metadata line: paste the output of gguf-dump (lines such as "
            "'12: FLOAT32 | 1 | llama.rope.freq_base = 500000.0'), llama.cpp's loader log, or "
            "key = value lines"
        )
    missing = [
        f"the whole of {key} (the dump cuts arrays after six elements)"
        for key in cut
        if not key.startswith(("tokenizer.", "general."))
    ]
    for name in GGUF_ROPE_TENSORS:
        if name in tensors:
            missing.append(f"the values of {name} (a dump lists tensors, not their values)")
    if not has_tensor_list:
        missing.append(
            "the tensor list (whether the file has rope_freqs or LongRoPE factor tensors)"
        )
    return GgufMetadata(
        metadata=metadata,
        value_types=types,
        tensors=tensors,
        version=None,
        source="dump",
        missing=tuple(missing),
        has_tensor_list=has_tensor_list,
    )
