"""A classroom at the protocol level: many sessions changing parameters at once (issues 14, 16).

Starts its own server on the loopback address and opens ``--sessions`` sessions the way the
browser does, over Streamlit's WebSocket (``/_stcore/stream``, protobuf messages), without a
browser: the load generator itself costs little, so the server's share of the two cores is what
is measured. Each session opens a view of the registry (drawn at random, seeded) and then, every
``--interval`` seconds on average (uniform between half and one and a half times it), changes
the number of positions L, as a student moving the sidebar does. The latency of a change is the
time from sending it to the server's "script finished" message: the server's work and the
transfer, not the browser's drawing (``benchmarks/browser.py`` measures that). Errors are
exceptions shown in the app, runs that did not finish, and lost connections.

    .venv/bin/python benchmarks/classroom.py --sessions 30 --seconds 300
    .venv/bin/python benchmarks/classroom.py --sweep 1,4,8,16,30 --seconds 60
    .venv/bin/python benchmarks/classroom.py --sessions 16 --seconds 60 --servers 2

``--servers 2`` starts two server processes and keeps each session on one of them, as a proxy
with sticky sessions does (docs/deploy.md).

``--top-of-range`` opens every session at L 1,000,000 and d_model 8,192 (on ``--view``, or a
view drawn at random) and changes L among fresh values near the top, as the attack of issue 40
did; the servers' RSS before and after (``--settle`` seconds after the last change) is printed
beside the table.

    .venv/bin/python benchmarks/classroom.py --sessions 6 --seconds 60 --top-of-range \
        --view similarity --port 8770

``--change d`` moves d_model instead of L (with ``--top-of-range``: fresh even values from 4,096
to 8,192 at L 1,000,000), the change that a cache of the L-independent work cannot serve.

Bounded: at most 60 sessions, 4 servers and 900 seconds a run; only the servers it starts (on
the loopback address) are contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import StreamlitServer  # noqa: E402
from benchmarks.protocol import connect, rerun_message, run  # noqa: E402
from dashboard import registry  # noqa: E402

MAX_SESSIONS, MAX_SECONDS = 60, 900
#: The values of L a session moves between: a few shared by everyone (cached after the first
#: run) and fresh ones (computed).
SHARED_L = (100, 512, 2048, 10_000)


@dataclass
class Results:
    latencies: list[float] = field(default_factory=list)  # seconds, one per change
    opens: list[float] = field(default_factory=list)  # seconds, first run of each session
    errors: list[str] = field(default_factory=list)


#: The top of the sidebar's ranges (--top-of-range).
TOP_QUERY = "L=1000000&d=8192"


async def _session(
    url: str,
    n: int,
    deadline: float,
    interval: float,
    results: Results,
    top: bool = False,
    view_slug: str | None = None,
    moved: str = "L",
) -> None:
    rng = random.Random(n)
    view = registry.BY_SLUG[view_slug] if view_slug else rng.choice(registry.VIEWS)
    page = "" if view == registry.DEFAULT else view.slug
    query = TOP_QUERY if top else ""
    try:
        async with connect(url) as socket:
            first = await run(socket, rerun_message(query, page))
            results.opens.append(first.seconds)
            results.errors += first.errors
            widget = next(w for w in first.widgets if w.endswith(f"-{moved}"))
            while time.perf_counter() < deadline:
                await asyncio.sleep(interval * rng.uniform(0.5, 1.5))
                if moved == "d":
                    value = rng.randrange(4096, 8193, 2) if top else rng.randrange(2, 1025, 2)
                elif top:
                    value = rng.randint(900_000, 1_000_000)  # fresh: computed, not cached
                else:
                    value = rng.choice([*SHARED_L, rng.randint(2, 50_000)])
                change = await run(socket, rerun_message(query, page, {widget: value}))
                results.latencies.append(change.seconds)
                results.errors += change.errors
    except Exception as error:  # a lost connection or a refused one is an error of the run
        results.errors.append(f"session {n}: {type(error).__name__}: {error}")


async def _classroom(
    servers: list,
    sessions: int,
    seconds: float,
    interval: float,
    top: bool = False,
    view: str | None = None,
    moved: str = "L",
) -> dict:
    """``sessions`` sessions for ``seconds``, session ``n`` on server ``n % len(servers)`` (and
    only there, as a proxy with sticky sessions sends it)."""
    results = Results()
    rss: list[float] = []
    deadline = time.perf_counter() + seconds

    def cpu() -> float:
        return sum(server.cpu_seconds() for server in servers)

    cpu_before = cpu()

    async def sample_memory() -> None:
        while time.perf_counter() < deadline:
            rss.append(sum(s.memory_kib().get("VmRSS", 0) for s in servers) / 1024)
            await asyncio.sleep(1.0)

    started = time.perf_counter()
    await asyncio.gather(
        sample_memory(),
        *(
            _session(
                servers[n % len(servers)].url, n, deadline, interval, results, top, view, moved
            )
            for n in range(sessions)
        ),
    )
    wall = time.perf_counter() - started
    runs = len(results.latencies) + len(results.opens)
    latencies = sorted(results.latencies) or [float("nan")]
    return {
        "sessions": sessions,
        "changes": len(results.latencies),
        "p50": statistics.median(latencies),
        "p95": latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
        "max": latencies[-1],
        "open_p50": statistics.median(results.opens) if results.opens else float("nan"),
        "cpu_per_run": (cpu() - cpu_before) / max(runs, 1),
        "cpu_share": (cpu() - cpu_before) / wall,
        "rss_max": max(rss, default=0.0),
        "rss_end": rss[-1] if rss else 0.0,
        "errors": results.errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--sweep", help="comma-separated session counts, one run each")
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--servers", type=int, default=1, help="server processes (at most 4)")
    parser.add_argument("--top-of-range", action="store_true", help="L 1,000,000, d_model 8,192")
    parser.add_argument("--view", choices=[v.slug for v in registry.VIEWS], default=None)
    parser.add_argument("--settle", type=float, default=30.0, help="seconds before the last RSS")
    parser.add_argument("--port", type=int, default=None, help="first server's port (then +1)")
    parser.add_argument("--change", choices=("L", "d"), default="L", help="the parameter moved")
    arguments = parser.parse_args()
    counts = (
        [int(c) for c in arguments.sweep.split(",")] if arguments.sweep else [arguments.sessions]
    )
    if max(counts) > MAX_SESSIONS or arguments.seconds > MAX_SECONDS:
        parser.error(f"at most {MAX_SESSIONS} sessions and {MAX_SECONDS} seconds a run")
    if not 1 <= arguments.servers <= 4:
        parser.error("1 to 4 servers")
    print(
        "| servers | sessions | changes | p50 (s) | p95 (s) | max (s) | first run p50 (s) | "
        "server CPU per run (s) | server CPU (cores) | RSS max (MiB) | errors |\n"
        + "|---" * 11
        + "|",
        flush=True,
    )
    for count in counts:
        with contextlib.ExitStack() as stack:
            servers = []
            for i in range(arguments.servers):
                server = StreamlitServer()
                stack.callback(server.stop)
                servers.append(server.start(port=arguments.port + i if arguments.port else None))
            idle = sum(s.memory_kib().get("VmRSS", 0) for s in servers) / 1024
            row = asyncio.run(
                _classroom(
                    servers,
                    count,
                    arguments.seconds,
                    arguments.interval,
                    arguments.top_of_range,
                    arguments.view,
                    arguments.change,
                )
            )
            time.sleep(arguments.settle)
            settled = sum(s.memory_kib().get("VmRSS", 0) for s in servers) / 1024
        print(
            f"| {arguments.servers} | {row['sessions']} | {row['changes']} | {row['p50']:.3f} | "
            f"{row['p95']:.3f} | "
            f"{row['max']:.3f} | {row['open_p50']:.2f} | {row['cpu_per_run']:.3f} | "
            f"{row['cpu_share']:.2f} | {row['rss_max']:.0f} | {len(row['errors'])} |",
            flush=True,
        )
        print(
            f"    RSS idle {idle:.0f} MiB, max {row['rss_max']:.0f} MiB, "
            f"{arguments.settle:.0f} s after the last change {settled:.0f} MiB",
            flush=True,
        )
        for error in row["errors"][:5]:
            print(f"    {error}", flush=True)


if __name__ == "__main__":
    main()
