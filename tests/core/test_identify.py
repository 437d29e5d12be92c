"""Identifying a matrix's convention, base and first position."""

import math
import warnings

import numpy as np
import pytest

import pe_core
from pe_core import CONVENTIONS, Precision, PrecisionKind, identify_encoding, sinusoidal_encoding


class TestIdentify:
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize("d_model", [16, 64, 512, 7])
    @pytest.mark.parametrize("base", [100.0, 10000.0, 500000.0])
    def test_finds_what_made_it(self, convention, d_model, base):
        matrix = sinusoidal_encoding(60, d_model, base=base, convention=convention)
        found = identify_encoding(matrix)
        assert found.start == 0
        if (found.convention, found.base) != (convention, base):
            # Only where two conventions make this very table: at d_model 7 musicgen with base
            # 100 (10**(-i) over h - 1 = 2) is diffusion with base 1,000 (over h = 3), the more
            # usual base. The one it was made with is then listed as the same table.
            named = sinusoidal_encoding(60, d_model, base=found.base, convention=found.convention)
            np.testing.assert_allclose(named, matrix, rtol=0, atol=1e-12)
            assert any(
                note.startswith(f"{convention} with base {base:g} is the same table")
                for note in found.equivalents
            ), found.equivalents
        assert found.matches and found.precision == Precision(PrecisionKind.EXACT)
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
        # Issue 18: "positions from -0" (a start of -1e-12 rounded to -0.0).
        found = identify_encoding(sinusoidal_encoding(-1e-9 + np.arange(30), 8).astype(np.float32))
        assert found.start == 0 and "from 0 to 29;" in found.summary()
        assert "from -0" not in found.summary()
        assert all(math.copysign(1.0, c.start) > 0 for c in found.candidates if c.start == 0)

    @pytest.mark.parametrize("start", [2, 1000, 40_000])  # fairseq starts at padding_idx + 1
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    def test_offsets(self, start, convention):
        matrix = sinusoidal_encoding(start + np.arange(40), 32, convention=convention)
        found = identify_encoding(matrix)
        assert (found.convention, found.base, found.start) == (convention, 10000.0, start)

    @pytest.mark.parametrize(
        ("dtype", "level"),
        [
            (np.float32, "float32"),
            (np.float16, "float16"),
            ("bfloat16", "bfloat16"),
        ],
    )
    def test_low_precision_copies(self, dtype, level):
        exact = sinusoidal_encoding(2 + np.arange(100), 64, convention="tensor2tensor")
        bfloat16 = dtype == "bfloat16"
        matrix = pe_core.quantize(exact, "bfloat16") if bfloat16 else exact.astype(dtype)
        found = identify_encoding(matrix)
        assert (found.convention, found.base, found.start) == ("tensor2tensor", 10000.0, 2)
        assert found.matches and found.precision == Precision(PrecisionKind.ROUNDED, format=level)

    def test_transposed(self):
        found = identify_encoding(sinusoidal_encoding(100, 32, convention="split").T)
        assert found.transposed and found.convention == "split" and found.matches
        assert "transposed" in found.summary()

    def test_garbage_is_no_match(self):
        noise = np.random.default_rng(0).uniform(-1, 1, size=(50, 16))
        found = identify_encoding(noise)
        assert not found.matches and found.precision == Precision(PrecisionKind.NO_MATCH)
        assert found.summary().startswith("no convention explains this matrix")

    def test_a_corrupted_cell_is_located(self):
        matrix = sinusoidal_encoding(80, 32)
        matrix[17, 5] += 0.5
        found = identify_encoding(matrix)
        assert not found.matches
        assert found.worst_cell == (17, 5)

    def test_equivalent_conventions_report_the_simplest(self):
        # tensor2tensor with base b equals split with base b**(h / (h - 1)): the same matrix.
        # Both bases are round; the more usual one (10,000) names it, the other is listed.
        matrix = sinusoidal_encoding(50, 4, base=10000.0, convention="split")
        found = identify_encoding(matrix)
        assert found.matches and found.max_abs_error == 0.0
        assert (found.convention, found.base) == ("split", 10000.0)
        assert found.equivalents[0].startswith("tensor2tensor with base 100 is the same table")
        found = identify_encoding(
            sinusoidal_encoding(50, 4, base=10000.0, convention="tensor2tensor")
        )
        assert (found.convention, found.base) == ("tensor2tensor", 10000.0)
        assert found.equivalents[0].startswith("split with base 1e+08 is the same table")

    @pytest.mark.parametrize(
        ("scale", "offset"), [(3.0, -1.0), (0.4, 0.04), (1 / 7.5, -0.2), (2.0, 0.5)]
    )
    @pytest.mark.parametrize("transposed", [False, True])
    def test_an_affine_rescaling_is_undone(self, scale, offset, transposed):
        # Issue 36: a table stored as scale * encoding + offset (PatchTST normalizes its own).
        exact = sinusoidal_encoding(40, 16, convention="tensor2tensor")
        table = scale * exact + offset
        found = identify_encoding(table.T if transposed else table)
        assert found.matches and found.transposed == transposed, found.summary()
        assert (found.convention, found.base, found.start) == ("tensor2tensor", 10_000.0, 0.0)
        # The matrix times found.scale plus found.offset is the encoding.
        assert found.scale == pytest.approx(1 / scale, rel=1e-9)
        assert found.offset == pytest.approx(-offset / scale, abs=1e-9)
        assert found.rescaled and found.normalization == ""
        assert found.summary().count("rescaled: the table is (encoding - ") == 1

    def test_the_encoding_itself_is_not_rescaled(self):
        found = identify_encoding(sinusoidal_encoding(40, 16))
        assert not found.rescaled and (found.scale, found.offset) == (1.0, 0.0)
        assert "rescaled" not in found.summary()

    def test_noise_has_no_rescaling(self):
        found = identify_encoding(np.random.default_rng(3).uniform(-1, 1, (40, 16)))
        assert not found.matches and not found.rescaled

    @pytest.mark.parametrize("bad", [np.zeros((1, 8)), np.zeros(8), [[np.nan, 1.0], [0.0, 1.0]]])
    def test_bad_input(self, bad):
        with pytest.raises(ValueError, match="matrix"):
            identify_encoding(bad)


