"""All caching of the app: data keyed on small parameters, and figures built once per key."""

from __future__ import annotations

import weakref

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


#: Values derived from a figure object, by (what, id of the figure); an entry goes with its figure.
_DERIVED: dict[tuple[str, int], object] = {}


def derived(fig, make):
    """``make(fig)``, computed once per figure object and kept while the figure lives.

    A cached figure is shown on every rerun of its view; what ``ui.chart`` derives from it (its
    text alternative, its presentation copy) is the same each time. The entry is dropped when
    the figure is collected, so a later figure at the same address never finds it.
    """
    key = (make.__qualname__, id(fig))
    if key not in _DERIVED:
        _DERIVED[key] = make(fig)
        weakref.finalize(fig, _DERIVED.pop, key, None)
    return _DERIVED[key]
