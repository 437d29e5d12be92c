"""The wavelength chart of RoPE's pairs, drawn by the RoPE lab and the Lesson."""

from __future__ import annotations

import pe_core
from dashboard import formatting
from dashboard.figures import rotary


def _lengths(rope: pe_core.RotaryEncoding) -> dict:
    lengths = {}
    if rope.training_length and rope.rope_type == "linear":
        # Linear scaling names no original length: max_position_embeddings is the length after
        # the scaling (Gemma 3's 131,072 with x8), not what the model was trained on.
        factor = formatting.number_text(rope.parameters.get("factor", 1.0))
        lengths[f"max_position_embeddings (with the ×{factor} scaling)"] = float(
            rope.training_length
        )
    elif rope.training_length:
        lengths["training length"] = float(rope.training_length)
    if rope.target_length and rope.target_length != rope.training_length:
        lengths["target length"] = float(rope.target_length)
    return lengths


def pair_figure(rope: pe_core.RotaryEncoding):
    return rotary.rope_pair_chart(
        rope.original_wavelengths,
        rope.wavelengths,
        rope.band,
        lengths=_lengths(rope),
        title=f"Wavelength of each pair: {rope.rope_type}",
        subtitle=f"head_dim {rope.head_dim}, rotary {rope.rotary_dim}, "
        f"base {formatting.number_text(rope.base, grouping=True)}",
    )
