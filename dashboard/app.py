"""Positional Encoding Explorer: run with ``python -m streamlit run dashboard/app.py``."""

from __future__ import annotations

from functools import partial

import streamlit as st

from dashboard import links, plotly_preload, registry, sidebar, ui

st.set_page_config(
    page_title="Positional Encoding Explorer",
    page_icon="🌊",
    layout="wide",
    # A presentation link opens on the chart, the sidebar closed.
    initial_sidebar_state="collapsed" if st.query_params.get("present") == "true" else "auto",
)
ui.start_run()


def _render(view: registry.View) -> None:
    ui.guarded(view.slug, lambda: view.module.render(sidebar.current()))


pages = {
    view.slug: st.Page(
        partial(_render, view),
        title=view.label,
        url_path=view.slug,
        default=view is registry.DEFAULT,
    )
    for view in registry.VIEWS
}
page = st.navigation(list(pages.values()), position="top")
links.check_first_visit(pages, page)
# The view on screen: ui.explain opens its explanation on the session's first visit of a view.
st.session_state["_view"] = next(slug for slug, p in pages.items() if p is page)

config = sidebar.render()
if sidebar.presenting():
    ui.presentation_style()
st.title("Positional Encoding Explorer")
st.caption(
    f"Sinusoidal positional encodings (Vaswani et al., 2017): {config.n_positions:,} positions, "
    f"d_model {config.d_model:,}, base {config.base_text}, {config.convention} convention."
)
for warning in links.warnings():
    st.warning(warning)
if links.warnings():
    st.button("Dismiss", on_click=links.dismiss, key="dismiss_url_warnings")
page.run()
plotly_preload.mount()  # for the next view, if this one drew no Plotly chart
