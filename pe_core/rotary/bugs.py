"""The mistakes people make when they write or port a rotary encoding, and how each shows in a
cos/sin cache or ``inv_freq``: the catalogue :func:`pe_core.identify_rope` names them from.

Each :class:`RopeBug` of :data:`ROPE_BUGS` has the wrong code as people write it, the fix, the
public issues that reported it, ``inject(cos, sin, positions, rope)`` that puts the mistake into a
correct cache (so tests can check that it is named), and the detectors the identification asks:
``detect`` against a config, ``detect_structure`` for the columns against a config,
``detect_blind`` from the numbers alone.

>>> import pe_core
>>> rope = pe_core.rope_frequencies(64, base=10_000.0)
>>> cos, sin = pe_core.rope_cos_sin(512, rope)
>>> cos, sin = ROPE_BUGS["bf16_positions"].inject(cos, sin, np.arange(512), rope)
>>> pe_core.identify_rope(cos, sin).bugs
('bf16_positions',)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.formats import round_to_precision

__all__ = ["ROPE_BUGS", "Finding", "RopeBug"]


@dataclass(frozen=True)
class Finding:
    """One thing the numbers show: a bug of :data:`ROPE_BUGS` (``bug`` set) or an observation.

    Attributes
    ----------
    name : str
        A key of :data:`ROPE_BUGS`, or an observation's name ("base_differs", ...).
    title : str
        What it is, in a few words (for display).
    evidence : mapping of str to number, str or tuple
        The measured values that show it (fitted base, factor, format, ...).
    references : tuple of str
        Public issues or pull requests that reported it (URLs), when there are any.
    bug : RopeBug or None
        The catalogue entry, with its wrong code and fix.
    """

    name: str
    title: str
    evidence: Mapping = field(default_factory=dict)
    references: tuple[str, ...] = ()
    bug: RopeBug | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))


@dataclass(frozen=True)
class RopeBug:
    """One mistake: what people write, the fix, who reported it, and how it shows.

    Attributes
    ----------
    name, title, wrong_code, fix : str
    references : tuple of str
        Public reports (URLs).
    inject : callable
        ``inject(cos, sin, positions, rope) -> (cos, sin)``: the cache with this mistake, from
        the correct cache of ``rope`` (a :class:`pe_core.RotaryEncoding`, its layout) at
        ``positions``, in the dtype of ``cos`` (rounded to bfloat16 when ``cos`` holds
        bfloat16 values). Angles are computed as transformers computes them (float32).
    applies : callable
        ``applies(rope) -> bool``: whether the mistake can be made for this encoding (YaRN's
        attention factor needs one that is not 1...).
    detect, detect_structure, detect_blind : callable or None
        ``detect(context) -> dict | None``: the evidence that this mistake reproduces the
        data, given the config's encoding; ``detect_structure`` the same for the rotating
        columns and layout; ``detect_blind`` from the numbers alone. ``context`` is the
        identification's :class:`pe_core.rotary.identify.Context`.
    """

    name: str
    title: str
    wrong_code: str
    fix: str
    references: tuple[str, ...]
    inject: Callable
    applies: Callable = field(default=lambda rope: True, compare=False)
    detect: Callable | None = field(default=None, compare=False)
    detect_structure: Callable | None = field(default=None, compare=False)
    detect_blind: Callable | None = field(default=None, compare=False)

    def finding(self, **evidence) -> Finding:
        """This bug as a finding with ``evidence``."""
        return Finding(self.name, self.title, evidence, self.references, self)


# --- building wrong caches ---------------------------------------------------------------------


def _storage_of(cos) -> str | None:
    """ "bfloat16" when every value of ``cos`` is a bfloat16 number, else None."""
    values = np.asarray(cos, dtype=np.float64)
    return "bfloat16" if np.array_equal(round_to_precision(values, "bfloat16"), values) else None


def _finish(cos, sin, like) -> tuple[NDArray, NDArray]:
    """``cos`` and ``sin`` in the dtype of ``like``, rounded to bfloat16 if it holds
    bfloat16 values."""
    storage = _storage_of(like)
    dtype = np.asarray(like).dtype
    if storage is not None:
        cos, sin = round_to_precision(cos, storage), round_to_precision(sin, storage)
    return np.asarray(cos).astype(dtype), np.asarray(sin).astype(dtype)


def _pairs_to_columns(cos_pairs, sin_pairs, layout: str):
    if layout == "interleaved":
        return np.repeat(cos_pairs, 2, axis=1), np.repeat(sin_pairs, 2, axis=1)
    return np.concatenate([cos_pairs, cos_pairs], axis=1), np.concatenate(
        [sin_pairs, sin_pairs], axis=1
    )


def _transformers_cache(
    inv_freq, attention_factor, positions, layout, *, freq_format=None, positions_format=None,
    angle_format=None,
):  # fmt: skip
    """cos and sin as transformers computes them (float32 ``inv_freq @ position_ids``, float32
    cos and sin, times the attention factor), with the roundings of a bug."""
    w = np.asarray(inv_freq, dtype=np.float64).astype(np.float32).astype(np.float64)
    p = np.asarray(positions, dtype=np.float64)
    if angle_format is not None:
        freq_format = positions_format = angle_format
    if freq_format is not None:
        w = round_to_precision(w, freq_format)
    if positions_format is not None:
        p = round_to_precision(p, positions_format)
    p = p.astype(np.float32).astype(np.float64)
    angles = round_to_precision(p[:, None] * w[None, :], angle_format or "float32")
    factor = np.float32(attention_factor)
    cos = (np.cos(angles).astype(np.float32) * factor).astype(np.float64)
    sin = (np.sin(angles).astype(np.float32) * factor).astype(np.float64)
    return _pairs_to_columns(cos, sin, layout)


def _recomputed(**rounding):
    def inject(cos, sin, positions, rope):
        wrong = _transformers_cache(
            rope.inv_freq, rope.attention_factor, positions, rope.layout, **rounding
        )
        return _finish(*wrong, cos)

    return inject


def _with_frequencies(frequencies):
    """An injector that recomputes the cache with ``frequencies(rope)``."""

    def inject(cos, sin, positions, rope):
        wrong = _transformers_cache(
            frequencies(rope), rope.attention_factor, positions, rope.layout
        )
        return _finish(*wrong, cos)

    return inject


def _exponent(rope) -> NDArray[np.float64]:
    return np.arange(rope.n_pairs, dtype=np.float64) * 2 / rope.rotary_dim


# --- the roundings ------------------------------------------------------------------------------


def _detect_rounding(**rounding):
    def detect(context):
        expected = context.expected
        fmt = next(iter(rounding.values()))
        if context.comparison is None:
            if "freq_format" not in rounding:
                return None
            ok = context.explains(expected.inv_freq, freq_format=fmt)
        else:
            ok = context.explains(expected.inv_freq, expected.attention_factor, **rounding)
        return {"format": fmt} if ok else None

    return detect


# --- layout and columns --------------------------------------------------------------------


def _swap_layout(cos, sin, positions, rope):
    d, half = rope.rotary_dim, rope.rotary_dim // 2
    cos, sin = np.asarray(cos), np.asarray(sin)
    if rope.layout == "halves":
        pairs = slice(0, half)
        target = "interleaved"
        cos_pairs, sin_pairs = cos[:, pairs], sin[:, pairs]
    else:
        target = "halves"
        cos_pairs, sin_pairs = cos[:, 0:d:2], sin[:, 0:d:2]
    wrong = _pairs_to_columns(cos_pairs, sin_pairs, target)
    return wrong[0].astype(cos.dtype), wrong[1].astype(sin.dtype)


def _detect_layout(context):
    cache, expected = context.cache, context.expected
    if cache.layout not in ("halves", "interleaved") or cache.layout == expected.layout:
        return None
    if cache.cos.shape[1] < 2:
        return None
    return {"layout": cache.layout, "config_layout": expected.layout}


def _negated_sin(cos, sin, positions, rope):
    return np.asarray(cos).copy(), -np.asarray(sin)


def _detect_negated_sin(context):
    expected = context.expected
    if context.sin_sign > 0 or context.comparison is None:
        return None
    if context.explains(expected.inv_freq, expected.attention_factor, sin_sign=-1.0):
        return {"sin_sign": -1}
    return None


def _blind_negated_sin(context):
    # Only for data that is an encoding with sin negated (noise has phases of either sign).
    return {"sin_sign": -1} if context.sin_sign < 0 and context.explained else None


def _wrong_columns(cos, sin, positions, rope):
    """The rotary block placed in the last ``rotary_dim`` columns of the head, the first ones
    passing through (cos 1, sin 0): transformers rotates the first ones."""
    cos, sin = np.asarray(cos), np.asarray(sin)
    n = cos.shape[0]
    passing = rope.head_dim - rope.rotary_dim
    ones = np.ones((n, passing), dtype=cos.dtype)
    zeros = np.zeros((n, passing), dtype=sin.dtype)
    return np.concatenate([ones, cos], axis=1), np.concatenate([zeros, sin], axis=1)


def _detect_columns(context):
    cache, expected = context.cache, context.expected
    if cache.width != expected.head_dim or expected.rotary_dim == expected.head_dim:
        return None
    wanted = (0, expected.rotary_dim)
    if cache.rotary_columns == wanted:
        return None
    return {"rotary_columns": cache.rotary_columns, "config_rotary_columns": wanted}


# --- attention factor ------------------------------------------------------------------------


def _scaled(power):
    """An injector: the cache recomputed with the attention factor to ``1 + power`` (0:
    dropped, 2: applied twice), rounded once as a framework would round it."""

    def inject(cos, sin, positions, rope):
        wrong = _transformers_cache(
            rope.inv_freq, rope.attention_factor ** (1 + power), positions, rope.layout
        )
        return _finish(*wrong, cos)

    return inject


def _has_attention_factor(rope) -> bool:
    return rope.attention_factor != 1.0


def _detect_attention(power):
    def detect(context):
        expected = context.expected
        if context.comparison is None or expected.attention_factor == 1.0:
            return None
        wanted = expected.attention_factor**power
        if abs(context.amplitude - wanted) > 4 * context.comparison.u_storage * wanted + 1e-6:
            return None
        if context.explains(expected.inv_freq, wanted):
            return {
                "attention_factor": context.amplitude,
                "config_attention_factor": expected.attention_factor,
            }
        return None

    return detect


def _blind_twice(context):
    formula = context.fit.parameters.get("attention_factor_formula")
    if context.fit.rope_type != "yarn" or formula is None or formula == 1.0:
        return None
    if context.amplitude is not None and abs(context.amplitude - formula**2) < 1e-3:
        return {"attention_factor": context.amplitude, "yarn_formula": formula}
    return None


# --- frequencies ---------------------------------------------------------------------------


def _ntk_frequencies(rope):
    """Dynamic NTK's frequencies at the target length (``factor`` times the trained one)."""
    factor = rope.parameters["factor"]
    d = rope.rotary_dim
    base = rope.base * factor ** (d / (d - 2))  # seq_len = factor * L
    return base ** -_exponent(rope)


