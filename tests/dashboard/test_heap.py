"""Freed memory handed back to the system (issue 40): dashboard.heap calls glibc's
``malloc_trim(0)``, and that gives back memory that glibc otherwise keeps."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from dashboard import heap
from tests import ROOT

#: A heap glibc keeps after the program freed it: a 16 MiB block freed raises the mmap threshold
#: to 16 MiB, so 100 blocks of 2 MiB come from the heap; every tenth stays, and the 90 freed ones
#: are holes below memory in use, which free() does not give back. Then one trim.
HELD_HEAP = textwrap.dedent(
    """
    import numpy as np
    from dashboard import heap

    def rss_mib():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * 4096 / 2**20

    big = np.ones(1 << 21)
    del big
    blocks = [np.ones(1 << 18) for _ in range(100)]
    kept = blocks[::10]
    del blocks
    before = rss_mib()
    called = heap.trim()
    print(before, rss_mib(), called)
    """
)


@pytest.fixture
def recorded(monkeypatch):
    """heap's malloc_trim replaced by a recorder of its arguments; trimming switched on."""
    calls = []
    monkeypatch.setattr(heap, "_malloc_trim", lambda pad: calls.append(pad) or 1)
    monkeypatch.delenv(heap.SWITCH, raising=False)
    return calls


def test_trim_calls_malloc_trim_with_no_padding(recorded):
    assert heap.trim() is True
    assert recorded == [0]


@pytest.mark.parametrize("value", ["0", "off", "False", " no "])
def test_the_switch_turns_it_off(recorded, monkeypatch, value):
    monkeypatch.setenv(heap.SWITCH, value)
    assert heap.enabled() is False
    assert heap.trim() is False
    assert heap.start() is False
    assert recorded == []


def test_without_malloc_trim_it_does_nothing(monkeypatch):
    """macOS, musl, Windows: no malloc_trim, no call, no error."""
    monkeypatch.setattr(heap, "_malloc_trim", None)
    monkeypatch.delenv(heap.SWITCH, raising=False)
    assert heap.enabled() is False
    assert heap.trim() is False
    assert heap.start() is False


def test_loaded_only_on_linux(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert heap._load_malloc_trim() is None


def test_the_background_thread_trims_until_stopped(monkeypatch):
    """Started once per process (a second start is the same thread); stop ends it."""
    trimmed = threading.Event()
    calls = []

    def recorder(pad):
        calls.append(pad)
        trimmed.set()
        return 1

    monkeypatch.setattr(heap, "_malloc_trim", recorder)
    monkeypatch.delenv(heap.SWITCH, raising=False)
    heap.stop()  # none running in this process: a fresh start
    try:
        assert heap.start(interval=0.01) is True
        thread = heap._thread
        assert heap.start(interval=0.01) is True
        assert heap._thread is thread
        assert trimmed.wait(60), "the thread never called malloc_trim"
    finally:
        heap.stop()
    assert heap._thread is None and not thread.is_alive()
    assert set(calls) == {0}


@pytest.mark.skipif(heap._load_malloc_trim() is None, reason="needs glibc's malloc_trim")
def test_trim_gives_held_heap_back_to_the_system():
    """In a fresh process: ~180 MiB freed but held; the trim gives at least half of it back
    (measured 180 MiB), and without the trim (switched off) none goes."""
    results = {}
    for switch in ("1", "0"):
        answer = subprocess.run(
            [sys.executable, "-c", HELD_HEAP],
            cwd=ROOT,
            env={"PATH": "/usr/bin:/bin", heap.SWITCH: switch, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            check=True,
        )
        before, after, called = answer.stdout.split()
        results[switch] = (float(before), float(after), called == "True")
    before, after, called = results["1"]
    assert called
    assert before - after >= 90, results
    before, after, called = results["0"]
    assert not called
    assert before - after < 10, results  # the memory was held: the drop above is the trim's
