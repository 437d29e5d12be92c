"""Server memory under concurrent heavy requests: peak RSS of the Streamlit server.

Starts its own server (benchmarks/harness/), records its resident memory, then opens
``--sessions`` pages at once in one headless Chromium, each on the same heavy link with its own
seed (so no cache is shared), waits until every page has drawn its charts, and reports the
server's RSS and peak RSS (VmHWM) before and after. The default link is the attack of issue 18:
the Embeddings view at d_model 8192 with a batch of 16 random sequences of 256 tokens and
dropout.

    .venv/bin/python benchmarks/memory.py --sessions 6
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import CHROMIUM_ARGS, PAGE_HOOK_JS, VIEWPORT, StreamlitServer, find_chromium  # noqa: E402

HEAVY = "?view=embeddings&d=8192&emb_mode=random&emb_batch=16&emb_seq=256&emb_dropout=0.5"


async def open_pages(url: str, sessions: int, timeout_ms: int) -> list[float]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=find_chromium(), args=CHROMIUM_ARGS
        )
        try:
            context = await browser.new_context(viewport=VIEWPORT)
            await context.add_init_script(PAGE_HOOK_JS)
            pages = [await context.new_page() for _ in range(sessions)]

            async def load(page, seed: int) -> float:
                start = time.perf_counter()
                await page.goto(f"{url}&emb_seed={seed}")
                await page.wait_for_function(
                    "() => window.__pe && window.__pe.settled(-1, null, false)",
                    polling=100,
                    timeout=timeout_ms,
                )
                problems = await page.evaluate("window.__pe.problems()")
                if problems:
                    raise RuntimeError(f"seed {seed}: {problems}")
                return time.perf_counter() - start

            return await asyncio.gather(*(load(page, 1000 + j) for j, page in enumerate(pages)))
        finally:
            await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--query", default=HEAVY, help="the link each page opens (+ a seed)")
    args = parser.parse_args()
    if find_chromium() is None:
        sys.exit("Chromium not found: apt-get install chromium")
    with StreamlitServer() as server:
        time.sleep(1.0)
        before = server.memory_kib()
        seconds = asyncio.run(open_pages(server.url + "/" + args.query, args.sessions, 300_000))
        after = server.memory_kib()
    mib = {key: value / 1024 for key, value in after.items()}
    print(f"link: {args.query} (+ emb_seed per page), {args.sessions} sessions at once")
    print(f"server RSS before: {before.get('VmRSS', 0) / 1024:,.0f} MiB")
    print(f"server RSS after:  {mib.get('VmRSS', 0):,.0f} MiB")
    print(f"server peak RSS:   {mib.get('VmHWM', 0):,.0f} MiB")
    print(f"page load to last chart: {min(seconds):.1f} to {max(seconds):.1f} s")


if __name__ == "__main__":
    main()
