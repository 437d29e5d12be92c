"""The Distance view, driven by AppTest: what it draws is pe_core's, its sentences hold, and bad
parameters get a message naming the rule."""

import numpy as np
import pytest

import pe_core
from dashboard.views import distance
from tests.apptest_helpers import decode, figures, new_app, no_errors

pytestmark = pytest.mark.timeout(600)


def _chart(at, title_start: str) -> dict:
    return next(f for f in figures(at) if f["layout"]["title"]["text"].startswith(title_start))


def _text(at) -> str:
    return " ".join(e.value for e in (*at.markdown, *at.caption))


def test_default_draws_every_family_and_the_exact_values():
    at = new_app(view="distance", L=2048, d=512)  # the paper's, as a link names it
    at.run()
    no_errors(at)
    assert len(figures(at)) == 5  # comparison, slopes, buckets, ids, pairs
    comparison = _chart(at, "How the score changes")
    assert [t["name"] for t in comparison["data"]] == list(distance.FAMILIES)
    curves = {t["name"]: decode(t["y"]) for t in comparison["data"]}
    assert decode(comparison["data"][0]["x"]).tolist() == list(range(2048))
    # ALiBi is the straight line -d / 2047; NoPE is flat; every curve starts at 0.
    np.testing.assert_allclose(curves["ALiBi"], -np.arange(2048) / 2047, rtol=0, atol=1e-15)
    assert not np.any(curves["NoPE"])
    assert all(c[0] == 0 for c in curves.values())
    # Added sinusoid: PE(k).PE(k - d) is the closed form sum of cos(d w_i), shifted and scaled.
    dot = pe_core.offset_similarity(np.arange(2048), 512, kind="dot")
    np.testing.assert_allclose(
        curves["added sinusoid"], (dot - dot[0]) / np.max(np.abs(dot - dot[0])), atol=1e-12
    )
    assert "the two lines coincide" in _text(at)

    slopes = _chart(at, "Slope m")
    np.testing.assert_array_equal(decode(slopes["data"][0]["y"]), pe_core.alibi_slopes(8))
    buckets = _chart(at, "Bucket of each")
    relative = decode(buckets["data"][0]["x"])
    assert relative[0] == -200 and relative[-1] == 200
    np.testing.assert_array_equal(
        decode(buckets["data"][0]["y"]), pe_core.t5_relative_buckets(relative)
    )
    # The last bucket back: bucket 15 from distance 91 on (the first d with bucket(-d) = 15).
    assert pe_core.t5_relative_buckets([-90, -91]).tolist() == [14, 15]
    assert "every key 91 or more positions back shares the last one, 15" in _text(at)
    assert "keys after the query use buckets of their own, the last one 31" in _text(at)
    ids = _chart(at, "Position id")
    expected = pe_core.mrope_position_ids([4, (1, 8, 12), 5])
    for row, trace in zip(expected, ids["data"], strict=True):
        np.testing.assert_array_equal(decode(trace["y"]), row)
    assert f"{expected.shape[1]} tokens" in _text(at)
    pairs = _chart(at, "Which axis")
    assert [t["name"] for t in pairs["data"]] == [
        "temporal (16 pairs)",
        "height (24 pairs)",
        "width (24 pairs)",
    ]


@pytest.mark.parametrize(
    "query",
    [
        {"conv": "tensor2tensor"},  # other frequencies than RoPE's
        {"d": 7},  # an unpaired column
        {"dist_qk": "random"},
    ],
)
def test_the_coincidence_is_claimed_only_where_it_holds(query):
    at = new_app(view="distance", **query)
    at.run()
    no_errors(at)
    curves = {t["name"]: decode(t["y"]) for t in _chart(at, "How the score")["data"]}
    assert not np.allclose(curves["added sinusoid"], curves["RoPE"], atol=1e-9)
    assert "coincide" not in _text(at)


