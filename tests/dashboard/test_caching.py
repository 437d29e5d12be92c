"""The figure cache is bounded by bytes as well as entries (issue 40: st.cache_resource counted
only entries, so 64 large figures could be held)."""

from __future__ import annotations

import gc

import numpy as np
import plotly.graph_objects as go
import pytest
import streamlit as st

from dashboard import caching


def _heatmap(n: int, value: float = 0.0) -> go.Figure:
    return go.Figure(go.Heatmap(z=np.full((n, n), value)))


class TestFigureBytes:
    def test_counts_the_arrays(self):
        size = caching.figure_bytes(_heatmap(100))
        assert 80_000 <= size < 90_000

    def test_counts_strings_and_lists(self):
        fig = go.Figure(go.Scatter(x=list(range(1000)), y=list(range(1000)), text=["a" * 50] * 10))
        assert caching.figure_bytes(fig) >= 1000 * 8 * 2 + 500


@pytest.fixture
def small_store(monkeypatch):
    """A figure store bounded at 200 kB, and a cold figure cache."""
    st.cache_resource.clear()
    store = caching._FigureStore(200_000)
    monkeypatch.setattr(caching, "_FIGURES", store)
    yield store
    st.cache_resource.clear()


def test_least_recently_used_figures_are_dropped_past_the_bound(small_store):
    built = []

    def build(n, value):
        built.append(value)
        return _heatmap(n, value)

    first = caching.figure(build, 100, 1.0)  # 80 kB each
    assert caching.figure(build, 100, 1.0) is first and built == [1.0]  # a hit
    caching.figure(build, 100, 2.0)
    caching.figure(build, 100, 1.0)  # used again: now the most recent
    caching.figure(build, 100, 3.0)  # 240 kB: the least recently used (2.0) goes
    assert small_store.total <= 200_000
    assert built == [1.0, 2.0, 3.0]
    caching.figure(build, 100, 1.0)
    assert built == [1.0, 2.0, 3.0]  # still held
    caching.figure(build, 100, 2.0)
    assert built == [1.0, 2.0, 3.0, 2.0]  # built again


def test_a_figure_larger_than_the_bound_is_kept_alone(small_store):
    big = caching.figure(lambda n: _heatmap(n), 200)  # 320 kB
    assert small_store.total > small_store.max_bytes
    caching.figure(lambda n: _heatmap(n), 20)
    assert small_store.total < small_store.max_bytes  # the big one went
    assert caching.figure(lambda n: _heatmap(n), 200) is not big


def test_clearing_the_cache_releases_the_bytes(small_store):
    caching.figure(lambda n: _heatmap(n), 100)
    assert small_store.total > 0
    st.cache_resource.clear()
    gc.collect()
    assert small_store.total == 0


def test_a_key_stands_for_the_arguments(small_store):
    """``key``: arguments that draw the same figure share it (issue 51: a base that leaves the
    Sinusoids view's curves as they are), arguments with another key get their own."""
    built = []

    def build(n, value):
        built.append(value)
        return _heatmap(n, value)

    first = caching.figure(build, 10, 1.0, key="ones")
    assert caching.figure(build, 10, 2.0, key="ones") is first and built == [1.0]
    assert caching.figure(build, 10, 2.0, key="twos") is not first and built == [1.0, 2.0]
    assert caching.figure(build, 10, 1.0) is not first  # no key: the arguments are the key
    assert built == [1.0, 2.0, 1.0]


def test_figure_of_builds_a_drawing_once(small_store):
    """``figure_of`` (issue 51): a pure factory's figure is keyed by what it draws, its
    arguments digested exactly: the same arrays and words give the same figure object, any
    change of a value, a dtype, a shape or a word another one, and what it cannot digest is
    refused rather than keyed loosely."""
    built = []

    def bars(values, *, title):
        built.append(title)
        return _heatmap(3, float(len(built)))

    values = np.array([1.0, 2.0, 3.0])
    first = caching.figure_of(bars, {"a": values}, title="t")
    assert caching.figure_of(bars, {"a": values.copy()}, title="t") is first and built == ["t"]
    others = [
        caching.figure_of(bars, {"a": np.array([1.0, 2.0, 3.5])}, title="t"),
        caching.figure_of(bars, {"a": values.astype(np.float32)}, title="t"),
        caching.figure_of(bars, {"a": values.reshape(3, 1)}, title="t"),
        caching.figure_of(bars, {"b": values}, title="t"),
        caching.figure_of(bars, {"a": values}, title="u"),
    ]
    assert all(other is not first for other in others) and len(built) == 6
    with pytest.raises(TypeError, match="cannot digest"):
        caching.figure_of(bars, {"a": np.array([object()])}, title="t")
    with pytest.raises(TypeError, match="cannot digest"):
        caching.figure_of(bars, {"a": values}, title=object())
