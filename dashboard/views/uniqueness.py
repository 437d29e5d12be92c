"""Uniqueness: do all positions get distinct, well-separated encodings, also at low precision?"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import pe_core
from dashboard import compute, figures, state, ui
from dashboard.compute import Config

CAST_NAMES = {"outputs": "stored encoding", "angles": "angles k·ω", "positions": "position ids"}
CAST_HELP = (
    "stored encoding: computed exactly, then stored at this precision. angles k·ω: the angle is "
    "computed at this precision, then sin and cos. position ids: the positions themselves are "
    "stored at this precision (257 becomes 256 in bfloat16)."
)


def render(config: Config) -> None:
    ui.explain(
        "Two positions collide when their encodings are equal: the model could not tell them "
        "apart. In exact arithmetic that never happens for distinct integer positions (the "
        "fastest pair alone turns by a whole radian per step), but rounding can merge them. "
        "Where the rounding happens matters: bfloat16 has 8 significant bits, so stored as "
        "bfloat16 the position ids 256 and 257 are the same number; float16 merges 2048 and "
        "2049. The distance to the nearest other position shows how well separated each "
        "position is: at small d_model, positions far apart can come close (near-collisions).",
        r"\min_{a \ne b} \lVert PE(a) - PE(b) \rVert = \min_{\delta \ge 1} "
        r"2\sqrt{\textstyle\sum_i \sin^2(\omega_i \delta / 2)}",
    )
    left, right = st.columns([2, 3])
    left.segmented_control(
        "Precision", options=list(pe_core.PRECISIONS), key="prec", persist_state="session"
    )
    right.segmented_control(
        "Rounding happens at",
        options=list(CAST_NAMES),
        format_func=CAST_NAMES.get,
        key="cast",
        persist_state="session",
        help=CAST_HELP,
    )
    precision, cast = state.value("prec"), state.value("cast")
    with st.spinner("Checking every pair of positions…"):
        report = compute.uniqueness(config, precision, cast)
    verdict = report.summary()
    if report.all_distinct:
        st.success(verdict.capitalize() + ".", icon=":material/check_circle:")
    else:  # a finding about the configuration, not an error of the app
        st.warning(verdict.capitalize() + ".", icon=":material/join_inner:")
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
    chart_column, table_column = st.columns([3, 2])
    if compute.closed_form_holds(config) or config.n_positions <= pe_core.PAIRWISE_LIMIT:
        with chart_column:
            ui.chart(compute.figure(_neighbour_figure, config), "uniqueness_neighbours")
    if report.nearest_offsets:
        table = pd.DataFrame(report.nearest_offsets, columns=["offset", "distance"])
        table.insert(0, "example pair", [f"0 & {int(o):,}" for o in table["offset"]])
        with table_column:
            st.markdown("**Closest offsets**: the deepest dips of distance against offset")
            st.dataframe(table, hide_index=True, width="stretch")
    st.caption(f"Method: {report.method}. {_bound_help(report)}")


def _bound_help(report: pe_core.UniquenessReport) -> str:
    if report.distance_error_bound > 1e-9:
        return (
            f"Computed on the exact encoding; rounding to {report.precision} can move it by "
            "at most "
            f"{report.distance_error_bound:.2g}, not enough for any two positions to coincide."
        )
    return "Exact to rounding error."


def _neighbour_figure(config: Config):
    data = compute.nearest_neighbours(config)
    return figures.nearest_neighbour_chart(
        data.positions,
        data.distances,
        subtitle=(data.note + "; " if data.note else "") + "exact encoding (float64)",
    )
