"""Sinusoids: each dimension is a sinusoid of the position, each position a wave over dimensions."""

from __future__ import annotations

import streamlit as st

import pe_core
from dashboard import caching, claims, params, state, ui
from dashboard.config import Config
from dashboard.view_parts.sinusoids import (
    dimension_figure,
    position_figure,
    position_key,
    sinusoid_data,
)

MAX_DIMS = 12
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


def default_positions(config: Config) -> str:
    """Positions to compare that exist at this L: 0, 1, 10 and 50, and the last one when the
    sequence is shorter than that."""
    last = config.n_positions - 1
    shown = [p for p in (0, 1, 10, 50) if p <= last]
    if last > 1 and last not in shown and len(shown) < 4:
        shown.append(last)
    return ", ".join(map(str, shown))


DIMS = params.Multi(
    "dims",
    "Dimensions (columns)",
    default_dims,
    options=lambda config: range(config.d_model),
    max_selections=MAX_DIMS,
    follows=("d",),
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
    default_positions,
    max_chars=120,
    rule=parse_positions,
    help=f"Up to {MAX_DIMS} positions, separated by commas.",
    follows=("L",),
)
SPEED = params.play_speed("sin_speed", "along the curves")
PARAMS = (DIMS, FIRST, SPAN, AT, SPEED)


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"Each column of the encoding as a curve over the positions: {config.summary}."


def render(config: Config) -> None:
    across = (
        "Read across a row instead (second chart) and each position traces its own wave over "
        "the dimensions, fast pairs on the left and slow ones on the right."
        if claims.turning(config.bank)
        else "Here no column turns: every position has the same encoding."
    )
    ui.explain(
        f"{claims.column_words(config)}: read down a column and you see a sinusoid of the "
        "position with wavelength 2π/ω_i. The model only ever sees the values at integer "
        "positions (the markers); the curve between them shows the sinusoid they sample. " + across,
        r"PE(k, 2i) = \sin\!\left(\frac{k}{\mathrm{base}^{2i/d_{\mathrm{model}}}}\right)"
        if config.convention == "vaswani"
        else None,
    )
    _by_position(config)
    _by_dimension(config)


@ui.fragment
def _by_position(config: Config) -> None:
    kept = [j for j in DIMS.value(config) if j < config.d_model][:MAX_DIMS]
    if kept != DIMS.value(config):  # a smaller d_model: keep the dimensions that still exist
        st.session_state[DIMS.key] = kept or default_dims(config)
    left, middle, right = st.columns([3, 1, 1])
    DIMS.widget(config, left)
    if config.n_positions < 2:  # no range of positions to choose: no inputs that say one
        st.info("With a single position there is no curve to draw; add positions in the sidebar.")
        return
    FIRST.widget(config, middle)
    SPAN.widget(config, right)
    dims = DIMS.value(config)
    if not dims:
        st.info("Choose at least one dimension to plot.")
        return
    first, span = FIRST.value(config), SPAN.value(config)
    # Integer positions marked (up to 1,000 shown): what Play steps through and a click picks.
    marked = sinusoid_data(config, tuple(dims), first, span).integer_positions.size > 0
    if marked:
        SPEED.widget(config)
    frame_ms = 1000 // SPEED.value(config) if marked else None
    arguments = (config, tuple(dims), first, span, frame_ms)
    # Keyed on what it draws: a base that leaves these curves as they are (dimension 0, the
    # default at d_model 64) keeps the chart, and the position clicked on it (issue 51).
    shown = position_key(*arguments)
    ui.chart(caching.figure(position_figure, *arguments, key=shown), POSITION_KEY, select=marked)
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
CHOSEN_KEY = state.SINUSOIDS_CHOSEN
DIMENSION_KEY = "sinusoids_dimension"


@ui.fragment
def _by_dimension(config: Config) -> None:
    AT.widget(config)
    try:
        at = parse_positions(AT.value(config), config)
        st.session_state[state.SINUSOIDS_AT_SHOWN] = at
    except pe_core.InputError as error:
        at = [
            p for p in st.session_state.get(state.SINUSOIDS_AT_SHOWN, [0]) if p < config.n_positions
        ] or [0]
        shown = ", ".join(map(str, at))
        st.warning(f"{str(error).capitalize()} (L = {config.n_positions:,}): showing {shown}.")
    chosen = st.session_state.get(CHOSEN_KEY)
    if chosen is not None and chosen not in at:
        at = sorted([*at, chosen])
    fig = caching.figure(dimension_figure, config, tuple(at), chosen)
    ui.chart(fig, DIMENSION_KEY)
    if chosen is not None:
        st.caption(f"Position {chosen:,}, clicked in the chart above, is drawn thick.")
