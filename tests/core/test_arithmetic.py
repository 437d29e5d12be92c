"""The textbook formula in a library's compute dtype, against tables the libraries computed.

``data/arithmetic_reference.json`` holds tables computed once with the libraries' code (its
``sources`` key names the code and versions): keras-hub's ``SinePositionEncoding`` under the
float32, float16 and bfloat16 dtype policies (torch backend), PyTorch's tutorial
``PositionalEncoding`` and fairseq's ``get_embedding`` in float32. The float16 and bfloat16
tables are reproduced bit for bit. In float32 an entry may differ by one unit in the last place
(torch's ``sin``, ``exp`` and ``pow`` are not always correctly rounded): the tolerance is
``2**-23``, the float32 spacing just below 1, while the exact encoding is up to 4e-4 away.
"""

from __future__ import annotations

import json
import warnings

import ml_dtypes
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from pe_core import (
    CONVENTIONS,
    Precision,
    PrecisionKind,
    identify_encoding,
    sinusoidal_encoding,
    textbook_encoding,
)
from tests import DATA

REFERENCE = json.loads((DATA / "arithmetic_reference.json").read_text())
FLOAT32_ULP_BELOW_ONE = 2.0**-23


def _keras_rows(policy):
    entry = REFERENCE[f"keras_hub_{policy}"]
    for start, rows in zip(entry["starts"], entry["table"], strict=True):
        yield np.arange(start, start + entry["rows_per_start"]), np.array(rows)


@pytest.mark.parametrize("policy", ["float16", "bfloat16"])
def test_keras_hub_half_precision_bit_for_bit(policy):
    for positions, expected in _keras_rows(policy):
        got = textbook_encoding(positions, 16, compute_dtype=policy, formula="pow")
        if policy == "float16" and positions[0] == 30_000:
            # Positions 30,000 to 30,002 are all 30,000 in float16, and pair 4 (w = 0.01) turns
            # to 300 radians: sin(300) = -0.99975584 lies 2e-8 from the float16 tie between -1
            # and -0.99951. Through float32 (as TensorFlow and XLA compute it; rounded to
            # -0.99975586, the tie itself) it is -1; torch's float32 sin, an ulp off, gives
            # -0.99951. One float16 ulp, in that column only.
            assert_array_equal(got[:, 8], [-1.0] * 3)
            assert_array_equal(expected[:, 8], [-0.99951171875] * 3)
            got[:, 8] = expected[:, 8]
        assert_array_equal(got, expected, err_msg=f"{policy} at {positions}")


def test_keras_hub_float32_within_an_ulp():
    for positions, expected in _keras_rows("float32"):
        got = textbook_encoding(positions, 16, compute_dtype="float32", formula="pow")
        assert np.abs(got - expected).max() <= FLOAT32_ULP_BELOW_ONE, positions
    # The exact encoding is not what keras computes: at 30,000 it is 3.8e-4 away.
    exact = sinusoidal_encoding(positions, 16)
    assert np.abs(exact - expected).max() > 1e-4


@pytest.mark.parametrize(
    ("name", "convention"),
    [("pytorch_tutorial_float32", "vaswani"), ("fairseq_float32", "tensor2tensor")],
)
def test_float32_exp_formula_libraries(name, convention):
    entry = REFERENCE[name]
    expected = np.array(entry["table"])
    got = textbook_encoding(entry["positions"], entry["d_model"], convention=convention)
    assert np.abs(got - expected).max() <= FLOAT32_ULP_BELOW_ONE
    exact = sinusoidal_encoding(entry["positions"], entry["d_model"], convention=convention)
    assert np.abs(exact - expected).max() > 5e-4  # position 100,000 in float32


