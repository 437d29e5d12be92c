"""Hostile and generated config.json input for rope_from_config (issue 16): only ValueError or
TypeError with a message, never another exception, never a hang."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pe_core
from tests.test_fuzz_core import EXAMPLES

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
    st.sampled_from(["default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"]),
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
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore", UserWarning)

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "config is not valid JSON"),
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
        "deep-nesting",
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


def test_duplicate_keys_last_wins_as_in_json():
    # Python's json (and Hugging Face's loading) keep the last value of a duplicated key.
    rope = pe_core.rope_from_config('{"head_dim": 8, "head_dim": 64}')
    assert rope.head_dim == 64


def test_a_10_mb_paste_is_refused_quickly_by_length():
    text = json.dumps({**BASE, "padding": "x" * 10_000_000})
    # The core parses it (json is linear); the app refuses it by length first (max_chars).
    assert pe_core.rope_from_config(text).head_dim == 16
