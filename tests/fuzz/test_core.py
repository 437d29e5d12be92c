"""Fuzzing every public function of pe_core with arbitrary values and types.

The rule (from the spec): driven with anything at all (huge, zero, negative, NaN, inf, strings,
bools, nested lists, empty arrays, arrays of every dtype, ...), a public function either returns a
correct result or raises pe_core.InputError (a ValueError) with a clear message that names the
argument. Never another exception, a hang, NaN output or an allocation beyond the memory budget.

Three kinds of tests:

* ``test_fuzz_all_arguments``: every argument drawn from a mix of plausible and arbitrary values.
* ``test_fuzz_one_bad_argument``: a known-good call with exactly one argument replaced by an
  arbitrary value; an error must then name that argument.
* ``test_regression_*``: minimal reproductions of the bugs the fuzzing found (all fixed).

Every call runs under tracemalloc (NumPy reports its allocations to it): the peak must stay below
2.5 GB, and the call must finish within a few seconds (pytest-timeout catches real hangs).
"""

from __future__ import annotations

import json
import math
import numbers
import operator
import os
import re
import time
import tracemalloc
import warnings
from dataclasses import dataclass, fields
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pe_core
from tests.fuzz import rotary_inputs

pytestmark = pytest.mark.fuzz  # pytest -m "not fuzz" leaves them out

PEAK_LIMIT_BYTES = 2_500_000_000
#: A hang guard, not a performance test (benchmarks/ measure speed): the CPU seconds of this
#: thread one call may take under tracemalloc before it counts as a size the core should have
#: refused up front. CPU time, not wall time, so that a loaded machine does not fail it (a
#: 24.8 s wall-clock call at load 7 was found to fail the old 20 s wall-clock limit).
CALL_CPU_SECONDS = 60.0
#: Bad input raises pe_core.InputError (a ValueError; InputTypeError is also a TypeError).
ALLOWED = (pe_core.InputError,)
OMIT = object()  # a keyword argument left at its default

#: Examples per fuzz test: the hypothesis profile's (PE_HYPOTHESIS_PROFILE: quick 10, ci 150,
#: nightly 1,500; tests/conftest.py), or PE_FUZZ_EXAMPLES (PE_FUZZ_EXAMPLES=2000 pytest ...).
EXAMPLES = int(os.environ.get("PE_FUZZ_EXAMPLES", settings.default.max_examples))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# --------------------------------------------------------------------------------------------
# Arbitrary values
# --------------------------------------------------------------------------------------------

HUGE_INTS = [
    2**28 + 1,
    2**31,
    2**40,
    10**12,
    2**53,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    10**30,
    10**400,  # beyond float range
    -(2**63),
    -(10**12),
    -(10**400),
]
EDGE_INTS = [0, 1, 2, 3, 255, 256, 257, 1000, 2048, 2049, 4097]
SPECIAL_FLOATS = [
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -0.0,
    5e-324,
    1e-310,
    1e-300,
    1e300,
    1.7976931348623157e308,
    -1.0,
    -1e300,
    0.5,
    0.999999,
    1.0,
    1.5,
    2.5,
    100.0,
    10_000.0,
    1e9,
    2.0**53,
    2.0**54,
]
NAMES = [
    *pe_core.CONVENTIONS,
    "cosine",
    "dot",
    "distance",
    *pe_core.PRECISIONS,
    *pe_core.CASTS,
    "",
    " vaswani",
    "VASWANI",
    "nan",
    "1",
    "10000",
    "float128",
    "int8",
    "O",
    "é\x00",
]

# No unbounded integers: a random valid count like 8_514_864 makes every call slow (the memory
# cost of big valid requests is measured separately, in test_peak_memory_*).
ints = st.one_of(
    st.integers(-8, 48),
    st.sampled_from(EDGE_INTS),
    st.sampled_from(HUGE_INTS),
    st.integers(min_value=2**28 + 1),
    st.integers(max_value=-1),
)
numpy_ints = st.one_of(
    st.integers(-8, 48).map(np.int64),
    st.sampled_from(
        [
            np.int8(-8),
            np.int8(3),
            np.int16(300),
            np.int32(-1),
            np.int64(2**40),
            np.int64(2**63 - 1),
            np.uint8(0),
            np.uint8(255),
            np.uint64(2**63),
            np.uint64(2**64 - 1),
            np.intp(4),
        ]
    ),
)
floats = st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats())
numpy_floats = st.one_of(
    st.sampled_from(SPECIAL_FLOATS).map(np.float64),
    st.sampled_from([np.float16(v) for v in (0.5, 2.0, 65504.0, math.nan, math.inf, -math.inf)]),
    st.sampled_from([1.5, 3.4e38, 1e-45, -2.0]).map(np.float32),
    st.sampled_from(["1e400", "-1e400", "1e-400", "3.0"]).map(np.longdouble),
)
complexes = st.one_of(
    st.complex_numbers(max_magnitude=1e6, allow_nan=False),
    st.sampled_from([1j, complex(math.nan, 0), complex(1, 0), np.complex64(2), np.complex128(1j)]),
)
bools = st.sampled_from([True, False, np.True_, np.False_])
texts = st.one_of(st.sampled_from(NAMES), st.text(max_size=8))
byte_strings = st.one_of(st.sampled_from([b"vaswani", b"1", b""]), st.binary(max_size=6))
dtype_like = st.sampled_from(
    [
        np.float64,
        np.float32,
        np.float16,
        np.int32,
        np.complex128,
        np.bool_,
        np.object_,
        np.str_,
        np.dtype("float64"),
        np.dtype("float32"),
        np.dtype("float16"),
        np.dtype("int8"),
        np.dtype("O"),
        np.dtype("U3"),
        np.dtype("M8[s]"),
        np.dtype("longdouble"),
        np.dtype([("a", "f8")]),
        np.dtype(("f8", (2,))),
        ml_dtypes.bfloat16,
        np.dtype(ml_dtypes.bfloat16),
        float,
        int,
        complex,
        bool,
        str,
    ]
)
misc = (
    st.sampled_from(
        [
            None,
            Fraction(1, 3),
            Fraction(10**400, 3),
            Decimal("1.5"),
            Decimal("nan"),
            Decimal("1e400"),
            range(5),
            range(0),
            slice(1, 3),
            {},
            {"a": 1},
            {1: 2},
            set(),
            frozenset({1, 2}),
            bytearray(b"ab"),
            Ellipsis,
            NotImplemented,
            object,
            type,
            [("a", "f8"), ("a", "f8")],  # a structured dtype spec NumPy refuses with ValueError
            [("a", "f8")],
            ("f8", 2),
        ]
    )
    | st.builds(object)
    | st.builds(np.random.default_rng, st.integers(0, 3))
)

SPECIAL_ARRAYS = [
    np.zeros(0),
    np.zeros((0, 0)),
    np.zeros((2, 0)),
    np.zeros((0, 3)),
    np.zeros((0, 0, 0)),
    np.array(5),
    np.array(2.5),
    np.array(True),
    np.array(2**63, dtype=np.uint64),
    np.arange(10),
    np.arange(70),
    np.arange(5) * 3 + 2,
    np.arange(5) * -2 + 7,
    np.arange(6.0) * 0.5,
    np.linspace(0, 1, 7),
    np.full(3, 1e300),
    np.full(4, 5e-324),
    np.array([2.0**53, 2.0**53 + 2]),
    np.array([7, 7, 7]),
    np.array([0.5]),
    np.array([1, None], dtype=object),
    np.array([10**30], dtype=object),
    np.array([10**400], dtype=object),
    np.array([Fraction(1, 2), 3], dtype=object),
    np.array(["1.5"], dtype=object),
    np.array([1j], dtype=object),
    np.array([[1, 2], [3]], dtype=object),
    np.array(["1", "2"]),
    np.array([b"1"]),
    np.array(["2021-01-01"], dtype="M8[D]"),
    np.ma.masked_array([1.0, 2.0], mask=[True, False]),
    np.ones((3, 4)),
    np.ones((2, 3, 4)),
    np.eye(4)[:, ::2],  # non-contiguous
    np.arange(8.0)[::-1],
]
ARRAY_DTYPES = [
    np.int8,
    np.int64,
    np.uint8,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.complex128,
    np.bool_,
    np.dtype("U3"),
]
random_arrays = hnp.arrays(
    dtype=st.sampled_from(ARRAY_DTYPES),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
)
arrays = st.one_of(st.sampled_from(SPECIAL_ARRAYS), random_arrays)

scalars = st.one_of(
    ints, numpy_ints, floats, numpy_floats, complexes, bools, texts, byte_strings, st.none()
)
nested = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=5), st.tuples(children, children)),
    max_leaves=12,
)
rectangular = random_arrays.map(lambda array: array.tolist())
anything = st.one_of(scalars, nested, rectangular, arrays, dtype_like, misc)


# --------------------------------------------------------------------------------------------
# Plausible values per argument: most calls get past the first check and reach the algorithms
# --------------------------------------------------------------------------------------------

finite = st.floats(-1e6, 1e6, allow_nan=False)
progressions = st.builds(
    lambda start, step, n: start + step * np.arange(n),
    st.integers(-(10**6), 10**6),
    st.integers(-300, 300),
    st.integers(0, 80),
)
positions_ok = st.one_of(
    st.integers(0, 40),
    st.integers(0, 40).map(np.int32),
    st.sampled_from([0, 1, 2, 64, 65, 300, 1000]),
    st.lists(st.integers(-1000, 1000), max_size=12),
    st.lists(st.floats(-100, 100), min_size=1, max_size=12),
    hnp.arrays(np.float64, st.integers(0, 12), elements=finite),
    hnp.arrays(np.int16, st.integers(0, 12)),
    progressions,
    progressions.map(lambda p: p.astype(np.float32)),
)
d_model_ok = st.one_of(st.integers(1, 40), st.sampled_from([1, 2, 3, 4, 5, 64, 65]).map(np.int64))
base_ok = st.one_of(
    st.sampled_from([10_000.0, 100.0, 2, 10_000, 1.01, 1e9, 1.0, 0.5, np.float32(100.0)]),
    st.floats(1.01, 1e9),
    st.floats(1e-3, 1e300),
)
convention_ok = st.sampled_from(list(pe_core.CONVENTIONS))
dtype_ok = st.sampled_from(
    [
        np.float64,
        np.float32,
        np.float16,
        "float32",
        "float16",
        np.dtype("float64"),
        ml_dtypes.bfloat16,
    ]
)
block_size_ok = st.one_of(st.integers(1, 50), st.sampled_from([10**12, np.int64(3)]))
columns_ok = st.one_of(
    st.lists(st.integers(0, 39), max_size=8),
    hnp.arrays(np.int64, st.integers(0, 8), elements=st.integers(0, 39)),
)
offsets_ok = st.one_of(
    finite,
    st.integers(-(10**6), 10**6),
    st.lists(finite, max_size=10),
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=5), elements=finite),
    progressions,
)
offset_ok = st.one_of(finite, st.integers(-(10**6), 10**6), st.sampled_from([2.0**53, 0]))
kind_ok = st.sampled_from(["cosine", "dot", "distance"])
precision_ok = st.sampled_from(
    [*pe_core.PRECISIONS, np.float16, np.dtype("float32"), ml_dtypes.bfloat16]
)
cast_ok = st.sampled_from(list(pe_core.CASTS))
x_ok = st.one_of(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
        elements=st.floats(-1e5, 1e5),
    ),
    st.lists(st.floats(-7e4, 7e4), max_size=6),
    st.sampled_from([[257.0, 1 / 3], [2049.0], [65504.0], [1e39], [3.4e38]]),
)
matrices = hnp.arrays(
    np.float64,
    st.tuples(st.integers(0, 5), st.integers(0, 4)),
    elements=st.floats(-1e6, 1e6),
)
scale_ok = st.sampled_from([True, False, np.True_])
dropout_ok = st.one_of(st.just(0.0), st.floats(0.0, 0.99), st.sampled_from([0.999999, 0]))


