"""What llama.cpp computes from a GGUF file's RoPE settings: each layer's rotation
(:func:`llama_cpp_layers`), its frequencies in exact arithmetic, and its angles and cos/sin in
the float32 arithmetic of ggml's CPU kernel (:func:`llama_cpp_angles`, :func:`llama_cpp_cos_sin`).

ggml's kernel (``ggml_compute_forward_rope_flt`` and ``rope_yarn`` in ggml-cpu/ops.cpp) computes,
for position ``p`` (an int32 converted to float) and pair ``i``, all in float32::

    theta_scale = powf(freq_base, -2.0f / n_dims)
    theta_0 = p;  theta_i = theta_{i-1} * theta_scale          (one rounding per pair)
    extrap = theta_i / freq_factor_i;  interp = freq_scale * extrap
    YaRN (ext_factor != 0):  mix = ramp(i) * ext_factor
                             theta = interp * (1 - mix) + extrap * mix
                             mscale = attn_factor * (1 + 0.1f * logf(1 / freq_scale))
    cos = cosf(theta) * mscale,  sin = sinf(theta) * mscale

transformers instead rounds each frequency once (``inv_freq``, from a float32 power of a float32
exponent) and multiplies it by the position once: its angle has one rounding of the product,
llama.cpp's ``i`` roundings of the running product plus the error of ``theta_scale`` raised to
the ``i``-th power (``i`` times its relative error). Measured for a 128-wide head at base 1e6
(Qwen2.5): 8.5e-8 relative at pair 1, 1.3e-6 at pair 32, 2.5e-6 (21 float32 units) at pair 63;
the angle passes 1e-3 rad off the exact one from position 8,588, transformers' from 15,660
(``check_gguf``'s arithmetic note gives these for each file). ggml's CPU kernel is matched bit
for bit (tests/core/test_gguf_ggml.py: cos and sin of ``ggml_rope_ext`` on this machine, NORMAL
and NEOX pairs, linear, YaRN, LongRoPE and Llama 3 factors, partial rotation).
"""

from __future__ import annotations

import ctypes
import functools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import check_positions, describe
from pe_core.errors import InputError, InputTypeError
from pe_core.rotary import float32
from pe_core.rotary.gguf.file import GgufMetadata
from pe_core.rotary.gguf.models import (
    DEFAULT_BETA_FAST,
    DEFAULT_BETA_SLOW,
    DEFAULT_FREQ_BASE,
    DEFAULT_FREQ_BASE_SWA,
    LLAMA_CPP_ARCHS,
    LLAMA_CPP_VERSION,
    NON_ROTARY_ARCHS,
    LlamaCppArch,
    RopeMode,
    layers_unknown,
)

__all__ = [
    "LlamaCppLayer",
    "LlamaCppRope",
    "llama_cpp_angles",
    "llama_cpp_cos_sin",
    "llama_cpp_layers",
]

F32 = np.float32
#: Widest head read (real ones: 64 to 512 columns).
_MAX_HEAD_DIM = 1 << 16
#: Most positions x pairs one block of the float32 kernel computes at once.
_BLOCK = 1 << 21
#: Most positions x pairs one call of :func:`llama_cpp_angles` returns (512 MB of float32).
_MAX_ANGLES = 1 << 27


