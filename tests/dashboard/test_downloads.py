"""Downloads are files of at most MAX_DOWNLOAD_BYTES, written a block at a time (issue 40).

The RoPE lab's cos/sin cache at a head of 16,384 columns built a 1 GiB file (+4.5 GiB on the
server), and at 32,768 never arrived, with no message.
"""

from __future__ import annotations

import io
import json
import tracemalloc

import numpy as np
import pytest

import pe_core
from dashboard import exports
from dashboard.budget import REQUEST_BYTES
from dashboard.config import Config
from dashboard.views import rope as rope_view
from tests.apptest_helpers import new_app, no_errors

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}


def _peak(make):
    tracemalloc.start()
    try:
        result = make()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


class TestNpyFile:
    @pytest.mark.parametrize(
        "config",
        [Config(300, 24, 100.0, "split"), Config(7, 5, 10000.0, "vaswani")],
        ids=["split", "odd"],
    )
    def test_the_encoding_file_is_the_encoding(self, config):
        data = exports.encoding_npy(config)
        expected = pe_core.sinusoidal_encoding(config.n_positions, config.bank)
        np.testing.assert_array_equal(np.load(io.BytesIO(data)), expected)

    @pytest.mark.parametrize(
        "config",
        [{"head_dim": 64}, {"head_dim": 128, "rope_scaling": YARN}, {"head_dim": 10}],
        ids=["default", "yarn", "one-pair"],
    )
    @pytest.mark.parametrize("block_values", [exports.BLOCK_VALUES, 7 * 64, 1])
    def test_the_cache_file_is_the_stacked_cos_and_sin(self, config, block_values, monkeypatch):
        """Whole, in blocks of 7 positions (the last one shorter), and one position a block."""
        monkeypatch.setattr(exports, "BLOCK_VALUES", block_values)
        rope = pe_core.rope_from_config(config)
        loaded = np.load(io.BytesIO(exports.cos_sin_npy(300, rope)))
        assert loaded.dtype == np.float32
        np.testing.assert_array_equal(loaded, np.stack(pe_core.rope_cos_sin(300, rope)))

    def test_parts_that_do_not_fill_the_shape_are_a_bug(self):
        with pytest.raises(RuntimeError, match="do not fill"):
            exports.npy_file(
                (3, 2), np.float64, lambda: [np.zeros((2, 2))], "a test file", work_bytes=0
            )

    def test_a_file_over_the_limit_is_refused_before_computing(self):
        def never():
            raise AssertionError("computed the parts")

        with pytest.raises(pe_core.InputError, match=r"2,048 MiB, more than the 32 MiB this"):
            exports.npy_file((2, 8192, 32768), np.float32, never, "a cache", work_bytes=0)

    def test_work_over_the_budget_is_refused_before_computing(self):
        with pytest.raises(pe_core.InputError, match=r"more than the 128 MiB"):
            exports.npy_file((1,), np.float32, None, "a cache", work_bytes=REQUEST_BYTES + 1)


class TestCosSinCache:
    @pytest.mark.parametrize(
        ("head_dim", "positions"),
        [(128, 8192), (512, 8192), (1024, 4096), (16_384, 256), (32_768, 128)],
    )
    def test_positions_fit_one_download(self, head_dim, positions):
        rope = pe_core.rope_from_config({"head_dim": head_dim})
        assert exports.cos_sin_positions(8192, rope) == positions
        assert 2 * positions * head_dim * 4 <= exports.MAX_DOWNLOAD_BYTES

    def test_the_widest_head_is_built_within_the_budget(self):
        rope = pe_core.rope_from_config({"head_dim": 16_384, "rope_scaling": YARN})
        n = exports.cos_sin_positions(8192, rope)
        data, peak = _peak(lambda: exports.cos_sin_npy(n, rope))
        assert len(data) > exports.MAX_DOWNLOAD_BYTES - 2**12
        assert peak < REQUEST_BYTES, f"{peak / 2**20:.0f} MiB"

    def test_the_largest_cache_is_built_a_block_at_a_time(self):
        """Beside the 32 MiB file, a block's work (23 MiB measured), not the table in float64 and
        its float32 copy (96 MiB): built whole, they left ~500 MiB in glibc's heap after six
        sessions' downloads (issue 40)."""
        rope = pe_core.rope_from_config({"head_dim": 8192, "rope_scaling": YARN})
        assert rope.attention_factor != 1.0  # the float64 table, then scaled and copied
        n = exports.cos_sin_positions(8192, rope)
        data, peak = _peak(lambda: exports.cos_sin_npy(n, rope))
        assert len(data) > exports.MAX_DOWNLOAD_BYTES
        assert peak < len(data) + 40 * 2**20, f"{(peak - len(data)) / 2**20:.0f} MiB beside"
        np.testing.assert_array_equal(
            np.load(io.BytesIO(data)), np.stack(pe_core.rope_cos_sin(n, rope))
        )

    def test_the_largest_encoding_file_holds_it_about_once(self):
        config = Config(512, 8192, 10000.0, "vaswani")  # 32 MiB, the largest offered
        data, peak = _peak(lambda: exports.encoding_npy(config))
        assert len(data) > exports.MAX_DOWNLOAD_BYTES
        # The array and the file (not also a stacked or saved copy).
        assert peak < 2 * exports.MAX_DOWNLOAD_BYTES + 2**20, f"{peak / 2**20:.0f} MiB"

    @pytest.mark.parametrize("head_dim", [128, 8192])  # 8,192: the widest head the lab draws
    def test_the_page_says_when_the_cache_is_shortened(self, head_dim):
        text = json.dumps({"head_dim": head_dim})
        at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text)
        at.run()
        no_errors(at)
        (button,) = [b for b in at.get("download_button") if "cos/sin cache" in b.label]
        captions = " ".join(c.value for c in at.caption)
        if head_dim == 128:
            assert "(8,192 positions" in button.label
            assert "would be a file of" not in captions
        else:
            assert "(512 positions" in button.label
            assert "The cache of 8,192 positions would be a file of 512 MiB" in captions
            assert "pe_core.rope_cos_sin(8192, rope)" in captions
