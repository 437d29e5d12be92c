"""ALiBi, T5's relative buckets, multimodal RoPE ids and learned tables: literal values from the
reference implementations first, then properties and bad input.

The literals are in ``tests/data/distance_reference.json``, computed once with the libraries'
own code (its ``sources`` key says which and how): the ALiBi paper's ``get_slopes``
(ofirpress/attention_with_linear_biases), Hugging Face transformers 5.23.0's BLOOM
``build_alibi_tensor`` and MPT-style slopes, T5Attention's ``_relative_position_bucket`` and
Qwen2-VL / Qwen2.5-VL / Qwen3-VL's ``get_rope_index`` and rotary recomposition (torch 2.13 CPU).
"""

import json
import math

import numpy as np
import pytest

import pe_core
from tests import DATA

REFERENCE = json.loads((DATA / "distance_reference.json").read_text(encoding="utf-8"))


class TestAlibiSlopes:
    @pytest.mark.parametrize("n_heads", [8, 12, 16, 24])
    def test_the_papers_reference_code_to_the_last_bit(self, n_heads):
        expected = REFERENCE["alibi"]["reference_get_slopes"][str(n_heads)]
        np.testing.assert_array_equal(pe_core.alibi_slopes(n_heads), expected)

    def test_every_recorded_head_count(self):
        for n_heads, expected in REFERENCE["alibi"]["reference_get_slopes"].items():
            np.testing.assert_array_equal(pe_core.alibi_slopes(int(n_heads)), expected)

    def test_bloom_computes_the_same_rule_in_float32(self):
        # BLOOM raises a float32 base (relative error up to 2**-24) to the powers 1 .. n, so
        # slope h carries up to about n * 2**-24 of relative error: equal to ours within that.
        for n_heads, expected in REFERENCE["alibi"]["bloom_float32"].items():
            n = int(n_heads)
            np.testing.assert_allclose(
                pe_core.alibi_slopes(n), expected, rtol=(n + 1) * 2**-24, atol=0
            )

    @pytest.mark.parametrize("n_heads", [1, 2, 4, 8, 16, 32, 64, 128])
    def test_powers_of_two_are_a_geometric_sequence(self, n_heads):
        h = np.arange(1, n_heads + 1)
        np.testing.assert_allclose(pe_core.alibi_slopes(n_heads), 2.0 ** (-8 * h / n_heads))

    @pytest.mark.parametrize("n_heads", [3, 5, 6, 7, 12, 20, 24, 40, 96])
    def test_other_counts_take_the_slopes_between(self, n_heads):
        below = 2 ** math.floor(math.log2(n_heads))
        slopes = pe_core.alibi_slopes(n_heads)
        np.testing.assert_array_equal(slopes[:below], pe_core.alibi_slopes(below))
        between = pe_core.alibi_slopes(2 * below)[0::2][: n_heads - below]
        np.testing.assert_array_equal(slopes[below:], between)

    @pytest.mark.parametrize(
        ("n_heads", "error", "match"),
        [
            (0, ValueError, "n_heads must be a positive integer, got 0"),
            (2.0, TypeError, "n_heads must be a positive integer"),
            (True, TypeError, "n_heads"),
            (pe_core.families.alibi.MAX_HEADS + 1, ValueError, "n_heads must be at most 4096"),
        ],
    )
    def test_bad_head_counts(self, n_heads, error, match):
        with pytest.raises(error, match=match):
            pe_core.alibi_slopes(n_heads)


class TestAlibiBias:
    def test_literal(self):
        bias = pe_core.alibi_bias([-2, 0, 1, 3], [0.5, 0.25])
        expected = [[-np.inf, 0.0, -0.5, -1.5], [-np.inf, 0.0, -0.25, -0.75]]
        np.testing.assert_array_equal(bias, expected)
        assert not np.signbit(bias[:, 1]).any()  # 0, not -0

    def test_symmetric(self):
        bias = pe_core.alibi_bias([-3, 3], [0.5], causal=False)
        np.testing.assert_array_equal(bias, [[-1.5, -1.5]])

    def test_bloom_differs_by_a_constant_per_query(self):
        # BLOOM adds m * key_position to every query's row: the softmax sees the same thing.
        m = pe_core.alibi_slopes(12)
        query = 9
        keys = np.arange(query + 1)
        ours = pe_core.alibi_bias(query - keys, m)
        bloom = m[:, None] * keys[None, :]
        np.testing.assert_allclose(bloom - ours, np.broadcast_to(m[:, None] * query, ours.shape))

    @pytest.mark.parametrize(
        ("offsets", "slopes", "kwargs", "match"),
        [
            ([0.5], [1.0], {}, "offsets must be whole numbers"),
            ([[1]], [1.0], {}, "offsets must be 1-dimensional"),
            ([2.0**60], [1.0], {}, "offsets must lie within"),
            ([1], [np.nan], {}, "slopes must be finite"),
            ([1], [1.0], {"causal": "yes"}, "causal must be True or False"),
        ],
    )
    def test_bad_input(self, offsets, slopes, kwargs, match):
        with pytest.raises((ValueError, TypeError), match=match):
            pe_core.alibi_bias(offsets, slopes, **kwargs)


