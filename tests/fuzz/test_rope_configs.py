"""Hostile and generated config.json input for rope_from_config (issue 16): only ValueError or
TypeError with a message, never another exception, never a hang."""

import json
import math
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pe_core
from tests.fuzz.test_core import EXAMPLES

pytestmark = pytest.mark.fuzz

BASE = {
    "hidden_size": 64,
    "num_attention_heads": 4,
    "max_position_embeddings": 4096,
    "rope_theta": 10000.0,
}
KEYS = [
    "rope_type",
    "type",
    "factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "attention_factor",
    "truncate",
    "original_max_position_embeddings",
    "low_freq_factor",
    "high_freq_factor",
    "short_factor",
    "long_factor",
    "rope_theta",
    "partial_rotary_factor",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(pe_core.ROPE_TYPES),  # every registered variant, new ones too
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=8), st.dictionaries(st.text(max_size=6), children, max_size=6)
    ),
    max_leaves=30,
)


def _check(call):
    try:
        result = call()
    except (ValueError, TypeError) as error:
        assert str(error), "an error without a message"
        return None
    assert isinstance(result, pe_core.RotaryEncoding)
    assert all(math.isfinite(w) and w >= 0 for w in result.inv_freq.tolist())
    assert math.isfinite(result.attention_factor)
    return result


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    scaling=st.dictionaries(st.sampled_from(KEYS), json_values, max_size=8),
    top=st.dictionaries(st.sampled_from([*BASE, "head_dim", "qk_rope_head_dim"]), json_values),
    form=st.sampled_from(["old", "new", "text"]),
    seq_len=st.one_of(st.none(), st.integers(-5, 10**6)),
)
def test_generated_configs(scaling, top, form, seq_len):
    config = {**BASE, **top}
    if form == "new":
        config["rope_parameters"] = scaling
    else:
        config["rope_scaling"] = scaling
    if form == "text":
        try:
            config = json.dumps(config)
        except ValueError:  # a value json cannot write (e.g. an int of 400 digits: allowed)
            return
    with _no_fail():
        _check(lambda: pe_core.rope_from_config(config, seq_len=seq_len))


class _no_fail:
    """Warnings (HF's, as UserWarning) are allowed; they must not be errors."""

    def __enter__(self):

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore", UserWarning)

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"\xff\xfe{", "config is not valid JSON"),
        ('{"hidden_size": 64, "num_attention_heads": 4, "rope_theta": NaN}', "rope_theta"),
        ('{"head_dim": 64, "rope_theta": Infinity}', "rope_theta"),
        ('{"head_dim": 64, "rope_theta": 1e400}', "rope_theta"),
        ('{"head_dim": 1' + "0" * 400 + "}", "head_dim"),
        ('{"head_dim": "64"}', "head_dim"),
        ('{"head_dim": 64, "rope_scaling": {"type": "linear", "factor": "2"}}', "factor"),
        ('{"head_dim": 64, "rope_scaling": {"type": "su"}}', "rope_type"),
        ('{"head_dim": 64, "rope_scaling": [1, 2]}', "rope_scaling"),
        ("[1, 2, 3]", "config must be a mapping"),
        ("", "config is not valid JSON"),
    ],
    ids=[
        "not-utf8",
        "nan",
        "infinity",
        "1e400",
        "huge-int",
        "string-number",
        "string-factor",
        "unknown-type",
        "list-scaling",
        "list-config",
        "empty",
    ],
)
def test_hostile_configs(text, message):
    with pytest.raises((ValueError, TypeError), match=message):
        pe_core.rope_from_config(text)


class TestJsonNesting:
    """Issue 42: one nesting limit of the project's own, the same answer on every Python."""

    MESSAGE = f"config nests arrays and objects more than {pe_core.MAX_JSON_DEPTH} levels deep"
    DEPTHS_PAST = (pe_core.MAX_JSON_DEPTH + 1, 1_000, 2_000, 5_000, 100_000)

    @staticmethod
    def junk_beside_keys(depth: int) -> str:
        # A valid config whose extra key holds arrays ``depth - 1`` deep: ``depth`` in all.
        return '{"head_dim": 64, "junk": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    @pytest.mark.parametrize("depth", DEPTHS_PAST)
    @pytest.mark.parametrize("form", ["arrays", "objects", "beside-keys", "bytes"])
    def test_past_the_limit_one_message(self, depth, form):
        text = {
            "arrays": "[" * depth + "]" * depth,
            "objects": '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1),
            "beside-keys": self.junk_beside_keys(depth),
            "bytes": self.junk_beside_keys(depth).encode("utf-16"),
        }[form]
        with pytest.raises(ValueError, match=self.MESSAGE):
            pe_core.rope_from_config(text)
        with pytest.raises(ValueError, match=self.MESSAGE):
            pe_core.load_json(text, name="config")

    @pytest.mark.parametrize("depth", DEPTHS_PAST)
    def test_a_deep_mapping_from_python(self, depth):
        config = {"head_dim": 64}
        inner = config
        for _ in range(depth - 1):
            inner["a"] = {}
            inner = inner["a"]
        with pytest.raises(ValueError, match=self.MESSAGE):
            pe_core.rope_from_config(config)

    def test_a_self_referencing_mapping(self):
        config = {"head_dim": 64, "junk": []}
        config["junk"].append(config)
        with pytest.raises(ValueError, match=self.MESSAGE):
            pe_core.rope_from_config(config)

    def test_at_the_limit_read_like_any_other(self):
        text = self.junk_beside_keys(pe_core.MAX_JSON_DEPTH)
        assert pe_core.rope_from_config(text).head_dim == 64
        parsed = pe_core.load_json(text)
        assert pe_core.rope_from_config(parsed).head_dim == 64

    def test_brackets_inside_strings_do_not_count(self):
        deep = "[" * 5_000 + "{" * 5_000
        text = json.dumps({"head_dim": 64, "note": deep, "escaped": 'a "quoted" ' + deep})
        assert pe_core.load_json(text)["note"] == deep
        assert pe_core.rope_from_config(text).head_dim == 64

    @pytest.mark.parametrize(
        "text",
        ['{"head_dim": 64', '"unterminated ' + "[" * 500, '["a \\" ' + "[" * 500, "\ud800"],
        ids=["unclosed", "unterminated-string", "escaped-quote", "lone-surrogate"],
    )
    def test_broken_text(self, text):
        with pytest.raises(ValueError, match="text is not valid JSON"):
            pe_core.load_json(text)


def test_duplicate_keys_last_wins_as_in_json():
    # Python's json (and Hugging Face's loading) keep the last value of a duplicated key.
    rope = pe_core.rope_from_config('{"head_dim": 8, "head_dim": 64}')
    assert rope.head_dim == 64


def test_a_10_mb_paste_is_refused_quickly_by_length():
    text = json.dumps({**BASE, "padding": "x" * 10_000_000})
    # The core parses it (json is linear); the app refuses it by length first (max_chars).
    assert pe_core.rope_from_config(text).head_dim == 16
