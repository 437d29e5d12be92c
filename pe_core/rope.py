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

from pe_core._formats import round_to_precision
from pe_core._kernels import encode, phasors, two_product
from pe_core._validation import (
    MAX_D_MODEL,
    MAX_POSITION,
    _describe,
    as_array,
    as_real_array,
    check_choice,
    check_output_dtype,
    check_positions_for,
    check_precision,
    check_real,
    check_size,
)
from pe_core.bank import ColumnLayout, FrequencyBank
from pe_core.errors import InputError, InputTypeError

__all__ = [
    "LAYOUTS",
    "ROPE_TYPES",
    "RotaryEncoding",
    "apply_rope",
    "merged_position_ids",
    "rope_angle_errors",
    "rope_cos_sin",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_permutation",
    "rope_scores",
    "yarn_correction_range",
]

#: The rope types Hugging Face's ``ROPE_INIT_FUNCTIONS`` defines (``type`` is the older key).
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional")
#: Where a head's rotary pairs sit: GPT-NeoX / Hugging Face's ``rotate_half`` ("halves": pair
#: ``i`` is columns ``i`` and ``i + d/2``) or GPT-J / Meta's original ("interleaved": ``2i`` and
#: ``2i + 1``).
LAYOUTS = ("halves", "interleaved")

#: The keys each rope type reads (beyond ``rope_type``/``type`` and ``rope_theta``); others are
#: reported, as Hugging Face does, with a warning.
_KEYS = {
    "default": set(),
    "linear": {"factor"},
    "dynamic": {"factor"},
    "yarn": {
        "factor",
        "attention_factor",
        "beta_fast",
        "beta_slow",
        "mscale",
        "mscale_all_dim",
        "original_max_position_embeddings",
        "truncate",
    },
    "longrope": {
        "short_factor",
        "long_factor",
        "factor",
        "attention_factor",
        "original_max_position_embeddings",
    },
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
    "proportional": {"factor"},
}
_REQUIRED = {
    "linear": ("factor",),
    "dynamic": ("factor",),
    "longrope": ("short_factor", "long_factor"),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor"),
}


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
        Positions the scaling is for (``max_position_embeddings``, or ``seq_len`` when given).
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

    def __post_init__(self) -> None:
        check_choice(self.layout, "layout", LAYOUTS)
        for name in ("inv_freq", "original_inv_freq"):
            values = np.array(getattr(self, name), dtype=np.float64)
            values.flags.writeable = False
            object.__setattr__(self, name, values)

    @property
    def n_pairs(self) -> int:
        return self.inv_freq.size

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
        if factor is not None and self.rope_type != "longrope":
            band[np.isclose(scale, factor, rtol=1e-9, atol=0.0) & ~unchanged] = "scaled"
        band[self.inv_freq == 0] = "not rotated"
        return band

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


def _number(parameters: Mapping, key: str, *, low: float | None = None, strict=False) -> float:
    """``parameters[key]`` as a finite float, at least (or above) ``low``."""
    value = check_real(parameters[key], f"scaling[{key!r}]")
    if low is not None and (value < low or (strict and value == low)):
        rule = f"> {low:g}" if strict else f">= {low:g}"
        raise InputError(f"scaling[{key!r}] must be a number {rule}, got {value:g}")
    return value


def _positive_int(value: object, name: str) -> int:
    """A length (``max_position_embeddings``, ``seq_len``): an integer from 1 to 2**53."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)):
        raise InputTypeError(f"{name} must be a positive integer, got {_describe(value)}")
    if isinstance(value, float) and not value.is_integer():
        raise InputError(f"{name} must be a positive integer, got {value:g}")
    if not 1 <= value <= MAX_POSITION:
        raise InputError(f"{name} must be an integer from 1 to 2**53, got {_describe(value)}")
    return int(value)


def _width(value: object, name: str, low: int = 2) -> int:
    """A head width (or count) as an int from ``low`` to 2**20."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputTypeError(f"{name} must be an integer >= {low}, got {_describe(value)}")
    if not low <= value <= MAX_D_MODEL:
        raise InputError(f"{name} must be an integer from {low} to 2**20, got {value}")
    return int(value)


