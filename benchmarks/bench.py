"""Benchmark of pe_core and the dashboard: one table per section, ratios within one run.

Run from the repository root:

    .venv/bin/python benchmarks/bench.py            # everything, about 3 minutes
    .venv/bin/python benchmarks/bench.py --quick    # fewer repeats
    .venv/bin/python benchmarks/bench.py --write docs/benchmarks.md

Timings are medians over repeats; machines here are shared and noisy, so compare ratios within
one run (each row's method against the memory-write reference or the standard formula measured
in the same run), not absolute times across runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pe_core  # noqa: E402

L, D = 100_000, 1024
SAMPLE_ROWS = np.arange(0, L, 97)


def median_time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p, e)`` with ``p = fl(a * b)`` and ``p + e == a * b`` exactly (Dekker 1971). Written
    here, not imported from pe_core's kernels: an oracle does not reuse the code it checks."""

    def split(x):
        scaled = 134217729.0 * x  # 2**27 + 1
        high = scaled - (scaled - x)
        return high, x - high

    product = a * b
    (a_high, a_low), (b_high, b_low) = split(a), split(b)
    error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    return product, error


def exact_rows(rows: np.ndarray, d_model: int) -> np.ndarray | None:
    """Extended-precision oracle for rows of the vaswani encoding (None without long double)."""
    if np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps:
        return None
    w = pe_core.frequencies(d_model)
    p, e = two_product(rows.astype(np.float64)[:, None], w[None, :])
    p, e = p.astype(np.longdouble), e.astype(np.longdouble)
    out = np.empty((rows.size, d_model), dtype=np.longdouble)
    out[:, 0::2] = np.sin(p) * np.cos(e) + np.cos(p) * np.sin(e)
    out[:, 1::2] = np.cos(p) * np.cos(e) - np.sin(p) * np.sin(e)
    return out


def standard(dtype):
    """The textbook vectorized formula: angles k * w in ``dtype``, then sin and cos."""

    def run():
        positions = np.arange(L, dtype=dtype)[:, None]
        w = pe_core.frequencies(D).astype(dtype)
        angles = positions * w
        out = np.empty((L, D), dtype=dtype)
        out[:, 0::2] = np.sin(angles)
        out[:, 1::2] = np.cos(angles)
        return out

    return run


def memory_write(dtype):
    def run():
        out = np.empty((L, D), dtype=dtype)
        out.fill(0.5)
        return out

    return run


def single_threaded(function):
    """``function`` run on one core (pe_core writes large outputs with as many threads as the
    process may use cores: os.sched_getaffinity)."""

    def run():
        if not hasattr(os, "sched_setaffinity"):  # not on Linux: as many threads as cores
            return function()
        saved = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(saved)})
        try:
            return function()
        finally:
            os.sched_setaffinity(0, saved)

    return run


def table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    """Markdown table; ``align`` has one letter per column, l (left) or r (right)."""
    rule = ["---:" if a == "r" else "---" for a in align]
    return ["| " + " | ".join(cells) + " |" for cells in [header, rule, *rows]]


