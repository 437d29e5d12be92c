"""FrequencyBank: the general form every analysis takes (issue 10)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import pe_core
from pe_core import CONVENTIONS, ColumnLayout, FrequencyBank


class TestFrequencyBank:
    def test_literal(self):
        bank = FrequencyBank(np.array([1.0, 0.1]), ColumnLayout.interleaved(4), "mine")
        assert bank.d_model == 4 and bank.n_frequencies == 2
        assert_allclose(bank.wavelengths, [2 * np.pi, 20 * np.pi])
        assert not bank.frequencies.flags.writeable
        assert repr(bank) == "FrequencyBank('mine', d_model=4, n_frequencies=2)"

    def test_equal_banks_hash_alike(self):
        a = pe_core.sinusoidal_bank(16, base=500.0)
        b = CONVENTIONS["vaswani"].bank(16, 500.0)
        assert a == b and hash(a) == hash(b)
        assert a != pe_core.sinusoidal_bank(16, base=500.0, convention="split")

    @pytest.mark.parametrize(
        ("frequencies", "layout", "error", "message"),
        [
            ([1.0], ColumnLayout.interleaved(4), ValueError, "one value per pair"),
            ([1.0, -0.1], ColumnLayout.interleaved(4), ValueError, ">= 0"),
            ([1.0, np.nan], ColumnLayout.interleaved(4), ValueError, "finite"),
            ([[1.0, 0.1]], ColumnLayout.interleaved(4), ValueError, "1-D"),
            (["a", "b"], ColumnLayout.interleaved(4), TypeError, "real numbers"),
            ([1.0, 0.1], "interleaved", TypeError, "ColumnLayout"),
        ],
    )
    def test_validated_once(self, frequencies, layout, error, message):
        with pytest.raises(error, match=message):
            FrequencyBank(frequencies, layout)

    def test_a_bank_with_base_or_convention_is_refused(self):
        bank = pe_core.sinusoidal_bank(8)
        with pytest.raises(ValueError, match="pass it as d_model alone"):
            pe_core.sinusoidal_encoding(4, bank, base=100.0)
        with pytest.raises(ValueError, match="pass it as d_model alone"):
            pe_core.wavelengths(bank, convention="split")


class TestColumnLayout:
    @pytest.mark.parametrize("d_model", [1, 2, 7, 8])
    def test_permutation_between_layouts(self, d_model):
        vaswani = pe_core.sinusoidal_encoding(20, d_model)
        split = pe_core.sinusoidal_encoding(20, d_model, convention="split")
        permutation = ColumnLayout.halves(d_model).permutation_from(
            ColumnLayout.interleaved(d_model)
        )
        assert_array_equal(split, vaswani[:, permutation])

    @pytest.mark.parametrize("convention", sorted(CONVENTIONS))
    @pytest.mark.parametrize("d_model", [2, 7, 8])
    def test_pair_columns_hold_the_sin_and_cos_of_the_pair(self, convention, d_model):
        bank = pe_core.sinusoidal_bank(d_model, convention=convention)
        n_pairs = min(bank.layout.n_sin, bank.layout.n_cos)
        w = bank.frequencies
        rows = pe_core.sinusoidal_encoding([3], bank)[0]
        for i in range(n_pairs):
            sin, cos = bank.layout.pair_columns(i)
            assert_allclose(rows[[sin, cos]], [np.sin(3 * w[i]), np.cos(3 * w[i])], atol=1e-15)
        with pytest.raises(ValueError, match=rf"pair must be in \[0, {n_pairs}\), got {n_pairs}"):
            bank.layout.pair_columns(n_pairs)

    def test_different_pairs_cannot_be_permuted(self):
        with pytest.raises(ValueError, match="same d_model"):
            ColumnLayout.halves(7, odd="zero").permutation_from(ColumnLayout.interleaved(7))


# Every analysis gives the same result for a convention's bank as for its (d_model, base,
# convention): the wrappers are thin.
CALLS = [
    ("sinusoidal_encoding", (np.arange(50),)),
    ("reference_encoding", (np.arange(9),)),
    ("encoding_columns", (np.arange(30), None, [0, 3])),
    ("block_mean_encoding", (100, None, 7)),
    ("offset_similarity", (np.arange(40),)),
    ("similarity_matrix", (30,)),
    ("nearest_neighbor_distances", (60,)),
    ("relative_rotation", (3.0,)),
    ("encoding_distances", (np.arange(5.0), np.arange(5.0) + 2)),
]


@pytest.mark.parametrize("convention", list(CONVENTIONS))
@pytest.mark.parametrize(("name", "args"), CALLS)
def test_bank_equals_convention_call(convention, name, args):
    d_model, base = 10, 300.0
    function = getattr(pe_core, name)
    bank = pe_core.sinusoidal_bank(d_model, base=base, convention=convention)

    def call(width, **kwargs):  # the width goes where None is, else after the arguments
        filled = [width if a is None else a for a in args] if None in args else [*args, width]
        return function(*filled, **kwargs)

    try:
        expected = call(d_model, base=base, convention=convention)
    except ValueError as error:  # no closed form for the unpaired column: the same for a bank
        with pytest.raises(ValueError, match=str(error).split(" (")[0][:40]):
            call(bank)
        return
    assert_array_equal(call(bank), expected)


def test_uniqueness_and_frequencies_of_a_bank():
    bank = pe_core.sinusoidal_bank(64, convention="split")
    assert pe_core.uniqueness_report(2000, bank) == pe_core.uniqueness_report(
        2000, 64, convention="split"
    )
    assert_array_equal(pe_core.frequencies(bank), bank.frequencies)
    pair, role = pe_core.column_roles(bank)
    assert role.tolist()[:2] == ["sin", "sin"] and pair[32] == 0


def test_any_bank_gets_every_analysis():
    # Frequencies no convention has (a hand-made family): the analyses still hold.
    freqs = np.array([1.0, 0.37, 0.05, 0.002])
    bank = FrequencyBank(freqs, ColumnLayout.halves(8), "hand-made")
    rows = pe_core.sinusoidal_encoding(np.arange(300), bank)
    assert_allclose(rows, pe_core.reference_encoding(np.arange(300), bank), atol=1e-12)
    assert_allclose(rows[:, :4], np.sin(np.arange(300)[:, None] * freqs), atol=1e-12)
    profile = pe_core.offset_similarity(np.arange(300), bank, kind="dot")
    assert_allclose(profile, rows @ rows[0], atol=1e-12)
    shift = pe_core.relative_rotation(5, bank)
    assert_allclose(shift @ rows[10], rows[15], atol=1e-12)
    report = pe_core.uniqueness_report(300, bank, precision="bfloat16", cast="positions")
    assert report.first_collision == 257 and report.collides_with == 256
    assert_allclose(pe_core.wavelengths(bank), 2 * np.pi / freqs)
