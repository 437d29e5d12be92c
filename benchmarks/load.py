"""Load test: concurrent headless-browser sessions against a real Streamlit server.

Starts its own server (the same start/stop code as the browser tests, benchmarks/harness/),
opens ``--sessions`` pages in one headless Chromium, and for ``--seconds`` lets every page
change something about once per ``--interval``: alternately the preset (cycling through all
presets) and the view (cycling through all tabs). For each change it measures the time from the
user's input (the click, as seen by the page) to the last chart redrawn because of it (Plotly's
``plotly_afterplot``; on a view without charts, to the page having settled). It counts errors
(exceptions, error alerts, console errors, changes that never redrew) and samples the server's
memory (VmRSS, VmHWM) and CPU time from /proc.

    .venv/bin/python benchmarks/load.py --seconds 60 --sessions 8

Exits with status 1 if there was any error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dashboard.registry import VIEWS as VIEW_LIST  # noqa: E402
from dashboard.sidebar import PRESETS  # noqa: E402

VIEWS = {view.slug: view.label for view in VIEW_LIST}

from benchmarks.harness import (  # noqa: E402
    CHROMIUM_ARGS,
    PAGE_HOOK_JS,
    VIEWPORT,
    StreamlitServer,
    find_chromium,
)


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"preset": [], "view": []})
    exceptions: int = 0
    error_alerts: int = 0
    console_errors: int = 0
    timeouts: int = 0
    details: list[str] = field(default_factory=list)
    rss_samples_kib: list[int] = field(default_factory=list)
    load_seconds: list[float] = field(default_factory=list)
    without_charts: int = 0
    run_ends: list[float] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return self.exceptions + self.error_alerts + self.console_errors + self.timeouts

    def all_latencies(self) -> list[float]:
        return [x for values in self.latencies.values() for x in values]


#: From the user's click to the last chart redrawn because of it (a view without charts: to the
#: moment the page was seen settled, to the 50 ms polling).
LATENCY_JS = """() => {
  const pe = window.__pe, t = pe.lastInput, charts = pe.charts().length;
  const runEnd = pe.runEnds.find((end) => end > t);
  return [(charts ? pe.redrawnAt(t, true) : pe.settledAt) - t, charts,
          runEnd === undefined ? null : runEnd - t];
}"""


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


async def run_session(
    number: int,
    browser,
    url: str,
    clock: dict[str, Any],
    seconds: float,
    interval: float,
    timeout_ms: int,
    stats: Stats,
) -> None:
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(PAGE_HOOK_JS)
    page = await context.new_page()
    page.set_default_timeout(timeout_ms)
    console: list[str] = []
    page.on("console", lambda m: m.type == "error" and console.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))

    async def settle(since: float, before: str | None) -> None:
        """The page shows something else and its charts were redrawn (see ``pe.settled``),
        then quiet: no chart redrew for 300 ms (charts a change does not affect are not
        redrawn, so waiting for every chart would never end)."""
        await page.wait_for_function(
            "([since, before]) => window.__pe?.settled(since, before, before !== null)",
            arg=[since, before],
            polling=50,
            timeout=timeout_ms,
        )
        await page.wait_for_function("() => window.__pe.quiet(300)", polling=50, timeout=timeout_ms)

    async def load() -> None:
        await page.goto(url)
        await settle(-1, None)

    loading = time.monotonic()
    try:
        await load()
        stats.load_seconds.append(time.monotonic() - loading)
    except Exception as error:
        stats.timeouts += 1
        stats.details.append(f"session {number} did not load: {type(error).__name__}: {error}")
        await clock["ready"].wait()  # do not leave the other sessions waiting
        await context.close()
        return
    await clock["ready"].wait()  # every page has loaded: the measured part starts together
    if "deadline" not in clock:
        clock["cpu"] = clock["server"].cpu_seconds()
        clock["start"] = time.monotonic()
        clock["deadline"] = clock["start"] + seconds
    deadline = clock["deadline"]
    # Each session starts at a different place in the cycles, so the server sees a mix.
    presets = itertools.islice(itertools.cycle(PRESETS), number % len(PRESETS), None)
    views = itertools.islice(itertools.cycle(VIEWS.values()), number % len(VIEWS) + 1, None)
    sidebar = page.locator('[data-testid="stSidebar"]')
    preset_box = sidebar.locator('input[role="combobox"][aria-label="Preset"]')
    view_links = page.locator('[data-testid="stTopNavLink"], [data-testid="stSidebarNavLink"]')
    for step in itertools.count(number):
        if time.monotonic() >= deadline:
            break
        started = time.monotonic()
        kind = "preset" if step % 2 == 0 else "view"
        try:
            before = await page.evaluate("window.__pe.pageSignature()")
            if kind == "preset":
                current = await preset_box.input_value()
                target = next(p for p in presets if p != current)
                await preset_box.click()
                option = page.get_by_role("option", name=target, exact=True)
                since = await page.evaluate("performance.now()")
                await option.click()
            else:
                current = await page.evaluate("window.__pe.selectedView()")
                target = next(v for v in views if v != current)
                since = await page.evaluate("performance.now()")
                await view_links.filter(has_text=target).first.click()
            await settle(since, before)
            took, charts, run = await page.evaluate(LATENCY_JS)
            stats.latencies[kind].append(took)
            stats.without_charts += not charts
            if run is not None:
                stats.run_ends.append(run)
        except Exception as error:  # a change that never redrew: count it, reload, go on
            stats.timeouts += 1
            stats.details.append(f"session {number} {kind}: {type(error).__name__}: {error}")
            try:
                await load()
            except Exception as reload_error:
                stats.details.append(f"session {number} reload failed: {reload_error}")
                break
            continue
        problems = await page.evaluate("window.__pe.problems()")
        stats.exceptions += sum(p.startswith("exception") for p in problems)
        stats.error_alerts += sum(p.startswith("error alert") for p in problems)
        stats.details.extend(f"session {number} {kind} -> {target}: {p}" for p in problems)
        if console:
            stats.console_errors += len(console)
            stats.details.extend(f"session {number}: {c}" for c in console)
            console.clear()
        await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))
    await context.close()


async def sample_memory(server: StreamlitServer, stats: Stats, stop: asyncio.Event) -> None:
    while not stop.is_set():
        rss = server.memory_kib().get("VmRSS")
        if rss:
            stats.rss_samples_kib.append(rss)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.25)


async def main_async(args: argparse.Namespace) -> Stats:
    from playwright.async_api import async_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("Chromium not found (/usr/bin/chromium or `chromium` on PATH)")
    stats = Stats()
    with StreamlitServer() as server:
        idle = server.memory_kib().get("VmRSS", 0)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            stop = asyncio.Event()
            sampler = asyncio.create_task(sample_memory(server, stats, stop))
            # Sessions load the app first (not measured), then change things until the deadline.
            clock = {"ready": asyncio.Barrier(args.sessions), "server": server}
            await asyncio.gather(
                *(
                    run_session(
                        n,
                        browser,
                        server.url,
                        clock,
                        args.seconds,
                        args.interval,
                        args.timeout * 1000,
                        stats,
                    )
                    for n in range(args.sessions)
                )
            )
            elapsed = time.monotonic() - clock["start"]
            server_cpu = (server.cpu_seconds() - clock["cpu"]) / elapsed
            stop.set()
            await sampler
            peak = server.memory_kib()
            await browser.close()
        tracebacks = server.log_text().count("Traceback (most recent call last)")
    stats.details.extend(["server log has a traceback"] * tracebacks)
    stats.exceptions += tracebacks
    print_report(args, stats, elapsed, idle, peak, server_cpu)
    return stats


def print_report(
    args, stats: Stats, elapsed: float, idle_kib: int, peak: dict, server_cpu: float
) -> None:
    every = stats.all_latencies()
    sampled_peak = max(stats.rss_samples_kib, default=0)

    def ms(values: list[float], q: float) -> str:
        return f"{percentile(values, q):,.0f} ms" if values else "n/a"

    rows = [
        ("sessions × duration", f"{args.sessions} × {args.seconds:g} s (ran {elapsed:.1f} s)"),
        ("first page load (not measured)", f"{max(stats.load_seconds, default=0):.1f} s"),
        ("changes served", f"{len(every)} ({len(every) / elapsed:.2f}/s)"),
        (
            "  of which preset / view",
            f"{len(stats.latencies['preset'])} / {len(stats.latencies['view'])}",
        ),
        ("  of which on a view without charts", f"{stats.without_charts}"),
        ("change → redraw p50", ms(every, 50)),
        ("change → redraw p95", ms(every, 95)),
        ("change → redraw max", ms(every, 100)),
        (
            "  change → run finished p50 / p95",
            f"{ms(stats.run_ends, 50)} / {ms(stats.run_ends, 95)} "
            f"(script run as seen by the page; {len(stats.run_ends)} seen)",
        ),
        (
            "  preset changes p50 / p95",
            f"{ms(stats.latencies['preset'], 50)} / {ms(stats.latencies['preset'], 95)}",
        ),
        (
            "  view changes p50 / p95",
            f"{ms(stats.latencies['view'], 50)} / {ms(stats.latencies['view'], 95)}",
        ),
        (
            "errors",
            f"{stats.errors} (exceptions {stats.exceptions}, error alerts "
            f"{stats.error_alerts}, console {stats.console_errors}, "
            f"no redraw {stats.timeouts})",
        ),
        (
            "server RSS idle → peak (sampled)",
            f"{idle_kib / 1024:,.0f} → {sampled_peak / 1024:,.0f} MiB",
        ),
        ("server peak RSS (VmHWM)", f"{peak.get('VmHWM', 0) / 1024:,.0f} MiB"),
        ("server CPU (1.0 = one core)", f"{server_cpu:.2f}"),
        ("machine", f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end"),
    ]
    width = max(len(name) for name, _ in rows)
    print()
    print(f"| {'metric':<{width}} | value |")
    print(f"| {'-' * width} | ----- |")
    for name, value in rows:
        print(f"| {name:<{width}} | {value} |")
    if stats.details:
        print("\nErrors:")
        for line in stats.details[:50]:
            print(" -", line[:400])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="how long to load (60)")
    parser.add_argument("--sessions", type=int, default=8, help="concurrent browser pages (8)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between changes (1)")
    parser.add_argument("--timeout", type=float, default=60, help="max seconds per redraw (60)")
    args = parser.parse_args()
    stats = asyncio.run(main_async(args))
    return 1 if stats.errors else 0


if __name__ == "__main__":
    sys.exit(main())
