"""CPU time a page load costs Chromium and the server, in headless Chromium.

Opens each view given (its path, "" for the default view) in one page, one after the other,
waits until every chart is drawn, and reports the wall time, the CPU time Chromium's processes
and the server used for the load (from /proc), and Chromium's CPU over the next 5 seconds
(from the settle, so it holds the page's last drawing after its charts: nothing animates, and
from 1 s after the settle it is 0.00 to 0.04 s). On a 2-core machine the test suite is bound
by the first of these: Chromium renders in software.

    .venv/bin/python benchmarks/page_cpu.py "" sinusoids similarity rope ""
    .venv/bin/python benchmarks/page_cpu.py --port 8620 "similarity?L=1000000&d=8192"

``--port`` starts the server on that loopback port (by default a free one).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import (  # noqa: E402
    CHROMIUM_ARGS,
    PAGE_HOOK_JS,
    VIEWPORT,
    AppPage,
    StreamlitServer,
    find_chromium,
)

IDLE_SECONDS = 5.0


def chromium_cpu_seconds() -> float:
    """User + system CPU time of every running Chromium process so far (from /proc)."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                name, fields = stat.read().rsplit(")", 1)
            if "chrom" not in name.rsplit("(", 1)[1]:
                continue
            fields = fields.split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


def main(views: list[str], port: int | None = None) -> None:
    from playwright.sync_api import sync_playwright

    server = StreamlitServer()
    with server.start(port=port), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(PAGE_HOOK_JS)
        page = context.new_page()
        page.set_default_timeout(60_000)
        app = AppPage(page, server)
        print("| view | load, wall | Chromium CPU | server CPU | Chromium CPU, 5 s idle |")
        print("|---|---:|---:|---:|---:|")
        for view in views:
            chromium, served, start = chromium_cpu_seconds(), server.cpu_seconds(), time.time()
            app.open(view)
            wall = time.time() - start
            chromium_load = chromium_cpu_seconds() - chromium
            server_load = server.cpu_seconds() - served
            idle_from = chromium_cpu_seconds()
            time.sleep(IDLE_SECONDS)
            idle = chromium_cpu_seconds() - idle_from
            print(
                f"| {view or '(default)'} | {wall:.2f} s | {chromium_load:.2f} s |"
                f" {server_load:.2f} s | {idle:.2f} s |"
            )
        assert app.problems() == [], app.problems()
        browser.close()


if __name__ == "__main__":
    arguments = sys.argv[1:]
    port = None
    if arguments[:1] == ["--port"]:
        port, arguments = int(arguments[1]), arguments[2:]
    main(arguments or ["", "sinusoids", "similarity", "rope", ""], port)
