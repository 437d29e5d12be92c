"""Every argument check of :mod:`pe_core`, in one place.

Every check raises :class:`~pe_core.errors.InputTypeError` (a ``TypeError``) for a value of the
wrong kind and :class:`~pe_core.errors.InputError` (a ``ValueError``) for a value of the right
kind that breaks a rule, with a message that names the argument, echoes the value and
states the rule. This is the numerics layer: it imports no encoding family (the sinusoidal wing's
``resolve_bank`` builds a convention's bank, then :func:`check_positions_for` checks positions
whose angles float64 can carry).
"""

from __future__ import annotations

import json
import math
import numbers
import operator
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

if TYPE_CHECKING:
    from pe_core.bank import FrequencyBank

from pe_core._numerics.formats import PRECISIONS, FloatFormat, round_to_precision
from pe_core.errors import InputError, InputTypeError

#: Largest number of elements any single result (or intermediate) may hold: 2**28 elements,
#: 2 GiB as float64. Larger requests are refused before anything is allocated.
MAX_ELEMENTS = 2**28

#: Largest d_model: far beyond any model, and small enough that per-column work stays cheap.
MAX_D_MODEL = 2**20

#: Largest magnitude of a position (or offset): beyond 2**53 consecutive integers are no longer
#: distinct float64 numbers, so "position k" would not mean one position.
MAX_POSITION = 2.0**53


def describe(value: object) -> str:
    """Short repr of an offending value for an error message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_d_model(d_model: object) -> int:
    """Return ``d_model`` as an int, or raise if it is not a positive integer."""
    if isinstance(d_model, (bool, np.bool_)) or not isinstance(d_model, numbers.Integral):
        raise InputTypeError(f"d_model must be a positive integer, got {describe(d_model)}")
    d_model = operator.index(d_model)
    if d_model < 1:
        raise InputError(f"d_model must be a positive integer, got {d_model}")
    if d_model > MAX_D_MODEL:
        raise InputError(f"d_model must be at most 2**20 (= {MAX_D_MODEL}), got {d_model}")
    return d_model


def check_real(value: object, name: str) -> float:
    """Return a finite real scalar as float, or raise naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{name} must be a real number, got {describe(value)}")
    try:
        value = float(value)
    except OverflowError:  # e.g. 10**400: a real number, but not a float64
        raise InputError(f"{name} must be finite in float64, got {describe(value)}") from None
    if not math.isfinite(value):
        raise InputError(f"{name} must be finite, got {value}")
    return value


#: Bounds on the base: 1/base and 2*pi*base must stay finite in float64.
MIN_BASE, MAX_BASE = 1e-300, 1e300


def check_base(base: object) -> float:
    """Return ``base`` as float, or raise if it is not finite and > 0 (within 1e-300 .. 1e300)."""
    base = check_real(base, "base")
    if base <= 0:
        raise InputError(f"base must be finite and > 0, got {base}")
    if not MIN_BASE <= base <= MAX_BASE:
        raise InputError(
            f"base must lie between 1e-300 and 1e300 so that its frequencies and wavelengths "
            f"are finite, got {base:g}"
        )
    return base


def check_choice(value: object, name: str, choices) -> str:
    """Return ``value`` if it is one of ``choices`` (strings), else raise listing them."""
    valid = ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise InputTypeError(f"{name} must be one of {valid}, got {describe(value)}")
    if value not in choices:
        raise InputError(f"{name} must be one of {valid}, got {describe(value)}")
    return value


def check_size(n_elements: int, what: str) -> None:
    """Refuse a request whose result would hold more than :data:`MAX_ELEMENTS` elements."""
    if n_elements > MAX_ELEMENTS:
        raise InputError(
            f"{what} would hold {n_elements:,} elements, more than the memory budget of "
            f"{MAX_ELEMENTS:,} (2**28) elements; ask for fewer positions or a smaller d_model"
        )


