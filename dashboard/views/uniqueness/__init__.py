"""Uniqueness: do all positions get distinct, well-separated encodings, also at low precision?"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, claims, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.formatting import counted
from dashboard.views.uniqueness.report import (
    CAST_WORDS,
    neighbour_figure,
    representable_positions,
    uniqueness,
)

#: The page opens where its point shows: bfloat16 position ids collide from 256 on (float64,
#: one click away, has no collision).
PRECISION = params.Choice(
    "prec", "Precision", "bfloat16", options=tuple(pe_core.PRECISIONS), kind="segmented"
)
CAST = params.Choice(
    "cast",
    "Rounding happens at",
    "positions",
    options=tuple(pe_core.CASTS),
    kind="segmented",
    help="outputs: the encoding is computed exactly, then stored at this precision. angles: "
    "the angle k·ω is computed at this precision, then sin and cos. positions: the position "
    "ids themselves are stored at this precision (257 becomes 256 in bfloat16).",
)
PARAMS = (PRECISION, CAST)


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"Whether every position keeps its own encoding, at each precision: {config.summary}."


def render(config: Config) -> None:
    # The chart compares neighbours: none with one position, or with no column that turns.
    charted = config.n_positions >= 2 and claims.turning(config.bank)
    ui.explain(
        "Two positions collide when their encodings are equal: the model could not tell them "
        f"apart. {claims.exact_collisions(config.bank)} "
        "Where the rounding happens matters: bfloat16 has 8 significant bits, so stored as "
        "bfloat16 the position ids 256 and 257 are the same number; float16 merges 2048 and "
        "2049. "
        + (
            "The chart shows how far each position's encoding is from the next one's as the "
            "model stores it (a collision is a zero), next to the exact values; at small "
            "d_model positions far apart can also come close (near-collisions, the dashed line)."
            if charted
            else "At small d_model positions far apart can also come close (near-collisions)."
        ),
        r"\min_{a \ne b} \lVert PE(a) - PE(b) \rVert = \min_{\delta \ge 1} "
        r"2\sqrt{\textstyle\sum_i \sin^2(\omega_i \delta / 2)}",
    )
    # One control a row and the chart above the table: side by side they are cut at 768 px.
    PRECISION.widget(config)
    CAST.widget(config)
    precision, cast = PRECISION.value(config), CAST.value(config)
    if not claims.turning(config.bank):
        st.info(
            f"At d_model {config.d_model:,} the {config.convention} convention has no column "
            "that turns: every position's encoding is the same, at every precision, so there "
            "is nothing to tell apart.",
            icon=":material/info:",
        )
        return
    n = representable_positions(config.n_positions, precision, cast)
    if n < config.n_positions:
        _overflow_note(config, precision, cast, n)
    limit = pe_core.pairwise_limit(config.d_model)
    if not config.layout.is_paired and n > limit:
        evens = " or ".join(f"{v:,}" for v in (config.d_model - 1, config.d_model + 1) if v >= 2)
        st.info(
            f"With an odd d_model ({config.d_model:,}) the {config.convention} convention leaves "
            "one sin column without its cos partner, so there is no closed form: the positions "
            f"are compared pair by pair, which this page does for up to {limit:,} positions. "
            f"Below: the first {limit:,} of the {config.n_positions:,}. For all of them, set "
            f"d_model to an even number ({evens}); or set the number of positions L to "
            f"{limit:,} or fewer.",
            icon=":material/info:",
        )
        config = dataclasses.replace(config, n_positions=limit)
        n = limit
    with st.spinner("Checking every pair of positions…"):
        report = uniqueness(config, precision, cast)
    _verdict(report, precision, cast)
    _metrics(report)
    if charted and (config.layout.is_paired or n <= pe_core.PAIRWISE_LIMIT):
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
            + ("repeats" if report.n_duplicates == 1 else "repeat")
            + " an earlier position's encoding.",
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
    # One row that wraps, each metric as wide as its value: in four fixed columns a long pair
    # ("3,385 & 4,095") was cut at 768 px.
    row = st.container(horizontal=True, gap="medium")
    row.metric(
        "Smallest distance",
        "—" if report.min_distance is None else f"{report.min_distance:.4g}",
        help=_bound_help(report),
        width="content",
    )
    row.metric(
        "Closest pair",
        "—"
        if report.closest_pair is None
        else f"{report.closest_pair[0]:,} & {report.closest_pair[1]:,}",
        width="content",
    )
    row.metric(
        "Largest cosine",
        "—" if report.max_cosine is None else f"{report.max_cosine:.6f}",
        width="content",
    )
    row.metric(
        "First collision",
        "none"
        if report.first_collision is None
        else f"{report.first_collision:,} = {report.collides_with:,}",
        help=f"{counted(report.n_duplicates, 'position')} "
        + ("repeats" if report.n_duplicates == 1 else "repeat")
        + " an earlier encoding.",
        width="content",
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