@dataclass(frozen=True)
class LlamaCppLayer:
    """One layer's rotation as llama.cpp runs it: the arguments of ``ggml_rope_ext``.

    ``attn_factor`` is what the kernel receives (for YaRN, already divided by ``1 + 0.1
    ln(factor)``, which the kernel multiplies back); :attr:`cos_sin_factor` is the factor on
    cos and sin in the end. ``freq_factors`` is the tensor divided into the angles
    (``rope_freqs``, or LongRoPE's long or short factors), named by ``factors_tensor``.
    """

    index: int
    rotates: bool
    is_swa: bool
    head_dim: int
    n_dims: int
    mode: RopeMode
    freq_base: float
    freq_scale: float
    ext_factor: float
    attn_factor: float
    beta_fast: float
    beta_slow: float
    n_ctx_orig: int
    freq_factors: NDArray[np.float32] | None = field(default=None, repr=False, compare=False)
    factors_tensor: str | None = None
    sections: tuple[int, ...] = ()

    @property
    def n_pairs(self) -> int:
        return self.n_dims // 2

    @property
    def cos_sin_factor(self) -> float:
        """The factor on cos and sin (the kernel's final ``mscale``), in exact arithmetic."""
        if self.ext_factor != 0:
            return self.attn_factor * (1.0 + 0.1 * math.log(1.0 / self.freq_scale))
        return self.attn_factor

    def correction_range(self) -> tuple[float, float]:
        """YaRN's ramp ends as ggml computes them (``ggml_rope_yarn_corr_dims``: floored and
        ceiled, in float32)."""
        return _corr_dims(
            self.n_dims, self.n_ctx_orig, self.freq_base, self.beta_fast, self.beta_slow
        )

    def inv_freq(self) -> NDArray[np.float64]:
        """Each pair's angle per position in exact arithmetic (the same order as Hugging
        Face's ``inv_freq``)."""
        i = np.arange(self.n_pairs, dtype=np.float64)
        extrap = self.freq_base ** (-2.0 * i / self.n_dims)
        if self.freq_factors is not None:
            extrap = extrap / self.freq_factors[: self.n_pairs].astype(np.float64)
        if self.ext_factor == 0:
            return self.freq_scale * extrap
        mix = _ramp(*self.correction_range(), np.arange(self.n_pairs)) * self.ext_factor
        return self.freq_scale * extrap * (1 - mix) + extrap * mix


@dataclass(frozen=True)
class LlamaCppRope:
    """Every layer of a GGUF file as llama.cpp will rotate it, for one context size."""

    architecture: str
    arch: LlamaCppArch
    layers: tuple[LlamaCppLayer, ...]
    n_ctx: int
    n_ctx_train: int
    scaling_type: str
    layers_reason: str | None  # why the per-layer rules are not claimed (None: they are)
    version: str = LLAMA_CPP_VERSION


def _corr_dims(n_dims, n_ctx_orig, base, beta_fast, beta_slow) -> tuple[float, float]:
    libm = _libm()
    pi = F32(math.pi)

    def dim(n_rot) -> np.float32:
        ratio = F32(n_ctx_orig) / (F32(n_rot) * F32(2) * pi)
        return F32(n_dims) * F32(libm.logf(float(ratio))) / (F32(2) * F32(libm.logf(float(base))))

    start = math.floor(float(dim(beta_fast)))
    end = math.ceil(float(dim(beta_slow)))
    return float(max(0.0, start)), float(min(n_dims - 1.0, end))


def _ramp(low: float, high: float, pairs: ArrayLike) -> NDArray[np.float32]:
    """ggml's ``rope_yarn_ramp`` for pair indices (``i0 / 2``), in float32."""
    y = (np.asarray(pairs).astype(F32) - F32(low)) / F32(max(0.001, float(F32(high) - F32(low))))
    return F32(1) - np.minimum(F32(1), np.maximum(F32(0), y))


@functools.cache
def _libm() -> ctypes.CDLL:
    library = float32.c_library()
    if library is None:  # pragma: no cover - every supported platform has one
        raise InputError("the C math library cannot be loaded, which llama.cpp's angles need")
    for name in ("powf", "logf", "cosf", "sinf"):
        function = getattr(library, name)
        function.restype = ctypes.c_float
        function.argtypes = [ctypes.c_float] * (2 if name == "powf" else 1)
    return library


def _number(meta: GgufMetadata, suffix: str, default):
    value = meta.key(suffix)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            f"meta: {meta.architecture}.{suffix} must be a number, got {describe(value)} "
            f"({meta.value_types.get(f'{meta.architecture}.{suffix}', '?')})"
        )
    return value


