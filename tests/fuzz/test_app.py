"""Fuzzing the Streamlit app through AppTest: random links and random sidebar settings.

* ``test_fuzz_query_strings``: hypothesis-generated URL parameters (the real names of the
  sidebar's and the views' parameters, ``view`` as old links have it, plus junk keys; values
  valid, at the edges, empty, unicode, huge,
  negative, comma lists, several values for one key) are set on ``at.query_params`` before the
  first run.
* ``test_fuzz_sidebar_and_views``: random settings inside and at the edges of every sidebar
  control (L, d_model, base, convention), then two random views.

After every run: no exception element, no error box with a traceback or the app's "Something went
wrong" fallback (nothing logged by ``ui.guarded`` either), something shown (a chart or a message),
and the address bar holds only known parameters, whose widgets show values that obey their
rules (the browser writes those values into the address bar).
"""

from __future__ import annotations

import logging
import os
import time
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, Phase, event, example, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

import pe_core
from dashboard import params, registry, sidebar
from dashboard.config import Config
from tests.apptest_helpers import images, new_app, open_view, page_of

pytestmark = pytest.mark.fuzz  # also from the folder (tests/conftest.py)

VIEWS = {view.slug: view.label for view in registry.VIEWS}
#: Every parameter a link can carry, by its URL name (the base as a link gives it).
ALL_PARAMS = {
    p.key: p for p in (*(p for v in registry.VIEWS for p in v.params), *sidebar.LINK_PARAMS)
}
PARAM_NAMES = [*ALL_PARAMS, "view"]
#: Query parameters Streamlit itself reads (embedding mode) and hides from st.query_params.
STREAMLIT_RESERVED = ("embed", "embed_options")

