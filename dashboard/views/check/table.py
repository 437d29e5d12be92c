"""The Check page's sinusoidal table, checked: the diagnosis, what the table should equal, its
difference from that, and the pe_core call that rebuilds it (display-sized results)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

import pe_core
from pe_core import files, judgement

#: Rows and columns of the difference heatmap (rows spread over the whole table).
SHOWN_ROWS = 200
SHOWN_COLUMNS = 128


@dataclass(frozen=True)
class Checked:
    """What the view shows for one table (positions in rows, as it was fitted)."""

    #: The judgement every road gives (the command line's too).
    verdict: judgement.TableCheck
    shape: tuple[int, ...]
    n_rows: int
    n_columns: int
    diagnosis: pe_core.Diagnosis
    grid: pe_core.GridIdentification | None
    #: A 3-D encoding (video, volumes), tried when neither a 1-D nor a 2-D one matches.
    grid3d: pe_core.Grid3DIdentification | None
    #: The patches' table (class-token rows left out) when ``grid`` matches, for its images.
    patches: np.ndarray | None
    #: Rows of the table shown in the difference heatmap, and their difference (shown part).
    shown_rows: np.ndarray
    difference: np.ndarray
    largest_difference: float
    reference_words: str
    code: Call | None
    rebuilt_error: float | None


#: Rows compared at a time: the whole table is compared without a second full-size copy.
CHUNK_ROWS = 1024

#: A function of row indices giving those rows of a table (positions in rows).
Rows = Callable[[np.ndarray], np.ndarray]


def check_table(matrix: np.ndarray, written: files.Written | None = None) -> Checked:
    """Check a table (positions in rows or columns) as every road does
    (:func:`pe_core.judgement.check_table`) and build what the page shows of it."""
    verdict = judgement.check_table(matrix, written=written)
    diagnosis, grid, grid3d = verdict.diagnosis, verdict.grid, verdict.grid3d
    found = diagnosis.identification
    values = np.squeeze(np.asarray(matrix, dtype=np.float64))
    values = values.T if found.transposed else values
    n, d = values.shape
    grid_table = None
    if grid is not None and grid.matches:
        grid_table = pe_core.grid_encoding(
            grid.height,
            grid.width,
            d,
            layout=grid.layout,
            base=grid.base,
            extra_tokens=grid.extra_tokens,
            start=grid.start,
            step=grid.step,
        )
    if grid3d is not None and grid3d.matches:
        reference, words, code, rebuilt = _volume(grid3d, d)
    else:
        reference, words = _reference(diagnosis, d, grid, grid_table)
        code, rebuilt = _rebuild_call(diagnosis, n, d, grid, grid_table)
    shown = np.unique(np.linspace(0, n - 1, min(n, SHOWN_ROWS)).round().astype(np.int64))
    return Checked(
        verdict=verdict,
        shape=np.shape(matrix),
        n_rows=n,
        n_columns=d,
        diagnosis=diagnosis,
        grid=grid,
        grid3d=grid3d,
        patches=None if grid_table is None else values[grid.extra_tokens :],
        shown_rows=shown,
        difference=values[shown, :SHOWN_COLUMNS] - reference(shown)[:, :SHOWN_COLUMNS],
        largest_difference=_largest_difference(values, reference),
        reference_words=words,
        code=code,
        rebuilt_error=None if rebuilt is None else _largest_difference(values, rebuilt),
    )


def _volume(found: pe_core.Grid3DIdentification, d: int) -> tuple[Rows, str, Call, Rows]:
    """A 3-D encoding's exact table, its words, the call that rebuilds it and what that gives."""
    keywords = {"layout": found.layout, "base": found.base}
    stored = _rounded_to(found.precision)
    if stored in ("float32", "float16"):
        keywords["dtype"] = stored
    arguments = [repr(tuple(found.shape)), str(d), *(_keyword(*kv) for kv in keywords.items())]
    if tuple(found.step) != (1.0, 1.0, 1.0):
        arguments.append(f"step={tuple(float(s) for s in found.step)!r}")
    exact = pe_core.grid3d_encoding(
        found.shape, d, layout=found.layout, base=found.base, step=found.step
    )
    cast = np.dtype(keywords.get("dtype", np.float64))  # grid3d_encoding rounds once
    return (
        exact.__getitem__,
        f"the {found.layout} 3-D encoding it matches",
        Call("grid3d_encoding", tuple(arguments)),
        lambda chunk: exact[chunk].astype(cast).astype(np.float64),
    )


