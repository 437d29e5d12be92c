"""The family registry: every family has its fields, its parameters are checked, and its score
is what the core's own functions give."""

import dataclasses

import numpy as np
import pytest

import pe_core
from pe_core.families.rotary import query_and_key


class TestRegistry:
    def test_keys_and_order(self):
        # A new family adds its key; these are the families of the first release.
        first = ["added", "rope", "alibi", "learned", "nope", "t5"]
        assert [key for key in pe_core.FAMILIES if key in first] == first
        orders = [f.order for f in pe_core.FAMILIES.values()]
        assert orders == sorted(orders) and len(set(orders)) == len(orders)

    @pytest.mark.parametrize("family", pe_core.FAMILIES.values(), ids=list(pe_core.FAMILIES))
    def test_every_family_has_its_fields(self, family):
        assert pe_core.FAMILIES[family.key] is family
        for text in (family.name, family.note, family.citation, family.reference):
            assert isinstance(text, str) and text.strip()
        assert family.note.endswith(".")
        for parameter in family.parameters:
            assert parameter.help and callable(parameter.check)
            # The default passes its own check unchanged.
            assert parameter.check(parameter.default) == parameter.default
        assert family.checked() == family.defaults
        if family.coincidence is not None:
            assert family.coincidence.other in pe_core.FAMILIES
            assert set(family.coincidence.when) <= set(family.defaults)

    def test_names_are_distinct(self):
        names = [f.name for f in pe_core.FAMILIES.values()]
        assert len(set(names)) == len(names)

    def test_registry_is_read_only_and_keys_unique(self):
        with pytest.raises(TypeError):
            pe_core.FAMILIES["x"] = pe_core.FAMILIES["nope"]
        clash = dataclasses.replace(pe_core.FAMILIES["nope"], name="other")
        with pytest.raises(ValueError, match="a family with key 'nope' is already registered"):
            pe_core.families.register(clash)


class TestScores:
    """Each family's score is the core function's, unchanged."""

    @pytest.mark.parametrize("n", [1, 2, 7, 300])
    @pytest.mark.parametrize("convention", ["vaswani", "tensor2tensor"])
    def test_added_is_the_dot_product_of_the_encodings(self, n, convention):
        bank = pe_core.CONVENTIONS[convention].bank(10, 100.0)
        pe = pe_core.sinusoidal_encoding(n, bank)
        expected = pe[n - 1 - np.arange(n)] @ pe[n - 1]
        np.testing.assert_allclose(
            pe_core.FAMILIES["added"].score(n, bank), expected, rtol=0, atol=1e-13
        )

    def test_d_model_means_the_papers_encoding_at_base(self):
        bank = pe_core.CONVENTIONS["vaswani"].bank(16, 300.0)
        np.testing.assert_array_equal(
            pe_core.FAMILIES["added"].score(40, 16, base=300.0),
            pe_core.FAMILIES["added"].score(40, bank, base=300.0),
        )

    def test_added_at_even_d_model_is_the_closed_form(self):
        dot = pe_core.offset_similarity(np.arange(500), 64, kind="dot")
        np.testing.assert_allclose(pe_core.FAMILIES["added"].score(500, 64), dot, atol=1e-12)

    @pytest.mark.parametrize("vectors", ["ones", "random", "one pair"])
    @pytest.mark.parametrize(("d_model", "head_dim"), [(16, 16), (7, 6), (1, 2)])
    def test_rope_is_rope_scores(self, vectors, d_model, head_dim):
        rope = pe_core.rope_frequencies(head_dim, base=500.0)
        q, k = query_and_key(rope, vectors)
        expected = pe_core.rope_scores(np.arange(50), rope, q, k)
        got = pe_core.FAMILIES["rope"].score(50, d_model, base=500.0, vectors=vectors)
        np.testing.assert_array_equal(got, expected)

    def test_rope_with_ones_is_twice_the_added_sinusoid(self):
        rope = pe_core.FAMILIES["rope"].score(200, 32)
        added = pe_core.FAMILIES["added"].score(200, 32)
        np.testing.assert_allclose(rope, 2 * added, rtol=0, atol=1e-12)

    def test_query_and_key(self):
        rope = pe_core.rope_frequencies(8)
        ones = query_and_key(rope, "ones")
        assert [v.tolist() for v in ones] == [[1.0] * 8, [1.0] * 8]
        q, k = query_and_key(rope, "one pair")
        assert q.tolist() == [0, 0, 0, 1, 0, 0, 0, 1] and q is k  # the slowest pair, halves

    def test_alibi_is_alibi_bias(self):
        slopes = pe_core.alibi_slopes(12)
        for slope in slopes:
            got = pe_core.FAMILIES["alibi"].score(40, 8, slope=slope)
            np.testing.assert_array_equal(got, pe_core.alibi_bias(np.arange(40), [slope])[0])
        default = pe_core.FAMILIES["alibi"].score(4, 8)
        np.testing.assert_array_equal(default, -np.arange(4) * pe_core.alibi_slopes(1)[0])

    @pytest.mark.parametrize(("std", "seed"), [(0.02, 0), (1.0, 3)])
    def test_learned_is_the_table_dot_product(self, std, seed):
        table = pe_core.learned_position_table(30, 12, std=std, seed=seed)
        got = pe_core.FAMILIES["learned"].score(30, 12, std=std, seed=seed)
        np.testing.assert_allclose(got, table[29 - np.arange(30)] @ table[29], rtol=1e-14)

    def test_nope_is_flat(self):
        assert pe_core.FAMILIES["nope"].score(5, 3).tolist() == [0.0] * 5

    def test_t5_has_no_score_before_training(self):
        with pytest.raises(ValueError, match="t5 has no score against distance"):
            pe_core.FAMILIES["t5"].score(5, 8)


