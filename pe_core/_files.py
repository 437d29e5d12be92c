"""Reading named arrays from .npy, .npz and .safetensors files (or their bytes) with NumPy alone,
never unpickling, and picking a RoPE cache or inv_freq out of them by name (the command line's
and the Check page's input)."""

from __future__ import annotations

import io
import lzma
import math
import os
import struct
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from pe_core._numerics.checks import MAX_ELEMENTS, load_json
from pe_core.errors import InputError

__all__ = ["FORMATS", "VECTOR_NAMES", "find_vectors", "load_arrays", "read_arrays", "rope_inputs"]

#: The suffixes read.
FORMATS = (".npy", ".npz", ".safetensors")

#: A safetensors header larger than this is refused (real ones are kilobytes to a few MB).
MAX_HEADER_BYTES = 100 * 1024 * 1024

#: Most bytes an archive may unpack to by default: MAX_ELEMENTS float64 values.
MAX_UNPACKED_BYTES = MAX_ELEMENTS * 8

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


def read_arrays(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays in a file, by name (:func:`load_arrays` on its bytes).

    Parameters
    ----------
    path : str or path-like
        A ``.npy``, ``.npz`` or ``.safetensors`` file.

    Returns
    -------
    dict of str to ndarray

    Raises
    ------
    InputError
        A file that cannot be read, of another kind, or whose contents are malformed.
    """
    path = Path(path)
    label = f"FILE {str(path)!r}"
    if path.suffix.lower() not in FORMATS:
        raise InputError(_other_format(label))
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"{label} cannot be read: {error}") from None
    return load_arrays(data, path.name, label=label)


def load_arrays(
    data: bytes,
    name: str,
    *,
    max_unpacked_bytes: int = MAX_UNPACKED_BYTES,
    label: str | None = None,
) -> dict[str, np.ndarray]:
    """The arrays in a file's bytes, by name, read without unpickling anything.

    Parameters
    ----------
    data : bytes
        The file's contents.
    name : str
        The file's name; its suffix says the format: ``.npy`` (one array, named "array"),
        ``.npz`` (``np.savez``'s zip archive of .npy files) or ``.safetensors`` (its JSON
        header parsed here; BF16 tensors are returned as float32, exactly).
    max_unpacked_bytes : int
        Most bytes the members of a ``.npz`` may unpack to, from the sizes the archive declares,
        checked before anything is decompressed (a zip bomb is refused unopened).
    label : str, optional
        How messages name the file (by default its name, quoted).

    Returns
    -------
    dict of str to ndarray
        Arrays of real numbers (object arrays, which only a pickle could fill, are refused).

    Raises
    ------
    InputError
        Data of another format, malformed, or larger than the limits.
    """
    label = repr(name) if label is None else label
    suffix = Path(name).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(_other_format(label))
    if not data:
        raise InputError(f"{label} is empty")
    try:
        if suffix == ".npy":
            return {"array": _npy(data, label)}
        if suffix == ".npz":
            return _read_npz(data, label, max_unpacked_bytes)
        return _read_safetensors(data, label)
    except InputError:
        raise
    except (OSError, ValueError, EOFError, struct.error, zipfile.BadZipFile) as error:
        raise InputError(f"{label} cannot be read as {suffix}: {error}") from None


def _other_format(label: str) -> str:
    return (
        f"{label} must be a .npy, .npz or .safetensors file (never a pickle such as .pt); "
        "from PyTorch: numpy.savez('cache.npz', cos=cos.float().numpy(), "
        "sin=sin.float().numpy()) or safetensors.torch.save_file({'cos': cos, 'sin': sin}, "
        "'cache.safetensors')"
    )


def _npy(raw: bytes, label: str) -> np.ndarray:
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
    if count > MAX_ELEMENTS:
        raise InputError(
            f"{label} has {count:,} values, more than the memory budget of {MAX_ELEMENTS:,}"
        )
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


def _read_npz(data: bytes, label: str, max_unpacked_bytes: int) -> dict[str, np.ndarray]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(f"{label} is not a .npz file (not a zip archive)") from None
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
            arrays[key] = _npy(raw, what)
    return arrays


def _read_safetensors(data: bytes, label: str) -> dict[str, np.ndarray]:
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
    arrays = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        arrays[name] = _tensor(data, name, entry, data_start, size)
    return arrays


def _tensor(data: bytes, name: str, entry, data_start: int, size: int) -> np.ndarray:
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
    if count > MAX_ELEMENTS or not 0 <= begin <= end or data_start + end > size:
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
