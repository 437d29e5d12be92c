"""Memory over several sessions, as CI can run it (issue 40): what each request allocates, what
the caches keep afterwards, and that nothing else keeps anything once the sessions are gone.

Sessions are AppTest runs of the heaviest views at the top of the sidebar's ranges, each with a
change of L, one after the other, and the two largest downloads; ``tracemalloc`` counts what
Python and NumPy allocate (the budget's measure). The server's RSS under real browsers is
measured by benchmarks/memory.py, benchmarks/churn.py and benchmarks/rapid_reruns.py.
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest
import streamlit as st

import pe_core
from dashboard import caching, exports
from dashboard.budget import REQUEST_BYTES
from dashboard.config import Config
from tests.apptest_helpers import new_app, no_errors

pytestmark = pytest.mark.timeout(600)

HEAVY_VIEWS = ["similarity", "uniqueness", "distance", "rope", "heatmap", "example"]
#: What the caches may keep after the sessions: one request's budget (measured 2026-11-25: 41 MiB
#: after the six sessions below).
RETAINED_BYTES = REQUEST_BYTES
#: What may stay once the caches are cleared (measured: 3 MiB, lazily imported modules' data).
LEFT_BYTES = 8 * 2**20


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _clear() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()
    gc.collect()


@pytest.mark.slow
def test_sessions_stay_within_the_budget_and_leave_only_the_caches_behind():
    for view in HEAVY_VIEWS:  # each view's imports, outside the count
        warm = new_app(view=view)
        warm.run()
        del warm
    _clear()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        peaks = {}
        for view in HEAVY_VIEWS:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]  # what earlier sessions left cached
            at = new_app(view=view, L=1_000_000, d=8192)
            at.run()
            at.number_input(key="L").set_value(999_000).run()
            no_errors(at)
            peaks[view] = tracemalloc.get_traced_memory()[1] - before
            del at
        for name, make in [
            ("heatmap .npy", lambda: exports.encoding_npy(Config(512, 8192, 1e4, "vaswani"))),
            (
                "cos/sin cache",
                lambda: exports.cos_sin_npy(256, pe_core.rope_from_config({"head_dim": 16_384})),
            ),
        ]:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            data = make()
            peaks[name] = tracemalloc.get_traced_memory()[1] - before
            assert len(data) > 30 * 2**20
            del data
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - baseline
        _clear()
        left = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    shown = {k: f"{v / 2**20:.0f} MiB" for k, v in peaks.items()}
    summary = (
        f"peaks {shown}; retained {retained / 2**20:.0f} MiB, after clearing the caches "
        f"{left / 2**20:.1f} MiB; RSS now {_rss_mib():.0f} MiB"
    )
    # Each request, with the caches the earlier ones filled, within the per-request budget
    # (issue 40's criterion is 1.5 times it, under concurrent sessions).
    assert max(peaks.values()) < REQUEST_BYTES, summary
    assert retained < RETAINED_BYTES, summary
    assert left < LEFT_BYTES, summary
    assert caching._FIGURES.total == 0, summary
    print(summary)
