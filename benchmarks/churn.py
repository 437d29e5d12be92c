"""Server memory under churn: many distinct parameter sets across every view (issue 16).

Starts its own server on the loopback address, then ``--sessions`` clients at once open
``--links`` links in all, every one distinct: a view of the registry (the RoPE lab and Distance
included) with parameters drawn at random (seeded). Each link is opened as a person opening it
does, a new session at the protocol level (``benchmarks/protocol.py``: the script runs with the
link's query string; no browser, so two cores go to the server). After each link the server's
resident memory (VmRSS) is sampled. Prints the RSS every 25 links and a summary: the caches are
bounded by entries (and st.cache_data by bytes), so the RSS should level off rather than grow
with the number of links.

    .venv/bin/python benchmarks/churn.py --links 500 --sessions 4
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import StreamlitServer  # noqa: E402
from benchmarks.protocol import connect, rerun_message, run  # noqa: E402
from dashboard import registry  # noqa: E402
from dashboard.views import rope as rope_view  # noqa: E402

MAX_LINKS = 2000


def random_link(rng: random.Random, seen: set[str]) -> tuple[str, str]:
    """A view (its page name) and a query string not asked for before."""
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
        if view == "distance":
            query["dist_qk"] = rng.choice(["ones", "random", "one pair"])
            query["alibi_heads"] = rng.randint(1, 256)
            query["t5_buckets"] = rng.choice([32, 64, rng.randint(4, 1024)])
            query["t5_max"] = rng.choice([128, rng.randint(600, 100_000)])
            query["mm_t"] = rng.randint(1, 16)
            query["mm_h"], query["mm_w"] = 2 * rng.randint(1, 32), 2 * rng.randint(1, 32)
        page = "" if view == registry.DEFAULT.slug else view
        link = (page, urlencode(query))
        if link not in seen:
            seen.add(link)
            return link


def ascii_plot(values: list[float], *, step: int = 25, height: int = 8) -> str:
    """RSS samples (one every ``step`` links, from link 0) as a text chart for the docs."""
    top = max(values)
    rows = []
    for level in range(height, 0, -1):
        threshold = top * (level - 0.5) / height
        line = "".join(
            " *" if value >= threshold and (value < top * (level + 0.5) / height) else "  "
            for value in values
        )
        rows.append(f"{top * level / height:7.0f} |{line}".rstrip())
    rows.append("        +" + "--" * len(values) + "  links")
    labels = "".join(f"{i * step:<10d}" for i in range(0, len(values), 5))
    rows.append(("         " + labels).rstrip())
    return "\n".join(rows)


async def _churn(server, links: list[tuple[str, str]], sessions: int) -> dict:
    queue = list(reversed(links))
    samples, seconds, errors = [], [], []

    async def client() -> None:
        while queue:
            page, query = queue.pop()
            try:
                async with connect(server.url) as socket:
                    result = await run(socket, rerun_message(query, page))
                seconds.append(result.seconds)
                errors.extend(f"{page}?{query}: {e}" for e in result.errors)
            except Exception as error:  # a lost or refused connection is an error of the run
                errors.append(f"{page}?{query}: {type(error).__name__}: {error}")
            samples.append(server.memory_kib().get("VmRSS", 0) / 1024)
            if len(samples) % 25 == 0:
                print(f"{len(samples):5d} links: RSS {samples[-1]:.0f} MiB", flush=True)

    await asyncio.gather(*(client() for _ in range(sessions)))
    return {"samples": samples, "seconds": seconds, "errors": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--links", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    if not 1 <= arguments.links <= MAX_LINKS or not 1 <= arguments.sessions <= 60:
        parser.error(f"1 to {MAX_LINKS} links and 1 to 60 sessions")
    rng, seen = random.Random(arguments.seed), set()
    links = [random_link(rng, seen) for _ in range(arguments.links)]
    with StreamlitServer() as server:
        start_rss = server.memory_kib().get("VmRSS", 0) / 1024
        print(f"server RSS at start: {start_rss:.0f} MiB", flush=True)
        started = time.perf_counter()
        result = asyncio.run(_churn(server, links, arguments.sessions))
        elapsed = time.perf_counter() - started
        peak = server.memory_kib().get("VmHWM", 0) / 1024
    samples, seconds = result["samples"], sorted(result["seconds"])
    half = len(samples) // 2
    print(
        f"\n{arguments.links} distinct links over {arguments.sessions} sessions in {elapsed:.0f} s"
        f" (median {seconds[len(seconds) // 2]:.2f} s a link, slowest {seconds[-1]:.1f} s);"
        f" {len(result['errors'])} errors; RSS start {start_rss:.0f} MiB, after half the links "
        f"{samples[half - 1]:.0f} MiB, at the end {samples[-1]:.0f} MiB, max {max(samples):.0f}"
        f" MiB, peak (VmHWM) {peak:.0f} MiB"
    )
    for error in result["errors"][:10]:
        print(f"    {error}")
    print("\nRSS (MiB) against links opened:")
    print(ascii_plot([start_rss, *samples[24::25]]))


if __name__ == "__main__":
    main()