_F32_MAX = float(np.finfo(np.float32).max)
_F32_TINY = float(np.finfo(np.float32).tiny)


def _real(meta: GgufMetadata, suffix: str, default: float, *, rule: str, accept) -> float:
    """A number llama.cpp reads as a float32: finite in float32, and ``accept``-ed (``rule``
    says what that means, for the message)."""
    value = _number(meta, suffix, default)
    if not (abs(value) <= _F32_MAX and math.isfinite(value) and accept(value)):
        raise InputError(
            f"meta: {meta.architecture}.{suffix} must be {rule} (a finite float32), got "
            f"{describe(value)}"
        )
    return float(value)


def _whole(meta: GgufMetadata, suffix: str, default: int) -> int:
    value = _number(meta, suffix, default)
    if not isinstance(value, int):
        raise InputError(
            f"meta: {meta.architecture}.{suffix} must be a whole number, got {describe(value)}"
        )
    return value


def _per_layer(meta: GgufMetadata, suffix: str, n_layers: int, default) -> list:
    value = meta.key(suffix)
    if isinstance(value, tuple):
        if len(value) < n_layers:
            raise InputError(
                f"meta: {meta.architecture}.{suffix} must have one value per layer ({n_layers}), "
                f"got {len(value)}"
            )
        return list(value[:n_layers])
    return [_number(meta, suffix, default)] * n_layers


#: Largest context size: llama.cpp's ``n_ctx`` is a uint32_t.
_MAX_N_CTX = 2**32 - 1


#: What llama_cpp_layers asks of the numbers it reads as float32.
_BASE_RULE = {"rule": "a number > 1", "accept": lambda value: value > 1}
_POSITIVE = {"rule": "a number > 0", "accept": lambda value: value > 0}
_ANY = {"rule": "a number", "accept": lambda value: True}


def _factor_ok(factor: float) -> bool:
    """A scaling factor of 0 (none), or a normal float32 (its reciprocal is then finite)."""
    return factor == 0 or factor >= _F32_TINY


def _check_n_ctx(n_ctx: object) -> int:
    """llama.cpp's context size ``-c``: a whole number from 1 to 2**32 - 1."""
    if isinstance(n_ctx, bool | np.bool_) or not isinstance(n_ctx, numbers.Integral):
        raise InputTypeError(
            f"n_ctx must be a whole number of positions (llama.cpp's -c), got {describe(n_ctx)}"
        )
    if not 1 <= n_ctx <= _MAX_N_CTX:
        raise InputError(
            f"n_ctx must be a context size from 1 to 2**32 - 1 (llama.cpp's -c), got {n_ctx}"
        )
    return int(n_ctx)


def _arch_of(meta: GgufMetadata) -> LlamaCppArch:
    name = meta.architecture
    if name is None:
        raise InputError(
            "meta has no general.architecture, so which llama.cpp model reads it is unknown"
        )
    if name not in LLAMA_CPP_ARCHS:
        raise InputError(
            f"meta: general.architecture {name!r} is not an architecture of "
            f"{LLAMA_CPP_VERSION}: its RoPE table is unknown here (a newer llama.cpp, or a fork, "
            "may run it)"
        )
    if name in NON_ROTARY_ARCHS:
        raise InputError(
            f"meta: general.architecture {name!r} has no RoPE in {LLAMA_CPP_VERSION} (learned, "
            "ALiBi or no positions, or not attention): nothing to check"
        )
    return LLAMA_CPP_ARCHS[name]


