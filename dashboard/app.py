"""Positional Encoding Explorer: run with ``python -m streamlit run dashboard/app.py``."""

from __future__ import annotations

import streamlit as st

from dashboard import sidebar, state, ui
from dashboard.views import (
    conventions,
    embeddings,
    example,
    heatmap,
    rotation,
    similarity,
    sinusoids,
    uniqueness,
    wavelengths,
)

VIEW_MODULES = {
    "heatmap": heatmap,
    "sinusoids": sinusoids,
    "wavelengths": wavelengths,
    "similarity": similarity,
    "uniqueness": uniqueness,
    "rotation": rotation,
    "embeddings": embeddings,
    "conventions": conventions,
    "example": example,
}

st.set_page_config(page_title="Positional Encoding Explorer", page_icon="🌊", layout="wide")
ui.start_run()
state.init_from_url()
config = sidebar.render()

st.title("Positional Encoding Explorer")
st.caption(
    f"Sinusoidal positional encodings (Vaswani et al., 2017): {config.n_positions:,} positions, "
    f"d_model {config.d_model:,}, base {config.base:,g}, {config.convention} convention."
)
for warning in state.url_warnings():
    st.warning(warning)
if state.url_warnings():
    st.button("Dismiss", on_click=state.dismiss_url_warnings, key="dismiss_url_warnings")

if "view_tab" not in st.session_state:
    st.session_state["view_tab"] = state.VIEWS[state.value("view")]
tabs = st.tabs(list(state.VIEWS.values()), key="view_tab", on_change="rerun")
for tab, (slug, module) in zip(tabs, VIEW_MODULES.items(), strict=True):
    with tab:
        if tab.open:
            ui.guarded(slug, lambda module=module: module.render(config))

label_to_view = {label: slug for slug, label in state.VIEWS.items()}
st.session_state["view"] = label_to_view.get(st.session_state.get("view_tab"), "heatmap")
state.sync_url()
