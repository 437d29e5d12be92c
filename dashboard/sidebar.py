"""The sidebar shared by every view: presets, positions, d_model, base, convention."""

from __future__ import annotations

import streamlit as st

import pe_core
from dashboard import state
from dashboard.compute import Config

#: The base control's stops: 1-2-5 steps on a log scale.
BASE_STOPS = tuple(
    float(m * 10.0**e) for e in range(0, 9) for m in (1, 2, 5) if 2 <= m * 10.0**e <= 1e8
)


def base_options(current: float) -> list[float]:
    """The log-scale stops, plus the current value if a link or preset chose another one."""
    return sorted(set(BASE_STOPS) | {float(current)})


def _range_note(key: str) -> None:
    note = state.range_note(key)
    if note:
        st.caption(f":orange[{note}]")


def render() -> Config:
    with st.sidebar:
        st.header("Parameters")
        st.session_state["preset"] = state.matching_preset()
        st.selectbox(
            "Preset",
            options=[state.CUSTOM, *state.PRESETS],
            key="preset",
            on_change=state.apply_preset,
            help="Sets several parameters at once.",
        )
        preset = state.PRESETS.get(st.session_state["preset"])
        if preset is not None:
            st.caption(preset.note)
        # No min_value/max_value on the widgets: the browser would keep an out-of-range value
        # in the box, outlined in red, while the old value stays in force. The callback brings
        # it into range instead, so the box always shows the value in use, and says so.
        st.number_input(
            "Number of positions L",
            step=1,
            key="L",
            on_change=state.keep_in_range,
            args=("L",),
            help="Positions 0 to L−1 (1 to 1,000,000).",
        )
        _range_note("L")
        st.number_input(
            "d_model",
            step=2,
            key="d",
            on_change=state.keep_in_range,
            args=("d",),
            help="Width of the encoding (1 to 8,192). The − and + buttons step by 2, so an even "
            "d_model stays even; odd values follow the convention's rule.",
        )
        _range_note("d")
        st.select_slider(
            "base (log scale)",
            options=base_options(state.value("base")),
            format_func=lambda b: f"{b:,g}",
            key="base",
            help="The longest wavelength is about 2π·base. 10,000 in the paper.",
        )
        conventions = list(pe_core.CONVENTIONS)
        st.selectbox(
            "Convention",
            options=conventions,
            format_func=lambda name: f"{name} ({pe_core.CONVENTIONS[name].layout})",
            key="conv",
        )
        convention = pe_core.CONVENTIONS[state.value("conv")]
        st.caption(
            f"{convention.description} {convention.formula}. "
            f"Used by {', '.join(convention.libraries[:4])}."
        )
        st.divider()
        st.caption(
            "The address bar always holds a link to what you see: copy it to share this view "
            "with these parameters."
        )
    return Config(
        int(state.value("L")),
        int(state.value("d")),
        float(state.value("base")),
        state.value("conv"),
    )
