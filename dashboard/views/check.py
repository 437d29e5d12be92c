"""Check my encoding: upload or paste a table and get its convention, base, positions and
arithmetic, the mistake that made it if it is a known one, what differs, and the code that
rebuilds it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, formatting, params, ui, uploads
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.figures import matrices
from dashboard.view_parts import check_rope

#: Rows and columns of the difference heatmap (rows spread over the whole table).
SHOWN_ROWS = 200
SHOWN_COLUMNS = 128
#: Largest example table built from the sidebar (long enough for float32's angle errors).
EXAMPLE_ROWS = 4096
EXAMPLE_COLUMNS = 512
#: Characters accepted in the paste box (a few hundred rows of a small table). Checked here, not
#: by the box: a box with a limit drops a longer paste in the browser, and the page would only
#: see an empty box.
MAX_PASTE_CHARS = 200_000

#: The examples: a library's arithmetic, and each mistake of the catalogue.
ARITHMETIC_EXAMPLES = {
    "float32 angles": ("float32", "exp", "the textbook formula in float32, as PyTorch computes it"),
    "float16 angles": ("float16", "pow", "keras-hub's formula in float16 (mixed precision)"),
}
BUG_EXAMPLES = {name.replace("_", " "): bug for name, bug in pe_core.BUGS.items()}
EXAMPLE = params.Choice(
    "example",
    "Or try an example",
    "none",
    options=("none", *ARITHMETIC_EXAMPLES, *(k for k in BUG_EXAMPLES if k != "float32 angles")),
    help="A table built from the sidebar's d_model: a library's arithmetic, or one of the usual "
    "mistakes (at base 10,000, where tutorials make them).",
)
KIND = params.Choice(
    "check",
    "What to check",
    "sinusoidal",
    options=("sinusoidal", "RoPE"),
    kind="segmented",
    help="A sinusoidal encoding table, or a rotary encoding's frequencies (inv_freq).",
)
PARAMS = (KIND, EXAMPLE)


@dataclass(frozen=True)
class Checked:
    """What the view shows for one table (positions in rows, as it was fitted)."""

    shape: tuple[int, ...]
    n_rows: int
    n_columns: int
    diagnosis: pe_core.Diagnosis
    grid: pe_core.GridIdentification | None
    #: The patches' table (class-token rows left out) when ``grid`` matches, for its images.
    patches: np.ndarray | None
    #: Rows of the table shown in the difference heatmap, and their difference (shown part).
    shown_rows: np.ndarray
    difference: np.ndarray
    largest_difference: float
    reference_words: str
    code: Call | None
    rebuilt_error: float | None


def SHARED(value) -> tuple[str, ...]:
    """The sidebar's parameters: read only to build an example table."""
    table = value(KIND) == "sinusoidal"
    return ("L", "d", "base", "conv") if table and value(EXAMPLE) != "none" else ()


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    if KIND.value(config) == "RoPE":
        return (
            "Name the rotary encoding behind a model's inv_freq: base, scaling and its "
            "parameters, arithmetic, and where it departs from its config.json."
        )
    return (
        "Name the convention, base, arithmetic and mistake behind an encoding table from your "
        "own code."
    )


def render(config: Config) -> None:
    KIND.widget(config)
    if KIND.value(config) == "RoPE":
        check_rope.render()
        return
    ui.explain(
        "Upload an encoding table from your own code (positions in rows; .npy, or .csv like this "
        "app's download), or paste a few rows. The check finds the convention, base, first "
        "position and direction that explain it, and the arithmetic it was computed in: "
        "rounded once to float32, or computed step by step in float32 or float16 as "
        "libraries do, whose errors grow with the position. If the table is none of these, it "
        f"is compared with {len(pe_core.BUGS)} mistakes people make when they write an "
        "encoding, and the one that made it is named with its fix. A 2-D table of image "
        "patches (MAE, MoCo v3, timm, positional-encodings) is recognised with its grid.",
    )
    source = _source(config)
    if source is None:
        st.info(
            f"Upload a table ({uploads.ACCEPTED}), paste rows, or pick an example to check. "
            "A larger file is refused by your browser, which marks it in the box above, and "
            "never reaches the page."
        )
        return
    label, checked = source
    if checked is None:
        return
    dims = " × ".join(f"{size:,}" for size in checked.shape)
    st.caption(f"{label}: {dims} values.")
    _verdict(checked)
    if checked.grid is not None and checked.grid.matches:
        _grid_image(checked)
    _difference(checked)
    _rebuild(checked)
    _candidates(checked.diagnosis.identification)