# Tables as libraries compute them, transcribed to NumPy in the library's arithmetic (float32, the
# default dtype of PyTorch), not built with pe_core.


def annotated_transformer_buffer(length, d_model):
    """The PyTorch tutorial / The Annotated Transformer ``PositionalEncoding.__init__``:
    ``div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))``,
    ``pe[:, 0::2] = torch.sin(position * div_term)``, ``pe[:, 1::2] = torch.cos(...)``, then
    ``pe.unsqueeze(0)``: a (1, L, d_model) float32 buffer."""
    position = np.arange(0, length, dtype=np.float32)[:, None]
    div_term = np.exp(
        np.arange(0, d_model, 2).astype(np.float32) * np.float32(-math.log(10000.0) / d_model)
    )
    pe = np.zeros((length, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe[None]


def transformer_xl_table(klen, demb):
    """kimiyoung/transformer-xl ``PositionalEmbedding``: ``inv_freq = 1 / (10000 **
    (torch.arange(0.0, demb, 2.0) / demb))``, ``pos_seq = torch.arange(klen-1, -1, -1.0)``,
    ``torch.cat([sinusoid_inp.sin(), sinusoid_inp.cos()], dim=-1)``: rows in decreasing order."""
    inv_freq = np.float32(1) / (np.float32(10000) ** (np.arange(0.0, demb, 2.0, np.float32) / demb))
    pos_seq = np.arange(klen - 1, -1, -1.0, dtype=np.float32)
    sinusoid_inp = np.outer(pos_seq, inv_freq).astype(np.float32)
    return np.concatenate([np.sin(sinusoid_inp), np.cos(sinusoid_inp)], axis=-1)


def xlnet_table(qlen, klen, d_model):
    """Hugging Face ``XLNetModel.relative_positional_encoding`` (attn_type "bi"):
    ``inv_freq = 1 / torch.pow(10000, (freq_seq / self.d_model))``, ``fwd_pos_seq =
    torch.arange(klen, -qlen, -1.0)``, ``torch.cat([sin, cos], dim=-1)[:, None, :]``."""
    freq_seq = np.arange(0, d_model, 2.0, dtype=np.float32)
    inv_freq = np.float32(1) / np.power(np.float32(10000), freq_seq / np.float32(d_model))
    fwd_pos_seq = np.arange(klen, -qlen, -1.0, dtype=np.float32)
    sinusoid_inp = np.einsum("i,d->id", fwd_pos_seq, inv_freq)
    return np.concatenate([np.sin(sinusoid_inp), np.cos(sinusoid_inp)], axis=-1)[:, None, :]


class TestLibraryTables:
    def test_annotated_transformer_float32_buffer(self):
        # Issue 9: float32 library tables were fitted with base 10000.0057, and "(float16
        # rounding)" was said of float32 arithmetic. The (1, L, d) buffer is accepted.
        buffer = annotated_transformer_buffer(2048, 512)
        found = identify_encoding(buffer)
        assert found.matches and found.squeezed_from == (1, 2048, 512)
        assert (found.convention, found.base, found.start, found.step) == ("vaswani", 1e4, 0, 1)
        assert found.precision == Precision(PrecisionKind.COMPUTED, format="float32")
        assert "computed in float32" in found.summary()

    def test_split_float32_at_d6_is_split_not_tensor2tensor(self):
        # Issue 9: identified as tensor2tensor with base 464.159. Both fit within float32's own
        # noise; the round base wins and the other fit is named as equally good.
        table = transformer_xl_table(64, 6)[::-1].copy()  # increasing positions
        found = identify_encoding(table)
        assert (found.convention, found.base, found.start) == ("split", 10000.0, 0)
        assert any("tensor2tensor" in note and "cannot tell" for note in found.equivalents)

    def test_transformer_xl_rows_in_decreasing_order(self):
        found = identify_encoding(transformer_xl_table(100, 32))
        assert found.matches and found.step == -1
        assert (found.convention, found.base, found.start, found.end) == ("split", 1e4, 99, 0)
        assert "decreasing order" in found.summary()

    def test_xlnet_symmetric_range(self):
        found = identify_encoding(xlnet_table(qlen=24, klen=24, d_model=64))
        assert found.matches and found.squeezed_from == (48, 1, 64)
        assert (found.start, found.end, found.step) == (24, -23, -1)
        assert found.convention == "split" and found.base == 10000.0

    def test_equivalent_conventions_are_said_to_be_the_same_table(self):
        # Issue 9: a tensor2tensor table also listed split with base 11574.2 without saying
        # that the two are the same function at this size.
        found = identify_encoding(sinusoidal_encoding(300, 16, convention="tensor2tensor"))
        assert found.convention == "tensor2tensor" and found.base == 10000.0
        (note,) = found.equivalents
        same_base = 10000.0 ** (8 / 7)  # b ** (h / (h - 1)) with h = 8 pairs
        assert note.startswith(f"split with base {same_base:g} is the same table at d_model 16")

    def test_a_base_the_table_cannot_show_is_not_claimed(self):
        found = identify_encoding(sinusoidal_encoding(40, 2, base=500.0))
        assert found.matches and not found.base_determined
        assert "any base" in found.summary() and "base 10000" not in found.summary()

    def test_decimals(self):
        found = identify_encoding(np.round(sinusoidal_encoding(50, 8), 6))
        # Six decimals of values below 1 are also at most six significant digits: both fields.
        assert found.matches and found.precision == Precision(
            PrecisionKind.DECIMALS, decimals=6, significant=6
        )

    def test_float16_arithmetic(self):
        position = np.arange(300, dtype=np.float16)[:, None]
        div_term = np.exp(np.arange(0, 32, 2).astype(np.float16) * np.float16(-math.log(1e4) / 32))
        table = np.zeros((300, 32), dtype=np.float16)
        table[:, 0::2], table[:, 1::2] = np.sin(position * div_term), np.cos(position * div_term)
        found = identify_encoding(table)
        assert found.matches and found.precision == Precision(
            PrecisionKind.COMPUTED, format="float16"
        )
        assert (found.convention, found.base, found.start) == ("vaswani", 1e4, 0)


class TestNoCauseWithoutEvidence:
    def test_gaussian_noise_is_not_called_rounding(self):
        # Issue 9: Gaussian noise of 1e-3 was reported as "(bfloat16 rounding)".
        rng = np.random.default_rng(0)
        noisy = sinusoidal_encoding(100, 16) + rng.normal(0.0, 1e-3, (100, 16))
        found = identify_encoding(noisy)
        assert not found.matches and found.precision == Precision(PrecisionKind.NO_MATCH)
        assert "rounding)" not in found.summary()
        assert found.convention == "vaswani" and found.base == 10000.0  # still the closest

    def test_noise_is_not_said_to_be_transposed(self):
        # Issue 9: random noise was told it "had positions in its columns; it was transposed".
        noise = np.random.default_rng(0).uniform(-1, 1, size=(40, 16))
        found = identify_encoding(noise)
        assert not found.matches and not found.transposed
        assert "transposed" not in found.summary() and "decreasing" not in found.summary()


@pytest.mark.parametrize("scale", [1e155, 1e300, -1.7e308])
def test_huge_values_are_no_match_without_warnings(scale):
    # Found by a deep fuzz run (PE_FUZZ_EXAMPLES=3000): products in the fits overflowed with
    # RuntimeWarnings ("overflow encountered in multiply", "invalid value in subtract").
    table = pe_core.sinusoidal_encoding(16, 8) * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = pe_core.identify_encoding(table)
    assert not result.matches


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(8192, 512), (512, 8192)])
def test_the_largest_upload_is_checked_within_the_request_budget(shape):
    """The largest table an upload may hold (4,194,304 values), noise that matches nothing (every
    convention, both orientations, evaluated on every row): identify_encoding peaked at 168 MiB
    (full-size differences, phases of every pair at once, the ranking's differences kept);
    diagnose_encoding, which runs it, must stay within the app's budget for one request."""
    import tracemalloc

    from dashboard.budget import REQUEST_BYTES

    table = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    tracemalloc.start()
    try:
        pe_core.diagnose_encoding(table)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < REQUEST_BYTES * 3 // 4, f"{peak / 2**20:.0f} MiB"


