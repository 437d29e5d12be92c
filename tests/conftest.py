"""Settings shared by every test module: the hypothesis profile, the tiers (markers), and one scan
of the installed packages for Streamlit components per test process.

Hypothesis profiles, chosen by ``PE_HYPOTHESIS_PROFILE`` (``ci`` when unset):

- ``quick``: 10 examples a test, for the loop while working;
- ``ci``: 100 (Hypothesis' own default), the README's test command and CI;
- ``nightly``: 1,500, for a scheduled run.

None has a deadline (shared machines are noisy: a slow example is not a bug). The fuzz modules'
example counts follow the profile (``settings.default.max_examples``, times a module's own
factor) unless ``PE_FUZZ_EXAMPLES`` or ``PE_FUZZ_APP_EXAMPLES`` set them.

Tiers, marked here in ``pytest_collection_modifyitems`` (the meanings are in pyproject.toml):

- ``browser`` and ``fuzz``: every test in those folders;
- ``exhaustive``: the cases of a parametrized test beyond a covering selection, chosen by
  :func:`covering_selection` (every parameter value of the grid appears at least once among
  the cases kept);
- ``slow`` and ``library`` are written on the tests themselves (``@pytest.mark.slow``,
  ``@pytest.mark.library``), where the reason is visible.
"""

from __future__ import annotations

import atexit
import functools
import gc
import heapq
import os
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import streamlit.components.v2.manifest_scanner as _manifest_scanner
import streamlit.runtime.scriptrunner.script_cache as _script_cache
import streamlit.testing.v1.local_script_runner as _local_script_runner
from hypothesis import settings
from streamlit import config as streamlit_config

#: The scripts that made the data in tests/data (run once, with the libraries they compare):
#: not tests, and importing one for its doctests would import PyTorch at every collection.
collect_ignore_glob = ["data/*.py", "data/*/*.py"]

#: Examples per hypothesis test in each profile (``PE_HYPOTHESIS_PROFILE``).
PROFILE_EXAMPLES = {"quick": 10, "ci": 100, "nightly": 1500}
PROFILE = os.environ.get("PE_HYPOTHESIS_PROFILE", "ci")
if PROFILE not in PROFILE_EXAMPLES:
    raise pytest.UsageError(
        f"PE_HYPOTHESIS_PROFILE must be one of {', '.join(PROFILE_EXAMPLES)}, not {PROFILE!r}"
    )
for _name, _examples in PROFILE_EXAMPLES.items():
    settings.register_profile(_name, max_examples=_examples, deadline=None)
settings.load_profile(PROFILE)

#: Every test in these folders gets the folder's marker (``-m "not browser and not fuzz"``).
FOLDER_MARKERS = {"browser": pytest.mark.browser, "fuzz": pytest.mark.fuzz}
_TESTS = Path(__file__).resolve().parent


def pytest_report_header(config):
    return f"hypothesis profile: {PROFILE} ({PROFILE_EXAMPLES[PROFILE]} examples a test)"


def covering_selection(cases: list[dict]) -> list[int]:
    """Which cases of one parametrized test cover every parameter value at least once.

    Greedy set cover: take the case that covers the most (argument, value) pairs not covered
    yet, the earliest on a tie, until every pair of the grid is covered. A full grid of sizes
    ``n1 x n2 x ...`` keeps ``max(n1, n2, ...)`` cases; a single list keeps all of them.

    Parameters
    ----------
    cases : list of dict
        For each case, in collection order, the value it takes in each dimension of the grid
        (:func:`grid_values`).

    Returns
    -------
    list of int
        The positions in ``cases`` of the cases kept, ascending.

    Examples
    --------
    >>> grid = [{"a": a, "b": b} for a in range(3) for b in range(2)]
    >>> covering_selection(grid)
    [0, 3, 4]
    """
    pairs = [set(case.items()) for case in cases]
    uncovered = set().union(*pairs)
    # Lazy greedy (the same choices, without scoring every case at each step): a case's gain
    # only shrinks as pairs get covered, so the heap holds upper bounds; the top, rescored, is
    # the best case (and the earliest of the best) when its bound still holds.
    heap = [(-len(pair), i) for i, pair in enumerate(pairs)]
    heapq.heapify(heap)
    kept = []
    while uncovered:
        bound, i = heapq.heappop(heap)
        gain = len(pairs[i] & uncovered)
        if gain == -bound:
            kept.append(i)
            uncovered -= pairs[i]
        elif gain:
            heapq.heappush(heap, (-gain, i))
    return sorted(kept)


