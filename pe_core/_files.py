"""Reading named arrays from .npy, .npz and .safetensors files with NumPy alone, never unpickling
(the command line's input)."""

from __future__ import annotations

import math
import os
import struct
import zipfile
from pathlib import Path

import numpy as np

from pe_core._validation import MAX_ELEMENTS, load_json
from pe_core.errors import InputError

__all__ = ["read_arrays"]

#: A safetensors header larger than this is refused (real ones are kilobytes to a few MB).
MAX_HEADER_BYTES = 100 * 1024 * 1024

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
    """The arrays in a file, by name.

    Parameters
    ----------
    path : str or path-like
        A ``.npy`` file (one array, named "array"), a ``.npz`` archive (read with
        ``allow_pickle=False``: object arrays are refused) or a ``.safetensors`` file (its
        JSON header parsed here; BF16 tensors are returned as float32, exactly).

    Returns
    -------
    dict of str to ndarray

    Raises
    ------
    InputError
        A file that cannot be read, of another kind, or whose contents are malformed.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            return {"array": _checked(np.load(path, allow_pickle=False), "array")}
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                return {name: _checked(archive[name], name) for name in archive.files}
        if suffix == ".safetensors":
            return _read_safetensors(path)
    except InputError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, struct.error) as error:
        raise InputError(f"FILE {str(path)!r} cannot be read as {suffix}: {error}") from None
    raise InputError(
        f"FILE must be a .npy, .npz or .safetensors file (never a pickle such as .pt), got "
        f"{path.name!r}; from PyTorch: numpy.savez('cache.npz', cos=cos.float().numpy(), "
        "sin=sin.float().numpy()) or safetensors.torch.save_file({'cos': cos, 'sin': sin}, "
        "'cache.safetensors')"
    )


def _checked(array: np.ndarray, name: str) -> np.ndarray:
    if array.dtype.kind not in "iuf":
        raise InputError(f"array {name!r} must hold real numbers, got dtype {array.dtype}")
    return array


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    size = path.stat().st_size
    with path.open("rb") as handle:
        prefix = handle.read(8)
        if len(prefix) != 8:
            raise InputError(f"FILE {str(path)!r} is too short for a safetensors header")
        (header_size,) = struct.unpack("<Q", prefix)
        if header_size > min(MAX_HEADER_BYTES, size - 8):
            raise InputError(
                f"FILE {str(path)!r}: the safetensors header declares {header_size:,} bytes, "
                f"more than the file holds or than {MAX_HEADER_BYTES:,}"
            )
        header = load_json(handle.read(header_size), name="the safetensors header")
        data_start = 8 + header_size
        if not isinstance(header, dict):
            raise InputError("the safetensors header must be a JSON object")
        arrays = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            arrays[name] = _tensor(handle, name, entry, data_start, size)
    return arrays


def _tensor(handle, name: str, entry, data_start: int, size: int) -> np.ndarray:
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
    handle.seek(data_start + begin)
    array = np.frombuffer(handle.read(end - begin), dtype=dtype).reshape(shape)
    if dtype_name == "BF16":  # the upper half of a float32: exact
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(array.dtype.newbyteorder("="))
