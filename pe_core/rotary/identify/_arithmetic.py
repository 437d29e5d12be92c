"""The arithmetic a cache was computed in: the simplest rounding (of the position ids, the
frequencies or the angles) that explains its sample rows, named by the catalogue's bugs."""

from __future__ import annotations

import numpy as np

from pe_core._numerics.formats import round_to_precision
from pe_core.rotary.bugs import ROPE_BUGS
from pe_core.rotary.identify._compare import _Model
from pe_core.rotary.identify._findings import Context
from pe_core.rotary.identify.results import RopeArithmetic

#: Roundings tried, simplest story first: (arithmetic fields, model keywords).
_ROUNDINGS = (
    ({}, {}),
    ({"positions": "bfloat16"}, {"positions_format": "bfloat16"}),
    ({"positions": "float16"}, {"positions_format": "float16"}),
    ({"inv_freq": "bfloat16"}, {"freq_format": "bfloat16"}),
    ({"inv_freq": "float16"}, {"freq_format": "float16"}),
    (
        {"angles": "bfloat16", "positions": "bfloat16", "inv_freq": "bfloat16"},
        {"angle_format": "bfloat16"},
    ),
    (
        {"angles": "float16", "positions": "float16", "inv_freq": "float16"},
        {"angle_format": "float16"},
    ),
)

#: The catalogue's name for each rounding.
_ROUNDING_BUGS = {
    "positions_format": "bf16_positions",
    "freq_format": "bf16_inv_freq",
    "angle_format": "bf16_angles",
}


def _arithmetic(context: Context, reference, amplitude):
    """The simplest rounding that explains the sample rows, with its model and findings."""
    comparison = context.comparison
    storage = context.cache.storage
    sign = context.sin_sign
    for fields, keywords in _ROUNDINGS:
        model = _Model(reference, amplitude, sin_sign=sign, **keywords)
        if not comparison.explains(model):
            continue
        arithmetic = RopeArithmetic(
            storage,
            fields.get("angles", "float32"),
            fields.get("inv_freq"),
            fields.get("positions", "exact"),
        )
        findings = []
        plain = _Model(reference, amplitude, sin_sign=sign)
        for key, fmt in keywords.items():
            evidence = {
                "format": fmt,
                "explained_by": arithmetic.words,
                "largest_difference_without": comparison.largest(plain),
                "largest_difference_with": comparison.largest(model),
            }
            if key != "freq_format":
                positions = np.abs(context.cache.positions)
                moved = positions[round_to_precision(positions, fmt) != positions]
                if moved.size:
                    evidence["first_position_rounded"] = float(np.min(moved))
            findings.append(ROPE_BUGS[_ROUNDING_BUGS[key]].finding(**evidence))
        return arithmetic, model, findings
    # Nothing explains it: report against the plain model.
    model = _Model(reference, amplitude, sin_sign=sign)
    return RopeArithmetic(storage, "float32", None), model, []
