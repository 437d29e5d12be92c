"""Two-dimensional sinusoidal encodings of an image's patches, in the layouts vision models use.

A grid of ``height x width`` patches is read row by row (token ``t`` is row ``t // width``,
column ``t % width``, as a flattened ``(H, W)`` feature map is). Each of the two coordinates
gets a quarter of the columns for its sines and a quarter for its cosines, with the
frequencies ``base**(-i/(d/4))``, ``i = 0 .. d/4 - 1``: the "split" convention's at
``d_model/2`` columns, one bank per axis. Libraries differ only in the order of the four
blocks, which is data here (:data:`GRID_LAYOUTS`); ``extra_tokens`` zero rows in front are the
class token that MAE and diffusers prepend.

>>> grid_encoding(2, 3, 8).shape
(6, 8)
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
from pe_core.sinusoidal.identify import Identification, Precision, PrecisionKind, identify_encoding

__all__ = ["GRID_LAYOUTS", "GridIdentification", "GridLayout", "grid_encoding", "identify_grid"]

#: The axes of a grid: "row" is the slow coordinate of the token order (``t // width``),
#: "column" the fast one (``t % width``).
AXES = ("row", "column")


@dataclass(frozen=True)
class GridLayout:
    """The order of a 2-D encoding's four blocks of ``d_model/4`` columns.

    Attributes
    ----------
    name : str
        Key in :data:`GRID_LAYOUTS`.
    blocks : tuple of (axis, role)
        Each block's coordinate ("row" or "column") and function ("sin" or "cos"), in column
        order.
    libraries : tuple of str
        Code that builds it, with the arguments that select this layout.
    note : str
        What to know about it, in one sentence.
    interleaved : bool
        Each axis's sin and cos blocks (adjacent in ``blocks``) share their half of the
        columns column by column, ``sin, cos, sin, cos, ...``, instead of one after the other.
    scaled_by : str
        The code that spaces this layout's coordinates other than 1 apart, and how ("" when
        none is known).
    cropped_by : str
        The code that takes such a table from the middle of a larger one ("" when none is
        known).
    truncates : bool
        A ``d_model`` that is not a multiple of 4 is rounded up to one, and the table cut to
        its first ``d_model`` columns (the column axis, last, loses the columns cut); other
        layouts refuse it.
    """

    name: str
    blocks: tuple[tuple[str, str], ...]
    libraries: tuple[str, ...]
    note: str
    interleaved: bool = False
    scaled_by: str = ""
    cropped_by: str = ""
    truncates: bool = False

    def columns(self, d_model: int, axis: str) -> NDArray[np.int64]:
        """The ``d_model/2`` columns of ``axis``: its sines, then its cosines."""
        quarter = d_model // 4
        start = {block: k * quarter for k, block in enumerate(self.blocks)}
        if self.interleaved:
            first = min(start[axis, "sin"], start[axis, "cos"])
            return np.concatenate([first + 2 * np.arange(quarter) + k for k in (0, 1)])
        return np.concatenate(
            [np.arange(start[axis, role], start[axis, role] + quarter) for role in ("sin", "cos")]
        )

    def describe(self) -> str:
        """The blocks in words: "[sin column | cos column | sin row | cos row]", or
        "[sin, cos row interleaved | sin, cos column interleaved]"."""
        if self.interleaved:
            axes = dict.fromkeys(axis for axis, _ in self.blocks)
            return "[" + " | ".join(f"sin, cos {axis} interleaved" for axis in axes) + "]"
        return "[" + " | ".join(f"{role} {axis}" for axis, role in self.blocks) + "]"


GRID_LAYOUTS: MappingProxyType[str, GridLayout] = MappingProxyType(
    {
        "mae": GridLayout(
            "mae",
            (("column", "sin"), ("column", "cos"), ("row", "sin"), ("row", "cos")),
            (
                "MAE util/pos_embed.py get_2d_sincos_pos_embed",
                "diffusers get_2d_sincos_pos_embed (SD3, PixArt, ...)",
                "transformers ViTMAE (5.24 initialize_weights: its [row | column] table with "
                "the halves swapped to MAE's layout)",
            ),
            "The first half encodes the column (the x or width coordinate), although MAE's code "
            "calls it emb_h: np.meshgrid(grid_w, grid_h) puts the width coordinate first.",
            scaled_by="diffusers get_2d_sincos_pos_embed with base_size and interpolation_scale "
            "(PixArt, Latte, SD3, Hunyuan-DiT): coordinate i of an axis of n patches is "
            "i * base_size / (n * interpolation_scale)",
            cropped_by="diffusers PatchEmbed with pos_embed_max_size (SD3) crops the middle of "
            "its pos_embed_max_size x pos_embed_max_size table",
        ),
        "moco": GridLayout(
            "moco",
            (("row", "sin"), ("row", "cos"), ("column", "sin"), ("column", "cos")),
            (
                "MoCo v3 vits.py build_2d_sincos_position_embedding",
                "timm build_sincos2d_pos_embed(interleave_sin_cos=True)",
            ),
            "The first half encodes the row, the slow coordinate of the token order (MoCo v3's "
            "grid_w, which its 'ij' meshgrid makes the outer one).",
        ),
        "timm": GridLayout(
            "timm",
            (("row", "sin"), ("column", "sin"), ("row", "cos"), ("column", "cos")),
            ("timm build_sincos2d_pos_embed (default, interleave_sin_cos=False)",),
            "All sines first, then all cosines, each the row's block before the column's.",
        ),
        "positional_encodings": GridLayout(
            "positional_encodings",
            (("row", "sin"), ("row", "cos"), ("column", "sin"), ("column", "cos")),
            ("positional-encodings >= 5.1 PositionalEncoding2D (its torch and tf classes alike)",),
            "The first half encodes the first axis of its (batch, x, y, ch) input, the row "
            "when the grid is flattened row by row, with sin and cos interleaved column by "
            "column in each half (up to version 5.0 it wrote [sin | cos] halves: the moco "
            "layout). Channels that are not a multiple of 4 are rounded up and the table cut "
            "to them.",
            interleaved=True,
            truncates=True,
        ),
    }
)


def _check_grid_d_model(d_model: object, grid: GridLayout) -> int:
    d_model = check_positive_int(d_model, "d_model")
    if d_model % 4 and not grid.truncates:
        cut = ", ".join(repr(name) for name, g in GRID_LAYOUTS.items() if g.truncates)
        raise InputError(
            f"d_model must be a multiple of 4 for a 2-D encoding in the {grid.name!r} layout "
            f"(a sin and a cos block per axis; {cut} rounds it up and cuts the table), got "
            f"{d_model}"
        )
    return d_model


def _padded(d_model: int) -> int:
    """``d_model`` rounded up to a multiple of 4, as positional-encodings rounds its channels."""
    return 4 * math.ceil(d_model / 4)


#: Coordinates are exact in float64 up to this magnitude (as positions are).
_MAX_COORDINATE = 2.0**53


def _axis_pair(value: object, name: str) -> tuple[float, float]:
    """A number for both axes, or a (row, column) pair of numbers, as two floats."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise InputError(
                f"{name} must be a number or a (row, column) pair of numbers, got "
                f"{len(value)} values"
            )
        return check_real(value[0], f"{name}[0]"), check_real(value[1], f"{name}[1]")
    number = check_real(value, name)
    return number, number