def _factor_list(parameters: Mapping, key: str, n_pairs: int) -> NDArray[np.float64]:
    values = as_real_array(parameters[key], f"scaling[{key!r}]", ndim=1)
    if values.size != n_pairs:
        raise InputError(
            f"scaling[{key!r}] must hold one factor per rotary pair (rotary_dim // 2 = "
            f"{n_pairs}), got {values.size}"
        )
    if np.any(values <= 0):
        raise InputError(f"scaling[{key!r}] must hold factors > 0")
    return values


def yarn_correction_range(
    beta_fast: float,
    beta_slow: float,
    rotary_dim: int,
    base: float,
    training_length: int,
    *,
    truncate: bool = True,
) -> tuple[float, float]:
    """YaRN's range of pair dimensions between extrapolation and interpolation.

    The dimension at which a pair turns ``beta`` times within ``training_length`` positions is
    ``rotary_dim * ln(L / (2 pi beta)) / (2 ln base)``; the ramp runs from that of ``beta_fast``
    to that of ``beta_slow``, floored and ceiled when ``truncate`` (Hugging Face's default), and
    clipped to ``[0, rotary_dim - 1]``.

    >>> low, high = yarn_correction_range(32, 1, 64, 150_000.0, 4096, truncate=False)
    >>> round(low, 12), round(high, 11)
    (8.092779115512, 17.39802450159)
    """

    beta_fast = check_real(beta_fast, "beta_fast")
    beta_slow = check_real(beta_slow, "beta_slow")
    for name, value in (("beta_fast", beta_fast), ("beta_slow", beta_slow)):
        if not 0 < value * 2 * math.pi < math.inf:
            raise InputError(
                f"{name} must be > 0 (turns within the training length) with 2 pi {name} "
                f"finite, got {value:g}"
            )
    rotary_dim = _width(rotary_dim, "rotary_dim")
    base = check_real(base, "base")
    if base <= 1:
        raise InputError(f"base must be > 1, got {base:g}")
    training_length = _positive_int(training_length, "training_length")
    if not isinstance(truncate, (bool, np.bool_)):
        raise InputTypeError(f"truncate must be True or False, got {_describe(truncate)}")

    def dimension(turns: float) -> float:
        return rotary_dim * math.log(training_length / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = dimension(beta_fast), dimension(beta_slow)
    if not (math.isfinite(low) and math.isfinite(high)):  # a beta of 1e-320 and the like
        raise InputError(
            f"beta_fast and beta_slow must give finite correction dimensions, got beta_fast="
            f"{beta_fast:g} and beta_slow={beta_slow:g}"
        )
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, rotary_dim - 1)


