"""Uniqueness reports against brute force, the known collisions, and large inputs."""

import numpy as np
import pytest
import scipy.spatial.distance
from numpy.testing import assert_allclose

from pe_core import (
    CONVENTIONS,
    column_roles,
    frequencies,
    nearest_neighbor_distances,
    offset_similarity,
    quantize,
    sinusoidal_encoding,
    uniqueness_report,
)


def _brute_force_rows(positions, d_model, convention, precision, cast, base):
    """The rounded rows, written out plainly for the test."""
    positions = np.asarray(positions, dtype=float)
    w = frequencies(d_model, convention=convention, base=base)
    if cast == "positions":
        positions = quantize(positions, precision)
    if cast == "angles":
        angles = quantize(
            quantize(positions, precision)[:, None] * quantize(w, precision), precision
        )
        pair, role = column_roles(d_model, convention=convention)
        rows = np.zeros((positions.size, d_model))
        for column in range(d_model):
            if role[column] != "zero":
                f = np.sin if role[column] == "sin" else np.cos
                rows[:, column] = f(angles[:, pair[column]])
        return rows
    rows = sinusoidal_encoding(positions, d_model, convention=convention, base=base)
    return quantize(rows, precision) if cast == "outputs" else rows


def _brute_force(
    positions, d_model, convention="vaswani", precision="float64", cast="outputs", base=1e4
):
    rows = _brute_force_rows(positions, d_model, convention, precision, cast, base) + 0.0
    n = rows.shape[0]
    distances = scipy.spatial.distance.pdist(rows)  # every pair a < b, by differences
    n_distinct = np.unique(rows, axis=0).shape[0]
    first = None
    for j in range(n):
        if np.any(np.all(rows[:j] == rows[j], axis=1)):
            first = positions[j]
            break
    return n_distinct, first, distances.min()


class TestKnownCollisions:
    def test_bfloat16_positions_collide_at_257(self):
        report = uniqueness_report(1000, 512, precision="bfloat16", cast="positions")
        assert (report.first_collision, report.collides_with) == (257, 256)
        assert report.min_distance == 0.0
        assert report.closest_pair == (256, 257)
        assert "positions 256 and 257 collide" in report.summary()

    def test_float16_positions_collide_at_2049(self):
        report = uniqueness_report(3000, 512, precision="float16", cast="positions")
        assert (report.first_collision, report.collides_with) == (2049, 2048)

    def test_no_collision_below_the_limit(self):
        assert uniqueness_report(257, 512, precision="bfloat16", cast="positions").all_distinct
        assert uniqueness_report(2049, 64, precision="float16", cast="positions").all_distinct

    def test_count_of_duplicates_bfloat16(self):
        n = 5000
        report = uniqueness_report(n, 64, precision="bfloat16", cast="positions")
        distinct = np.unique(quantize(np.arange(n), "bfloat16")).size
        assert report.n_distinct == distinct
        assert report.n_duplicates == n - distinct


class TestAgainstBruteForce:
    @pytest.mark.parametrize("convention", list(CONVENTIONS))
    @pytest.mark.parametrize("d_model", [2, 4, 6, 7, 16])
    @pytest.mark.parametrize("precision", ["float64", "float32", "float16", "bfloat16"])
    @pytest.mark.parametrize("cast", ["positions", "angles", "outputs"])
    def test_small_cases(self, convention, d_model, precision, cast):
        positions = np.arange(300)
        report = uniqueness_report(
            300, d_model, convention=convention, precision=precision, cast=cast, base=100.0
        )
        n_distinct, first, min_distance = _brute_force(
            positions, d_model, convention, precision, cast, base=100.0
        )
        assert report.n_distinct == n_distinct
        assert report.first_collision == first
        assert report.min_distance == pytest.approx(
            min_distance, abs=report.distance_error_bound + 1e-12
        )

    def test_arbitrary_positions(self):
        positions = np.array([0.0, 3.5, 10.25, -7.0, 3.5 + 2 * np.pi * 100])
        report = uniqueness_report(positions, 2, base=10.0)
        _, _, min_distance = _brute_force(positions, 2, base=10.0)
        assert report.method == "pairwise"
        assert report.min_distance == pytest.approx(min_distance, abs=1e-12)

    def test_repeated_position(self):
        report = uniqueness_report([1.0, 2.0, 1.0], 8)
        assert (report.first_collision, report.collides_with, report.n_duplicates) == (1, 1, 1)


class TestClosedForm:
    def test_closest_pair_is_offset_one_at_paper_settings(self):
        report = uniqueness_report(2048, 512)
        assert report.method == "closed form"
        assert report.closest_pair == (0, 1)
        rows = sinusoidal_encoding([0, 1], 512)
        assert report.min_distance == pytest.approx(np.linalg.norm(rows[0] - rows[1]), rel=1e-14)
        assert report.distance_error_bound < 1e-12

    def test_small_d_model_far_near_collision(self):
        # d_model=2: the distance is 2|sin(offset/2)|, smallest at offset 355 (355/113 ~ pi).
        report = uniqueness_report(1000, 2)
        assert report.closest_pair == (0, 710)
        assert report.min_distance == pytest.approx(2 * abs(np.sin(355.0)), rel=1e-9)
        assert report.nearest_offsets[0][0] == 710

    def test_million_positions(self):
        report = uniqueness_report(1_000_000, 512)
        assert report.all_distinct and report.n_positions == 1_000_000
        assert report.closest_pair == (0, 1)

    def test_max_cosine_matches_rows(self):
        report = uniqueness_report(200, 16, base=50.0)
        rows = sinusoidal_encoding(200, 16, base=50.0)
        cosine = rows @ rows.T / 8.0
        np.fill_diagonal(cosine, -np.inf)
        assert report.max_cosine == pytest.approx(cosine.max(), abs=1e-12)

    def test_single_position(self):
        report = uniqueness_report(1, 8)
        assert report.min_distance is None and report.all_distinct
        assert report.summary() == "1 position: nothing to compare"


