"""Three-dimensional sinusoidal encodings of a volume of tokens (x, y, z), in the layouts of
positional-encodings ``PositionalEncoding3D`` and diffusers ``get_3d_sincos_pos_embed``, and
their identification.

Tokens are read z fastest, x slowest (a ``(x, y, z, C)`` array flattened). Each axis gets a
block of ``c`` columns, a sin/cos bank of its coordinate with frequencies ``base**(-i/(c/2))``;
the layouts differ in the blocks' widths and order and in whether sin and cos alternate
(:data:`GRID3D_LAYOUTS`). positional-encodings gives each axis ``c = 2 * ceil(C / 6)``
columns, interleaved, in the order x, y, z, and cuts the ``3c``-wide table to its first ``C``
columns, so z, written last, loses the columns cut first.

>>> grid3d_encoding((2, 3, 4), 12).shape
(24, 12)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

import numpy as np
from numpy.typing import DTypeLike, NDArray

from pe_core._numerics.checks import (
    as_array,
    as_real_array,
    check_base,
    check_choice,
    check_output_dtype,
    check_positive_int,
    check_real,
    check_size,
    describe,
)
from pe_core._numerics.formats import PRECISIONS
from pe_core._numerics.text import number_words
from pe_core.errors import InputError
from pe_core.sinusoidal.conventions import CONVENTIONS
from pe_core.sinusoidal.encoding import sinusoidal_encoding
from pe_core.sinusoidal.grid import axis_base, round_step, within_tolerance
from pe_core.sinusoidal.identify import Identification, Precision, PrecisionKind, identify_encoding

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
    order : tuple of str
        The axes in column order.
    shares : tuple of Fraction
        Each axis's share of the columns, in ``order``; each axis block is a sin/cos bank with
        frequencies ``base**(-i/(c/2))`` at its ``c`` columns.
    multiple : int
        ``d_model`` is a multiple of this; or, when ``truncates``, is rounded up to one.
    interleaved : bool
        Each axis's sines and cosines alternate column by column (else [sins | cosines]).
    truncates : bool
        A ``d_model`` that is not a ``multiple`` is rounded up and the table cut to it.
    scaled_by : str
        The code that spaces the coordinates other than 1 apart, and how ("" when none).
    axis_words : str
        What x, y and z are in this layout's code.
    """

    name: str
    libraries: tuple[str, ...]
    note: str
    order: tuple[str, str, str] = AXES_3D
    shares: tuple[Fraction, Fraction, Fraction] = (Fraction(1, 3),) * 3
    multiple: int = 6
    interleaved: bool = True
    truncates: bool = True
    scaled_by: str = ""
    axis_words: str = "x, y, z"

    def padded(self, d_model: int) -> int:
        """The columns the table is built at: ``d_model``, rounded up when ``truncates``."""
        return self.multiple * math.ceil(d_model / self.multiple) if self.truncates else d_model

    def blocks(self, d_model: int) -> dict[str, tuple[int, int]]:
        """Each axis's (first column, columns) in the table built at :meth:`padded`."""
        padded, first, out = self.padded(d_model), 0, {}
        for axis, share in zip(self.order, self.shares, strict=True):
            width = int(padded * share)
            out[axis] = (first, width)
            first += width
        return out

    def columns(self, d_model: int, axis: str, *, whole_pairs: bool = False) -> NDArray[np.int64]:
        """The columns of ``axis`` that a ``d_model``-wide table keeps, its sines then its
        cosines; empty for an axis cut away. ``whole_pairs`` leaves out a sine whose cosine
        is cut."""
        first, width = self.blocks(d_model)[axis]
        if self.interleaved:
            kept = max(0, min(width, d_model - first))
            count = kept // 2 if whole_pairs else (kept + 1) // 2
            sines = first + 2 * np.arange(count)
            cosines = first + 1 + 2 * np.arange(kept // 2)
        else:
            sines = first + np.arange(width // 2)
            cosines = sines + width // 2
        return np.concatenate([sines, cosines])

    def kept(self, d_model: int) -> tuple[int, int, int]:
        """The columns of x, y and z that a ``d_model``-wide table keeps."""
        return tuple(self.columns(d_model, axis).size for axis in AXES_3D)

    def check(self, d_model: int) -> None:
        """Raise when this layout cannot have ``d_model`` columns."""
        if d_model % self.multiple and not self.truncates:
            raise InputError(
                f"d_model must be a multiple of {self.multiple} for the {self.name!r} 3-D layout "
                f"(a sin and a cos block per axis at its share of the columns), got {d_model}"
            )

    def widths_words(self, d_model: int) -> str:
        """The axes' columns in words."""
        blocks = self.blocks(d_model)
        if self.truncates:
            return f"each axis {blocks['x'][1]} columns (2 * ceil({d_model} / 6))"
        return ", ".join(f"{axis} {blocks[axis][1]} columns" for axis in self.order)

    def describe(self) -> str:
        """The blocks in words: "[sin, cos x interleaved | ...]" or "[sin x | cos x | ...]"."""
        if self.interleaved:
            return "[" + " | ".join(f"sin, cos {axis} interleaved" for axis in self.order) + "]"
        return "[" + " | ".join(f"sin {a} | cos {a}" for a in self.order) + "]"


GRID3D_LAYOUTS: MappingProxyType[str, Grid3DLayout] = MappingProxyType(
    {
        "positional_encodings": Grid3DLayout(
            "positional_encodings",
            ("positional-encodings >= 5.1 PositionalEncoding3D (torch)",),
            "Each of its (batch, x, y, z, ch) input's axes gets 2 * ceil(ch / 6) columns, sin and "
            "cos interleaved, in the order x, y, z; the table is cut to ch columns, so z loses "
            "what is cut (all of it at ch 1 to 4, 7 and 8).",
        ),
        "diffusers": Grid3DLayout(
            "diffusers",
            ("diffusers get_3d_sincos_pos_embed (CogVideoX)",),
            "Frames x, then rows y and columns z of patches: a quarter of the columns encodes "
            "the frame, then MAE's 2-D layout at the other three quarters (the column z first); "
            "embed_dim a multiple of 16.",
            order=("x", "z", "y"),
            shares=(Fraction(1, 4), Fraction(3, 8), Fraction(3, 8)),
            multiple=16,
            interleaved=False,
            truncates=False,
            scaled_by="diffusers get_3d_sincos_pos_embed divides the frame indices by "
            "temporal_interpolation_scale and the patch indices by spatial_interpolation_scale",
            axis_words="frames x, rows y, columns z",
        ),
    }
)


#: Coordinates are exact in float64 up to this magnitude (as positions are).
_MAX_COORDINATE = 2.0**53


def _steps(step: object) -> tuple[float, float, float]:
    """A number for every axis, or an (x, y, z) triple of numbers, as three floats."""
    if isinstance(step, (tuple, list)):
        if len(step) != 3:
            raise InputError(
                f"step must be a number or an (x, y, z) triple of numbers, got {len(step)} values"
            )
        return tuple(check_real(value, f"step[{k}]") for k, value in enumerate(step))
    value = check_real(step, "step")
    return value, value, value


def _check_shape(shape: object) -> tuple[int, int, int]:
    if not isinstance(shape, (tuple, list)) or len(shape) != 3:
        raise InputError(
            f"shape must be an (x, y, z) tuple of 3 positive integers, got {describe(shape)}"
        )
    return tuple(check_positive_int(size, f"shape[{k}]") for k, size in enumerate(shape))


def grid3d_encoding(
    shape: tuple[int, int, int],
    d_model: int,
    *,
    layout: str = "positional_encodings",
    base: float = 10_000.0,
    step: float | tuple[float, float, float] = 1.0,
    dtype: DTypeLike = np.float64,
) -> NDArray[np.floating]:
    """The 3-D sinusoidal encoding of an ``x * y * z`` volume of tokens, z fastest.

    Parameters
    ----------
    shape : (int, int, int)
        The sizes of the axes x, y and z (the library's input ``(batch, x, y, z, ch)``), at
        least 1 each.
    d_model : int
        Columns of the encoding (the library's ``ch``): for "positional_encodings" any positive
        integer, the table built at ``6 * ceil(d_model / 6)`` columns and cut to its first
        ``d_model``; for "diffusers" a multiple of 16 (its ``embed_dim``).
    layout : str, optional
        A key of :data:`GRID3D_LAYOUTS`: "positional_encodings" (default) or "diffusers"
        (frames x, rows y, columns z: ``get_3d_sincos_pos_embed``'s ``[T, H*W, D]`` table).
    base : float, optional
        The base of each axis's frequencies ``base**(-i/(c/2))`` at its ``c`` columns, finite
        and > 0 (both libraries' 10,000).
    step : float or (float, float, float), optional
        Token ``i`` of an axis is at coordinate ``i * step`` (a number for every axis, or one
        per axis x, y, z); finite. diffusers' ``temporal_interpolation_scale`` ``s`` is a step
        of ``1/s`` on x, its ``spatial_interpolation_scale`` one on y and z.
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
    positional-encodings: with ``c = 2 * ceil(d_model / 6)`` and ``w_i = base**(-2i/c)``,
    token ``(i, j, k)`` has columns ``[sin(i w_0), cos(i w_0), ..., sin(j w_0), ...,
    sin(k w_0), ...]``, each axis block the vaswani encoding at ``c`` columns, cut after
    ``d_model`` columns. diffusers: ``[sin x | cos x]`` at ``d_model/4`` columns, then
    ``[sin z | cos z]`` and ``[sin y | cos y]`` at ``3 d_model/8`` each (the split convention
    per axis).

    References
    ----------
    positional-encodings (tatp22/multidim-positional-encoding) ``PositionalEncoding3D``;
    diffusers ``models/embeddings.py`` ``get_3d_sincos_pos_embed``.

    Examples
    --------
    >>> table = grid3d_encoding((2, 2, 2), 6, base=100.0)
    >>> table[7].round(4).tolist()  # token (1, 1, 1): (sin 1, cos 1) for x, y and z
    [0.8415, 0.5403, 0.8415, 0.5403, 0.8415, 0.5403]
    """
    sizes = _check_shape(shape)
    d_model = check_positive_int(d_model, "d_model")
    grid = GRID3D_LAYOUTS[check_choice(layout, "layout", tuple(GRID3D_LAYOUTS))]
    grid.check(d_model)
    base = check_base(base)
    steps = _steps(step)
    resolved = check_output_dtype(dtype)
    n_rows = math.prod(sizes)
    check_size(n_rows * d_model, f"a 3-D encoding of {n_rows:,} tokens x {d_model}")
    for axis, size, value in zip(AXES_3D, sizes, steps, strict=True):
        if not abs(value) * (size - 1) <= _MAX_COORDINATE:
            raise InputError(
                f"step must keep the {axis} coordinates step * index (index < {size}) within "
                f"+/-2**53, got {value:g}"
            )
    padded = grid.padded(d_model)
    out = np.empty((*sizes, padded), dtype=np.float64)
    convention = "vaswani" if grid.interleaved else "split"
    for k, axis in enumerate(AXES_3D):
        first, width = grid.blocks(d_model)[axis]
        bank = CONVENTIONS[convention].bank(width, base)  # base**(-i/(c/2)) at c columns
        coordinates = steps[k] * np.arange(sizes[k], dtype=np.float64)
        values = sinusoidal_encoding(coordinates, bank)  # (size, c), exact
        shape_k = [1, 1, 1, width]
        shape_k[k] = sizes[k]
        out[..., first : first + width] = values.reshape(shape_k)
    return out.reshape(n_rows, padded)[:, :d_model].astype(resolved, copy=False)


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
    step : (float, float, float)
        Token ``i`` of each axis x, y, z is at coordinate ``i * step`` (1 for the indices).
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
    step: tuple[float, float, float] = (1.0, 1.0, 1.0)

    @property
    def widths(self) -> tuple[int, int, int]:
        """The columns of x, y and z before any cut (0 for no match)."""
        if not self.matches:
            return (0, 0, 0)
        blocks = GRID3D_LAYOUTS[self.layout].blocks(self.d_model)
        return tuple(blocks[axis][1] for axis in AXES_3D)

    @property
    def kept(self) -> tuple[int, int, int]:
        """The columns of x, y and z that the table keeps (0, 0, 0 for no match)."""
        return GRID3D_LAYOUTS[self.layout].kept(self.d_model) if self.matches else (0, 0, 0)

    @property
    def truncated(self) -> bool:
        """Whether the table is cut (a ``truncates`` layout's ``d_model`` rounded up)."""
        return self.matches and GRID3D_LAYOUTS[self.layout].padded(self.d_model) != self.d_model

    @property
    def scaled(self) -> bool:
        """Whether the coordinates are other than the indices."""
        return self.step != (1.0, 1.0, 1.0)

    def summary(self) -> str:
        """The verdict in one sentence."""
        if not self.matches:
            return (
                "no 3-D layout explains this table: no volume of x * y * z tokens reproduces it "
                "as positional-encodings' PositionalEncoding3D would"
            )
        x, y, z = self.shape
        layout = GRID3D_LAYOUTS[self.layout]
        width, padded = self.widths[0], layout.padded(self.d_model)
        base = (
            f"base {self.base:g}"
            if self.base_determined
            else "any base (only the first frequency, w_0 = 1, varies in this table)"
        )
        channels = layout.widths_words(self.d_model)
        if self.truncated:
            lost = [
                f"{axis} keeps {kept} of {width}" if kept else f"{axis} is cut away"
                for axis, kept in zip(AXES_3D, self.kept, strict=True)
                if kept < width
            ]
            channels += f", cut to its first {self.d_model} of {padded} columns ({'; '.join(lost)})"
        absent = [axis for axis, kept in zip(AXES_3D, self.kept, strict=True) if kept == 0]
        if absent and self.shape[AXES_3D.index(absent[0])] > 1:
            channels += f"; the size of {' and '.join(absent)} is read from the repeated rows"
        return (
            f"3-D {self.layout} layout {GRID3D_LAYOUTS[self.layout].describe()}, a volume of "
            f"{x} x {y} x {z} tokens ({layout.axis_words}; z fastest), {self._coordinates()}, "
            f"{base}, {channels}; largest difference {self.max_abs_error:.2g} "
            f"({self.precision.words})"
        )

    def _coordinates(self) -> str:
        """The coordinates in words, and the code known to space them so."""
        if not self.scaled:
            return "coordinates the indices from 0"
        steps = ", ".join(number_words(value) for value in self.step)
        words = f"coordinates the indices times ({steps}) for (x, y, z)"
        layout = GRID3D_LAYOUTS[self.layout]
        if layout.scaled_by:
            scales = ", ".join(number_words(1 / value) if value else "-" for value in self.step)
            words += f" ({layout.scaled_by}: here ({scales}))"
        return words


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
    blocks = grid.blocks(d_model)
    for axis, size, stride in zip(AXES_3D, sizes, strides, strict=True):
        first, width = blocks[axis]
        column = first + 2  # interleaved: sin(w_0), cos(w_0), sin(w_1)
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
        Tokens in rows, z fastest (positional-encodings' output, with its batch axis of 1 or
        without, flattened or not; diffusers' ``[T, H*W, D]`` table flattened); ``d_model`` at
        least 3 (below that y, z or both are cut away and their sizes cannot be told apart).

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
    was found, within the difference the axes' precision allows. Each layout whose column
    count fits is tried. An axis's step is read from its line and snapped to a ratio of small
    whole numbers (diffusers' ``1 / 1.875``); coordinates that do not start at 0 are not
    represented: such a table is no match.

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
    nothing = Precision(PrecisionKind.NO_MATCH)
    no_match = Grid3DIdentification(
        False, "positional_encodings", (0, 0, 0), 10_000.0, False, d_model, math.inf, nothing
    )
    best = no_match
    for grid in GRID3D_LAYOUTS.values():
        if d_model % grid.multiple and not grid.truncates:
            continue
        sizes = shape if shape is not None else (_sizes(table, grid) if n else None)
        if sizes is None or 0 in sizes:
            continue
        found = _identify_as(table, given.dtype, grid, sizes)
        if found is not None and (not best.matches or found.max_abs_error < best.max_abs_error):
            best = found
    return best


def _identify_as(table, dtype, grid: Grid3DLayout, sizes) -> Grid3DIdentification | None:
    """The identification of ``table`` as ``grid``'s layout at these sizes, or None."""
    d_model = table.shape[1]
    strides = (sizes[1] * sizes[2], sizes[2], 1)
    blocks = grid.blocks(d_model)
    known, bases = [], []  # (pairs, base) of each axis that tells the base
    steps = [1.0, 1.0, 1.0]
    for k, (axis, size, stride) in enumerate(zip(AXES_3D, sizes, strides, strict=True)):
        # The axis's whole sin/cos pairs, [sins | cos]: a lone sine left by the cut would read
        # as another convention's odd width; the whole-table comparison checks it.
        columns = grid.columns(d_model, axis, whole_pairs=True)
        pairs = columns.size // 2
        if size < 2 or pairs == 0:
            continue
        line = table[: size * stride : stride][:, columns]
        found = identify_encoding(line.astype(dtype))  # its rounding read from its dtype
        if not found.matches or found.start != 0:
            return None
        known.append(found)
        steps[k] = round_step(found.step)
        if found.base_determined and pairs > 1:
            bases.append((pairs, axis_base(found, columns.size, blocks[axis][1])))
    # The base of the axis with the most pairs (a cut axis's few pairs, in float16, snap to a
    # base of their own: 464**1.5 = 9,995); the whole table is compared with it below.
    determined = bool(bases)
    base = max(bases, key=lambda pair: pair[0])[1] if determined else 10_000.0
    if not determined and grid.truncates:  # a lone sin(w_1) column can tell it
        lone = _lone_sine_base(table, sizes, strides, grid)
        determined, base = lone is not None, 10_000.0 if lone is None else lone
    if base is None:
        return None
    expected = grid3d_encoding(sizes, d_model, layout=grid.name, base=base, step=tuple(steps))
    error = float(np.max(np.abs(expected - table), initial=0.0))
    if known:
        worst = max(known, key=lambda a: a.precision.rank).precision
        largest = max(abs(steps[k]) * (sizes[k] - 1) for k in range(3))
        if error > 1.000001 * max(a.max_abs_error for a in known) + 1e-15 and not within_tolerance(
            worst, error, largest
        ):
            # A line fitted at a base a hair off the round one reads as a rounding; at the round
            # base the other columns show the angles' arithmetic in that format (the library's
            # float32 inv_freq times the index).
            computed = Precision(PrecisionKind.COMPUTED, format=worst.format)
            if worst.kind is not PrecisionKind.ROUNDED:
                return None
            if not within_tolerance(computed, error, largest):
                return None
            worst = computed
    else:  # no line of two tokens with a whole pair: the table is a few constant columns
        worst = _rounding(error)
        if not worst.explained:
            return None
    fields = (tuple(sizes), base, determined, d_model, error, worst, tuple(known), tuple(steps))
    return Grid3DIdentification(True, grid.name, *fields)