def _mscale(scale: float, mscale: float = 1.0) -> float:
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


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
    head_dim = _width(head_dim, "head_dim")
    base = check_real(base, "base (rope_theta)")
    if base <= 1:
        raise InputError(f"base (rope_theta) must be > 1, got {base:g}")
    if scaling is not None and not isinstance(scaling, Mapping):
        raise InputTypeError(f"scaling must be a mapping (rope_scaling), got {_describe(scaling)}")
    partial = check_real(partial_rotary_factor, "partial_rotary_factor")
    proportional = (scaling or {}).get("rope_type", (scaling or {}).get("type")) == "proportional"
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
        max_position_embeddings = _positive_int(max_position_embeddings, "max_position_embeddings")
    if seq_len is not None:
        seq_len = _positive_int(seq_len, "seq_len")

    parameters = dict(scaling or {})
    rope_type = parameters.pop("rope_type", None) or parameters.pop("type", None) or "default"
    parameters.pop("type", None)
    parameters.pop("rope_theta", None)
    parameters.pop("partial_rotary_factor", None)
    rope_type = check_choice(rope_type, "scaling['rope_type']", ROPE_TYPES)
    for key in _REQUIRED.get(rope_type, ()):
        if key not in parameters:
            raise InputError(f"scaling for rope_type {rope_type!r} needs the key {key!r}")
    unknown = sorted(set(parameters) - _KEYS[rope_type])
    if unknown:
        warnings.warn(
            f"scaling keys {unknown} are not used by rope_type {rope_type!r}",
            UserWarning,
            stacklevel=2,
        )

    dim = rotary_dim
    exponent = np.arange(0, dim, 2, dtype=np.float64) / dim
    original = base**-exponent
    inv_freq, attention_factor, effective_base = original, 1.0, base
    training = target = max_position_embeddings
    resolved: dict = {"rope_type": rope_type}

    if parameters.get("factor") is not None or rope_type in ("linear", "dynamic", "llama3"):
        factor = _number(parameters, "factor", low=1.0)
        resolved["factor"] = factor

    if rope_type == "linear":
        inv_freq = original / factor
    elif rope_type == "proportional":
        # Hugging Face's _compute_proportional_rope_parameters: the first int(p * head_dim // 2)
        # pairs keep base**(-2j/head_dim), the others get frequency 0; all divided by factor.
        factor = resolved.get("factor", 1.0)
        rotating = int(partial * head_dim // 2)
        original = base ** -(np.arange(0, 2 * (head_dim // 2), 2, dtype=np.float64) / head_dim)
        inv_freq = np.where(np.arange(head_dim // 2) < rotating, original / factor, 0.0)
        resolved.update(rotating_pairs=rotating, partial_rotary_factor=partial)
    elif rope_type == "dynamic":
        if dim < 4:  # the NTK exponent d / (d - 2)
            raise InputError(
                "rope_type 'dynamic' needs a rotary dimension head_dim * partial_rotary_factor "
                f">= 4, got {dim}"
            )
        if max_position_embeddings is None:
            raise InputError("rope_type 'dynamic' needs max_position_embeddings")
        length = (
            max_position_embeddings if seq_len is None else max(seq_len, max_position_embeddings)
        )
        growth = factor * length / max_position_embeddings - (factor - 1)
        try:
            effective_base = base * growth ** (dim / (dim - 2))
        except OverflowError:
            effective_base = math.inf
        if not math.isfinite(effective_base):
            raise InputError(
                f"scaling['factor'] = {factor:g} at seq_len {length:,} makes the dynamic NTK base "
                "overflow float64"
            )
        inv_freq = effective_base**-exponent
        target = length
    elif rope_type == "yarn":
        inv_freq, attention_factor, training, target = _yarn(
            parameters, resolved, original, dim, base, max_position_embeddings
        )
    elif rope_type == "longrope":
        inv_freq, attention_factor, training, target = _longrope(
            parameters, resolved, original, dim, max_position_embeddings, seq_len
        )
    elif rope_type == "llama3":
        inv_freq, training = _llama3(
            parameters, resolved, original, factor, max_position_embeddings
        )
        if max_position_embeddings is not None and training >= max_position_embeddings:
            warnings.warn(
                "scaling['original_max_position_embeddings'] should be less than "
                f"max_position_embeddings, got {training} and {max_position_embeddings}",
                UserWarning,
                stacklevel=2,
            )
    if seq_len is not None and rope_type != "dynamic":
        target = seq_len
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
    )


def _training_length(parameters, max_position_embeddings, rope_type) -> int:
    """``original_max_position_embeddings``, which Hugging Face fills in from
    ``max_position_embeddings`` when it is absent."""
    if parameters.get("original_max_position_embeddings") is not None:
        return _positive_int(
            parameters["original_max_position_embeddings"],
            "scaling['original_max_position_embeddings']",
        )
    if max_position_embeddings is None:
        raise InputError(
            f"rope_type {rope_type!r} needs scaling['original_max_position_embeddings'] or "
            "max_position_embeddings"
        )
    return max_position_embeddings


def _yarn(parameters, resolved, original, dim, base, max_position_embeddings):
    training = _training_length(parameters, max_position_embeddings, "yarn")
    factor = resolved.get("factor")
    if factor is None:  # as Hugging Face: the ratio of the two lengths
        if max_position_embeddings is None:
            raise InputError("rope_type 'yarn' without a factor needs max_position_embeddings")
        factor = max_position_embeddings / training
        resolved["factor"] = factor
    elif max_position_embeddings is not None:
        implicit = max_position_embeddings / training
        if implicit not in (factor, 1.0):
            warnings.warn(
                f"scaling['factor'] = {factor:g} does not match max_position_embeddings / "
                f"original_max_position_embeddings = {implicit:g}; the explicit factor is used "
                "(as Hugging Face does)",
                UserWarning,
                stacklevel=3,
            )
    beta_fast = _number(parameters, "beta_fast") if "beta_fast" in parameters else 32.0
    beta_slow = _number(parameters, "beta_slow") if "beta_slow" in parameters else 1.0
    if beta_fast < beta_slow:
        warnings.warn(
            f"scaling['beta_fast'] should be greater than scaling['beta_slow'], got "
            f"beta_fast={beta_fast:g} and beta_slow={beta_slow:g}",
            UserWarning,
            stacklevel=3,
        )
    truncate = parameters.get("truncate", True)
    if not isinstance(truncate, bool):
        raise InputTypeError(f"scaling['truncate'] must be true or false, got {truncate!r}")
    mscale = _number(parameters, "mscale") if parameters.get("mscale") is not None else None
    mscale_all_dim = (
        _number(parameters, "mscale_all_dim")
        if parameters.get("mscale_all_dim") is not None
        else None
    )
    if parameters.get("attention_factor") is not None:
        attention_factor = _number(parameters, "attention_factor", low=0.0, strict=True)
    elif mscale and mscale_all_dim:
        attention_factor = _mscale(factor, mscale) / _mscale(factor, mscale_all_dim)
    else:
        attention_factor = _mscale(factor)
    low, high = yarn_correction_range(beta_fast, beta_slow, dim, base, training, truncate=truncate)
    if low == high:
        high += 0.001  # as Hugging Face: no division by zero
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    extrapolation = 1.0 - ramp
    inv_freq = (original / factor) * (1.0 - extrapolation) + original * extrapolation
    resolved.update(
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
        mscale=mscale,
        mscale_all_dim=mscale_all_dim,
        correction_range=(low, high),
        original_max_position_embeddings=training,
    )
    target = max_position_embeddings if max_position_embeddings is not None else training * factor
    return inv_freq, attention_factor, training, round(target)


def _longrope(parameters, resolved, original, dim, max_position_embeddings, seq_len):
    short = _factor_list(parameters, "short_factor", dim // 2)
    long = _factor_list(parameters, "long_factor", dim // 2)
    training = _training_length(parameters, max_position_embeddings, "longrope")
    factor = resolved.get("factor")
    if factor is None:  # as Hugging Face: the ratio of the two lengths
        if max_position_embeddings is None:
            raise InputError("rope_type 'longrope' without a factor needs max_position_embeddings")
        factor = max_position_embeddings / training
    if parameters.get("attention_factor") is not None:
        attention_factor = _number(parameters, "attention_factor", low=0.0, strict=True)
    elif factor <= 1.0:
        attention_factor = 1.0
    else:
        attention_factor = math.sqrt(1 + math.log(factor) / math.log(training))
    use_long = seq_len is not None and seq_len > training
    factors = long if use_long else short
    resolved.update(
        factor=factor,
        original_max_position_embeddings=training,
        factors_used="long_factor" if use_long else "short_factor",
    )
    target = max_position_embeddings if max_position_embeddings is not None else training
    return original / factors, attention_factor, training, target


def _llama3(parameters, resolved, original, factor, max_position_embeddings):
    low = _number(parameters, "low_freq_factor", low=0.0, strict=True)
    high = _number(parameters, "high_freq_factor", low=0.0, strict=True)
    if high < low:
        raise InputError(
            "scaling['high_freq_factor'] must be at least "
            f"scaling['low_freq_factor'], got {high:g} and {low:g}"
        )
    training = _training_length(parameters, max_position_embeddings, "llama3")
    wavelength = 2 * math.pi / original
    low_wavelength, high_wavelength = training / low, training / high
    scaled = np.where(wavelength > low_wavelength, original / factor, original)
    if high == low:
        # Llama 4 Scout's configuration: transformers warns and, with no band to smooth over,
        # divides by the factor every pair slower than the boundary: a hard step. (A wavelength
        # exactly at the boundary keeps its frequency, where transformers' 0/0 gives NaN.)
        warnings.warn(
            f"scaling['high_freq_factor'] equals scaling['low_freq_factor'] ({high:g}): "
            "no smoothing band, a hard step at wavelength "
            f"{low_wavelength:g} (as transformers computes it)",
            UserWarning,
            stacklevel=4,
        )
        smoothed = scaled
    else:
        smooth = (training / wavelength - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelength < high_wavelength) & ~(wavelength > low_wavelength)
    resolved.update(
        low_freq_factor=low, high_freq_factor=high, original_max_position_embeddings=training
    )
    return np.where(medium, smoothed, scaled), training


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
        raise InputTypeError(f"rope must be a RotaryEncoding, got {_describe(rope)}")
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
        raise InputTypeError(f"rope must be a RotaryEncoding, got {_describe(rope)}")
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
    head_dim = _width(head_dim, "head_dim", low=1)
    n_heads = _width(n_heads, "n_heads", low=1)
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
            f"{_describe(rotary_dim)}"
        )
    one = np.arange(head_dim)
    one[:rotary_dim] = np.concatenate([np.arange(0, rotary_dim, 2), np.arange(1, rotary_dim, 2)])
    return (np.arange(n_heads)[:, None] * head_dim + one).ravel()


# --- what the rotation does to scores, and what low precision does to it -----------------


def _check_rope(rope: object) -> RotaryEncoding:
    if not isinstance(rope, RotaryEncoding):
        raise InputTypeError(f"rope must be a RotaryEncoding, got {_describe(rope)}")
    return rope


def _rows_per_block(width: int) -> int:
    """Rows of ``width`` values processed at once: about 2**18 values (a few MB) a block."""
    return max(1, 2**18 // max(1, width))


def rope_scores(
    offsets: ArrayLike,
    rope: RotaryEncoding,
    q: ArrayLike,
    k: ArrayLike | None = None,
    *,
    layout: str | None = None,
) -> NDArray[np.float64]:
    """The attention score ``rotate(q, m) . rotate(k, n)`` against the offset ``m - n``.

    Parameters
    ----------
    offsets : array_like
        Query position minus key position (1-D).
    rope : RotaryEncoding
    q, k : array_like, shape (head_dim,)
        The query and key before rotation (``k`` defaults to ``q``).
    layout : {"halves", "interleaved"}, optional
        By default ``rope.layout``.

    Returns
    -------
    ndarray of float64, the shape of ``offsets``
        Each score computed by rotating ``q`` at the offset and ``k`` at 0 with
        :func:`apply_rope` (the score depends on the offset alone), attention factor included.
    """
    rope = _check_rope(rope)
    checked = check_positions_for(rope.bank(), offsets, "offsets")
    check_size(checked.n * rope.head_dim, "the rotated queries")
    vectors = []
    for name, value in (("q", q), ("k", q if k is None else k)):
        vector = as_real_array(value, name, ndim=1)
        if vector.size != rope.head_dim:
            raise InputError(
                f"{name} must have rope.head_dim = {rope.head_dim} values, got {vector.size}"
            )
        vectors.append(vector)
    q_vector, k_vector = vectors
    rotated_k = apply_rope(k_vector[None, :], [0], rope, layout=layout)[0]
    scores = np.empty(checked.n)
    for first in range(0, checked.n, _rows_per_block(rope.head_dim)):  # bounded temporaries
        block = checked.values[first : first + _rows_per_block(rope.head_dim)]
        queries = np.broadcast_to(q_vector, (block.size, rope.head_dim))
        scores[first : first + block.size] = apply_rope(queries, block, rope, layout=layout) @ (
            rotated_k
        )
    return scores


def rope_decay_bound(offsets: ArrayLike, rope: RotaryEncoding) -> NDArray[np.float64]:
    """RoFormer's relative upper bound on the score at each offset (Su et al., section 3.4.3).

    With ``S_j = sum_{i<j} exp(i * offset * w_i)``, the score of any q and k satisfies
    ``|score| <= (max_i |h_(i+1) - h_i|) * sum_j |S_j|``; the paper plots
    ``(1 / n) * sum_(j=1..n) |S_j|`` (``n`` pairs, fast pairs first), which decays with the
    offset. Pairs with frequency 0 (proportional RoPE's last ones) count as in the paper.

    Returns
    -------
    ndarray of float64, the shape of ``offsets``
    """
    rope = _check_rope(rope)
    checked = check_positions_for(rope.bank(), offsets, "offsets")
    check_size(checked.n * rope.n_pairs * 2, "the partial sums")
    bound = np.empty(checked.n)
    rows = _rows_per_block(rope.n_pairs)
    for first in range(0, checked.n, rows):  # bounded temporaries
        block = checked.values[first : first + rows]
        partial = np.cumsum(phasors(block, rope.inv_freq), axis=1)
        bound[first : first + block.size] = np.abs(partial).mean(axis=1)
    return bound


def rope_angle_errors(
    positions: int | ArrayLike, rope: RotaryEncoding, precision: str = "float32"
) -> NDArray[np.float64]:
    """The largest error over pairs of the angle ``position * w`` when the position ids, the
    frequencies and their product are rounded to ``precision``, as a framework computing in that
    format does (radians, one value per position).

    A position (or angle) beyond the format's range gives inf (float16 overflows at 65,520).
    Hugging Face computes ``inv_freq @ position_ids`` in float32; implementations that cast
    position ids to bfloat16 first give 256 and 257 the same angle (see
    :func:`merged_position_ids`).
    """
    rope = _check_rope(rope)
    fmt = check_precision(precision)
    checked = check_positions_for(rope.bank(), positions)
    check_size(checked.n * rope.n_pairs * 2, "the angles")
    exact, error = two_product(checked.values[:, None], rope.inv_freq[None, :])
    with np.errstate(over="ignore"):  # beyond the format's range: inf, as a real cast gives
        rounded_positions = round_to_precision(checked.values, fmt.name)
        rounded_freqs = round_to_precision(rope.inv_freq, fmt.name)
        # A product of two numbers of at most 24 significant bits is exact in float64.
        angles = round_to_precision(rounded_positions[:, None] * rounded_freqs[None, :], fmt.name)
    with np.errstate(invalid="ignore"):
        return np.max(np.abs((angles - exact) - error), axis=1, initial=0.0)


def merged_position_ids(precision: str) -> tuple[int, int]:
    """The first two consecutive integer positions that ``precision`` cannot tell apart.

    >>> merged_position_ids("bfloat16"), merged_position_ids("float16")
    ((256, 257), (2048, 2049))
    """
    fmt = check_precision(precision)
    # Integers are exact up to 2**p (p significand bits); 2**p + 1 is a tie that rounds to even.
    first = 2**fmt.significand_bits
    return first, first + 1