class TestBadParameters:
    @pytest.mark.parametrize(
        ("key", "parameters", "match"),
        [
            ("rope", {"vectors": "twos"}, "vectors must be one of 'ones', 'random', 'one pair'"),
            ("rope", {"vector": "ones"}, r"rope has no parameter vector \(its parameters: vectors"),
            ("alibi", {"slope": 0.0}, "slope must be > 0 and at most 1e300, got 0.0"),
            ("alibi", {"slope": float("nan")}, "slope"),
            ("learned", {"std": -1.0}, "std must be > 0"),
            ("learned", {"seed": -2}, "seed must be a non-negative integer, got -2"),
            ("nope", {"slope": 1.0}, r"nope has no parameter slope \(its parameters: none\)"),
            ("t5", {"num_buckets": 0}, "num_buckets must be a positive integer, got 0"),
        ],
    )
    def test_named_with_the_rule(self, key, parameters, match):
        with pytest.raises(ValueError, match=match):
            pe_core.FAMILIES[key].checked(**parameters)

    @pytest.mark.parametrize(
        ("key", "parameters", "match"),
        [
            ("t5", {"bidirectional": 1}, "bidirectional must be True or False"),
            ("learned", {"seed": 1.5}, "seed must be a non-negative integer"),
            ("rope", {"vectors": 1}, "vectors must be one of"),
        ],
    )
    def test_wrong_kind_is_also_a_type_error(self, key, parameters, match):
        with pytest.raises(TypeError, match=match):
            pe_core.FAMILIES[key].checked(**parameters)

    @pytest.mark.parametrize(
        ("args", "match"),
        [
            ((0, 8), "n_distances must be a positive integer, got 0"),
            ((5, 0), "d_model must be a positive integer, got 0"),
            ((5, 8, -1.0), "base"),
        ],
    )
    def test_bad_score_arguments(self, args, match):
        n, bank, *base = args
        with pytest.raises(ValueError, match=match):
            pe_core.FAMILIES["nope"].score(n, bank, **({"base": base[0]} if base else {}))

    def test_score_checks_parameters_before_computing(self):
        with pytest.raises(ValueError, match="slope must be > 0"):
            pe_core.FAMILIES["alibi"].score(3, 8, slope=-1.0)
