"""All caching of the app: data keyed on small parameters, and figures built once per key.

Both are bounded by bytes as well as entries: ``st.cache_data`` by its ``max_size`` (and the
server's ``maxCacheDataSize``), the figures by :data:`MAX_FIGURE_BYTES` here (``st.cache_resource``
counts only entries).
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Mapping

import numpy as np
import streamlit as st

#: Cached data of one view: small keys (a Config, a few numbers), display-sized values.
cached = st.cache_data(max_entries=32, max_size="96MB", show_spinner=False)

#: Figures kept between reruns, at most: their arrays (as Plotly holds them) and text, together.
#: (Measured 2026-11-25: the largest figure of any view at the top of every range holds 0.42 MiB;
#: every view at its defaults and at the top of its ranges, 3.1 MiB in all.)
MAX_FIGURE_BYTES = 32 * 2**20
#: Figure keys kept (a key without its figure is a few hundred bytes).
MAX_FIGURE_ENTRIES = 64


def figure(builder, *args, key: Hashable | None = None):
    """``builder(*args)``, a Plotly figure, built once per distinct ``args`` and then shared.

    Building a figure is mostly Plotly validating its arrays, tens of milliseconds for a large
    heatmap; a rerun with nothing changed should not pay that again. The figures are kept as
    objects (``st.cache_resource``: pickling one would validate it again) and never modified
    after they are built. ``args`` are the small parameters the figure is made from.

    ``st.cache_resource`` keeps one small slot per key (it hashes the arguments); the figure in
    a slot counts against :data:`MAX_FIGURE_BYTES`, and the least recently used figures are
    dropped from their slots when the total would exceed it (built again when asked for).

    ``key``, when given, stands for ``args``: what the figure shows, for a figure that some
    changes of ``args`` leave as it is (such as a base that does not change the curves of the
    dimensions shown). It must hold everything the figure is built from; the figure is built
    from the first ``args`` that gave it and shared by all the others.
    """
    slot = _figure_slot(
        f"{builder.__module__}.{builder.__qualname__}", builder, args if key is None else key
    )
    fig = _FIGURES.get(slot)
    if fig is None:
        fig = _FIGURES.put(slot, builder(*args))
    return fig


def figure_of(factory, *args, **kwargs):
    """``factory(*args, **kwargs)``, a figure from one of the pure figure factories of
    ``dashboard.figures``, built once per distinct drawing and then shared (:func:`figure`).

    For a figure made from arrays computed in the view rather than from small parameters: the
    key is the factory and a digest of every argument (an array by its dtype, shape and bytes,
    a mapping by its items in order, a number by its exact value), that is, what the figure
    draws. A rerun that draws the same curves gets the same figure object, and with it what
    ``ui.chart`` derived from it (its specification as sent, its text alternative) and the same
    element in the browser. Raises TypeError for an argument it cannot digest exactly.
    """
    key = (f"{factory.__module__}.{factory.__qualname__}", digest(args, kwargs))
    return figure(_call, factory, args, kwargs, key=key)


def digest(*values) -> str:
    """A digest of ``values`` (arrays by dtype, shape and bytes; mappings, lists and tuples item
    by item; numbers, strings and None by type and exact value): equal for equal values of the
    same kinds, for a cache key that stands for what a figure draws. Raises TypeError for a
    value it cannot digest exactly."""
    hasher = hashlib.blake2b(digest_size=16)
    _feed(hasher, values)
    return hasher.hexdigest()


def _call(factory, args: tuple, kwargs: dict):
    return factory(*args, **kwargs)


def _feed(hasher, value) -> None:
    """Feed ``value`` into ``hasher``, with its type and structure: two values digest alike
    only if they are equal and of the same kinds (an array of float64 is not one of int64)."""
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError("cannot digest an array of Python objects")
        hasher.update(f"array {value.dtype.str} {value.shape};".encode())
        hasher.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, Mapping):
        hasher.update(f"mapping {len(value)};".encode())
        for key, item in value.items():
            _feed(hasher, key)
            _feed(hasher, item)
    elif isinstance(value, list | tuple):
        hasher.update(f"{type(value).__name__} {len(value)};".encode())
        for item in value:
            _feed(hasher, item)
    elif value is None or isinstance(value, bool | int | float | complex | str | np.generic):
        hasher.update(f"{type(value).__name__} {value!r};".encode())
    else:
        raise TypeError(f"cannot digest {type(value).__name__} {value!r:.80}")


class _Slot:
    """Where the figure of one key is kept while it is within the byte bound."""

    __slots__ = ("__weakref__", "figure")

    def __init__(self) -> None:
        self.figure = None


@st.cache_resource(max_entries=MAX_FIGURE_ENTRIES, show_spinner=False)
def _figure_slot(name: str, _builder, args: tuple) -> _Slot:
    return _Slot()


class _FigureStore:
    """The figures held by slots, least recently used first, with their sizes in bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.total = 0
        self._sizes: OrderedDict[int, tuple[weakref.ref, int]] = OrderedDict()
        self._lock = threading.RLock()  # a slot collected while the lock is held

    def get(self, slot: _Slot):
        with self._lock:
            if slot.figure is not None:
                self._sizes.move_to_end(id(slot))
            return slot.figure

    def put(self, slot: _Slot, fig):
        size = figure_bytes(fig)
        with self._lock:
            if slot.figure is not None:  # another session built it meanwhile: share that one
                return slot.figure
            slot.figure = fig
            if id(slot) not in self._sizes:
                # A slot evicted by st.cache_resource (entries) takes its figure's bytes along.
                weakref.finalize(slot, self._forget, id(slot))
            self._sizes[id(slot)] = (weakref.ref(slot), size)
            self.total += size
            while self.total > self.max_bytes and len(self._sizes) > 1:
                _, (oldest, oldest_size) = self._sizes.popitem(last=False)
                self.total -= oldest_size
                held = oldest()
                if held is not None:
                    held.figure = None
            return fig

    def _forget(self, slot_id: int) -> None:
        with self._lock:
            entry = self._sizes.pop(slot_id, None)
            if entry is not None:
                self.total -= entry[1]


_FIGURES = _FigureStore(MAX_FIGURE_BYTES)


def figure_bytes(fig) -> int:
    """About how many bytes a Plotly figure holds: its arrays, lists and strings, in its traces
    and its layout (images drawn as data: URLs included)."""
    parts = [getattr(fig, "_data", None), getattr(fig, "_layout", None)]
    if parts[0] is None:  # not a plotly BaseFigure: count its JSON form
        parts = [fig.to_plotly_json()]
    total, stack = 0, parts
    while stack:
        value = stack.pop()
        if isinstance(value, np.ndarray):
            total += value.nbytes if value.dtype != object else 64 * value.size
        elif isinstance(value, (str, bytes)):
            total += len(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            total += 8 * len(value)
            stack.extend(v for v in value if isinstance(v, (dict, list, tuple, np.ndarray, str)))
        else:
            total += 16
    return total


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
