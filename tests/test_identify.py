"""Identifying a matrix's convention, base and first position."""

import numpy as np
import pytest

import pe_core
from pe_core import CONVENTIONS, identify_encoding, sinusoidal_encoding


class TestIdentify:
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize("d_model", [16, 64, 512, 7])
    @pytest.mark.parametrize("base", [100.0, 10000.0, 500000.0])
    def test_finds_what_made_it(self, convention, d_model, base):
        matrix = sinusoidal_encoding(60, d_model, base=base, convention=convention)
        found = identify_encoding(matrix)
        assert (found.convention, found.base, found.start) == (convention, base, 0)
        assert found.matches and found.precision == "exact in float64"
        assert not found.transposed

    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize("d_model", range(2, 13))
    @pytest.mark.parametrize("base", [100.0, 500.0, 10000.0, 1e5])
    @pytest.mark.parametrize("start", [0, 2, 100])
    def test_every_exact_small_table(self, convention, d_model, base, start):
        # Issue 18: at d_model 3 (one pair and an unpaired sin column) only base 10000 was
        # tried, so 18 of these 396 exact tables were "not explained by any convention". The
        # unpaired sin column now gives its own frequency.
        matrix = sinusoidal_encoding(
            start + np.arange(64), d_model, base=base, convention=convention
        )
        found = identify_encoding(matrix)
        assert found.matches and found.max_abs_error <= 1e-12
        assert found.start == start

    def test_no_negative_zero(self):
        found = identify_encoding(sinusoidal_encoding(-1e-12 + np.arange(30), 8))
        assert "from 0;" in found.summary() and "-0" not in found.summary()

    @pytest.mark.parametrize("start", [2, 1000, 40_000])  # fairseq starts at padding_idx + 1
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    def test_offsets(self, start, convention):
        matrix = sinusoidal_encoding(start + np.arange(40), 32, convention=convention)
        found = identify_encoding(matrix)
        assert (found.convention, found.base, found.start) == (convention, 10000.0, start)

    @pytest.mark.parametrize(
        ("dtype", "level"),
        [
            (np.float32, "float32 rounding"),
            (np.float16, "float16 rounding"),
            ("bfloat16", "bfloat16 rounding"),
        ],
    )
    def test_low_precision_copies(self, dtype, level):
        exact = sinusoidal_encoding(2 + np.arange(100), 64, convention="tensor2tensor")
        bfloat16 = dtype == "bfloat16"
        matrix = pe_core.quantize(exact, "bfloat16") if bfloat16 else exact.astype(dtype)
        found = identify_encoding(matrix)
        assert (found.convention, found.base, found.start) == ("tensor2tensor", 10000.0, 2)
        assert found.matches and found.precision == level

    def test_transposed(self):
        found = identify_encoding(sinusoidal_encoding(100, 32, convention="split").T)
        assert found.transposed and found.convention == "split" and found.matches
        assert "transposed" in found.summary()

    def test_garbage_is_no_match(self):
        noise = np.random.default_rng(0).uniform(-1, 1, size=(50, 16))
        found = identify_encoding(noise)
        assert not found.matches and found.precision == "no match"
        assert found.summary().startswith("no convention explains this matrix")

    def test_a_corrupted_cell_is_located(self):
        matrix = sinusoidal_encoding(80, 32)
        matrix[17, 5] += 0.5
        found = identify_encoding(matrix)
        assert not found.matches
        assert found.worst_cell == (17, 5)

    def test_equivalent_conventions_report_the_simplest(self):
        # tensor2tensor with base b equals split with base b**(h / (h - 1)): the same matrix.
        matrix = sinusoidal_encoding(50, 4, base=10000.0, convention="split")
        found = identify_encoding(matrix)
        assert found.matches and found.max_abs_error == 0.0
        assert (found.convention, found.base) == ("tensor2tensor", 100.0)

    @pytest.mark.parametrize("bad", [np.zeros((1, 8)), np.zeros(8), [[np.nan, 1.0], [0.0, 1.0]]])
    def test_bad_input(self, bad):
        with pytest.raises(ValueError, match="matrix"):
            identify_encoding(bad)
