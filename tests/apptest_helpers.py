"""Helpers for driving the app with streamlit.testing.v1.AppTest (``open_view``, shared with the
benchmarks, is in benchmarks/harness/_apptest.py)."""

from __future__ import annotations

import base64
import json

import numpy as np
from streamlit.testing.v1 import AppTest

from benchmarks.harness import open_view as open_view  # re-exported for the tests
from dashboard import registry, state
from tests import ROOT

APP = str(ROOT / "dashboard" / "app.py")
#: Views with inputs of their own, tested in their own files: the lesson's steps
#: (test_view_lesson.py), an uploaded table (test_views.py::TestCheckMyEncoding), the RoPE lab's
#: and the Distance view's families (test_view_rope.py, test_view_distance.py).
OWN_INPUT_VIEWS = frozenset({"lesson", "check", "rope", "distance"})
#: Every other view, read from the registry: each draws the sidebar's sinusoidal encoding, so the
#: tests of every view at every preset, link and range run on it (a new view is tested too).
SIDEBAR_VIEWS = [view.slug for view in registry.VIEWS if view.slug not in OWN_INPUT_VIEWS]


def new_app(query: dict | None = None, **params) -> AppTest:
    """The app on a link with these parameters (``view=<slug>`` opens that view, as old links
    do). ``query`` takes keys that are not Python names, and lists for repeated keys."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in {**(query or {}), **params}.items():
        at.query_params[key] = value if isinstance(value, list) else str(value)
    return at


def page_of(at: AppTest) -> str:
    """The slug of the view the last run showed."""
    return at.session_state[state.VIEW]


def figures(at: AppTest) -> list[dict]:
    """Every Plotly figure on the page, as the JSON the browser receives."""
    return [json.loads(element.proto.spec) for element in at.get("plotly_chart")]


def figure_payloads(at: AppTest) -> list[int]:
    return [len(element.proto.spec) for element in at.get("plotly_chart")]


def decode(array) -> np.ndarray:
    """A Plotly typed array ({dtype, bdata, shape}) or plain list, as a NumPy array."""
    if isinstance(array, dict) and "bdata" in array:
        values = np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
        shape = [int(s) for s in str(array.get("shape", values.size)).split(",")]
        return values.reshape(shape)
    # A plain list (dashboard/plotly_theme.py sends lists): JSON's null is NaN (a gap).
    return np.asarray(
        [np.nan if v is None else v for v in array] if array and None in array else array
    )


def no_errors(at: AppTest) -> None:
    """Nothing went wrong: no exception element and no error box."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def images(at: AppTest) -> list[tuple[dict, np.ndarray]]:
    """Every image heatmap on the page, decoded: its header and the values it draws."""
    from dashboard import encoding_image

    return [
        encoding_image.decode(element.proto.bytes)
        for element in at.get("bidi_component")
        if element.proto.component_name.endswith("pe_encoding_image")
    ]


def similarity_images(at: AppTest) -> list[tuple[dict, np.ndarray]]:
    """Every similarity image on the page, decoded: its header and its matrix."""
    from dashboard import similarity_image

    return [
        similarity_image.decode(element.proto.bytes)
        for element in at.get("bidi_component")
        if element.proto.component_name.endswith("pe_similarity_image")
    ]
