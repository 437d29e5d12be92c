"""RoPE's context-extension methods as data: one :class:`RopeVariant` per ``rope_type``.

Each variant owns its keys (the ones it reads, the ones it needs), its compute function with the
shared signature ``compute(ScalingInput) -> Scaled`` and its band rule, as transformers'
``ROPE_INIT_FUNCTIONS`` maps a ``rope_type`` to one function. :func:`pe_core.rope_frequencies`
checks the arguments common to all and calls the variant; a new variant is one entry of
:data:`ROPE_VARIANTS` (its function here) plus its tests.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.checks import (
    as_real_array,
    check_length,
    check_real,
    check_width,
    describe,
)
from pe_core.errors import InputError, InputTypeError
from pe_core.rotary import float32 as f32

__all__ = [
    "ROPE_TYPES",
    "ROPE_VARIANTS",
    "RopeVariant",
    "Scaled",
    "ScalingInput",
    "yarn_correction_range",
]


@dataclass(frozen=True)
class ScalingInput:
    """What every variant's compute function receives, checked.

    ``parameters`` are the scaling keys as given (without ``rope_type``); ``resolved`` is where
    the function writes the parameters it used, defaults filled in; ``original`` is
    ``base**(-exponent)`` with ``exponent = 2i / rotary_dim``; ``factor`` is the checked
    ``factor`` (None when absent and not required).
    """

    parameters: Mapping
    resolved: dict
    original: NDArray[np.float64]
    exponent: NDArray[np.float64]
    rotary_dim: int
    head_dim: int
    base: float
    partial: float
    factor: float | None
    max_position_embeddings: int | None
    seq_len: int | None


@dataclass(frozen=True)
class Scaled:
    """What a variant computes: the frequencies, the attention factor, and where they differ
    from the unscaled ones, the base they follow, the training and target lengths and the
    frequencies before scaling; ``float32`` is ``inv_freq`` as transformers computes it in
    float32, operation by operation (see :mod:`pe_core.rotary.float32`)."""

    inv_freq: NDArray[np.float64]
    attention_factor: float = 1.0
    effective_base: float | None = None
    training: int | None = None
    target: int | None = None
    original: NDArray[np.float64] | None = None
    float32: NDArray[np.float32] | None = None


@dataclass(frozen=True)
class RopeVariant:
    """One ``rope_type``.

    Attributes
    ----------
    name : str
        The ``rope_type``.
    keys : frozenset of str
        The scaling keys it reads (beyond ``rope_type``/``type``, ``rope_theta`` and
        ``partial_rotary_factor``); others are warned about, as Hugging Face does.
    required : tuple of str
        The keys it cannot do without.
    compute : callable
        ``compute(ScalingInput) -> Scaled``.
    keeps_every_pair : bool
        The head's every pair is kept (some with frequency 0: proportional RoPE), so
        ``partial_rotary_factor`` may be 0 and does not shrink ``rotary_dim``.
    factor_marks_band : bool
        Pairs divided by exactly ``factor`` are the "scaled" band (not for LongRoPE, whose
        factors are its own per pair).
    validated_keys : frozenset of str or None
        The keys transformers' config validation accepts beside ``rope_type`` and ``rope_theta``,
        when they are not ``keys``: proportional RoPE's compute function reads ``factor``, its
        validator calls it unrecognized (and warns). None: ``keys``.
    config_requires : tuple of str
        Keys transformers' config validation requires that the compute function can do without
        (YaRN's ``factor``, which ``_compute_yarn_parameters`` would take from the two lengths):
        a config without one is refused, as transformers raises ``KeyError``.
    reads_original_length : bool
        It reads the length the model was trained on before the scaling,
        ``original_max_position_embeddings`` (a config's top-level value takes priority, and
        transformers' ``standardize_rope_params`` fills it from ``max_position_embeddings``
        when absent): YaRN, LongRoPE and Llama 3.
    scaled_length : bool
        The config's ``max_position_embeddings`` is the length after the scaling, not the one
        trained on (linear names no original length: Gemma 3's 131,072 with x8).
    depends_on_seq_len : bool
        Its frequencies change with the current sequence length (dynamic NTK's base grows with
        it; LongRoPE switches from its short to its long factors past the training length), as
        transformers' ``dynamic_rope_update`` recomputes them in the forward pass. For the
        others ``seq_len`` changes nothing, and the target length is the configuration's.
    """

    name: str
    keys: frozenset[str]
    compute: Callable[[ScalingInput], Scaled]
    required: tuple[str, ...] = ()
    keeps_every_pair: bool = False
    factor_marks_band: bool = True
    reads_original_length: bool = False
    scaled_length: bool = False
    depends_on_seq_len: bool = False
    validated_keys: frozenset[str] | None = None
    config_requires: tuple[str, ...] = ()

    @property
    def accepted_keys(self) -> frozenset[str]:
        """The keys transformers' validation takes without a warning (beyond ``rope_type``,
        ``type``, ``rope_theta`` and ``partial_rotary_factor``)."""
        return self.keys if self.validated_keys is None else self.validated_keys


# --- parameters ---------------------------------------------------------------------------


def scaling_number(
    parameters: Mapping, key: str, *, low: float | None = None, strict=False
) -> float:
    """``parameters[key]`` as a finite float, at least (or above) ``low``."""
    value = check_real(parameters[key], f"scaling[{key!r}]")
    if low is not None and (value < low or (strict and value == low)):
        rule = f"> {low:g}" if strict else f">= {low:g}"
        raise InputError(f"scaling[{key!r}] must be a number {rule}, got {value:g}")
    return value


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
    rotary_dim = check_width(rotary_dim, "rotary_dim")
    base = check_real(base, "base")
    if base <= 1:
        raise InputError(f"base must be > 1, got {base:g}")
    training_length = check_length(training_length, "training_length")
    if not isinstance(truncate, (bool, np.bool_)):
        raise InputTypeError(f"truncate must be True or False, got {describe(truncate)}")

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


def _training_length(parameters, max_position_embeddings, rope_type) -> int:
    """``original_max_position_embeddings``, which Hugging Face fills in from
    ``max_position_embeddings`` when it is absent."""
    if parameters.get("original_max_position_embeddings") is not None:
        return check_length(
            parameters["original_max_position_embeddings"],
            "scaling['original_max_position_embeddings']",
        )
    if max_position_embeddings is None:
        raise InputError(
            f"rope_type {rope_type!r} needs scaling['original_max_position_embeddings'] or "
            "max_position_embeddings"
        )
    return max_position_embeddings


def _yarn(s: ScalingInput) -> Scaled:
    parameters, resolved, original = s.parameters, s.resolved, s.original
    dim, base, max_position_embeddings = s.rotary_dim, s.base, s.max_position_embeddings
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
    beta_fast = scaling_number(parameters, "beta_fast") if "beta_fast" in parameters else 32.0
    beta_slow = scaling_number(parameters, "beta_slow") if "beta_slow" in parameters else 1.0
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
    mscale = scaling_number(parameters, "mscale") if parameters.get("mscale") is not None else None
    mscale_all_dim = (
        scaling_number(parameters, "mscale_all_dim")
        if parameters.get("mscale_all_dim") is not None
        else None
    )
    if parameters.get("attention_factor") is not None:
        attention_factor = scaling_number(parameters, "attention_factor", low=0.0, strict=True)
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
    # transformers, in float32: pos_freqs = base ** e; 1 / pos_freqs and 1 / (factor * pos_freqs)
    # blended by 1 - ramp, the ramp being (arange - low) / (high - low) clamped to [0, 1].
    powers = f32.power(base, f32.exponents(dim, dim))
    extrapolation32 = f32.F32(1) - np.clip(
        (np.arange(dim // 2, dtype=f32.F32) - f32.F32(low)) / f32.F32(high - low),
        f32.F32(0),
        f32.F32(1),
    )
    float32 = (
        f32.over(1.0, f32.F32(factor) * powers) * (f32.F32(1) - extrapolation32)
        + f32.over(1.0, powers) * extrapolation32
    )
    resolved.update(
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
        mscale=mscale,
        mscale_all_dim=mscale_all_dim,
        correction_range=(low, high),
        original_max_position_embeddings=training,
    )
    # The length the scaling is for: factor x the trained length. A config may keep
    # max_position_embeddings at the trained length and add YaRN to extend it (Qwen2.5's model
    # card: 32,768 and factor 4 for 131,072), or raise it (gpt-oss: 131,072 = 32 x 4,096).
    target = max(max_position_embeddings or 0, round(training * factor))
    return Scaled(inv_freq, attention_factor, training=training, target=target, float32=float32)


def _longrope(s: ScalingInput) -> Scaled:
    parameters, resolved, original, dim = s.parameters, s.resolved, s.original, s.rotary_dim
    max_position_embeddings, seq_len = s.max_position_embeddings, s.seq_len
    short = _factor_list(parameters, "short_factor", dim // 2)
    long = _factor_list(parameters, "long_factor", dim // 2)
    training = _training_length(parameters, max_position_embeddings, "longrope")
    factor = resolved.get("factor")
    if factor is None:  # as Hugging Face: the ratio of the two lengths
        if max_position_embeddings is None:
            raise InputError("rope_type 'longrope' without a factor needs max_position_embeddings")
        factor = max_position_embeddings / training
    if parameters.get("attention_factor") is not None:
        attention_factor = scaling_number(parameters, "attention_factor", low=0.0, strict=True)
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
    float32 = f32.over(1.0, f32.tensor(factors) * f32.power(s.base, f32.exponents(dim, dim)))
    return Scaled(
        original / factors, attention_factor, training=training, target=target, float32=float32
    )


def _llama3(s: ScalingInput) -> Scaled:
    parameters, resolved, original = s.parameters, s.resolved, s.original
    factor, max_position_embeddings = s.factor, s.max_position_embeddings
    low = scaling_number(parameters, "low_freq_factor", low=0.0, strict=True)
    high = scaling_number(parameters, "high_freq_factor", low=0.0, strict=True)
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
    if max_position_embeddings is not None and training >= max_position_embeddings:
        warnings.warn(
            "scaling['original_max_position_embeddings'] should be less than "
            f"max_position_embeddings, got {training} and {max_position_embeddings}",
            UserWarning,
            stacklevel=3,
        )
    target = max_position_embeddings
    float32 = _llama3_float32(s.base, s.rotary_dim, factor, low, high, training)
    return Scaled(
        np.where(medium, smoothed, scaled), training=training, target=target, float32=float32
    )


def _llama3_float32(base, dim, factor, low, high, training) -> NDArray[np.float32]:
    # transformers' _compute_llama3_parameters, operation by operation in float32.
    inv_freq = f32.inverse_powers(base, dim, dim)
    wavelength = f32.over(2 * math.pi, inv_freq)
    low_wavelength, high_wavelength = f32.F32(training / low), f32.F32(training / high)
    scaled = np.where(wavelength > low_wavelength, inv_freq / f32.F32(factor), inv_freq)
    if high == low:
        return scaled  # the hard step, as in float64 above
    smooth = (f32.over(training, wavelength) - f32.F32(low)) / f32.F32(high - low)
    smoothed = (f32.F32(1) - smooth) * scaled / f32.F32(factor) + smooth * scaled
    medium = ~(wavelength < high_wavelength) & ~(wavelength > low_wavelength)
    return np.where(medium, smoothed, scaled)


def _default(s: ScalingInput) -> Scaled:
    return Scaled(s.original, float32=f32.inverse_powers(s.base, s.rotary_dim, s.rotary_dim))


def _linear(s: ScalingInput) -> Scaled:
    float32 = f32.inverse_powers(s.base, s.rotary_dim, s.rotary_dim) / f32.F32(s.factor)
    return Scaled(s.original / s.factor, float32=float32)


def _dynamic(s: ScalingInput) -> Scaled:
    dim, factor, max_position_embeddings, seq_len = (
        s.rotary_dim,
        s.factor,
        s.max_position_embeddings,
        s.seq_len,
    )
    if dim < 4:  # the NTK exponent d / (d - 2)
        raise InputError(
            "rope_type 'dynamic' needs a rotary dimension head_dim * partial_rotary_factor "
            f">= 4, got {dim}"
        )
    if max_position_embeddings is None:
        raise InputError("rope_type 'dynamic' needs max_position_embeddings")
    length = max_position_embeddings if seq_len is None else max(seq_len, max_position_embeddings)
    growth = factor * length / max_position_embeddings - (factor - 1)
    try:
        effective_base = s.base * growth ** (dim / (dim - 2))
    except OverflowError:
        effective_base = math.inf
    if not math.isfinite(effective_base):
        raise InputError(
            f"scaling['factor'] = {factor:g} at seq_len {length:,} makes the dynamic NTK base "
            "overflow float64"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        if seq_len is not None and seq_len > max_position_embeddings:
            # A forward pass past the cached length: transformers recomputes the base from the
            # int64 tensor torch.max(position_ids) + 1, so in float32, operation by operation.
            growth32 = np.array([f32.F32(factor) * f32.F32(seq_len)]) / f32.F32(
                max_position_embeddings
            ) - f32.F32(factor - 1)
            float32_base = f32.F32(s.base) * f32.power_of(growth32, dim / (dim - 2))[0]
        else:
            # At initialisation seq_len is the Python int max_position_embeddings: Python floats.
            float32_base = f32.F32(effective_base)
    if not np.isfinite(float32_base):
        raise InputError(
            f"scaling['factor'] = {factor:g} at seq_len {length:,} makes transformers' float32 "
            f"dynamic NTK base {float32_base} (its inv_freq would be 0 or NaN): the base must "
            f"stay below float32's largest value, {np.finfo(np.float32).max:.4g}"
        )
    return Scaled(
        effective_base**-s.exponent,
        float32=f32.inverse_powers(float32_base, dim, dim),
        effective_base=effective_base,
        training=max_position_embeddings,
        target=length,
    )


def _proportional(s: ScalingInput) -> Scaled:
    # Hugging Face's _compute_proportional_rope_parameters: the first int(p * head_dim // 2)
    # pairs keep base**(-2j/head_dim), the others get frequency 0; all divided by factor.
    head_dim, base = s.head_dim, s.base
    factor = s.factor if s.factor is not None else 1.0
    s.resolved.setdefault("factor", factor)
    rotating = int(s.partial * head_dim // 2)
    original = base ** -(np.arange(0, 2 * (head_dim // 2), 2, dtype=np.float64) / head_dim)
    inv_freq = np.where(np.arange(head_dim // 2) < rotating, original / factor, 0.0)
    s.resolved.update(rotating_pairs=rotating, partial_rotary_factor=s.partial)
    float32 = np.zeros(head_dim // 2, dtype=f32.F32)
    float32[:rotating] = f32.inverse_powers(base, 2 * rotating, head_dim)
    return Scaled(inv_freq, original=original, float32=float32 / f32.F32(factor))


_YARN_KEYS = {
    "factor",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "original_max_position_embeddings",
    "truncate",
}
_VARIANTS = (
    RopeVariant("default", frozenset(), _default),
    RopeVariant("linear", frozenset({"factor"}), _linear, required=("factor",), scaled_length=True),
    RopeVariant(
        "dynamic", frozenset({"factor"}), _dynamic, required=("factor",), depends_on_seq_len=True
    ),
    RopeVariant(
        "yarn",
        frozenset(_YARN_KEYS),
        _yarn,
        config_requires=("factor",),
        reads_original_length=True,
    ),
    RopeVariant(
        "longrope",
        frozenset(
            {
                "short_factor",
                "long_factor",
                "factor",
                "attention_factor",
                "original_max_position_embeddings",
            }
        ),
        _longrope,
        required=("short_factor", "long_factor"),
        factor_marks_band=False,
        reads_original_length=True,
        depends_on_seq_len=True,
    ),
    RopeVariant(
        "llama3",
        frozenset(
            {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}
        ),
        _llama3,
        required=("factor", "low_freq_factor", "high_freq_factor"),
        reads_original_length=True,
    ),
    RopeVariant(
        "proportional",
        frozenset({"factor"}),
        _proportional,
        keeps_every_pair=True,
        validated_keys=frozenset(),
    ),
)

#: ``rope_type`` -> :class:`RopeVariant`, the ones Hugging Face's ``ROPE_INIT_FUNCTIONS``
#: defines (plus "default").
ROPE_VARIANTS: Mapping[str, RopeVariant] = MappingProxyType({v.name: v for v in _VARIANTS})
#: The rope types, in that order (``type`` is the older key for ``rope_type``).
ROPE_TYPES = tuple(ROPE_VARIANTS)
