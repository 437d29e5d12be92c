"""What the Check page shows for a sinusoidal table: the verdict first, then the grid image,
the difference from what it should be, the code that rebuilds it and every convention tried."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, formatting, ui
from dashboard.figures import matrices
from dashboard.views.check.table import Checked


def render(checked: Checked) -> None:
    """The verdict and its evidence, in that order."""
    _verdict(checked)
    if checked.grid is not None and checked.grid.matches:
        _grid_image(checked)
    _difference(checked)
    _rebuild(checked)
    _candidates(checked.diagnosis.identification)


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
    if checked.grid3d is not None and checked.grid3d.matches:
        st.success(f"Identified a 3-D encoding: {checked.grid3d.summary()}.")
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
    elif diagnosis.bug is not None and diagnosis.bug.name == "float32_angles":
        # A library's arithmetic (done on purpose), whose error at this length matters.
        error = diagnosis.max_abs_error or found.max_abs_error
        st.warning(
            f"**Arithmetic: {diagnosis.compute_dtype or found.precision.format}, up to "
            f"{error:.2g} off at this length.** "
            + (_sentence(diagnosis.table_words) + " " if diagnosis.arithmetic else "")
            + (_sentence(diagnosis.on_purpose_words) + " " if diagnosis.formula else "")
            + f"That is more than float16's rounding of values near 1 ({ARITHMETIC_MATTERS:.2g}): "
            "a model that reads these positions sees it. If it matters:",
            icon=":material/warning:",
        )
        st.code(f"# fix: {diagnosis.bug.fix}", language="python")
    elif diagnosis.bug is not None and not diagnosis.likely_mistake:
        # Known code makes this table on purpose (fairseq's positions from padding_idx + 1):
        # both readings are said, and what tells them apart.
        st.info(
            f"**{_sentence(diagnosis.bug.title)}** {_sentence(diagnosis.on_purpose_words)} "
            "It is a mistake only if your code meant otherwise:",
            icon=":material/info:",
        )
        st.code(
            f"# if it is a mistake:\n{diagnosis.bug.wrong_code}\n# fix: {diagnosis.bug.fix}",
            language="python",
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
    """How sure the identification is, in words: the difference against the input's own noise
    (its format's rounding, and the digits it was written with)."""
    error = f"{found.max_abs_error:.2g}"
    precision = found.precision
    kind, fmt = precision.kind, precision.format
    written = precision.printing_words
    if kind is pe_core.PrecisionKind.EXACT:
        return (
            "**How sure:** every entry equals the exact encoding to the last few digits of "
            f"float64 (largest difference {error})."
        )
    if kind is pe_core.PrecisionKind.ROUNDED and precision.printed:
        return (
            f"**How sure:** every value is, to its written digits ({written}), a {fmt} number, "
            f"and differs from the exact encoding by at most {error}: no more than rounding the "
            f"exact values to {fmt} and writing them with {written} does. This is the exact "
            f"encoding, stored in {fmt} and written as text."
        )
    if kind is pe_core.PrecisionKind.ROUNDED:
        return (
            f"**How sure:** every value is a {fmt} number and differs from the exact encoding by "
            f"at most {error}, no more than rounding the exact values to {fmt} does: this is "
            f"the exact encoding, stored in {fmt}."
        )
    if kind is pe_core.PrecisionKind.DECIMALS:
        return (
            f"**How sure:** every entry is within half a unit of its last written digit "
            f"({written}) of the exact encoding (largest difference {error}): the exact "
            f"encoding, written with {written}."
        )
    then = f", then written with {written}" if precision.printed else ""
    return (  # computed in a format (a table that matches nothing is not asked about)
        f"**How sure:** the differences grow with the position, up to {error}, as they do when "
        f"the angles k·ω are computed in {fmt} (the position and the frequency rounded to {fmt} "
        f"before they are multiplied{then}): a library's {fmt} arithmetic, not a different "
        "encoding. The exact encoding is the one named."
    )
