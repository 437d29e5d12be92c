"""Cosine similarity, the closed-form offset profile, similarity matrices, the rotation."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pe_core import (
    CONVENTIONS,
    cosine_similarity,
    offset_similarity,
    relative_rotation,
    similarity_matrix,
    sinusoidal_encoding,
)


def _paired(d_models):
    """(convention, d_model) combinations with a closed form: every sin with its cos."""
    return [(c, d) for c in CONVENTIONS for d in d_models if CONVENTIONS[c].bank(d, 1e4).is_paired]


def _direct(offsets, d_model, *, base=10000.0, convention="vaswani", start=0.0):
    """Similarity of rows PE(start) and PE(start + offset), from the encodings themselves."""
    offsets = np.asarray(offsets, dtype=float)
    a = sinusoidal_encoding(np.full(offsets.size, start), d_model, base=base, convention=convention)
    b = sinusoidal_encoding(start + offsets, d_model, base=base, convention=convention)
    dot = np.sum(a * b, axis=1)
    distance = np.linalg.norm(a - b, axis=1)
    cosine = dot / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {"dot": dot, "distance": distance, "cosine": cosine}


class TestCosineSimilarity:
    def test_literal(self):
        got = cosine_similarity([[1.0, 0.0], [1.0, 1.0], [0.0, -2.0]])
        r = 1 / np.sqrt(2)
        assert_allclose(got, [[1, r, 0], [r, 1, -r], [0, -r, 1]], atol=1e-15)

    def test_two_arguments(self):
        got = cosine_similarity([[3.0, 4.0]], [[4.0, 3.0], [-3.0, -4.0]])
        assert_allclose(got, [[24 / 25, -1.0]], atol=1e-15)

    def test_zero_row_is_zero_not_nan(self):
        got = cosine_similarity([[0.0, 0.0], [1.0, 2.0]])
        assert_array_equal(got, [[0.0, 0.0], [0.0, 1.0]])

    def test_symmetric_unit_diagonal(self):
        rows = np.random.default_rng(0).normal(size=(50, 7))
        got = cosine_similarity(rows)
        assert_array_equal(got, got.T)
        assert_array_equal(np.diag(got), np.ones(50))
        assert np.all(np.abs(got) <= 1)

    def test_huge_values_do_not_overflow(self):
        got = cosine_similarity([[1e300, 1e300], [1e300, 0.0]])
        assert_allclose(got[0, 1], 1 / np.sqrt(2))

    def test_shape_mismatch(self):
        with pytest.raises(ValueError, match="same length"):
            cosine_similarity(np.ones((2, 3)), np.ones((2, 4)))

    def test_one_dimensional(self):
        with pytest.raises(ValueError, match="2-dimensional"):
            cosine_similarity([1.0, 2.0])


class TestOffsetSimilarity:
    def test_literal_base_100(self):
        # d=4, base=100: (cos(delta) + cos(delta / 10)) / 2.
        expected = [(np.cos(d) + np.cos(d / 10)) / 2 for d in (0, 1, -1, 5)]
        assert_allclose(offset_similarity([0, 1, -1, 5], 4, base=100), expected, atol=1e-15)

    def test_distance_literal(self):
        # |PE(k) - PE(k+delta)|^2 = 4 (sin^2(delta/2) + sin^2(delta/20)) for d=4, base=100.
        expected = 2 * np.sqrt(np.sin(0.5 * 3) ** 2 + np.sin(0.05 * 3) ** 2)
        assert offset_similarity(3, 4, base=100, kind="distance") == pytest.approx(
            expected, rel=1e-15
        )

    def test_scalar_keeps_shape(self):
        assert offset_similarity(2.0, 8).shape == ()
        assert offset_similarity([[1, 2], [3, 4]], 8).shape == (2, 2)

    @pytest.mark.parametrize(("convention", "d_model"), _paired([2, 4, 64, 513]))
    @pytest.mark.parametrize("kind", ["cosine", "dot", "distance"])
    @pytest.mark.parametrize("start", [0.0, 17.0, -250.5])
    def test_matches_direct_computation(self, convention, d_model, kind, start):
        offsets = np.concatenate([np.arange(-40, 300), [0.5, 1e4 + 0.25, -7777]])
        expected = _direct(offsets, d_model, convention=convention, start=start)[kind]
        got = offset_similarity(offsets, d_model, convention=convention, kind=kind)
        assert_allclose(got, expected, rtol=0, atol=1e-9 * d_model)

    @pytest.mark.parametrize("kind", ["cosine", "dot", "distance"])
    def test_fast_progression_path_matches_direct(self, kind):
        offsets = np.arange(20_000)
        fast = offset_similarity(offsets, 256, kind=kind)
        slow = offset_similarity(offsets + 0.0 + np.r_[0.5, np.zeros(19_999)], 256, kind=kind)
        assert_allclose(fast[1:], slow[1:], rtol=0, atol=1e-11)

    def test_even_in_offset(self):
        offsets = np.arange(1, 500)
        assert_allclose(offset_similarity(offsets, 32), offset_similarity(-offsets, 32), atol=1e-14)

    @pytest.mark.parametrize("convention", ["vaswani", "split"])
    def test_odd_d_model_raises(self, convention):
        with pytest.raises(ValueError, match=r"no closed form.*depends on k"):
            offset_similarity([1], 7, convention=convention)

    def test_all_zero_encoding(self):
        with pytest.raises(ValueError, match="zero vector"):
            offset_similarity([1], 1, convention="tensor2tensor")
        assert_array_equal(offset_similarity([1], 1, convention="tensor2tensor", kind="dot"), [0])


class TestSimilarityMatrix:
    @pytest.mark.parametrize("kind", ["cosine", "dot", "distance"])
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    def test_toeplitz_matches_rows(self, kind, convention):
        positions = 3 + 2 * np.arange(200)
        rows = sinusoidal_encoding(positions, 16, convention=convention)
        expected = {
            "cosine": cosine_similarity(rows),
            "dot": rows @ rows.T,
            "distance": np.linalg.norm(rows[:, None] - rows[None, :], axis=2),
        }[kind]
        got = similarity_matrix(positions, 16, convention=convention, kind=kind)
        assert_allclose(got, expected, rtol=0, atol=1e-12)

    def test_odd_d_model_falls_back_to_rows(self):
        rows = sinusoidal_encoding(50, 7)
        assert_allclose(similarity_matrix(50, 7), cosine_similarity(rows), atol=1e-12)

    @pytest.mark.parametrize("d_model", [64, 63])
    @pytest.mark.parametrize("positions", [[0.5, 7.25, 100.0], 300])
    def test_distance_to_itself_is_zero(self, d_model, positions):
        # Issue 18: the Gram identity left 1.7e-7 on the diagonal of the row-by-row path.
        matrix = similarity_matrix(positions, d_model, kind="distance")
        assert_array_equal(np.diag(matrix), 0.0)
        rows = sinusoidal_encoding(positions, d_model)
        expected = np.linalg.norm(rows[:, None] - rows[None, :], axis=2)
        assert_allclose(matrix, expected, rtol=0, atol=1e-12)

    def test_diagonal_bands(self):
        matrix = similarity_matrix(100, 32)
        assert_allclose(np.diag(matrix, 5), matrix[0, 5], atol=1e-13)


class TestRelativeRotation:
    def test_literal_d2(self):
        t = 0.7
        assert_allclose(
            relative_rotation(t, 2), [[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]], atol=1e-16
        )

    @pytest.mark.parametrize(("convention", "d_model"), _paired([2, 6, 64, 9]))
    @pytest.mark.parametrize("offset", [1, -3, 0.5, 1000])
    def test_reproduces_shifted_rows(self, convention, d_model, offset):
        positions = np.arange(0, 2000, 7.0)
        before = sinusoidal_encoding(positions, d_model, convention=convention)
        after = sinusoidal_encoding(positions + offset, d_model, convention=convention)
        matrix = relative_rotation(offset, d_model, convention=convention)
        assert np.abs(before @ matrix.T - after).max() <= 1e-12
        assert_allclose(matrix @ matrix.T, np.eye(d_model), atol=1e-14)

    def test_block_diagonal_interleaved(self):
        matrix = relative_rotation(2, 8)
        mask = np.kron(np.eye(4), np.ones((2, 2))).astype(bool)
        assert np.all(matrix[~mask] == 0)

    def test_inverse_is_negative_offset(self):
        assert_allclose(
            relative_rotation(5, 16) @ relative_rotation(-5, 16), np.eye(16), atol=1e-15
        )

    @pytest.mark.parametrize("convention", ["vaswani", "split"])
    def test_odd_d_model_raises(self, convention):
        with pytest.raises(ValueError, match="no cos partner"):
            relative_rotation(1, 5, convention=convention)

    def test_budget(self):
        with pytest.raises(ValueError, match="MAX_ROTATION_D_MODEL"):
            relative_rotation(1, 2**15)
