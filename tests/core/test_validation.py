"""Every public function names the bad argument, echoes it and states the rule, and raises
:class:`pe_core.InputError` for it (:class:`pe_core.InputTypeError` for a value of the wrong
kind)."""

import re
import warnings

import numpy as np
import pytest

import pe_core
from pe_core import (
    CONVENTIONS,
    InputError,
    InputTypeError,
    cosine_similarity,
    frequencies,
    offset_similarity,
    reference_encoding,
    relative_rotation,
    similarity_matrix,
    sinusoidal_encoding,
    uniqueness_report,
    wavelengths,
)


def test_error_types():
    """One type for bad input, caught by the handlers that caught plain ValueError and TypeError."""
    assert issubclass(InputError, ValueError)
    assert issubclass(InputTypeError, InputError)
    assert issubclass(InputTypeError, TypeError)
    assert {"InputError", "InputTypeError"} <= set(pe_core.__all__)


D_MODEL_CASES = [
    (0, InputError, "d_model must be a positive integer, got 0"),
    (-3, InputError, "d_model must be a positive integer, got -3"),
    (True, InputTypeError, "d_model must be a positive integer, got True"),
    (4.0, InputTypeError, "d_model must be a positive integer, got 4.0"),
    ("8", InputTypeError, "d_model must be a positive integer, got '8'"),
    (None, InputTypeError, "d_model must be a positive integer, got None"),
    (2**21, InputError, "d_model must be at most"),
]

BASE_CASES = [
    (0.0, InputError, "base must be finite and > 0, got 0.0"),
    (-10.0, InputError, "base must be finite and > 0, got -10.0"),
    (np.inf, InputError, "base must be finite, got inf"),
    (np.nan, InputError, "base must be finite, got nan"),
    ("10000", InputTypeError, "base must be a real number, got '10000'"),
    (False, InputTypeError, "base must be a real number, got False"),
]

FUNCTIONS = [
    lambda d=8, **kw: sinusoidal_encoding(10, d, **kw),
    lambda d=8, **kw: reference_encoding(3, d, **kw),
    lambda d=8, **kw: frequencies(d, **kw),
    lambda d=8, **kw: wavelengths(d, **kw),
    lambda d=8, **kw: offset_similarity([1, 2], d, **kw),
    lambda d=8, **kw: relative_rotation(1.0, d, **kw),
    lambda d=8, **kw: uniqueness_report(10, d, **kw),
    lambda d=8, **kw: similarity_matrix(10, d, **kw),
    lambda d=8, **kw: pe_core.nearest_neighbor_distances(10, d, **kw),
    lambda d=8, **kw: pe_core.block_mean_encoding(10, d, 2, **kw),
]


@pytest.mark.parametrize("function", FUNCTIONS)
class TestCommonArguments:
    @pytest.mark.parametrize(("d_model", "error", "message"), D_MODEL_CASES)
    def test_d_model(self, function, d_model, error, message):
        with pytest.raises(error, match=message.replace("(", r"\(").replace("*", r"\*")):
            function(d=d_model)

    @pytest.mark.parametrize(("base", "error", "message"), BASE_CASES)
    def test_base(self, function, base, error, message):
        with pytest.raises(error, match=message):
            function(base=base)

    def test_convention(self, function):
        with pytest.raises(
            InputError,
            match=re.escape(
                f"convention must be one of {', '.join(map(repr, CONVENTIONS))}, got 'bert'"
            ),
        ):
            function(convention="bert")
        with pytest.raises(InputTypeError, match="convention must be one of"):
            function(convention=None)


POSITION_CASES = [
    (-1, InputError, "positions as a count must be >= 0, got -1"),
    (True, InputTypeError, "positions must be an int"),
    (2.5, InputTypeError, "wrap a single position in a list"),
    ("abc", InputTypeError, "positions must be an array of real numbers"),
    (
        [[0, 1], [2, 3]],
        InputError,
        r"positions must be 1-dimensional, got an array of shape \(2, 2\)",
    ),
    ([0, np.nan], InputError, "positions must be finite"),
    ([0, np.inf], InputError, "positions must be finite"),
    ([1, "a"], InputTypeError, "positions must be an array of real numbers"),
    ([[1], [2, 3]], InputTypeError, "positions must be an array of real numbers"),
    ([1 + 2j], InputTypeError, "positions must be an array of real numbers"),
    ([1e300], InputError, r"positions must lie within \+/-2\*\*53"),
    ([2**70], InputError, r"positions must lie within \+/-2\*\*53"),
    ([True, False], InputTypeError, "positions must be an array of real numbers"),
]


