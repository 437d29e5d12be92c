"""One request must never cost a gigabyte: every view and every download within the budget.

The budget (``dashboard.budget.REQUEST_BYTES``, 128 MiB) counts what Python and NumPy allocate
while a request runs, as ``tracemalloc`` sees it. Each view is run at the top of every range the
controls allow, with cold caches, and its peak is compared with the budget.
"""

from __future__ import annotations

import tracemalloc
from contextlib import contextmanager

import numpy as np
import pytest
import streamlit as st

import pe_core
from dashboard import exports, registry
from dashboard.budget import REQUEST_BYTES
from dashboard.config import Config
from dashboard.view_parts import embedding
from tests.apptest_helpers import new_app, no_errors

VIEWS = [view.slug for view in registry.VIEWS]

pytestmark = pytest.mark.timeout(600)


@contextmanager
def traced_peak():
    """Yields a dict whose "peak" is the largest traced allocation inside the block."""
    result = {}
    st.cache_data.clear()  # cold caches: the request computes everything itself
    st.cache_resource.clear()
    tracemalloc.start()
    try:
        yield result
    finally:
        result["peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


#: The largest requests the controls allow, per view (embeddings: its own largest inputs).
LARGEST = {"L": 1_000_000, "d": 8192, "base": 1e9}
EMBEDDINGS_LARGEST = {
    "emb_mode": "random",
    "emb_batch": 16,
    "emb_seq": 256,
    "emb_dropout": 0.5,
    "emb_seed": 7,
}


@pytest.mark.slow
@pytest.mark.parametrize("view", VIEWS)
def test_every_view_at_the_top_of_every_range_stays_within_the_budget(view):
    extra = EMBEDDINGS_LARGEST if view == "embeddings" else {}
    warm = new_app(view=view)  # the view's imports, outside the count (the order tests run in
    warm.run()  # decides what a worker imported before: the peak counted them when first)
    at = new_app(view=view, **LARGEST, **extra)
    with traced_peak() as traced:
        at.run()
    no_errors(at)
    assert traced["peak"] < REQUEST_BYTES, f"{view}: {traced['peak'] / 2**20:.0f} MiB"


@pytest.mark.slow
def test_embeddings_at_the_largest_shape_issue_18():
    # Issue 18: ?d=8192&view=embeddings&emb_mode=random&emb_batch=16&emb_seq=256 built three
    # 16 x 256 x 8192 float64 arrays (about 0.8 GiB, 1.06 GiB with dropout) per request.
    config = Config(2048, 8192, 10000.0, "vaswani")
    with traced_peak() as traced:
        data = embedding.embedding_data(config, None, (16, 256), 3, 0.02, True, 0.5, 4)
    assert data.total.shape == (16, 256, embedding.MAX_EMBEDDING_COLUMNS)
    assert traced["peak"] < REQUEST_BYTES / 2, f"{traced['peak'] / 2**20:.0f} MiB"


def test_embeddings_are_those_of_one_call_on_the_whole_batch():
    # The view draws and adds a block of rows at a time; the numbers must be those of the
    # layer applied to the whole batch at once (the old computation).
    config = Config(300, 24, 100.0, "split")
    saved = embedding.EMBEDDING_BLOCK_VALUES
    embedding.EMBEDDING_BLOCK_VALUES = 24 * 5  # blocks of 5 rows
    try:
        st.cache_data.clear()
        data = embedding.embedding_data(config, None, (3, 12), 11, 0.1, True, 0.3, 5)
    finally:
        embedding.EMBEDDING_BLOCK_VALUES = saved
    embeddings = np.random.default_rng(11).normal(0.0, 0.1, (3, 12, 24))
    encoding = pe_core.sinusoidal_encoding(12, 24, base=100.0, convention="split")
    total = pe_core.add_to_embeddings(embeddings, encoding, scale=True, dropout=0.3, rng=5)
    # The shown columns are kept as float32 (what the charts send): the nearest float32.
    np.testing.assert_array_equal(data.embeddings, (embeddings * np.sqrt(24)).astype(np.float32))
    np.testing.assert_array_equal(data.total, total.astype(np.float32))
    np.testing.assert_allclose(
        data.norms["sum (layer output)"], np.linalg.norm(total, axis=2).mean(axis=0), atol=1e-14
    )


def test_work_over_the_budget_is_refused_before_allocating():
    config = Config(2048, 8192, 10000.0, "vaswani")
    with traced_peak() as traced, pytest.raises(ValueError, match="more than the 128 MiB"):
        embedding.embedding_data(config, None, (16, 100_000), 0, 0.02, True, 0.0, 0)
    assert traced["peak"] < 2**20  # refused from the shape alone


class TestDownloads:
    def test_largest_npy_within_the_budget(self):
        config = Config(512, 8192, 10000.0, "vaswani")  # 2**22 values, the largest offered
        assert config.n_positions * config.d_model == exports.MAX_DOWNLOAD_ELEMENTS
        with traced_peak() as traced:
            data = exports.encoding_npy(config)
        assert len(data) > 8 * exports.MAX_DOWNLOAD_ELEMENTS
        assert traced["peak"] < REQUEST_BYTES

    @pytest.mark.slow
    def test_largest_csv_within_the_budget(self):
        config = Config(128, 8192, 10000.0, "vaswani")  # 2**20 values, the largest CSV
        with traced_peak() as traced:
            data = exports.encoding_csv(config)
        assert data.count(b"\n") == 129
        assert traced["peak"] < REQUEST_BYTES

    def test_csv_beyond_its_limit_is_refused(self):
        # Issue 18: an 85 MB CSV was built on click at L=512, d=8192 (8-9 s, +250 MiB).
        with pytest.raises(ValueError, match=r"download the \.npy file instead"):
            exports.encoding_csv(Config(512, 8192, 10000.0, "vaswani"))

    def test_the_page_offers_npy_only_beyond_the_csv_limit(self):
        at = new_app(view="example", L=512, d=8192)
        at.run()
        no_errors(at)
        labels = [b.label for b in at.get("download_button")]
        assert "Matrix as NPY" in labels and "Matrix as CSV" not in labels
        assert any("CSV is offered up to 1,048,576 values" in c.value for c in at.caption)


def test_a_thousand_unknown_url_keys_give_one_warning():
    # Issue 18: 1000 unknown URL keys gave 1000 warning boxes.
    at = new_app(**{f"junk{j}": "1" for j in range(1000)})
    at.run()
    no_errors(at)
    (warning,) = at.warning
    text = warning.value.replace("\\", "")
    assert "Ignored unknown URL parameters junk0, junk1, junk2, junk3, junk4 and 995 more" in text


def test_checking_the_largest_upload_adds_no_full_size_copy():
    # The Check view compares a table with what it should be a chunk of rows at a time and
    # caches only what it shows: an 8192 x 512 float32 upload (the 4,194,304-value limit)
    # costs no more than identifying it (before: 160 MiB against identify's 104 MiB).
    from dashboard.views import check

    table = pe_core.sinusoidal_encoding(8192, 512, dtype=np.float32)
    with traced_peak() as identify:
        pe_core.identify_encoding(table)
    with traced_peak() as checked:
        result = check._check(table)
    assert checked["peak"] <= 1.05 * identify["peak"], (checked["peak"], identify["peak"])
    assert checked["peak"] <= REQUEST_BYTES
    assert result.rebuilt_error == 0.0 and result.difference.shape == (200, 128)


class TestLargestRopeUpload:
    """Check my RoPE at the upload limit: a float32 cos/sin .npz of 20 MB is read, identified
    and its error by position computed within the request budget; a 20 MB bfloat16
    .safetensors (twice the values, widened to float32) is refused before identification."""

    def test_a_20_mb_float32_cache_fits_the_budget(self):
        import io

        from dashboard import uploads
        from dashboard.views.check import rope as check_rope

        rope = pe_core.rope_frequencies(128, base=500_000.0)
        rows = uploads.MAX_BYTES // (2 * 128 * 4) - 8  # the .npz headers take a few hundred bytes
        cos, sin = pe_core.rope_cos_sin(rows, rope)
        buffer = io.BytesIO()
        np.savez(buffer, cos=cos, sin=sin)
        data = buffer.getvalue()
        assert len(data) <= uploads.MAX_BYTES
        with traced_peak() as peak:
            read = check_rope.read_upload.__wrapped__(data, "cache.npz")
            found = pe_core.identify_rope(**read.inputs)
            _, error, _ = check_rope.error_by_position(found, read.inputs)
        assert peak["peak"] <= REQUEST_BYTES, peak["peak"] / 2**20
        assert found.rope_type == "default" and error.size == rows and error.max() <= 2**-25

    def test_a_20_mb_bfloat16_file_is_refused_by_the_budget(self):
        import json

        from dashboard import uploads
        from dashboard.views.check import rope as check_rope

        rows = uploads.MAX_BYTES // (2 * 2 * 128) - 8  # cos and sin stacked, bf16: 2 bytes each
        size = 2 * rows * 128 * 2
        entry = {"dtype": "BF16", "shape": [2, rows, 128], "data_offsets": [0, size]}
        header = json.dumps({"cos_sin": entry}).encode()
        data = len(header).to_bytes(8, "little") + header + bytes(size)
        assert len(data) <= uploads.MAX_BYTES
        with pytest.raises(pe_core.InputError, match="MiB one request of this app may use"):
            check_rope.read_upload.__wrapped__(data, "cache.safetensors")
