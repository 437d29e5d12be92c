"""Rounding to float64/32/16 and bfloat16."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from pe_core import PRECISIONS, quantize


class TestQuantize:
    def test_literal_bfloat16(self):
        assert quantize([257.0, 1 / 3, -1.0], "bfloat16").tolist() == [256.0, 0.333984375, -1.0]

    def test_literal_float16(self):
        assert quantize([2049.0, 2051.0, 0.1], "float16").tolist() == [
            2048.0,
            2052.0,
            0.0999755859375,
        ]

    def test_float32_and_float64(self):
        assert quantize([0.1], "float32")[0] == float(np.float32(0.1))
        assert quantize([0.1], "float64")[0] == 0.1

    def test_returns_float64_same_shape(self):
        got = quantize(np.ones((2, 3), dtype=np.float32), "float16")
        assert got.dtype == np.float64 and got.shape == (2, 3)

    def test_accepts_dtype_objects(self):
        assert quantize([2049.0], np.float16)[0] == 2048.0

    def test_bfloat16_no_double_rounding(self):
        # 1 + 2**-8 + 2**-40 lies just above the tie between 1 and 1 + 2**-7: nearest is the latter.
        # Going through float32 first would round to the tie and then to even (1.0).
        x = 1 + 2.0**-8 + 2.0**-40
        assert quantize([x], "bfloat16")[0] == 1 + 2.0**-7

    def test_bfloat16_ties_to_even(self):
        assert quantize([1 + 2.0**-8], "bfloat16")[0] == 1.0
        assert quantize([1 + 3 * 2.0**-8], "bfloat16")[0] == 1 + 2.0**-6

    def test_bfloat16_subnormals(self):
        tiny = 2.0**-133  # smallest bfloat16 subnormal
        assert_array_equal(quantize([tiny, 1.4 * tiny, 0.4 * tiny], "bfloat16"), [tiny, tiny, 0.0])

    @pytest.mark.parametrize("name", ["float16", "float32"])
    def test_matches_numpy_casts(self, name):
        values = np.random.default_rng(1).normal(scale=100, size=10_000)
        assert_array_equal(quantize(values, name), values.astype(name).astype(float))

    def test_matches_ml_dtypes_on_float32_inputs(self):
        ml_dtypes = pytest.importorskip("ml_dtypes")
        rng = np.random.default_rng(2)
        values = np.concatenate(
            [rng.normal(size=20_000), rng.normal(scale=1e-39, size=2_000), [0.0, -0.0, 3e38]]
        ).astype(np.float32)
        expected = values.astype(ml_dtypes.bfloat16).astype(np.float64)
        assert_array_equal(quantize(values.astype(np.float64), "bfloat16"), expected)

    @pytest.mark.parametrize("name", list(PRECISIONS))
    def test_idempotent(self, name):
        values = np.random.default_rng(3).uniform(-1, 1, size=1000)
        once = quantize(values, name)
        assert_array_equal(quantize(once, name), once)

    def test_overflow_refused(self):
        with pytest.raises(ValueError, match="largest finite float16"):
            quantize([70000.0], "float16")
        assert quantize([65519.0], "float16")[0] == 65504.0  # rounds down, not to inf

    def test_bad_inputs(self):
        with pytest.raises(ValueError, match="precision must be one of"):
            quantize([1.0], "float8")
        with pytest.raises(TypeError, match="precision must be one of"):
            quantize([1.0], 16)
        with pytest.raises(ValueError, match="finite"):
            quantize([np.nan], "float32")
        with pytest.raises(TypeError, match="x must be an array of real numbers"):
            quantize(["a"], "float32")
