"""Giving freed memory back to the system (issue 40): glibc's ``malloc_trim(0)`` every
:data:`INTERVAL` seconds on one background thread per process (:func:`start`, from the app).

glibc's allocator keeps memory a program has freed when it sits in a heap arena below memory
still in use, and after a large block is freed it raises its mmap threshold, so later blocks
of up to 32 MiB come from the arenas too. A server that built a few 32 MiB downloads in its
session threads stayed ~500 MiB above its fresh idle for minutes, with nothing of the app
holding it (``docs/benchmarks.md``, issue 40). ``malloc_trim(0)`` hands every free page of every
arena back (``madvise``); it is thread-safe, takes about 10 ms on such a heap and well under
1 ms when there is nothing to give back.

Elsewhere (macOS, musl, Windows) there is no ``malloc_trim`` and :func:`trim` does nothing.
``PE_EXPLORER_MALLOC_TRIM=0`` in the server's environment turns it off (to measure without it).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Callable

#: Seconds between two trims of the background thread.
INTERVAL = 10.0
#: The environment variable that turns trimming off ("0", "off", "false", "no").
SWITCH = "PE_EXPLORER_MALLOC_TRIM"

_lock = threading.Lock()
_thread: threading.Thread | None = None
_stop = threading.Event()  # the running thread's: a new one for each start


def _load_malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None (another C library or platform)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the running process: its C library is already loaded
    except OSError:
        return None
    function = getattr(libc, "malloc_trim", None)  # glibc only (not musl)
    if function is None:
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function


_malloc_trim = _load_malloc_trim()


def enabled() -> bool:
    """Whether :func:`trim` gives memory back here: glibc, and not turned off by
    :data:`SWITCH`."""
    switch = os.environ.get(SWITCH, "1").strip().lower()
    return _malloc_trim is not None and switch not in ("0", "off", "false", "no")


def trim() -> bool:
    """Hand the free pages of every malloc arena back to the system (``malloc_trim(0)``).

    Returns
    -------
    bool
        True if ``malloc_trim`` was called, False where it does not exist or is turned off.
    """
    if not enabled():
        return False
    _malloc_trim(0)
    return True


def _every(interval: float, stop: threading.Event) -> None:
    while not stop.wait(interval):
        trim()


def start(interval: float = INTERVAL) -> bool:
    """Start the background thread that calls :func:`trim` every ``interval`` seconds, once
    per process (later calls do nothing); False if trimming is not available or turned off."""
    global _thread, _stop
    if not enabled():
        return False
    with _lock:
        if _thread is None:
            _stop = threading.Event()
            _thread = threading.Thread(
                target=_every,
                args=(interval, _stop),
                name="pe-explorer-malloc-trim",
                daemon=True,
            )
            _thread.start()
    return True


def stop() -> None:
    """Stop the background thread (if running) and wait for it; :func:`start` starts anew."""
    global _thread
    with _lock:
        thread, _thread = _thread, None
        _stop.set()
    if thread is not None:
        thread.join()
