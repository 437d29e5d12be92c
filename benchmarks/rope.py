"""Benchmark of the RoPE cos/sin cache: pe_core against the plain formula, ratios within one run.

    .venv/bin/python benchmarks/rope.py

The cache of 131,072 positions x head_dim 128 (Llama 3.1's context), as Hugging Face's rotary
embedding returns it: ``cos`` and ``sin`` of ``cat(freqs, freqs)``. Three ways:

- memory write: ``np.empty`` + fill of the same two arrays (the floor);
- plain formula: ``np.cos(np.outer(k, inv_freq))`` and ``np.sin(...)``, in float64 and in
  float32 (the float32 one is what a float32 framework computes);
- ``pe_core.rope_cos_sin``: exact (the phasor kernel), written straight into the output dtype.

Errors are the largest absolute difference from the float64 cache of pe_core (exact to ~1e-16),
so the float32 rows show how far a float32 angle drifts at long context.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pe_core

L, HEAD_DIM, REPEATS = 131_072, 128, 5


def median_time(function) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rope = pe_core.rope_frequencies(HEAD_DIM, base=500_000.0)
    positions = np.arange(L)

    def plain(dtype):
        k = positions.astype(dtype)[:, None]
        freqs = k * rope.inv_freq.astype(dtype)
        emb = np.concatenate([freqs, freqs], axis=1)
        return np.cos(emb), np.sin(emb)

    def write(dtype):
        out = np.empty((L, 2 * HEAD_DIM), dtype=dtype)
        out.fill(0.5)
        return out

    exact_cos, exact_sin = pe_core.rope_cos_sin(L, rope, dtype=np.float64)
    rows = []
    for dtype in (np.float64, np.float32):
        floor = median_time(lambda dtype=dtype: write(dtype))
        for name, function in (
            ("plain formula", lambda dtype=dtype: plain(dtype)),
            (
                "pe_core.rope_cos_sin",
                lambda dtype=dtype: pe_core.rope_cos_sin(L, rope, dtype=dtype),
            ),
        ):
            seconds = median_time(function)
            cos, sin = function()
            error = max(
                float(np.max(np.abs(cos.astype(np.float64) - exact_cos))),
                float(np.max(np.abs(sin.astype(np.float64) - exact_sin))),
            )
            rows.append((np.dtype(dtype).name, name, seconds, seconds / floor, error))
    print(f"RoPE cos/sin cache, {L:,} positions x head_dim {HEAD_DIM} (base 500,000)")
    print(f"{'dtype':8} {'method':22} {'median s':>9} {'x memory write':>15} {'max abs error':>14}")
    for dtype, name, seconds, ratio, error in rows:
        print(f"{dtype:8} {name:22} {seconds:9.3f} {ratio:15.2f} {error:14.2e}")


if __name__ == "__main__":
    main()