#: Argument values compared as themselves: two cases with an equal one share it.
_SCALARS = (str, int, float, bool, type(None))


def grid_values(item: pytest.Item) -> dict[str, tuple]:
    """The value a parametrized case takes in each of its arguments (of stacked ``parametrize``
    calls, one call's several names, or a fixture's ``params``): a number, a string, a bool or
    None as itself (with its type: ``1`` is not ``True``), anything else (arrays, configs,
    functions, classes) as the object it is, so that two cases share such a value only when
    they are handed the same object.

    So a list of rows ``(model, variant)`` keeps each model and each variant once in the quick
    tier, as a stacked grid keeps each value of each list; a list of one argument keeps every
    row. ``callspec.params`` is pytest's record of each argument's value.
    """
    return {
        name: (type(value).__name__, value) if type(value) in _SCALARS else ("object", id(value))
        for name, value in item.callspec.params.items()
    }


def _mark_exhaustive(items: list[pytest.Item]) -> None:
    """Mark ``exhaustive`` the cases of each parametrized test beyond its covering selection."""
    by_function: dict[tuple, list[pytest.Item]] = defaultdict(list)
    for item in items:
        if getattr(item, "callspec", None) is not None:
            by_function[(item.path, item.cls, item.originalname)].append(item)
    for cases in by_function.values():
        kept = set(covering_selection([grid_values(case) for case in cases]))
        for position, case in enumerate(cases):
            if position not in kept:
                case.add_marker(pytest.mark.exhaustive)


#: The quick loop (the README's quick-command) runs every test function but these tiers' ...
QUICK_LEAVES_OUT = {"browser", "slow", "exhaustive"}
#: ... and at least this share of the suite's test functions (issue 48; doctests one by one).
QUICK_SHARE = 0.95
#: Set when the whole suite was collected (pytest without paths): (functions the quick loop
#: runs, all the functions), for tests/test_tiers.py.
QUICK_FUNCTIONS = pytest.StashKey[tuple[int, int]]()


def quick_functions(items: list[pytest.Item]) -> tuple[int, int]:
    """How many test functions the quick loop runs at least one case of, and how many there are."""
    quick: dict[str, bool] = {}
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        runs = not any(item.get_closest_marker(name) for name in QUICK_LEAVES_OUT)
        quick[function] = quick.get(function, False) or runs
    return sum(quick.values()), len(quick)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        marker = _folder_marker(item.path)
        if marker is not None:
            item.add_marker(marker)
    _mark_exhaustive(items)
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        config.stash[QUICK_FUNCTIONS] = quick_functions(items)


@functools.cache
def _folder_marker(path: Path):
    """The marker of the folder of tests a module is in (None for the others)."""
    path = Path(path).resolve()
    return (
        FOLDER_MARKERS.get(path.relative_to(_TESTS).parts[0])
        if path.is_relative_to(_TESTS)
        else None
    )


# Every new AppTest scans the metadata of every installed distribution for Streamlit components
# (streamlit/testing/v1/app_test.py: a new BidiComponentManager per AppTest), about 0.12 to
# 0.16 s here. The installed packages do not change while the tests run, so one scan per process
# gives the same answer. Streamlit has no public setting for this: the patch replaces a private
# function, and tests/dashboard/test_apptest_scan.py fails if a Streamlit update renames it or
# stops calling it through the module (the patch would then do nothing, silently).
_real_scan = _manifest_scanner.scan_component_manifests
_scan_once = functools.cache(_real_scan)


def scan_component_manifests(*args, **kwargs):
    """The first scan's answer, as a new list each time (as the real function returns)."""
    return list(_scan_once(*args, **kwargs))


_manifest_scanner.scan_component_manifests = scan_component_manifests


# Every AppTest run compiles the app's script again (a new ScriptCache per run:
# streamlit/testing/v1/app_test.py and local_script_runner.py), where a server compiles it once
# for all its sessions: 643 compiles and 2.7 s of CPU in the quick loop. One compile per process
# and version of the file gives the same bytecode. tests/dashboard/test_apptest_scan.py fails if
# an update stops going through ScriptCache.get_bytecode.
_real_get_bytecode = _script_cache.ScriptCache.get_bytecode
_bytecode: dict[tuple, object] = {}