def _largest_difference(values: np.ndarray, rows: Rows) -> float:
    """``max |values - table|`` with the table built a chunk of rows at a time."""
    largest = 0.0
    for first in range(0, values.shape[0], CHUNK_ROWS):
        chunk = np.arange(first, min(first + CHUNK_ROWS, values.shape[0]))
        largest = max(largest, float(np.max(np.abs(values[chunk] - rows(chunk)), initial=0.0)))
    return largest


def _positions(start: float, step: float, rows: np.ndarray) -> np.ndarray:
    return start + step * np.asarray(rows, dtype=np.float64)


def _reference(diagnosis, d: int, grid, grid_table) -> tuple[Rows, str]:
    """The exact encoding the table should equal (by rows), and what it is, in words."""
    found = diagnosis.identification
    if grid_table is not None:
        return grid_table.__getitem__, f"the {grid.layout} grid encoding it matches"
    if diagnosis.bug is not None and diagnosis.bug.seen_by == "table":
        start, step, base, convention = diagnosis.start, 1, diagnosis.base, "vaswani"
        words = f"the vaswani encoding at base {base:g} it was meant to be"
    elif diagnosis.compute_dtype is not None:
        start, step, base, convention = (
            diagnosis.start,
            found.step,
            diagnosis.base,
            diagnosis.convention,
        )
        words = f"the exact {convention} encoding, base {base:g}"
    else:
        start, step, base, convention = found.start, found.step, found.base, found.convention
        closest = "exact" if found.matches else "closest"
        words = f"the {closest} {convention} encoding, base {base:g}"
    padding = np.asarray(found.padding_rows, dtype=np.int64)

    # A rescaled table (PatchTST's (PE - mean) / (10 std)) is compared as it was rescaled.
    scale, offset = found.scale, found.offset
    if found.rescaled:
        words += f", rescaled as (encoding − {offset:.6g}) / {scale:.6g}"

    def rows(chunk):
        exact = pe_core.sinusoidal_encoding(
            _positions(start, step, chunk), d, base=base, convention=convention
        )
        exact[np.isin(chunk, padding)] = 0.0
        return (exact - offset) / scale if found.rescaled else exact

    return rows, words


def _positions_code(start: float, step: float, n: int) -> str:
    """Code for the positions ``start + step * row`` (steps other than 1 as a ratio when they
    are one: diffusers' ``scale=1000`` on 16 timesteps in [0, 1] is ``200 / 3``)."""
    whole = start == int(start)
    if whole and abs(step) == 1:
        start = int(start)
        if step == 1:
            return f"np.arange({start}, {start + n})"
        return f"np.arange({start}, {start - n}, -1)"
    ratio = Fraction(step).limit_denominator(4096)
    step_code = (
        f"{ratio.numerator} / {ratio.denominator}"
        if ratio.denominator > 1 and ratio.numerator / ratio.denominator == step
        else repr(float(step))
    )
    if start == 0:
        return f"{step_code} * np.arange({n})"
    first = f"{int(start)}" if whole else repr(float(start))
    return f"{first} + {step_code} * np.arange({n})"


def _keyword(name: str, value) -> str:
    return f"{name}={value!r}" if isinstance(value, str) else f"{name}={value:g}"


@dataclass(frozen=True)
class Call:
    """A pe_core call as code: the function, its arguments, and lines to run after it."""

    function: str
    arguments: tuple[str, ...]
    after: tuple[str, ...] = ()

    def text(self, width: int = 80) -> str:
        line = f"table = pe_core.{self.function}({', '.join(self.arguments)})"
        if len(line) > width:  # one argument per line, as ruff formats it
            inner = "".join(f"    {argument},\n" for argument in self.arguments)
            line = f"table = pe_core.{self.function}(\n{inner})"
        return "\n".join([line, *self.after])


def _rounded_to(precision: pe_core.Precision) -> str | None:
    """The format the exact values were rounded to once, if that is the difference."""
    return precision.format if precision.kind is pe_core.PrecisionKind.ROUNDED else None


