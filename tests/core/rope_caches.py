"""The stored transformers caches of tests/data/rope_caches (see SOURCES.md there), read once
for the tests that identify rotary encodings from them."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data" / "rope_caches"
INDEX = json.loads((DATA / "cases.json").read_text(encoding="utf-8"))
CASES = INDEX["cases"]


@cache
def reference(case: str, kind: str):
    """(cos, sin, positions, config, stored) of a case, cos and sin as transformers computed
    them in ``kind`` ("float32", or "bfloat16" from their stored bits); stored holds inv_freq
    and attention_scaling as transformers computed them."""
    with np.load(DATA / f"{case}.npz", allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files}
    if kind == "float32":
        cos, sin = arrays["cos_float32"], arrays["sin_float32"]
    else:
        cos, sin = (
            (arrays[f"{name}_bfloat16_bits"].astype(np.uint32) << 16).view(np.float32)
            for name in ("cos", "sin")
        )
    config = json.loads((DATA / f"{case}.config.json").read_text(encoding="utf-8"))
    return cos, sin, arrays["positions"], config, arrays