def _source(config: Config) -> tuple[str, Checked | None] | None:
    """The table to check: an upload, pasted rows, or an example (in that order)."""
    upload = st.file_uploader(
        f"Encoding table ({uploads.ACCEPTED})",
        # Any type: the browser would refuse another type with a bare "files are not allowed";
        # uploads.load_matrix names the file and the formats it reads instead.
        type=None,
        key="check_upload",
        max_upload_size=uploads.MAX_UPLOAD_MB,
    )
    pasted = st.text_area(
        "…or paste rows (numbers separated by commas or spaces, one position per line; up to "
        f"{MAX_PASTE_CHARS:,} characters)",
        key="check_paste",
        height=100,
    )
    example = EXAMPLE.widget(config)
    try:
        if upload is not None:
            name = ui.escape_markdown(upload.name)
            with st.spinner("Checking the table…"):
                return name, checked_upload(upload.getvalue(), upload.name)
        if len(pasted) > MAX_PASTE_CHARS:
            st.error(
                f"The pasted text has {len(pasted):,} characters, more than the "
                f"{MAX_PASTE_CHARS:,} this box takes: upload the table as a file instead "
                f"({uploads.ACCEPTED})."
            )
            return "", None
        if pasted.strip():
            with st.spinner("Checking the rows…"):
                return "The pasted rows", checked_paste(pasted)
    except uploads.UploadError as error:
        what = ui.escape_markdown(upload.name) if upload is not None else "the pasted rows"
        st.error(f"Cannot read {what}: {ui.escape_markdown(error)}.")
        return "", None
    except pe_core.InputError as error:  # read, but no encoding can have this shape
        st.error(f"Cannot check this table: {ui.escape_markdown(error)}.")
        return "", None
    if example == "none":
        return None
    n, d = min(config.n_positions, EXAMPLE_ROWS), min(config.d_model, EXAMPLE_COLUMNS)
    if min(n, d) < 2:
        st.warning(
            f"An example needs at least 2 positions and d_model ≥ 2 (the sidebar has "
            f"{config.n_positions:,} and {config.d_model}): a table to check has a sin/cos pair."
        )
        return "", None
    return _example_words(example, config, n, d), checked_example(
        example, n, d, config.base, config.convention
    )


def _example_words(example: str, config: Config, n: int, d: int) -> str:
    rows = f"positions 0–{n - 1}, d_model {d}"
    if example in ARITHMETIC_EXAMPLES:
        words = ARITHMETIC_EXAMPLES[example][2]
        return f"Example: {words}, {config.convention}, base {config.base_digits}, {rows}"
    return f"Example: the table made by “{BUG_EXAMPLES[example].title}”, base 10,000, {rows}"


@cached
def checked_upload(data: bytes, name: str) -> Checked:
    """Read an uploaded file or pasted rows and check it (cached on the bytes)."""
    return _check(uploads.load_matrix(name, data))


@cached
def checked_paste(text: str) -> Checked:
    """Read pasted rows and check them (cached on the text)."""
    return _check(uploads.load_pasted(text))


@cached
def checked_example(example: str, n: int, d: int, base: float, convention: str) -> Checked:
    """Build an example table and check it."""
    if example in ARITHMETIC_EXAMPLES:
        fmt, formula, _ = ARITHMETIC_EXAMPLES[example]
        table = pe_core.textbook_encoding(
            n, d, compute_dtype=fmt, base=base, convention=convention, formula=formula
        ).astype(fmt)
    else:
        table = BUG_EXAMPLES[example].wrong_table(np.arange(n), d, 10_000.0)
    return _check(table)