def grid_encoding(
    height: int,
    width: int,
    d_model: int,
    *,
    layout: str = "mae",
    base: float = 10_000.0,
    extra_tokens: int = 0,
    start: float | tuple[float, float] = 0.0,
    step: float | tuple[float, float] = 1.0,
    dtype: DTypeLike = np.float64,
) -> NDArray[np.floating]:
    """The 2-D sinusoidal encoding of a ``height x width`` grid of patches, row by row.

    Parameters
    ----------
    height, width : int
        Rows and columns of patches, at least 1 each.
    d_model : int
        Columns of the encoding, a positive multiple of 4; any positive number for a layout
        that ``truncates`` (positional-encodings: the table at the next multiple of 4, cut to
        its first ``d_model`` columns).
    layout : str, optional
        A key of :data:`GRID_LAYOUTS`: "mae" (default), "moco", "timm" or
        "positional_encodings".
    base : float, optional
        The base of the frequencies ``base**(-i/(d_model/4))``, finite and > 0 (MAE's and
        timm's ``temperature``).
    extra_tokens : int, optional
        Zero rows in front (MAE's ``cls_token=True`` is 1; diffusers' ``extra_tokens``).
    start, step : float or (float, float), optional
        The coordinate of patch row ``r`` is ``start + step * r``, of patch column ``c`` the
        same with the column's values; a pair gives (row, column). Finite numbers; the default
        is the patch index itself. diffusers' ``base_size`` and ``interpolation_scale`` make
        ``step = base_size / (n * interpolation_scale)`` for an axis of ``n`` patches, and SD3's
        crop of a larger table a ``start`` of ``top * step``.
    dtype : dtype, optional
        float64 (default), float32, float16 or bfloat16: the exact values rounded once.

    Returns
    -------
    ndarray, shape (extra_tokens + height * width, d_model)
        Row ``extra_tokens + r * width + c`` is patch ``(r, c)``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (the message names the argument and the rule) and for a result
        beyond :data:`pe_core.MAX_ELEMENTS` elements.

    Examples
    --------
    >>> table = grid_encoding(2, 3, 8, base=100.0)
    >>> table[4].round(4).tolist()  # row 1, column 1: [sin c | cos c | sin r | cos r]
    [0.8415, 0.1, 0.5403, 0.995, 0.8415, 0.1, 0.5403, 0.995]
    """
    height = check_positive_int(height, "height")
    width = check_positive_int(width, "width")
    grid = GRID_LAYOUTS[check_choice(layout, "layout", tuple(GRID_LAYOUTS))]
    d_model = _check_grid_d_model(d_model, grid)
    base = check_base(base)
    if isinstance(extra_tokens, bool) or not isinstance(extra_tokens, int) or extra_tokens < 0:
        raise InputError(f"extra_tokens must be an integer >= 0, got {describe(extra_tokens)}")
    starts = _axis_pair(start, "start")
    steps = _axis_pair(step, "step")
    resolved = check_output_dtype(dtype)
    n_rows = extra_tokens + height * width
    check_size(n_rows * d_model, f"a grid encoding of {n_rows:,} tokens x {d_model}")
    for k, (axis, size) in enumerate((("row", height), ("column", width))):
        last = starts[k] + steps[k] * (size - 1)
        if not max(abs(starts[k]), abs(last)) <= _MAX_COORDINATE:
            raise InputError(
                f"start and step must keep the {axis} coordinates start + step * index "
                f"(index < {size}) within +/-2**53, got start {starts[k]:g} and step "
                f"{steps[k]:g}"
            )
    padded = _padded(d_model)
    axis_bank = CONVENTIONS["split"].bank(padded // 2, base)  # [sin | cos], base**(-i/(d/4))
    out = np.zeros((n_rows, padded), dtype=np.float64)
    patches = out[extra_tokens:].reshape(height, width, padded)
    for k, (axis, size) in enumerate((("row", height), ("column", width))):
        coordinates = starts[k] + steps[k] * np.arange(size, dtype=np.float64)
        values = sinusoidal_encoding(coordinates, axis_bank)  # (size, d_model/2), exact
        shape = (size, 1, -1) if axis == "row" else (1, size, -1)
        patches[:, :, grid.columns(padded, axis)] = values.reshape(shape)
    return out[:, :d_model].astype(resolved, copy=False)


@dataclass(frozen=True)
class GridIdentification:
    """What explains an (extra tokens + H*W, d_model) table as a 2-D encoding.

    Attributes
    ----------
    matches : bool
        True when a grid, layout and base reproduce every entry up to an explained difference.
    layout : str
        A key of :data:`GRID_LAYOUTS`.
    height, width : int
        The grid (rows and columns of patches).
    base : float
    extra_tokens : int
        Zero rows in front (a class token's slot).
    max_abs_error : float
        Largest absolute difference from :func:`grid_encoding` of the same parameters.
    precision : Precision
        What the difference is, as :attr:`Identification.precision` has it (the less simple
        of the two axes').
    axes : tuple of Identification
        The 1-D identification of the first row of patches (column axis) and of the first
        column (row axis); only the row axis's when the column axis is cut to one column
        (a ``truncates`` layout at 5 channels keeps sin alone of it).
    start, step : tuple of float
        (row, column): patch row ``r`` is at coordinate ``start[0] + step[0] * r``, patch
        column ``c`` at ``start[1] + step[1] * c`` (0 and 1 for the patch index itself).
    d_model : int
        The table's columns (0 for no match); when not a multiple of 4, the layout's table at
        the next multiple of 4 cut to them (``truncated``).
    """

    matches: bool
    layout: str
    height: int
    width: int
    base: float
    extra_tokens: int
    max_abs_error: float
    precision: Precision
    axes: tuple[Identification, ...] = ()
    start: tuple[float, float] = (0.0, 0.0)
    step: tuple[float, float] = (1.0, 1.0)
    d_model: int = 0

    @property
    def truncated(self) -> bool:
        """Whether the table is a layout's at the next multiple of 4, cut to ``d_model``."""
        return self.matches and self.d_model % 4 != 0

    @property
    def scaled(self) -> bool:
        """Whether the coordinates are other than the patch indices (a step or start)."""
        return self.start != (0.0, 0.0) or self.step != (1.0, 1.0)

    def coordinates_words(self) -> str:
        """The coordinates of the rows and columns in words, and the code known to space them
        so; "" when they are the patch indices."""
        if not self.scaled:
            return ""
        sizes = (self.height, self.width)
        axes = []
        for k, axis in enumerate(("row", "column")):
            last = self.start[k] + self.step[k] * (sizes[k] - 1)
            axes.append(
                f"{axis} coordinates {number_words(self.start[k])} to {number_words(last)} in "
                f"steps of {number_words(self.step[k])}"
            )
        words = "; ".join(axes)
        layout = GRID_LAYOUTS[self.layout]
        offsets = [self.start[k] / self.step[k] if self.step[k] else 0.0 for k in range(2)]
        cropped = any(abs(o) > 1e-9 for o in offsets)
        # The whole axis the coordinates were spaced over: the grid itself, or for a middle
        # crop (SD3 takes rows (M - n) // 2 onwards of M) the larger one, 2 * offset + n.
        spans = [round(2 * offsets[k]) + sizes[k] if cropped else sizes[k] for k in range(2)]
        whole = spans[0] if spans[0] == spans[1] else None
        if layout.scaled_by:
            words += f", as {layout.scaled_by}"
            ratios = {number_words(self.step[k] * spans[k]) for k in range(2)}
            if len(ratios) == 1:
                words += f" (here base_size / interpolation_scale = {ratios.pop()})"
        if layout.cropped_by and cropped:
            first = ", ".join(number_words(o) for o in offsets)
            size = f" (here {whole} x {whole})" if whole else ""
            words += (
                f"; the grid starts at patch ({first}) of a larger one, as "
                f"{layout.cropped_by}{size}"
            )
        return words

    def summary(self) -> str:
        """The verdict in one sentence."""
        if not self.matches:
            return (
                "no 2-D layout explains this table: no grid of rows x columns and no block "
                "order reproduces it"
            )
        extra = (
            f" after {self.extra_tokens} zero row{'s' if self.extra_tokens > 1 else ''} "
            "(a class token's slot)"
            if self.extra_tokens
            else ""
        )
        coordinates = f" ({self.coordinates_words()})" if self.scaled else ""
        if self.truncated:
            coordinates += (
                f", cut to its first {self.d_model} of {_padded(self.d_model)} columns (the "
                f"channels rounded up to a multiple of 4, as positional-encodings does)"
            )
        return (
            f"2-D {self.layout} layout {GRID_LAYOUTS[self.layout].describe()}, a grid of "
            f"{self.height} rows x {self.width} columns of patches{extra}, base {self.base:g}"
            f"{coordinates}; largest difference {self.max_abs_error:.2g} "
            f"({self.precision.words})"
        )


def axis_base(found: Identification, columns: int, half: int) -> float | None:
    """The base of an axis's ``[sin | cos]`` block (the "split" convention at ``half``
    columns, of which the table keeps ``columns``) that a 1-D identification found, under
    whichever convention it named; None when it is not one (no match, or other columns)."""
    if not found.matches:
        return None
    split = CONVENTIONS["split"]
    if (found.convention == "split" and columns == half) or not found.base_determined:
        return found.base
    named = CONVENTIONS[found.convention]
    if named.column_layout(columns) != split.column_layout(columns):
        return None
    freqs = named.frequencies(columns, found.base)
    if freqs.size < 2:  # one frequency, w_0 = 1 at every base: nothing to read a base from
        return None
    fitted = freqs[1] ** -(half / 2)  # w_1 = base**(-1/(half/2))
    # The roundest base whose frequencies are those found (a base fitted on a few float32
    # rows of a cut axis is 10,000.0009); the whole table is compared with it afterwards.
    for digits in range(1, 13):
        base = float(f"{fitted:.{digits}g}")
        ours = split.frequencies(half, base)[: freqs.size]
        if np.allclose(ours, freqs, rtol=1e-6 if digits < 12 else 1e-9, atol=0):
            return base
    return None


def round_step(step: float) -> float:
    """The step, or the ratio of small whole numbers it is the float32 value of (diffusers
    divides float32 indices: 8/3 arrives as 2.6666667461)."""
    ratio = Fraction(step).limit_denominator(_DENOMINATORS)
    near = ratio.numerator / ratio.denominator
    return near if abs(near - step) <= _COORDINATE_TOLERANCE * abs(step) else step


def _round_start(found: Identification) -> float:
    """The first coordinate, a whole number of steps when it is one (a crop of a larger grid)."""
    step = round_step(found.step)
    index = found.start / step if step else 0.0
    if abs(index - round(index)) <= _COORDINATE_TOLERANCE * max(1.0, abs(index)):
        return round(index) * step + 0.0
    return found.start


#: Denominators of the ratios a step is snapped to, and how close (relative) it must be.
_DENOMINATORS = 4096
_COORDINATE_TOLERANCE = 1e-6


def within_tolerance(precision: Precision, error: float, largest_coordinate: float) -> bool:
    """Whether ``error`` is what ``precision`` allows at coordinates up to this magnitude (the
    bounds :func:`identify_encoding` names them by)."""
    if precision.kind is PrecisionKind.COMPUTED:
        u = PRECISIONS[precision.format].unit_roundoff
        return error <= 4.0 * u * (largest_coordinate + 1.0) + 4e-15
    if precision.kind is PrecisionKind.ROUNDED:
        return error <= PRECISIONS[precision.format].unit_roundoff * (1 + 1e-9) + 4e-15
    return False


def _periods(values: NDArray[np.float64], columns: NDArray[np.int64], n: int) -> list[int]:
    """Widths ``w`` (divisors of ``n``, 2 <= w <= n/2) at which the column axis's blocks repeat
    every ``w`` rows, as they do in a grid ``w`` patches wide."""
    block = values[:, columns]
    scale = max(float(np.max(np.abs(block), initial=0.0)), 1e-300)
    found = []
    for width in range(2, n // 2 + 1):
        if n % width == 0:
            step = np.max(np.abs(block[width:] - block[:-width]), initial=0.0)
            if step <= 0.02 * scale:  # far above any format's rounding; a real period is 0
                found.append(width)
    return found


def identify_grid(matrix) -> GridIdentification:
    """Find the grid, block layout and base that explain a 2-D encoding table.

    Parameters
    ----------
    matrix : array_like, shape (n_tokens, d_model)
        Tokens in rows, row by row over the grid, after any number of all-zero rows (a class
        token's slot); ``d_model`` a multiple of 4, or at least 3 for a layout that
        ``truncates`` (positional-encodings).

    Returns
    -------
    GridIdentification
        The best explanation; ``matches`` is False when none fits.

    Raises
    ------
    ValueError, TypeError
        As :func:`pe_core.identify_encoding` does for a table that cannot be an encoding.

    Notes
    -----
    For each layout the column axis's blocks repeat with the grid's width; each width that
    divides the token count is tried. The first row of patches, in the column axis's columns,
    is a 1-D encoding of the columns' coordinates (and the first column of patches, in the row
    axis's, of the rows'): :func:`identify_encoding` finds their base, start, step and
    arithmetic; the step is snapped to a ratio of small whole numbers and the start to a whole
    number of steps, and the whole table is then compared with :func:`grid_encoding` of what
    was found, within the difference the axes' precision allows at those coordinates.

    Examples
    --------
    >>> found = identify_grid(grid_encoding(4, 6, 16, layout="timm", extra_tokens=1))
    >>> found.layout, found.height, found.width, found.extra_tokens, found.matches
    ('timm', 4, 6, 1, True)
    """
    given = as_array(matrix, "matrix")
    if given.ndim != 2:
        raise InputError(f"matrix must be 2-D (tokens x d_model), got shape {given.shape}")
    table = as_real_array(given, "matrix")
    check_size(table.size * 4, "identifying this matrix")
    n_rows, d_model = table.shape
    cut = [name for name, g in GRID_LAYOUTS.items() if g.truncates]
    if d_model < 3 or (d_model % 4 and not cut):
        raise InputError(
            f"matrix must have a multiple of 4 columns to be a 2-D encoding (a sin and a cos "
            f"block per axis; at least 3 for a layout cut to its columns), got {d_model}"
        )
    padded = _padded(d_model)
    zero_rows = np.flatnonzero(np.any(table, axis=1))
    extra = int(zero_rows[0]) if zero_rows.size else n_rows
    patches = table[extra:]
    n = patches.shape[0]
    no_match = Precision(PrecisionKind.NO_MATCH)
    best = GridIdentification(False, "mae", 0, 0, 10_000.0, extra, math.inf, no_match)
    for name, grid in GRID_LAYOUTS.items():
        if d_model % 4 and not grid.truncates:
            continue
        # The columns of each axis that the table keeps (all of them at a multiple of 4).
        column_axis, row_axis = (
            np.array([c for c in grid.columns(padded, axis) if c < d_model], dtype=np.int64)
            for axis in ("column", "row")
        )
        if column_axis.size == 0:
            continue
        for width in _periods(patches, column_axis, n):
            height = n // width
            # In the input's own dtype: identify reads the format's rounding from it. An axis
            # cut to one column (sin alone) has no pair to identify: the whole table decides.
            blocks = (patches[:width][:, column_axis], patches[::width][:, row_axis])
            axes = tuple(
                identify_encoding(block.astype(given.dtype)) if block.shape[1] >= 2 else None
                for block in blocks
            )
            known = [a for a in axes if a is not None]
            if not known or not all(a.matches for a in known):
                continue
            bases = {
                axis_base(a, block.shape[1], padded // 2)
                for a, block in zip(axes, blocks, strict=True)
                if a is not None and a.base_determined
            }
            if len(bases) > 1 or None in bases:
                continue
            base = bases.pop() if bases else 10_000.0
            # axes[0] is the column axis (the first row of patches), axes[1] the row axis.
            start = tuple(0.0 if a is None else _round_start(a) for a in axes[::-1])
            step = tuple(1.0 if a is None else round_step(a.step) for a in axes[::-1])
            expected = grid_encoding(
                height, width, d_model, layout=name, base=base, start=start, step=step
            )
            error = float(np.max(np.abs(expected - patches), initial=0.0))
            worst = max(known, key=lambda a: a.precision.rank)  # the less simple story
            largest = max(
                abs(start[k]) + abs(step[k]) * (size - 1) for k, size in enumerate((height, width))
            )
            if error > 1.000001 * max(a.max_abs_error for a in known) + 1e-15 and not (
                within_tolerance(worst.precision, error, largest)
            ):
                continue  # the other patches are not the grid's
            found = GridIdentification(
                True,
                name,
                height,
                width,
                base,
                extra,
                error,
                worst.precision,
                tuple(known),
                start,
                step,
                d_model,
            )
            if not best.matches or (error, height) < (best.max_abs_error, best.height):
                best = found
    return best