def llama_cpp_layers(meta: GgufMetadata, *, n_ctx: int | None = None) -> LlamaCppRope:
    """Each layer's RoPE as llama.cpp runs the file, with the loader's defaults for absent keys.

    Parameters
    ----------
    meta : GgufMetadata
        From :func:`pe_core.read_gguf` or :func:`pe_core.parse_gguf_dump`.
    n_ctx : int, optional
        The context size llama.cpp is started with (``-c``); by default the file's
        ``context_length`` (what ``-c 0`` gives). It chooses LongRoPE's long or short factors.

    Raises
    ------
    InputError
        No architecture, one this llama.cpp does not know or that has no RoPE, a file with no
        block count or attention heads, or a value of the wrong type.
    """
    if not isinstance(meta, GgufMetadata):
        raise InputTypeError(
            "meta must be a GgufMetadata (from read_gguf, read_gguf_bytes or parse_gguf_dump), "
            f"got {describe(meta)}"
        )
    if n_ctx is not None:
        n_ctx = _check_n_ctx(n_ctx)
    arch = _arch_of(meta)
    name = arch.name
    n_layers = _number(meta, "block_count", None)
    if not isinstance(n_layers, int) or not 0 < n_layers <= 4096:
        raise InputError(
            f"meta: {name}.block_count must be a number of layers (1 to 4096), got {n_layers!r}"
        )
    n_ctx_train = _number(meta, "context_length", None)
    if not isinstance(n_ctx_train, int) or not 0 < n_ctx_train <= _MAX_N_CTX:
        raise InputError(
            f"meta: {name}.context_length must be a whole number from 1 to 2**32 - 1 (llama.cpp's "
            f"n_ctx_train), got {n_ctx_train!r}"
        )
    if n_ctx is None:
        n_ctx = n_ctx_train
    n_embd = _number(meta, "embedding_length", None)
    heads = _per_layer(meta, "attention.head_count", n_layers, None)
    if not isinstance(n_embd, int) or not any(isinstance(h, int) and h > 0 for h in heads):
        raise InputError(
            f"meta: {name}.embedding_length and {name}.attention.head_count are needed for the "
            f"head width, got {describe(n_embd)} and {describe(meta.key('attention.head_count'))}"
        )
    head0 = next(h for h in heads if isinstance(h, int) and h > 0)
    head_dim = _whole(meta, "attention.key_length", n_embd // head0)
    n_rot_full = _whole(meta, "rope.dimension_count", head_dim)
    head_dim_swa = _whole(meta, "attention.key_length_swa", head_dim)
    n_rot_swa = _whole(meta, "rope.dimension_count_swa", n_rot_full)
    for label, width in (("", head_dim), ("_swa", head_dim_swa)):
        if not 0 < width <= _MAX_HEAD_DIM:
            raise InputError(
                f"meta: {name}'s head width{label} (attention.key_length{label}, or "
                f"embedding_length / head_count) must be 1 to {_MAX_HEAD_DIM:,}, got {width:,}"
            )
    for label, n_rot, width in (("", n_rot_full, head_dim), ("_swa", n_rot_swa, head_dim_swa)):
        if n_rot <= 0 or n_rot % 2 or n_rot > width:
            raise InputError(
                f"meta: {name}.rope.dimension_count{label} must be even and at most the head width "
                f"{width}, got {n_rot}"
            )

    freq_base = float(F32(_real(meta, "rope.freq_base", DEFAULT_FREQ_BASE, **_BASE_RULE)))
    scaling = meta.key("rope.scaling.type")
    scaling = "linear" if scaling is None else scaling
    if scaling not in ("none", "linear", "yarn", "longrope"):
        raise InputError(
            f"meta: {name}.rope.scaling.type must be none, linear, yarn or longrope (llama.cpp "
            f"aborts on anything else), got {describe(scaling)}"
        )
    # 0: none; else 1 / factor must be a float32 (llama.cpp's freq_scale)
    factor_rule = {"rule": "0 (none) or at least 1.2e-38", "accept": _factor_ok}
    if meta.key("rope.scaling.factor") is not None:
        factor = _real(meta, "rope.scaling.factor", 0.0, **factor_rule)
    else:
        factor = _real(meta, "rope.scale_linear", 0.0, **factor_rule)
    freq_scale = 1.0 if factor == 0 else float(F32(1.0) / F32(factor))
    if scaling == "none":
        freq_scale = 1.0
    n_ctx_orig = _whole(meta, "rope.scaling.original_context_length", n_ctx_train) or n_ctx_train
    if not 0 < n_ctx_orig <= _MAX_N_CTX:
        raise InputError(
            f"meta: {name}.rope.scaling.original_context_length must be a whole number from 1 "
            f"to 2**32 - 1 (0: the context length), got {n_ctx_orig}"
        )
    rope_attn_factor = _real(meta, "rope.scaling.attn_factor", 1.0, **_POSITIVE)
    reads = arch.reads
    ext_default = -1.0
    if "rope.scaling.yarn_ext_factor" in reads:
        ext_default = _real(meta, "rope.scaling.yarn_ext_factor", -1.0, **_ANY)
    yarn_attn = 1.0
    if "rope.scaling.yarn_attn_factor" in reads:
        yarn_attn = _real(meta, "rope.scaling.yarn_attn_factor", 1.0, **_POSITIVE)
    beta_fast, beta_slow = DEFAULT_BETA_FAST, DEFAULT_BETA_SLOW
    if name == "grok":
        beta_fast = 8.0
    if "rope.scaling.yarn_beta_fast" in reads:
        beta_fast = _real(meta, "rope.scaling.yarn_beta_fast", beta_fast, **_POSITIVE)
    if "rope.scaling.yarn_beta_slow" in reads:
        beta_slow = _real(meta, "rope.scaling.yarn_beta_slow", beta_slow, **_POSITIVE)
    log_mul = 0.0
    if "rope.scaling.yarn_log_multiplier" in reads:
        log_mul = _real(meta, "rope.scaling.yarn_log_multiplier", 0.0, **_ANY)
        if name in ("deepseek2", "deepseek32", "glm-dsa"):
            log_mul /= 0.1

    ext_factor = ext_default
    if ext_factor < 0:
        ext_factor = 1.0 if scaling == "yarn" else 0.0
    attn_factor = F32(yarn_attn)
    if ext_factor != 0:
        ratio = F32(1.0) / F32(freq_scale)
        libm = _libm()

        def mscale(scale, m):
            return F32(1) if scale <= 1 else F32(0.1) * F32(m) * F32(libm.logf(float(scale))) + 1

        if log_mul != 0:
            m = log_mul if name == "deepseek2" and log_mul != 1 else 1.0
            attn_factor = F32(mscale(ratio, m) / mscale(ratio, log_mul))
        else:
            attn_factor = F32(mscale(ratio, 1.0))
        attn_factor = F32(
            attn_factor * (F32(1) / (F32(1) + F32(0.1) * F32(libm.logf(float(ratio)))))
        )
    with np.errstate(all="ignore"):  # a product beyond float32, or a factor of 0: refused
        attn_factor = float(F32(attn_factor * F32(rope_attn_factor)))
    final = float(_kernel_mscale(attn_factor, freq_scale, ext_factor))
    if not (math.isfinite(attn_factor) and attn_factor > 0 and math.isfinite(final)):
        raise InputError(
            f"meta: the attention factor on cos and sin (from {name}.rope.scaling.attn_factor, "
            f"yarn_attn_factor, yarn_log_multiplier and the YaRN factor) must be finite and > 0 "
            f"in float32, got {final!r}"
        )

    # the rope factor tensors
    rope_freqs = meta.tensors.get("rope_freqs.weight")
    long = meta.tensors.get("rope_factors_long.weight")
    short = meta.tensors.get("rope_factors_short.weight")
    if rope_freqs is not None:
        factors, factors_name = rope_freqs.values, "rope_freqs.weight"
    elif long is not None or short is not None:
        chosen = long if n_ctx > n_ctx_orig else short
        factors = None if chosen is None else chosen.values
        factors_name = None if chosen is None else chosen.name
    else:
        factors, factors_name = None, None

    sections = meta.key("rope.dimension_sections")
    sections = tuple(sections) if isinstance(sections, tuple) else ()
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in sections):
        raise InputError(
            f"meta: {name}.rope.dimension_sections must be whole numbers (pairs per M-RoPE "
            f"axis), got {describe(sections)}"
        )
    mode = arch.mode
    if arch.mrope_mode is not None and len(sections) >= 2 and sections[0] > 0 and sections[1] > 0:
        mode = arch.mrope_mode

    # which layers are sliding-window layers, which rotate
    swa = arch.swa
    window = meta.key("attention.sliding_window")
    has_swa = swa is not None and (not swa.needs_window or (isinstance(window, int) and window > 0))
    if name == "llama4" and isinstance(window, int) and window == 0:
        has_swa = False
    pattern_value = meta.key("attention.sliding_window_pattern")
    swa_flags = [False] * n_layers
    if has_swa:
        if isinstance(pattern_value, tuple):
            swa_flags = [bool(v) for v in pattern_value[:n_layers]]
            swa_flags += [False] * (n_layers - len(swa_flags))
        else:
            pattern = int(pattern_value) if isinstance(pattern_value, int) else swa.default_pattern
            swa_flags = [swa.is_swa(il, pattern) for il in range(n_layers)]
    base_swa, scale_swa = freq_base, freq_scale
    if has_swa:
        base_swa = freq_base if swa.base == "inherit" else DEFAULT_FREQ_BASE_SWA
        base_swa = float(F32(_real(meta, "rope.freq_base_swa", base_swa, **_BASE_RULE)))
        scale_swa = freq_scale if swa.scale == "inherit" else 1.0
        if not swa.own_base:
            base_swa = freq_base
        if swa.plain:
            scale_swa = 1.0
    switched_on = True
    if arch.switch_key is not None:
        value = meta.key(arch.switch_key)
        switched_on = True if value is None else bool(value)

    layers = []
    for il in range(n_layers):
        is_swa = swa_flags[il]
        rotates = switched_on
        if arch.nope is not None:
            rotates = rotates and arch.nope.rotates(il, is_swa=is_swa, has_swa=has_swa)
        plain = is_swa and swa is not None and swa.plain
        layers.append(
            LlamaCppLayer(
                index=il,
                rotates=rotates,
                is_swa=is_swa,
                head_dim=head_dim_swa if is_swa else head_dim,
                n_dims=n_rot_swa if is_swa else n_rot_full,
                mode=mode,
                freq_base=base_swa if is_swa else freq_base,
                freq_scale=scale_swa if is_swa else freq_scale,
                ext_factor=0.0 if plain else ext_factor,
                attn_factor=1.0 if plain else attn_factor,
                beta_fast=float(beta_fast),
                beta_slow=float(beta_slow),
                n_ctx_orig=n_ctx_train if (plain and name == "laguna") else n_ctx_orig,
                freq_factors=None if plain else factors,
                factors_tensor=None if plain else factors_name,
                sections=sections,
            )
        )
    for layer in layers:
        _check_factors(layer)
    return LlamaCppRope(
        architecture=name,
        arch=arch,
        layers=tuple(layers),
        n_ctx=int(n_ctx),
        n_ctx_train=int(n_ctx_train),
        scaling_type=scaling,
        layers_reason=layers_unknown(name),
    )