#: Rows compared at a time: the whole table is compared without a second full-size copy.
CHUNK_ROWS = 1024

#: A function of row indices giving those rows of a table (positions in rows).
Rows = Callable[[np.ndarray], np.ndarray]


def _check(matrix: np.ndarray) -> Checked:
    diagnosis = pe_core.diagnose_encoding(matrix)
    found = diagnosis.identification
    values = np.squeeze(np.asarray(matrix, dtype=np.float64))
    values = values.T if found.transposed else values
    n, d = values.shape
    grid = None
    if not found.matches and diagnosis.bug is None:
        # identify_grid takes any width (positional-encodings cuts channels that are not a
        # multiple of 4); a table it cannot read as a grid is not one.
        try:
            grid = pe_core.identify_grid(values)
        except pe_core.InputError:
            grid = None
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
    reference, words = _reference(diagnosis, d, grid, grid_table)
    code, rebuilt = _rebuild_call(diagnosis, n, d, grid, grid_table)
    shown = np.unique(np.linspace(0, n - 1, min(n, SHOWN_ROWS)).round().astype(np.int64))
    return Checked(
        shape=np.shape(matrix),
        n_rows=n,
        n_columns=d,
        diagnosis=diagnosis,
        grid=grid,
        patches=None if grid_table is None else values[grid.extra_tokens :],
        shown_rows=shown,
        difference=values[shown, :SHOWN_COLUMNS] - reference(shown)[:, :SHOWN_COLUMNS],
        largest_difference=_largest_difference(values, reference),
        reference_words=words,
        code=code,
        rebuilt_error=None if rebuilt is None else _largest_difference(values, rebuilt),
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
        return call, lambda chunk: pe_core.textbook_encoding(
            _positions(start, step, chunk), d, **keywords
        )
    if not found.matches:
        return None, None
    rounding = _rounded_to(found.precision)
    keywords = dict(base=found.base, convention=found.convention)
    if rounding in ("float32", "float16"):
        keywords["dtype"] = rounding
    decimals = found.precision.decimals
    padding = np.asarray(found.padding_rows, dtype=np.int64)
    after = []
    if rounding == "bfloat16":
        after.append('table = pe_core.quantize(table, "bfloat16")')
    if decimals is not None:
        after.append(f"table = table.round({decimals})")
    if found.padding_rows:
        after.append(f"table[{list(found.padding_rows)}] = 0  # padding rows")
    if found.rescaled:  # PatchTST's normalization, with the scale and offset found
        after.append(f"table = (table - {found.offset!r}) / {found.scale!r}")
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
        if decimals is not None:
            table = table.round(decimals)
        table[np.isin(chunk, padding)] = 0.0
        return (table - found.offset) / found.scale if found.rescaled else table

    return call, rows


def _verdict(checked: Checked) -> None:
    diagnosis, found = checked.diagnosis, checked.diagnosis.identification
    if found.squeezed_from is not None:
        st.info(
            f"The file holds an array of shape {found.squeezed_from}; its axes of length 1 were "
            "dropped (a buffer like the PyTorch tutorial's (1, L, d_model)) and it was read as "
            "a matrix of positions × columns."
        )
    if found.transposed:
        st.info("The table had positions in its columns; it was transposed before fitting.")
    if checked.grid is not None and checked.grid.matches:
        st.success(f"Identified a 2-D encoding: {checked.grid.summary()}.")
        return
    if found.matches:
        st.success(f"Identified: {found.summary()}.")
        st.markdown(how_sure(found))
    if _harmless_arithmetic(diagnosis, checked.n_rows):
        error = diagnosis.max_abs_error or found.max_abs_error
        st.info(
            f"**Arithmetic: {diagnosis.compute_dtype or 'a small format'}.** "
            + (_sentence(diagnosis.table_words) + " " if diagnosis.arithmetic else "")
            + f"Over this table's {formatting.counted(checked.n_rows, 'position')} that is at "
            f"most {error:.2g}, below float16's rounding of values near 1 "
            f"({ARITHMETIC_MATTERS:.2g}): it does not change what a model sees, and is not a "
            "mistake at this length. The "
            "error grows with the position: compute the table in float64 and cast it once if "
            "the model reads much longer sequences.",
            icon=":material/info:",
        )
    elif diagnosis.bug is not None:
        st.warning(f"**Likely mistake: {diagnosis.bug.title}.**", icon=":material/bug_report:")
        if not found.matches or diagnosis.arithmetic is not None:
            st.markdown(_sentence(diagnosis.table_words))
        st.markdown("**The line that makes it, and the fix:**")
        st.code(
            f"# wrong:\n{diagnosis.bug.wrong_code}\n# fix: {diagnosis.bug.fix}", language="python"
        )
    elif found.matches:
        st.caption("None of the usual mistakes: the table is what the convention computes.")
    else:
        st.warning(diagnosis.summary() + " " + _sentence(found.summary()))
    for note in found.equivalents:
        st.caption("Equally good: " + note + ".")


#: An error of the angles' arithmetic smaller than this is information, not a mistake: float16's
#: rounding of values near 1 (its unit roundoff, 2**-11), which a mixed-precision model applies
#: to the encoding anyway.
ARITHMETIC_MATTERS = pe_core.PRECISIONS["float16"].unit_roundoff


def _harmless_arithmetic(diagnosis: pe_core.Diagnosis, n_rows: int) -> bool:
    """Whether the "mistake" found is a small format's arithmetic whose error, over this table's
    own positions, stays below :data:`ARITHMETIC_MATTERS` (the PyTorch tutorial's, Whisper's and
    fairseq's float32 tables)."""
    if diagnosis.bug is None or diagnosis.bug.name != "float32_angles":
        return False
    error = diagnosis.max_abs_error
    if error is None:
        error = diagnosis.identification.max_abs_error
    return error is not None and error <= ARITHMETIC_MATTERS


def _sentence(text: str) -> str:
    """``text`` as a sentence: its first letter capitalised (only that one), a full stop."""
    return text[:1].upper() + text[1:] + "."


def _grid_image(checked: Checked) -> None:
    """One column of a 2-D table drawn over the grid of patches it encodes."""
    grid = checked.grid
    layout = pe_core.GRID_LAYOUTS[grid.layout]
    d = checked.patches.shape[1]
    first = {axis: int(layout.columns(d, axis)[1 if d > 4 else 0]) for axis in ("row", "column")}
    st.subheader("One column over the grid")
    column = st.number_input(
        f"Column to draw (0–{d - 1}; columns {_ranges(layout.columns(d, 'row'))} encode the "
        f"row, {_ranges(layout.columns(d, 'column'))} the column)",
        min_value=0,
        max_value=d - 1,
        value=first["column"],
        key="check_grid_column",
    )
    image = checked.patches[:, column].reshape(grid.height, grid.width)
    axis = "row" if column in layout.columns(d, "row") else "column"
    st.caption(
        f"Column {column} of the table, one cell a patch ({grid.height} rows × {grid.width} "
        f"columns of patches{_class_rows(grid.extra_tokens)}). It encodes "
        f"the patch's {axis}, so it is constant along each {'row' if axis == 'row' else 'column'}"
        " of patches."
    )
    ui.chart(caching.figure(_grid_figure, image, column), "check_grid")


def _class_rows(count: int) -> str:
    if count == 0:
        return ""
    return (
        "; the class token's row left out" if count == 1 else f"; {count} class-token rows left out"
    )


def _ranges(columns: np.ndarray) -> str:
    """Sorted columns as ranges: "0–7, 16–23"."""
    columns = np.sort(columns)
    breaks = np.flatnonzero(np.diff(columns) != 1)
    starts = np.r_[columns[0], columns[breaks + 1]]
    ends = np.r_[columns[breaks], columns[-1]]
    return ", ".join(f"{a}–{b}" if a != b else f"{a}" for a, b in zip(starts, ends, strict=True))


def _grid_figure(image: np.ndarray, column: int):
    return matrices.matrix_heatmap(
        image,
        rows=list(range(image.shape[0])),
        columns=list(range(image.shape[1])),
        title=f"Column {column} over the grid of patches",
        symmetric_range=1.0,
        height=380,
        row_title="row of patches",
        column_title="column of patches",
    )


def _difference(checked: Checked) -> None:
    n, d = checked.n_rows, checked.n_columns
    rows, columns = len(checked.shown_rows), checked.difference.shape[1]
    shown = f"{rows} of {n:,} rows" if rows < n else f"all {n:,} rows"
    shown += f", {columns} of {d:,} columns" if columns < d else ""
    st.subheader("Table minus what it should be")
    st.caption(
        f"Your table minus {checked.reference_words} ({shown}; row numbers as in the table). "
        f"Largest difference over the whole table: {checked.largest_difference:.3g}."
    )
    figure = caching.figure(
        _difference_figure, checked.difference, tuple(checked.shown_rows.tolist())
    )
    ui.chart(figure, "check_difference")


def _difference_figure(values: np.ndarray, rows: tuple[int, ...]):
    return matrices.matrix_heatmap(
        values,
        rows=[int(r) for r in rows],
        columns=list(range(values.shape[1])),
        title="Difference (table − expected)",
        height=420,
    )


def _rebuild(checked: Checked) -> None:
    if checked.code is None:
        return
    st.subheader("Code that rebuilds it")
    error = checked.rebuilt_error
    agreement = "exactly" if error == 0 else f"to within {error:.2g} per entry"
    st.caption(f"This call returns your table {agreement} (positions in rows).")
    st.code(f"import numpy as np\nimport pe_core\n\n{checked.code.text()}", language="python")


def _candidates(found: pe_core.Identification) -> None:
    with st.expander("Every convention tried"):
        table = pd.DataFrame(
            [
                {
                    "convention": c.convention,
                    "base": c.base,
                    "first position": c.start,
                    "rows": "increasing" if c.step > 0 else "decreasing",
                    "largest |difference|": c.max_abs_error,
                    "the difference is": c.precision.words
                    if c.rows_compared == found.n_positions
                    else f"at least this (compared on {c.rows_compared} rows)",
                }
                for c in found.candidates
            ]
        )
        st.dataframe(table, hide_index=True, width="stretch", height=ui.table_height(len(table)))


def how_sure(found: pe_core.Identification) -> str:
    """How sure the identification is, in words: the difference against the input's own noise."""
    error = f"{found.max_abs_error:.2g}"
    kind, fmt = found.precision.kind, found.precision.format
    if kind is pe_core.PrecisionKind.EXACT:
        return (
            "**How sure:** every entry equals the exact encoding to the last few digits of "
            f"float64 (largest difference {error})."
        )
    if kind is pe_core.PrecisionKind.ROUNDED:
        return (
            f"**How sure:** every value is a {fmt} number and differs from the exact encoding by "
            f"at most {error}, no more than rounding the exact values to {fmt} does: this is "
            f"the exact encoding, stored in {fmt}."
        )
    if kind is pe_core.PrecisionKind.DECIMALS:
        return (
            f"**How sure:** every entry is within half a unit of the last of its "
            f"{found.precision.decimals} decimals of the exact encoding (largest difference "
            f"{error}): the exact encoding, written with that many decimals."
        )
    return (  # computed in a format (a table that matches nothing is not asked about)
        f"**How sure:** the differences grow with the position, up to {error}, as they do when "
        f"the angles k·ω are computed in {fmt} (the position and the frequency rounded to {fmt} "
        f"before they are multiplied): a library's {fmt} arithmetic, not a different encoding. "
        "The exact encoding is the one named."
    )