def _is_dynamic(rope) -> bool:
    """Dynamic NTK within the trained length (where transformers keeps the base)."""
    return rope.rope_type == "dynamic" and rope.effective_base == rope.base


def _detect_dynamic(context):
    expected, fit = context.expected, context.fit
    if expected.rope_type != "dynamic" or fit.rope_type != "default":
        return None
    if expected.effective_base != expected.base:  # beyond the trained length: NTK is right
        return None
    if fit.base_fit <= expected.base * (1 + 1e-6):
        return None
    d = 2 * context.measured.size
    growth = (fit.base_fit / expected.base) ** ((d - 2) / d)
    factor = expected.parameters["factor"]
    length = expected.training_length
    if not context.explains(fit.base_fit ** -(np.arange(d // 2) * 2 / d)):
        return None
    return {
        "base": fit.base_fit,
        "config_base": expected.base,
        "implied_seq_len": float(length * (growth + factor - 1) / factor),
        "original_max_position_embeddings": length,
    }


def _base_times(multiple):
    def frequencies(rope):
        return rope.inv_freq * multiple ** -_exponent(rope)

    return frequencies


def _plain_or_linear(rope) -> bool:
    return rope.rope_type in ("default", "linear")


def _detect_base_100(context):
    expected, fit = context.expected, context.fit
    exponent = np.arange(expected.n_pairs, dtype=np.float64) * 2 / (2 * expected.n_pairs)
    for multiple in (100.0, 0.01):
        if not math.isclose(fit.base_fit, expected.base * multiple, rel_tol=0.01):
            continue
        if context.explains(expected.inv_freq * multiple**-exponent, expected.attention_factor):
            return {"base": fit.base, "config_base": expected.base, "ratio": multiple}
    return None


def _half_exponent(rope):
    # base ** (-i / d) for pair i: the square root of the frequencies before scaling.
    return np.sqrt(rope.original_inv_freq) * (rope.inv_freq / rope.original_inv_freq)


def _detect_half_exponent(context):
    expected, fit = context.expected, context.fit
    if not math.isclose(fit.base_fit**2, expected.base, rel_tol=0.02):
        return None
    if context.explains(_half_exponent(expected), expected.attention_factor):
        return {"base": fit.base_fit, "base_squared": fit.base_fit**2, "config_base": expected.base}
    return None


def _blind_half_exponent(context):
    fit = context.fit
    if fit.base_snapped or fit.rope_type not in ("default", "linear"):
        return None
    squared = fit.base_fit**2
    for digits in (1, 2):
        rounded = float(f"{squared:.{digits}g}")
        if abs(rounded / squared - 1) <= 2 * fit.base_uncertainty + 1e-9:
            return {"base": fit.base_fit, "base_squared": rounded}
    return None


# --- library mistakes -------------------------------------------------------------------------


def _yarn_ramp(rope) -> NDArray[np.float64]:
    """YaRN's ramp per pair (0 below the correction range, 1 above), as transformers forms it."""
    low, high = rope.parameters["correction_range"]
    if low == high:
        high += 0.001
    return np.clip((np.arange(rope.n_pairs, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def inverted_yarn_frequencies(original, factor, ramp) -> NDArray[np.float64]:
    """litgpt 0.5.13's YaRN: ``interpolation * (1 - ramp) + extrapolation * ramp`` where
    transformers blends ``interpolation * ramp + extrapolation * (1 - ramp)``: the fast pairs
    divided by ``factor`` and the slow ones left alone."""
    return original / factor * (1.0 - ramp) + original * ramp


def _inverted_yarn(rope):
    factor = rope.parameters["factor"]
    return inverted_yarn_frequencies(rope.original_inv_freq, factor, _yarn_ramp(rope))


def _is_yarn(rope) -> bool:
    return rope.rope_type == "yarn" and rope.parameters.get("factor", 1.0) > 1.0


def _detect_inverted_yarn(context):
    expected = context.expected
    if expected.rope_type != "yarn":
        return None
    wrong = _inverted_yarn(expected)
    # litgpt multiplies cos and sin by an attention factor only when the config gives mscale.
    for factor in dict.fromkeys([expected.attention_factor, 1.0]):
        if context.explains(wrong, factor):
            return {
                "factor": expected.parameters["factor"],
                "correction_range": tuple(expected.parameters["correction_range"]),
                "attention_factor": context.amplitude,
            }
    return None


def _blind_inverted_yarn(context):
    parameters = context.fit.parameters
    if not parameters.get("ramp_inverted"):
        return None
    keys = ("factor", "correction_range", "original_max_position_embeddings")
    return {key: parameters[key] for key in keys if key in parameters}


def keras_hub_dynamic_factor(factor: float, rotary_dim: int) -> float:
    """The linear factor keras-hub's ``RotaryEmbedding(rope_type="dynamic",
    scaling_factor=factor)`` divides every frequency by: ``factor ** (d / (d - 2))``."""
    return factor ** (rotary_dim / max(1, rotary_dim - 2))


def _keras_hub_dynamic(rope):
    factor = keras_hub_dynamic_factor(rope.parameters["factor"], rope.rotary_dim)
    return rope.original_inv_freq / factor


def _is_dynamic_scaling(rope) -> bool:
    return rope.rope_type == "dynamic" and rope.parameters.get("factor", 1.0) > 1.0


def _detect_keras_hub_dynamic(context):
    expected = context.expected
    if expected.rope_type != "dynamic" or context.fit.rope_type != "linear":
        return None
    if context.explains(_keras_hub_dynamic(expected), expected.attention_factor):
        factor = expected.parameters["factor"]
        return {
            "scaling_factor": factor,
            "linear_factor": keras_hub_dynamic_factor(factor, expected.rotary_dim),
        }
    return None


def _blind_keras_hub_dynamic(context):
    parameters = context.fit.parameters
    if "keras_hub_scaling_factor" not in parameters:
        return None
    return {
        "scaling_factor": parameters["keras_hub_scaling_factor"],
        "linear_factor": parameters["factor"],
    }


_LITGPT = "litgpt 0.5.13, litgpt/model.py build_rope_cache (YaRN branch)"
_KERAS_HUB = "keras-hub 0.32.0, keras_hub/src/layers/modeling/rotary_embedding.py _get_inverse_freq"
_NEOX_PR = "https://github.com/EleutherAI/gpt-neox/pull/1016"
_TRANSFORMERS_PR = "https://github.com/huggingface/transformers/pull/29285"

#: The catalogue, in the order a departure from a config is explained.
ROPE_BUGS: Mapping[str, RopeBug] = MappingProxyType(
    {
        bug.name: bug
        for bug in (
            RopeBug(
                "wrong_pair_layout",
                "the wrong pair layout: interleaved pairs (2i, 2i+1) where the model rotates "
                "halves (i, i + d/2), or the reverse (a missing q/k weight permutation)",
                "emb = torch.cat((freqs, freqs), dim=-1)  # with an interleaved rotate, or "
                "repeat_interleave with rotate_half",
                "build the cache in the layout the model's rotate uses, or permute the q/k "
                "projection rows (pe_core.rope_permutation) when converting weights",
                (
                    "https://github.com/ggml-org/llama.cpp/pull/22611",
                    "https://github.com/jzhang38/TinyLlama/issues/24",
                ),
                _swap_layout,
                detect_structure=_detect_layout,
            ),
            RopeBug(
                "negated_sin",
                "sin with the opposite sign: every pair rotates backwards (exp(-i p w), or "
                "rotate_half written cat(x2, -x1))",
                "def rotate_half(x): x1, x2 = x.chunk(2, dim=-1); return torch.cat((x2, -x1), -1)",
                "rotate_half returns torch.cat((-x2, x1), dim=-1) and the cache holds "
                "+sin(p w): q * cos + rotate_half(q) * sin",
                (),
                _negated_sin,
                detect=_detect_negated_sin,
                detect_blind=_blind_negated_sin,
            ),
            RopeBug(
                "partial_rotary_wrong_columns",
                "partial rotary applied to the wrong columns: the rotating block is not the "
                "first rotary_dim columns of the head",
                "q_rot, q_pass = q[..., -rotary_dim:], q[..., :-rotary_dim]",
                "rotate q[..., :rotary_dim] and pass q[..., rotary_dim:] through, as "
                "transformers' partial_rotary_factor does",
                (),
                _wrong_columns,
                applies=lambda rope: rope.rotary_dim < rope.head_dim,
                detect_structure=_detect_columns,
            ),
            RopeBug(
                "bf16_positions",
                "position ids in bfloat16: positions beyond 256 merge (256 and 257 share one "
                "angle)",
                "t = torch.arange(seq_len, dtype=self.inv_freq.dtype)  # inv_freq cast to bf16",
                "make position ids (and the product with inv_freq) float32: "
                "torch.arange(seq_len, dtype=torch.float32)",
                (_NEOX_PR,),
                _recomputed(positions_format="bfloat16"),
                detect=_detect_rounding(positions_format="bfloat16"),
            ),
            RopeBug(
                "bf16_inv_freq",
                "inv_freq rounded to bfloat16 (model.to(torch.bfloat16) casts the buffer): "
                "every angle off by up to 0.4%",
                "self.register_buffer('inv_freq', inv_freq)  # then model.bfloat16()",
                "keep inv_freq in float32 (persistent=False and recompute after the cast, or "
                "inv_freq.float() in forward)",
                (_NEOX_PR, "https://github.com/sgl-project/sglang-jax/issues/1472"),
                _recomputed(freq_format="bfloat16"),
                detect=_detect_rounding(freq_format="bfloat16"),
            ),
            RopeBug(
                "bf16_angles",
                "angles p * inv_freq computed in bfloat16 (the matmul under autocast)",
                "freqs = inv_freq[None, :, None] @ position_ids[:, None, :]  # under autocast",
                "compute the product in float32: "
                "with torch.autocast(device_type, enabled=False): ... .float()",
                (_TRANSFORMERS_PR,),
                _recomputed(angle_format="bfloat16"),
                detect=_detect_rounding(angle_format="bfloat16"),
            ),
            RopeBug(
                "yarn_mscale_dropped",
                "the attention factor (YaRN's mscale, LongRoPE's scaling) dropped: cos and "
                "sin not multiplied by it",
                "cos, sin = emb.cos(), emb.sin()",
                "cos = emb.cos() * attention_scaling; sin = emb.sin() * attention_scaling",
                (),
                _scaled(-1),
                applies=_has_attention_factor,
                detect=_detect_attention(0),
            ),
            RopeBug(
                "yarn_mscale_twice",
                "the attention factor applied twice: in cos and sin and again on the queries "
                "or the softmax scale",
                "cos = emb.cos() * mscale  # and q = q * mscale elsewhere",
                "apply it once: transformers multiplies cos and sin by attention_scaling",
                (),
                _scaled(1),
                applies=_has_attention_factor,
                detect=_detect_attention(2),
                detect_blind=_blind_twice,
            ),
            RopeBug(
                "dynamic_ntk_within_original_length",
                "dynamic NTK applied within the original length: the NTK base used where "
                "transformers keeps the trained frequencies",
                "base = base * (factor * seq_len / L - (factor - 1)) ** (d / (d - 2))  # for "
                "every seq_len",
                "change the base only when seq_len > max_position_embeddings "
                "(transformers' dynamic_rope_update)",
                (),
                _with_frequencies(_ntk_frequencies),
                applies=_is_dynamic,
                detect=_detect_dynamic,
            ),
            RopeBug(
                "base_off_by_100x",
                "base (rope_theta) off by a factor of 100, as after a config migration that "
                "lost or added two zeros",
                "rope_theta = 10000.0  # config says 1000000.0",
                "read rope_theta (or rope_parameters['rope_theta']) from the config",
                (),
                _with_frequencies(_base_times(0.01)),
                applies=_plain_or_linear,
                detect=_detect_base_100,
            ),
            RopeBug(
                "exponent_i_over_d",
                "exponent i/d where 2i/d belongs: the frequencies of the square root of the base",
                "inv_freq = 1.0 / base ** (torch.arange(0, dim // 2).float() / dim)",
                "inv_freq = 1.0 / base ** (torch.arange(0, dim, 2).float() / dim)",
                (),
                _with_frequencies(_half_exponent),
                applies=_plain_or_linear,
                detect=_detect_half_exponent,
                detect_blind=_blind_half_exponent,
            ),
            RopeBug(
                "yarn_ramp_inverted",
                "YaRN's ramp inverted: the fast pairs divided by the factor and the slow ones "
                "left alone (litgpt 0.5.13), where YaRN keeps the fast pairs and interpolates "
                "the slow ones",
                "theta = theta_interpolation * (1 - ramp) + theta_extrapolation * ramp",
                "blend as transformers does: theta = theta_interpolation * ramp + "
                "theta_extrapolation * (1 - ramp)  (extrapolation factor 1 - ramp)",
                (_LITGPT,),
                _with_frequencies(_inverted_yarn),
                applies=_is_yarn,
                detect=_detect_inverted_yarn,
                detect_blind=_blind_inverted_yarn,
            ),
            RopeBug(
                "keras_hub_dynamic",
                "keras-hub's rope_type='dynamic': every frequency divided by "
                "scaling_factor ** (d / (d - 2)) at every length, a fixed linear scaling, where "
                "transformers' dynamic NTK keeps the trained frequencies up to "
                "max_position_embeddings and raises the base beyond",
                "return inv / ops.power(scaling_factor, rotary_dim / (rotary_dim - 2))",
                "for transformers' dynamic NTK: base * (factor * seq_len / L - (factor - 1)) ** "
                "(d / (d - 2)) only when seq_len > L; for a fixed scaling, rope_type='linear' "
                "with the factor meant",
                (_KERAS_HUB,),
                _with_frequencies(_keras_hub_dynamic),
                applies=_is_dynamic_scaling,
                detect=_detect_keras_hub_dynamic,
                detect_blind=_blind_keras_hub_dynamic,
            ),
        )
    }
)
