"""Similarity between positions: a matrix with diagonal bands, and the offset profile behind it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import streamlit as st

import pe_core
from dashboard import caching, claims, params, similarity_image, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.formatting import counted
from dashboard.view_parts.similarity import profile_figure, record_offsets

#: Largest side of the (square) similarity heatmap.
MAX_SIDE = 512

KIND = params.Choice(
    "sim_kind",
    "Measure",
    "cosine",
    options=("cosine", "dot", "distance"),
    kind="segmented",
    help="cosine: cosine similarity; dot: dot product; distance: Euclidean distance.",
)
MODE = params.Choice(
    "sim_mode",
    "Positions",
    "sampled",
    options=("sampled", "window"),
    kind="segmented",
    help="sampled: positions evenly spread over the sequence; window: consecutive positions.",
)
FIRST = params.Number(
    "sim_start",
    "First position",
    0,
    low=0,
    high=lambda config: max(0, config.n_positions - MAX_SIDE),
    step=100,
)
PARAMS = (KIND, MODE, FIRST)


SYMMETRY = (
    "The similarity is even in the offset: PE(k)·PE(k+δ) = PE(k)·PE(k−δ), so from the "
    "similarity alone you cannot tell whether the other token is δ positions before or after. "
    "The encodings themselves do carry the direction: PE(k+δ) and PE(k−δ) are different "
    "vectors, related to PE(k) by the rotations M(δ) and M(−δ) = M(δ)ᵀ (see Relative "
    "position), so a learned linear map, like attention's query and key projections, can tell "
    "them apart."
)


#: The dot product, cosine and distance as functions of the offset alone (paired columns).
OFFSET_FORMULAS = (
    r"\begin{aligned}"
    r"PE(k)\cdot PE(k+\delta) &= \textstyle\sum_{i} \cos(\omega_i \delta) \\"
    r"\cos\theta &= \tfrac{1}{h}\textstyle\sum_i \cos(\omega_i\delta)"
    r"\quad (h\ \text{pairs}) \\"
    r"\lVert PE(k) - PE(k+\delta)\rVert^2 &= 4\textstyle\sum_i \sin^2(\omega_i\delta/2)"
    r"\end{aligned}"
)


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"How alike the encodings of two positions are: {config.summary}."


def render(config: Config) -> None:
    if claims.offset_only(config):
        words = (
            f"Because sin a·sin b + cos a·cos b = cos(a − b), {claims.diagonals(config)}. The "
            "profile below is that one function of the offset, computed from its closed form; "
            "the markers are computed directly from pairs of encodings starting at different "
            f"positions k and land on the same curve. {SYMMETRY}"
        )
    else:
        words = (
            f"Each pair adds sin a·sin b + cos a·cos b = cos(a − b), a function of the offset; "
            f"but {claims.diagonals(config)}. The markers below are computed directly from "
            "pairs of encodings starting at different positions k, and differ with k."
        )
    # The closed forms hold only when every turning column has its partner.
    ui.explain(words, OFFSET_FORMULAS if claims.offset_only(config) else None)
    layout = config.layout
    if layout.n_frequencies == 0:
        st.info(
            f"With d_model = {config.d_model} the {config.convention} convention has no sin/cos "
            "pair, only a zero column: every encoding is the zero vector, so there is no "
            "similarity to show."
        )
        return
    _controls(config)
    kind = KIND.value(config)
    paired = layout.is_paired
    mode, first = MODE.value(config), FIRST.value(config)
    offset = ui.selected_whole_x(PROFILE_KEY, config.n_positions, shown=(config, kind))
    matrix_image = similarity_image.mark_offset(matrix_payload(config, kind, mode, first), offset)
    similarity_image.show(matrix_image, key="similarity_matrix")
    ui.png_download(
        lambda: matrix_png(config, kind, mode, first),
        f"similarity_{kind}_L{config.n_positions}_d{config.d_model}.png",
        key="similarity_matrix",
    )
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
            f"With odd d_model = {config.d_model} the {config.convention} convention leaves one "
            "sin column without a cos partner. That column's contribution "
            "sin(k·ω)·sin((k+δ)·ω) depends on k itself, so the similarity is no longer a function "
            "of the offset alone: there is no closed form, and the direct values from different k "
            "below differ."
        )
    elif layout.n_cos == 1:
        st.info(
            f"With d_model = {config.d_model} there is one pair, and its frequency is ω = 1 for "
            "every base and convention: the cosine similarity is cos(δ). It returns close to 1 "
            f"whenever δ is close to a multiple of 2π{_closest_return(config.n_positions)}"
        )
    record_offsets(config, kind)
    ui.chart(caching.figure(profile_figure, config, kind), PROFILE_KEY, select=True)
    _chosen_caption(config, kind, offset)


#: Offsets searched for the closest return of cos(δ) to 1 (the screen shows at most L - 1).
RETURN_SEARCH = 100_000


def _closest_return(n_positions: int) -> str:
    """Where cos(δ) comes closest to 1 among the offsets on screen, as the end of a sentence."""
    largest = min(n_positions - 1, RETURN_SEARCH)
    if largest < 1:
        return "; with one position there is no offset to compare."
    offsets = np.arange(1, largest + 1)
    best = int(offsets[np.argmax(np.cos(offsets))])
    return (
        f": among the offsets 1 to {largest:,}, δ = {best:,} comes closest (cos δ = "
        f"{np.cos(best):.4f}), so positions {best:,} apart look "
        + ("almost the same." if np.cos(best) > 0.99 else "the most alike.")
    )


#: The offset profile's chart: a point clicked on it marks its offset in the matrix above.
PROFILE_KEY = "similarity_profile"


def _chosen_caption(config: Config, kind: str, offset: int | None) -> None:
    if offset is None:
        st.caption(
            "Click the curve or a marker to mark that offset in the matrix above; double-click "
            "an empty spot of the chart to clear."
        )
        return
    where = (
        f"the dashed lines in the matrix above are the pairs of positions {offset:,} apart"
        if offset
        else "the matrix's diagonal is each position with itself"
    )
    if config.layout.is_paired:
        value = pe_core.offset_similarity(np.array([offset]), config.bank, kind=kind)[0]
        st.caption(
            f"Offset δ = {offset:,} (clicked): {kind} {value:.6f} by the closed form; {where}, "
            "every one of them with this value."
        )
    else:
        st.caption(
            f"Offset δ = {offset:,} (clicked): {where}. With an unpaired column their values "
            "differ slightly with the position (no closed form)."
        )


@dataclass(frozen=True)
class SimilarityData:
    matrix: np.ndarray  # float32 (n, n)
    positions: np.ndarray
    note: str


def similarity_positions(length: int, mode: str, first: int) -> tuple[np.ndarray, str]:
    """Which positions the similarity heatmap compares (at most ``MAX_SIDE``)."""
    if length <= MAX_SIDE:
        return np.arange(length), ""
    if mode == "sampled":
        step = math.ceil(length / MAX_SIDE)
        positions = np.arange(0, length, step)
        return positions, (
            f"positions 0, {step}, {2 * step}, … of {length:,}: every {step} positions "
            f"({counted(positions.size, 'row')}, exact values)"
        )
    first = min(max(0, first), length - MAX_SIDE)
    positions = first + np.arange(MAX_SIDE)
    return positions, f"positions {first:,}–{positions[-1]:,} of {length:,}"


@cached
def similarity_data(config: Config, kind: str, mode: str, first: int) -> SimilarityData:
    positions, note = similarity_positions(config.n_positions, mode, first)
    matrix = pe_core.similarity_matrix(positions, config.bank, kind=kind)
    return SimilarityData(matrix.astype(np.float32), positions, note)


@cached
def matrix_payload(config: Config, kind: str, mode: str, first: int) -> bytes:
    """What the similarity image draws (:func:`dashboard.similarity_image.payload`)."""
    data = similarity_data(config, kind, mode, first)
    return similarity_image.payload(
        data.matrix, positions=data.positions, kind=kind, subtitle=data.note or "every position"
    )


def matrix_png(config: Config, kind: str, mode: str, first: int) -> bytes:
    """The shown matrix as a coloured PNG, one pixel a pair of positions."""
    return similarity_image.png(similarity_data(config, kind, mode, first).matrix, kind)


def _controls(config: Config) -> None:
    left, middle, right = st.columns([3, 2, 2])
    KIND.widget(config, left)
    if config.n_positions > MAX_SIDE:
        MODE.widget(config, middle)
        if MODE.value(config) == "window":
            FIRST.widget(config, right)
