"""Rapid reruns: one session changes a parameter many times a second (issue 40).

Starts its own server on a loopback port (8760 by default, 8600-8799) with ``runner.fastReruns``
set as asked, opens one session on a heavy view at the top of the sidebar's ranges, then sends
``--changes`` new values of L, ``--interval`` seconds apart, without waiting for the runs, as a
person dragging a slider does. The server's resident memory (VmRSS) and its thread count are
sampled every 100 ms from the first change until ``--settle`` seconds after the last run ends.

With fastReruns on (Streamlit's default), each change stops the running script at its next
Streamlit call and starts a new ScriptRunner thread at once: a script inside a long NumPy call
keeps computing beside the new one. With it off, a change is handed to the running script, which
restarts with the newest values at its next Streamlit call: one script thread per session.

    .venv/bin/python benchmarks/rapid_reruns.py --fast-reruns false
    .venv/bin/python benchmarks/rapid_reruns.py --fast-reruns true
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from benchmarks.harness import StreamlitServer  # noqa: E402
from benchmarks.protocol import connect, rerun_message, run  # noqa: E402


class Server(StreamlitServer):
    def __init__(self, fast_reruns: bool) -> None:
        super().__init__()
        self.fast_reruns = fast_reruns

    def command(self, port: int) -> list[str]:
        return [*super().command(port), "--runner.fastReruns", str(self.fast_reruns).lower()]

    def threads(self) -> int:
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith("Threads:"):
                        return int(line.split()[1])
        except (OSError, AttributeError):
            pass
        return 0


async def _attack(
    server: Server, page: str, query: str, values: list[int], interval: float, settle: float
):
    samples: list[tuple[float, float, int]] = []
    started = time.perf_counter()
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            rss = server.memory_kib().get("VmRSS", 0) / 1024
            samples.append((time.perf_counter() - started, rss, server.threads()))
            await asyncio.sleep(0.1)

    sampler = asyncio.create_task(sample())
    async with connect(server.url) as socket:
        first = await run(socket, rerun_message(query, page))
        widget = next(w for w in first.widgets if w.endswith("-L") or w.endswith("_L"))
        before = server.memory_kib().get("VmRSS", 0) / 1024
        changed = time.perf_counter()
        for value in values:
            await socket.send(rerun_message(query, page, {widget: value}))
            await asyncio.sleep(interval)
        # Read until a run finishes after the last change (earlier runs end "early for rerun").
        last_end = None
        while last_end is None:
            message = ForwardMsg()
            message.ParseFromString(await asyncio.wait_for(socket.recv(), 600))
            if (
                message.WhichOneof("type") == "script_finished"
                and message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
                and time.perf_counter() - changed > interval * len(values)
            ):
                last_end = time.perf_counter()
        await asyncio.sleep(settle)  # the session stays open, as a page left on screen
    done.set()
    await sampler
    return samples, before, changed - started, last_end - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast-reruns", choices=["true", "false"], required=True)
    parser.add_argument("--view", default="similarity")
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--port", type=int, default=8760)
    parser.add_argument(
        "--malloc-arena-max",
        type=int,
        default=None,
        help="MALLOC_ARENA_MAX for the server (glibc): fewer arenas, less memory kept per thread",
    )
    arguments = parser.parse_args()
    if not 8600 <= arguments.port <= 8799 or not 1 <= arguments.changes <= 200:
        parser.error("a port in 8600-8799 and 1 to 200 changes")
    query = "L=1000000&d=8192&base=10000"
    values = [1_000_000 - 1000 * (i + 1) for i in range(arguments.changes)]
    if arguments.malloc_arena_max is not None:
        os.environ["MALLOC_ARENA_MAX"] = str(arguments.malloc_arena_max)  # the server inherits it
    server = Server(arguments.fast_reruns == "true")
    server.start(port=arguments.port)
    try:
        idle = server.memory_kib().get("VmRSS", 0) / 1024
        samples, before, t_change, t_end = asyncio.run(
            _attack(server, arguments.view, query, values, arguments.interval, arguments.settle)
        )
        peak_rss = max(s[1] for s in samples)
        peak_threads = max(s[2] for s in samples)
        threads_before = samples[0][2]
        settled = samples[-1][1]
        arenas = os.environ.get("MALLOC_ARENA_MAX", "glibc's default")
        print(f"runner.fastReruns = {arguments.fast_reruns}, MALLOC_ARENA_MAX {arenas}")
        print(f"view {arguments.view}, {query}")
        print(f"{arguments.changes} changes of L, {arguments.interval} s apart")
        print(f"RSS idle at start {idle:.0f} MiB, after the first run {before:.0f} MiB")
        print(f"peak RSS {peak_rss:.0f} MiB, threads {threads_before} -> peak {peak_threads}")
        print(f"last run ended {t_end - t_change:.1f} s after the first change")
        print(f"RSS {arguments.settle:.0f} s after the last run: {settled:.0f} MiB")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