def get_bytecode(self, script_path: str):
    """The bytecode of ``script_path`` as it is on disk now, compiled once per process."""
    path = os.path.abspath(script_path)
    stat = os.stat(path)
    key = (path, stat.st_mtime_ns, stat.st_size, streamlit_config.get_option("runner.magicEnabled"))
    if key not in _bytecode:
        _bytecode[key] = _real_get_bytecode(self, script_path)
    return _bytecode[key]


_script_cache.ScriptCache.get_bytecode = get_bytecode


# AppTest waits for its script's thread by waking every millisecond to look for the runner's
# shutdown event (local_script_runner.require_widgets_deltas): each wake asks the script's thread
# for the GIL, so the script ran slower while the test waited for it. Joining the thread waits
# without waking (the runner emits its shutdown before the thread returns); the tests of
# tests/dashboard took 4.8 s less CPU of about 45 (four alternating runs, docs/benchmarks.md).
# A run past its timeout stops and fails as Streamlit's does.
_real_require_widgets_deltas = _local_script_runner.require_widgets_deltas


def require_widgets_deltas(runner, timeout: float = 3) -> None:
    """Wait for the script run of ``runner`` to end, at most ``timeout`` seconds."""
    thread = runner._script_thread
    if thread is None:
        _real_require_widgets_deltas(runner, timeout)
        return
    thread.join(timeout)
    if runner.script_stopped():
        return
    runner.request_stop()
    runner.join()
    raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


_local_script_runner.require_widgets_deltas = require_widgets_deltas


# Python's collector of reference cycles goes through every object the process holds each time
# it collects its oldest generation: with NumPy, SciPy, Streamlit, Plotly, pandas and (imported
# by the tests that need them) PyTorch and transformers, a million objects, 0.1 to 0.3 s a
# collection, a dozen or more times in each process of the quick loop. The modules, their
# functions and classes, and the collected tests live until the process ends: gc.freeze() moves
# every object alive at that moment out of the collector's sight for good, so it then goes
# through what the tests make. Done once the tests are collected, and again after a test that
# imported modules (sys.modules grew: a test's first torch or transformers import), after
# collecting the young generations (the last tests' garbage). A frozen object is still freed
# when its last reference goes; only a cycle among frozen objects stays until the process ends.
# Measured at -n 0 with the tiers of the quick loop, alternating (load about 1), with the
# oldest generation's schedule below: tests/core 56.3 -> 47.7 s of CPU and, the other way
# round, 62.0 -> 57.6 s (the collector's own time, by gc.callbacks, 3.7 -> 0.9 s),
# tests/dashboard 54.8 -> 47.2 s (4.5 -> 1.7 s). The peak memory of the quick loop is unchanged.
_modules_at_freeze = [0]


def _freeze_what_lives_now() -> None:
    """Leave every object alive now out of the cycle collector's work from here on (after a
    collection of the two younger generations, where the garbage of the last tests is)."""
    gc.collect(1)
    gc.freeze()
    _modules_at_freeze[0] = len(sys.modules)


#: Collections of the middle generation between two collections of the oldest (Python's
#: default 10). After a freeze the oldest generation holds only what the tests left alive, so
#: Python's other condition for collecting it (a quarter more objects there than at its last
#: collection) held nearly every time: on seven files of core, dashboard and fuzz 17 such
#: collections (0.83 s), 3 at 100 (0.18 s). The young generations, where a test's own garbage
#: is, are collected as often as before; what reaches the oldest is still collected, later.
OLDEST_GENERATION_EVERY = 100


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    _freeze_what_lives_now()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, OLDEST_GENERATION_EVERY)


def pytest_runtest_logfinish(nodeid, location):
    if len(sys.modules) > _modules_at_freeze[0]:
        _freeze_what_lives_now()


def _end_worker() -> None:
    """The last exit handler of an xdist worker: its results are sent and every other handler
    has run, so it ends at once instead of tearing its interpreter down object by object."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# A worker that has loaded PyTorch and transformers takes 2.6 to 3.2 s to tear its interpreter
# down after its last exit handler, and the run waits for it (measured: the quick loop's last
# result to its end 3.4 s, 0.8 s with this). Registered first, it runs last (atexit runs its
# handlers in reverse order); xdist does not read a worker's exit status once it has reported.
if os.environ.get("PYTEST_XDIST_WORKER"):
    atexit.register(_end_worker)
