"""Hostile bytes for the file reader behind the Check page's RoPE uploads and the command line
(``pe_core.files``): valid files cut, overwritten or spliced give their arrays or an
InputError, never another exception, a pickle load or an unbounded allocation."""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pe_core
import pe_core.files
from pe_core.files import load_arrays, rope_inputs
from tests.fuzz.test_core import EXAMPLES

pytestmark = pytest.mark.fuzz

#: The upload limit the page passes (20 MB), and the most a read may allocate beyond its input.
LIMIT = 20_000_000
PEAK_BYTES = 3 * LIMIT


def _npz(compressed: bool) -> bytes:
    cos, sin = pe_core.rope_cos_sin(12, pe_core.rope_frequencies(8))
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, cos=cos, sin=sin)
    return buffer.getvalue()


def _npy() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.linspace(0, 1, 16, dtype=np.float32).reshape(2, 8))
    return buffer.getvalue()


def _safetensors() -> bytes:
    raw = np.arange(8, dtype="<f4").tobytes()
    header = json.dumps({"cos": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 32]}})
    return struct.pack("<Q", len(header)) + header.encode() + raw


FILES = {
    "cache.npz": _npz(False),
    "compressed.npz": _npz(True),
    "table.npy": _npy(),
    "cache.safetensors": _safetensors(),
}


@st.composite
def damaged(draw) -> tuple[str, bytes]:
    """A valid file, then a few edits: bytes overwritten (sizes and headers included), the end
    cut, or bytes inserted."""
    name = draw(st.sampled_from(sorted(FILES)))
    data = bytearray(FILES[name])
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["overwrite", "cut", "insert"]))
        patch = draw(
            st.one_of(
                st.binary(min_size=1, max_size=8),
                st.sampled_from([b"\xff\xff\xff\x7f", b"\x00\x00\x00\x00", b"|O", b"(1000000,"]),
            )
        )
        if edit == "overwrite":
            data[where : where + len(patch)] = patch
        elif edit == "cut":
            del data[where:]
        else:
            data[where:where] = patch
    return name, bytes(data)


def _no_pickle_load(*args, **kwargs):
    raise AssertionError("a file was unpickled")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(file=damaged())
def test_damaged_files_give_arrays_or_an_input_error(file, monkeypatch_pickle):
    name, data = file
    tracemalloc.start()
    try:
        arrays = load_arrays(data, name, max_unpacked_bytes=LIMIT)
    except pe_core.InputError as error:
        assert str(error)
        return
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak <= PEAK_BYTES, (name, peak)
    for key, array in arrays.items():
        assert isinstance(key, str) and array.dtype.kind in "iuf", (name, key, array.dtype)
    with contextlib.suppress(pe_core.InputError):
        rope_inputs(arrays)


def test_regression_a_table_of_contents_of_a_newer_zip_version_is_an_input_error():
    """Found by the test above: a member whose "version needed to extract" reads 6.4 made
    zipfile raise NotImplementedError from the archive's constructor (not an InputError)."""
    buffer = io.BytesIO()
    np.savez(buffer, cos=np.ones((2, 4)), sin=np.zeros((2, 4)))
    data = bytearray(buffer.getvalue())
    entry = data.index(b"PK\x01\x02")  # the first entry of the central directory
    data[entry + 6 : entry + 8] = struct.pack("<H", 64)  # version needed to extract: 6.4
    with pytest.raises(pe_core.InputError, match="zip table of contents"):
        load_arrays(bytes(data), "cache.npz")


@pytest.fixture(scope="module")
def monkeypatch_pickle():
    """pickle.loads and pickle.load fail the test if anything calls them during the module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pickle, "loads", _no_pickle_load)
        patch.setattr(pickle, "load", _no_pickle_load)
        yield


#: Pieces of numpy's print, lists and reprs, to paste in any order (issue 53: the one reader
#: reads brackets, wrapped rows and a repr's call).
BRACKET_PIECES = (
    "[", "]", "[[", "]]", "], [", "]\n [", "array(", "tensor(", "np.array(", ")",
    ", dtype=float32)", ", dtype=torch.bfloat16)", "x = ", "0.5", "-1.e-05", "1.0000e+00", "nan",
    "inf", "...", ",",
    " ", "\n", "\r\n", "  ", "\t", "1e999", "−1", "\u200b", "{", "'", "grad_fn=<AddBackward0>",
)  # fmt: skip


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(BRACKET_PIECES), max_size=40).map("".join) | st.text(max_size=60))
def test_any_text_is_an_array_or_an_input_error(text):
    """parse_text gives an array (1-D or more, finite or not: the checks refuse non-finite
    values) or an InputError naming the text, never another exception or a warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            found = pe_core.files.parse_text(text)
        except pe_core.InputError as error:
            assert "the pasted text" in str(error)
            return
    array = found["array"]
    assert array.dtype == np.float64 and array.size >= 1
    assert found.written["array"].container == "decimal"
