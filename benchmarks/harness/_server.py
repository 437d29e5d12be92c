"""The Streamlit server: ``streamlit run dashboard/app.py`` on a free loopback port, started,
watched (health, memory, CPU, log) and stopped, never outliving the process that started it."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: An absolute path: same app, same working directory (the repo root), but a command line that
#: a broad ``pkill -f "streamlit run dashboard/app.py"`` elsewhere on the machine does not hit.
APP = str(ROOT / "dashboard" / "app.py")


def free_port() -> int:
    """A loopback port nobody listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGTERM when the thread that started it (always the main thread
    here) dies, even by SIGKILL, so a killed test run leaves no server behind."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


class ServerError(RuntimeError):
    pass


class StreamlitServer:
    """``python -m streamlit run dashboard/app.py`` on a free loopback port.

    :meth:`start` waits until ``/_stcore/health`` answers "ok"; :meth:`stop` terminates the
    server (SIGTERM, then SIGKILL after a timeout) and is safe to call more than once. Every
    started server is also stopped at interpreter exit, and, on Linux, when its parent dies.
    """

    def __init__(
        self,
        log_path: str | os.PathLike | None = None,
        *,
        app: str | os.PathLike = APP,
        cwd: str | os.PathLike = ROOT,
    ) -> None:
        """``app`` and ``cwd``: another script, or another checkout's app run from its own
        root (``benchmarks/pages.py --root``); by default this repository's dashboard."""
        self.app = str(app)
        self.cwd = Path(cwd)
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        if log_path is None:
            handle, log_path = tempfile.mkstemp(prefix="pe-streamlit-", suffix=".log")
            os.close(handle)
        self.log_path = Path(log_path)
        atexit.register(self.stop)  # a crash or an interrupted run leaves no stray server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self, port: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            self.app,
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            # Without a file watcher, a save in dashboard/ while the tests or the benchmark run
            # (an editor, a colleague) cannot cause a "source changed" prompt or a rerun.
            "--server.fileWatcherType",
            "none",
        ]

    def start(
        self, timeout: float = 60.0, attempts: int = 3, port: int | None = None
    ) -> StreamlitServer:
        """Start on a free port (or on ``port``: a restart keeps its address)."""
        for _ in range(1 if port else attempts):
            self.port = port or free_port()
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    self.command(self.port),
                    cwd=self.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group, stopped as a whole
                    preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
                )
            if self._wait_healthy(timeout):
                return self
            exited = self.process.poll() is not None
            self.stop()
            if not exited:  # alive but never healthy: retrying will not help
                break
            # It exited: most likely the port was taken between free_port() and its bind.
        raise ServerError(f"Streamlit did not become healthy; its log:\n{self.log_tail()}")

    def _wait_healthy(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as answer:
                    # "ok" from our port while our process is alive: it is our server (a
                    # server that lost the port race exits instead of sharing it).
                    if answer.read().decode().strip() == "ok" and self.process.poll() is None:
                        return True
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        return False

    def restart(self) -> None:
        """Stop the server and start it again on the same port (open pages reconnect)."""
        port = self.port
        self.stop()
        self.start(port=port)

    def stop(self, timeout: float = 10.0) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)  # the group we created, nothing else
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout)

    def exit_status(self) -> str | None:
        """None while the server runs; otherwise how it ended (a crash, or killed by someone)."""
        if self.process is None:
            return "not running (never started or already stopped)"
        code = self.process.poll()
        if code is None:
            return None
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with status {code}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def memory_kib(self) -> dict[str, int]:
        """VmRSS (now) and VmHWM (peak so far) of the server process, from /proc, in KiB."""
        values: dict[str, int] = {}
        if self.process is None:
            return values
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    key, _, rest = line.partition(":")
                    if key in ("VmRSS", "VmHWM"):
                        values[key] = int(rest.split()[0])
        except (OSError, ValueError):
            pass
        return values

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process used so far (from /proc; 0 if unknown)."""
        if self.process is None:
            return 0.0
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def __enter__(self) -> StreamlitServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
