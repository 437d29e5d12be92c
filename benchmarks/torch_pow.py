"""torch's float32 ``pow`` against the emulation in pe_core.rotary.float32, and the literal
values the tests keep (tests/data/torch_pow_2_13.json).

Development only: needs torch (``pip install torch==2.13.0``); run on an x86 CPU whose
``torch.backends.cpu.get_cpu_capability()`` is AVX2 (the kernel emulated). Compares, bit for
bit:

- SLEEF's powf (:func:`pe_core.rotary.float32.sleef_powf`) with torch's vectorized ``pow`` on
  ``--pairs`` random (base, exponent) float32 pairs in RoPE's ranges (base log-uniform in
  [1.0001, 1e9], exponent uniform in [0, 1] and in [-1, 0]), on a million over float32's
  whole range, and on a grid of special values;
- ``python_base ** exponents`` (:func:`pe_core.rotary.float32.power`: vectorized head, scalar tail)
  for every length 1..300, RoPE's own exponents ``arange(0, 2n, 2) / 2n``;
- ``float32_tensor ** python_exponent`` (:func:`pe_core.rotary.float32.power_of`) for lengths 1..40.

And transformers' dynamic NTK ``inv_freq`` after a forward pass past the training length
(``LlamaRotaryEmbedding``, base recomputed in float32 from the position tensor) against
``pe_core.rope_frequencies(..., seq_len=...).inv_freq_float32``.

Prints the counts; with ``--write`` also stores the literal values.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pe_core
from pe_core.rotary import float32 as f32

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "torch_pow_2_13.json"
F32 = np.float32

#: (head_dim, factor, rope_theta, max_position_embeddings, seq_len): the NTK exponent
#: d/(d-2) is 2 at head 4 (torch's x*x path); head 80 leaves a scalar tail of 8.
DYNAMIC = [
    (128, 2.0, 10_000.0, 2048, 8192),
    (128, 4.0, 500_000.0, 4096, 100_003),
    (80, 1.5, 1_000_000.0, 2048, 2049),
    (64, 3.7, 10_000.0, 4096, 16_777_217),
    (12, 2.0, 10_000.0, 2048, 5000),
    (4, 8.0, 10_000.0, 2048, 65_536),
]

SPECIAL_BASES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -1.5, 1e-45, 1.1754944e-38, 3.4028235e38]
SPECIAL_BASES += [np.inf, -np.inf, np.nan, 1.0001, 1e9, 1.0000001, 0.99999994]
SPECIAL_EXPONENTS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, -3.0, 1e-8, -1e-8, 1e-45]
SPECIAL_EXPONENTS += [16777216.0, 16777218.0, 2.5, 127.9, -149.5, np.inf, -np.inf, np.nan]


def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal bit patterns, or both NaN."""
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return (a.view(np.int32) == b.view(np.int32)) | (np.isnan(a) & np.isnan(b))