def _check_factors(layer: LlamaCppLayer) -> None:
    """A RoPE factor tensor holds a finite positive factor for each of the layer's pairs (the
    angles are divided by them; ggml asserts the length)."""
    factors = layer.freq_factors
    if factors is None:
        return
    if factors.size < layer.n_pairs:
        raise InputError(
            f"meta: {layer.factors_tensor} must hold one factor per rotary pair "
            f"({layer.n_pairs}), got {factors.size}"
        )
    used = factors[: layer.n_pairs]
    bad = ~(np.isfinite(used) & (used > 0))
    if np.any(bad):
        pair = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"meta: {layer.factors_tensor} must hold finite positive factors (the angles are "
            f"divided by them), got {float(used[pair])!r} for pair {pair}"
        )
    # ggml divides each float32 angle by its factor: a factor this small sends an angle past
    # float32's largest value (inf, then NaN in cos and sin). Angles grow with the position, so
    # the last position llama.cpp accepts tells.
    last = np.array([_MAX_LLAMA_POSITION - 1], dtype=np.float64)
    with np.errstate(all="ignore"):
        angles = _angle_block(last, layer, _theta_scale(layer), _ramp_mix(layer))[0]
    if not np.all(np.isfinite(angles)):
        pair = int(np.flatnonzero(~np.isfinite(angles))[0])
        raise InputError(
            f"meta: {layer.factors_tensor} must hold factors that keep every angle finite in "
            f"float32 (ggml divides each angle by its factor; at position 2**24 - 1, the last "
            f"llama.cpp accepts, pair {pair}'s overflows), got {float(used[pair])!r} for pair "
            f"{pair}"
        )


