"""The RoPE lab's layouts section: the halves (GPT-NeoX, rotate_half) and interleaved (GPT-J)
layouts of the same rotation, one vector rotated under each, and the weight permutation that maps
a checkpoint from one to the other."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, ui
from dashboard.figures import charts, linked

#: The two layouts of a rotary head, in the order the view names them.
LAYOUTS = ("halves", "interleaved")


def pair_columns(rope: pe_core.RotaryEncoding, pair: int) -> tuple[tuple[int, int], ...]:
    """The two columns pair ``pair`` rotates together: in the halves layout, then interleaved."""
    return tuple(rope.bank(layout).layout.pair_columns(pair) for layout in LAYOUTS)


def render(rope: pe_core.RotaryEncoding, chosen: int | None) -> None:
    st.subheader("Two layouts of the same rotation")
    listed = range(min(rope.rotary_dim // 2, 4))
    if chosen is not None and chosen not in listed:
        listed = [*listed, chosen]
    rows = []
    for i in listed:
        halves, interleaved = pair_columns(rope, i)
        rows.append(
            {
                "pair i": f"{i} (clicked)" if i == chosen else str(i),
                "halves (GPT-NeoX, Hugging Face rotate_half)": "columns {} and {}".format(*halves),
                "interleaved (GPT-J, Meta's original)": "columns {} and {}".format(*interleaved),
            }
        )
    st.table(pd.DataFrame(rows).set_index("pair i"))
    shaded, marks = [], []
    if chosen is not None:
        for name, columns in zip(LAYOUTS, pair_columns(rope, chosen), strict=True):
            drawn = [column for column in columns if column < LAYOUT_COLUMNS]
            shaded.extend(drawn)
            if drawn:
                marks.append(f"{' and '.join(map(str, drawn))} ({name})")
    permutation = pe_core.rope_permutation(rope.head_dim, rope.rotary_dim)
    layouts = layout_comparison(rope)
    ui.chart(
        caching.figure_of(
            charts.column_bars,
            {
                "x = 1, 2, 3, …": layouts.x[:LAYOUT_COLUMNS],
                "rotated, halves": layouts.halves[:LAYOUT_COLUMNS],
                "rotated, interleaved": layouts.interleaved[:LAYOUT_COLUMNS],
            },
            title=f"One vector rotated at position {LAYOUT_POSITION} under each layout",
            subtitle=f"first {min(LAYOUT_COLUMNS, rope.head_dim)} of {rope.head_dim} columns; "
            "attention factor included",
            x_title="column",
        ),
        "rope_layouts",
        shapes=linked.column_bands(sorted(set(shaded)), LAYOUT_COLUMNS),
    )
    if shaded:
        st.caption(
            f"Shaded: the columns of pair {chosen}, clicked above, among the first "
            f"{LAYOUT_COLUMNS}: " + "; ".join(marks) + "."
        )
    if np.array_equal(permutation, np.arange(permutation.size)):
        st.caption(
            "Here the two layouts are the same: with one pair they rotate the same two columns "
            f"together (the largest difference is {layouts.difference:.1e})."
        )
    else:
        st.caption(
            "The same x comes out differently: the layouts rotate different pairs of columns "
            "together. After the permutation below they agree: the largest difference between "
            f"interleaved(x)[perm] and halves(x[perm]) is {layouts.difference:.1e}."
        )
    head = ", ".join(str(j) for j in permutation[:12])
    st.markdown(
        f"A checkpoint trained with one layout works in the other after its q and k projection "
        f"rows are permuted within each head: `w_halves = w_interleaved[perm]` with "
        f"`perm = pe_core.rope_permutation({rope.head_dim}, {rope.rotary_dim})` = [{head}"
        + (", …]" if permutation.size > 12 else "]")
        + " (Hugging Face's Llama conversion script does exactly this)."
    )


#: The layouts chart: the first columns of one vector at one position.
LAYOUT_COLUMNS, LAYOUT_POSITION = 16, 3


@dataclass(frozen=True)
class LayoutComparison:
    x: np.ndarray
    halves: np.ndarray
    interleaved: np.ndarray
    difference: float  # max |interleaved(x)[perm] - halves(x[perm])|


def layout_comparison(rope: pe_core.RotaryEncoding) -> LayoutComparison:
    """x = 1, 2, ..., head_dim rotated at LAYOUT_POSITION under both layouts, and the check
    that the weight permutation maps one onto the other."""
    x = np.arange(1.0, rope.head_dim + 1)[None, :]
    perm = pe_core.rope_permutation(rope.head_dim, rope.rotary_dim)
    halves = pe_core.apply_rope(x, [LAYOUT_POSITION], rope, layout="halves")[0]
    interleaved = pe_core.apply_rope(x, [LAYOUT_POSITION], rope, layout="interleaved")[0]
    permuted = pe_core.apply_rope(x[:, perm], [LAYOUT_POSITION], rope, layout="halves")[0]
    difference = float(np.max(np.abs(interleaved[perm] - permuted)))
    return LayoutComparison(x[0], halves, interleaved, difference)
