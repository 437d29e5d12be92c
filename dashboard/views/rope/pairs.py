"""The wavelength chart of RoPE's pairs, drawn by the RoPE lab and the Lesson, and the key the
lab's cached curves share an encoding by."""

from __future__ import annotations

import hashlib
import pickle

import pe_core
from dashboard import formatting
from dashboard.figures import rotary


def _lengths(rope: pe_core.RotaryEncoding) -> dict:
    lengths = {}
    if rope.training_length and pe_core.ROPE_VARIANTS[rope.rope_type].scaled_length:
        # max_position_embeddings is the length after the scaling (Gemma 3's 131,072 with x8),
        # not what the model was trained on.
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


def encoding_key(rope: pe_core.RotaryEncoding) -> str:
    """A short digest of everything the lab's score, bound and precision curves read of an
    encoding: its signature (frequencies, attention and softmax factors, widths, layout,
    variant and parameters) and transformers' float32 frequencies. Not its base, lengths or
    layer type: two configurations that rotate alike (the sidebar's at two values of L, a
    sequence length that changes nothing) share those curves."""
    float32 = None if rope.inv_freq_float32 is None else rope.inv_freq_float32.tobytes()
    return hashlib.blake2b(pickle.dumps((rope.signature, float32)), digest_size=16).hexdigest()