def _rebuild_call(diagnosis, n: int, d: int, grid, grid_table) -> tuple[Call | None, Rows | None]:
    """Code that rebuilds the table, and what that code returns (by rows, positions in rows)."""
    found = diagnosis.identification
    if grid_table is not None:
        keywords = dict(layout=grid.layout, base=grid.base, extra_tokens=grid.extra_tokens)
        stored = _rounded_to(grid.precision)
        scaled = {}
        if grid.scaled:  # diffusers' base_size / interpolation_scale, SD3's crop
            scaled = {"start": tuple(grid.start), "step": tuple(grid.step)}
        if stored in ("float32", "float16"):
            keywords["dtype"] = stored
        call = Call(
            "grid_encoding",
            (
                str(grid.height),
                str(grid.width),
                str(d),
                *(_keyword(*kv) for kv in keywords.items()),
                *(f"{name}=({a!r}, {b!r})" for name, (a, b) in scaled.items()),
            ),
        )
        cast = np.dtype(keywords.get("dtype", np.float64))  # grid_encoding rounds once, so do we
        return call, lambda chunk: grid_table[chunk].astype(cast).astype(np.float64)
    if diagnosis.bug is not None and diagnosis.bug.seen_by == "table":
        call = Call(
            f"BUGS[{diagnosis.bug.name!r}].wrong_table",
            (_positions_code(diagnosis.start, 1, n), str(d), f"{diagnosis.base:g}"),
        )
        bug, start, base = diagnosis.bug, diagnosis.start, diagnosis.base
        if bug.name == "wrong_axis_slice":  # its rows depend on the whole range of positions
            table = bug.wrong_table(_positions(start, 1, np.arange(n)), d, base)
            return call, table.__getitem__
        return call, lambda chunk: bug.wrong_table(_positions(start, 1, chunk), d, base)
    if diagnosis.compute_dtype is not None:
        keywords = dict(
            compute_dtype=diagnosis.compute_dtype,
            base=diagnosis.base,
            convention=diagnosis.convention,
            formula=diagnosis.formula,
        )
        call = Call(
            "textbook_encoding",
            (
                _positions_code(diagnosis.start, found.step, n),
                str(d),
                *(_keyword(*kv) for kv in keywords.items()),
            ),
        )
        start, step = diagnosis.start, found.step
        printing = _printing(found.precision)
        if printing is not None:
            call = Call(call.function, call.arguments, (_printing_code(printing),))

        def computed(chunk):
            table = pe_core.textbook_encoding(_positions(start, step, chunk), d, **keywords)
            return table if printing is None else printing.round(table)

        return call, computed
    if not found.matches:
        return None, None
    rounding = _rounded_to(found.precision)
    keywords = dict(base=found.base, convention=found.convention)
    if rounding in ("float32", "float16"):
        keywords["dtype"] = rounding
    printing = _printing(found.precision)
    padding = np.asarray(found.padding_rows, dtype=np.int64)
    after = []
    if rounding == "bfloat16":
        after.append('table = pe_core.quantize(table, "bfloat16")')
    if found.padding_rows:
        after.append(f"table[{list(found.padding_rows)}] = 0  # padding rows")
    if found.rescaled:  # PatchTST's normalization, with the scale and offset found
        after.append(f"table = (table - {found.offset!r}) / {found.scale!r}")
    if printing is not None:  # written as decimal text last
        after.append(_printing_code(printing))
    call = Call(
        "sinusoidal_encoding",
        (
            _positions_code(found.start, found.step, n),
            str(d),
            *(_keyword(*kv) for kv in keywords.items()),
        ),
        tuple(after),
    )

    def rows(chunk):  # what the code above does, for these rows
        positions = _positions(found.start, found.step, chunk)
        table = pe_core.sinusoidal_encoding(positions, d, **keywords).astype(np.float64)
        if rounding == "bfloat16":
            table = pe_core.quantize(table, "bfloat16")
        table[np.isin(chunk, padding)] = 0.0
        if found.rescaled:
            table = (table - found.offset) / found.scale
        return table if printing is None else printing.round(table)

    return call, rows


def _printing(precision: pe_core.Precision) -> files.Printing | None:
    """How the table was written as decimal text, if it was."""
    if not precision.printed:
        return None
    return files.Printing(precision.decimals, precision.significant)


def _printing_code(printing: files.Printing) -> str:
    """A line that writes the table as the text was written (and reads it back)."""
    if printing.by_decimals:
        return f"table = table.round({printing.decimals})  # written with {printing.code}"
    digits = printing.significant
    return (
        f'table = np.vectorize(lambda x: float(f"{{x:.{digits}g}}"))(table)  '
        f"# written with {printing.code}"
    )
