"""All caching of the app: data keyed on small parameters, and figures built once per key."""

from __future__ import annotations

import streamlit as st

#: Cached data of one view: small keys (a Config, a few numbers), display-sized values.
cached = st.cache_data(max_entries=32, max_size="96MB", show_spinner=False)


def figure(builder, *args):
    """``builder(*args)``, a Plotly figure, built once per distinct ``args`` and then shared.

    Building a figure is mostly Plotly validating its arrays, tens of milliseconds for a large
    heatmap; a rerun with nothing changed should not pay that again. The figures are kept as
    objects (``st.cache_resource``: pickling one would validate it again) and never modified
    after they are built. ``args`` are the small parameters the figure is made from.
    """
    return _cached_figure(f"{builder.__module__}.{builder.__qualname__}", builder, args)


@st.cache_resource(max_entries=64, show_spinner=False)
def _cached_figure(name: str, _builder, args: tuple):
    return _builder(*args)
