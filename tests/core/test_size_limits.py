"""Functions whose cost grows faster than their result refuse past their own limit, before
allocating (issue 40: relative_rotation(1, 16384) and learned_position_table(16384, 16384) built
2 GiB each, in 15 and 22 s; reference_encoding(1_000_000, 4) looped for 22 s)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import pe_core


def _refused_cheaply(call, match: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(pe_core.InputError, match=match):
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The arguments themselves (a bank of 2**20 columns is 20 MiB), not the result.
    assert peak < 32 * 2**20, f"{peak / 2**20:.0f} MiB before refusing"


class TestRelativeRotation:
    def test_the_widest_matrix_is_built(self):
        d = pe_core.MAX_ROTATION_D_MODEL
        assert d == 4096
        matrix = pe_core.relative_rotation(3, d)
        assert matrix.shape == (d, d)
        np.testing.assert_allclose(
            matrix @ pe_core.sinusoidal_encoding([5], d)[0],
            pe_core.sinusoidal_encoding([8], d)[0],
            atol=1e-13,
        )

    @pytest.mark.parametrize("d_model", [4098, 16_384, 2**20])
    def test_wider_is_refused_naming_the_limit(self, d_model):
        _refused_cheaply(
            lambda: pe_core.relative_rotation(1, d_model),
            rf"d_model must be at most 4,096 \(MAX_ROTATION_D_MODEL\).*got {d_model:,}",
        )

    def test_a_wide_bank_is_refused_too(self):
        bank = pe_core.sinusoidal_bank(8192)
        _refused_cheaply(lambda: pe_core.relative_rotation(1, bank), "MAX_ROTATION_D_MODEL")


class TestLearnedPositionTable:
    def test_the_limit_is_exact(self):
        assert pe_core.MAX_LEARNED_ELEMENTS == 2**26
        assert pe_core.learned_position_table(4, 2**10).shape == (4, 1024)

    @pytest.mark.parametrize(("n", "d"), [(16_384, 16_384), (2**26 + 1, 1), (8193, 8192)])
    def test_more_is_refused_naming_the_limit(self, n, d):
        _refused_cheaply(
            lambda: pe_core.learned_position_table(n, d),
            rf"limited to 67,108,864 values \(MAX_LEARNED_ELEMENTS, 2\*\*26\): .* = {n * d:,} is",
        )


class TestReferenceEncoding:
    def test_up_to_the_limit_it_matches_the_fast_path(self):
        assert pe_core.MAX_REFERENCE_ELEMENTS == 2**20
        np.testing.assert_allclose(
            pe_core.reference_encoding(64, 8), pe_core.sinusoidal_encoding(64, 8), atol=1e-12
        )

    @pytest.mark.parametrize(
        ("positions", "d_model"), [(1_000_000, 4), (2**18 + 1, 4), (np.arange(3.0), 2**19)]
    )
    def test_more_is_refused_naming_the_limit(self, positions, d_model):
        _refused_cheaply(
            lambda: pe_core.reference_encoding(positions, d_model),
            r"limited to 1,048,576 entries \(MAX_REFERENCE_ELEMENTS, 2\*\*20\): .*; use sinusoid",
        )