class TestT5Buckets:
    @pytest.mark.parametrize("key", sorted(REFERENCE["t5"]["buckets"]))
    def test_transformers_literals(self, key):
        case = REFERENCE["t5"]["buckets"][key]
        relative = np.arange(-200, 201)
        ours = pe_core.t5_relative_buckets(
            relative,
            bidirectional=case["bidirectional"],
            num_buckets=case["num_buckets"],
            max_distance=case["max_distance"],
        )
        np.testing.assert_array_equal(ours, case["buckets"])

    def test_float32_boundary(self):
        # log(76536 / 80) / log(100000 / 80) * 80 lands within float32 rounding of an integer:
        # float64 gives bucket 156, transformers 5.23 / torch 2.13 (float32) gives 157.
        relative = [-76537, -76536, -76535, 76535, 76536, 76537]
        buckets = pe_core.t5_relative_buckets(
            relative, bidirectional=True, num_buckets=320, max_distance=100_000
        )
        assert buckets.tolist() == [157, 157, 156, 316, 317, 317]

    @pytest.mark.parametrize("bidirectional", [True, False])
    @pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (8, 20), (64, 1000)])
    def test_properties(self, bidirectional, num_buckets, max_distance):
        relative = np.arange(-5 * max_distance, 5 * max_distance + 1)
        buckets = pe_core.t5_relative_buckets(
            relative,
            bidirectional=bidirectional,
            num_buckets=num_buckets,
            max_distance=max_distance,
        )
        assert buckets.min() == 0 and buckets.max() == num_buckets - 1
        past = buckets[relative <= 0][::-1]  # by growing distance
        assert np.all(np.diff(past) >= 0)
        one_direction = num_buckets // 2 if bidirectional else num_buckets
        exact = one_direction // 2
        np.testing.assert_array_equal(past[:exact], np.arange(exact))
        if bidirectional:
            future = buckets[relative > 0]
            np.testing.assert_array_equal(future, past[1:] + one_direction)
        else:
            assert not np.any(buckets[relative > 0])

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"num_buckets": 3}, "num_buckets must be at least 4 when bidirectional, got 3"),
            ({"num_buckets": 1, "bidirectional": False}, "num_buckets must be at least 2"),
            ({"max_distance": 8}, "max_distance must exceed max_exact = 8"),
            ({"max_distance": 0}, "max_distance must be a positive integer"),
            ({"bidirectional": 1}, "bidirectional must be True or False"),
        ],
    )
    def test_bad_parameters(self, kwargs, match):
        with pytest.raises((ValueError, TypeError), match=match):
            pe_core.t5_relative_buckets([0, 1], **kwargs)