def _stored_encoding(positions, d_model, base, convention, transpose, precision):
    """An encoding as someone might have saved it: rounded, perhaps transposed."""
    encoding = pe_core.sinusoidal_encoding(positions, d_model, base=base, convention=convention)
    matrix = pe_core.quantize(encoding, precision)
    return matrix.T if transpose else matrix


encodings = st.builds(
    _stored_encoding,
    st.one_of(st.integers(0, 40), progressions.filter(lambda p: np.abs(p).max(initial=0) < 1e5)),
    st.integers(1, 40),
    st.sampled_from([10_000.0, 100.0, 2.0, 1.5, 1e6]),
    convention_ok,
    st.booleans(),
    st.sampled_from(["float64", "float16", "bfloat16"]),
)
matrix_ok = st.one_of(
    encodings,
    encodings.map(lambda m: m + 1e-3),
    matrices,
    hnp.arrays(np.float64, st.tuples(st.integers(2, 8), st.integers(2, 8)), elements=finite),
)
rng_ok = st.one_of(
    st.none(), st.integers(0, 2**64), st.builds(np.random.default_rng, st.integers(0, 9))
)


def weighted(*choices):
    """Draw from one of ``(weight, strategy)`` choices with those odds (st.one_of would weigh
    every leaf of a nested one_of equally, so ``anything`` would drown the plausible values)."""
    tickets = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(tickets) - 1).flatmap(lambda ticket: tickets[ticket])


def mixed(plausible):
    """Mostly plausible values (4 in 5), otherwise arbitrary ones."""
    return weighted((4, plausible), (1, anything))


def optional(plausible):
    """A keyword argument: left out, plausible or arbitrary."""
    return weighted((1, st.just(OMIT)), (4, plausible), (1, anything))


@st.composite
def embedding_pairs(draw):
    """(embeddings, encoding) with matching shapes most of the time."""
    batch = draw(st.sampled_from([(), (1,), (2,), (0,)]))
    seq, d_model, extra = draw(st.integers(0, 4)), draw(st.integers(0, 4)), draw(st.integers(0, 3))
    element = st.floats(-1e3, 1e3)
    embeddings = draw(hnp.arrays(np.float64, (*batch, seq, d_model), elements=element))
    encoding = draw(hnp.arrays(np.float64, (seq + extra, d_model), elements=element))
    return embeddings, encoding


# --------------------------------------------------------------------------------------------
# The functions: arguments (positional first), plausible values, a known-good baseline call
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    function: object
    positional: tuple[str, ...]
    keywords: tuple[str, ...]
    baseline: dict

    @property
    def arguments(self) -> tuple[str, ...]:
        return self.positional + self.keywords


#: Rotary encodings for the RoPE functions' fuzzing.
ROPE_CONFIG = {
    "head_dim": 8,
    "rope_theta": 100.0,
    "max_position_embeddings": 64,
    "rope_scaling": {"rope_type": "yarn", "factor": 4.0},
}
ROPE = pe_core.rope_from_config(ROPE_CONFIG)
ROPES = [ROPE, pe_core.rope_frequencies(8, partial_rotary_factor=0.5), pe_core.rope_frequencies(6)]
#: A cos/sin cache of ROPE (64 positions), and others for identify_rope.
ROPE_CACHE = pe_core.rope_cos_sin(64, ROPE)
ROPE_CACHES = [
    ROPE_CACHE,
    pe_core.rope_cos_sin(300, pe_core.rope_frequencies(16, base=500_000.0), layout="interleaved"),
    pe_core.rope_cos_sin([0, 1, 5, 1000], pe_core.rope_frequencies(6)),
]
#: Vectors before and after rotation by ROPE (and by an interleaved, partial encoding).
ROPE_BEFORE = np.random.default_rng(0).standard_normal((2, 64, 8))
ROPE_VECTORS = [
    (ROPE_BEFORE, pe_core.apply_rope(ROPE_BEFORE, 64, ROPE)),
    (ROPE_BEFORE, pe_core.apply_rope(ROPE_BEFORE, 64, ROPES[1], layout="interleaved")),
]
#: The GGUF corpus, what llama.cpp makes of it, and vectors rotated by known caches (the
#: realistic inputs of the GGUF functions and rope_cache_from_vectors: tests/fuzz/rotary_inputs).
GGUF_FILES = rotary_inputs.GGUF_FILES
GGUF_METAS = rotary_inputs.GGUF_METAS
GGUF_LAYERS = rotary_inputs.GGUF_LAYERS
VECTOR_CASES = rotary_inputs.VECTOR_CASES
SCALINGS = [
    None,
    {"rope_type": "linear", "factor": 2.0},
    {"rope_type": "dynamic", "factor": 2.0},
    {"type": "yarn", "factor": 8.0, "beta_fast": 16.0, "truncate": False},
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 32,
    },
    {"rope_type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4},
    {"rope_type": "proportional", "factor": 1.0},
]


def _model_config(scaling, model_type, layers) -> dict:
    """ROPE_CONFIG with a scaling, and a model type's conventions and layer count."""
    config = {**ROPE_CONFIG, "rope_scaling": scaling}
    if model_type is not None:
        config["model_type"] = model_type
    if layers is not None:
        config["num_hidden_layers"] = layers
    return config


ENCODING_KW = ("base", "convention")
BASE_KW = {"base": 100.0, "convention": "vaswani"}

