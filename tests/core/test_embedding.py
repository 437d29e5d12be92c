"""The embedding + encoding forward pass."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pe_core import add_to_embeddings, sinusoidal_encoding


class TestAddToEmbeddings:
    def test_literal(self):
        embeddings = np.array([[1.0, 2.0], [3.0, 4.0]])
        encoding = np.array([[0.0, 1.0], [0.5, 0.5], [9.0, 9.0]])
        assert_array_equal(add_to_embeddings(embeddings, encoding), [[1, 3], [3.5, 4.5]])

    def test_scale_by_sqrt_d_model(self):
        embeddings = np.ones((3, 4))
        out = add_to_embeddings(embeddings, np.zeros((3, 4)), scale=True)
        assert_array_equal(out, 2 * np.ones((3, 4)))

    def test_broadcast_over_batch(self):
        rng = np.random.default_rng(0)
        embeddings = rng.normal(size=(5, 7, 16))
        encoding = sinusoidal_encoding(10, 16)
        out = add_to_embeddings(embeddings, encoding)
        assert out.shape == (5, 7, 16)
        assert_allclose(out - embeddings, np.broadcast_to(encoding[:7], (5, 7, 16)), atol=1e-15)

    def test_dropout_reproducible_and_inverted(self):
        embeddings = np.ones((4, 50, 8))
        encoding = np.zeros((50, 8))
        a = add_to_embeddings(embeddings, encoding, dropout=0.25, rng=7)
        b = add_to_embeddings(embeddings, encoding, dropout=0.25, rng=np.random.default_rng(7))
        assert_array_equal(a, b)
        assert set(np.unique(a)) <= {0.0, 1 / 0.75}
        assert 0.2 < np.mean(a == 0) < 0.3

    def test_does_not_modify_input(self):
        embeddings = np.ones((2, 3))
        add_to_embeddings(embeddings, np.ones((2, 3)), scale=True)
        assert_array_equal(embeddings, np.ones((2, 3)))

    def test_shape_errors_name_both_shapes(self):
        with pytest.raises(ValueError, match=r"d_model=4 columns.*\(3, 5\)"):
            add_to_embeddings(np.ones((2, 4)), np.ones((3, 5)))
        with pytest.raises(ValueError, match=r"at least seq=6 rows"):
            add_to_embeddings(np.ones((6, 4)), np.ones((3, 4)))
        with pytest.raises(ValueError, match="shape"):
            add_to_embeddings(np.ones(4), np.ones((3, 4)))

    @pytest.mark.parametrize("dropout", [-0.1, 1.0, 2.0])
    def test_bad_dropout(self, dropout):
        with pytest.raises(ValueError, match="dropout must be in"):
            add_to_embeddings(np.ones((2, 4)), np.ones((2, 4)), dropout=dropout)

    def test_bad_types(self):
        with pytest.raises(TypeError, match="scale"):
            add_to_embeddings(np.ones((2, 4)), np.ones((2, 4)), scale="yes")
        with pytest.raises(TypeError, match="rng"):
            add_to_embeddings(np.ones((2, 4)), np.ones((2, 4)), dropout=0.5, rng="seed")
        with pytest.raises(ValueError, match="finite"):
            add_to_embeddings(np.full((2, 4), np.nan), np.ones((2, 4)))

    def test_overflow_from_the_dropout_rescaling_is_refused(self):
        # Issue 18: the sum 1e308 is finite, but dropout's 1 / (1 - 0.5) made it inf, and the
        # finiteness check ran before the dropout.
        with pytest.raises(ValueError, match="overflows float64"):
            add_to_embeddings(np.full((1, 2, 2), 1e308), np.zeros((2, 2)), dropout=0.5, rng=0)

    def test_dropout_mask_drawn_per_sequence_equals_the_whole_batch(self):
        # The dashboard adds one sequence at a time from one generator (bounded memory); the
        # generator's stream makes that the same as one call on the whole batch.
        embeddings = np.random.default_rng(1).normal(size=(3, 5, 4))
        encoding = np.ones((5, 4))
        whole = add_to_embeddings(embeddings, encoding, dropout=0.3, rng=7)
        generator = np.random.default_rng(7)
        pieces = [
            add_to_embeddings(embeddings[b : b + 1], encoding, dropout=0.3, rng=generator)
            for b in range(3)
        ]
        assert_array_equal(np.concatenate(pieces), whole)