def test_families_are_chosen_in_the_link():
    at = new_app(view="distance", query={"dist_fam": ["ALiBi", "NoPE"]})
    at.run()
    no_errors(at)
    assert [t["name"] for t in _chart(at, "How the score")["data"]] == ["ALiBi", "NoPE"]
    assert "**RoPE**" not in _text(at)


@pytest.mark.slow
def test_top_of_the_range_says_what_it_draws():
    at = new_app(view="distance", d=8192, L=1_000_000)
    at.run()
    no_errors(at)
    text = _text(at)
    assert "distances 0 to 4,096 (L − 1, at most 4,096)" in text
    rows = distance.LEARNED_VALUES // 8192
    assert f"drawn for the first {rows:,} distances" in text
    learned = decode(
        next(t for t in _chart(at, "How the score")["data"] if t["name"].startswith("learned"))["y"]
    )
    assert np.all(np.isfinite(learned[:rows])) and np.all(np.isnan(learned[rows:]))


def test_causal_buckets_are_described_as_such():
    at = new_app(view="distance", t5_bidir="false")
    at.run()
    no_errors(at)
    assert pe_core.t5_relative_buckets([-112, -113], bidirectional=False).tolist() == [30, 31]
    assert "every key 113 or more positions back shares the last one, 31" in _text(at)
    assert "every key after the query shares bucket 0 with the query itself" in _text(at)


def test_alibi_heads_not_a_power_of_two():
    at = new_app(view="distance", alibi_heads=12)
    at.run()
    no_errors(at)
    assert "the 8 slopes of 8 heads, then 4 of the slopes of 16 heads" in _text(at)
    np.testing.assert_array_equal(
        decode(_chart(at, "Slope m")["data"][0]["y"]), pe_core.alibi_slopes(12)
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"t5_buckets": 3}, "num_buckets must be at least 4 when bidirectional"),
        ({"t5_max": 8}, "max_distance must exceed max_exact = 8"),
        ({"mm_h": 7}, "H = 7 patches must be a multiple of spatial_merge_size = 2"),
    ],
)
def test_impossible_parameters_are_named(query, message):
    at = new_app(view="distance", **query)
    at.run()
    no_errors(at)
    assert any(message in w.value for w in at.warning), [w.value for w in at.warning]
    assert len(figures(at)) == 4  # the rest of the view is drawn


def test_a_video_with_time_on_its_own_axis():
    at = new_app(view="distance", mm_t=3, mm_h=4, mm_w=4, mm_text=0, mm_after=0)
    at.run()
    no_errors(at)
    ids = [decode(t["y"]) for t in _chart(at, "Position id")["data"]]
    # <|vision_start|> at 0; 3 frames of 2 x 2 tokens from id 1; <|vision_end|> at 1 + 2.
    assert ids[0].tolist() == [0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3]
    assert ids[1].tolist() == [0, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2, 3]
    assert ids[2].tolist() == [0, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3]
    assert "3 × 2 × 2 vision tokens" in _text(at)


@pytest.mark.parametrize("families", [["0"], ["RoPE", "nonsense"], [""]])
def test_unknown_families_in_a_link_are_named(families):
    at = new_app(view="distance", query={"dist_fam": families})
    at.run()
    no_errors(at)
    assert any("expected values from added sinusoid, RoPE, ALiBi" in w.value for w in at.warning), [
        w.value for w in at.warning
    ]
    assert len(figures(at)) == 5


def test_the_vision_encoders_axial_rope():
    at = new_app(view="distance", mm_layout="axial 2-D (Qwen2-VL's vision encoder)")
    at.run()
    no_errors(at)
    pairs = _chart(at, "Which axis")
    assert [t["name"] for t in pairs["data"]] == ["height (20 pairs)", "width (20 pairs)"]
    inv_freq, _ = pe_core.axial_rope_frequencies(80, base=10_000.0)
    for trace in pairs["data"]:
        np.testing.assert_allclose(decode(trace["y"]), 2 * np.pi / inv_freq[:20], rtol=1e-15)