SPECS = {
    "sinusoidal_encoding": Spec(
        pe_core.sinusoidal_encoding,
        ("positions", "d_model"),
        (*ENCODING_KW, "dtype"),
        {"positions": 6, "d_model": 8, **BASE_KW, "dtype": np.float64},
    ),
    "textbook_encoding": Spec(
        pe_core.textbook_encoding,
        ("positions", "d_model"),
        ("compute_dtype", *ENCODING_KW, "formula", "dtype"),
        {
            "positions": 6,
            "d_model": 8,
            "compute_dtype": "float16",
            **BASE_KW,
            "formula": "pow",
            "dtype": np.float32,
        },
    ),
    "reference_encoding": Spec(
        pe_core.reference_encoding,
        ("positions", "d_model"),
        ENCODING_KW,
        {"positions": 6, "d_model": 8, **BASE_KW},
    ),
    "frequencies": Spec(pe_core.frequencies, ("d_model",), ENCODING_KW, {"d_model": 8, **BASE_KW}),
    "wavelengths": Spec(pe_core.wavelengths, ("d_model",), ENCODING_KW, {"d_model": 8, **BASE_KW}),
    "encoding_columns": Spec(
        pe_core.encoding_columns,
        ("positions", "d_model", "columns"),
        ENCODING_KW,
        {"positions": 6, "d_model": 8, "columns": [0, 3, 7], **BASE_KW},
    ),
    "block_mean_encoding": Spec(
        pe_core.block_mean_encoding,
        ("positions", "d_model", "block_size"),
        ENCODING_KW,
        {"positions": 10, "d_model": 8, "block_size": 3, **BASE_KW},
    ),
    "sinusoidal_bank": Spec(
        pe_core.sinusoidal_bank, ("d_model",), ENCODING_KW, {"d_model": 8, **BASE_KW}
    ),
    "column_roles": Spec(
        pe_core.column_roles, ("d_model",), ("convention",), {"d_model": 8, "convention": "split"}
    ),
    "cosine_similarity": Spec(
        pe_core.cosine_similarity,
        ("a", "b"),
        (),
        {"a": [[1.0, 0.0], [1.0, 1.0]], "b": [[0.5, 2.0]]},
    ),
    "offset_similarity": Spec(
        pe_core.offset_similarity,
        ("offsets", "d_model"),
        (*ENCODING_KW, "kind"),
        {"offsets": [0, 1, -1], "d_model": 8, **BASE_KW, "kind": "cosine"},
    ),
    "similarity_matrix": Spec(
        pe_core.similarity_matrix,
        ("positions", "d_model"),
        (*ENCODING_KW, "kind"),
        {"positions": 5, "d_model": 8, **BASE_KW, "kind": "dot"},
    ),
    "relative_rotation": Spec(
        pe_core.relative_rotation,
        ("offset", "d_model"),
        ENCODING_KW,
        {"offset": 1.5, "d_model": 8, **BASE_KW},
    ),
    "uniqueness_report": Spec(
        pe_core.uniqueness_report,
        ("positions", "d_model"),
        (*ENCODING_KW, "precision", "cast"),
        {"positions": 20, "d_model": 8, **BASE_KW, "precision": "float16", "cast": "outputs"},
    ),
    "nearest_neighbor_distances": Spec(
        pe_core.nearest_neighbor_distances,
        ("positions", "d_model"),
        ENCODING_KW,
        {"positions": 6, "d_model": 8, **BASE_KW},
    ),
    "encoding_distances": Spec(
        pe_core.encoding_distances,
        ("first", "second", "d_model"),
        (*ENCODING_KW, "precision", "cast"),
        {
            "first": [0, 256, 3.5],
            "second": [1, 257, -2.0],
            "d_model": 8,
            **BASE_KW,
            "precision": "bfloat16",
            "cast": "positions",
        },
    ),
    "quantize": Spec(
        pe_core.quantize, ("x", "precision"), (), {"x": [0.1, 257.0], "precision": "bfloat16"}
    ),
    "rope_frequencies": Spec(
        pe_core.rope_frequencies,
        ("head_dim",),
        ("base", "scaling", "partial_rotary_factor", "max_position_embeddings", "seq_len"),
        {
            "head_dim": 8,
            "base": 100.0,
            "scaling": {"rope_type": "yarn", "factor": 4.0},
            "partial_rotary_factor": 1.0,
            "max_position_embeddings": 64,
            "seq_len": 32,
        },
    ),
    "rope_from_config": Spec(
        pe_core.rope_from_config,
        ("config",),
        ("layer_type", "seq_len"),
        {"config": ROPE_CONFIG, "layer_type": "full_attention", "seq_len": 32},
    ),
    "rope_layers": Spec(
        pe_core.rope_layers,
        ("config",),
        ("seq_len",),
        {"config": {**ROPE_CONFIG, "num_hidden_layers": 3}, "seq_len": 32},
    ),
    "rope_config_sources": Spec(
        pe_core.rope_config_sources,
        ("config",),
        ("layer_type",),
        {"config": ROPE_CONFIG, "layer_type": "full_attention"},
    ),
    "rope_config_essentials": Spec(
        pe_core.rope_config_essentials, ("config",), (), {"config": ROPE_CONFIG}
    ),
    "rope_query_temperature": Spec(
        pe_core.rope_query_temperature, ("config",), (), {"config": ROPE_CONFIG}
    ),
    "pairwise_limit": Spec(pe_core.pairwise_limit, ("d_model",), (), {"d_model": 512}),
    "load_json": Spec(pe_core.load_json, ("text",), (), {"text": json.dumps(ROPE_CONFIG)}),
    "apply_rope": Spec(
        pe_core.apply_rope,
        ("x", "positions", "rope"),
        ("layout",),
        {"x": np.ones((2, 6, 8)), "positions": 6, "rope": ROPE, "layout": "interleaved"},
    ),
    "rope_cos_sin": Spec(
        pe_core.rope_cos_sin,
        ("positions", "rope"),
        ("dtype",),
        {"positions": 6, "rope": ROPE, "dtype": np.float32},
    ),
    "rope_permutation": Spec(
        pe_core.rope_permutation,
        ("head_dim", "rotary_dim"),
        ("n_heads",),
        {"head_dim": 8, "rotary_dim": 6, "n_heads": 2},
    ),
    "yarn_correction_range": Spec(
        pe_core.yarn_correction_range,
        ("beta_fast", "beta_slow", "rotary_dim", "base", "training_length"),
        ("truncate",),
        {
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "rotary_dim": 64,
            "base": 150_000.0,
            "training_length": 4096,
            "truncate": False,
        },
    ),
    "rope_scores": Spec(
        pe_core.rope_scores,
        ("offsets", "rope", "q"),
        ("k", "layout"),
        {
            "offsets": [0, 1, 5.5],
            "rope": ROPE,
            "q": np.ones(8),
            "k": np.arange(8.0),
            "layout": "halves",
        },
    ),
    "rope_decay_bound": Spec(
        pe_core.rope_decay_bound, ("offsets", "rope"), (), {"offsets": [0, 1, 5.5], "rope": ROPE}
    ),
    "rope_angle_errors": Spec(
        pe_core.rope_angle_errors,
        ("positions", "rope", "precision"),
        (),
        {"positions": 6, "rope": ROPE, "precision": "bfloat16"},
    ),
    "transformers_angle_errors": Spec(
        pe_core.transformers_angle_errors,
        ("positions", "rope", "dtype"),
        (),
        {"positions": 6, "rope": ROPE, "dtype": "bfloat16"},
    ),
    "inv_freq_float32_ulps": Spec(pe_core.inv_freq_float32_ulps, ("rope",), (), {"rope": ROPE}),
    "first_angle_error_above": Spec(
        pe_core.first_angle_error_above,
        ("rope", "threshold"),
        ("frequencies", "stop"),
        {"rope": ROPE, "threshold": 1e-3, "frequencies": "rounded", "stop": 100_000},
    ),
    "merged_position_ids": Spec(
        pe_core.merged_position_ids, ("precision",), (), {"precision": "float16"}
    ),
    "alibi_slopes": Spec(pe_core.alibi_slopes, ("n_heads",), (), {"n_heads": 12}),
    "alibi_bias": Spec(
        pe_core.alibi_bias,
        ("offsets", "slopes"),
        ("causal",),
        {"offsets": [-1, 0, 3], "slopes": [0.5, 0.25], "causal": True},
    ),
    "t5_relative_buckets": Spec(
        pe_core.t5_relative_buckets,
        ("relative_positions",),
        ("bidirectional", "num_buckets", "max_distance"),
        {
            "relative_positions": [-200, -3, 0, 5, 400],
            "bidirectional": True,
            "num_buckets": 32,
            "max_distance": 128,
        },
    ),
    "mrope_position_ids": Spec(
        pe_core.mrope_position_ids,
        ("segments",),
        ("spatial_merge_size",),
        {"segments": [3, (2, 4, 6), 2], "spatial_merge_size": 2},
    ),
    "mrope_axes": Spec(
        pe_core.mrope_axes,
        ("n_pairs", "mrope_section"),
        ("interleaved",),
        {"n_pairs": 64, "mrope_section": [16, 24, 24], "interleaved": False},
    ),
    "axial_rope_frequencies": Spec(
        pe_core.axial_rope_frequencies, ("head_dim",), ("base",), {"head_dim": 80, "base": 1e4}
    ),
    "multi_axis_angles": Spec(
        pe_core.multi_axis_angles,
        ("position_ids", "inv_freq", "axes"),
        (),
        {"position_ids": np.arange(12).reshape(3, 4), "inv_freq": [1.0, 0.1], "axes": [1, 2]},
    ),
    "learned_position_table": Spec(
        pe_core.learned_position_table,
        ("n_positions", "d_model"),
        ("std", "seed"),
        {"n_positions": 16, "d_model": 8, "std": 0.02, "seed": 0},
    ),
    "identify_encoding": Spec(
        pe_core.identify_encoding, ("matrix",), (), {"matrix": pe_core.sinusoidal_encoding(6, 8)}
    ),
    "grid_encoding": Spec(
        pe_core.grid_encoding,
        ("height", "width", "d_model"),
        ("layout", "base", "extra_tokens", "start", "step", "dtype"),
        {
            "height": 2,
            "width": 3,
            "d_model": 8,
            "layout": "timm",
            "base": 100.0,
            "extra_tokens": 1,
            "start": (1.0, 0.5),
            "step": 0.25,
            "dtype": "float32",
        },
    ),
    "diagnose_encoding": Spec(
        pe_core.diagnose_encoding, ("matrix",), (), {"matrix": pe_core.sinusoidal_encoding(6, 8)}
    ),
    "identify_grid": Spec(
        pe_core.identify_grid, ("matrix",), (), {"matrix": pe_core.grid_encoding(2, 3, 8)}
    ),
    "grid3d_encoding": Spec(
        pe_core.grid3d_encoding,
        ("shape", "d_model"),
        ("layout", "base", "step", "dtype"),
        {
            "shape": (2, 3, 4),
            "d_model": 16,
            "layout": "diffusers",
            "base": 100.0,
            "step": (1.0, 0.5, 0.5),
            "dtype": "float32",
        },
    ),
    "identify_grid3d": Spec(
        pe_core.identify_grid3d, ("matrix",), (), {"matrix": pe_core.grid3d_encoding((2, 3, 2), 7)}
    ),
    "identify_rope": Spec(
        pe_core.identify_rope,
        ("cos", "sin"),
        ("inv_freq", "before", "after", "positions", "config", "layer_type"),
        {"cos": ROPE_CACHE[0], "sin": ROPE_CACHE[1], "config": ROPE_CONFIG},
    ),
    "rope_cache_from_vectors": Spec(
        pe_core.rope_cache_from_vectors,
        ("before", "after"),
        ("positions",),
        {"before": VECTOR_CASES[0].before, "after": VECTOR_CASES[0].after},
    ),
    "read_gguf": Spec(pe_core.read_gguf, ("path",), (), {"path": GGUF_FILES[0]}),
    "read_gguf_bytes": Spec(
        pe_core.read_gguf_bytes,
        ("data",),
        ("name",),
        {"data": rotary_inputs.GGUF_DATA[GGUF_FILES[0].name], "name": "the file"},
    ),
    "parse_gguf_dump": Spec(
        pe_core.parse_gguf_dump,
        ("text",),
        (),
        {"text": rotary_inputs.GGUF_DUMPS["llama3.1-8b.gguf"]},
    ),
    "llama_cpp_layers": Spec(
        pe_core.llama_cpp_layers, ("meta",), ("n_ctx",), {"meta": GGUF_METAS[0], "n_ctx": 4096}
    ),
    "llama_cpp_angles": Spec(
        pe_core.llama_cpp_angles,
        ("positions", "layer"),
        (),
        {"positions": 8, "layer": GGUF_LAYERS[0]},
    ),
    "llama_cpp_cos_sin": Spec(
        pe_core.llama_cpp_cos_sin,
        ("positions", "layer"),
        (),
        {"positions": 8, "layer": GGUF_LAYERS[0]},
    ),
    "check_gguf": Spec(
        pe_core.check_gguf,
        ("meta", "config"),
        ("n_ctx", "with_transformers_error"),
        {
            "meta": rotary_inputs.GGUF_READINGS["qwen2.5-7b.gguf"],
            "config": rotary_inputs.GGUF_CONFIGS["qwen2.5-7b.gguf"],
            "n_ctx": 32768,
            "with_transformers_error": False,
        },
    ),
    "add_to_embeddings": Spec(
        pe_core.add_to_embeddings,
        ("embeddings", "encoding"),
        ("scale", "dropout", "rng"),
        {
            "embeddings": np.ones((2, 3, 4)),
            "encoding": np.ones((5, 4)),
            "scale": False,
            "dropout": 0.1,
            "rng": 0,
        },
    ),
}

