"""Worked example: the formula with numbers substituted, and code that reproduces the matrix."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import pe_core
from dashboard import ui
from dashboard.config import Config
from dashboard.data import column_info, rows_at

EXAMPLE_POSITIONS = 3
EXAMPLE_COLUMNS = 4

#: The worked example reads only the sidebar's parameters.
PARAMS = ()


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"The encoding computed step by step, with its code: {config.summary}."


def render(config: Config) -> None:
    ui.explain(
        "The same numbers a teacher would write on the board: pick a position k and a column, "
        "find its pair i and whether it is a sin or a cos, compute the frequency, multiply, take "
        "the sine or cosine. Then the code below builds the whole matrix you see in the other "
        "views, for the current parameters.",
    )
    info = column_info(config)
    columns = example_columns(info.pair, info.role)
    rows = rows_at(config, tuple(range(min(config.n_positions, EXAMPLE_POSITIONS))))
    # Stacked, not side by side: a formula line needs about 550 px, more than a column at 768.
    _formulas(config, info, columns, rows)
    _table(info, columns, rows)
    _code(config)


def _formulas(config: Config, info, columns: list[int], rows) -> None:
    """Each shown entry with the numbers substituted; each pair's frequency once."""
    convention = pe_core.CONVENTIONS[config.convention]
    st.markdown(
        f"**The formula with base = {config.base_digits}, d_model = {config.d_model}** "
        f"({config.convention}: {convention.layout_text})"
    )
    shown_pairs = set()
    for column in columns:
        i, role, omega = int(info.pair[column]), str(info.role[column]), info.frequency[column]
        if role == "zero":
            st.latex(rf"PE(k, {column}) = 0 \quad \text{{(padding column)}}")
            continue
        if i not in shown_pairs:  # each pair's frequency once, before its columns
            shown_pairs.add(i)
            exponent = convention.exponent_latex(i, config.d_model)
            st.latex(
                rf"\omega_{{{i}}} = {config.base_digits}^{{-{exponent}}} = {omega:.6g}"
                if i
                else rf"\omega_0 = {config.base_digits}^{{0}} = 1"
            )
        for k in range(rows.shape[0]):
            st.latex(
                rf"PE({k}, {column}) = \{role}({k} \times {omega:.6g}) "
                rf"= \{role}({k * omega:.6g}) = {rows[k, column]:.6f}"
            )


def _table(info, columns: list[int], rows) -> None:
    st.markdown("**The same entries, computed by pe_core**")
    header = [
        f"{j} ({info.role[j]} i={info.pair[j]})" if info.role[j] != "zero" else f"{j} (zero)"
        for j in columns
    ]
    table = pd.DataFrame(rows[:, columns], columns=header)
    table.index.name = "k"
    st.dataframe(table.round(6), width="stretch")


def _code(config: Config) -> None:
    convention = pe_core.CONVENTIONS[config.convention]
    st.subheader("Code that reproduces the matrix on screen")
    arguments = (config.n_positions, config.d_model, config.base)
    numpy_tab, torch_tab, core_tab = st.tabs(["NumPy", "PyTorch", "pe_core"])
    numpy_tab.code(convention.numpy_code(*arguments), language="python")
    torch_tab.code(convention.torch_code(*arguments), language="python")
    core_tab.code(
        "import pe_core\n\n"
        f"pe = pe_core.sinusoidal_encoding({config.n_positions}, {config.d_model}, "
        f"base={config.base!r}, convention={config.convention!r})\n",
        language="python",
    )
    ui.matrix_downloads(config)
    st.caption(
        "Each snippet builds all L positions. They use the textbook formula in float64, which "
        "matches pe_core to about 1e-12 up to tens of thousands of positions; pe_core carries the "
        "angles in double precision and stays within 5e-16 of the exact value at any position."
    )


def example_columns(pair, role) -> list[int]:
    """The columns of the first two pairs (their sin and their cos, wherever the layout puts
    them), in column order; a zero column of the layout too, if there is one; at most
    ``EXAMPLE_COLUMNS`` plus that zero column."""
    chosen = [j for j in range(len(pair)) if role[j] != "zero" and pair[j] < 2]
    chosen = sorted(chosen)[:EXAMPLE_COLUMNS]
    zeros = [j for j in range(len(pair)) if role[j] == "zero"]
    return chosen + zeros[:1]