def _kernel_mscale(attn_factor: float, freq_scale: float, ext_factor: float) -> np.float32:
    """The factor ggml's kernel puts on cos and sin (``rope_yarn``'s ``mscale``), in float32."""
    mscale = F32(attn_factor)
    if ext_factor != 0:
        ratio = F32(1) / F32(freq_scale)
        with np.errstate(over="ignore"):  # inf: refused by llama_cpp_layers
            mscale = F32(mscale * (F32(1) + F32(0.1) * F32(_libm().logf(float(ratio)))))
    return mscale


def _theta_scale(layer: LlamaCppLayer) -> np.float32:
    exponent = F32(-2.0) / F32(layer.n_dims)
    return F32(_libm().powf(float(F32(layer.freq_base)), float(exponent)))


#: Positions are below 2**24: llama.cpp's int32 position ids, converted to float32 exactly.
_MAX_LLAMA_POSITION = 2**24


def _check_llama_positions(
    positions: object, layer: object, *, most_angles: int
) -> NDArray[np.float64]:
    """Whole positions in [0, 2**24) (an int ``n``: 0 to n - 1), for a LlamaCppLayer, giving
    at most ``most_angles`` angles (refused before any array is made)."""
    if not isinstance(layer, LlamaCppLayer):
        raise InputTypeError(
            f"layer must be a LlamaCppLayer (one of llama_cpp_layers(meta).layers), got "
            f"{describe(layer)}"
        )
    limit = most_angles // max(layer.n_pairs, 1)
    # A count is refused before check_positions makes its arange.
    count = positions if isinstance(positions, numbers.Integral) else None
    if count is not None and not isinstance(count, bool | np.bool_) and count > limit:
        raise InputError(
            f"positions must be at most {limit:,} positions for {layer.n_pairs} pairs (at most "
            f"{most_angles:,} angles), got {count:,}"
        )
    values = check_positions(positions).values
    if values.size > limit:
        raise InputError(
            f"positions must be at most {limit:,} positions for {layer.n_pairs} pairs (at most "
            f"{most_angles:,} angles), got {values.size:,}"
        )
    if values.size and (
        values.min() < 0 or values.max() >= _MAX_LLAMA_POSITION or np.any(values % 1)
    ):
        raise InputError(
            "positions must be whole numbers in [0, 2**24) (llama.cpp's position ids), got "
            f"{describe(positions)}"
        )
    return values


