"""Sinusoids: each dimension is a sinusoid of the position, each position a wave over dimensions."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dashboard import compute, figures, state, ui
from dashboard.compute import Config

MAX_DIMS = 12


def render(config: Config) -> None:
    ui.explain(
        "Column 2i holds sin(k·ω_i) and column 2i+1 holds cos(k·ω_i): read down a column and you "
        "see a sinusoid of the position with wavelength 2π/ω_i. The model only ever sees the "
        "values at integer positions (the markers); the curve between them shows the sinusoid "
        "they sample. Read across a row instead (second chart) and each position traces its own "
        "wave over the dimensions, fast on the left and slow on the right: no two positions trace "
        "the same one.",
        r"PE(k, 2i) = \sin\!\left(\frac{k}{\mathrm{base}^{2i/d_{\mathrm{model}}}}\right)",
    )
    _by_position(config)
    _by_dimension(config)


@st.fragment
def _by_position(config: Config) -> None:
    info = compute.column_info(config.d_model, config.base, config.convention)
    dims = [j for j in state.value("dims") if j < config.d_model][:MAX_DIMS]
    dims = dims or state.default_dims(config.d_model)
    st.session_state["dims"] = dims
    left, middle, right = st.columns([3, 1, 1])
    left.multiselect(
        "Dimensions (columns)",
        options=list(range(config.d_model)),
        format_func=lambda j: (
            f"{j} ({info.role[j]} i={info.pair[j]})" if info.role[j] != "zero" else f"{j} (zero)"
        ),
        max_selections=MAX_DIMS,
        key="dims",
        persist_state="session",
    )
    state.clamp("sin_from", 0, max(0, config.n_positions - 2))
    middle.number_input(
        "First position",
        min_value=0,
        max_value=max(0, config.n_positions - 2),
        key="sin_from",
        persist_state="session",
    )
    state.clamp("sin_span", 2, max(2, config.n_positions))
    right.number_input(
        "Positions shown",
        min_value=2,
        max_value=max(2, config.n_positions),
        key="sin_span",
        persist_state="session",
    )
    dims = state.value("dims")
    if not dims:
        st.info("Choose at least one dimension to plot.")
        state.sync_url()
        return
    if config.n_positions < 2:
        st.info("With a single position there is no curve to draw; add positions in the sidebar.")
        state.sync_url()
        return
    fig = compute.figure(
        _position_figure, config, tuple(dims), state.value("sin_from"), state.value("sin_span")
    )
    ui.chart(fig, "sinusoids_position")
    state.sync_url()


def _position_figure(config: Config, dims: tuple[int, ...], first: int, span: int):
    info = compute.column_info(config.d_model, config.base, config.convention)
    data = compute.sinusoid_data(config, dims, first, span)
    labels = [
        f"dim {j} ({info.role[j]}, λ={info.wavelength[j]:.3g})"
        if info.role[j] != "zero"
        else f"dim {j} (zero)"
        for j in dims
    ]
    last = int(data.smooth_positions[-1])
    subtitle = (
        f"positions {first:,}–{last:,}; markers at the integer positions"
        if data.integer_positions.size
        else f"positions {first:,}–{last:,}: too many integer positions to mark "
        f"({last - first + 1:,}); "
        "narrow the range to see the samples"
    )
    return figures.sinusoid_lines(
        data.smooth_positions,
        data.smooth_values,
        data.integer_positions,
        data.integer_values,
        labels=labels,
        title="Value against position, one curve per dimension",
        subtitle=subtitle,
    )


def _parse_positions(text: str, n_positions: int) -> list[int]:
    try:
        values = sorted({int(part) for part in text.replace(";", ",").split(",") if part.strip()})
    except ValueError:
        raise ValueError(
            "positions must be whole numbers separated by commas, e.g. 0, 1, 10, 50"
        ) from None
    if not values:
        raise ValueError("give at least one position, e.g. 0, 1, 10, 50")
    if len(values) > MAX_DIMS:
        raise ValueError(f"at most {MAX_DIMS} positions at a time")
    if values[0] < 0 or values[-1] >= n_positions:
        raise ValueError(f"positions must lie between 0 and {n_positions - 1:,}")
    return values


def _on_positions_text() -> None:
    st.session_state["_at_error"] = ""
    try:
        st.session_state["at"] = _parse_positions(
            st.session_state["_at_text"], st.session_state["L"]
        )
    except ValueError as error:
        st.session_state["_at_error"] = str(error)


@st.fragment
def _by_dimension(config: Config) -> None:
    at = [p for p in state.value("at") if p < config.n_positions] or [0]
    st.session_state["at"] = at
    if "_at_text" not in st.session_state or not st.session_state.get("_at_error"):
        st.session_state["_at_text"] = ", ".join(str(p) for p in at)
    st.text_input(
        "Positions to compare across dimensions",
        key="_at_text",
        on_change=_on_positions_text,
        help=f"Up to {MAX_DIMS} positions from 0 to {config.n_positions - 1:,}, "
        "separated by commas.",
    )
    if st.session_state.get("_at_error"):
        st.warning(f"{st.session_state['_at_error']}; still showing {', '.join(map(str, at))}.")
    ui.chart(compute.figure(_dimension_figure, config, tuple(at)), "sinusoids_dimension")
    state.sync_url()


def _dimension_figure(config: Config, at: tuple[int, ...]):
    info = compute.column_info(config.d_model, config.base, config.convention)
    rows = np.asarray(compute.rows_at(config, at))
    hover = figures.column_labels(
        list(range(config.d_model)),
        info.pair.tolist(),
        info.role.tolist(),
        info.frequency.tolist(),
        info.wavelength.tolist(),
    )
    sin_columns = np.flatnonzero(info.role == "sin")  # in pair order, in every layout
    cos_columns = np.flatnonzero(info.role == "cos")
    return figures.dimension_lines(
        rows[:, sin_columns],
        rows[:, cos_columns],
        positions=list(at),
        sin_hover=[hover[c] for c in sin_columns],
        cos_hover=[hover[c] for c in cos_columns],
    )