PLAUSIBLE = {
    "positions": positions_ok,
    "d_model": d_model_ok,
    "base": base_ok,
    "convention": convention_ok,
    "dtype": dtype_ok,
    "block_size": block_size_ok,
    "columns": columns_ok,
    "offsets": offsets_ok,
    "first": offsets_ok,
    "second": offsets_ok,
    "offset": offset_ok,
    "kind": kind_ok,
    "precision": precision_ok,
    "cast": cast_ok,
    "x": x_ok,
    "a": matrices,
    "b": st.one_of(st.none(), matrices),
    "scale": scale_ok,
    "dropout": dropout_ok,
    "rng": rng_ok,
    "matrix": matrix_ok,
    "embeddings": embedding_pairs().map(lambda pair: pair[0]),
    "head_dim": st.integers(1, 40),
    "scaling": st.sampled_from(SCALINGS),
    "partial_rotary_factor": st.sampled_from([0.25, 0.5, 1.0, 0.0]),
    "max_position_embeddings": st.integers(1, 10**6),
    "seq_len": st.one_of(st.none(), st.integers(1, 10**6)),
    "text": st.one_of(
        st.recursive(
            st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=8),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
            max_leaves=20,
        ).map(json.dumps),
        st.integers(1, 3 * pe_core.MAX_JSON_DEPTH).map(lambda depth: "[" * depth + "]" * depth),
        st.text(alphabet='[]{}":,\\ab1', max_size=300),
    ),
    "layer_type": st.sampled_from(
        ["full_attention", "sliding_attention", "linear_attention", "conv", ""]
    ),
    "config": st.builds(
        lambda scaling, text, model_type, layers: (
            json.dumps(_model_config(scaling, model_type, layers))
            if text
            else _model_config(scaling, model_type, layers)
        ),
        st.sampled_from(SCALINGS),
        st.booleans(),
        st.sampled_from([None, *pe_core.MODEL_ROPES]),
        st.one_of(st.none(), st.integers(1, 8)),
    ),
    "rope": st.sampled_from(ROPES),
    "cos": st.sampled_from([cache[0] for cache in ROPE_CACHES]),
    "sin": st.sampled_from([cache[1] for cache in ROPE_CACHES]),
    "before": st.sampled_from(
        [pair[0] for pair in ROPE_VECTORS] + [c.before for c in VECTOR_CASES]
    ),
    "after": st.sampled_from([pair[1] for pair in ROPE_VECTORS] + [c.after for c in VECTOR_CASES]),
    "q": st.sampled_from([np.ones(8), np.arange(8.0), np.ones(6)]),
    "k": st.sampled_from([None, np.ones(8), -np.arange(8.0)]),
    "layout": st.sampled_from(pe_core.LAYOUTS),
    "n_heads": st.integers(1, 8),
    "rotary_dim": st.integers(1, 12),
    "beta_fast": st.floats(0.5, 64),
    "beta_slow": st.floats(0.5, 64),
    "training_length": st.integers(1, 10**6),
    "truncate": st.booleans(),
    "encoding": embedding_pairs().map(lambda pair: pair[1]),
    "slopes": st.lists(st.floats(0, 1), min_size=1, max_size=8),
    "causal": st.booleans(),
    "relative_positions": st.lists(st.integers(-(10**6), 10**6), max_size=50),
    "bidirectional": st.booleans(),
    "num_buckets": st.integers(4, 400),
    "max_distance": st.integers(200, 10**6),
    "segments": st.lists(
        st.one_of(
            st.integers(1, 20),
            st.tuples(st.integers(1, 4), st.sampled_from([2, 4, 8]), st.sampled_from([2, 6])),
            st.tuples(
                st.integers(1, 4),
                st.sampled_from([2, 4]),
                st.sampled_from([2, 4]),
                st.floats(0.1, 50),
            ),
        ),
        min_size=1,
        max_size=6,
    ),
    "spatial_merge_size": st.sampled_from([1, 2]),
    "n_pairs": st.just(64),
    "mrope_section": st.sampled_from([[16, 24, 24], [24, 20, 20], [64, 0, 0]]),
    "interleaved": st.booleans(),
    "n_positions": st.integers(1, 64),
    "position_ids": st.sampled_from(
        [np.arange(12).reshape(3, 4), pe_core.mrope_position_ids([2, (1, 2, 2)])]
    ),
    "inv_freq": st.lists(st.floats(0, 10), min_size=2, max_size=2),
    "axes": st.lists(st.integers(0, 2), min_size=2, max_size=2),
    "std": st.floats(1e-6, 10),
    "compute_dtype": precision_ok,
    "formula": st.sampled_from(["exp", "pow"]),
    "height": st.integers(1, 6),
    "width": st.integers(1, 6),
    "extra_tokens": st.integers(0, 3),
    # A volume's (x, y, z) sizes.
    "shape": st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)),
    # A grid's coordinates: a number for both axes or a (row, column) pair.
    "start": st.one_of(st.floats(-1e3, 1e3), st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3))),
    "step": st.one_of(st.floats(-10, 10), st.tuples(st.floats(-10, 10), st.floats(-10, 10))),
    "seed": st.integers(0, 2**32),
    "path": rotary_inputs.gguf_paths,
    "data": st.one_of(rotary_inputs.gguf_bytes(), st.binary(max_size=256)),
    "name": rotary_inputs.gguf_names,
    "meta": rotary_inputs.gguf_metas,
    "layer": st.sampled_from(GGUF_LAYERS),
    "n_ctx": rotary_inputs.n_ctx_values,
    "with_transformers_error": st.booleans(),
    "threshold": st.floats(1e-7, 3.0),
    "frequencies": st.sampled_from(["transformers", "rounded"]),
    "stop": st.integers(1, 2**20),
}


#: Plausible values of an argument that one function reads otherwise than the others (text is
#: JSON to load_json, gguf-dump's output to parse_gguf_dump).
PLAUSIBLE_FOR = {
    "parse_gguf_dump": {"text": rotary_inputs.gguf_texts()},
    "llama_cpp_angles": {
        "positions": weighted((4, rotary_inputs.llama_positions), (1, positions_ok))
    },
    "llama_cpp_cos_sin": {
        "positions": weighted((4, rotary_inputs.llama_positions), (1, positions_ok))
    },
    "rope_cache_from_vectors": {"positions": rotary_inputs.vector_positions},
}


def plausible(name: str, key: str):
    """The plausible values of argument ``key`` of function ``name``."""
    return PLAUSIBLE_FOR.get(name, {}).get(key, PLAUSIBLE[key])


def test_specs_cover_the_public_api():
    functions = {
        name
        for name in pe_core.__all__
        if callable(getattr(pe_core, name)) and not isinstance(getattr(pe_core, name), type)
    }
    assert functions == set(SPECS)


# --------------------------------------------------------------------------------------------
# Running one call: memory and time guard, error-message and result checks
# --------------------------------------------------------------------------------------------


def guarded_call(name: str, arguments: dict):
    """Call ``SPECS[name]`` with ``arguments`` (OMIT ones left out) under tracemalloc.

    Returns ``(result, exception)``. Fails if the call exceeds the memory or time guard.
    """
    spec = SPECS[name]
    args = [arguments[key] for key in spec.positional if arguments.get(key, OMIT) is not OMIT]
    kwargs = {key: arguments[key] for key in spec.keywords if arguments.get(key, OMIT) is not OMIT}
    already_tracing = tracemalloc.is_tracing()
    if already_tracing:
        tracemalloc.reset_peak()
    else:
        tracemalloc.start()
    start = time.thread_time()
    result = exception = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = spec.function(*args, **kwargs)
        except BaseException as error:
            if not isinstance(error, Exception):
                raise
            exception = error
    elapsed = time.thread_time() - start
    peak = tracemalloc.get_traced_memory()[1]
    if not already_tracing:
        tracemalloc.stop()
    assert peak < PEAK_LIMIT_BYTES, f"{name}{_show(arguments)} allocated {peak:,} bytes"
    assert elapsed < CALL_CPU_SECONDS, f"{name}{_show(arguments)} took {elapsed:.1f} CPU s"
    # The core warns (UserWarning) where Hugging Face does, e.g. a YaRN or llama3 scaling whose
    # original length is not below max_position_embeddings; any other warning (NumPy's overflow
    # or ComplexWarning: a value silently changed) is a failure.
    unexpected = [w for w in caught if w.category is not UserWarning]
    assert not unexpected, f"{name}{_show(arguments)} warned: {unexpected[0].message!r}"
    return result, exception


def _show(arguments: dict) -> str:
    parts = [f"{k}={_short(v)}" for k, v in arguments.items() if v is not OMIT]
    return "(" + ", ".join(parts) + ")"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _contains_huge_number(value, depth: int = 0) -> bool:
    """Python ints (or Fractions, Decimals) beyond the float64 range, anywhere inside."""
    if depth > 20:
        return False
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, Fraction)):
        try:
            return abs(value) >= 2**1024
        except OverflowError:
            return True
    if isinstance(value, np.ndarray) and value.dtype == object:
        return any(_contains_huge_number(v, depth + 1) for v in value.ravel().tolist())
    if isinstance(value, (list, tuple)):
        return any(_contains_huge_number(v, depth + 1) for v in value)
    return False


def _pe_core_frames(error: BaseException) -> list[str]:
    """Names of the pe_core functions the exception passed through, outermost first."""
    names, trace = [], error.__traceback__
    while trace is not None:
        code = trace.tb_frame.f_code
        if "pe_core" in code.co_filename and code.co_name != "<listcomp>":
            names.append(code.co_name)
        trace = trace.tb_next
    return names


#: Words that may stand for an argument in an error message, besides its own name.
ALIASES = {"any": ("memory budget",)}
#: A one-letter argument (a, b, x) counts as named only as the subject: "a must ...", "a and b".
SHORT_NAME = r"(?<![\w.]){name}(?=\s+(must|has|and|of shape|as a|would)\b|=)"


def names_argument(message: str, name: str) -> bool:
    """True if ``message`` names argument ``name`` (single letters only as a subject)."""
    if any(alias in message for alias in ALIASES["any"]):
        return True
    if len(name) == 1:
        return re.search(SHORT_NAME.format(name=re.escape(name)), message) is not None
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", message) is not None


def check_error(name: str, arguments: dict, error: Exception, culprits) -> None:
    """``error`` is a pe_core.InputError whose message names one of ``culprits``."""
    call = f"{name}{_show(arguments)}"
    assert isinstance(error, ALLOWED), f"{call} raised {type(error).__name__}: {error}"
    message = str(error)
    assert message.strip(), f"{call} raised {type(error).__name__} with an empty message"
    named = any(names_argument(message, c) for c in culprits)
    if not named and name == "read_gguf_bytes" and "data" in culprits:
        # ``name`` is what the data is called in messages (the Check page: "the file")
        given = arguments.get("name", OMIT)
        named = isinstance(given, str) and bool(given.strip()) and message.startswith(given)
    assert named, (
        f"{call} raised {type(error).__name__}({message!r}), which names none of {culprits}"
    )


def _as_float_array(value) -> np.ndarray:
    return np.asarray(value, dtype=np.float64)


def _no_nan(value, what: str) -> None:
    if isinstance(value, np.ndarray):
        if value.dtype == ml_dtypes.bfloat16:
            value = value.astype(np.float32)
        if value.dtype.kind in "fc":
            assert not np.any(np.isnan(value)), f"NaN in {what}"
    elif isinstance(value, float):
        assert not math.isnan(value), f"NaN in {what}"
    elif isinstance(value, (tuple, list)):
        for item in value:
            _no_nan(item, what)


def _count(positions) -> int:
    """Number of positions an accepted ``positions`` argument stands for."""
    if isinstance(positions, numbers.Integral) or (
        isinstance(positions, np.ndarray) and positions.ndim == 0
    ):
        return int(positions)
    return int(np.asarray(positions).shape[0])


def convention_of(arguments: dict) -> str:
    value = arguments.get("convention", OMIT)
    return "vaswani" if value is OMIT else value


def _n_pairs(d_model: int, convention: str) -> int:
    # Conventions that fill an odd d_model's last column with zeros have d // 2 pairs;
    # the others give it one more, unpaired, sin.
    zero_column = pe_core.CONVENTIONS[convention].odd_column == "zero"
    return d_model // 2 if zero_column else (d_model + 1) // 2


def _in_unit_interval(values: np.ndarray, what: str) -> None:
    # Strict since the 1 + ulp bug was fixed (test_regression_encoding_a_hair_beyond_one).
    largest = float(np.max(np.abs(_as_float_array(values)), initial=0.0))
    assert largest <= 1.0, f"{what} has values outside [-1, 1]: {largest!r}"


