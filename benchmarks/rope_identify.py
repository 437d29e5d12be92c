"""identify_rope on a 131,072 x 128 cos/sin cache (float32, transformers' layout): time (best of
3) without and with a config, and on bfloat16 values; the issue's target is well under a second.
Then on vectors before and after rotation (q and q_embed, float32).
Wall time and this process's CPU time (``time.process_time``: on a shared machine the wall time
includes waiting for a core, the CPU time does not).

    .venv/bin/python benchmarks/rope_identify.py
"""

from __future__ import annotations

import time

import numpy as np

import pe_core

POSITIONS = 131_072
CONFIG = {
    "model_type": "llama",
    "head_dim": 128,
    "rope_theta": 500_000.0,
    "max_position_embeddings": 131_072,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
}


def best_of(count: int, function) -> tuple[float, float, object]:
    """Best wall time, best CPU time (seconds) and the result."""
    walls, cpus, result = [], [], None
    for _ in range(count):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return min(walls), min(cpus), result


def main() -> None:
    rope = pe_core.rope_from_config(CONFIG)
    cos, sin = pe_core.rope_cos_sin(POSITIONS, rope, dtype=np.float32)
    cos, sin = cos.copy(), sin.copy()  # two arrays, as a dump gives them
    bf16 = [np.asarray(pe_core.quantize(a, "bfloat16"), dtype=np.float32) for a in (cos, sin)]
    cases = {
        "float32, no config": lambda: pe_core.identify_rope(cos, sin),
        "float32, with config": lambda: pe_core.identify_rope(cos, sin, config=CONFIG),
        "bfloat16 values, with config": lambda: pe_core.identify_rope(*bf16, config=CONFIG),
    }
    print(f"identify_rope, {POSITIONS:,} x {cos.shape[1]} cache (best of 3)")
    report(cases)
    # Vectors before and after rotation: 8 heads at 2,048 positions (a 16 MB float32 dump of
    # q and q_embed, the Check page's largest kind), and one head at 16,384 positions.
    rng = np.random.default_rng(0)
    vectors = {}
    for heads, length in ((8, 2048), (1, 16_384)):
        q = rng.standard_normal((heads, length, 128)).astype(np.float32)
        q_embed = pe_core.apply_rope(q, length, rope).astype(np.float32)
        vectors[f"{heads} heads x {length:,}, config"] = lambda q=q, q_embed=q_embed: (
            pe_core.identify_rope(before=q, after=q_embed, config=CONFIG)
        )
    print("identify_rope on vectors before and after rotation, float32 (best of 3)")
    report(vectors)


def report(cases) -> None:
    for name, run in cases.items():
        wall, cpu, found = best_of(3, run)
        verdict = found.config_matches if found.config_matches is not None else found.matches
        print(
            f"  {name:32s} wall {wall * 1000:7.1f} ms  cpu {cpu * 1000:7.1f} ms  "
            f"{found.rope_type}, matches={verdict}"
        )


if __name__ == "__main__":
    main()
