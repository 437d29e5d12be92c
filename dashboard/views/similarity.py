"""Similarity between positions: a matrix with diagonal bands, and the offset profile behind it."""

from __future__ import annotations

import streamlit as st

from dashboard import compute, figures, state, ui
from dashboard.compute import Config

KIND_NAMES = {"cosine": "Cosine similarity", "dot": "Dot product", "distance": "Euclidean distance"}


def render(config: Config) -> None:
    ui.explain(
        "Because sin a·sin b + cos a·cos b = cos(a − b), the dot product of two encodings depends "
        "only on how far apart the positions are, not on where they are: the matrix is constant "
        "along every diagonal. The profile below is that one function of the offset, computed "
        "from its closed form; the markers are computed directly from pairs of encodings starting "
        "at different positions k and land on the same curve. It is symmetric in the sign of the "
        "offset, so the encoding alone does not say which of two tokens comes first.",
        r"PE(k)\cdot PE(k+\delta) = \sum_{i} \cos(\omega_i \delta), \qquad "
        r"\cos\theta = \frac{2}{d_{\mathrm{model}}}\sum_i \cos(\omega_i\delta), \qquad "
        r"\lVert PE(k) - PE(k+\delta)\rVert^2 = 4\sum_i \sin^2(\omega_i\delta/2)",
    )
    if compute.n_pairs(config) == 0:
        st.info(
            f"With d_model = {config.d_model} the {config.convention} convention has no sin/cos "
            "pair: every encoding is the zero vector, so there is no similarity to show."
        )
        return
    _controls(config)
    kind = state.value("sim_kind")
    paired = compute.closed_form_holds(config)
    fig = compute.figure(
        _matrix_figure, config, kind, state.value("sim_mode"), state.value("sim_start")
    )
    ui.chart(fig, "similarity_matrix")
    if not paired:
        st.info(
            f"With odd d_model = {config.d_model} the {config.convention} convention leaves its "
            "last sin column without a cos partner. That column's contribution "
            "sin(k·ω)·sin((k+δ)·ω) depends on k itself, so the similarity is no longer a function "
            "of the offset alone: there is no closed form, and the direct values from different k "
            "below differ slightly."
        )
    ui.chart(compute.figure(_profile_figure, config, kind), "similarity_profile")


def _matrix_figure(config: Config, kind: str, mode: str, first: int):
    data = compute.similarity_data(config, kind, mode, first)
    return figures.similarity_heatmap(
        data.matrix, positions=data.positions, kind=kind, subtitle=data.note or "every position"
    )


def _profile_figure(config: Config, kind: str):
    profile = compute.profile_data(config, kind)
    return figures.offset_profile_chart(
        profile.offsets,
        profile.values,
        upper=profile.upper,
        checks=profile.checks,
        kind=kind,
        subtitle=profile.note
        or "closed form for every offset from 0 to L−1; markers: direct computation",
    )


def _controls(config: Config) -> None:
    left, middle, right = st.columns([3, 2, 2])
    left.segmented_control(
        "Measure",
        options=list(KIND_NAMES),
        format_func=KIND_NAMES.get,
        key="sim_kind",
        persist_state="session",
    )
    if config.n_positions > compute.MAX_SIMILARITY_SIDE:
        middle.segmented_control(
            "Positions",
            options=["sampled", "window"],
            format_func={"sampled": "Evenly sampled", "window": "Window"}.get,
            key="sim_mode",
            persist_state="session",
        )
        if state.value("sim_mode") == "window":
            high = config.n_positions - compute.MAX_SIMILARITY_SIDE
            state.clamp("sim_start", 0, high)
            right.number_input(
                "First position",
                min_value=0,
                max_value=high,
                step=100,
                key="sim_start",
                persist_state="session",
            )