class TestNearestNeighbour:
    @pytest.mark.parametrize("d_model", [2, 8, 7])
    def test_matches_brute_force(self, d_model):
        rows = sinusoidal_encoding(400, d_model, base=30.0)
        distances = np.linalg.norm(rows[:, None] - rows[None, :], axis=2)
        np.fill_diagonal(distances, np.inf)
        got = nearest_neighbor_distances(400, d_model, base=30.0)
        assert_allclose(got, distances.min(axis=1), atol=1e-9)


class TestGivenOffsetDots:
    """``offset_dots``: a profile the caller holds (for more offsets) gives the same answers."""

    @pytest.mark.parametrize(
        ("n", "d_model", "base", "precision", "cast"),
        [
            (1000, 2, 10_000.0, "float64", "outputs"),
            (2048, 512, 10_000.0, "float64", "outputs"),
            (3000, 16, 50.0, "bfloat16", "positions"),
            (500, 8, 100.0, "float16", "outputs"),
        ],
    )
    def test_same_report_as_computed(self, n, d_model, base, precision, cast):
        longer = offset_similarity(np.arange(1, 2 * n + 7), d_model, base=base, kind="dot")
        kwargs = dict(base=base, precision=precision, cast=cast)
        given = uniqueness_report(n, d_model, offset_dots=longer, **kwargs)
        computed = uniqueness_report(n, d_model, **kwargs)
        assert given.closest_pair == computed.closest_pair
        assert given.n_distinct == computed.n_distinct
        assert given.first_collision == computed.first_collision
        assert given.min_distance == pytest.approx(computed.min_distance, rel=1e-10, abs=1e-12)
        assert given.max_cosine == pytest.approx(computed.max_cosine, abs=1e-12)
        # The same offsets; their distances agree to the profile's rounding (a few ulps).
        assert [o for o, _ in given.nearest_offsets] == [o for o, _ in computed.nearest_offsets]
        assert_allclose(
            [v for _, v in given.nearest_offsets],
            [v for _, v in computed.nearest_offsets],
            rtol=1e-12,
        )

    @pytest.mark.parametrize("d_model", [2, 8, 64])
    def test_same_nearest_neighbours_and_left_unchanged(self, d_model):
        longer = offset_similarity(np.arange(1, 1000), d_model, base=30.0, kind="dot")
        kept = longer.copy()
        got = nearest_neighbor_distances(400, d_model, base=30.0, offset_dots=longer)
        assert_allclose(got, nearest_neighbor_distances(400, d_model, base=30.0), atol=1e-12)
        np.testing.assert_array_equal(longer, kept)  # the caller's array is not overwritten

    def test_too_few_values(self):
        with pytest.raises(ValueError, match=r"offset_dots must be a 1-D array of at least n - 1"):
            uniqueness_report(100, 8, offset_dots=np.ones(98))

    @pytest.mark.parametrize("bad", [np.inf, np.nan, 5.0])
    def test_values_out_of_reach(self, bad):
        dots = offset_similarity(np.arange(1, 100), 8, kind="dot")
        dots[10] = bad  # 4 pairs: a dot product lies within +/-4
        with pytest.raises(ValueError, match="offset_dots"):
            nearest_neighbor_distances(100, 8, offset_dots=dots)


class TestErrors:
    def test_float16_overflowing_positions(self):
        with pytest.raises(ValueError, match="largest finite float16"):
            uniqueness_report(70_000, 8, precision="float16", cast="positions")

    def test_too_many_arbitrary_positions(self):
        with pytest.raises(ValueError, match="pair by pair"):
            uniqueness_report(np.arange(5000) ** 1.5, 8)

    def test_bad_cast(self):
        with pytest.raises(ValueError, match="cast must be one of"):
            uniqueness_report(10, 8, cast="weights")


class TestErrorBoundHolds:
    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("d_model", "precision", "cast"),
        [
            (8, "float32", "angles"),
            (16, "bfloat16", "outputs"),
            (6, "float16", "outputs"),
            (12, "float32", "outputs"),
            (10, "bfloat16", "angles"),
        ],
    )
    def test_reported_distance_within_bound_of_rounded_rows(self, d_model, precision, cast):
        # Above PAIRWISE_LIMIT the report uses the exact closed form plus the rounding bound;
        # check the bound against brute force on the rounded rows.
        n = 4500
        report = uniqueness_report(n, d_model, precision=precision, cast=cast, base=300.0)
        n_distinct, first, min_distance = _brute_force(
            np.arange(n), d_model, "vaswani", precision, cast, base=300.0
        )
        assert report.n_distinct == n_distinct and report.first_collision == first
        assert abs(report.min_distance - min_distance) <= report.distance_error_bound + 1e-12