class TestPositions:
    @pytest.mark.parametrize(("positions", "error", "message"), POSITION_CASES)
    def test_bad_positions(self, positions, error, message):
        with pytest.raises(error, match=message):
            sinusoidal_encoding(positions, 8)
        with pytest.raises(error, match=message):
            uniqueness_report(positions, 8)

    @pytest.mark.parametrize("positions", [10_000_000, np.array(10_000_000)])
    def test_a_count_makes_one_array_of_positions(self, positions):
        # Fuzz finding (test_fuzz_all_arguments[encoding_columns], 2026-11-28): the largest
        # position was found from a full-size copy of |positions|, so a count of 156,248,892
        # with no column asked for peaked at 2.5 GB, twice the positions.
        import tracemalloc

        tracemalloc.start()
        try:
            pe_core.encoding_columns(positions, 1, [])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1.2 * 8 * 10_000_000

    def test_good_position_forms(self):
        assert sinusoidal_encoding(np.int64(3), 4).shape == (3, 4)
        assert sinusoidal_encoding(np.array(3), 4).shape == (3, 4)
        assert sinusoidal_encoding((0.5, -1), 4).shape == (2, 4)
        assert sinusoidal_encoding([], 4).shape == (0, 4)
        assert sinusoidal_encoding(np.arange(5, dtype=np.uint8), 4).shape == (5, 4)

    def test_memory_budget_refused_before_allocation(self):
        with pytest.raises(InputError, match=r"would hold 8,192,000,000 elements.*2\*\*28"):
            sinusoidal_encoding(1_000_000, 8192)

    @pytest.mark.parametrize(
        "build",
        [
            lambda: range(10**12),
            lambda: range(0, 10**20, 3),
            # A real list one element over the budget: 2 GiB of pointers, built in the test.
            pytest.param(lambda: [0.0] * (2**28 + 1), marks=pytest.mark.slow),
        ],
        ids=["huge0", "huge1", "huge2"],
    )
    def test_huge_sequences_refused_before_conversion(self, build):
        # Issue 18: np.asarray(range(10**12)) raised MemoryError instead of a clear InputError.
        huge = build()
        with pytest.raises(InputError, match=r"positions has [\d,]+ elements, more than"):
            sinusoidal_encoding(huge, 2)
        with pytest.raises(InputError, match=r"offsets has [\d,]+ elements, more than"):
            pe_core.offset_similarity(huge, 2)
        with pytest.raises(InputError, match=r"columns has [\d,]+ elements, more than"):
            pe_core.encoding_columns(3, 2, huge)

    def test_angles_beyond_float64(self):
        with pytest.raises(InputError, match="angles k \\* w_i must stay within 2\\*\\*53"):
            sinusoidal_encoding(10, 8, base=1e-300)


class TestOtherArguments:
    def test_dtype(self):
        with pytest.raises(
            InputError, match="dtype must be one of float64, float32, float16, bfloat16, got int32"
        ):
            sinusoidal_encoding(4, 4, dtype=np.int32)
        with pytest.raises(InputTypeError, match="dtype must be one of"):
            sinusoidal_encoding(4, 4, dtype="float99")

    @pytest.mark.parametrize("dtype", [np.float64, np.complex128, object, np.int8])
    def test_no_columns_of_any_dtype(self, dtype):
        # Found by the fuzz test on Python 3.13: an empty complex array was cast to int with
        # NumPy's ComplexWarning.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            table = pe_core.encoding_columns(6, 8, np.array([], dtype=dtype))
        assert table.shape == (6, 0)

    def test_kind(self):
        with pytest.raises(
            InputError, match="kind must be one of 'cosine', 'dot', 'distance', got 'l1'"
        ):
            offset_similarity([1], 8, kind="l1")

    def test_offsets(self):
        with pytest.raises(InputError, match="offsets must be finite"):
            offset_similarity([np.nan], 8)
        with pytest.raises(InputTypeError, match="offsets must be an array of real numbers"):
            offset_similarity("1", 8)
        with pytest.raises(InputTypeError, match="offset must be a real number, got '1'"):
            relative_rotation("1", 8)
        with pytest.raises(InputError, match="offset must be finite"):
            relative_rotation(np.inf, 8)

    def test_precision(self):
        with pytest.raises(
            InputError,
            match="precision must be one of 'float64', 'float32', 'float16', 'bfloat16', "
            "got 'int8'",
        ):
            uniqueness_report(10, 8, precision="int8")

    @pytest.mark.parametrize("value", [b"a", "a", "<a4", b"f4"])
    def test_bytes_and_numpy_s_deprecated_alias_are_refused_without_a_warning(self, value):
        # NumPy 2 warns on np.dtype("a") (found by the fuzz tier: precision=b"a")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(InputError, match="precision must be one of"):
                pe_core.rope_angle_errors(6, pe_core.rope_frequencies(8), precision=value)
            with pytest.raises(InputError, match="dtype must be one of"):
                pe_core.sinusoidal_encoding(4, 8, dtype=value)

    def test_cosine_similarity_inputs(self):
        with pytest.raises(InputError, match="a must be finite"):
            cosine_similarity([[np.nan, 1.0]])
        with pytest.raises(InputTypeError, match="b must be an array of real numbers"):
            cosine_similarity([[1.0]], [["x"]])


@pytest.mark.parametrize(
    "values", [np.array([1 + 2j, 3.0], dtype=object), [1, 2j], np.array([[0.5, 1j]], dtype=object)]
)
def test_complex_numbers_among_objects_are_refused_not_truncated(values):
    """A deep fuzz run saw NumPy's ComplexWarning: a Python complex in an object array (or a
    list mixing ints and complex) was cast to float64, dropping its imaginary part."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputTypeError, match="positions must be an array of real numbers"):
            sinusoidal_encoding(values, 8)


class TestLoadJson:
    """load_json's refusals, literal (tests/fuzz/test_core.py fuzzes it too)."""

    @pytest.mark.parametrize(
        ("text", "error", "message"),
        [
            (5, InputTypeError, r"text must be JSON text \(str, bytes or bytearray\), got 5"),
            (None, InputTypeError, "text must be JSON text"),
            ("{", InputError, "text is not valid JSON"),
            (b"\xff\xfe\x00", InputError, "text is not valid JSON"),
            ("[" * 101 + "]" * 101, InputError, "text nests arrays and objects more than 100"),
        ],
    )
    def test_bad_text(self, text, error, message):
        with pytest.raises(error, match=message):
            pe_core.load_json(text)

    def test_name(self):
        with pytest.raises(InputError, match="rope_scaling is not valid JSON"):
            pe_core.load_json("{", name="rope_scaling")
