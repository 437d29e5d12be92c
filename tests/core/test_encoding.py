"""Encodings: literal values, conventions, the loop reference, float32/16/bfloat16, block means."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import pe_core
from pe_core import (
    CONVENTIONS,
    block_mean_encoding,
    column_roles,
    frequencies,
    reference_encoding,
    sinusoidal_encoding,
    wavelengths,
)
from pe_core._numerics.kernels import exact_phasor_rows, phasors, two_product


class TestLiteralValues:
    def test_base_100_d4(self):
        expected = [
            [0, 1, 0, 1],
            [0.84147098, 0.54030231, 0.09983342, 0.99500417],
            [0.90929743, -0.41614684, 0.19866933, 0.98006658],
            [0.14112001, -0.9899925, 0.29552021, 0.95533649],
        ]
        assert_allclose(sinusoidal_encoding(4, 4, base=100), expected, atol=5e-9)
        assert_allclose(reference_encoding(4, 4, base=100), expected, atol=5e-9)

    @pytest.mark.parametrize(
        ("convention", "expected"),
        [
            ("vaswani", [0.841471, 0.540302, 0.010000, 0.999950]),
            ("tensor2tensor", [0.841471, 0.000100, 0.540302, 1.000000]),
            ("split", [0.841471, 0.010000, 0.540302, 0.999950]),
        ],
    )
    def test_check_values_position_1(self, convention, expected):
        row = sinusoidal_encoding([1], 4, convention=convention)[0]
        assert_allclose(row, expected, atol=5e-7)

    def test_position_zero_is_sin_zero_cos_one(self):
        row = sinusoidal_encoding(1, 6)[0]
        assert_array_equal(row, [0, 1, 0, 1, 0, 1])

    def test_odd_d_model_rules(self):
        # d_model = 5 at position 1, base 100: w = 100**(-2i/5) for i = 0, 1, 2.
        w = [1.0, 100 ** (-2 / 5), 100 ** (-4 / 5)]
        s, c = np.sin(w), np.cos(w)
        vaswani = sinusoidal_encoding([1], 5, base=100)[0]
        assert_allclose(vaswani, [s[0], c[0], s[1], c[1], s[2]], rtol=0, atol=1e-15)
        split = sinusoidal_encoding([1], 5, base=100, convention="split")[0]
        assert_allclose(split, [s[0], s[1], s[2], c[0], c[1]], rtol=0, atol=1e-15)
        # tensor2tensor: h = 2 pairs with w = [1, 1/base], then a zero column.
        t2t = sinusoidal_encoding([1], 5, base=100, convention="tensor2tensor")[0]
        assert_allclose(t2t, [math.sin(1), math.sin(0.01), math.cos(1), math.cos(0.01), 0])

    def test_distilbert_odd_formula(self):
        # HF DistilBERT create_sinusoidal_embeddings, written out for d_model = 7.
        dim, n_pos = 7, 50
        position_enc = np.array(
            [
                [pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                for pos in range(n_pos)
            ]
        )
        expected = np.zeros((n_pos, dim))
        expected[:, 0::2] = np.sin(position_enc[:, 0::2])
        expected[:, 1::2] = np.cos(position_enc[:, 1::2])
        assert_allclose(sinusoidal_encoding(n_pos, dim), expected, rtol=0, atol=1e-13)

    def test_marian_odd_formula(self):
        # HF MarianSinusoidalPositionalEmbedding._init_weight, for d_model = 7.
        dim, n_pos = 7, 50
        position_enc = np.array(
            [
                [pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                for pos in range(n_pos)
            ]
        )
        sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
        expected = np.zeros((n_pos, dim))
        expected[:, :sentinel] = np.sin(position_enc[:, 0::2])
        expected[:, sentinel:] = np.cos(position_enc[:, 1::2])
        got = sinusoidal_encoding(n_pos, dim, convention="split")
        assert_allclose(got, expected, rtol=0, atol=1e-13)

    def test_tensor2tensor_timing_signal(self):
        # tensor2tensor get_timing_signal_1d (min_timescale 1, max_timescale base), in NumPy.
        length, channels, base = 40, 9, 10000.0
        num_timescales = channels // 2
        increment = math.log(base) / max(num_timescales - 1, 1)
        inv_timescales = np.exp(np.arange(num_timescales) * -increment)
        scaled = np.arange(length)[:, None] * inv_timescales[None, :]
        expected = np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1)
        expected = np.pad(expected, [[0, 0], [0, channels % 2]])
        got = sinusoidal_encoding(length, channels, base=base, convention="tensor2tensor")
        assert_allclose(got, expected, rtol=0, atol=1e-12)


class TestFrequencies:
    def test_paper_spacing(self):
        assert_allclose(frequencies(8, base=10000), 10000.0 ** (-np.arange(4) / 4), rtol=1e-15)

    def test_tensor2tensor_endpoints(self):
        w = frequencies(10, base=10000, convention="tensor2tensor")
        assert w[0] == 1.0
        assert w[-1] == 1e-4
        assert_allclose(wavelengths(10, convention="tensor2tensor")[-1], 2 * np.pi * 1e4)

    def test_tensor2tensor_single_and_no_pair(self):
        assert_array_equal(frequencies(2, convention="tensor2tensor"), [1.0])
        assert_array_equal(frequencies(3, convention="tensor2tensor"), [1.0])
        assert frequencies(1, convention="tensor2tensor").size == 0

    @pytest.mark.parametrize("d_model", [2, 3, 16, 511, 512])
    def test_wavelength_progression(self, d_model):
        lam = wavelengths(d_model, base=10000)
        assert lam[0] == pytest.approx(2 * np.pi)
        # Geometric: constant ratio base**(2/d).
        if lam.size > 1:
            assert_allclose(lam[1:] / lam[:-1], 10000 ** (2 / d_model), rtol=1e-13)
        if d_model % 2 == 0:
            assert lam[-1] == pytest.approx(2 * np.pi * 10000 ** (1 - 2 / d_model), rel=1e-14)

    def test_counts_per_convention(self):
        assert frequencies(7).size == 4
        assert frequencies(7, convention="split").size == 4
        assert frequencies(7, convention="tensor2tensor").size == 3

    def test_same_bits_as_reference_formula(self):
        for d_model in (4, 9, 64, 1000):
            expected = [10000.0 ** (-2 * i / d_model) for i in range((d_model + 1) // 2)]
            assert_array_equal(frequencies(d_model), expected)


class TestColumnRoles:
    def test_interleaved(self):
        pair, role = column_roles(5)
        assert pair.tolist() == [0, 0, 1, 1, 2]
        assert role.tolist() == ["sin", "cos", "sin", "cos", "sin"]

    def test_tensor2tensor_zero_column(self):
        pair, role = column_roles(5, convention="tensor2tensor")
        assert pair.tolist() == [0, 1, 0, 1, -1]
        assert role.tolist() == ["sin", "sin", "cos", "cos", "zero"]

    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize("d_model", [1, 2, 7, 8])
    def test_roles_describe_the_encoding(self, convention, d_model):
        positions = np.array([0.0, 1.0, 2.5, 7.0])
        pair, role = column_roles(d_model, convention=convention)
        w = frequencies(d_model, convention=convention)
        expected = np.zeros((positions.size, d_model))
        for column in range(d_model):
            if role[column] == "sin":
                expected[:, column] = np.sin(positions * w[pair[column]])
            elif role[column] == "cos":
                expected[:, column] = np.cos(positions * w[pair[column]])
        got = sinusoidal_encoding(positions, d_model, convention=convention)
        assert_allclose(got, expected, rtol=0, atol=1e-15)


class TestAgainstReference:
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize("d_model", [1, 2, 3, 4, 7, 16, 33])
    @pytest.mark.parametrize("length", [0, 1, 2, 17, 300])
    def test_vectorized_equals_loops(self, convention, d_model, length):
        fast = sinusoidal_encoding(length, d_model, convention=convention)
        slow = reference_encoding(length, d_model, convention=convention)
        assert fast.shape == slow.shape == (length, d_model)
        assert_allclose(fast, slow, rtol=0, atol=1e-12)

    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    def test_long_blocked_path(self, convention):
        # 5000 rows x 64: many blocks of the angle-addition kernel, plus a partial block.
        fast = sinusoidal_encoding(5003, 64, base=500.0, convention=convention)
        slow = reference_encoding(5003, 64, base=500.0, convention=convention)
        assert_allclose(fast, slow, rtol=0, atol=1e-12)

    def test_arbitrary_positions(self):
        positions = [-3.5, 0.25, 1e4 + 0.125, 7, -1e3]
        for convention in CONVENTIONS:
            assert_allclose(
                sinusoidal_encoding(positions, 9, convention=convention),
                reference_encoding(positions, 9, convention=convention),
                rtol=0,
                atol=1e-12,
            )

    def test_progression_with_offset_and_step(self):
        # fairseq numbers positions from padding_idx + 1; strided positions use the same kernel.
        positions = 2 + 3 * np.arange(400)
        assert_allclose(
            sinusoidal_encoding(positions, 32),
            reference_encoding(positions, 32),
            rtol=0,
            atol=1e-12,
        )
        assert_allclose(
            sinusoidal_encoding(positions, 32),
            sinusoidal_encoding(2 + 3 * np.arange(400.0) + 0.0, 32),
            rtol=0,
            atol=0,
        )

    def test_negative_step(self):
        positions = np.arange(500, -500, -1)
        assert_allclose(
            sinusoidal_encoding(positions, 16), reference_encoding(positions, 16), atol=1e-12
        )


def _exact_encoding(positions, d_model, convention="vaswani"):
    """Oracle to ~1e-19: exact angle p + e (Dekker), then sin/cos in extended precision."""
    w = frequencies(d_model, convention=convention)
    p, e = two_product(np.asarray(positions, dtype=float)[:, None], w[None, :])
    p, e = p.astype(np.longdouble), e.astype(np.longdouble)
    sines = np.sin(p) * np.cos(e) + np.cos(p) * np.sin(e)
    cosines = np.cos(p) * np.cos(e) - np.sin(p) * np.sin(e)
    pair, role = column_roles(d_model, convention=convention)
    out = np.zeros((p.shape[0], d_model), dtype=np.longdouble)
    out[:, role == "sin"] = sines[:, pair[role == "sin"]]
    out[:, role == "cos"] = cosines[:, pair[role == "cos"]]
    return out


class TestPhasorsByDigits:
    """exp(i m w) of whole multipliers from one table per base-64 digit (the RoPE lab's score
    and bound curves), against the direct exact tables."""

    freqs = frequencies(512, base=500_000.0)

    @pytest.mark.parametrize(
        "multipliers",
        [
            np.unique(np.round(np.geomspace(1, 1.25e7, 400))),  # up to 4 digits
            np.array([0.0, 63, 64, 4095, 4096, 2.0**40 + 3, 2.0**53 - 1]),
            -np.arange(0.0, 200.0, 3.0),  # negative: the conjugate
        ],
    )
    def test_within_a_few_ulps_of_the_direct_tables(self, multipliers):
        rows = list(exact_phasor_rows(multipliers, self.freqs, rows=37))  # several blocks
        table = np.concatenate([block for _, block in rows])
        assert [chunk.start for chunk, _ in rows] == list(range(0, multipliers.size, 37))
        assert_allclose(table, phasors(multipliers, self.freqs), rtol=0, atol=1e-15)

    def test_zero_digits_multiply_by_exactly_one(self):
        # A multiplier of one digit: its row is the direct table's, to the bit.
        multipliers = np.arange(64.0)
        ((_, table),) = exact_phasor_rows(multipliers, self.freqs, rows=64)
        assert np.array_equal(table, phasors(multipliers, self.freqs))

    def test_not_whole_multipliers_use_the_direct_tables(self):
        multipliers = np.array([0.5, 3.0, 1e6 + 0.25])
        ((_, table),) = exact_phasor_rows(multipliers, self.freqs, rows=8)
        assert np.array_equal(table, phasors(multipliers, self.freqs))


@pytest.mark.skipif(
    np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
    reason="np.longdouble is float64 on this platform: no extended-precision oracle",
)
class TestAccuracyAtLongContext:
    rows = np.arange(0, 100_000, 997)

    def test_float64_within_a_few_ulps(self):
        got = sinusoidal_encoding(100_000, 256)[self.rows]
        error = np.abs(got - _exact_encoding(self.rows, 256)).max()
        assert error <= 1e-15  # a few ulps; the naive np.sin(k * w) is off by ~7e-12 here

    def test_naive_formula_is_worse(self):
        angles = self.rows[:, None] * frequencies(256)[None, :]
        naive = np.empty((self.rows.size, 256))
        naive[:, 0::2], naive[:, 1::2] = np.sin(angles), np.cos(angles)
        assert np.abs(naive - _exact_encoding(self.rows, 256)).max() > 1e-12

    def test_float32_within_2e7(self):
        got = sinusoidal_encoding(100_000, 256, dtype=np.float32)[self.rows]
        assert got.dtype == np.float32
        assert np.abs(got - _exact_encoding(self.rows, 256)).max() <= 2e-7

    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    def test_float32_is_the_nearest_float32(self, convention):
        # Issue 18: 40% of the float32 entries were a float32 neighbour of the nearest one (the
        # product was computed in complex64). Now each is the float64 value rounded once: the
        # nearest float32 of the exact value, unless the exact value lies within the float64
        # error (5e-16) of a midpoint between two float32 numbers, where both are as close.
        d_model = 256
        got = sinusoidal_encoding(100_000, d_model, convention=convention, dtype=np.float32)
        got = got[self.rows]
        exact = _exact_encoding(self.rows, d_model, convention)
        nearest = exact.astype(np.float32)
        distance_got = np.abs(got.astype(np.longdouble) - exact)
        distance_nearest = np.abs(nearest.astype(np.longdouble) - exact)
        assert np.all(distance_got <= distance_nearest + 5e-16)
        assert np.count_nonzero(got != nearest) <= 2  # ties within 5e-16 are very rare

    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize("start", [10**6, 10**9, 2**40])
    def test_float64_within_5e16_at_any_position(self, convention, start):
        positions = start + np.arange(600)
        d_model = 513 if convention != "vaswani" else 512  # odd: unpaired and zero columns
        got = sinusoidal_encoding(positions, d_model, convention=convention)
        exact = _exact_encoding(positions, d_model, convention)
        assert np.abs(got - exact).max() <= 5e-16
        low = sinusoidal_encoding(positions, d_model, convention=convention, dtype=np.float32)
        assert np.count_nonzero(low != exact.astype(np.float32)) <= 2

    def test_float64_absolute_error_also_near_zero(self):
        # What the README promises for float64: an absolute error of a few ulps of 1 for every
        # entry; relative to a tiny entry (near a zero crossing) that can be many ulps.
        got = sinusoidal_encoding(100_000, 256)[self.rows]
        assert np.abs(got - _exact_encoding(self.rows, 256)).max() <= 5e-16

    def test_arbitrary_positions_path(self):
        positions = self.rows + 0.0
        positions[0] = 0.5  # not a progression any more
        got = sinusoidal_encoding(positions, 256)
        assert np.abs(got - _exact_encoding(positions, 256)).max() <= 1e-15


class TestDtypes:
    @pytest.mark.parametrize("dtype", [">f4", ">f8", ">f2", "<f4"])
    def test_non_native_byte_order(self, dtype):
        # Issue 18: dtype=">f4" returned float64 (a big-endian float32 was not recognised).
        got = sinusoidal_encoding(40, 6, dtype=dtype)
        assert got.dtype == np.dtype(dtype)
        native = np.dtype(dtype).newbyteorder("=")
        assert_array_equal(got.astype(native), sinusoidal_encoding(40, 6, dtype=native))

    def test_float32(self):
        got = sinusoidal_encoding(1000, 64, dtype=np.float32)
        assert got.dtype == np.float32
        assert_allclose(got, sinusoidal_encoding(1000, 64), rtol=0, atol=2e-7)

    def test_float16_is_one_rounding_of_float64(self):
        exact = sinusoidal_encoding(300, 16)
        got = sinusoidal_encoding(300, 16, dtype="float16")
        assert got.dtype == np.float16
        assert_array_equal(got, exact.astype(np.float16))

    def test_bfloat16_with_ml_dtypes(self):
        ml_dtypes = pytest.importorskip("ml_dtypes")
        got = sinusoidal_encoding(300, 16, dtype=ml_dtypes.bfloat16)
        assert got.dtype == ml_dtypes.bfloat16
        assert_array_equal(
            got.astype(np.float64), pe_core.quantize(sinusoidal_encoding(300, 16), "bfloat16")
        )


class TestBlockMeans:
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize(("length", "block"), [(1000, 100), (1003, 10), (7, 3), (5, 5), (5, 9)])
    def test_equals_mean_of_rows(self, convention, length, block):
        full = sinusoidal_encoding(length, 12, convention=convention)
        n_blocks = -(-length // block)
        expected = np.stack(
            [full[q * block : (q + 1) * block].mean(axis=0) for q in range(n_blocks)]
        )
        got = block_mean_encoding(length, 12, block, convention=convention)
        assert_allclose(got, expected, rtol=0, atol=1e-12)

    def test_offset_progression(self):
        positions = 10 + 2 * np.arange(60)
        full = sinusoidal_encoding(positions, 8)
        assert_allclose(
            block_mean_encoding(positions, 8, 6), full.reshape(10, 6, 8).mean(axis=1), atol=1e-12
        )

    def test_rejects_arbitrary_positions(self):
        with pytest.raises(ValueError, match="arithmetic progression"):
            block_mean_encoding([0, 1, 5], 4, 2)

    @pytest.mark.parametrize("bad", [0, -1])
    def test_bad_block_size(self, bad):
        with pytest.raises(ValueError, match="block_size"):
            block_mean_encoding(10, 4, bad)
        with pytest.raises(TypeError, match="block_size"):
            block_mean_encoding(10, 4, 2.5)


class TestEncodingColumns:
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize("d_model", [1, 5, 8])
    def test_equals_slice_of_full_encoding(self, convention, d_model):
        positions = np.array([0.0, 0.5, 3.0, -12.25, 1e5])
        columns = np.arange(d_model)[::-1]
        full = sinusoidal_encoding(positions, d_model, convention=convention)
        got = pe_core.encoding_columns(positions, d_model, columns, convention=convention)
        assert_allclose(got, full[:, columns], rtol=0, atol=1e-15)

    def test_bad_columns(self):
        with pytest.raises(ValueError, match=r"columns must lie in \[0, d_model\)"):
            pe_core.encoding_columns(3, 4, [4])
        with pytest.raises(TypeError, match="columns must be a 1-D array of integers"):
            pe_core.encoding_columns(3, 4, [0.5])