def _declared_length(values: object) -> int | None:
    """The length a sequence declares without being converted (a range of 10**20 included)."""
    if isinstance(values, range):
        return max(0, -(-(values.stop - values.start) // values.step))
    if isinstance(values, np.ndarray) or not hasattr(values, "__len__"):
        return None
    try:
        return len(values)
    except (TypeError, OverflowError):
        return None


def as_array(values: ArrayLike, name: str) -> np.ndarray:
    """``np.asarray(values)``, refusing before conversion a sequence longer than the memory
    budget (``range(10**12)`` would otherwise raise MemoryError), and naming ``name`` in every
    error."""
    length = _declared_length(values)
    if length is not None and length > MAX_ELEMENTS:
        raise InputError(
            f"{name} has {length:,} elements, more than the memory budget of {MAX_ELEMENTS:,} "
            f"(2**28) elements"
        )
    try:
        return np.asarray(values)
    except (ValueError, TypeError) as error:  # ragged nested lists and the like
        raise InputTypeError(
            f"{name} must be an array of real numbers, got {describe(values)} ({error})"
        ) from None
    except MemoryError:  # e.g. nested sequences whose total size is beyond this machine
        raise InputError(
            f"{name} is too large to convert to an array (more than this machine's memory); "
            f"the memory budget is {MAX_ELEMENTS:,} (2**28) elements"
        ) from None


def as_real_array(values: ArrayLike, name: str, *, ndim: int | None = None) -> NDArray[np.float64]:
    """Convert an array-like of finite real numbers to float64, or raise naming ``name``."""
    if isinstance(values, (str, bytes)):
        raise InputTypeError(f"{name} must be an array of real numbers, got {describe(values)}")
    array = as_array(values, name)
    if array.dtype.kind == "O":  # e.g. Python ints too large for int64
        try:
            with np.errstate(over="ignore"), warnings.catch_warnings():  # long doubles: inf
                # A Python complex among the objects would lose its imaginary part silently.
                warnings.simplefilter("error", np.exceptions.ComplexWarning)
                array = array.astype(np.float64)
        except np.exceptions.ComplexWarning:
            raise InputTypeError(
                f"{name} must be an array of real numbers, got complex values in {describe(values)}"
            ) from None
        except OverflowError:
            raise InputError(
                f"{name} must be finite in float64 (no numbers beyond 1.8e308), "
                f"got {describe(values)}"
            ) from None
        except (ValueError, TypeError):
            raise InputTypeError(
                f"{name} must be an array of real numbers, got {describe(values)}"
            ) from None
    elif array.dtype == np.bool_ or array.dtype.kind not in "iuf":
        raise InputTypeError(
            f"{name} must be an array of real numbers (not {array.dtype}), got {describe(values)}"
        )
    if ndim is not None and array.ndim != ndim:
        raise InputError(f"{name} must be {ndim}-dimensional, got an array of shape {array.shape}")
    with np.errstate(over="ignore"):  # long doubles beyond float64 become inf, refused below
        array = array.astype(np.float64, copy=False)
    if not np.all(np.isfinite(array)):
        raise InputError(f"{name} must be finite (no NaN or inf), got {describe(values)}")
    return array


@dataclass(frozen=True)
class Positions:
    """Validated positions: their values, and whether they are ``start + step * arange(n)``
    with integer ``start`` and ``step`` (the case the fast exact algorithms use)."""

    values: NDArray[np.float64]
    start: int | None = None
    step: int | None = None

    @property
    def n(self) -> int:
        return self.values.shape[0]

    @property
    def is_progression(self) -> bool:
        return self.step is not None

    @property
    def max_abs(self) -> float:
        # From the two extremes: np.abs would copy the whole array (1.25 GB more for the
        # largest count a fuzz test drew, 2026-11-28).
        return _max_abs(self.values) if self.n else 0.0


def check_positions(positions: object, name: str = "positions") -> Positions:
    """Validate ``positions``: an int ``L`` (meaning ``0..L-1``) or a 1-D array-like of reals."""
    if isinstance(positions, (bool, np.bool_)):
        raise InputTypeError(
            f"{name} must be an int (the number of positions) or a 1-D array of positions, "
            f"got {positions!r}"
        )
    if isinstance(positions, numbers.Integral) or (
        isinstance(positions, np.ndarray) and positions.ndim == 0 and positions.dtype.kind in "iu"
    ):
        length = operator.index(positions)
        if length < 0:
            raise InputError(f"{name} as a count must be >= 0, got {length}")
        check_size(length, f"{name}={length}")
        return Positions(np.arange(length, dtype=np.float64), start=0, step=1)
    if isinstance(positions, numbers.Number) or (
        isinstance(positions, np.ndarray) and positions.ndim == 0
    ):
        raise InputTypeError(
            f"{name} must be an int (the number of positions) or a 1-D array of positions, "
            f"got {describe(positions)}; wrap a single position in a list: [{positions}]"
        )
    values = as_real_array(positions, name, ndim=1)
    if values.size and _max_abs(values) > MAX_POSITION:
        raise InputError(
            f"{name} must lie within +/-2**53 (= {MAX_POSITION:.0f}) so that each one is exact in "
            f"float64, got a position of magnitude {_max_abs(values):.6g}"
        )
    return Positions(values, *_integer_progression(values))


def _max_abs(values: NDArray[np.float64]) -> float:
    """``max(|values|)`` of a non-empty finite array, without a full-size copy of ``|values|``."""
    return float(max(abs(values.min()), abs(values.max())))


def _integer_progression(values: NDArray[np.float64]) -> tuple[int | None, int | None]:
    """``(start, step)`` if ``values == start + step * arange(n)`` with integer start and step."""
    if values.size == 0:
        return None, None
    start = values[0]
    step = values[1] - values[0] if values.size > 1 else 1.0
    if start != math.floor(start) or step != math.floor(step):
        return None, None
    # Equal integer differences from an integer start: every value is start + step * j exactly
    # (sums of integers below 2**53 are exact in float64).
    if values.size > 2 and not np.all(np.diff(values) == step):
        return None, None
    return int(start), int(step)


def check_angles(positions: Positions, freqs: NDArray[np.float64]) -> None:
    """Refuse angles ``k * w_i`` beyond 2**53, where float64 cannot tell neighbours apart."""
    if freqs.size == 0:
        return
    largest = max(positions.max_abs, 1.0) * float(np.max(freqs))
    if largest > MAX_POSITION:
        raise InputError(
            f"angles k * w_i must stay within 2**53 (= {MAX_POSITION:.0f}) radians, but positions "
            f"up to {positions.max_abs:.6g} with frequencies up to {np.max(freqs):.6g} reach "
            f"{largest:.6g}; use a base >= 1 or smaller positions"
        )


def check_positions_for(
    bank: FrequencyBank, positions: object, name: str = "positions"
) -> Positions:
    """Positions as :func:`check_positions` accepts them, whose angles float64 can carry."""
    checked = check_positions(positions, name)
    check_angles(checked, bank.frequencies)
    return checked


def _numpy_dtype(value: object) -> np.dtype | None:
    """``np.dtype(value)``, or None for what NumPy refuses, for bytes, and for the alias ``'a'``
    (NumPy 2 warns that it is deprecated; it names bytes, never a float format)."""
    if isinstance(value, bytes | bytearray):
        return None
    if isinstance(value, str) and value.lstrip("<>=|").startswith("a"):
        return None
    try:
        return np.dtype(value)
    except (TypeError, ValueError, SyntaxError):  # SyntaxError: NumPy parses "," with ast
        return None


def check_precision(precision: object, name: str = "precision") -> FloatFormat:
    """Look up a precision by name (or a NumPy/ml_dtypes dtype with one of those names)."""
    if precision is not None and not isinstance(precision, str):
        resolved = _numpy_dtype(precision)  # None: check_choice explains
        if resolved is not None:
            precision = resolved.name
    return PRECISIONS[check_choice(precision, name, tuple(PRECISIONS))]


_OUTPUT_DTYPES = ("float64", "float32", "float16", "bfloat16")


def check_output_dtype(dtype: DTypeLike) -> np.dtype:
    """The requested output dtype (any byte order) if it is one of the four float types."""
    resolved = _numpy_dtype(dtype)
    if resolved is None:
        if isinstance(dtype, str) and dtype == "bfloat16":
            raise InputTypeError(
                "dtype 'bfloat16' is not known to NumPy: pass ml_dtypes.bfloat16 (pip install "
                "ml-dtypes), or use quantize(encoding, 'bfloat16') for float64 values rounded "
                "to bfloat16"
            )
        raise InputTypeError(f"dtype must be one of {', '.join(_OUTPUT_DTYPES)}, got {dtype!r}")
    if resolved.name not in _OUTPUT_DTYPES:
        raise InputError(f"dtype must be one of {', '.join(_OUTPUT_DTYPES)}, got {resolved.name}")
    return resolved


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an int if it is a positive integer (``block_size``), else raise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InputTypeError(f"{name} must be a positive integer, got {describe(value)}")
    value = operator.index(value)
    if value < 1:
        raise InputError(f"{name} must be a positive integer, got {value}")
    return value


def check_length(value: object, name: str) -> int:
    """A length (``max_position_embeddings``, ``seq_len``, a config's count): an integer from 1
    to 2**53; a float with an integral value (as JSON may write it) is accepted."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)):
        raise InputTypeError(f"{name} must be a positive integer, got {describe(value)}")
    if isinstance(value, float) and not value.is_integer():
        raise InputError(f"{name} must be a positive integer, got {value:g}")
    if not 1 <= value <= MAX_POSITION:
        raise InputError(f"{name} must be an integer from 1 to 2**53, got {describe(value)}")
    return int(value)


def check_width(value: object, name: str, low: int = 2) -> int:
    """A head width (or a count of heads) as an int from ``low`` to 2**20."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputTypeError(f"{name} must be an integer >= {low}, got {describe(value)}")
    if not low <= value <= MAX_D_MODEL:
        raise InputError(f"{name} must be an integer from {low} to 2**20, got {value}")
    return int(value)


def check_positive_real(value: object, name: str, *, at_most: float, why: str = "") -> float:
    """A real number in ``(0, at_most]`` (a standard deviation, a slope, a scale); ``why``, if
    given, says in the message what the upper bound protects."""
    value = check_real(value, name)
    if not 0 < value <= at_most:
        mantissa, exponent = f"{at_most:e}".split("e")
        bound = f"{float(mantissa):g}e{int(exponent)}"  # 1e300, 1e6
        reason = f" ({why})" if why else ""
        raise InputError(f"{name} must be > 0 and at most {bound}{reason}, got {value}")
    return value


def check_seed(seed: object, name: str = "seed") -> int:
    """A seed of NumPy's generator: a non-negative integer."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise InputTypeError(f"{name} must be a non-negative integer, got {describe(seed)}")
    if seed < 0:
        raise InputError(f"{name} must be a non-negative integer, got {seed}")
    return int(seed)


def check_columns(columns: object, d_model: int) -> NDArray[np.int64]:
    """Column indices: a 1-D array of integers in ``[0, d_model)``."""
    try:
        wanted = as_array(columns, "columns")
    except TypeError:
        raise InputTypeError(f"columns must be a 1-D array of integers, got {columns!r}") from None
    if wanted.dtype == np.bool_ or wanted.dtype.kind not in "iu" or wanted.ndim != 1:
        if not (wanted.size == 0 and wanted.ndim == 1):
            raise InputTypeError(f"columns must be a 1-D array of integers, got {columns!r}")
        # An empty list is float64 to NumPy (or complex, object...): no columns, of any dtype.
        wanted = np.empty(0, dtype=np.int64)
    if wanted.size and (wanted.min() < 0 or wanted.max() >= d_model):
        raise InputError(
            f"columns must lie in [0, d_model) = [0, {d_model}), "
            f"got {wanted.min()} .. {wanted.max()}"
        )
    return wanted


def check_representable(checked: Positions, freqs, fmt: FloatFormat, cast: str) -> None:
    """Refuse positions (cast "positions", "angles") or angles (cast "angles") that round to inf
    in ``fmt``: their encodings would be NaN."""
    if cast in ("positions", "angles") and checked.max_abs >= fmt.overflow_threshold:
        raise InputError(
            f"positions up to {checked.max_abs:.6g} overflow {fmt.name}: from "
            f"{fmt.overflow_threshold:.6g} on they round to inf (the largest finite {fmt.name} "
            f"number is {fmt.max_finite:.6g}), so with cast={cast!r} their encodings are NaN"
        )
    if cast == "angles" and freqs.size:
        largest = float(np.max(round_to_precision(freqs, fmt.name))) * checked.max_abs
        if largest >= fmt.overflow_threshold:
            raise InputError(
                f"angles k * w_i up to {largest:.6g} overflow {fmt.name} (from "
                f"{fmt.overflow_threshold:.6g} on they round to inf): with cast='angles' the "
                "encodings are NaN"
            )


def as_integer_array(values: ArrayLike, name: str) -> NDArray[np.int64]:
    """A 1-D array-like of whole numbers (offsets, counts) as int64, or raise naming ``name``
    (an int ``n`` is not accepted here: offsets have a sign, so ``range`` says what is meant)."""
    array = as_real_array(values, name)
    if array.ndim != 1:
        raise InputError(f"{name} must be 1-dimensional, got an array of shape {array.shape}")
    if np.any(np.abs(array) > MAX_POSITION):
        raise InputError(f"{name} must lie within +-2**53, got {describe(values)}")
    if np.any(array != np.round(array)):
        raise InputError(f"{name} must be whole numbers, got {describe(values)}")
    return array.astype(np.int64)


#: Deepest nesting of arrays and objects accepted in JSON input (a pasted or linked config.json,
#: a file given to the command line). A real config.json is 2 to 4 levels deep; the limit is the
#: project's own, checked before parsing, so the answer does not depend on the interpreter's
#: recursion limit (Python 3.11's json gives up near 1,000 levels, 3.13's parses far deeper).
MAX_JSON_DEPTH = 100

# A JSON string literal (or an unterminated one, to the end of the text): escapes are skipped
# whole, so an escaped quote does not end it.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)', re.DOTALL)


def _nesting_error(name: str) -> InputError:
    return InputError(
        f"{name} nests arrays and objects more than {MAX_JSON_DEPTH} levels deep (the limit "
        "for JSON input; a config.json has 2 to 4 levels)"
    )


def check_json_text_depth(text: str, name: str) -> None:
    """Raise if the brackets of JSON ``text`` (outside strings) nest deeper than the limit.

    A linear scan without recursion: strings are blanked out, then the running count of open
    brackets is taken with one cumulative sum.
    """
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    outside_strings = _JSON_STRING.sub("", text).encode("utf-8", "surrogatepass")
    codes = np.frombuffer(outside_strings, dtype=np.uint8)
    steps = np.isin(codes, (ord("["), ord("{"))).astype(np.int64)
    steps -= np.isin(codes, (ord("]"), ord("}")))
    if steps.size and np.cumsum(steps).max() > MAX_JSON_DEPTH:
        raise _nesting_error(name)


def check_json_depth(value: object, name: str) -> None:
    """Raise if lists, tuples and mappings in ``value`` nest deeper than the limit.

    Iterative, so that a deep (or self-referencing) structure given from Python is refused
    without recursion.
    """
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth + 1 > MAX_JSON_DEPTH:
            raise _nesting_error(name)
        stack.extend((child, depth + 1) for child in children)


def load_json(text: str | bytes | bytearray, *, name: str = "text") -> object:
    """Parse JSON text, refusing nesting deeper than :data:`MAX_JSON_DEPTH` before parsing.

    Parameters
    ----------
    text : str, bytes or bytearray
        The JSON document (bytes in UTF-8, -16 or -32, as :func:`json.loads` reads them).
    name : str, optional
        What the text is, for error messages (``rope_from_config`` says ``"config"``).

    Returns
    -------
    object
        What :func:`json.loads` returns.

    Raises
    ------
    InputError
        If the text is not valid JSON, or nests arrays and objects more than
        :data:`MAX_JSON_DEPTH` levels deep: the same message on every Python version, whatever
        its recursion limit. :class:`InputTypeError` if it is not text.

    Examples
    --------
    >>> load_json('{"rope_theta": 500000.0}')
    {'rope_theta': 500000.0}
    >>> load_json("[" * 101 + "]" * 101)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pe_core.errors.InputError: text nests arrays and objects more than 100 levels deep ...
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise InputTypeError(
            f"{name} must be JSON text (str, bytes or bytearray), got {describe(text)}"
        )
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode(json.detect_encoding(text))
        except UnicodeDecodeError as error:
            raise InputError(f"{name} is not valid JSON: {error}") from None
    check_json_text_depth(text, name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{name} is not valid JSON: {error}") from None