def random_pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    base = np.exp(rng.uniform(np.log(1.0001), np.log(1e9), n)).astype(F32)
    exponent = rng.uniform(0.0, 1.0, n).astype(F32)
    exponent[n // 2 :] *= F32(-1)
    return base, exponent


def torch_pow(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    # Lengths that are multiples of 16: every element through the vectorized SLEEF call.
    return torch.pow(torch.from_numpy(base), torch.from_numpy(exponent)).numpy()


def dynamic_inv_freq(head_dim, factor, theta, max_positions, seq_len) -> np.ndarray:
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = transformers.LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_positions,
        rope_parameters={"rope_type": "dynamic", "rope_theta": theta, "factor": factor},
    )
    module = LlamaRotaryEmbedding(config)
    with torch.no_grad():
        module(torch.zeros(1), torch.tensor([[seq_len - 1]]))
    return module.inv_freq.numpy().astype(F32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4_000_000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    capability = torch.backends.cpu.get_cpu_capability()
    print(f"torch {torch.__version__}, capability {capability}")
    if capability != "AVX2":
        raise SystemExit("the emulation is of the AVX2 kernel: run on an AVX2 machine")
    rng = np.random.default_rng(20261126)

    n = args.pairs - args.pairs % 16
    different = rounded_differs = 0
    for start in range(0, n, 1_000_000):
        base, exponent = random_pairs(rng, min(1_000_000, n - start))
        theirs = torch_pow(base, exponent)
        different += int(np.sum(~same(f32.sleef_powf(base, exponent), theirs)))
        rounded = (base.astype(np.float64) ** exponent.astype(np.float64)).astype(F32)
        rounded_differs += int(np.sum(~same(rounded, theirs)))
    print(f"random pairs: {different} of {n:,} differ from torch ({rounded_differs:,} rounded)")

    base = np.exp(rng.uniform(np.log(1e-38), np.log(1e38), 1_000_000)).astype(F32)
    exponent = rng.uniform(-12, 12, base.size).astype(F32)
    base[::7] *= F32(-1)  # negative bases: NaN, or a sign for integer exponents
    exponent[::5] = np.round(exponent[::5])
    theirs = torch_pow(base, exponent)
    wide = int(np.sum(~same(f32.sleef_powf(base, exponent), theirs)))
    subnormal = int(np.sum((np.abs(theirs) < 2.0**-126) & (theirs != 0)))
    print(
        f"wide range (|base| 1e-38..1e38, exponent -12..12): {wide} of {base.size:,} differ "
        f"({subnormal:,} subnormal results, {int(np.sum(np.isinf(theirs))):,} overflows)"
    )

    grid_base, grid_exponent = (
        a.ravel().astype(F32) for a in np.meshgrid(SPECIAL_BASES, SPECIAL_EXPONENTS)
    )
    pad = (-grid_base.size) % 16
    grid_base = np.concatenate([grid_base, np.full(pad, 2, F32)])
    grid_exponent = np.concatenate([grid_exponent, np.full(pad, 0.25, F32)])
    theirs = torch_pow(grid_base, grid_exponent)
    special = int(np.sum(~same(f32.sleef_powf(grid_base, grid_exponent), theirs)))
    print(f"special values: {special} of {grid_base.size} differ")

    lengths = bases = differ = 0
    for base in (1.0001, 10_000.0, 500_000.0, 1_000_000.0, 1e9, float(rng.uniform(2, 1e8))):
        for count in range(1, 301):
            exponent = f32.exponents(2 * count, 2 * count)
            theirs = (base ** torch.from_numpy(exponent)).numpy()
            differ += int(np.sum(~same(f32.power(base, exponent), theirs)))
            lengths += count
        bases += 1
    print(f"base ** arange(0, 2n, 2)/2n, n = 1..300, {bases} bases: {differ} of {lengths} differ")

    tails = tail_differ = 0
    for _ in range(3000):
        count = int(rng.integers(1, 41))
        values = np.exp(rng.uniform(np.log(1.0001), np.log(1e9), count)).astype(F32)
        exponent = float(rng.uniform(-1, 2))
        theirs = (torch.from_numpy(values) ** exponent).numpy()
        tail_differ += int(np.sum(~same(f32.power_of(values, exponent), theirs)))
        tails += count
    print(f"tensor ** python float, lengths 1..40: {tail_differ} of {tails} differ")

    dynamic = []
    dynamic_differ = 0
    for head_dim, factor, theta, max_positions, seq_len in DYNAMIC:
        theirs = dynamic_inv_freq(head_dim, factor, theta, max_positions, seq_len)
        rope = pe_core.rope_frequencies(
            head_dim,
            base=theta,
            scaling={"rope_type": "dynamic", "factor": factor},
            max_position_embeddings=max_positions,
            seq_len=seq_len,
        )
        dynamic_differ += int(np.sum(~same(rope.inv_freq_float32, theirs)))
        dynamic.append(
            {
                "head_dim": head_dim,
                "factor": factor,
                "rope_theta": theta,
                "max_position_embeddings": max_positions,
                "seq_len": seq_len,
                "inv_freq": theirs.view(np.int32).tolist(),
            }
        )
    print(f"dynamic NTK after a forward pass: {dynamic_differ} frequencies differ")

    if args.write:
        base, exponent = random_pairs(np.random.default_rng(7), 4096)
        theirs = torch_pow(base, exponent)
        rounded = (base.astype(np.float64) ** exponent.astype(np.float64)).astype(F32)
        # Every pair where SLEEF is not correctly rounded, and as many where it is.
        keep = np.flatnonzero(rounded != theirs)
        keep = np.concatenate([keep, np.flatnonzero(rounded == theirs)[: keep.size]])
        out = {
            "source": (
                f"torch {torch.__version__} CPU ({capability}): torch.pow(base, exponent) on "
                "float32 tensors whose length is a multiple of 16, every element through "
                "SLEEF's Sleef_powf8_u10; written by benchmarks/torch_pow.py"
            ),
            "random": {
                "base": base[keep].view(np.int32).tolist(),
                "exponent": exponent[keep].view(np.int32).tolist(),
                "pow": theirs[keep].view(np.int32).tolist(),
            },
            "special": {
                "base": grid_base.view(np.int32).tolist(),
                "exponent": grid_exponent.view(np.int32).tolist(),
                "pow": torch_pow(grid_base, grid_exponent).view(np.int32).tolist(),
            },
            "dynamic": {
                "source": (
                    f"transformers {transformers.__version__}: LlamaRotaryEmbedding(config) "
                    "called once with position_ids [[seq_len - 1]], then its inv_freq"
                ),
                "cases": dynamic,
            },
            "note": "float32 bit patterns as int32 (NaN payloads kept as torch gave them)",
        }
        OUT.write_text(json.dumps(out, separators=(",", ":")) + "\n")
        print(f"wrote {OUT} ({keep.size} random pairs, {grid_base.size} special)")


if __name__ == "__main__":
    main()