class TestMultimodalRope:
    @pytest.mark.parametrize("key", sorted(REFERENCE["mrope"]["position_ids"]))
    def test_transformers_literals(self, key):
        case = REFERENCE["mrope"]["position_ids"][key]
        segments = [s if isinstance(s, int) else tuple(s) for s in case["segments"]]
        ids = pe_core.mrope_position_ids(segments, spatial_merge_size=2)
        np.testing.assert_array_equal(ids, case["position_ids"])

    @pytest.mark.parametrize("key", sorted(REFERENCE["mrope"]["axes"]))
    def test_axis_of_each_pair(self, key):
        case = REFERENCE["mrope"]["axes"][key]
        axes = pe_core.mrope_axes(
            len(case["axes"]), case["mrope_section"], interleaved=case["interleaved"]
        )
        np.testing.assert_array_equal(axes, case["axes"])

    def test_axial_2d_rope_of_the_vision_encoder(self):
        case = REFERENCE["mrope"]["axial_qwen2_vl_vision"]
        inv_freq, axes = pe_core.axial_rope_frequencies(case["head_dim"], base=case["rope_theta"])
        ids = np.zeros((3, len(case["height_ids"])))
        ids[1], ids[2] = case["height_ids"], case["width_ids"]
        angles = pe_core.multi_axis_angles(ids, inv_freq, axes)
        # Their cos/sin are float32 (angles up to 95 rad): within 8e-6 absolute.
        np.testing.assert_allclose(np.tile(np.cos(angles), 2), case["cos"], rtol=0, atol=8e-6)
        np.testing.assert_allclose(np.tile(np.sin(angles), 2), case["sin"], rtol=0, atol=8e-6)

    def test_angles_follow_each_pairs_axis(self):
        ids = pe_core.mrope_position_ids([2, (1, 2, 4)])
        axes = pe_core.mrope_axes(4, [2, 1, 1])
        angles = pe_core.multi_axis_angles(ids, [1.0, 0.5, 0.25, 0.125], axes)
        np.testing.assert_array_equal(angles[:, 0], ids[0] * 1.0)
        np.testing.assert_array_equal(angles[:, 2], ids[1] * 0.25)
        np.testing.assert_array_equal(angles[:, 3], ids[2] * 0.125)

    @pytest.mark.parametrize(
        ("args", "match"),
        [
            (([[0, 1]], [1.0], [1]), r"axes must be rows of position_ids \(0 to 0\)"),
            (
                ([[0, 1]], [1.0, 2.0], [0]),
                r"axes must have one entry per frequency of inv_freq \(2\)",
            ),
            (([0, 1], [1.0], [0]), "position_ids must be 2-dimensional"),
        ],
    )
    def test_bad_angles(self, args, match):
        with pytest.raises(ValueError, match=match):
            pe_core.multi_axis_angles(*args)

    @pytest.mark.parametrize("head_dim", [6, 2, 0])
    def test_axial_needs_four_columns_a_pair(self, head_dim):
        with pytest.raises(ValueError, match="head_dim must be"):
            pe_core.axial_rope_frequencies(head_dim)

    def test_text_only_is_plain_positions(self):
        ids = pe_core.mrope_position_ids([5])
        np.testing.assert_array_equal(ids, np.tile(np.arange(5), (3, 1)))

    def test_interleaved_clips_like_the_reference(self):
        axes = pe_core.mrope_axes(8, [0, 5, 5], interleaved=True)
        assert axes.tolist() == [0, 1, 2, 0, 1, 2, 0, 1]

    @pytest.mark.parametrize(
        ("segments", "match"),
        [
            ([], "segments must hold at least one segment"),
            ("abc", "segments must be a sequence"),
            ([0], r"segments\[0\] \(a number of text tokens\) must be a positive integer"),
            ([(1, 3, 4)], r"segments\[0\]: H = 3 patches must be a multiple"),
            ([(1, 2)], r"segments\[0\] must be a number of text tokens or a \(T, H, W\)"),
            ([(1, 2, 2, -1.0)], r"time_interval\) must be > 0"),
            ([(2**20, 2**10, 2**10)], "the position ids would hold"),
        ],
    )
    def test_bad_sequences(self, segments, match):
        with pytest.raises((ValueError, TypeError), match=match):
            pe_core.mrope_position_ids(segments)

    @pytest.mark.parametrize(
        ("args", "match"),
        [
            ((64, [16, 24]), "mrope_section must hold 3 counts"),
            ((64, [16, 24, 23]), r"must add up to n_pairs = 64 .* \(sum 63\)"),
            ((64, [16, 24.0, 24]), r"mrope_section\[1\] must be an integer"),
            ((64, [16, -1, 49]), r"mrope_section\[1\] must be >= 0"),
        ],
    )
    def test_bad_sections(self, args, match):
        with pytest.raises((ValueError, TypeError), match=match):
            pe_core.mrope_axes(*args)


class TestLearnedTable:
    def test_statistics_and_seed(self):
        table = pe_core.learned_position_table(1024, 768)
        assert table.shape == (1024, 768)
        # 786,432 draws of N(0, 0.02^2): the sample std is within 1% (about 12 sigma).
        assert abs(table.std() / 0.02 - 1) < 0.01
        np.testing.assert_array_equal(table, pe_core.learned_position_table(1024, 768))
        assert not np.array_equal(table, pe_core.learned_position_table(1024, 768, seed=1))

    def test_no_structure_between_rows(self):
        table = pe_core.learned_position_table(200, 4096)
        similarity = pe_core.cosine_similarity(table)
        off_diagonal = similarity[~np.eye(200, dtype=bool)]
        # N(0, 1/4096): sigma 0.0156; 19,900 pairs stay within 6 sigma.
        assert np.max(np.abs(off_diagonal)) < 6 / 64

    @pytest.mark.parametrize(
        ("args", "kwargs", "match"),
        [
            ((0, 4), {}, "n_positions must be a positive integer"),
            ((4, 0), {}, "d_model must be a positive integer"),
            ((4, 4), {"std": 0}, "std must be > 0"),
            ((4, 4), {"seed": -1}, "seed must be a non-negative integer, got -1"),
            ((4, 4), {"seed": 1.5}, "seed must be a non-negative integer"),
            ((2**20, 2**10), {}, "the table is limited to 67,108,864 values"),
        ],
    )
    def test_bad_input(self, args, kwargs, match):
        with pytest.raises((ValueError, TypeError), match=match):
            pe_core.learned_position_table(*args, **kwargs)
