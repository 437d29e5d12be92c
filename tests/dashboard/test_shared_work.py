"""Work that does not depend on L is done once and shared (issue 40: at the top of the range a
change of L recomputed 1 to 4 s of CPU per page, and six such sessions blocked each other)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import streamlit as st

import pe_core
from dashboard import data
from dashboard.config import Config
from dashboard.view_parts import similarity as similarity_part
from dashboard.views import distance
from dashboard.views.uniqueness import report as uniqueness_part
from tests.apptest_helpers import new_app, no_errors


@pytest.fixture
def counted_profiles(monkeypatch):
    """Cold caches, and the number of calls of pe_core.offset_similarity (by kind) from now on."""
    st.cache_data.clear()
    calls = []
    original = pe_core.offset_similarity

    def counting(offsets, bank, **kwargs):
        calls.append((np.size(offsets), kwargs.get("kind", "cosine")))
        return original(offsets, bank, **kwargs)

    monkeypatch.setattr(pe_core, "offset_similarity", counting)
    yield calls
    st.cache_data.clear()


class TestProfileSpan:
    @pytest.mark.parametrize("n", [1, 2, 100, 65_536])
    def test_small_counts_are_computed_as_they_are(self, n):
        assert data.profile_span(n) == n

    @pytest.mark.parametrize("n", [65_537, 99_999, 131_072, 200_000, 524_289, 1_000_000])
    def test_larger_counts_round_up_by_at_most_a_quarter(self, n):
        span = data.profile_span(n)
        assert n <= span <= 1.25 * n

    def test_the_top_of_the_range_shares_one_span(self):
        assert {data.profile_span(n) for n in (917_505, 950_000, 1_000_000)} == {1_048_576}


def test_similarity_and_uniqueness_share_one_profile_across_l(counted_profiles):
    first, second = (
        Config(200_000, 64, 10_000.0, "vaswani"),
        Config(210_000, 64, 10_000.0, "vaswani"),
    )
    assert data.profile_span(200_000) == data.profile_span(210_000)
    for config in (first, second):
        profile = similarity_part.profile_data(config, "cosine")
        uniqueness_part.uniqueness(config, "float64", "outputs")
        uniqueness_part.neighbour_distances(config, "float64", "outputs")
    # One pass over the offsets, the dot products; the cosine is divided out of them.
    assert counted_profiles == [(data.profile_span(210_000), "dot")]
    # What is drawn is the closed form at every offset of the second L (its envelope), as a
    # term-by-term sum gives it (to the rounding of k * w in float64, about 1e-11 here).
    _, lowest, highest = data.bucket_extremes(
        _closed_form(np.arange(210_000), second.bank), data.PROFILE_POINTS
    )
    np.testing.assert_allclose(profile.values, lowest, rtol=0, atol=1e-10)
    np.testing.assert_allclose(profile.upper, highest, rtol=0, atol=1e-10)


def _closed_form(offsets, bank):
    """The cosine profile, term by term (no shared computation involved)."""
    phases = np.multiply.outer(offsets.astype(np.float64), bank.frequencies)
    return np.cos(phases).mean(axis=1)


def test_uniqueness_report_from_the_shared_profile_is_the_core_s(counted_profiles):
    config = Config(70_000, 32, 10_000.0, "vaswani")
    shared = uniqueness_part.uniqueness(config, "float64", "outputs")
    alone = pe_core.uniqueness_report(70_000, 32)
    assert shared.closest_pair == alone.closest_pair
    assert shared.min_distance == pytest.approx(alone.min_distance, rel=1e-12)
    assert shared.max_cosine == pytest.approx(alone.max_cosine, abs=1e-13)


def test_distance_shares_its_comparison_past_the_distances_drawn():
    top = Config(1_000_000, 8192, 10_000.0, "vaswani")
    below = Config(950_000, 8192, 10_000.0, "vaswani")
    assert distance.drawn_config(top) == distance.drawn_config(below)
    assert distance.drawn_config(top).n_positions == distance.MAX_DISTANCE + 1
    small = Config(300, 8192, 10_000.0, "vaswani")
    assert distance.drawn_config(small) == small


def test_conventions_at_another_large_l_computes_no_profile_again(counted_profiles):
    for positions in (1_000_000, 950_000):
        at = new_app(view="conventions", L=positions, d=64)
        at.run()
        no_errors(at)
    # The first run computes each paired convention's profile of 4,096 offsets; the second none.
    assert counted_profiles and all(size == 4096 for size, _ in counted_profiles)
    first_run = len(counted_profiles)
    at = new_app(view="conventions", L=900_000, d=64)
    at.run()
    no_errors(at)
    assert len(counted_profiles) == first_run


@pytest.fixture
def counted_rope_work(monkeypatch):
    """Cold caches, and the calls of the RoPE lab's three curve computations from now on (by
    name)."""
    st.cache_data.clear()
    calls = []
    for name in ("rope_scores", "rope_decay_bound", "transformers_angle_errors"):
        original = getattr(pe_core, name)

        def counting(*args, _name=name, _original=original, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(pe_core, name, counting)
    yield calls
    st.cache_data.clear()


def test_the_rope_lab_computes_each_curve_once_per_encoding(counted_rope_work):
    """A change of L moves the score and bound offsets but not the sidebar's frequencies: the
    precision curves are shared; a change of q and k leaves the bound and precision alone."""
    at = new_app(view="rope", L=5_000, d=64)
    at.run()
    no_errors(at)
    # Scores, bound, then transformers' float32 and bfloat16 angle errors.
    assert sorted(counted_rope_work) == [
        "rope_decay_bound",
        "rope_scores",
        "transformers_angle_errors",
        "transformers_angle_errors",
    ]
    counted_rope_work.clear()
    at.number_input(key="L").set_value(6_000).run()
    no_errors(at)
    assert sorted(counted_rope_work) == ["rope_decay_bound", "rope_scores"]
    counted_rope_work.clear()
    at.segmented_control(key="rope_qk").set_value("random").run()
    no_errors(at)
    assert counted_rope_work == ["rope_scores"]
    counted_rope_work.clear()
    at.number_input(key="d").set_value(66).run()
    no_errors(at)
    assert len(counted_rope_work) == 4  # another head: everything again


def test_the_encoding_key_is_what_the_curves_read():
    from dashboard.views.rope.pairs import encoding_key

    def sidebar(d, L):
        return pe_core.rope_from_config(
            {"head_dim": d, "rope_theta": 10_000.0, "max_position_embeddings": L}
        )

    assert encoding_key(sidebar(64, 5_000)) == encoding_key(sidebar(64, 6_000))
    assert encoding_key(sidebar(64, 5_000)) != encoding_key(sidebar(66, 5_000))
    plain = pe_core.rope_frequencies(128, base=500_000.0)
    yarn = pe_core.rope_frequencies(
        128,
        base=500_000.0,
        scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192},
    )
    assert encoding_key(plain) != encoding_key(yarn)
    # transformers' float32 frequencies are part of it (not of the signature).
    rounded = dataclasses.replace(plain, inv_freq_float32=plain.inv_freq.astype(np.float32))
    assert rounded.signature == plain.signature
    assert (rounded.inv_freq_float32 != plain.inv_freq_float32).any()
    assert encoding_key(rounded) != encoding_key(plain)
