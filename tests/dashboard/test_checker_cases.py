"""Issue 53's cases on the Check page (AppTest): the same true answer the command line gives
(tests/core/test_checker_cases.py), through the page's uploads and paste boxes."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import pe_core
from tests.apptest_helpers import new_app


def words(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def everything(at) -> str:
    return " ".join(
        words(kind) for kind in (at.success, at.info, at.warning, at.error, at.markdown, at.caption)
    )


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def table_page(*, paste: str | None = None, upload: tuple[str, bytes] | None = None):
    at = new_app(view="check")
    at.run()
    if paste is not None:
        at.text_area(key="check_paste").input(paste)
    if upload is not None:
        at.file_uploader(key="check_upload").upload(*upload, "application/octet-stream")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rope_page(*, paste: str | None = None, upload=None, config: dict | None = None):
    at = new_app(view="check", check="RoPE")
    at.run()
    if paste is not None:
        at.text_area(key="rope_check_inv_freq").input(paste)
    if config is not None:
        at.text_area(key="rope_check_config").input(json.dumps(config))
    if upload is not None:
        at.file_uploader(key="rope_check_upload").upload(*upload, "application/octet-stream")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


FLOAT16 = pe_core.sinusoidal_encoding(np.arange(1, 65), 10).astype(np.float16)


class TestCase1:
    @pytest.mark.parametrize(
        ("how", "text"),
        [
            ("numpy print", str(FLOAT16)),
            ("repr", repr(FLOAT16)),
            ("list", str(FLOAT16.tolist())),
        ],
    )
    def test_a_float16_table_pasted_is_named_float16(self, how, text):
        at = table_page(paste=text)
        said = words(at.success)
        assert "vaswani convention, base 10000, positions from 1 to 64" in said, how
        assert "float16 rounding" in said, (how, said)
        assert "bfloat16" not in said and "no convention" not in everything(at).lower()
        assert "read as decimal text" in words(at.caption)

    @pytest.mark.parametrize("fmt", ["%.8g", "%.4f"])
    def test_a_float16_table_written_as_csv_is_named_float16(self, fmt):
        buffer = io.StringIO()
        np.savetxt(buffer, FLOAT16, fmt=fmt, delimiter=",")
        at = table_page(upload=("t.csv", buffer.getvalue().encode()))
        said = words(at.success)
        assert "float16 rounding, written with" in said, said
        # How sure: the format's rounding and the digits, both named.
        assert "stored in float16 and written as text" in words(at.markdown)


class TestCase2:
    def test_tolist_of_a_float32_inv_freq_is_float32(self):
        inv_freq = pe_core.rope_frequencies(128, base=500_000.0).inv_freq.astype(np.float32)
        at = rope_page(paste=str(inv_freq.tolist()))
        said = everything(at)
        assert "inv_freq in float32" in said and "float64" not in said


class TestCase6:
    def test_the_parameter_and_both_values_are_named(self):
        config = {
            "model_type": "llama",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "rope_theta": 10_000.0,
            "max_position_embeddings": 8192,
            "rope_scaling": {"rope_type": "linear", "factor": 4.0},
        }
        cos, sin = pe_core.rope_cos_sin(512, pe_core.rope_from_config(config))
        config["rope_scaling"]["factor"] = 2.0
        at = rope_page(upload=("cache.npz", npz(cos=cos, sin=sin)), config=config)
        headline = words(at.warning)
        assert "likely cause: different parameters: factor 4 in the data, 2 in the config" in (
            headline
        )


class TestCase7:
    def test_a_sinusoidal_table_given_to_the_rope_check(self):
        at = rope_page(upload=("table.npy", npy(pe_core.sinusoidal_encoding(512, 64))))
        said = words(at.warning)
        assert "a sinusoidal encoding table, not a rotary cache" in said
        assert "vaswani convention, base 10000" in said
        assert "What to check: sinusoidal" in said
        assert not at.success and "longrope" not in everything(at).lower()

    def test_a_rotary_cache_given_to_the_table_check(self):
        cos, sin = pe_core.rope_cos_sin(64, pe_core.rope_frequencies(32))
        at = table_page(upload=("cache.npz", npz(cos=cos, sin=sin)))
        said = words(at.warning)
        assert "a rotary (RoPE) encoding, not a sinusoidal table" in said
        assert "What to check: RoPE" in said


class TestCase8:
    @pytest.mark.parametrize("name", ["t.npz", "t.csv"])
    def test_the_page_reads_what_the_command_line_reads(self, name):
        table = pe_core.sinusoidal_encoding(100, 32).astype(np.float32)
        if name.endswith(".npz"):
            data = npz(pe=table)
        else:
            buffer = io.StringIO()
            np.savetxt(buffer, table, fmt="%.9g", delimiter=",")
            data = buffer.getvalue().encode()
        at = table_page(upload=(name, data))
        assert "vaswani convention, base 10000" in words(at.success)
        assert "float32 rounding" in words(at.success)


class TestCase9:
    def test_the_pasted_copy_says_what_the_upload_says(self):
        table = pe_core.sinusoidal_encoding(np.arange(1, 65), 16)
        with np.printoptions(threshold=10**6):
            pasted = table_page(paste=str(table))
        uploaded = table_page(upload=("t.npy", npy(table)))
        for at in (pasted, uploaded):
            said = words(at.info)
            assert "Positions start at 1" in said and "fairseq" in said
            assert not any("Likely mistake" in w.value for w in at.warning)


def test_a_table_written_as_text_is_checked_within_the_request_budget():
    """The printing's judgement (each value's digits, each story's slack) adds no full-size
    copies per story: a 1024 x 768 float32 table written with %.6g (7 MB of text) is read and
    checked within one request's memory budget."""
    import tracemalloc

    from dashboard import uploads
    from dashboard.budget import REQUEST_BYTES
    from dashboard.views.check.table import check_table

    table = pe_core.sinusoidal_encoding(1024, 768).astype(np.float32)
    buffer = io.StringIO()
    np.savetxt(buffer, table, fmt="%.6g", delimiter=",")
    data = buffer.getvalue().encode()
    tracemalloc.start()
    try:
        checked = check_table(*uploads.read_table("t.csv", data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= REQUEST_BYTES, f"{peak / 2**20:.0f} MiB"
    assert "written with 6 significant digits" in checked.verdict.summary()
