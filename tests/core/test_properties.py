"""Properties over many parameters, drawn by hypothesis."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from pe_core import (
    CONVENTIONS,
    column_roles,
    cosine_similarity,
    frequencies,
    offset_similarity,
    reference_encoding,
    relative_rotation,
    sinusoidal_encoding,
)

conventions = st.sampled_from(list(CONVENTIONS))
d_models = st.integers(1, 96)
bases = st.floats(1.5, 1e6)
positions = st.lists(
    st.one_of(st.integers(-5000, 5000), st.floats(-5000, 5000, allow_nan=False)),
    min_size=1,
    max_size=40,
)


def _paired(convention, d_model):
    # An odd d_model's zero column rotates trivially; an unpaired sin column cannot.
    return d_model % 2 == 0 or CONVENTIONS[convention].odd_column == "zero"


@given(positions, d_models, bases, conventions)
def test_bounded_and_equal_to_reference(k, d_model, base, convention):
    fast = sinusoidal_encoding(k, d_model, base=base, convention=convention)
    assert np.all(np.abs(fast) <= 1.0)
    slow = reference_encoding(k, d_model, base=base, convention=convention)
    assert_allclose(fast, slow, rtol=0, atol=1e-12)


@given(st.integers(0, 3000), d_models, bases, conventions)
def test_progressions_equal_reference(length, d_model, base, convention):
    rows = np.arange(0, length, max(1, length // 25))
    fast = sinusoidal_encoding(length, d_model, base=base, convention=convention)[rows]
    slow = reference_encoding(rows, d_model, base=base, convention=convention)
    assert_allclose(fast, slow, rtol=0, atol=1e-12)


@given(positions, d_models, bases, conventions)
def test_pythagoras_per_pair_and_row_norm(k, d_model, base, convention):
    encoding = sinusoidal_encoding(k, d_model, base=base, convention=convention)
    _, role = column_roles(d_model, convention=convention)
    n_pairs = int(np.sum(role == "cos"))
    sin_part = encoding[:, role == "sin"][:, :n_pairs]
    cos_part = encoding[:, role == "cos"]
    assert_allclose(sin_part**2 + cos_part**2, 1.0, atol=1e-15)
    if d_model % 2 == 0:
        assert_allclose(np.sum(encoding**2, axis=1), d_model / 2, rtol=1e-14)


@given(positions, st.floats(-1e4, 1e4, allow_nan=False), st.integers(1, 48), bases, conventions)
def test_offset_similarity_matches_direct(k, offset, half, base, convention):
    d_model = 2 * half
    a = sinusoidal_encoding(k, d_model, base=base, convention=convention)
    b = sinusoidal_encoding(
        np.asarray(k, dtype=float) + offset, d_model, base=base, convention=convention
    )
    cosine = np.sum(a * b, axis=1) / (d_model / 2)
    got = offset_similarity(offset, d_model, base=base, convention=convention)
    assert_allclose(cosine, got, rtol=0, atol=1e-9)
    distance = offset_similarity(offset, d_model, base=base, convention=convention, kind="distance")
    assert_allclose(np.linalg.norm(a - b, axis=1), distance, rtol=0, atol=1e-9)


@given(positions, st.floats(-1e4, 1e4, allow_nan=False), d_models, bases, conventions)
def test_rotation_reproduces_shifted_rows(k, offset, d_model, base, convention):
    if not _paired(convention, d_model):
        return  # no matrix exists; test_similarity checks the error
    before = sinusoidal_encoding(k, d_model, base=base, convention=convention)
    after = sinusoidal_encoding(
        np.asarray(k, dtype=float) + offset, d_model, base=base, convention=convention
    )
    matrix = relative_rotation(offset, d_model, base=base, convention=convention)
    assert np.abs(before @ matrix.T - after).max() <= 1e-12


@given(st.lists(st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=3), min_size=1, max_size=20))
def test_cosine_similarity_symmetric_unit_diagonal(rows):
    similarity = cosine_similarity(rows)
    assert np.array_equal(similarity, similarity.T)
    nonzero = np.any(np.asarray(rows) != 0, axis=1)
    assert np.all(np.diag(similarity)[nonzero] == 1.0)
    assert np.all(np.abs(similarity) <= 1.0)


@given(d_models, bases, conventions)
def test_wavelengths_geometric(d_model, base, convention):
    w = frequencies(d_model, base=base, convention=convention)
    if w.size > 2:
        ratios = w[1:] / w[:-1]
        assert_allclose(ratios, ratios[0], rtol=1e-12)