def encoding_section(repeats: int) -> list[str]:
    oracle = exact_rows(SAMPLE_ROWS, D)

    def error(result):
        if oracle is None:
            return "n/a"
        return f"{float(np.max(np.abs(result[SAMPLE_ROWS] - oracle))):.1e}"

    def pe_core_float32():
        return pe_core.sinusoidal_encoding(L, D, dtype=np.float32)

    small_l, small_d = 2000, 64
    repeats_loop = max(1, repeats // 2)
    loop_time = median_time(lambda: pe_core.reference_encoding(small_l, small_d), repeats_loop)
    scaled = loop_time * (L * D) / (small_l * small_d)
    write = "memory write (np.empty + fill)"
    results = {}
    for name, dtype, function in [
        (write, np.float64, memory_write(np.float64)),
        ("standard formula", np.float64, standard(np.float64)),
        ("pe_core", np.float64, lambda: pe_core.sinusoidal_encoding(L, D)),
        (
            "pe_core, 1 thread",
            np.float64,
            single_threaded(lambda: pe_core.sinusoidal_encoding(L, D)),
        ),
        (write, np.float32, memory_write(np.float32)),
        ("standard formula", np.float32, standard(np.float32)),
        ("pe_core", np.float32, pe_core_float32),
        ("pe_core, 1 thread", np.float32, single_threaded(pe_core_float32)),
    ]:
        results[(name, np.dtype(dtype).name)] = (median_time(function, repeats), function())
    size = f"{L:,} × {D}"
    rows = [
        [
            f"naive Python loop (reference_encoding) on {small_l} × {small_d}, scaled",
            "float64",
            size,
            f"{scaled:.1f} s",
            f"{scaled / results[(write, 'float64')][0]:.0f}",
            f"{results[('standard formula', 'float64')][0] / scaled:.3f}",
            "(same formula)",
        ]
    ]
    for (name, dtype), (seconds, result) in results.items():
        rows.append(
            [
                name,
                dtype,
                size,
                f"{seconds * 1e3:.1f} ms",
                f"{seconds / results[(write, dtype)][0]:.2f}",
                "" if name == write else f"{results[('standard formula', dtype)][0] / seconds:.1f}",
                "" if name == write else error(result),
            ]
        )
    header = [
        "method",
        "dtype",
        "size",
        "median time",
        "× memory write",
        "speed-up over standard",
        "max abs error",
    ]
    return table(header, rows, "lllrrrr")


def analysis_section(repeats: int) -> list[str]:
    offsets = np.arange(L)
    w = pe_core.frequencies(D)

    def direct():
        out = np.empty(L)
        for first in range(0, L, 1000):
            chunk = offsets[first : first + 1000].astype(np.float64)
            out[first : first + 1000] = np.cos(chunk[:, None] * w[None, :]).sum(axis=1)
        return out

    fast_time = median_time(lambda: pe_core.offset_similarity(offsets, D, kind="dot"), repeats)
    direct_time = median_time(direct, max(1, repeats // 2))
    fast = pe_core.offset_similarity(offsets, D, kind="dot")
    sample = offsets[::97].astype(np.longdouble)
    if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps:
        reference = np.cos(sample[:, None] * w.astype(np.longdouble)[None, :]).sum(axis=1)
        profile_error = f"{float(np.max(np.abs(fast[::97] - reference))) / D:.1e}"
    else:
        profile_error = "n/a"

    report_time = median_time(lambda: pe_core.uniqueness_report(1_000_000, 512), repeats)
    tracemalloc.start()
    pe_core.uniqueness_report(1_000_000, 512)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    bf16_time = median_time(
        lambda: pe_core.uniqueness_report(L, D, precision="bfloat16", cast="outputs"), repeats
    )
    rows = [
        [
            "offset profile, closed form (matrix products)",
            f"{L:,} offsets, d_model {D}",
            f"{fast_time * 1e3:.1f} ms",
            f"{direct_time / fast_time:.0f}× faster than summing cos directly "
            f"({direct_time * 1e3:.0f} ms)",
            f"max error / d_model {profile_error}",
        ],
        [
            "uniqueness report, float64",
            "1,000,000 positions, d_model 512",
            f"{report_time * 1e3:.0f} ms",
            "no L × L or L × d matrix",
            f"peak traced memory {peak / 2**20:.1f} MB",
        ],
        [
            "uniqueness report, bfloat16 outputs",
            f"{L:,} positions, d_model {D}",
            f"{bf16_time * 1e3:.0f} ms",
            "closed form + rounding bound",
            "",
        ],
    ]
    return table(["task", "size", "median time", "comparison", "error / memory"], rows, "llrll")


def dashboard_section() -> list[str]:
    from streamlit.testing.v1 import AppTest

    from benchmarks.harness import open_view
    from dashboard import registry

    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=300)
    at.query_params.update({"L": str(L), "d": str(D)})
    at.run()
    rows = []
    bases = [2000.0, 5000.0, 20000.0, 50000.0, 100000.0, 200000.0, 500000.0]
    for view in registry.VIEWS:
        slug, label = view.slug, view.label
        open_view(at, slug)
        changes, same = [], []
        for base in bases:  # each base is new: the caches miss, the view recomputes
            at.session_state["base"] = base
            start = time.perf_counter()
            at.run()
            changes.append(time.perf_counter() - start)
        for _ in range(5):
            start = time.perf_counter()
            at.run()
            same.append(time.perf_counter() - start)
        if at.exception:
            raise RuntimeError(f"{slug}: {at.exception[0].value}")
        # A Plotly chart's JSON, or an image component's bytes (the heatmap, the similarity).
        payload = max(
            [len(e.proto.spec) for e in at.get("plotly_chart")]
            + [len(e.proto.bytes) for e in at.get("bidi_component")],
            default=0,
        )
        rows.append(
            [
                label,
                f"{statistics.median(changes) * 1e3:.0f} ms",
                f"{statistics.median(same) * 1e3:.0f} ms",
                f"{payload / 1e6:.2f} MB",
            ]
        )
    header = [
        f"view ({L:,} positions, d_model {D})",
        "parameter change",
        "rerun, nothing changed",
        "largest chart payload",
    ]
    return table(header, rows, "lrrr")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(
                line.split(":", 1)[1].strip() for line in info if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"{cpu}, {cores} cores, Python {platform.python_version()}, NumPy {np.__version__}, "
        f"{platform.system()} {platform.release()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-dashboard", action="store_true", help="skip the AppTest timings")
    parser.add_argument("--write", type=Path, help="also write the tables to this Markdown file")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    sections = [
        ("Encodings", encoding_section(repeats)),
        ("Analysis without L × L matrices", analysis_section(repeats)),
    ]
    if not args.no_dashboard:
        sections.append(("Dashboard, server side (AppTest)", dashboard_section()))
    text = [f"Machine: {machine()}", f"Date: {time.strftime('%Y-%m-%d %H:%M')}", ""]
    for title, rows in sections:
        text += [f"### {title}", "", *rows, ""]
    output = "\n".join(text)
    print(output)
    if args.write:
        args.write.write_text(output)


if __name__ == "__main__":
    main()
