"""Three-dimensional sinusoidal encodings of a volume of tokens (x, y, z), as positional-encodings
``PositionalEncoding3D`` builds them, and their identification.

Each axis gets ``c = 2 * ceil(C / 6)`` columns, the vaswani encoding of its index (sin and cos
interleaved column by column, frequencies ``base**(-i/(c/2))``), in the order x, y, z; the
table is ``3c`` wide (``C`` rounded up to a multiple of 6) and cut to its first ``C`` columns,
so z, written last, loses the columns cut first. Tokens are read as the library's
``(batch, x, y, z, C)`` output flattened: z is the fast index, x the slow one.

>>> grid3d_encoding((2, 3, 4), 12).shape
(24, 12)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import DTypeLike, NDArray

from pe_core._formats import PRECISIONS
from pe_core._validation import (
    _describe,
    as_array,
    as_real_array,
    check_base,
    check_choice,
    check_output_dtype,
    check_positive_int,
    check_size,
)
from pe_core.conventions import CONVENTIONS
from pe_core.encoding import sinusoidal_encoding
from pe_core.errors import InputError
from pe_core.grid import _axis_base, _within
from pe_core.identify import Identification, Precision, PrecisionKind, identify_encoding

__all__ = [
    "GRID3D_LAYOUTS",
    "Grid3DIdentification",
    "Grid3DLayout",
    "grid3d_encoding",
    "identify_grid3d",
]

#: The axes of a volume, slowest of the token order first (the library's x, y, z).
AXES_3D = ("x", "y", "z")


@dataclass(frozen=True)
class Grid3DLayout:
    """How a 3-D encoding shares its columns among the axes x, y and z.

    Attributes
    ----------
    name : str
        Key in :data:`GRID3D_LAYOUTS`.
    libraries : tuple of str
        Code that builds it.
    note : str
        What to know about it, in one sentence.
    """

    name: str
    libraries: tuple[str, ...]
    note: str

    @staticmethod
    def axis_width(d_model: int) -> int:
        """The columns each axis gets: ``2 * ceil(d_model / 6)`` (the library's
        ``int(np.ceil(channels / 6) * 2)``)."""
        return 2 * math.ceil(d_model / 6)

    def columns(self, d_model: int, axis: str) -> NDArray[np.int64]:
        """The columns of ``axis`` that a ``d_model``-wide table keeps, its sines then its
        cosines (in the table they alternate ``sin, cos, sin, cos, ...``); empty for an axis
        cut away."""
        width = self.axis_width(d_model)
        first = AXES_3D.index(axis) * width
        order = np.concatenate([first + np.arange(k, width, 2) for k in (0, 1)])
        return order[order < d_model]

    def describe(self) -> str:
        """The blocks in words: "[sin, cos x interleaved | sin, cos y ... | ... z ...]"."""
        return "[" + " | ".join(f"sin, cos {axis} interleaved" for axis in AXES_3D) + "]"


GRID3D_LAYOUTS: MappingProxyType[str, Grid3DLayout] = MappingProxyType(
    {
        "positional_encodings": Grid3DLayout(
            "positional_encodings",
            ("positional-encodings >= 5.1 PositionalEncoding3D (torch)",),
            "Each of its (batch, x, y, z, ch) input's axes gets 2 * ceil(ch / 6) columns, sin and "
            "cos interleaved, in the order x, y, z; the table is cut to ch columns, so z loses "
            "what is cut (all of it at ch 1 to 4, 7 and 8).",
        ),
    }
)


def _check_shape(shape: object) -> tuple[int, int, int]:
    if not isinstance(shape, (tuple, list)) or len(shape) != 3:
        raise InputError(
            f"shape must be an (x, y, z) tuple of 3 positive integers, got {_describe(shape)}"
        )
    return tuple(check_positive_int(size, f"shape[{k}]") for k, size in enumerate(shape))


def grid3d_encoding(
    shape: tuple[int, int, int],
    d_model: int,
    *,
    layout: str = "positional_encodings",
    base: float = 10_000.0,
    dtype: DTypeLike = np.float64,
) -> NDArray[np.floating]:
    """The 3-D sinusoidal encoding of an ``x * y * z`` volume of tokens, z fastest.

    Parameters
    ----------
    shape : (int, int, int)
        The sizes of the axes x, y and z (the library's input ``(batch, x, y, z, ch)``), at
        least 1 each.
    d_model : int
        Columns of the encoding (the library's ``ch``), any positive integer: the table is
        built at ``6 * ceil(d_model / 6)`` columns and cut to its first ``d_model``.
    layout : str, optional
        A key of :data:`GRID3D_LAYOUTS`: "positional_encodings" (the only one).
    base : float, optional
        The base of each axis's frequencies ``base**(-i/(c/2))``, ``c = 2 * ceil(d_model / 6)``,
        finite and > 0 (the library's 10,000).
    dtype : dtype, optional
        float64 (default), float32, float16 or bfloat16: the exact values rounded once.

    Returns
    -------
    ndarray, shape (x * y * z, d_model)
        Row ``(i * y + j) * z + k`` is token ``(i, j, k)``: the library's output
        ``[0].reshape(-1, d_model)``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (the message names the argument and the rule) and for a result
        beyond :data:`pe_core.MAX_ELEMENTS` elements.

    Notes
    -----
    With ``c = 2 * ceil(d_model / 6)`` and ``w_i = base**(-2i/c)``, token ``(i, j, k)`` has
    columns ``[sin(i w_0), cos(i w_0), ..., sin(j w_0), ..., sin(k w_0), ...]``, each axis
    block the vaswani encoding at ``c`` columns, cut after ``d_model`` columns.

    References
    ----------
    positional-encodings (tatp22/multidim-positional-encoding) ``PositionalEncoding3D``.

    Examples
    --------
    >>> table = grid3d_encoding((2, 2, 2), 6, base=100.0)
    >>> table[7].round(4).tolist()  # token (1, 1, 1): (sin 1, cos 1) for x, y and z
    [0.8415, 0.5403, 0.8415, 0.5403, 0.8415, 0.5403]
    """
    sizes = _check_shape(shape)
    d_model = check_positive_int(d_model, "d_model")
    grid = GRID3D_LAYOUTS[check_choice(layout, "layout", tuple(GRID3D_LAYOUTS))]
    base = check_base(base)
    resolved = check_output_dtype(dtype)
    n_rows = math.prod(sizes)
    check_size(n_rows * d_model, f"a 3-D encoding of {n_rows:,} tokens x {d_model}")
    width = grid.axis_width(d_model)
    axis_bank = CONVENTIONS["vaswani"].bank(width, base)  # interleaved, base**(-i/(c/2))
    out = np.empty((*sizes, 3 * width), dtype=np.float64)
    for k, size in enumerate(sizes):
        values = sinusoidal_encoding(size, axis_bank)  # (size, c), exact
        shape_k = [1, 1, 1, width]
        shape_k[k] = size
        out[..., k * width : (k + 1) * width] = values.reshape(shape_k)
    return out.reshape(n_rows, 3 * width)[:, :d_model].astype(resolved, copy=False)


@dataclass(frozen=True)
class Grid3DIdentification:
    """What explains an (x * y * z, d_model) table as a 3-D encoding.

    Attributes
    ----------
    matches : bool
        True when a volume and base reproduce every entry up to an explained difference.
    layout : str
        A key of :data:`GRID3D_LAYOUTS`.
    shape : (int, int, int)
        The sizes of x, y and z ((0, 0, 0) for no match).
    base : float
        The base (10,000 when ``base_determined`` is False).
    base_determined : bool
        False when no axis of two or more tokens keeps a column of a frequency other than
        ``w_0 = 1``, the same at every base (always at ``d_model`` <= 6).
    d_model : int
        The table's columns.
    max_abs_error : float
        Largest absolute difference from :func:`grid3d_encoding` of the same parameters.
    precision : Precision
        What the difference is (the less simple of the axes').
    axes : tuple of Identification
        The 1-D identification of the line of tokens along each axis that has at least two
        tokens and two columns, in the order x, y, z.
    """

    matches: bool
    layout: str
    shape: tuple[int, int, int]
    base: float
    base_determined: bool
    d_model: int
    max_abs_error: float
    precision: Precision
    axes: tuple[Identification, ...] = ()

    @property
    def axis_width(self) -> int:
        """The columns each axis gets before the cut, ``2 * ceil(d_model / 6)``."""
        return Grid3DLayout.axis_width(self.d_model) if self.d_model else 0

    @property
    def kept(self) -> tuple[int, int, int]:
        """The columns of x, y and z that the table keeps."""
        width = self.axis_width
        return tuple(max(0, min(width, self.d_model - k * width)) for k in range(3))

    @property
    def truncated(self) -> bool:
        """Whether the table is cut (``d_model`` not a multiple of 6)."""
        return self.matches and self.d_model % 6 != 0

    def summary(self) -> str:
        """The verdict in one sentence."""
        if not self.matches:
            return (
                "no 3-D layout explains this table: no volume of x * y * z tokens reproduces it "
                "as positional-encodings' PositionalEncoding3D would"
            )
        x, y, z = self.shape
        width = self.axis_width
        base = (
            f"base {self.base:g}"
            if self.base_determined
            else "any base (only the first frequency, w_0 = 1, varies in this table)"
        )
        channels = f"each axis {width} columns (2 * ceil({self.d_model} / 6))"
        if self.truncated:
            lost = [
                f"{axis} keeps {kept} of {width}" if kept else f"{axis} is cut away"
                for axis, kept in zip(AXES_3D, self.kept, strict=True)
                if kept < width
            ]
            channels += (
                f", cut to its first {self.d_model} of {3 * width} columns ({'; '.join(lost)})"
            )
        absent = [axis for axis, kept in zip(AXES_3D, self.kept, strict=True) if kept == 0]
        if absent and self.shape[AXES_3D.index(absent[0])] > 1:
            channels += f"; the size of {' and '.join(absent)} is read from the repeated rows"
        return (
            f"3-D {self.layout} layout {GRID3D_LAYOUTS[self.layout].describe()}, a volume of "
            f"{x} x {y} x {z} tokens (x, y, z; z fastest), coordinates the indices from 0, "
            f"{base}, "
            f"{channels}; largest difference {self.max_abs_error:.2g} ({self.precision.words})"
        )


def _first_change(block: NDArray[np.float64], limit: int) -> int:
    """The first row before ``limit`` that differs from row 0 (``limit`` when none does)."""
    if block.shape[1] == 0:
        return limit
    scale = max(float(np.max(np.abs(block[:limit]), initial=0.0)), 1e-300)
    changed = np.flatnonzero(np.max(np.abs(block[1:limit] - block[0]), axis=1) > 0.02 * scale)
    return int(changed[0]) + 1 if changed.size else limit


def _sizes(table: NDArray[np.float64], grid: Grid3DLayout) -> tuple[int, int, int] | None:
    """The (x, y, z) that the rows' repetitions imply: x changes every y * z rows, y every z
    (its first pair, ``w_0 = 1``, moves by at least 0.68 from index 0 to 1); None when they do
    not divide the rows."""
    n, d_model = table.shape
    x_columns, y_columns = (grid.columns(d_model, axis) for axis in ("x", "y"))
    yz = _first_change(table[:, x_columns], n)
    z = _first_change(table[:, y_columns], yz)
    if n % yz or yz % z:
        return None
    return n // yz, yz // z, z


def _lone_sine_base(table, sizes, strides, grid: Grid3DLayout) -> float | None:
    """The roundest base that gives an axis's lone ``sin(w_1)`` column (an axis cut to 3
    columns, the others to one pair or none) the value it has at index 1; None when no axis of
    two or more tokens keeps such a column."""
    d_model = table.shape[1]
    width = grid.axis_width(d_model)
    for k, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        column = k * width + 2
        if size < 2 or column >= d_model:
            continue
        value = float(table[stride, column])  # sin(1 * w_1), w_1 = base**(-2/c) < pi/2
        if not 0.0 < value < 1.0:
            return None
        fitted = math.asin(value) ** (-width / 2)
        # Within four float16 roundings (the whole table is compared with the base after).
        tolerance = 4 * 2.0**-11 * value + 1e-12
        for digits in range(1, 13):
            base = float(f"{fitted:.{digits}g}")
            if abs(math.sin(base ** (-2 / width)) - value) <= tolerance:
                return base
        return fitted
    return None


def _rounding(error: float) -> Precision:
    """The simplest rounding (exact, then the narrowest format's) within which ``error`` is."""
    if error <= 4e-15:
        return Precision(PrecisionKind.EXACT)
    for name in ("float32", "float16", "bfloat16"):
        if error <= PRECISIONS[name].unit_roundoff * (1 + 1e-9) + 4e-15:
            return Precision(PrecisionKind.ROUNDED, format=name)
    return Precision(PrecisionKind.NO_MATCH)


def identify_grid3d(matrix) -> Grid3DIdentification:
    """Find the volume and base that explain a 3-D encoding table.

    Parameters
    ----------
    matrix : array_like, shape (x * y * z, d_model), (x, y, z, d_model) or (1, x, y, z, d_model)
        Tokens in rows, z fastest (the library's output, with its batch axis of 1 or without,
        flattened or not); ``d_model`` at least 3 (below that y, z or both are cut away and
        their sizes cannot be told apart).

    Returns
    -------
    Grid3DIdentification
        The explanation; ``matches`` is False when none fits.

    Raises
    ------
    ValueError, TypeError
        For a table that cannot be an encoding (not 2-D or 4-D, not finite, too narrow).

    Notes
    -----
    The sizes come from the rows' repetitions (x's columns change every ``y * z`` rows, y's
    every ``z``), or from a 4-D input's shape; the line of tokens along each axis, in that
    axis's columns, is a 1-D encoding that :func:`identify_encoding` names (base and
    arithmetic), and the whole table is then compared with :func:`grid3d_encoding` of what
    was found, within the difference the axes' precision allows. Coordinates other than the
    indices (a start or a step) are not represented: such a table is no match.

    Examples
    --------
    >>> found = identify_grid3d(grid3d_encoding((2, 3, 4), 16))
    >>> found.shape, found.base, found.kept, found.matches
    ((2, 3, 4), 10000.0, (6, 6, 4), True)
    """
    given = as_array(matrix, "matrix")
    if given.ndim == 5 and given.shape[0] == 1:  # the library's output, batch of one
        given = given[0]
    if given.ndim not in (2, 4):
        raise InputError(
            f"matrix must be 2-D (tokens x d_model), 4-D (x, y, z, d_model) or 5-D with a "
            f"batch of 1 (the library's output; pass one batch element), got shape "
            f"{given.shape}"
        )
    table = as_real_array(given, "matrix")
    check_size(table.size * 4, "identifying this matrix")
    shape = given.shape[:3] if given.ndim == 4 else None
    d_model = given.shape[-1]
    if d_model < 3:
        raise InputError(
            f"matrix must have at least 3 columns to be a 3-D encoding (with fewer, y and z are "
            f"both cut away and their sizes cannot be told apart), got {d_model}"
        )
    table = table.reshape(-1, d_model)
    n = table.shape[0]
    name = "positional_encodings"
    grid = GRID3D_LAYOUTS[name]
    no_match = Grid3DIdentification(
        False,
        name,
        (0, 0, 0),
        10_000.0,
        False,
        d_model,
        math.inf,
        Precision(PrecisionKind.NO_MATCH),
    )
    sizes = shape if shape is not None else (_sizes(table, grid) if n else None)
    if sizes is None or 0 in sizes:
        return no_match
    width = grid.axis_width(d_model)
    strides = (sizes[1] * sizes[2], sizes[2], 1)
    known, bases = [], []  # (pairs, base) of each axis that tells the base
    for axis, size, stride in zip(AXES_3D, sizes, strides, strict=True):
        # The axis's whole sin/cos pairs, [sins | cos]: a lone sine left by the cut would read
        # as another convention's odd width; the whole-table comparison checks it.
        pairs = grid.columns(d_model, axis).size // 2
        first = AXES_3D.index(axis) * width
        columns = np.concatenate([first + 2 * np.arange(pairs) + k for k in (0, 1)])
        if size < 2 or pairs == 0:
            continue
        line = table[: size * stride : stride][:, columns]
        found = identify_encoding(line.astype(given.dtype))  # its rounding read from its dtype
        if not found.matches:
            return no_match
        known.append(found)
        if found.base_determined and pairs > 1:
            bases.append((pairs, _axis_base(found, columns.size, width)))
    # The base of the axis with the most pairs (a cut axis's few pairs, in float16, snap to a
    # base of their own: 464**1.5 = 9,995); the whole table is compared with it below.
    determined = bool(bases)
    base = max(bases, key=lambda pair: pair[0])[1] if determined else 10_000.0
    if not determined:  # one whole pair per axis, but a lone sin(w_1) column can tell it
        lone = _lone_sine_base(table, sizes, strides, grid)
        determined, base = lone is not None, 10_000.0 if lone is None else lone
    if base is None:
        return no_match
    expected = grid3d_encoding(sizes, d_model, base=base)
    error = float(np.max(np.abs(expected - table), initial=0.0))
    if known:
        worst = max(known, key=lambda a: a.precision.rank).precision
        largest = float(max(sizes) - 1)
        if error > 1.000001 * max(a.max_abs_error for a in known) + 1e-15 and not _within(
            worst, error, largest
        ):
            # A line fitted at a base a hair off the round one reads as a rounding; at the round
            # base the other columns show the angles' arithmetic in that format (the library's
            # float32 inv_freq times the index).
            computed = Precision(PrecisionKind.COMPUTED, format=worst.format)
            if worst.kind is not PrecisionKind.ROUNDED or not _within(computed, error, largest):
                return no_match
            worst = computed
    else:  # no line of two tokens with a whole pair: the table is a few constant columns
        worst = _rounding(error)
        if not worst.explained:
            return no_match
    return Grid3DIdentification(
        True, name, sizes, base, determined, d_model, error, worst, tuple(known)
    )
