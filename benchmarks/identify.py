"""identify_encoding and diagnose_encoding on the tables the Check view gets, up to the largest
upload (4,194,304 values): time (best of 3) and peak memory (tracemalloc, the input excluded).

    .venv/bin/python benchmarks/identify.py

Run it from another checkout (``PYTHONPATH=/path/to/old/checkout``) for a before/after table
within one run of the machine.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

import pe_core


def cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "vaswani 2,048 x 512, float32": pe_core.sinusoidal_encoding(2048, 512).astype(np.float32),
        "tensor2tensor 4,096 x 64, float16": pe_core.sinusoidal_encoding(
            4096, 64, convention="tensor2tensor"
        ).astype(np.float16),
        "noise 2,048 x 512, float64": rng.uniform(-1, 1, (2048, 512)),
        "noise 8,192 x 512, float32 (largest upload)": rng.uniform(-1, 1, (8192, 512)).astype(
            np.float32
        ),
    }


def main() -> None:
    print("| table | diagnose_encoding, best of 3 | peak memory |")
    print("|---|---:|---:|")
    for name, table in cases().items():
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            pe_core.diagnose_encoding(table)
            best = min(best, time.perf_counter() - start)
        tracemalloc.start()
        pe_core.diagnose_encoding(table)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"| {name} | {best * 1000:,.0f} ms | {peak / 2**20:,.0f} MiB |")


if __name__ == "__main__":
    main()
