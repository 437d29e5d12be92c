"""Sinusoids: each dimension is a sinusoid of the position, each position a wave over dimensions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

import pe_core
from dashboard import caching, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.data import column_info, rows_at
from dashboard.figures import sinusoidal

MAX_DIMS = 12
#: Points of a smooth curve.
SMOOTH_POINTS = 2000
#: Fast to slow at the paper's d_model: wavelengths 6.3, 20, 63 and 628 positions.
PAPER_DIMS = (0, 64, 128, 256)


def default_dims(config: Config) -> list[int]:
    """The default columns that exist at this d_model (else the first four)."""
    fitting = [j for j in PAPER_DIMS if j < config.d_model]
    return fitting or list(range(min(4, config.d_model)))


def parse_positions(text: str, config: Config) -> list[int]:
    """Positions typed as "0, 1, 10, 50": whole numbers within the sequence, at most 12."""
    try:
        values = sorted({int(part) for part in text.replace(";", ",").split(",") if part.strip()})
    except ValueError:
        raise pe_core.InputError(
            "positions must be whole numbers separated by commas, e.g. 0, 1, 10, 50"
        ) from None
    if not values:
        raise pe_core.InputError("give at least one position, e.g. 0, 1, 10, 50")
    if len(values) > MAX_DIMS:
        raise pe_core.InputError(f"at most {MAX_DIMS} positions at a time")
    if values[0] < 0 or values[-1] >= config.n_positions:
        raise pe_core.InputError(f"positions must lie between 0 and {config.n_positions - 1:,}")
    return values


DIMS = params.Multi(
    "dims",
    "Dimensions (columns)",
    default_dims,
    options=lambda config: range(config.d_model),
    max_selections=MAX_DIMS,
)
FIRST = params.Number(
    "sin_from", "First position", 0, low=0, high=lambda config: max(0, config.n_positions - 2)
)
SPAN = params.Number(
    "sin_span", "Positions shown", 100, low=2, high=lambda config: max(2, config.n_positions)
)
AT = params.Text(
    "at",
    "Positions to compare across dimensions",
    "0, 1, 10, 50",
    max_chars=120,
    rule=parse_positions,
    help=f"Up to {MAX_DIMS} positions, separated by commas.",
)
SPEED = params.play_speed("sin_speed", "along the curves")
PARAMS = (DIMS, FIRST, SPAN, AT, SPEED)


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
    kept = [j for j in DIMS.value(config) if j < config.d_model][:MAX_DIMS]
    if kept != DIMS.value(config):  # a smaller d_model: keep the dimensions that still exist
        st.session_state[DIMS.key] = kept or default_dims(config)
    left, middle, right = st.columns([3, 1, 1])
    DIMS.widget(config, left)
    FIRST.widget(config, middle)
    SPAN.widget(config, right)
    dims = DIMS.value(config)
    if not dims:
        st.info("Choose at least one dimension to plot.")
        return
    if config.n_positions < 2:
        st.info("With a single position there is no curve to draw; add positions in the sidebar.")
        return
    first, span = FIRST.value(config), SPAN.value(config)
    # Integer positions marked (up to 1,000 shown): what Play steps through and a click picks.
    marked = sinusoid_data(config, tuple(dims), first, span).integer_positions.size > 0
    if marked:
        SPEED.widget(config)
    frame_ms = 1000 // SPEED.value(config) if marked else None
    shown = (config, tuple(dims), first, span, frame_ms)
    ui.chart(caching.figure(position_figure, *shown), POSITION_KEY, select=marked)
    chosen = ui.selected_whole_x(POSITION_KEY, config.n_positions, shown) if marked else None
    if chosen != st.session_state.get(CHOSEN_KEY):
        st.session_state[CHOSEN_KEY] = chosen
        if ui.drawn_before(DIMENSION_KEY):  # a click ran this fragment only: run the one below
            st.rerun()
    if marked:
        st.caption(
            "▶ Play moves position k along the curves in your browser: the red line is k, the "
            "ringed dots each dimension's value there, the numbers a model is given at k. Drag "
            "the slider to go to a position. Click a marker to see that position's whole "
            "encoding in the chart below; double-click an empty spot of the chart to clear."
        )


#: The chart of value against position: a position clicked on it (kept under ``CHOSEN_KEY``
#: for the chart across dimensions, another fragment) is drawn in the chart below.
POSITION_KEY = "sinusoids_position"
CHOSEN_KEY = "_sinusoids_chosen"
DIMENSION_KEY = "sinusoids_dimension"


@dataclass(frozen=True)
class SinusoidData:
    smooth_positions: np.ndarray
    smooth_values: np.ndarray  # (points, dims)
    integer_positions: np.ndarray  # empty when there are too many to mark
    integer_values: np.ndarray


@cached
def sinusoid_data(config: Config, dims: tuple[int, ...], first: int, span: int) -> SinusoidData:
    """Chosen columns against position: a smooth curve and the values at integer positions."""
    last = min(first + span - 1, config.n_positions - 1)
    smooth = np.linspace(first, last, SMOOTH_POINTS)
    smooth_values = pe_core.encoding_columns(smooth, config.bank, list(dims))
    if last - first + 1 <= SMOOTH_POINTS // 2:
        integers = np.arange(first, last + 1)
        integer_values = pe_core.encoding_columns(integers, config.bank, list(dims))
    else:
        integers, integer_values = np.zeros(0), np.zeros((0, len(dims)))
    return SinusoidData(smooth, smooth_values, integers, integer_values)


def position_figure(
    config: Config, dims: tuple[int, ...], first: int, span: int, frame_ms: int | None = None
):
    info = column_info(config)
    data = sinusoid_data(config, dims, first, span)
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
    return sinusoidal.sinusoid_lines(
        data.smooth_positions,
        data.smooth_values,
        data.integer_positions,
        data.integer_values,
        labels=labels,
        title="Value against position, one curve per dimension",
        subtitle=subtitle,
        frame_ms=frame_ms,
    )


@st.fragment
def _by_dimension(config: Config) -> None:
    AT.widget(config)
    try:
        at = parse_positions(AT.value(config), config)
        st.session_state["_at_shown"] = at
    except pe_core.InputError as error:
        at = [p for p in st.session_state.get("_at_shown", [0]) if p < config.n_positions] or [0]
        st.warning(f"{error}; still showing {', '.join(map(str, at))}.")
    chosen = st.session_state.get(CHOSEN_KEY)
    if chosen is not None and chosen not in at:
        at = sorted([*at, chosen])
    fig = caching.figure(dimension_figure, config, tuple(at), chosen)
    ui.chart(fig, DIMENSION_KEY)
    if chosen is not None:
        st.caption(f"Position {chosen:,}, clicked in the chart above, is drawn thick.")


def dimension_figure(config: Config, at: tuple[int, ...], chosen: int | None = None):
    info = column_info(config)
    rows = np.asarray(rows_at(config, at))
    sin_columns = np.flatnonzero(info.role == "sin")  # in pair order, in every layout
    cos_columns = np.flatnonzero(info.role == "cos")
    each_pair = sin_columns if sin_columns.size >= cos_columns.size else cos_columns
    return sinusoidal.dimension_lines(
        rows[:, sin_columns],
        rows[:, cos_columns],
        positions=list(at),
        sin_columns=sin_columns,
        cos_columns=cos_columns,
        frequency=info.frequency[each_pair],
        wavelength=info.wavelength[each_pair],
        chosen=chosen,
    )
