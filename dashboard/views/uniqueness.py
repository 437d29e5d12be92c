"""Uniqueness: do all positions get distinct, well-separated encodings, also at low precision?"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.data import PROFILE_POINTS, bucket_extremes
from dashboard.figures import similarity

#: Where the rounding happens, as a sentence ends: "... at bfloat16, {words}".
CAST_WORDS = {
    "outputs": "the encoding computed exactly, then stored",
    "angles": "the angles k·ω computed in that format",
    "positions": "the position ids stored in that format",
}
PRECISION = params.Choice(
    "prec", "Precision", "float64", options=tuple(pe_core.PRECISIONS), kind="segmented"
)
CAST = params.Choice(
    "cast",
    "Rounding happens at",
    "outputs",
    options=tuple(pe_core.CASTS),
    kind="segmented",
    help="outputs: the encoding is computed exactly, then stored at this precision. angles: "
    "the angle k·ω is computed at this precision, then sin and cos. positions: the position "
    "ids themselves are stored at this precision (257 becomes 256 in bfloat16).",
)
PARAMS = (PRECISION, CAST)


def render(config: Config) -> None:
    ui.explain(
        "Two positions collide when their encodings are equal: the model could not tell them "
        "apart. In exact arithmetic that never happens for distinct integer positions (the "
        "fastest pair alone turns by a whole radian per step), but rounding can merge them. "
        "Where the rounding happens matters: bfloat16 has 8 significant bits, so stored as "
        "bfloat16 the position ids 256 and 257 are the same number; float16 merges 2048 and "
        "2049. The chart shows how far each position's encoding is from the next one's as the "
        "model stores it (a collision is a zero), next to the exact values; at small d_model "
        "positions far apart can also come close (near-collisions, the dashed line).",
        r"\min_{a \ne b} \lVert PE(a) - PE(b) \rVert = \min_{\delta \ge 1} "
        r"2\sqrt{\textstyle\sum_i \sin^2(\omega_i \delta / 2)}",
    )
    # One control a row and the chart above the table: side by side they are cut at 768 px.
    PRECISION.widget(config)
    CAST.widget(config)
    precision, cast = PRECISION.value(config), CAST.value(config)
    n = representable_positions(config.n_positions, precision, cast)
    if n < config.n_positions:
        _overflow_note(config, precision, cast, n)
    with st.spinner("Checking every pair of positions…"):
        report = uniqueness(config, precision, cast)
    _verdict(report, precision, cast)
    _metrics(report)
    if config.layout.is_paired or n <= pe_core.PAIRWISE_LIMIT:
        fig = caching.figure(neighbour_figure, config, precision, cast, report.collisions)
        ui.chart(fig, "uniqueness_neighbours")
    _closest_table(config, report, precision, cast)
    st.caption(f"Method: {report.method}. {_bound_help(report)}")


def _overflow_note(config: Config, precision: str, cast: str, n: int) -> None:
    fmt = pe_core.PRECISIONS[precision]
    what = "position ids" if cast == "positions" else "angles k·ω (the first pair's is k itself)"
    st.info(
        f"{precision}'s largest number is {fmt.max_finite:,.0f}. With the {what} in {precision}, "
        f"every position from {n:,} on becomes infinity (inf), and sin(inf) is not a number "
        f"(NaN): the encodings of positions {n:,} to {config.n_positions - 1:,} are undefined. "
        f"Below: the first {n:,} positions, which {precision} can hold"
        + (
            f" (from {fmt.max_finite + 1:,.0f} to {n - 1:,} they round down to "
            f"{fmt.max_finite:,.0f})."
            if n - 1 > fmt.max_finite
            else "."
        ),
        icon=":material/info:",
    )


def _verdict(report: pe_core.UniquenessReport, precision: str, cast: str) -> None:
    where = "" if precision == "float64" else f" ({CAST_WORDS[cast]})"
    if report.n_positions < 2:
        st.info(f"{report.n_positions} position: nothing to compare.")
    elif not report.all_distinct:  # a finding about the configuration, not an error of the app
        st.warning(
            f"Positions {report.collides_with:,} and {report.first_collision:,} collide at "
            f"{precision}{where}: {report.n_duplicates:,} of {report.n_positions:,} positions "
            "repeat an earlier position's encoding.",
            icon=":material/join_inner:",
        )
    else:
        a, b = report.closest_pair
        st.success(
            f"All {report.n_positions:,} positions have distinct encodings at {precision}{where}; "
            f"the closest two are {abs(b - a):,} apart, at distance {report.min_distance:.3g}.",
            icon=":material/check_circle:",
        )


def _metrics(report: pe_core.UniquenessReport) -> None:
    columns = st.columns(4)
    columns[0].metric(
        "Smallest distance",
        "—" if report.min_distance is None else f"{report.min_distance:.4g}",
        help=_bound_help(report),
    )
    columns[1].metric(
        "Closest pair",
        "—"
        if report.closest_pair is None
        else f"{report.closest_pair[0]:,} & {report.closest_pair[1]:,}",
    )
    columns[2].metric(
        "Largest cosine", "—" if report.max_cosine is None else f"{report.max_cosine:.6f}"
    )
    columns[3].metric(
        "First collision",
        "none"
        if report.first_collision is None
        else f"{report.first_collision:,} = {report.collides_with:,}",
        help=f"{report.n_duplicates:,} positions repeat an earlier encoding.",
    )


def _closest_table(
    config: Config, report: pe_core.UniquenessReport, precision: str, cast: str
) -> None:
    """The pairs that come closest: the first collisions, or the deepest dips of the exact
    distance with their distance as stored at the chosen precision."""
    if report.collisions:
        earlier = [a for a, _ in report.collisions]
        later = [b for _, b in report.collisions]
        title = f"**First collisions** at {precision}: the same encoding"
    elif report.nearest_offsets:
        earlier = [0] * len(report.nearest_offsets)  # the positions are 0 .. L-1
        later = [int(offset) for offset, _ in report.nearest_offsets]
        title = "**Closest offsets**: the deepest dips of distance against offset"
    else:
        return
    exact, stored = pair_distances(config, tuple(earlier), tuple(later), precision, cast)
    table = pd.DataFrame(
        {
            "pair": [f"{a:,} & {b:,}" for a, b in zip(earlier, later, strict=True)],
            "offset": [b - a for a, b in zip(earlier, later, strict=True)],
            "exact distance": exact,
        }
    )
    if precision != "float64":
        table[f"at {precision}"] = stored
    st.markdown(title)
    st.dataframe(table, hide_index=True, width="stretch", height=ui.table_height(len(table)))


def _bound_help(report: pe_core.UniquenessReport) -> str:
    if report.distance_error_bound > 1e-9:
        return (
            f"The smallest distance is computed on the exact encoding; rounding to "
            f"{report.precision} can move it by at most {report.distance_error_bound:.2g}, not "
            "enough for any two positions to coincide."
        )
    return "Exact to rounding error."


def neighbour_figure(
    config: Config, precision: str, cast: str, collisions: tuple[tuple[float, float], ...]
):
    data = neighbour_distances(config, precision, cast)
    label = f"at {precision}: {CAST_WORDS[cast]}" if precision != "float64" else ""
    return similarity.neighbour_distance_chart(
        data.positions,
        data.exact_next,
        exact_nearest=data.exact_nearest,
        stored_positions=data.stored_positions,
        stored=data.stored,
        stored_label=label,
        collision=collisions[0] if collisions else None,
        subtitle=data.note or "every position",
    )


def representable_positions(n_positions: int, precision: str, cast: str) -> int:
    """How many of the positions 0 .. n-1 a model can hold when rounding at ``cast``: with the
    position ids or the angles in ``precision``, those from its overflow threshold on become
    inf (float16: from 65,520). With the stored encoding rounded, all of them."""
    if cast == "outputs":
        return n_positions
    threshold = pe_core.PRECISIONS[precision].overflow_threshold
    return int(min(n_positions, math.ceil(threshold)))


@cached
def uniqueness(config: Config, precision: str, cast: str) -> pe_core.UniquenessReport:
    n = representable_positions(config.n_positions, precision, cast)
    return pe_core.uniqueness_report(n, config.bank, precision=precision, cast=cast)


#: Largest number of rounded values (rows x d_model) computed for the neighbour chart when
#: rounding happens at the angles or the stored encoding; beyond it, positions are sampled.
NEIGHBOUR_VALUES = 1 << 22


@dataclass(frozen=True)
class NeighbourData:
    """Distances between the encodings of neighbouring positions, as stored and exactly."""

    positions: np.ndarray  # k (or the first k of each run) of the exact series
    exact_next: np.ndarray  # |PE(k+1) - PE(k)| in exact arithmetic (float64)
    exact_nearest: np.ndarray | None  # float64 distance to the nearest of all other positions
    stored_positions: np.ndarray  # k of the stored series (all, run starts, or a sample)
    stored: np.ndarray | None  # |E(k+1) - E(k)| as stored at the precision (None: float64)
    note: str


@cached
def neighbour_distances(config: Config, precision: str, cast: str) -> NeighbourData:
    """Distance from each position's encoding to the next position's, as a model stores it at
    ``precision`` (collisions are zeros), with the exact values for comparison. Long sequences
    are shown as the lowest value in each run of positions; when the rounded rows would be too
    many to compute, a sample of positions stands for the rest (the note says so)."""
    n = representable_positions(config.n_positions, precision, cast)
    kwargs = {"d_model": config.bank}
    k = np.arange(max(n - 1, 0), dtype=np.float64)
    exact_next = pe_core.encoding_distances(k, k + 1, **kwargs)
    exact_nearest = None
    if config.layout.is_paired or n <= pe_core.PAIRWISE_LIMIT:
        exact_nearest = pe_core.nearest_neighbor_distances(n, **kwargs)[:-1]
    notes = []
    stored, sampled = None, k
    if precision != "float64":
        if cast != "positions" and 2 * k.size * config.d_model > NEIGHBOUR_VALUES:
            count = max(2, NEIGHBOUR_VALUES // (2 * config.d_model))
            sampled = np.unique(np.linspace(0, k.size - 1, count).round())
            notes.append(f"at {precision}: {sampled.size:,} positions sampled evenly")
        stored = pe_core.encoding_distances(
            sampled, sampled + 1, precision=precision, cast=cast, **kwargs
        )
    if k.size <= PROFILE_POINTS * 2:
        return NeighbourData(k, exact_next, exact_nearest, sampled, stored, "; ".join(notes))
    bucket, lowest_next, _ = bucket_extremes(exact_next, PROFILE_POINTS)
    starts = np.arange(lowest_next.size) * bucket
    if exact_nearest is not None:
        exact_nearest = bucket_extremes(exact_nearest, PROFILE_POINTS)[1]
    if stored is not None and sampled.size == k.size:  # every position: lowest per run too
        stored = bucket_extremes(stored, PROFILE_POINTS)[1]
        sampled = starts
    notes.insert(0, f"lowest value in each run of {bucket:,} positions")
    return NeighbourData(starts, lowest_next, exact_nearest, sampled, stored, "; ".join(notes))


@cached
def pair_distances(
    config: Config, earlier: tuple[int, ...], later: tuple[int, ...], precision: str, cast: str
) -> tuple[np.ndarray, np.ndarray]:
    """Distance between the encodings of ``earlier[j]`` and ``later[j]``: exact, and as stored
    at ``precision`` with the rounding at ``cast``."""
    kwargs = {"d_model": config.bank}
    exact = pe_core.encoding_distances(earlier, later, **kwargs)
    stored = pe_core.encoding_distances(earlier, later, precision=precision, cast=cast, **kwargs)
    return exact, stored
