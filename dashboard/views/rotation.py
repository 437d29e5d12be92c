"""Relative position as a rotation: PE(k + offset) = M(offset) @ PE(k) for every k."""

from __future__ import annotations

import numpy as np
import streamlit as st

import pe_core
from dashboard import compute, figures, state, ui
from dashboard.compute import Config

CIRCLE_POINTS = 60


def render(config: Config) -> None:
    ui.explain(
        "Why does the paper pair every sin with a cos? Because then shifting a position by an "
        "offset δ is the same linear map for every position: each (sin, cos) pair turns by the "
        "angle δ·ω_i, a 2×2 rotation. So PE(k+δ) = M(δ)·PE(k) with one matrix M(δ) that does not "
        "depend on k, and a model can learn to attend by relative position.\n\n"
        "It also explains the similarity view: M(δ) is orthogonal, so PE(k)·PE(k+δ) = "
        "Σ cos(δ·ω_i) depends only on δ. Cos is even, so offsets +δ and −δ give the same dot "
        "product: the similarity alone does not say which token comes first. The rotation does: "
        "M(−δ) = M(δ)ᵀ turns each pair the other way, so PE(k+δ) ≠ PE(k−δ), and a learned "
        "linear map of the encodings (attention's query and key projections) can tell before "
        "from after.",
        r"\begin{pmatrix}\sin((k+\delta)\omega_i)\\ \cos((k+\delta)\omega_i)\end{pmatrix} = "
        r"\begin{pmatrix}\cos\delta\omega_i & \sin\delta\omega_i\\ -\sin\delta\omega_i & "
        r"\cos\delta\omega_i\end{pmatrix}"
        r"\begin{pmatrix}\sin k\omega_i\\ \cos k\omega_i\end{pmatrix}",
        expanded=True,
    )
    if not compute.closed_form_holds(config):
        st.warning(
            f"No such matrix exists for odd d_model = {config.d_model} with the "
            f"{config.convention} "
            "convention. Its last column sin(k·ω) has no cos partner, and sin((k+δ)·ω) = "
            "sin(kω)cos(δω) + cos(kω)sin(δω) needs cos(kω), which the encoding does not hold. "
            "Choose an even d_model, or the tensor2tensor convention (its odd column is zero)."
        )
        return
    if compute.n_pairs(config) == 0:
        st.info(
            f"With d_model = {config.d_model} the {config.convention} convention has no sin/cos "
            "pair, only a zero column: M is the 1 × 1 identity and there is nothing to rotate."
        )
        return
    left, right = st.columns(2)
    left.number_input(
        "Offset δ",
        min_value=-float(state.MAX_POSITIONS),
        max_value=float(state.MAX_POSITIONS),
        step=1.0,
        key="rot_offset",
        persist_state="session",
        format="%g",
    )
    state.clamp("rot_k", 0, config.n_positions - 1)
    right.number_input(
        "Position k",
        min_value=0,
        max_value=config.n_positions - 1,
        key="rot_k",
        persist_state="session",
    )
    offset, k = float(state.value("rot_offset")), int(state.value("rot_k"))
    n_pairs = (
        int(compute.column_info(config.d_model, config.base, config.convention).pair.max()) + 1
    )
    if n_pairs > compute.ROTATION_PAIRS:
        state.clamp("rot_first", 0, n_pairs - compute.ROTATION_PAIRS)
        st.number_input(
            f"First pair shown in M (16 of {n_pairs})",
            min_value=0,
            max_value=n_pairs - compute.ROTATION_PAIRS,
            step=8,
            key="rot_first",
            persist_state="session",
        )
    first_pair = int(state.value("rot_first"))
    data = compute.rotation_data(config, offset, k, first_pair)
    if data.window is None:
        st.info(
            f"M is a {config.d_model:,} × {config.d_model:,} matrix; it is built here for d_model "
            f"up to {compute.MAX_ROTATION_D_MODEL:,}. Its blocks rotate pair i by δ·ω_i: "
            f"{data.angles[0]:.4g} rad for the fastest pair, {data.angles[-1]:.4g} rad for the "
            "slowest."
        )
    else:
        left, right = st.columns([1, 1])
        with left:
            fig = compute.figure(_matrix_figure, config, offset, k, first_pair)
            ui.chart(fig, "rotation_matrix")
        with right:
            st.metric(
                "Largest |PE(k + δ) − M(δ) @ PE(k)|",
                f"{data.residual:.1e}",
                help="Zero up to floating-point rounding: the same vector, two ways.",
            )
            fig = compute.figure(_vector_figure, config, offset, k, first_pair)
            ui.chart(fig, "rotation_vectors")
    _circles(config)


def _matrix_figure(config: Config, offset: float, k: int, first_pair: int):
    data = compute.rotation_data(config, offset, k, first_pair)
    hover = _axis_hover(config, data.indices, data.angles)
    return figures.rotation_heatmap(
        data.window, indices=data.indices.tolist(), d_model=config.d_model, hover=hover
    )


def _vector_figure(config: Config, offset: float, k: int, first_pair: int):
    data = compute.rotation_data(config, offset, k, first_pair)
    return figures.vector_comparison(data.shifted, data.rotated, k=k, offset=offset)


def _axis_hover(config: Config, columns: np.ndarray, angles: np.ndarray) -> list[str]:
    info = compute.column_info(config.d_model, config.base, config.convention)
    labels = []
    for column in columns.tolist():
        i, role = int(info.pair[column]), str(info.role[column])
        if role == "zero":
            labels.append(f"{column} (zero)")
        else:
            labels.append(f"{column} ({role} i={i}, block angle δ·ω_i = {angles[i]:.4g} rad)")
    return labels


@st.fragment
def _circles(config: Config) -> None:
    n_pairs = compute.column_info(config.d_model, config.base, config.convention).pair.max() + 1
    pairs = [i for i in state.value("rot_pairs") if i < n_pairs][:6] or [0]
    st.session_state["rot_pairs"] = pairs
    st.multiselect(
        "Pairs to watch on the unit circle",
        options=list(range(int(n_pairs))),
        max_selections=6,
        key="rot_pairs",
        persist_state="session",
        help="Fast pairs (small i) spin around the circle; slow pairs (large i) barely move.",
    )
    pairs = state.value("rot_pairs")
    if pairs:
        ui.chart(compute.figure(_circles_figure, config, tuple(pairs)), "rotation_circles")
    state.sync_url()


def _circles_figure(config: Config, pairs: tuple[int, ...]):
    points = compute.circle_points(config, pairs, min(config.n_positions, CIRCLE_POINTS))
    freqs = pe_core.frequencies(config.d_model, **config.core_kwargs)
    return figures.unit_circles(points, pairs=list(pairs), frequencies=freqs[list(pairs)].tolist())