class TestPrecision:
    """The difference is fields (kind, format, decimals); its words are only for display."""

    @pytest.mark.parametrize(
        ("precision", "words", "rank"),
        [
            (Precision(PrecisionKind.EXACT), "exact in float64", 0),
            (Precision(PrecisionKind.ROUNDED, format="bfloat16"), "bfloat16 rounding", 1),
            (Precision(PrecisionKind.DECIMALS, decimals=4), "rounded to 4 decimals", 1),
            (Precision(PrecisionKind.COMPUTED, format="float32"), "float32 arithmetic", 2),
            (Precision(PrecisionKind.NO_MATCH), "no match", 3),
        ],
    )
    def test_words_and_rank(self, precision, words, rank):
        assert precision.words == words
        assert precision.rank == rank
        assert precision.explained == (precision.kind is not PrecisionKind.NO_MATCH)

    def test_fields_of_a_rounded_table(self):
        found = identify_encoding(sinusoidal_encoding(40, 16).round(4))
        assert found.precision.kind is PrecisionKind.DECIMALS
        assert (found.precision.format, found.precision.decimals) == (None, 4)
        assert "(rounded to 4 decimals)" in found.summary()
        found = identify_encoding(sinusoidal_encoding(40, 16).astype(np.float16))
        assert found.precision.kind is PrecisionKind.ROUNDED
        assert (found.precision.format, found.precision.decimals) == ("float16", None)
        assert all(isinstance(c.precision, Precision) for c in found.candidates)


@pytest.mark.parametrize("base", [10_000.0, 500_000.0])
@pytest.mark.parametrize("n", [64, 512])
def test_float16_table_with_an_unpaired_slow_sin_column(base, n):
    """At odd d_model the last sin column is the slowest; in float16 its second difference is
    below the format's step and its frequency reads as rounding noise (0.0019 for a true 1e-6),
    which used to drag the fitted base to 210,000 for 500,000 (found by the issue-39
    demonstration branch). A reading above the slowest pair's is left out."""
    table = pe_core.sinusoidal_encoding(n, 7, base=base, dtype=np.float16)
    found = pe_core.identify_encoding(table)
    assert found.matches and found.convention == "vaswani" and found.base == base