def llama_cpp_angles(positions: ArrayLike, layer: LlamaCppLayer) -> NDArray[np.float32]:
    """The float32 angle of every pair at every position, as ggml's CPU kernel computes it.

    Parameters
    ----------
    positions : int or array_like of int
        Positions (llama.cpp's int32 position ids), each below 2**24; an int ``n`` means
        0 to ``n - 1``.
    layer : LlamaCppLayer
        One of :func:`llama_cpp_layers`' layers.

    Returns
    -------
    ndarray of float32, shape (n_positions, n_pairs)
        ``theta`` before ``cosf``/``sinf`` (see the module's notes).
    """
    positions = _check_llama_positions(positions, layer, most_angles=_MAX_ANGLES)
    ts, mix = _theta_scale(layer), _ramp_mix(layer)
    angles = np.empty((positions.size, layer.n_pairs), dtype=F32)
    # A block of rows at a time: the float64 temporaries of the fused multiply-add stay small.
    rows = max(1, _BLOCK // layer.n_pairs)
    for start in range(0, positions.size, rows):
        block = positions[start : start + rows]
        angles[start : start + block.size] = _angle_block(block, layer, ts, mix)
    return angles


def _ramp_mix(layer: LlamaCppLayer) -> NDArray[np.float32] | None:
    """YaRN's per-pair mix of extrapolated angles (``ramp * ext_factor``), or None without."""
    if layer.ext_factor == 0:
        return None
    return _ramp(*layer.correction_range(), np.arange(layer.n_pairs)) * F32(layer.ext_factor)


def _angle_block(positions, layer: LlamaCppLayer, ts: np.float32, mix) -> NDArray[np.float32]:
    running = np.empty((positions.size, layer.n_pairs), dtype=F32)
    running[:, 0] = positions.astype(F32)
    running[:, 1:] = ts
    theta = np.multiply.accumulate(running, axis=1, dtype=F32)
    if layer.freq_factors is not None:
        theta = theta / layer.freq_factors[: layer.n_pairs].astype(F32)[None, :]
    interp = F32(layer.freq_scale) * theta
    if mix is None:
        return interp
    # ``interp * (1 - mix) + extrap * mix``: GCC contracts it to ``fma(interp, 1 - mix,
    # extrap * mix)`` (its default -ffp-contract=fast, on a CPU with FMA: a -march=native build
    # on x86-64); measured bit for bit against ggml_rope_ext here, where the unfused sum differs
    # in 1,753 of 192,000 cos values. A build without FMA rounds both products.
    shape = interp.shape
    one_minus = np.broadcast_to((F32(1) - mix)[None, :], shape)
    extrap_mix = theta * mix[None, :]
    return float32.fma(interp, one_minus, extrap_mix).astype(F32)


#: Most angles whose cos and sin one call of :func:`llama_cpp_cos_sin` computes.
_MAX_COS_SIN = 1 << 20


def llama_cpp_cos_sin(
    positions: ArrayLike, layer: LlamaCppLayer
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """cos and sin of each pair at each position as ggml's CPU kernel caches them: the C
    library's ``cosf``/``sinf`` of :func:`llama_cpp_angles`, times the kernel's ``mscale``.

    One C call per value: meant for small tables (the comparison with ggml itself).
    """
    values = _check_llama_positions(positions, layer, most_angles=_MAX_COS_SIN)
    theta = llama_cpp_angles(values, layer)
    libm = _libm()
    mscale = _kernel_mscale(layer.attn_factor, layer.freq_scale, layer.ext_factor)
    flat = theta.ravel().tolist()
    cos = np.array([libm.cosf(t) for t in flat], dtype=F32).reshape(theta.shape) * mscale
    sin = np.array([libm.sinf(t) for t in flat], dtype=F32).reshape(theta.shape) * mscale
    return cos.astype(F32), sin.astype(F32)


def layer_groups(layers: Sequence[LlamaCppLayer]) -> list[list[int]]:
    """Indices of layers that rotate identically, in order of first appearance."""
    groups: dict[tuple, list[int]] = {}
    for layer in layers:
        factors = None if layer.freq_factors is None else layer.freq_factors.tobytes()
        key = (
            layer.rotates,
            layer.n_dims,
            layer.freq_base,
            layer.freq_scale,
            layer.ext_factor,
            layer.attn_factor,
            layer.n_ctx_orig,
            factors,
            layer.is_swa,
        )
        groups.setdefault(key, []).append(layer.index)
    return list(groups.values())