#: Examples per app fuzz test (each runs the app): a third of the hypothesis profile's (quick 3,
#: ci 33, nightly 500; tests/conftest.py), or PE_FUZZ_APP_EXAMPLES.
EXAMPLES = int(os.environ.get("PE_FUZZ_APP_EXAMPLES", settings.default.max_examples // 3))
APP_FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# --------------------------------------------------------------------------------------------
# Running the app and checking the page
# --------------------------------------------------------------------------------------------


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


@contextmanager
def logged_errors():
    """Errors the app logs (``ui.guarded`` logs every unexpected exception of a view)."""
    handler = _Records()
    logger = logging.getLogger("pe_explorer")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


def check_page(at: AppTest, records: list, context: str) -> None:
    """The page after a run: no exception, only friendly messages, something on screen."""
    assert not at.exception, (context, [e.message for e in at.exception])
    for box in at.error:
        text = str(box.value)
        assert "Traceback" not in text, (context, text)
        assert "Something went wrong" not in text, (context, text)
    assert not records, (context, [r.getMessage() for r in records], records[0].exc_text)
    shown = len(at.get("plotly_chart")) + len(images(at)) + len(at.info) + len(at.warning)
    shown += len(at.error)
    shown += len(at.success) + len(at.get("dataframe"))
    assert shown, f"{context}: no chart and no message on the page"
    for key in at.query_params:
        if key in STREAMLIT_RESERVED:
            continue
        assert key in ALL_PARAMS, f"{context}: unknown parameter {key!r} left in the URL"
        # What the widget shows (and the browser writes into the address bar) obeys its rule.
        if key in at.session_state:
            shown = at.session_state[key]
            raw = [str(v) for v in shown] if isinstance(shown, list) else [_as_link(shown)]
            ALL_PARAMS[key].parse(raw, shared_in(at.session_state))


def shared_in(state) -> Config:
    """The shared parameters held in a session state (a mapping of widget keys to values); a
    view that reads none of them (Check, the Lesson, the RoPE lab on a model) holds none, and
    its own parameters are read against the sidebar's defaults."""
    value = {p.key: state.get(p.key, p.default) for p in sidebar.LINK_PARAMS}
    return Config(int(value["L"]), int(value["d"]), float(value["base"]), str(value["conv"]))


def _as_link(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}" if value == float(f"{value:g}") else repr(value)
    return str(value)


def effective(query: dict) -> dict:
    """The shared values the app will use for ``query``: a valid value, else what its parameter
    makes of a bad one (the nearest allowed number, or the default)."""
    values = {}
    for param in sidebar.LINK_PARAMS:
        raw = query.get(param.key)
        if raw is None:
            values[param.key] = param.default
            continue
        raw = raw if isinstance(raw, list) else [raw]
        try:
            values[param.key] = param.parse(raw, None)
        except params.Invalid:
            values[param.key] = param.correction(raw, None)
    view = query.get("view")
    view = view[-1] if isinstance(view, list) else view
    values["view"] = view if view in VIEWS else registry.DEFAULT.slug
    return values


# --------------------------------------------------------------------------------------------
# (a) Random query strings
# --------------------------------------------------------------------------------------------

CHOICES = sorted(
    {
        *VIEWS,
        *pe_core.CONVENTIONS,
        *pe_core.PRECISIONS,
        *pe_core.CASTS,
        "cosine",
        "dot",
        "distance",
        "blocks",
        "window",
        "sampled",
        "sentences",
        "random",
        "true",
        "false",
        "True",
        "1",
        "0",
    }
)
EDGE_NUMBERS = [
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-0",
    "+5",
    " 7 ",
    "1_000",
    "٣",  # an Arabic-Indic digit: int() accepts it
    "255",
    "256",
    "257",
    "511",
    "512",
    "720",
    "721",
    "1023",
    "1024",
    "1025",
    "2048",
    "4096",
    "4097",
    "8191",
    "8192",
    "8193",
    "65504",
    "65505",
    "999999",
    "1000000",
    "1000001",
    "2147483647",
    "2147483648",
    "10000000000000000000000000000000",
    "9" * 5000,  # beyond int()'s default 4300-digit limit
    "1.01",
    "1.0",
    "0.5",
    "0.02",
    "0.9",
    "0.91",
    "1e9",
    "1e9000",
    "1e-9",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "0x10",
    "1e",
    ".",
]
LISTS = [
    "0,1,2,3",
    "4,5,6,7",
    "0,,1",
    ",",
    " , ",
    "0,1,2,3,4,5,6,7,8,9,10,11",
    "0,1,2,3,4,5,6,7,8,9,10,11,12",
    "999999",
    "1000000",
    "-1,2",
    "1;2",
    "0,8191,8192",
    "3,3,3",
    "0, 1",
    "a,b",
]
TEXTS = ["", " ", "the cat", "a\nb", "x" * 600, "x" * 601, "<script>alert(1)</script>", "$x$"]

numbers = st.one_of(
    st.sampled_from(EDGE_NUMBERS),
    st.integers(-(10**6), 2 * 10**6).map(str),
    st.integers().map(str),
    st.floats().map(repr),
    st.floats(0, 1e10).map(lambda x: f"{x:g}"),
)
comma_lists = st.one_of(
    st.sampled_from(LISTS),
    st.lists(st.integers(-5, 10**6 + 5), max_size=14).map(lambda v: ",".join(map(str, v))),
)
raw_values = st.one_of(
    st.sampled_from(CHOICES),
    numbers,
    comma_lists,
    st.sampled_from(TEXTS),
    st.text(max_size=30),
)
url_values = st.one_of(raw_values, raw_values, st.lists(raw_values, min_size=2, max_size=3))
junk_keys = st.one_of(
    st.sampled_from(
        ["_view", "_link_checked", "preset", "embed", "embed_options", "l", "L ", "D", "x", "é"]
    ),
    st.text(min_size=1, max_size=12),
)
url_keys = st.one_of(st.sampled_from(PARAM_NAMES), st.sampled_from(PARAM_NAMES), junk_keys)
queries = st.dictionaries(url_keys, url_values, max_size=7)


@pytest.mark.timeout(900)
@APP_FUZZ
@given(query=queries)
@example(query={"view": "rope"})
@example(query={"view": "rope", "rope_model": "Llama 3 8B", "conv": "tensor2tensor"})
@example(query={"view": "check", "L": "5"})
def test_fuzz_query_strings(query):
    values = effective(query)
    at = new_app(query)
    with logged_errors() as records:
        start = time.perf_counter()
        at.run()
        event(f"run {'>' if time.perf_counter() - start > 5 else '<='} 5 s")
        check_page(at, records, f"query {query!r}")
    assert page_of(at) == values["view"], query
    # The sidebar's parameters that view reads (none on Check and the Lesson; the RoPE lab's
    # sidebar source reads no convention): hypothesis found {'view': 'rope'} asked for 'conv'.
    read = registry.BY_SLUG[values["view"]].shared(
        lambda param: values[param.key] if param.key in values else at.session_state[param.key]
    )
    for key in read:
        assert at.session_state[key] == values[key], (key, query)


# --------------------------------------------------------------------------------------------
# (a') Random text in the Check view's paste box
# --------------------------------------------------------------------------------------------

#: Pieces of pasted text: numbers of every shape, separators, characters copied from papers and
#: web pages, markup and script, characters that end or hide lines. (No lone surrogates: the
#: protocol carries UTF-8 only, so none reaches the app; the parser's own test has them.)
PASTE_PIECES = [
    *("0", "1", "-1", "0.5", "-0", "1e5", "1e-400", "1e999", "nan", "inf", "1.2.3", "e5", "1e"),
    *("\u2212", "\u0663", "\uff11", "\u00bd", "\u200b", "\ufeff", "\x00", "\x1b[31m"),
    *("<script>alert(1)</script>", "**", "$x$", "`", "[a](javascript:alert(1))", ":red[x]"),
    *(" ", "\t", ",", ";", ",,", "\n", "\r\n", "\r", "\n\n", "\u2028"),
]
#: A small table that the check recognises, to paste with damage.
TABLE_ROWS = [
    " ".join(f"{v:.6f}" for v in row) for row in pe_core.sinusoidal_encoding(8, 6).round(6)
]
pasted_texts = st.one_of(
    st.lists(st.sampled_from(PASTE_PIECES), max_size=30).map("".join),
    st.lists(st.sampled_from([*TABLE_ROWS, *PASTE_PIECES]), min_size=2, max_size=12).map("\n".join),
    st.lists(st.sampled_from(TABLE_ROWS), min_size=2, max_size=8).map("\n".join),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=80),
)


@pytest.mark.timeout(900)
@APP_FUZZ
@given(text=pasted_texts)
def test_fuzz_paste_box(text):
    """Issue 16: whatever is pasted, the Check view shows a verdict or a message that names the
    pasted text, never an exception, and the rest of the page keeps working."""
    at = new_app({"view": "check"})
    at.run()
    with logged_errors() as records:
        at.text_area(key="check_paste").input(text).run()
        check_page(at, records, f"pasted {text!r}")
    errors = [str(box.value) for box in at.error]
    if errors:
        assert any("the pasted rows" in e or "Cannot check this table" in e for e in errors), errors
    elif text.strip():
        assert at.success or at.warning, f"pasted {text!r}: neither a verdict nor a message"


# --------------------------------------------------------------------------------------------
# (b) Random sidebar settings, inside and at the edges of the controls, in every view
# --------------------------------------------------------------------------------------------

n_positions = st.one_of(
    st.sampled_from([1, 2, 3, 511, 512, 513, 720, 721, 4096, 4097, 65504, 999_999, 1_000_000]),
    st.integers(1, sidebar.MAX_POSITIONS),
)
d_models = st.one_of(
    st.sampled_from([1, 2, 3, 4, 5, 511, 1023, 1024, 1025, 8191, 8192]),
    st.integers(1, sidebar.MAX_D_MODEL),
)
bases = st.sampled_from(sidebar.base_options(10_000.0))
conventions = st.sampled_from(list(pe_core.CONVENTIONS))
views = st.sampled_from(list(VIEWS))


@pytest.mark.timeout(900)
@APP_FUZZ
@given(
    n=n_positions,
    d_model=d_models,
    base=bases,
    convention=conventions,
    first_view=views,
    second_view=views,
)
def test_fuzz_sidebar_and_views(n, d_model, base, convention, first_view, second_view):
    at = new_app()
    with logged_errors() as records:
        at.run()
        check_page(at, records, "default page")
        at.number_input(key="L").set_value(n)
        at.number_input(key="d").set_value(d_model)
        at.select_slider(key="base").set_value(base)
        at.selectbox(key="conv").set_value(convention)
        at.run()
        for view in (first_view, second_view):
            open_view(at, view)
            context = f"L={n} d={d_model} base={base:g} conv={convention} view={view}"
            check_page(at, records, context)
            assert (at.session_state["L"], at.session_state["d"]) == (n, d_model), context
            assert at.session_state["base"] == base and at.session_state["conv"] == convention
            assert page_of(at) == view, context


CORNERS = {
    "min-t2t": (1, 1, 2.0, "tensor2tensor"),
    "min-vaswani": (1, 1, 1e8, "vaswani"),
    "tiny-odd": (2, 3, 2.0, "split"),
    "max": (1_000_000, 8192, 1e8, "vaswani"),
    "max-odd": (1_000_000, 8191, 2.0, "split"),
    "pairwise-limit": (4097, 8191, 10_000.0, "vaswani"),
}


# Two stacked lists, a grid of corners x views: the quick loop (tests/conftest.py) runs a
# covering selection of it, every corner and every view at least once; CI runs all 78.
@pytest.mark.timeout(900)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("corner", list(CORNERS))
def test_corners_of_the_sidebar(corner, view):
    """The corners of the sidebar's ranges, in every view (deterministic, so always run)."""
    n, d_model, base, convention = CORNERS[corner]
    at = new_app({"L": str(n), "d": str(d_model), "base": f"{base:g}", "conv": convention})
    with logged_errors() as records:
        at.run()
        open_view(at, view)
        check_page(at, records, f"L={n} d={d_model} base={base:g} conv={convention} view={view}")


# --------------------------------------------------------------------------------------------
# Known bugs
# --------------------------------------------------------------------------------------------


#: Rounded values (rows x columns) the uniqueness check may compute for one request: the hash
#: budget of pe_core.sinusoidal.uniqueness, far below the L * d_model = 8.2e9 of the app's
#: largest request.
ROUNDED_VALUES_BUDGET = 2**25


class _WorkBudgetExceeded(AssertionError):
    pass


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
@pytest.mark.parametrize("cast", ["angles", "positions", "outputs"])
def test_regression_uniqueness_angles_low_precision_hangs(monkeypatch, precision, cast):
    """Uniqueness view, Precision bfloat16, Rounding at "angles k·ω", L = 1,000,000 and
    d_model = 8192 (all within the controls' ranges; as a link:
    ``?view=uniqueness&L=1000000&d=8192&prec=bfloat16&cast=angles``) ran for about 12 minutes:
    the rounded rows were hashed and compared row by row, L * d sines and cosines two or three
    times over (pe_core.uniqueness_report, _find_duplicates).

    The work is counted, not timed (a busy machine must not fail this test): every rounded row
    the report computes passes through ``rounded_rows``, and the app's largest request may
    compute at most 2**25 rounded values. On the old code the counter trips at once, so the
    test fails in a moment instead of after 12 minutes.
    """
    import pe_core.sinusoidal.uniqueness as uniqueness

    computed = 0
    rounded_rows = uniqueness.rounded_rows

    def counting(values, layout, *args):
        nonlocal computed
        computed += values.size * layout.d_model
        if computed > ROUNDED_VALUES_BUDGET:
            raise _WorkBudgetExceeded(f"{computed:,} rounded values computed")
        return rounded_rows(values, layout, *args)

    monkeypatch.setattr(uniqueness, "rounded_rows", counting)
    report = pe_core.uniqueness_report(1_000_000, 8192, precision=precision, cast=cast)
    assert report.n_positions == 1_000_000
    assert computed <= ROUNDED_VALUES_BUDGET


@pytest.mark.timeout(300)
def test_regression_rotation_view_without_pairs():
    """?view=rotation&d=1&conv=tensor2tensor: one zero column, no sin/cos pair. The view shows
    "Something went wrong while drawing this view" (ui.guarded caught IndexError: list index out
    of range in rotation_heatmap, ``numbers[0]`` of an empty index list) instead of a
    message like the one for odd d_model with the other conventions."""
    at = new_app({"view": "rotation", "d": "1", "conv": "tensor2tensor"})
    with logged_errors() as records:
        at.run()
        check_page(at, records, "rotation view, d_model 1, tensor2tensor")
