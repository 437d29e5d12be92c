"""check_gguf on corpus files against the config each was converted from: CPU seconds per check
(median of the rounds), with and without transformers' own float32 errors.

    .venv/bin/python benchmarks/gguf_check.py [--rounds 5] [--root A --root B]

With two ``--root`` checkouts the rounds alternate between them (each round a fresh process per
checkout, every file checked once after a warm-up check), so the ratio of the two columns is
measured within one run of this shared, noisy machine. CPU time, not wall time: another
process on the machine slows a check down but does not bill it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ["gemma3-4b.gguf", "qwen2.5-7b-yarn.gguf", "llama3.1-8b.gguf", "phi3.5-longrope.gguf"]

#: Run in a fresh interpreter inside a checkout: prints {file: [cpu without, cpu with]}.
_ONE_ROUND = """
import json, sys, time
sys.path.insert(0, "tests/core")
from pe_core import check_gguf, read_gguf
import test_gguf
out = {}
for name in sys.argv[1:]:
    meta, config = read_gguf(test_gguf.CORPUS / name), test_gguf.config_of(name)
    check_gguf(meta, config)  # warm-up: imports, libm, caches
    times = []
    for with_hf in (False, True):
        start = time.process_time()
        check_gguf(meta, config, with_transformers_error=with_hf)
        times.append(time.process_time() - start)
    out[name] = times
print(json.dumps(out))
"""


def one_round(root: Path, files: list[str]) -> dict[str, list[float]]:
    done = subprocess.run(
        [sys.executable, "-c", _ONE_ROUND, *files],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--root", action="append", type=Path, help="a checkout (repeatable)")
    parser.add_argument("files", nargs="*", default=FILES)
    args = parser.parse_args()
    roots = args.root or [ROOT]
    runs = {root: [] for root in roots}
    for _ in range(args.rounds):
        for root in roots:
            runs[root].append(one_round(root, args.files))
    header = " | ".join(f"{root.name}: without / with transformers' errors" for root in roots)
    print(f"| file | {header} |")
    print("|---|" + "---:|" * len(roots))
    for name in args.files:
        cells = []
        for root in roots:
            without, with_hf = (
                statistics.median(run[name][k] for run in runs[root]) for k in (0, 1)
            )
            cells.append(f"{without:.2f} / {with_hf:.2f} s")
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
