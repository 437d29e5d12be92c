"""Similarity between positions: a matrix with diagonal bands, and the offset profile behind it."""

from __future__ import annotations

import streamlit as st

from dashboard import compute, figures, state, ui
from dashboard.compute import Config

KIND_NAMES = {"cosine": "Cosine similarity", "dot": "Dot product", "distance": "Euclidean distance"}


SYMMETRY = (
    "The similarity is even in the offset: PE(k)·PE(k+δ) = PE(k)·PE(k−δ), so from the "
    "similarity alone you cannot tell whether the other token is δ positions before or after. "
    "The encodings themselves do carry the direction: PE(k+δ) and PE(k−δ) are different "
    "vectors, related to PE(k) by the rotations M(δ) and M(−δ) = M(δ)ᵀ (see Relative "
    "position), so a learned linear map, like attention's query and key projections, can tell "
    "them apart."
)


def render(config: Config) -> None:
    ui.explain(
        "Because sin a·sin b + cos a·cos b = cos(a − b), the dot product of two encodings depends "
        "only on how far apart the positions are, not on where they are: the matrix is constant "
        "along every diagonal. The profile below is that one function of the offset, computed "
        "from its closed form; the markers are computed directly from pairs of encodings starting "
        f"at different positions k and land on the same curve. {SYMMETRY}",
        r"\begin{aligned}"
        r"PE(k)\cdot PE(k+\delta) &= \textstyle\sum_{i} \cos(\omega_i \delta) \\"
        r"\cos\theta &= \tfrac{1}{h}\textstyle\sum_i \cos(\omega_i\delta)"
        r"\quad (h\ \text{pairs}) \\"
        r"\lVert PE(k) - PE(k+\delta)\rVert^2 &= 4\textstyle\sum_i \sin^2(\omega_i\delta/2)"
        r"\end{aligned}",
    )
    layout = compute.column_layout(config)
    if layout.n_frequencies == 0:
        st.info(
            f"With d_model = {config.d_model} the {config.convention} convention has no sin/cos "
            "pair, only a zero column: every encoding is the zero vector, so there is no "
            "similarity to show."
        )
        return
    _controls(config)
    kind = state.value("sim_kind")
    paired = layout.is_paired
    fig = compute.figure(
        _matrix_figure, config, kind, state.value("sim_mode"), state.value("sim_start")
    )
    ui.chart(fig, "similarity_matrix")
    if config.d_model == 1:
        st.info(
            f"With d_model = 1 the {config.convention} convention keeps one column, sin(k): "
            "each encoding is a single number. Two one-number vectors point the same way or "
            "opposite ways, so their cosine similarity is +1 or −1 (0 with position 0, whose "
            "encoding sin 0 = 0 is the zero vector). That column has no cos partner, so the "
            "similarity depends on k itself and there is no closed form in the offset."
        )
    elif not paired:
        st.info(
            f"With odd d_model = {config.d_model} the {config.convention} convention leaves its "
            "last sin column without a cos partner. That column's contribution "
            "sin(k·ω)·sin((k+δ)·ω) depends on k itself, so the similarity is no longer a function "
            "of the offset alone: there is no closed form, and the direct values from different k "
            "below differ slightly."
        )
    elif layout.n_cos == 1:
        st.info(
            f"With d_model = {config.d_model} there is one pair, and its frequency is ω = 1 for "
            "every base and convention: the cosine similarity is cos(δ). It returns close to 1 "
            "whenever δ is close to a multiple of 2π (δ = 44 gives 0.9998), so positions 44 apart "
            "look almost the same."
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
        subtitle=_profile_subtitle(config, profile.note),
    )


def _profile_subtitle(config: Config, note: str) -> str:
    if not compute.column_layout(config).is_paired:
        return (
            "no closed form (an unpaired sin column): markers computed directly from three "
            "starting positions k, which disagree slightly"
        )
    return note or "closed form for every offset from 0 to L−1; markers: direct computation"


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
