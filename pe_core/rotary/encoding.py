"""Rotary position embeddings (RoPE) and their context-extension methods, exact in float64.

RoPE rotates each pair of a query or key by the angle ``k * w_i`` at position ``k``, with the
frequencies of the 2017 sinusoid, ``w_i = base**(-2i/d)`` (``d`` the rotary dimension). The
context-extension methods change the frequencies (and may scale cos and sin by an attention
factor): linear position interpolation, dynamic NTK, YaRN, LongRoPE and Llama 3's smoothing.
The semantics are those of Hugging Face transformers' ``modeling_rope_utils`` (its
``ROPE_INIT_FUNCTIONS``), computed in float64 where it computes in float32, so the values here
equal theirs to their float32 rounding.

A :class:`RotaryEncoding` is a bank of sinusoids (:meth:`RotaryEncoding.bank`), so the analyses
of :mod:`pe_core` (wavelengths, similarity, uniqueness at low precision) apply to it.

>>> rope = rope_frequencies(128, base=500_000.0, scaling={"rope_type": "llama3", "factor": 8.0,
...     "low_freq_factor": 1.0, "high_freq_factor": 4.0,
...     "original_max_position_embeddings": 8192})
>>> rope.inv_freq.shape, rope.attention_factor
((64,), 1.0)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import (
    as_array,
    as_real_array,
    check_choice,
    check_length,
    check_output_dtype,
    check_positions_for,
    check_real,
    check_size,
    check_width,
    describe,
)
from pe_core._numerics.kernels import encode
from pe_core.bank import ColumnLayout, FrequencyBank
from pe_core.errors import InputError, InputTypeError
from pe_core.rotary.variants import (
    ROPE_TYPES,
    ROPE_VARIANTS,
    ScalingInput,
    scaling_number,
    yarn_correction_range,
)

__all__ = [
    "LAYOUTS",
    "ROPE_TYPES",
    "RotaryEncoding",
    "apply_rope",
    "rope_cos_sin",
    "rope_frequencies",
    "rope_permutation",
    "yarn_correction_range",
]

#: Where a head's rotary pairs sit: GPT-NeoX / Hugging Face's ``rotate_half`` ("halves": pair
#: ``i`` is columns ``i`` and ``i + d/2``) or GPT-J / Meta's original ("interleaved": ``2i`` and
#: ``2i + 1``).
LAYOUTS = ("halves", "interleaved")


@dataclass(frozen=True, eq=False)
class RotaryEncoding:
    """The rotary frequencies of one attention head, after a context-extension method.

    Attributes
    ----------
    inv_freq : ndarray of float64, shape (rotary_dim // 2,)
        Angular frequency of each rotary pair (radians per position), the same length and order
        as Hugging Face's ``inv_freq``.
    original_inv_freq : ndarray of float64
        The frequencies before scaling: ``base**(-2i/rotary_dim)``.
    attention_factor : float
        Factor on cos and sin (Hugging Face's ``attention_scaling``; 1 but for YaRN and
        LongRoPE).
    head_dim, rotary_dim : int
        Width of a head, and how many of its columns rotate (``head_dim *
        partial_rotary_factor``); the others pass through unchanged.
    rope_type : str
        One of :data:`ROPE_TYPES`.
    base : float
        ``rope_theta``; for dynamic NTK, the base after the NTK change is ``effective_base``.
    effective_base : float
        The base the frequencies follow (``base`` unless dynamic NTK changed it).
    training_length : int or None
        Positions the model was trained on (``original_max_position_embeddings`` or
        ``max_position_embeddings``).
    target_length : int or None
        Positions the scaling is for: the configuration's (``max_position_embeddings``; YaRN's
        ``factor`` times the trained length when that is longer), or for dynamic NTK, whose
        frequencies follow the sequence length, ``max(seq_len, max_position_embeddings)``.
        Whatever ``seq_len`` is, a variant whose frequencies do not depend on it
        (``ROPE_VARIANTS[rope_type].depends_on_seq_len``) keeps the configuration's.
    band : ndarray of str
        Per pair: "unchanged" (same frequency), "scaled" (divided by the method's whole factor),
        "ramp" (in between: YaRN's ramp, Llama 3's smoothing, dynamic NTK, LongRoPE's own
        factors) or "not rotated" (frequency 0: proportional RoPE's last pairs).
    parameters : dict
        The scaling parameters as read (``rope_type``, ``factor``, ...), with defaults filled
        in.
    layout : {"halves", "interleaved"}
        Where the model's rotary pairs sit (see :data:`LAYOUTS`): the default of
        :func:`apply_rope`, :func:`rope_cos_sin`, :func:`rope_scores` and :meth:`bank`.
    layer_type : str or None
        The layers of a model configuration it is for, in transformers' words
        ("full_attention", "sliding_attention", ...); None when not read from a config.
    softmax_factor : float
        A factor the model's attention applies to its softmax scale ``1/sqrt(d)``, outside the
        rotary class (DeepSeek's ``mscale**2`` under YaRN); 1 for most models. Scores scale by
        ``attention_factor**2 * softmax_factor``.
    inv_freq_float32 : ndarray of float32 or None
        ``inv_freq`` as transformers computes it in float32, operation by operation (its
        exponent ``2i/d`` is rounded to float32 before the power: up to several float32 units
        off, :func:`pe_core.inv_freq_float32_ulps`); None when not made by
        :func:`rope_frequencies`, where :func:`pe_core.transformers_angle_errors` rounds
        ``inv_freq`` to float32 instead.
    """

    inv_freq: NDArray[np.float64]
    original_inv_freq: NDArray[np.float64]
    attention_factor: float
    head_dim: int
    rotary_dim: int
    rope_type: str
    base: float
    effective_base: float
    training_length: int | None
    target_length: int | None
    parameters: dict = field(default_factory=dict)
    layout: str = "halves"
    layer_type: str | None = None
    softmax_factor: float = 1.0
    inv_freq_float32: NDArray[np.float32] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_choice(self.layout, "layout", LAYOUTS)
        for name in ("inv_freq", "original_inv_freq"):
            values = np.array(getattr(self, name), dtype=np.float64)
            values.flags.writeable = False
            object.__setattr__(self, name, values)
        if self.inv_freq_float32 is not None:
            values = np.array(self.inv_freq_float32, dtype=np.float32)
            if values.shape != self.inv_freq.shape:
                raise InputError(
                    f"inv_freq_float32 must have the shape of inv_freq {self.inv_freq.shape}, "
                    f"got {values.shape}"
                )
            values.flags.writeable = False
            object.__setattr__(self, "inv_freq_float32", values)

    @property
    def n_pairs(self) -> int:
        return self.inv_freq.size

    @property
    def signature(self) -> tuple:
        """What makes two encodings rotate the same way (hashable, comparable with ==): the
        frequencies, factors, widths, layout and variant, not the layer type they are for."""
        return (
            self.inv_freq.tobytes(),
            self.attention_factor,
            self.softmax_factor,
            self.head_dim,
            self.rotary_dim,
            self.layout,
            self.rope_type,
            tuple(sorted((key, repr(value)) for key, value in self.parameters.items())),
        )

    @property
    def wavelengths(self) -> NDArray[np.float64]:
        """``2*pi / inv_freq``: positions per full turn of each pair, after scaling (inf for a
        pair that does not rotate)."""
        with np.errstate(divide="ignore"):
            return 2.0 * math.pi / self.inv_freq

    @property
    def original_wavelengths(self) -> NDArray[np.float64]:
        return 2.0 * math.pi / self.original_inv_freq

    @property
    def scale(self) -> NDArray[np.float64]:
        """``original_inv_freq / inv_freq``: how much slower each pair turns (1: unchanged,
        inf: not rotating)."""
        with np.errstate(divide="ignore"):
            return self.original_inv_freq / self.inv_freq

    @property
    def band(self) -> NDArray[np.str_]:
        with np.errstate(divide="ignore"):
            scale = self.scale
        factor = self.parameters.get("factor")
        unchanged = np.isclose(scale, 1.0, rtol=1e-12, atol=0.0)
        band = np.where(unchanged, "unchanged", "ramp").astype("<U11")
        if factor is not None and ROPE_VARIANTS[self.rope_type].factor_marks_band:
            band[np.isclose(scale, factor, rtol=1e-9, atol=0.0) & ~unchanged] = "scaled"
        band[self.inv_freq == 0] = "not rotated"
        return band

    def unscaled(self) -> RotaryEncoding:
        """The encoding before its scaling: the default frequencies of this head, base and
        rotary width (for a variant that keeps every pair, proportional RoPE, its own unscaled
        frequencies, zeros included, with its lengths). Itself when it is not scaled."""
        if ROPE_VARIANTS[self.rope_type].keeps_every_pair:
            return RotaryEncoding(
                inv_freq=self.original_inv_freq,
                original_inv_freq=self.original_inv_freq,
                attention_factor=1.0,
                head_dim=self.head_dim,
                rotary_dim=self.rotary_dim,
                rope_type="default",
                base=self.base,
                effective_base=self.base,
                training_length=self.training_length,
                target_length=self.target_length,
            )
        return rope_frequencies(
            self.head_dim, base=self.base, partial_rotary_factor=self.rotary_dim / self.head_dim
        )

    def bank(self, layout: str | None = None) -> FrequencyBank:
        """The rotary pairs as a bank of ``rotary_dim`` columns (sin and cos of each pair, in
        the columns the layout rotates together; by default the model's), for the analyses of
        :mod:`pe_core`."""
        layout = self.layout if layout is None else check_choice(layout, "layout", LAYOUTS)
        columns = (
            ColumnLayout.halves(self.rotary_dim)
            if layout == "halves"
            else ColumnLayout.interleaved(self.rotary_dim)
        )
        return FrequencyBank(self.inv_freq, columns, f"RoPE {self.rope_type}, {layout}")

    def __repr__(self) -> str:
        return (
            f"RotaryEncoding(rope_type={self.rope_type!r}, head_dim={self.head_dim}, "
            f"rotary_dim={self.rotary_dim}, base={self.base:g}, "
            f"attention_factor={self.attention_factor:.6g}, layout={self.layout!r})"
        )


# --- parameters ---------------------------------------------------------------------------


def rope_frequencies(
    head_dim: int,
    *,
    base: float = 10_000.0,
    scaling: Mapping | None = None,
    partial_rotary_factor: float = 1.0,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
) -> RotaryEncoding:
    """The rotary frequencies of a head, after the context-extension method in ``scaling``.

    Parameters
    ----------
    head_dim : int
        Width of one attention head.
    base : float
        ``rope_theta``.
    scaling : mapping, optional
        A Hugging Face ``rope_scaling`` (or ``rope_parameters``) mapping: ``rope_type`` (or
        ``type``) among :data:`ROPE_TYPES` and that type's parameters. None: plain RoPE.
    partial_rotary_factor : float
        Fraction of ``head_dim`` that rotates (``rotary_dim = int(head_dim * factor)``).
    max_position_embeddings : int, optional
        The model's context length (dynamic NTK and YaRN's default training length need it).
    seq_len : int, optional
        The current sequence length, as Hugging Face passes it: dynamic NTK and LongRoPE depend
        on it.

    Returns
    -------
    RotaryEncoding

    Notes
    -----
    With ``d = rotary_dim`` and ``w_i = base**(-2i/d)``, ``i = 0 .. d/2 - 1``:

    - linear: ``w_i / factor``.
    - dynamic: ``base' = base * (factor * s / L - (factor - 1))**(d / (d - 2))`` with
      ``s = max(seq_len, L)``, ``L = max_position_embeddings``.
    - yarn: ``w_i * (1 - r_i) + (w_i / factor) * r_i`` with ``r_i`` the linear ramp from 0 to 1
      over :func:`yarn_correction_range`; attention factor ``0.1 ln(factor) + 1`` (or the ratio
      of ``mscale`` to ``mscale_all_dim`` of that form, or the given ``attention_factor``). When
      ``original_max_position_embeddings`` is given, ``factor`` is replaced by
      ``max_position_embeddings / original_max_position_embeddings``, as Hugging Face does.
    - longrope: ``w_i / f_i`` with the long factors beyond the training length, the short ones
      within; attention factor ``sqrt(1 + ln(factor) / ln(training length))``.
    - llama3: ``w_i`` for wavelengths below ``L / high_freq_factor``, ``w_i / factor`` above
      ``L / low_freq_factor``, and in between ``(1 - s) w_i / factor + s w_i`` with
      ``s = (L / wavelength - low) / (high - low)``, ``L = original_max_position_embeddings``.
    """
    head_dim = check_width(head_dim, "head_dim")
    base = check_real(base, "base (rope_theta)")
    if base <= 1:
        raise InputError(f"base (rope_theta) must be > 1, got {base:g}")
    if scaling is not None and not isinstance(scaling, Mapping):
        raise InputTypeError(f"scaling must be a mapping (rope_scaling), got {describe(scaling)}")
    partial = check_real(partial_rotary_factor, "partial_rotary_factor")
    named = (scaling or {}).get("rope_type", (scaling or {}).get("type"))
    proportional = isinstance(named, str) and getattr(
        ROPE_VARIANTS.get(named), "keeps_every_pair", False
    )
    if not (0 <= partial <= 1 if proportional else 0 < partial <= 1):
        interval = "[0, 1]" if proportional else "(0, 1]"
        raise InputError(f"partial_rotary_factor must be in {interval}, got {partial:g}")
    # Proportional RoPE keeps every pair (the last ones with frequency 0, not rotating).
    rotary_dim = head_dim - head_dim % 2 if proportional else int(head_dim * partial)
    if rotary_dim < 2:
        raise InputError(
            f"head_dim * partial_rotary_factor must be at least 2 (one rotary pair), got "
            f"{head_dim} * {partial:g}"
        )
    if rotary_dim % 2:
        raise InputError(
            f"the rotary dimension head_dim * partial_rotary_factor must be even, got {rotary_dim}"
        )
    if max_position_embeddings is not None:
        max_position_embeddings = check_length(max_position_embeddings, "max_position_embeddings")
    if seq_len is not None:
        seq_len = check_length(seq_len, "seq_len")

    parameters = dict(scaling or {})
    rope_type = parameters.pop("rope_type", None) or parameters.pop("type", None) or "default"
    parameters.pop("type", None)
    parameters.pop("rope_theta", None)
    parameters.pop("partial_rotary_factor", None)
    rope_type = check_choice(rope_type, "scaling['rope_type']", ROPE_TYPES)
    variant = ROPE_VARIANTS[rope_type]
    for key in variant.required:
        if key not in parameters:
            raise InputError(f"scaling for rope_type {rope_type!r} needs the key {key!r}")
    unknown = sorted(set(parameters) - variant.keys)
    if unknown:
        warnings.warn(
            f"scaling keys {unknown} are not used by rope_type {rope_type!r}",
            UserWarning,
            stacklevel=2,
        )

    exponent = np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim
    resolved: dict = {"rope_type": rope_type}
    factor = None
    if parameters.get("factor") is not None or "factor" in variant.required:
        factor = scaling_number(parameters, "factor", low=1.0)
        resolved["factor"] = factor
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # checked below
        scaled = variant.compute(
            ScalingInput(
                parameters=parameters,
                resolved=resolved,
                original=base**-exponent,
                exponent=exponent,
                rotary_dim=rotary_dim,
                head_dim=head_dim,
                base=base,
                partial=partial,
                factor=factor,
                max_position_embeddings=max_position_embeddings,
                seq_len=seq_len,
            )
        )
    inv_freq = scaled.inv_freq
    bad = ~np.isfinite(inv_freq) | (inv_freq < 0)
    if bad.any() or not np.isfinite(scaled.attention_factor):
        # Name the keys that made them (a factor near 0 or past float64), not "frequencies".
        given = sorted(key for key in parameters if key in variant.keys and key != "rope_type")
        what = (
            f"{int(bad.sum()):,} of its {bad.size:,} frequencies (inv_freq) infinite, NaN or "
            f"negative, the first at pair {int(np.argmax(bad))}"
            if bad.any()
            else f"its attention factor {scaled.attention_factor}"
        )
        raise InputError(
            f"scaling for rope_type {rope_type!r} with {', '.join(map(repr, given)) or 'its keys'}"
            f" makes {what}: each must keep the frequencies finite and >= 0 in float64"
        )
    original = base**-exponent if scaled.original is None else scaled.original
    attention_factor = scaled.attention_factor
    effective_base = base if scaled.effective_base is None else scaled.effective_base
    training = max_position_embeddings if scaled.training is None else scaled.training
    # The length the scaling is for: the variant's own (dynamic NTK's max(seq_len, L), YaRN's
    # factor x the trained length), else the configuration's. Never the current sequence
    # length as such: YaRN at seq_len 1,000 is still for its configured length.
    target = max_position_embeddings if scaled.target is None else scaled.target
    return RotaryEncoding(
        inv_freq=inv_freq,
        original_inv_freq=original,
        attention_factor=float(attention_factor),
        head_dim=head_dim,
        rotary_dim=rotary_dim,
        rope_type=rope_type,
        base=base,
        effective_base=float(effective_base),
        training_length=training,
        target_length=target,
        parameters=resolved,
        inv_freq_float32=scaled.float32,
    )


# --- applying the rotation ----------------------------------------------------------------


def _cos_sin_table(positions, rope: RotaryEncoding, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` of every position and pair, each pair's twice (Hugging Face's
    ``cat(freqs, freqs)``), scaled by the attention factor: one exact pass of the phasor
    kernel into one buffer, cos in its first ``rotary_dim`` columns, sin in the others."""
    d = rope.rotary_dim
    layout = ColumnLayout(2 * d, d, slice(d, 2 * d), slice(0, d), d, d)
    bank = FrequencyBank(np.concatenate([rope.inv_freq, rope.inv_freq]), layout)
    checked = check_positions_for(bank, positions)
    check_size(checked.n * 2 * d, "the cos and sin caches")
    if rope.attention_factor == 1.0:
        table = encode(checked, bank, np.dtype(dtype))
    else:
        table = encode(checked, bank, np.dtype(np.float64))
        table *= rope.attention_factor
        table = table.astype(dtype, copy=False)
    return table[:, :d], table[:, d:]


def rope_cos_sin(
    positions: int | ArrayLike,
    rope: RotaryEncoding,
    *,
    dtype=np.float32,
    layout: str | None = None,
) -> tuple[NDArray, NDArray]:
    """The cos and sin caches of a rotary encoding, as Hugging Face's rotary embedding returns
    them (``cat(freqs, freqs)``, times the attention factor; for the interleaved layout each
    pair's value twice side by side, as ``repeat_interleave``), each value the nearest
    ``dtype`` number to the exact one.

    Parameters
    ----------
    positions : int or array_like
        ``L`` (positions ``0 .. L-1``) or the positions.
    rope : RotaryEncoding
    dtype : float64 or float32
    layout : {"halves", "interleaved"}, optional
        The columns of each pair; by default ``rope.layout``.

    Returns
    -------
    cos, sin : ndarray, shape (n_positions, rotary_dim)
        Two views of one buffer (halves), or two arrays (interleaved).
    """
    if not isinstance(rope, RotaryEncoding):
        raise InputTypeError(f"rope must be a RotaryEncoding, got {describe(rope)}")
    dtype = check_output_dtype(dtype)
    if dtype.name not in ("float64", "float32"):
        raise InputError(f"dtype must be float64 or float32, got {dtype.name}")
    dtype = dtype.newbyteorder("=")
    layout = rope.layout if layout is None else check_choice(layout, "layout", LAYOUTS)
    cos, sin = _cos_sin_table(positions, rope, dtype)
    if layout == "interleaved":
        half = rope.rotary_dim // 2
        return np.repeat(cos[:, :half], 2, axis=1), np.repeat(sin[:, :half], 2, axis=1)
    return cos, sin


def apply_rope(
    x: ArrayLike, positions: int | ArrayLike, rope: RotaryEncoding, *, layout: str | None = None
) -> NDArray:
    """Rotate ``x`` (queries or keys) at ``positions``.

    Parameters
    ----------
    x : array_like, shape (..., n_positions, head_dim)
    positions : int or array_like of length n_positions
    rope : RotaryEncoding
    layout : {"halves", "interleaved"}, optional
        "halves": pair ``i`` is columns ``i`` and ``i + rotary_dim/2`` (Hugging Face's
        ``rotate_half``, GPT-NeoX); "interleaved": columns ``2i`` and ``2i + 1`` (GPT-J,
        Meta's original). By default ``rope.layout``.

    Returns
    -------
    ndarray, the shape of ``x``; float32 for float32 input, else float64.
        The first ``rotary_dim`` columns rotated and scaled by the attention factor, as Hugging
        Face's ``apply_rotary_pos_emb``; the others unchanged.
    """
    if not isinstance(rope, RotaryEncoding):
        raise InputTypeError(f"rope must be a RotaryEncoding, got {describe(rope)}")
    layout = rope.layout if layout is None else check_choice(layout, "layout", LAYOUTS)
    given = as_array(x, "x")
    if given.dtype.kind not in "iuf" or given.ndim < 2:
        raise InputError(
            f"x must be a real array of shape (..., n_positions, head_dim), got "
            f"{given.dtype} of shape {given.shape}"
        )
    values = as_real_array(given, "x")
    if values.shape[-1] != rope.head_dim:
        raise InputError(
            f"x must have rope.head_dim = {rope.head_dim} columns (its last axis), got shape "
            f"{values.shape}"
        )
    cos, sin = _cos_sin_table(positions, rope, np.float64)
    if cos.shape[0] != values.shape[-2]:
        raise InputError(
            f"positions must give one position per row of x ({values.shape[-2]}), got "
            f"{cos.shape[0]}"
        )
    d, half = rope.rotary_dim, rope.rotary_dim // 2
    out = values.copy()
    if layout == "halves":
        first, second = values[..., :half], values[..., half:d]
    else:
        first, second = values[..., 0:d:2], values[..., 1:d:2]
    c, s = cos[:, :half], sin[:, :half]
    rotated_first = first * c - second * s
    rotated_second = second * c + first * s
    if layout == "halves":
        out[..., :half], out[..., half:d] = rotated_first, rotated_second
    else:
        out[..., 0:d:2], out[..., 1:d:2] = rotated_first, rotated_second
    return out.astype(np.float32) if given.dtype == np.float32 else out


def rope_permutation(head_dim: int, rotary_dim: int | None = None, *, n_heads: int = 1):
    """The row order that turns interleaved q/k projection weights into halves ones.

    ``w_halves = w_interleaved[perm]`` (rows of a ``(n_heads * head_dim, hidden)`` projection):
    pair ``i`` moves from rows ``2i, 2i+1`` of each head to rows ``i, i + rotary_dim/2``, as
    Hugging Face's Llama conversion script permutes Meta's checkpoints. Columns beyond
    ``rotary_dim`` stay. The inverse is ``np.argsort(perm)``.

    >>> rope_permutation(8).tolist()
    [0, 2, 4, 6, 1, 3, 5, 7]
    """
    head_dim = check_width(head_dim, "head_dim", low=1)
    n_heads = check_width(n_heads, "n_heads", low=1)
    check_size(head_dim * n_heads, "the permutation")
    rotary_dim = head_dim if rotary_dim is None else rotary_dim
    if (
        isinstance(rotary_dim, bool)
        or not isinstance(rotary_dim, (int, np.integer))
        or not 2 <= rotary_dim <= head_dim
        or rotary_dim % 2
    ):
        raise InputError(
            f"rotary_dim must be an even integer from 2 to head_dim = {head_dim}, got "
            f"{describe(rotary_dim)}"
        )
    one = np.arange(head_dim)
    one[:rotary_dim] = np.concatenate([np.arange(0, rotary_dim, 2), np.arange(1, rotary_dim, 2)])
    return (np.arange(n_heads)[:, None] * head_dim + one).ravel()


# --- what the rotation does to scores, and what low precision does to it -----------------


def check_rope(rope: object) -> RotaryEncoding:
    if not isinstance(rope, RotaryEncoding):
        raise InputTypeError(f"rope must be a RotaryEncoding, got {describe(rope)}")
    return rope
