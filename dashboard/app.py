"""Positional Encoding Explorer: run with ``python -m streamlit run dashboard/app.py``."""

from __future__ import annotations

from functools import partial

import streamlit as st

from dashboard import claims, heap, links, plotly_preload, registry, sidebar, state, ui

# No title here: the page's own is set below, once the page is known (a title here and there
# changed the tab's title twice on every run, each change a message to the page; issue 51).
st.set_page_config(
    page_icon="🌊",
    layout="wide",
    # A presentation link opens on the chart, the sidebar closed.
    initial_sidebar_state="collapsed" if st.query_params.get("present") == "true" else "auto",
)
ui.start_run()
claims.start_run()
# Once per process: freed memory goes back to the system every few seconds (glibc keeps it).
heap.start()


def _render(view: registry.View) -> None:
    """One page: its title, a line saying what it shows (computed from the parameters it
    reads), what a bad link got, then the view."""
    config = sidebar.current()
    st.title(view.label)
    ui.guarded(view.slug, lambda: st.caption(view.module.subtitle(config)))
    for warning in links.warnings():
        st.warning(warning)
    if links.warnings():
        st.button("Dismiss", on_click=links.dismiss, key="dismiss_url_warnings")
    ui.guarded(view.slug, lambda: view.module.render(config))


def _to_default() -> None:
    """The app's root (and ``/home``, its address before) opens the default view at its own
    address, ``/heatmap``: Streamlit shows its default page at ``/``, so the default view is
    not that page (the address bar said ``/`` for a link to ``/heatmap``)."""
    if links.checked():
        # Later in a session (the widgets hold the values, bound to the URL): just the page.
        st.switch_page(pages[registry.DEFAULT.slug])
    # A link's first run: all it asks, every value of a repeated key (dims=4&dims=5; to_dict()
    # keeps only the last), checked on the default view's page.
    asked = {key: st.query_params.get_all(key) for key in st.query_params}
    st.switch_page(pages[registry.DEFAULT.slug], query_params=asked)


pages = {
    view.slug: st.Page(partial(_render, view), title=view.label, url_path=view.slug)
    for view in registry.VIEWS
}
root = st.Page(
    _to_default,
    title=registry.DEFAULT.label,
    url_path="home",
    default=True,
    visibility="hidden",
)
sections = {
    section: [pages[view.slug] for view in registry.VIEWS if view.section == section]
    for section in registry.SECTIONS
}
sections[registry.DEFAULT.section].append(root)
page = st.navigation(sections, position="sidebar", expanded=True)
if page is root:
    _to_default()
view = next(v for v in registry.VIEWS if pages[v.slug] is page)
# Each page its own tab title, so that a reader's tabs tell the pages apart.
st.set_page_config(page_title=f"{view.label} · Positional Encoding Explorer")
links.check_first_visit(pages, page)
# The view on screen: ui.explain opens its explanation on the session's first visit of a view.
st.session_state[state.VIEW] = view.slug

sidebar.render(view)
if sidebar.presenting():
    ui.presentation_style()
page.run()
plotly_preload.mount()  # for the next view, if this one drew no Plotly chart