def check_result(name: str, arguments: dict, result) -> None:
    """A returned value: no NaN, values in range, shapes consistent with the inputs."""
    call = f"{name}{_show(arguments)}"

    def arg(key):
        value = arguments.get(key, OMIT)
        if value is OMIT:
            return {"base": 10_000.0, "convention": "vaswani", "kind": "cosine"}.get(key)
        return value

    if name == "column_roles":
        pair, role = result
        d_model = int(arg("d_model"))
        assert pair.shape == role.shape == (d_model,), call
        assert set(role.tolist()) <= {"sin", "cos", "zero"}, call
        return
    if name == "sinusoidal_bank":
        d_model = int(arg("d_model"))
        assert isinstance(result, pe_core.FrequencyBank) and result.d_model == d_model, call
        assert result.frequencies.shape == (_n_pairs(d_model, convention_of(arguments)),), call
        return
    if name == "uniqueness_report":
        _check_report(call, result, _count(arg("positions")))
        return
    if name == "rope_config_sources":
        assert isinstance(result, pe_core.RopeConfigSources), call
        assert all(isinstance(s, pe_core.ConfigSource) for s in result.used), call
        return
    if name == "rope_query_temperature":
        assert result is None or isinstance(result, pe_core.QueryTemperature), call
        return
    if name == "rope_config_essentials":
        assert isinstance(result, dict), call
        return
    if name == "pairwise_limit":
        assert isinstance(result, int) and 1 <= result <= pe_core.PAIRWISE_LIMIT, call
        return
    if name == "rope_layers":
        assert isinstance(result, list) and result, call
        for rope in result:
            if rope is not None:
                check_result("rope_from_config", arguments, rope)
        return
    if name in ("rope_frequencies", "rope_from_config"):
        assert isinstance(result, pe_core.RotaryEncoding), call
        assert result.inv_freq.shape == (result.rotary_dim // 2,), call
        assert np.all(np.isfinite(result.inv_freq)) and np.all(result.inv_freq >= 0), call
        assert np.all(result.inv_freq <= result.original_inv_freq * (1 + 1e-12)), call
        assert math.isfinite(result.attention_factor) and result.attention_factor > 0, call
        return
    if name == "rope_cos_sin":
        cos, sin = result
        n, d = _count(arg("positions")), arg("rope").rotary_dim
        assert cos.shape == sin.shape == (n, d), call
        scale = arg("rope").attention_factor
        assert np.all(cos**2 + sin**2 <= scale**2 * (1 + 1e-6)), call
        return
    if name == "apply_rope":
        x = np.asarray(arg("x"), dtype=np.float64)
        assert result.shape == x.shape, call
        norms = np.linalg.norm(result[..., : arg("rope").rotary_dim], axis=-1)
        expected = np.linalg.norm(x[..., : arg("rope").rotary_dim], axis=-1)
        factor = arg("rope").attention_factor
        assert np.allclose(norms, factor * expected, rtol=1e-9, atol=1e-300), call
        return
    if name == "inv_freq_float32_ulps":
        assert result.shape == (arg("rope").n_pairs,) and np.all(result >= 0), call
        return
    if name == "first_angle_error_above":
        stop = 2**24 if arg("stop") is None else int(arg("stop"))
        assert result.stop == stop and 0 <= result.low <= stop, call
        assert result.high is None or result.low <= result.high < stop, call
        if result.exact and result.high is not None:
            errors = (
                pe_core.transformers_angle_errors([result.high], arg("rope"))
                if arg("frequencies") in (None, "transformers")
                else pe_core.rope_angle_errors([result.high], arg("rope"), "float32")
            )
            assert errors[0] > result.threshold, call
        return
    if name == "merged_position_ids":
        first, second = result
        assert second == first + 1 and first >= 256, call
        return
    if name in (
        "rope_scores",
        "rope_decay_bound",
        "rope_angle_errors",
        "transformers_angle_errors",
    ):
        key = "positions" if name.endswith("angle_errors") else "offsets"
        assert result.shape == (_count(arg(key)),), call
        assert not np.any(np.isnan(result)), call  # inf: a float16 position beyond 65504
        return
    if name == "rope_permutation":
        n = int(arg("head_dim")) * (1 if arg("n_heads") is None else int(arg("n_heads")))
        assert sorted(result.tolist()) == list(range(n)), call
        return
    if name == "yarn_correction_range":
        low, high = result
        assert low >= 0 and high <= int(arg("rotary_dim")) - 1, call
        return
    if name == "alibi_slopes":
        n = int(arg("n_heads"))
        assert result.shape == (n,) and np.all((result > 0) & (result < 1)), call
        return
    if name == "alibi_bias":
        offsets, slopes = np.asarray(arg("offsets")), np.asarray(arg("slopes"))
        assert result.shape == (slopes.size, offsets.size), call
        assert not np.any(np.isnan(result)) and np.all(result <= 0), call
        return
    if name == "t5_relative_buckets":
        assert result.shape == (len(arg("relative_positions")),), call
        num_buckets = 32 if arg("num_buckets") is None else int(arg("num_buckets"))
        assert np.all((result >= 0) & (result < num_buckets)), call
        return
    if name == "mrope_position_ids":
        assert result.ndim == 2 and result.shape[0] == 3 and result.dtype == np.int64, call
        assert np.all(result >= 0), call
        return
    if name == "mrope_axes":
        assert result.shape == (int(arg("n_pairs")),), call
        assert set(result.tolist()) <= {0, 1, 2}, call
        return
    if name == "axial_rope_frequencies":
        inv_freq, axes = result
        assert inv_freq.shape == axes.shape == (int(arg("head_dim")) // 2,), call
        assert np.all(np.isfinite(inv_freq)) and set(axes.tolist()) <= {1, 2}, call
        return
    if name == "multi_axis_angles":
        ids = np.asarray(arg("position_ids"))
        assert result.shape == (ids.shape[1], np.asarray(arg("inv_freq")).size), call
        assert not np.any(np.isnan(result)), call
        return
    if name == "learned_position_table":
        assert result.shape == (int(arg("n_positions")), int(arg("d_model"))), call
        assert np.all(np.isfinite(result)), call
        return
    if name == "textbook_encoding":
        rows, d_model = _count(arg("positions")), int(arg("d_model"))
        assert result.shape == (rows, d_model), call
        _check_dtype(call, result, arguments.get("dtype", OMIT))
        _no_nan(result, call)
        _in_unit_interval(result, call)
        return
    if name == "grid_encoding":
        extra = arg("extra_tokens") or 0
        rows = int(extra) + int(arg("height")) * int(arg("width"))
        assert result.shape == (rows, int(arg("d_model"))), call
        assert np.all(np.abs(result.astype(np.float64)) <= 1.0), call
        return
    if name == "diagnose_encoding":
        assert isinstance(result, pe_core.Diagnosis), call
        assert isinstance(result.summary(), str) and result.summary(), call
        assert result.bug is None or result.bug.name in pe_core.BUGS, call
        return
    if name == "identify_rope":
        assert isinstance(result, pe_core.RopeIdentification), call
        assert isinstance(result.summary(), str) and result.summary(), call
        json.dumps(result.to_dict())  # JSON-ready
        assert set(result.bugs) <= set(pe_core.ROPE_BUGS), call
        assert result.rotary_dim == 2 * result.inv_freq.size, call
        return
    if name == "identify_grid":
        assert isinstance(result, pe_core.GridIdentification), call
        assert isinstance(result.summary(), str) and result.summary(), call
        if result.matches:
            assert result.height * result.width + result.extra_tokens == len(arg("matrix")), call
        return
    if name == "grid3d_encoding":
        rows = int(np.prod([int(size) for size in arg("shape")]))
        assert result.shape == (rows, int(arg("d_model"))), call
        assert np.all(np.abs(result.astype(np.float64)) <= 1.0), call
        return
    if name == "identify_grid3d":
        assert isinstance(result, pe_core.Grid3DIdentification), call
        assert isinstance(result.summary(), str) and result.summary(), call
        if result.matches:
            assert int(np.prod(result.shape)) * result.d_model == np.size(arg("matrix")), call
        return
    if name in ("read_gguf", "read_gguf_bytes", "parse_gguf_dump"):
        _check_gguf_metadata(call, name, arguments, result)
        return
    if name == "llama_cpp_layers":
        _check_llama_cpp_rope(call, arg("meta"), arguments.get("n_ctx", OMIT), result)
        return
    if name == "llama_cpp_angles":
        _check_llama_cpp_angles(call, arg("positions"), arg("layer"), result)
        return
    if name == "llama_cpp_cos_sin":
        _check_llama_cpp_cos_sin(call, arg("positions"), arg("layer"), result)
        return
    if name == "check_gguf":
        _check_gguf_check(call, arguments, result)
        return
    if name == "rope_cache_from_vectors":
        _check_rope_cache_from_vectors(call, arguments, result)
        return
    if name == "load_json":  # within the depth limit: what json itself reads
        assert result == json.loads(arg("text")), call
        return
    if name == "identify_encoding":
        shape = np.shape(np.asarray(arg("matrix")))
        if len(shape) > 2:  # singleton axes are dropped, as from a (1, L, d) buffer
            shape = tuple(size for size in shape if size != 1)
        _check_identification(call, result, shape)
        return
    assert isinstance(result, np.ndarray), f"{call} returned {type(result).__name__}"
    _no_nan(result, call)
    convention = arg("convention")
    if name in (
        "sinusoidal_encoding",
        "reference_encoding",
        "encoding_columns",
        "block_mean_encoding",
    ):
        n, d_model = _count(arg("positions")), int(arg("d_model"))
        if name == "encoding_columns":
            expected = (n, np.asarray(arg("columns")).size)
        elif name == "block_mean_encoding":
            expected = (-(-n // int(arg("block_size"))), d_model)
        else:
            expected = (n, d_model)
        assert result.shape == expected, f"{call}: shape {result.shape}, expected {expected}"
        _in_unit_interval(result, call)
        if name == "sinusoidal_encoding":
            _check_dtype(call, result, arguments.get("dtype", OMIT))
            if result.dtype == np.float64 and n * d_model <= 4096:
                _compare_with_reference(call, result, arguments)
    elif name in ("frequencies", "wavelengths"):
        d_model = int(arg("d_model"))
        assert result.shape == (_n_pairs(d_model, convention),), call
        assert np.all(result > 0), f"{call} has non-positive values"
    elif name == "cosine_similarity":
        a = np.asarray(arg("a"))
        b_value = arguments.get("b", OMIT)
        b = a if b_value is OMIT or b_value is None else np.asarray(b_value)
        assert result.shape == (a.shape[0], b.shape[0]), call
        _in_unit_interval(result, call)
    elif name == "offset_similarity":
        assert result.shape == np.shape(np.asarray(arg("offsets"))), call
        _check_profile_values(call, result, arg("kind"), int(arg("d_model")), convention)
    elif name == "similarity_matrix":
        n = _count(arg("positions"))
        assert result.shape == (n, n), call
        _check_profile_values(call, result, arg("kind"), int(arg("d_model")), convention)
        scale = max(1.0, float(np.max(np.abs(result), initial=0.0)))
        assert np.allclose(result, result.T, rtol=0, atol=1e-9 * scale), f"{call} not symmetric"
    elif name == "relative_rotation":
        d_model = int(arg("d_model"))
        assert result.shape == (d_model, d_model), call
        _in_unit_interval(result, call)
        if d_model <= 256:
            identity = np.eye(d_model)
            assert np.allclose(result @ result.T, identity, atol=1e-12), f"{call} not orthogonal"
    elif name == "nearest_neighbor_distances":
        n = _count(arg("positions"))
        assert result.shape == (n,), call
        assert np.all(result >= 0), call
        if n >= 2:
            assert np.all(np.isfinite(result)), f"{call} has inf distances with {n} positions"
    elif name == "encoding_distances":
        assert result.shape == np.shape(np.asarray(arg("first"))), call
        assert np.all(np.isfinite(result)) and np.all(result >= 0), call
        assert np.all(result <= 2 * math.sqrt(int(arg("d_model"))) + 1e-9), call
    elif name == "quantize":
        assert result.shape == np.shape(np.asarray(arg("x"))), call
        assert result.dtype == np.float64 and np.all(np.isfinite(result)), call
    elif name == "add_to_embeddings":
        assert result.shape == np.shape(np.asarray(arg("embeddings"))), call
        assert result.dtype == np.float64, call
    else:  # pragma: no cover - every function has a branch
        raise AssertionError(f"no result check for {name}")


def _check_dtype(call: str, result: np.ndarray, dtype) -> None:
    if dtype is OMIT:
        assert result.dtype == np.float64, call
    else:
        assert result.dtype == np.dtype(dtype), f"{call}: dtype {result.dtype}"


def _compare_with_reference(call: str, result: np.ndarray, arguments: dict) -> None:
    keywords = {k: arguments[k] for k in ENCODING_KW if arguments.get(k, OMIT) is not OMIT}
    positions = arguments["positions"]
    reference = pe_core.reference_encoding(positions, arguments["d_model"], **keywords)
    # The reference evaluates sin(k * w) in plain float64: off by about ulp(k * w).
    if isinstance(positions, numbers.Integral) or np.ndim(positions) == 0:
        largest_position = float(_count(positions))
    else:
        largest_position = float(np.max(np.abs(_as_float_array(positions)), initial=0.0))
    freqs = pe_core.frequencies(arguments["d_model"], **keywords)
    largest_angle = largest_position * float(np.max(freqs, initial=1.0))
    tolerance = 1e-13 + 8 * 2.0**-52 * largest_angle
    assert np.allclose(result, reference, rtol=0, atol=tolerance), f"{call} != reference"


def _check_profile_values(call, values, kind, d_model, convention) -> None:
    pairs = _n_pairs(d_model, convention)
    if kind == "cosine":
        _in_unit_interval(values, call)
    elif kind == "distance":
        assert np.all(values >= 0), f"{call}: negative distance"
        assert np.all(values <= 2 * math.sqrt(max(pairs, d_model)) + 1e-9), call
    else:  # dot
        assert np.all(np.abs(values) <= d_model + 1e-9), call


def _check_report(call: str, report, n: int) -> None:
    assert isinstance(report, pe_core.UniquenessReport), call
    assert report.n_positions == n, call
    assert report.n_distinct + report.n_duplicates == n, call
    assert 0 <= report.n_duplicates < max(n, 1), call
    for field in fields(report):
        _no_nan(getattr(report, field.name), f"{call}.{field.name}")
    if report.min_distance is not None:
        assert report.min_distance >= 0, call
    if report.max_cosine is not None:
        assert -1.0 <= report.max_cosine <= 1.0, call
    assert report.distance_error_bound >= 0, call
    assert isinstance(report.summary(), str) and report.summary(), call
    if n >= 2:
        assert report.min_distance is not None and report.closest_pair is not None, call


def _check_identification(call: str, found, shape) -> None:
    assert isinstance(found, pe_core.Identification), call
    for field in fields(found):
        _no_nan(getattr(found, field.name), f"{call}.{field.name}")
    assert found.convention in pe_core.CONVENTIONS, call
    assert found.max_abs_error >= 0 and math.isfinite(found.base) and found.base > 0, call
    row, column = found.worst_cell
    assert 0 <= row < shape[0] and 0 <= column < shape[1], f"{call}: worst_cell outside matrix"
    assert isinstance(found.summary(), str) and found.summary(), call
    for candidate in found.candidates:
        _no_nan([candidate.base, candidate.start, candidate.max_abs_error], f"{call} candidate")


#: The Python type of each GGUF value type as the reader returns it (arrays: tuples).
GGUF_PYTHON_TYPES = {"FLOAT32": float, "FLOAT64": float, "BOOL": bool, "STRING": str}
GGUF_PYTHON_TYPES.update(dict.fromkeys(["UINT8", "INT8", "UINT16", "INT16", "UINT32"], int))
GGUF_PYTHON_TYPES.update(dict.fromkeys(["INT32", "UINT64", "INT64"], int))
#: llama.cpp's RoPE factor tensors, whose values the reader reads.
GGUF_ROPE_TENSORS = ("rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight")
FLOAT32_UNIT = 2.0**-24


def _whole_gguf(name: str, arguments: dict):
    """The reading of the corpus file that the input is, or the start of (None for any other
    input): a file read from disk and from bytes, whole or cut, must agree with it."""
    if name == "read_gguf":
        path = Path(arguments["path"])
        if path in rotary_inputs.GGUF_FILES:
            return pe_core.read_gguf_bytes(rotary_inputs.GGUF_DATA[path.name])
        return None
    data = arguments["data"]
    if not isinstance(data, bytes):
        return None
    for file_name, whole in rotary_inputs.GGUF_DATA.items():
        if whole.startswith(data):
            return rotary_inputs.GGUF_READINGS[file_name]
    return None


def _check_gguf_metadata(call: str, name: str, arguments: dict, meta) -> None:
    assert isinstance(meta, pe_core.GgufMetadata), call
    source = {"read_gguf": "file", "read_gguf_bytes": "bytes", "parse_gguf_dump": "dump"}[name]
    assert meta.source == source and meta.metadata, call
    assert all(isinstance(key, str) for key in meta.metadata), call
    if source == "dump":
        _check_gguf_dump(call, arguments["text"], meta)
        return
    assert meta.version in (2, 3), call
    # every key has its type, and its value is of that type
    assert set(meta.value_types) == set(meta.metadata) | set(meta.skipped_arrays), call
    for key, value in meta.metadata.items():
        kind = meta.value_types[key]
        expected = tuple if kind.startswith("ARRAY") else GGUF_PYTHON_TYPES[kind]
        assert isinstance(value, expected), f"{call}: {key} = {value!r} is not {kind}"
        assert expected is bool or not isinstance(value, bool), f"{call}: {key} is a bool"
    # RoPE tensors: their values when the data holds them, else said to be missing
    cut = []
    for tensor in meta.tensors.values():
        if tensor.name not in GGUF_ROPE_TENSORS:
            assert tensor.values is None, call
        elif tensor.values is None:
            cut.append(tensor.name)
        else:
            assert tensor.values.dtype == np.float32, call
            assert tensor.values.size == math.prod(tensor.shape), call
    assert meta.truncated == bool(cut) and len(meta.missing) == len(cut), call
    whole = _whole_gguf(name, arguments)
    if whole is not None:  # the whole metadata, and each RoPE tensor's values if not cut
        assert meta.metadata == whole.metadata and meta.value_types == whole.value_types, call
        assert meta.tensors.keys() == whole.tensors.keys(), call
        for tensor_name, tensor in meta.tensors.items():
            if tensor.values is not None:
                np.testing.assert_array_equal(tensor.values, whole.tensors[tensor_name].values)


def _check_gguf_dump(call: str, text: str, meta) -> None:
    assert meta.version is None and set(meta.metadata) <= set(meta.value_types), call
    # A corpus file's dump, cut at a line: each key it reads has the file's value.
    for file_name, dump in rotary_inputs.GGUF_DUMPS.items():
        if dump.startswith(text):
            binary = rotary_inputs.GGUF_READINGS[file_name].metadata
            for key, value in meta.metadata.items():
                assert key in binary, f"{call}: {key} is not in {file_name}"
                if isinstance(value, float):
                    assert np.float32(value) == np.float32(binary[key]), f"{call}: {key}"
                else:
                    assert value == binary[key] or value == tuple(binary[key]), f"{call}: {key}"


def _check_llama_cpp_rope(call: str, meta, n_ctx, rope) -> None:
    arch = meta.architecture
    assert rope.architecture == arch and rope.layers, call
    # one layer per block of the file
    assert len(rope.layers) == meta.metadata[f"{arch}.block_count"], call
    context_length = meta.metadata[f"{arch}.context_length"]
    given = n_ctx is not OMIT and n_ctx is not None
    assert rope.n_ctx == (n_ctx if given else context_length), call
    for index, layer in enumerate(rope.layers):
        assert isinstance(layer, pe_core.LlamaCppLayer) and layer.index == index, call
        assert 0 < layer.n_dims <= layer.head_dim and layer.n_dims % 2 == 0, call
        numbers_ = [layer.freq_base, layer.freq_scale, layer.ext_factor, layer.attn_factor]
        numbers_ += [layer.beta_fast, layer.beta_slow, layer.cos_sin_factor]
        assert all(math.isfinite(value) for value in numbers_), f"{call}: layer {layer}"
        assert layer.freq_base > 0 and layer.freq_scale > 0, f"{call}: layer {layer}"
        if layer.freq_factors is not None:
            factors = layer.freq_factors[: layer.n_pairs]
            assert factors.dtype == np.float32 and factors.size == layer.n_pairs, call
            assert np.all(np.isfinite(factors) & (factors > 0)), f"{call}: factors {factors}"
        inv_freq = layer.inv_freq()
        assert inv_freq.shape == (layer.n_pairs,), call
        assert np.all(np.isfinite(inv_freq) & (inv_freq >= 0)), f"{call}: inv_freq {inv_freq}"


def _llama_positions(positions) -> np.ndarray:
    if isinstance(positions, numbers.Integral) or np.ndim(positions) == 0:  # a count
        return np.arange(_count(positions), dtype=np.float64)
    return np.asarray(positions, dtype=np.float64).reshape(-1)


def _check_llama_cpp_angles(call: str, positions, layer, angles) -> None:
    positions = _llama_positions(positions)
    assert angles.dtype == np.float32 and angles.shape == (positions.size, layer.n_pairs), call
    assert np.all(np.isfinite(angles)), call
    # Against the exact angles p * inv_freq: pair i's float32 angle is a running product of
    # i roundings, by theta_scale = powf(base, -2/n), whose exponent is rounded too (its error
    # is raised to the i-th power: i * (1 + 2 ln(base) / n) units), then divided by the
    # factor, scaled and mixed (YaRN): at most 6 more roundings (each within half a unit of
    # the smallest float32 subnormal where the angles are that small: a huge scaling factor).
    i = np.arange(layer.n_pairs)
    units = (i + 6) + i * (1 + 2 * abs(math.log(layer.freq_base)) / layer.n_dims)
    exact = positions[:, None] * layer.inv_freq()[None, :]
    error = np.abs(angles - exact)
    allowed = units * (FLOAT32_UNIT * np.abs(exact) + 2.0**-149)
    worst = np.unravel_index(np.argmax(error - allowed), error.shape) if error.size else None
    assert error.size == 0 or error[worst] <= allowed[worst], (
        f"{call}: angle {angles[worst]!r} at position {positions[worst[0]]:g}, pair {worst[1]}: "
        f"exact {exact[worst]!r}, {error[worst] / max(allowed[worst], 1e-300):.3g}x the bound"
    )


def _check_llama_cpp_cos_sin(call: str, positions, layer, result) -> None:
    cos, sin = result
    n = _llama_positions(positions).size
    for values in (cos, sin):
        assert values.dtype == np.float32 and values.shape == (n, layer.n_pairs), call
        assert np.all(np.isfinite(values)), call
    # cosf and sinf of llama.cpp's angles (within one float32 unit), times the kernel's
    # factor (rounded to float32, and the product): within 4 units of the factor (and of the
    # smallest subnormal, for a factor that small).
    factor = layer.cos_sin_factor
    angles = pe_core.llama_cpp_angles(positions, layer).astype(np.float64)
    allowed = 4 * (FLOAT32_UNIT * factor + 2.0**-149)
    assert np.all(np.abs(cos - factor * np.cos(angles)) <= allowed), call
    assert np.all(np.abs(sin - factor * np.sin(angles)) <= allowed), call
    assert max(np.max(np.abs(cos), initial=0), np.max(np.abs(sin), initial=0)) <= factor + allowed


def _check_gguf_check(call: str, arguments: dict, found) -> None:
    assert isinstance(found, pe_core.GgufCheck), call
    assert isinstance(found.matches, bool), call
    summary = found.summary()
    assert isinstance(summary, str) and summary.strip(), call
    json.dumps(found.to_dict())  # JSON-ready
    meta, config = arguments["meta"], arguments.get("config", OMIT)
    has_config = config is not OMIT and config is not None
    assert found.has_config == has_config and (has_config or not found.matches), call
    n_layers = meta.metadata[f"{meta.architecture}.block_count"]
    assert len(found.layers) == len(found.rope.layers) == n_layers, call
    for layer in found.layers:
        assert math.isfinite(layer.max_error) and math.isfinite(layer.error_at_context), call
    for finding in found.findings:
        assert finding.origin.value in ("file", "llama.cpp", "input"), call
        assert set(finding.layers) <= set(range(n_layers)) and finding.key, call
        if finding.first_position is not None:
            assert 0 <= finding.first_position < finding.searched, call
        assert finding.error_at_context is None or math.isfinite(finding.error_at_context), call
    # A corpus file with the config it was converted from: a match exactly when it is faithful.
    for file_name, reading in rotary_inputs.GGUF_READINGS.items():
        own = rotary_inputs.GGUF_CONFIGS[file_name]
        if meta is reading and (config == own or config == json.loads(own)):
            low, high = rotary_inputs.SHOWS_AT_CONTEXT.get(file_name, (0, math.inf))
            faithful = file_name in rotary_inputs.FAITHFUL or not low < found.rope.n_ctx <= high
            assert found.matches == faithful, f"{call}: {summary}"


def _check_rope_cache_from_vectors(call: str, arguments: dict, result) -> None:
    cos, sin, positions = result
    before, after = np.asarray(arguments["before"]), np.asarray(arguments["after"])
    n, width = before.shape[-2:]
    assert cos.shape == sin.shape == (n, width) and positions.shape == (n,), call
    assert np.all(np.isfinite(cos)) and np.all(np.isfinite(sin)), call
    given = arguments.get("positions", OMIT)
    expected = np.arange(n) if given is OMIT or given is None else np.reshape(given, -1)
    assert np.array_equal(positions, np.asarray(expected, dtype=np.float64)), call
    case = rotary_inputs.vector_case_of(
        arguments["before"], arguments["after"], None if given is OMIT else given
    )
    if case is not None:  # the cache that rotated them
        error = max(np.max(np.abs(cos - case.cos)), np.max(np.abs(sin - case.sin)))
        assert error <= case.tolerance, f"{call}: {error:.3g} off the cache that made it"
        return
    # Each pair's cos + i sin is a weighted mean of the heads' ratios z_after / z_before
    # (weights |z_before|^2), so within the largest ratio in the pairs of either layout, over
    # the columns that rotate (the others are cos 1, sin 0).
    x = before.reshape(-1, n, width).astype(np.float64)
    y = after.reshape(-1, n, width).astype(np.float64)
    rotating = np.flatnonzero(~np.all(x == y, axis=(0, 1)))
    first, end = int(rotating[0]), int(rotating[-1]) + 1
    if rotating.size != end - first or (end - first) % 2:
        first, end = 0, width
    x, y = x[..., first:end], y[..., first:end]
    half = (end - first) // 2
    largest = 1.0
    for xa, xb, ya, yb in (
        (x[..., :half], x[..., half:], y[..., :half], y[..., half:]),
        (x[..., 0::2], x[..., 1::2], y[..., 0::2], y[..., 1::2]),
    ):
        size = np.hypot(xa, xb)
        moved = size > 0
        if np.any(moved):
            largest = max(largest, float(np.max(np.hypot(ya, yb)[moved] / size[moved])))
    amplitude = float(np.max(np.hypot(cos, sin)))
    assert amplitude <= largest * (1 + 1e-12), f"{call}: |cos + i sin| {amplitude} > {largest}"


# --------------------------------------------------------------------------------------------
# The fuzz tests
# --------------------------------------------------------------------------------------------


def _too_slow(name: str, arguments: dict) -> bool:
    """reference_encoding is a Python loop (about 1 us per entry): skip big valid requests."""
    if name != "reference_encoding":
        return False
    try:
        entries = _count(arguments["positions"]) * operator.index(arguments["d_model"])
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
    return 10**5 < entries <= pe_core.MAX_ELEMENTS


@st.composite
def all_arguments(draw, name: str) -> dict:
    spec = SPECS[name]
    arguments = {}
    if name == "add_to_embeddings":
        embeddings, encoding = draw(embedding_pairs())
        arguments["embeddings"] = draw(
            st.one_of(st.just(embeddings), st.just(embeddings), anything)
        )
        arguments["encoding"] = draw(st.one_of(st.just(encoding), st.just(encoding), anything))
    if name == "check_gguf":  # a file with its config.json (or another's, or none)
        meta, config, _ = draw(rotary_inputs.gguf_with_config())
        arguments["meta"] = draw(mixed(st.just(meta)))
        arguments["config"] = draw(mixed(st.just(config)))
    if name == "rope_cache_from_vectors":  # vectors rotated by a known cache, and its positions
        case = draw(st.sampled_from(VECTOR_CASES))
        arguments["before"] = draw(mixed(st.just(case.before)))
        arguments["after"] = draw(mixed(st.just(case.after)))
        positions = OMIT if case.positions is None else case.positions
        arguments["positions"] = draw(weighted((4, st.just(positions)), (1, anything)))
    for key in spec.positional:
        if key not in arguments:
            if key == "b":  # optional positional
                arguments[key] = draw(optional(plausible(name, key)))
            else:
                arguments[key] = draw(mixed(plausible(name, key)))
    for key in spec.keywords:
        if key not in arguments:
            arguments[key] = draw(optional(plausible(name, key)))
    return arguments


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", list(SPECS))
@FUZZ
@given(data=st.data())
def test_fuzz_all_arguments(name, data):
    """Every argument arbitrary or plausible: a correct result, or an error naming an argument."""
    arguments = data.draw(all_arguments(name), label="arguments")
    if _too_slow(name, arguments):
        event("skipped: too big for the loop reference")
        return
    result, error = guarded_call(name, arguments)
    if error is not None:
        check_error(name, arguments, error, SPECS[name].arguments)
        event(f"{type(error).__name__}")
    else:
        event("returned")
        check_result(name, arguments, result)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", list(SPECS))
@FUZZ
@given(data=st.data())
def test_fuzz_one_bad_argument(name, data):
    """A good call with one argument replaced: an error must name that argument."""
    spec = SPECS[name]
    culprit = data.draw(st.sampled_from(spec.arguments), label="argument")
    arguments = dict(spec.baseline)
    replacement = weighted((2, anything), (1, plausible(name, culprit)))
    arguments[culprit] = data.draw(replacement, label=culprit)
    if _too_slow(name, arguments):
        event("skipped: too big for the loop reference")
        return
    result, error = guarded_call(name, arguments)
    if error is not None:
        check_error(name, arguments, error, (culprit,))
        event(f"{culprit}: {type(error).__name__}")
    else:
        event(f"{culprit}: returned")
        check_result(name, arguments, result)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(SPECS))
def test_baselines_are_valid(name):
    """The baseline calls the one-bad-argument test starts from succeed."""
    result, error = guarded_call(name, dict(SPECS[name].baseline))
    assert error is None, error
    check_result(name, dict(SPECS[name].baseline), result)


SIZE_REFUSALS = [
    ("sinusoidal_encoding", {"positions": 2**28 + 1, "d_model": 1}),
    ("sinusoidal_encoding", {"positions": 2**20, "d_model": 2**9}),
    ("sinusoidal_encoding", {"positions": 10**12, "d_model": 2**20}),
    ("reference_encoding", {"positions": 2**19, "d_model": 2**10}),
    ("encoding_columns", {"positions": 2**20, "d_model": 8, "columns": np.zeros(2**9, int)}),
    ("block_mean_encoding", {"positions": 2**63, "d_model": 8, "block_size": 2**40}),
    ("block_mean_encoding", {"positions": 2**28 + 1, "d_model": 1, "block_size": 1}),
    ("similarity_matrix", {"positions": 2**14 + 1, "d_model": 2}),
    ("similarity_matrix", {"positions": np.arange(2**14 + 1) + 0.5, "d_model": 2}),
    ("relative_rotation", {"offset": 1.0, "d_model": 2**14 + 2}),
    ("cosine_similarity", {"a": np.ones((2**14 + 1, 1))}),
    ("uniqueness_report", {"positions": 2**40, "d_model": 2}),
    ("uniqueness_report", {"positions": np.arange(4097) + 0.5, "d_model": 2}),
    ("nearest_neighbor_distances", {"positions": np.arange(4097) + 0.5, "d_model": 2}),
    ("nearest_neighbor_distances", {"positions": 2**63 - 1, "d_model": 2}),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("name", "arguments"), SIZE_REFUSALS, ids=lambda v: str(v)[:40])
def test_oversized_requests_are_refused_before_allocation(name, arguments):
    """Requests beyond the budget are refused with a message, before any big allocation."""
    result, error = guarded_call(name, arguments)
    assert result is None and isinstance(error, pe_core.InputError), error
    assert "memory budget" in str(error) or "limited to" in str(error) or "d_model" in str(error)


# --------------------------------------------------------------------------------------------
# Memory: peak allocation against the size the budget counts
# --------------------------------------------------------------------------------------------

#: Elements of the measured requests: 1/256 of the budget, so a call's peak at the budget is
#: 256 times the peak measured here (the ratios below are the same at 2**20, 2**22 and 2**24).
SCALE = 2**20
#: Largest accepted peak, in units of the request's elements as float64. At the budget (2**28
#: elements, 2 GiB) this allows 8 GiB: input, output and a couple of temporaries.
AMPLIFICATION_LIMIT = 4.0


def _amplification_cases():
    fractional = np.linspace(0.0, 1000.0, SCALE // 8)
    x = np.full(SCALE, 0.3)
    offsets = np.arange(SCALE, dtype=np.float64)
    rows = np.ones((SCALE // 8, 8))
    side = int(SCALE**0.5)
    return [
        pytest.param(lambda: pe_core.sinusoidal_encoding(SCALE // 8, 8), id="sinusoidal_encoding"),
        pytest.param(lambda: pe_core.similarity_matrix(side, 8), id="similarity_matrix"),
        pytest.param(lambda: pe_core.cosine_similarity(np.ones((side, 4))), id="cosine_similarity"),
        pytest.param(lambda: pe_core.relative_rotation(1.0, side), id="relative_rotation"),
        pytest.param(lambda: pe_core.offset_similarity(offsets, 8), id="offset_similarity"),
        pytest.param(lambda: pe_core.quantize(x, "float16"), id="quantize-float16"),
        pytest.param(
            lambda: pe_core.add_to_embeddings(rows, rows, dropout=0.5), id="add_to_embeddings"
        ),
        pytest.param(lambda: pe_core.block_mean_encoding(SCALE // 8, 8, 1), id="block_mean-d8"),
        pytest.param(
            lambda: pe_core.encoding_columns(fractional, 8, np.arange(8)),
            id="encoding_columns",
        ),
        pytest.param(lambda: pe_core.block_mean_encoding(SCALE, 1, 1), id="block_mean-d1"),
        pytest.param(
            lambda: pe_core.uniqueness_report(SCALE, 2, convention="tensor2tensor"),
            id="uniqueness_report",
        ),
        pytest.param(
            lambda: pe_core.nearest_neighbor_distances(SCALE, 2, convention="tensor2tensor"),
            id="nearest_neighbor_distances",
        ),
        pytest.param(lambda: pe_core.quantize(x, "bfloat16"), id="quantize-bfloat16"),
    ]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("call", _amplification_cases())
def test_peak_memory_stays_near_the_request_size(call):
    """Every request here counts 2**20 elements against the budget; the peak traced allocation
    may be at most AMPLIFICATION_LIMIT times their float64 size, or the largest request the
    budget accepts (2**28 elements) needs far more than the 2 GiB the budget stands for:
    encoding_columns 12x (24 GiB, more than this machine's RAM), block_mean_encoding with
    d_model=1 9x, nearest_neighbor_distances 7x, uniqueness_report 6.5x, quantize to bfloat16 5x.
    """
    tracemalloc.start()
    try:
        call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    ratio = peak / (8 * SCALE)
    assert ratio <= AMPLIFICATION_LIMIT, f"peak {peak:,} bytes = {ratio:.1f}x the request"


# --------------------------------------------------------------------------------------------
# Bugs the fuzzing found, now fixed: minimal reproductions
# --------------------------------------------------------------------------------------------


def _named_error_or_result(function, argument: str, *args, **kwargs):
    """Call; pass if it returns, or raises pe_core.InputError naming ``argument``."""
    try:
        return function(*args, **kwargs)
    except ALLOWED as error:
        assert names_argument(str(error), argument), f"message does not name {argument}: {error}"
        return None


HUGE = 10**400  # a Python int beyond the float64 range


@pytest.mark.parametrize(
    ("function", "argument", "args", "kwargs"),
    [
        (pe_core.frequencies, "base", (4,), {"base": HUGE}),
        (pe_core.sinusoidal_encoding, "base", (4, 4), {"base": HUGE}),
        (pe_core.relative_rotation, "offset", (HUGE, 4), {}),
        (
            pe_core.add_to_embeddings,
            "dropout",
            (np.ones((1, 2)), np.ones((1, 2))),
            {"dropout": HUGE},
        ),
        (pe_core.sinusoidal_encoding, "positions", ([HUGE], 4), {}),
        (pe_core.offset_similarity, "offsets", ([HUGE], 4), {}),
        (pe_core.quantize, "x", ([HUGE], "float32"), {}),
        (pe_core.cosine_similarity, "a", ([[HUGE]],), {}),
        (pe_core.add_to_embeddings, "embeddings", ([[HUGE]], [[0.0]]), {}),
        (pe_core.frequencies, "base", (4,), {"base": Fraction(HUGE)}),
        (pe_core.block_mean_encoding, "block_size", (10, 8, HUGE), {}),
    ],
    ids=lambda v: getattr(v, "__name__", None) if callable(v) else None,
)
def test_regression_huge_python_int_overflows(function, argument, args, kwargs):
    """check_real does float(value) and as_real_array does astype(float64) on an object array:
    both raise OverflowError ("int too large to convert to float") for ints beyond 1.8e308.
    block_mean_encoding fills np.full(n_blocks, block_size, float64): the same for a huge
    block_size (10**12 works: one block)."""
    _named_error_or_result(function, argument, *args, **kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((4,), {"base": 5e-324, "convention": "tensor2tensor"}),
        ((4,), {"base": 1e-310, "convention": "tensor2tensor"}),
        ((100,), {"base": 5e-324}),
    ],
)
def test_regression_tiny_base_overflows(args, kwargs):
    """Convention.frequencies computes math.pow(base, -e): for base below about 2.2e-308 that
    overflows and math.pow raises OverflowError("math range error"). A valid-but-useless base
    should give ValueError (as check_angles does for bases below 1 and big positions)."""
    _named_error_or_result(pe_core.frequencies, "base", *args, **kwargs)


def test_regression_block_mean_of_one_fractional_position():
    """One non-integer position is not a progression (start is None) but the n > 1 check lets it
    through: 'unsupported operand type(s) for *: NoneType and float'. The correct result is the
    encoding of that position (a block of one), or an error naming positions."""
    result = _named_error_or_result(pe_core.block_mean_encoding, "positions", [0.5], 4, 1)
    if result is not None:
        np.testing.assert_allclose(result, pe_core.sinusoidal_encoding([0.5], 4))


def test_regression_encoding_columns_ragged_columns():
    """encoding_columns calls np.asarray(columns) unguarded: NumPy's 'setting an array element
    with a sequence ... inhomogeneous shape' escapes without naming columns."""
    _named_error_or_result(pe_core.encoding_columns, "columns", 4, 4, [[0], [1, 2]])


@pytest.mark.parametrize("shape", [(2, 0), (0, 0)])
def test_regression_cosine_similarity_of_zero_length_rows(shape):
    """_unit_rows takes np.max over axis 1 of a (n, 0) array: 'zero-size array to reduction
    operation maximum which has no identity'. Zero rows have similarity 0 (docstring), so the
    result should be np.zeros((n, n)), or an error naming a."""
    result = _named_error_or_result(pe_core.cosine_similarity, "a", np.zeros(shape))
    if result is not None:
        np.testing.assert_array_equal(result, np.zeros((shape[0], shape[0])))


@pytest.mark.parametrize(
    ("args", "kwargs", "row", "column", "exact"),
    [
        ((np.arange(-44, 29), 2), {}, 44, 1, 1.0),  # position 0: cos(0) must be exactly 1
        ((5000, 64), {"dtype": np.float32}, 3416, 30, 1.0),  # cos(3416 * w_15) = 0.999999999999
    ],
    ids=["float64-position-0", "float32"],
)
def test_regression_encoding_a_hair_beyond_one(args, kwargs, row, column, exact):
    """The angle-addition fast path (product of two phasors) can land one ulp above 1: the
    float64 encoding of position 0 in np.arange(-44, 29) has cos column 1.0000000000000002, and
    the float32 encoding of 5000 x 64 has 1.0000001 where the correctly rounded value is 1.0.
    The docstring promises the result exact to the last digit, and every value in [-1, 1]."""
    encoding = pe_core.sinusoidal_encoding(*args, **kwargs)
    assert encoding[row, column] == exact
    assert np.max(np.abs(encoding)) <= 1.0


@pytest.mark.parametrize(
    ("function", "argument", "args", "kwargs"),
    [
        (pe_core.sinusoidal_encoding, "dtype", (2, 2), {"dtype": [("a", "f8"), ("a", "f8")]}),
        (pe_core.sinusoidal_encoding, "dtype", (2, 2), {"dtype": (np.int64(0), -8)}),
        (pe_core.quantize, "precision", ([1.0], [("a", "f8"), ("a", "f8")]), {}),
        (pe_core.quantize, "precision", ([1.0], (np.int64(0), -8)), {}),
        (pe_core.sinusoidal_encoding, "dtype", (6, 8), {"dtype": b","}),
        (pe_core.quantize, "precision", ([1.0], b","), {}),
    ],
    ids=[
        "dtype-fields",
        "dtype-shape",
        "precision-fields",
        "precision-shape",
        "dtype-comma",
        "precision-comma",
    ],
)
def test_regression_dtype_spec_numpy_value_error(function, argument, args, kwargs):
    """_check_output_dtype and check_precision catch only TypeError from np.dtype(...); a spec
    NumPy refuses with ValueError ("field 'a' occurs more than once") escapes unnamed, and a
    comma string (b",") makes NumPy's ast-based parser raise SyntaxError (found by the CI fuzz
    run, seed-dependent)."""
    _named_error_or_result(function, argument, *args, **kwargs)


@pytest.mark.parametrize("function", [pe_core.identify_encoding, pe_core.diagnose_encoding])
def test_regression_decimals_of_huge_values(function):
    """Looking for the decimals a table is written with scaled 1.8e307 by 10 and overflowed:
    a RuntimeWarning (found by the CI fuzz run of diagnose_encoding)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = function([[1.797693134862316e307] * 2] * 2)
    identification = getattr(found, "identification", found)
    assert not identification.matches


def test_regression_identify_spacing_fit_of_one_weighty_pair():
    """identify's spacing fit divided by zero (a RuntimeWarning, then a NaN line that happened
    to be rejected) when all but one pair's weight vanished: the weighted line through the
    pairs' changes is then undetermined (found by the CI fuzz run of diagnose_encoding once it
    failed on warnings)."""
    big = -1.34218e05
    matrix = np.array([[0.0, big, 1e-3], [big, big, 0.0], [big, big, big], [big, big, big]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        diagnosis = pe_core.diagnose_encoding(matrix)
    assert diagnosis.bug is None and not diagnosis.identification.matches