def test_half_precision_error_grows_with_position():
    # keras' float16 table is within 1e-3 of the exact one near 0 and wrong by tenths at 4,000.
    early = np.abs(
        textbook_encoding(8, 64, compute_dtype="float16", formula="pow")
        - sinusoidal_encoding(8, 64)
    ).max()
    late_positions = np.arange(4000, 4008)
    late = np.abs(
        textbook_encoding(late_positions, 64, compute_dtype="float16", formula="pow")
        - sinusoidal_encoding(late_positions, 64)
    ).max()
    assert early < 2e-3 < 0.1 < late


def test_float64_arithmetic_is_the_plain_formula():
    # np.sin(k * w) with w = exp(2i * (-ln(base) / d)), all in float64, as a NumPy user writes it.
    k = np.arange(0, 10**6, 9973, dtype=np.float64)[:, None]
    w = np.exp(np.arange(0, 32, 2) * (-np.log(10_000.0) / 32))
    plain = np.empty((k.size, 32))
    plain[:, 0::2], plain[:, 1::2] = np.sin(k * w), np.cos(k * w)
    got = textbook_encoding(k[:, 0], 32, compute_dtype="float64")
    assert np.abs(got - plain).max() <= 1e-15 * 2  # one rounding of sin and cos
    # ...and that formula is not exact at a million: its angles carry float64's rounding.
    assert np.abs(got - sinusoidal_encoding(k[:, 0], 32)).max() > 1e-12


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_layouts_follow_the_convention(name):
    # In float64 the formula is within a few ulps of the exact encoding, column for column,
    # so every layout (cos first, a zero column at odd d_model) lands where the convention puts it.
    for d_model in (1, 2, 7, 10):
        got = textbook_encoding(12, d_model, compute_dtype="float64", convention=name)
        exact = sinusoidal_encoding(12, d_model, convention=name)
        assert np.abs(got - exact).max() <= 1e-13, (name, d_model)


def test_output_dtype_rounds_once_more():
    half = textbook_encoding(50, 8, compute_dtype="float32", dtype="float16")
    assert half.dtype == np.float16
    single = textbook_encoding(50, 8, compute_dtype="float32")
    assert_array_equal(half, single.astype(np.float16))
    brain = textbook_encoding(50, 8, compute_dtype="bfloat16", dtype=ml_dtypes.bfloat16)
    assert brain.dtype == ml_dtypes.bfloat16
    assert_array_equal(brain.astype(np.float64), textbook_encoding(50, 8, compute_dtype="bfloat16"))


def test_identify_names_the_arithmetic():
    table = textbook_encoding(3000, 32, compute_dtype="float32").astype(np.float32)
    found = identify_encoding(table)
    assert found.matches and found.convention == "vaswani", found.summary()
    assert found.precision == Precision(PrecisionKind.COMPUTED, format="float32"), found.summary()


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"compute_dtype": "int8"}, "compute_dtype"),
        ({"formula": "log"}, "formula"),
        ({"positions": [70_000], "compute_dtype": "float16"}, "positions"),
        ({"base": 1e-30, "positions": [60_000], "compute_dtype": "float16"}, "base"),
        ({"d_model": 0}, "d_model"),
        ({"dtype": "int32"}, "dtype"),
        # Found by the fuzz test: float16 rounded D = 65,520 to inf, so every w_i was 1.
        ({"d_model": 65_520, "compute_dtype": "float16", "formula": "pow"}, "d_model"),
        ({"d_model": 65_522, "compute_dtype": "float16"}, "d_model"),  # n_i = 65,520: inf
    ],
)
def test_errors_name_the_argument(kwargs, argument):
    call = {"positions": 4, "d_model": 8, **kwargs}
    with pytest.raises((TypeError, ValueError), match=argument):
        textbook_encoding(call.pop("positions"), call.pop("d_model"), **call)


def test_float16_holds_the_widest_d_model_its_exponents_allow():
    # The largest widths whose exponent terms float16 still holds (65,518 rounds to 65,504).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert textbook_encoding(2, 65_519, compute_dtype="float16", formula="pow").shape == (
            2,
            65_519,
        )
        assert textbook_encoding(2, 65_520, compute_dtype="float16").shape == (2, 65_520)
