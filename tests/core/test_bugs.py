"""The catalogue of mistakes: each wrong table, written as people write the mistake, is named;
a correct table never is.

The wrong tables here are transcribed from the code as it appears in tutorials and blog posts
(plain Python loops or the PyTorch tutorial's lines in NumPy), not built with pe_core.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pe_core import (
    BUGS,
    CONVENTIONS,
    diagnose_encoding,
    grid_encoding,
    sinusoidal_encoding,
    textbook_encoding,
)
from tests import DATA

ARITHMETIC = json.loads((DATA / "arithmetic_reference.json").read_text())


def _loops(length, d_model, angle_of, sin_in_even=True):
    """``pe[pos, j]`` for j in pairs, as a two-loop tutorial writes it (even ``d_model``)."""
    pe = np.zeros((length, d_model))
    for pos in range(length):
        for i in range(0, d_model, 2):
            first, second = (math.sin, math.cos) if sin_in_even else (math.cos, math.sin)
            pe[pos, i] = first(angle_of(pos, i))
            pe[pos, i + 1] = second(angle_of(pos, i + 1))
    return pe


def _tutorial(length, d_model, *, log=math.log, positions=None):
    """PyTorch's tutorial PositionalEncoding in NumPy: div_term, then sin and cos."""
    position = np.arange(length)[:, None] if positions is None else positions[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * (-log(10000.0) / d_model))
    pe = np.zeros((len(position), d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


def inverted_frequency(length, d_model):
    # The Annotated Transformer issue 131 mistake: multiplying by 10000**(2i/d).
    return _loops(length, d_model, lambda pos, j: pos * 10000 ** (2 * (j // 2) / d_model))


def column_exponent(length, d_model):
    # Every column with its own index in the exponent: the cos of pair i uses (2i+1)/d.
    return _loops(length, d_model, lambda pos, j: pos / 10000 ** (j / d_model))


def doubled_exponent(length, d_model):
    # "How to code The Transformer in PyTorch" (S. Lynn-Evans, 2018):
    # pe[pos, i] = sin(pos / (10000 ** ((2 * i)/d_model)))
    # pe[pos, i + 1] = cos(pos / (10000 ** ((2 * (i + 1))/d_model)))  for i in range(0, d, 2)
    return _loops(length, d_model, lambda pos, j: pos / 10000 ** (2 * j / d_model))


def squared_base(length, d_model):
    # The loop over even columns with 2*i/d in both lines: exponent 4p/d for pair p.
    return _loops(length, d_model, lambda pos, j: pos / 10000 ** (2 * (j - j % 2) / d_model))


def sin_cos_swapped(length, d_model):
    pe = _tutorial(length, d_model)
    return pe[:, [j + 1 if j % 2 == 0 else j - 1 for j in range(d_model)]]


def wrong_axis_slice(length, d_model):
    pe = _tutorial(4 * length, d_model)[None]  # register_buffer("pe", pe.unsqueeze(0))
    x = np.zeros((1, length, d_model))
    return (x + pe[:, x.shape[1]])[0]  # the mistake: pe[:, L] where pe[:, :L] belongs


def log10_for_ln(length, d_model):
    return _tutorial(length, d_model, log=math.log10)


def start_at_one(length, d_model):
    return _tutorial(length, d_model, positions=np.arange(1, length + 1))


def float32_angles(length, d_model):
    # The tutorial in float32, as torch computes it by default (NumPy's float32 ufuncs).
    position = np.arange(length, dtype=np.float32)[:, None]
    div_term = np.exp(
        np.arange(0, d_model, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / d_model)
    )
    pe = np.zeros((length, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


TRANSCRIPTIONS = {
    "inverted_frequency": inverted_frequency,
    "column_exponent": column_exponent,
    "doubled_exponent": doubled_exponent,
    "squared_base": squared_base,
    "sin_cos_swapped": sin_cos_swapped,
    "wrong_axis_slice": wrong_axis_slice,
    "log10_for_ln": log10_for_ln,
    "start_at_one": start_at_one,
    "float32_angles": float32_angles,
}


def test_every_entry_has_a_transcription():
    assert set(TRANSCRIPTIONS) == set(BUGS)


@pytest.mark.parametrize("name", list(BUGS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(64, 16), (300, 64)])
def test_each_mistake_is_named(name, dtype, shape):
    length, d_model = shape
    if name == "float32_angles":
        length = 3000  # float32's angle errors show only at long context
    wrong = TRANSCRIPTIONS[name](length, d_model).astype(dtype)
    diagnosis = diagnose_encoding(wrong)
    assert diagnosis.bug is not None and diagnosis.bug.name == name, diagnosis.summary()
    assert BUGS[name].fix in diagnosis.summary()


@pytest.mark.parametrize("name", list(BUGS))
def test_wrong_table_matches_the_transcription(name):
    # The catalogue's own wrong tables are the transcribed mistakes (float32's within its ulps).
    got = BUGS[name].wrong_table(np.arange(40), 16, 10_000.0)
    expected = TRANSCRIPTIONS[name](40, 16)
    assert np.abs(got - expected).max() <= (1e-6 if name == "float32_angles" else 1e-9)


@pytest.mark.parametrize("convention", list(CONVENTIONS))
@pytest.mark.parametrize("base", [10_000.0, 100.0, 500_000.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_a_correct_table_gets_no_mistake(convention, base, dtype):
    for d_model in (2, 7, 32):
        table = sinusoidal_encoding(200, d_model, base=base, convention=convention).astype(dtype)
        diagnosis = diagnose_encoding(table)
        assert diagnosis.correct, (d_model, diagnosis.summary())


@pytest.mark.parametrize(
    "table",
    [
        sinusoidal_encoding(np.arange(99, -1, -1), 16),  # decreasing, as Transformer-XL's
        sinusoidal_encoding(100, 16).T,  # transposed
        sinusoidal_encoding(100, 16).round(4),  # printed to 4 decimals
        sinusoidal_encoding(100, 16, base=1e8),  # a base of 1e8 is a mistake only from 1e4
        np.vstack([np.zeros((1, 16)), sinusoidal_encoding(99, 16, convention="tensor2tensor")]),
        textbook_encoding(2000, 32, compute_dtype="float64"),  # float64 arithmetic: fine
    ],
    ids=["decreasing", "transposed", "decimals", "base-1e8", "padding-row", "float64-angles"],
)
def test_other_correct_tables(table):
    diagnosis = diagnose_encoding(table)
    if diagnosis.identification.base == 1e8:
        assert diagnosis.bug.name == "squared_base"  # ... which is what base 1e8 looks like
        return
    assert diagnosis.correct, diagnosis.summary()


def test_noise_gets_no_mistake():
    noise = np.random.default_rng(0).uniform(-1, 1, size=(200, 32))
    diagnosis = diagnose_encoding(noise)
    assert diagnosis.bug is None and not diagnosis.identification.matches
    assert "No mistake in the catalogue" in diagnosis.summary()


def test_a_grid_is_not_called_a_mistake():
    diagnosis = diagnose_encoding(grid_encoding(8, 8, 32))
    assert diagnosis.bug is None, diagnosis.summary()


@pytest.mark.parametrize("policy", ["float16", "bfloat16", "float32"])
def test_keras_hub_arithmetic_pinned_down(policy):
    # keras-hub's own table from position 100 (data/arithmetic_reference.json): the diagnosis
    # finds the format and the pow formula, not merely "some arithmetic".
    entry = ARITHMETIC[f"keras_hub_{policy}"]
    rows = np.array(entry["table"][entry["starts"].index(100)])
    diagnosis = diagnose_encoding(rows)
    assert diagnosis.bug is not None and diagnosis.bug.name == "float32_angles"
    assert f"computed in {policy} with the pow formula" in diagnosis.summary()
    assert diagnosis.start == 100


@pytest.mark.parametrize("shape", [(4096, 64), pytest.param((8192, 512), marks=pytest.mark.slow)])
def test_long_float16_table_is_pinned_down(shape):
    # Beyond what identify calls a match (errors of 2 at position 4000), but the formula in
    # float16 reproduces it to the last bit. At 8192 x 512 identify no longer ranks vaswani
    # among its first three candidates: every convention is tried.
    table = textbook_encoding(*shape, compute_dtype="float16", formula="pow")
    diagnosis = diagnose_encoding(table.astype(np.float16))
    assert not diagnosis.identification.matches
    assert diagnosis.bug.name == "float32_angles"
    assert "computed in float16 with the pow formula" in diagnosis.summary()


@pytest.mark.parametrize("formula", ["exp", "pow"])
@pytest.mark.parametrize("fmt", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("convention", list(CONVENTIONS))
@pytest.mark.parametrize("d_model", [7, 16])
def test_textbook_pairs_pass_the_unit_circle_filter(convention, fmt, formula, d_model):
    # diagnose_encoding tries a format's textbook formula only where the table's (sin, cos)
    # pairs lie near the unit circle: every textbook table must pass, even with each entry
    # moved by the 4 ulps of 1/2 the comparison allows, outward or inward (the worst cases).
    from pe_core._numerics.formats import PRECISIONS
    from pe_core.sinusoidal.bugs import _near_the_unit_circle

    positions = np.arange(0, 2000, 7.0) if fmt == "float32" else np.arange(0, 250, 1.0)
    table = textbook_encoding(
        positions, d_model, compute_dtype=fmt, convention=convention, formula=formula
    )
    layout = CONVENTIONS[convention].column_layout(d_model)
    u = PRECISIONS[fmt].unit_roundoff
    for moved in (table, table + 4 * u * np.sign(table), table - 4 * u * np.sign(table)):
        assert _near_the_unit_circle(moved, layout, u)
    # ... and uniform noise does not (this is what makes a noise table quick to rule out).
    noise = np.random.default_rng(1).uniform(-1, 1, size=table.shape)
    assert not _near_the_unit_circle(noise, layout, u)
