"""Server memory under churn: many distinct parameter sets across every view (issue 16).

Starts its own server, then ``--sessions`` browser pages (one headless Chromium) take turns
opening links, each a view of the registry (the RoPE lab included) with parameters drawn at
random (seeded), ``--links`` links in all, every one distinct. After each link is drawn the
server's resident memory (VmRSS) is sampled. Prints the RSS every 25 links and a summary: the
caches are bounded by entries (and st.cache_data by bytes), so the RSS should level off rather
than grow with the number of links.

    .venv/bin/python benchmarks/churn.py --links 300 --sessions 2
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dashboard import registry  # noqa: E402
from dashboard.views import rope as rope_view  # noqa: E402
from tests.e2e import CHROMIUM_ARGS, PAGE_HOOK_JS, VIEWPORT, StreamlitServer, find_chromium  # noqa: E402


def random_link(rng: random.Random, seen: set[str]) -> str:
    """A view and parameters not asked for before."""
    while True:
        view = rng.choice(registry.VIEWS).slug
        query = {
            "L": rng.choice([10, 100, 2048, 50_000, 1_000_000, rng.randint(2, 1_000_000)]),
            "d": rng.choice([1, 7, 64, 512, 2048, 8192, 2 * rng.randint(1, 4096)]),
            "base": rng.choice([100, 10000, 500000, round(10 ** rng.uniform(1, 9))]),
            "conv": rng.choice(["vaswani", "tensor2tensor", "split"]),
        }
        if view == "rope":
            query["rope_model"] = rng.choice(
                [rope_view.SIDEBAR, *rope_view.PRESETS, rope_view.SIDEBAR]
            )
            query["rope_prec"] = rng.choice(["float32", "bfloat16", "float16"])
        path = "" if view == registry.DEFAULT.slug else view
        link = f"{path}?{urlencode(query)}"
        if link not in seen:
            seen.add(link)
            return link


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--links", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rng, seen = random.Random(arguments.seed), set()
    samples = []
    with StreamlitServer() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(PAGE_HOOK_JS)
        pages = [context.new_page() for _ in range(arguments.sessions)]
        start_rss = server.memory_kib().get("VmRSS", 0) / 1024
        print(f"server RSS at start: {start_rss:.0f} MiB", flush=True)
        started, errors = time.perf_counter(), 0
        for n in range(arguments.links):
            page = pages[n % len(pages)]
            page.goto(f"{server.url}/{random_link(rng, seen)}")
            page.wait_for_function(
                "() => window.__pe && window.__pe.settled(-1, null, false)",
                polling=100,
                timeout=180_000,
            )
            errors += len(page.evaluate("window.__pe.problems()"))
            rss = server.memory_kib().get("VmRSS", 0) / 1024
            samples.append(rss)
            if (n + 1) % 25 == 0:
                print(f"{n + 1:5d} links: RSS {rss:.0f} MiB", flush=True)
        elapsed = time.perf_counter() - started
        browser.close()
        peak = server.memory_kib().get("VmHWM", 0) / 1024
    half = len(samples) // 2
    print(
        f"\n{arguments.links} distinct links over {arguments.sessions} sessions in {elapsed:.0f} s;"
        f" {errors} page problems; RSS start {start_rss:.0f} MiB, after half the links "
        f"{samples[half - 1]:.0f} MiB, at the end {samples[-1]:.0f} MiB, max {max(samples):.0f}"
        f" MiB, peak (VmHWM) {peak:.0f} MiB"
    )


if __name__ == "__main__":
    main()
