"""Fitting a scaling variant to measured frequencies: the base (snapped to a round value
within its uncertainty), then the variant whose ratio to plain RoPE explains every pair
(default, linear, YaRN, Llama 3, LongRoPE, proportional) and its parameters, and the attention
factor snapped to its formula."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.formats import round_to_precision
from pe_core.errors import InputError
from pe_core.rotary.bugs import inverted_yarn_frequencies
from pe_core.rotary.encoding import rope_frequencies
from pe_core.rotary.identify._compare import _U32
from pe_core.rotary.variants import ROPE_VARIANTS, yarn_correction_range

#: Round RoPE bases of released models, tried when the fit's own rounding does not settle.
COMMON_BASES = (
    10_000.0,
    50_000.0,
    100_000.0,
    150_000.0,
    250_000.0,
    500_000.0,
    1_000_000.0,
    5_000_000.0,
    10_000_000.0,
    100_000_000.0,
)


@dataclass
class _Fit:
    rope_type: str | None
    base: float
    base_fit: float
    base_uncertainty: float
    base_snapped: bool
    parameters: dict
    model: NDArray[np.float64]  # the variant's frequencies with the parameters found
    scale: NDArray[np.float64]
    explained: bool


def _significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


def _snap(value: float, relative: float, max_digits: int = 4) -> tuple[float, bool]:
    """The roundest number within ``relative`` of ``value`` (fewest significant digits)."""
    for digits in range(1, max_digits + 1):
        candidate = _significant(value, digits)
        if abs(candidate - value) <= relative * abs(value):
            return candidate, True
    return value, False


def _base_from_fast_pairs(w, sigma, rotary_dim) -> tuple[float, float]:
    """Base and its relative uncertainty from the fastest pairs (the ones that context
    extension leaves alone): ``log w_i = c - (2i/d) ln base`` by weighted least squares over
    the first quarter of the pairs (at least 3)."""
    n = w.size
    k = min(n, max(3, n // 4))
    i = np.arange(k, dtype=np.float64)
    y = np.log(w[:k])
    weight = 1.0 / np.maximum(sigma[:k], 1e-15) ** 2
    mean_i = np.sum(weight * i) / np.sum(weight)
    mean_y = np.sum(weight * y) / np.sum(weight)
    spread = np.sum(weight * (i - mean_i) ** 2)
    slope = np.sum(weight * (i - mean_i) * (y - mean_y)) / spread
    slope_sigma = 1.0 / math.sqrt(spread)
    log_base = -slope * rotary_dim / 2
    return math.exp(log_base), slope_sigma * rotary_dim / 2


def _consistent(q, tolerance) -> bool:
    return bool(np.all(np.abs(q - 1.0) <= tolerance))


def _fit_variant(
    w: NDArray[np.float64], sigma: NDArray[np.float64], amplitude, rotary_dim: int | None = None
) -> _Fit:
    """The variant, base and parameters that explain the frequencies ``w`` to their relative
    uncertainty ``sigma`` (the first pairs of ``rotary_dim`` columns, by default all)."""
    n = w.size
    d = 2 * n if rotary_dim is None else rotary_dim
    exponent = np.arange(n, dtype=np.float64) * 2 / d
    estimate, log_sigma = _base_from_fast_pairs(w, sigma, d)
    tolerance = 4 * sigma + 4 * _U32

    def scale_for(base):
        return base**-exponent / w

    # The base: the roundest value the fast pairs allow, then the common ones near the fit.
    candidates = []
    for digits in (1, 2):  # released bases are round: 10,000, 500,000, 1.5e5 ...
        candidates.append(_significant(estimate, digits))
    candidates += [b for b in COMMON_BASES if abs(math.log(b / estimate)) < 0.2]
    fast = min(n, max(3, n // 4))
    base, snapped = estimate, False
    for candidate in dict.fromkeys(candidates):
        q = scale_for(candidate)
        if _consistent(q[:fast] / q[0], tolerance[:fast]):
            base, snapped = candidate, True
            break
    assumed = False
    # A base that is not round but explains every pair as plain RoPE is the simplest story
    # (one number, where LongRoPE's is one factor a pair and describes anything).
    if not snapped and not _consistent(scale_for(estimate) / scale_for(estimate)[0], tolerance):
        # LongRoPE's own factor on every pair, the fastest too: the common base near the fit
        # under which every pair turns at most as fast as plain RoPE (factors >= 1, the first
        # within 10% of 1).
        # An amplitude that is LongRoPE's attention factor sqrt(1 + ln F / ln L) (Phi-3's
        # 1.1902 for 32 and 4096) says LongRoPE whatever the fit: then any common base will do
        # (Phi-3-mini-128k's first factors, 1.03 to 1.45, pull the fit to 232,470).
        signature = amplitude is not None and _longrope_attention(amplitude, 1e-4) is not None
        for candidate in sorted(COMMON_BASES, key=lambda b: abs(math.log(b / estimate))):
            q = scale_for(candidate)
            near = signature or abs(math.log(candidate / estimate)) < 0.2
            if near and np.all(q >= 1 - tolerance) and q[0] <= 1.1:
                base, assumed = candidate, True
                break
    q = scale_for(base)
    result = dict(
        base=base,
        base_fit=estimate,
        base_uncertainty=min(1.0, math.expm1(3 * log_sigma)),
        base_snapped=snapped,
        scale=q,
    )
    original = base**-exponent

    # default: every pair as base**(-2i/d).
    if _consistent(q, tolerance):
        return _Fit("default", parameters={}, model=original, explained=True, **result)
    # linear: every pair divided by one factor.
    factor, uncertainty = _weighted_mean(q, tolerance)
    if factor > 1 and _consistent(q / factor, tolerance):
        factor, round_factor = _snap(factor, 3 * uncertainty + 1e-12)
        parameters = {"factor": factor}
        if not round_factor:
            # keras-hub's "dynamic": a fixed linear scaling by scaling_factor ** (d / (d - 2)).
            power = d / max(1, d - 2)
            keras, round_keras = _snap(factor ** (1 / power), (3 * uncertainty + 1e-12) / power)
            if round_keras and keras > 1 and _consistent(q / keras**power, tolerance):
                factor = keras**power
                parameters = {"factor": factor, "keras_hub_scaling_factor": keras}
        return _Fit(
            "linear",
            parameters=parameters,
            model=original / factor,
            explained=_consistent(q / factor, tolerance),
            **result,
        )
    fast_unchanged = abs(q[0] - 1.0) <= tolerance[0]
    ramped = np.all(np.diff(q) >= -tolerance[1:] * q[1:])
    # Some pair slowed beyond its tolerance (the slowest ones are measured least precisely
    # from short or noisy data: any pair will do).
    if fast_unchanged and ramped and np.any(q > 1 + tolerance):
        scaled = _scaled_band(q, tolerance)
        if scaled is not None:
            factor, uncertainty = scaled
            factor, _ = _snap(factor, 3 * uncertainty + 1e-12)
            fit = _ramp_variant(w, q, tolerance, factor, original, base, d, amplitude)
            if fit is not None:
                rope_type, parameters, model = fit
                explained = _consistent(model / w, tolerance)
                return _Fit(
                    rope_type, parameters=parameters, model=model, explained=explained, **result
                )
    inverted = _inverted_yarn_fit(w, q, tolerance, original, base, d)
    if inverted is not None:
        parameters, model = inverted
        return _Fit("yarn", parameters=parameters, model=model, explained=True, **result)
    if np.all(q >= 1 - tolerance):
        # LongRoPE: a factor of its own per pair.
        parameters = {"factors": tuple(float(v) for v in q)}
        if assumed:
            parameters["base_assumed"] = True
        return _Fit(
            "longrope",
            parameters=parameters,
            model=w.copy(),
            explained=True,
            **result,
        )
    return _Fit(None, parameters={}, model=w.copy(), explained=False, **result)


def _inverted_yarn_fit(w, q, tolerance, original, base, d):
    """YaRN with its ramp inverted (litgpt 0.5.13: the fast pairs divided by the factor, the
    slow ones kept): the parameters (``ramp_inverted`` True) and frequencies when a round
    factor, transformers' betas (32 and 1) and a power-of-two training length explain every
    pair; else None. Tried before LongRoPE, whose factor per pair would describe it too."""
    if not (q[0] > 1 + tolerance[0] and abs(q[-1] - 1) <= 4 * tolerance[-1] + 1e-3):
        return None
    factor, round_factor = _snap(float(q[0]), 3 * float(tolerance[0]) + 1e-12, max_digits=3)
    if not round_factor:
        return None
    n = w.size
    for power in range(8, 24):
        length = 2**power
        try:
            low, high = yarn_correction_range(32.0, 1.0, d, base, length, truncate=True)
        except InputError:
            continue
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(n, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
        model = inverted_yarn_frequencies(original, factor, ramp)
        if np.all(np.abs(model / w - 1) <= tolerance):
            parameters = {
                "factor": factor,
                "correction_range": (_tidy(low), _tidy(high)),
                "original_max_position_embeddings": length,
                "truncate": True,
                "ramp_inverted": True,
            }
            return parameters, model
    return None


def _weighted_mean(values, tolerance) -> tuple[float, float]:
    """Mean of ``values`` weighted by ``1 / tolerance**2``, and its relative uncertainty."""
    weight = 1.0 / np.maximum(tolerance, 1e-15) ** 2
    return float(np.sum(weight * values) / np.sum(weight)), float(1.0 / np.sqrt(np.sum(weight)))


def _scaled_band(q, tolerance) -> tuple[float, float] | None:
    """The whole factor of the slowest pairs and its relative uncertainty: pairs taken from
    the slowest while each agrees with the mean of those before it; None for fewer than two."""
    factor, uncertainty = float(q[-1]), float(tolerance[-1])
    count = 1
    for i in range(q.size - 2, -1, -1):
        if abs(q[i] / factor - 1) > tolerance[i] + uncertainty:
            break
        count += 1
        factor, uncertainty = _weighted_mean(q[i:], tolerance[i:])
    return (factor, uncertainty) if count >= 2 else None


def _ramp_variant(w, q, tolerance, factor, original, base, d, amplitude):
    """YaRN (ramp linear in the pair index) or Llama 3 (smoothing linear in 1/wavelength)
    between the unchanged fast pairs and the slow pairs divided by ``factor``; None when the
    ratios cannot place a ramp."""
    if not (np.all(np.isfinite(q)) and np.all(q > 0)):
        return None
    n = w.size
    index = np.arange(n, dtype=np.float64)
    ramp = (np.abs(q - 1) > tolerance) & (np.abs(q / factor - 1) > tolerance)
    results = []
    # YaRN: w/w_o = 1 - r (1 - 1/F), r = (i - low) / (high - low) clipped.
    r = (1 - 1 / q) / (1 - 1 / factor)
    if np.count_nonzero(ramp) >= 2:
        slope, intercept = np.polyfit(index[ramp], r[ramp], 1)
        low, high = -intercept / slope, (1 - intercept) / slope
    else:
        # No pair inside the ramp: it lies between the last unchanged and first scaled pair.
        last_unchanged = np.flatnonzero(np.abs(q - 1) <= tolerance)[-1]
        low, high = float(last_unchanged), float(last_unchanged + 1)
    if not (np.isfinite(low) and np.isfinite(high) and high != low):
        # Frequencies too short-lived to measure (a pair that turned by less than its storage's
        # rounding reads as 0): no ramp can be fitted.
        return None
    yarn_ratio = np.clip((index - low) / (high - low), 0, 1)
    yarn = original * (1 - yarn_ratio) + original / factor * yarn_ratio
    yarn_error = float(np.max(np.abs(yarn / w - 1) / tolerance))
    parameters = {"factor": factor, "correction_range": (_tidy(low), _tidy(high))}
    parameters.update(_yarn_lengths(low, high, base, d))
    expected_attention = 0.1 * math.log(factor) + 1
    parameters["attention_factor_formula"] = expected_attention
    results.append((yarn_error, "yarn", parameters, yarn))
    # Llama 3: w = (1 - s) w_o / F + s w_o, s = a w_o + b (linear in 1 / wavelength).
    s = (1 / q - 1 / factor) / (1 - 1 / factor)
    if np.count_nonzero(ramp) >= 2:
        a, b = np.polyfit(original[ramp], s[ramp], 1)
        smooth = np.clip(a * original + b, 0, 1)
        llama = (1 - smooth) * original / factor + smooth * original
        llama_error = float(np.max(np.abs(llama / w - 1) / tolerance))
        parameters3 = {"factor": factor, **_llama3_factors(a, b)}
        results.append((llama_error, "llama3", parameters3, llama))
    else:
        step = _llama3_step(q, tolerance, original, factor)
        if step is not None:
            parameters3, llama = step
            llama_error = float(np.max(np.abs(llama / w - 1) / tolerance))
            results.append((llama_error, "llama3", parameters3, llama))
    # A ramp that fits both equally (a step between two pairs): YaRN when the amplitude is
    # YaRN's formula, else Llama 3 (Llama 4 Scout's equal factors; no attention factor).
    results.sort(key=lambda item: item[0])
    if len(results) == 2 and results[1][0] <= 1 and amplitude is not None:
        yarns = abs(amplitude - expected_attention) < 1e-3
        results.sort(key=lambda item: (item[0] > 1, (item[1] != "yarn") == yarns))
    _, rope_type, parameters, model = results[0]
    exact = _variant_frequencies(rope_type, parameters, base, d)
    if exact is not None and np.all(np.abs(exact / w - 1) <= tolerance):
        model = exact  # the formula with the round parameters found
    return rope_type, parameters, model


def _llama3_step(q, tolerance, original, factor):
    """Llama 3 with equal low and high frequency factors (Llama 4 Scout's 1.0 and 1.0):
    transformers divides by ``factor`` every pair whose wavelength exceeds the training length
    and leaves the others, a step with no pair in between. The parameters and frequencies
    when a power of two lies between the last unchanged pair's wavelength and the first
    scaled one's; else None."""
    unchanged = np.flatnonzero(np.abs(q - 1) <= tolerance)
    scaled = np.flatnonzero(np.abs(q / factor - 1) <= tolerance)
    if unchanged.size == 0 or scaled.size == 0 or scaled[0] != unchanged[-1] + 1:
        return None
    shortest, longest = 2 * np.pi / original[unchanged[-1]], 2 * np.pi / original[scaled[0]]
    powers = [2**k for k in range(8, 24) if shortest <= 2**k < longest]
    if len(powers) != 1:
        return None
    length = powers[0]
    wavelength = 2 * np.pi / original
    model = np.where(wavelength > length, original / factor, original)
    parameters = {
        "factor": factor,
        "low_freq_factor": 1.0,
        "high_freq_factor": 1.0,
        "original_max_position_embeddings": length,
    }
    return parameters, model


def _variant_frequencies(rope_type, parameters, base, d):
    """The variant's frequencies from :func:`pe_core.rope_frequencies` with the parameters
    found, when they are complete; else None."""
    variant = ROPE_VARIANTS[rope_type]
    needed = (*variant.required, *variant.config_requires, "original_max_position_embeddings")
    if any(key not in parameters for key in needed):
        return None
    scaling = {
        "rope_type": rope_type,
        **{k: parameters[k] for k in variant.keys if k in parameters},
    }
    try:
        with warnings.catch_warnings():  # a config's warnings (equal Llama 3 factors) are not ours
            warnings.simplefilter("ignore")
            rope = rope_frequencies(d, base=base, scaling=scaling)
    except InputError:
        return None
    return rope.inv_freq


#: A ramp end this close to a whole number is one (transformers truncates them by default).
_WHOLE = 0.05


def _tidy(value: float) -> float:
    """A ramp end, whole when it is within the fit's noise of a whole number (transformers
    truncates them by default)."""
    return float(round(value)) if abs(value - round(value)) < _WHOLE else float(value)


def _yarn_lengths(low, high, base, d) -> dict:
    """The training length and betas a YaRN correction range implies, when a round one does
    (beta_fast 32 and beta_slow 1, transformers' defaults)."""
    truncate = bool(abs(low - round(low)) < _WHOLE and abs(high - round(high)) < _WHOLE)

    def dimension(length, turns):
        return d * math.log(length / (turns * 2 * math.pi)) / (2 * math.log(base))

    for power in range(8, 24):
        length = 2**power
        lo, hi = dimension(length, 32), dimension(length, 1)
        if truncate:
            lo, hi = max(math.floor(lo), 0), min(math.ceil(hi), d - 1)
            if lo == round(low) and hi == round(high):
                return {"original_max_position_embeddings": length, "truncate": True}
        elif abs(lo - low) < 0.05 and abs(hi - high) < 0.05:
            return {"original_max_position_embeddings": length, "truncate": False}
    return {"truncate": truncate}


def _llama3_factors(a, b) -> dict:
    """Llama 3's ``low_freq_factor``, ``high_freq_factor`` and training length from the
    smoothing line ``s = a w + b`` (``a = L / (2 pi (h - l))``, ``b = -l / (h - l)``), with a
    whole low factor."""
    for low in (1.0, 2.0, 0.5):
        gap = -low / b if b < 0 else math.nan
        if not math.isfinite(gap) or gap <= 0:
            continue
        high = low + gap
        length = 2 * math.pi * a * gap
        snapped_high, ok = _snap(high, 0.02)
        power = 2 ** round(math.log2(length)) if length > 0 else math.nan
        if ok and abs(power / length - 1) < 0.02:
            return {
                "low_freq_factor": low,
                "high_freq_factor": snapped_high,
                "original_max_position_embeddings": int(power),
            }
    return {"smoothing_slope": float(a), "smoothing_intercept": float(b)}


def _proportional_fit(measured, sigma, amplitude, still) -> _Fit:
    """Pairs of frequency 0 after the rotating ones (proportional RoPE: the first
    ``partial_rotary_factor * head_dim / 2`` pairs keep ``base**(-2i/head_dim)``, all divided
    by ``factor``, the others do not rotate): the rotating ones fitted at the whole width."""
    n = measured.size
    rotating = int(np.argmax(still))
    if rotating < 2 or not np.all(still[rotating:]):
        nothing = np.full(n, math.nan)
        return _Fit(None, math.nan, math.nan, math.nan, False, {}, measured.copy(), nothing, False)
    head = _fit_variant(measured[:rotating], sigma[:rotating], amplitude, rotary_dim=2 * n)
    if head.rope_type not in ("default", "linear"):
        head.rope_type, head.explained = None, False
        return head
    model = np.concatenate([head.model, np.zeros(n - rotating)])
    scale = np.concatenate([head.scale, np.full(n - rotating, np.inf)])
    parameters = {
        "factor": head.parameters.get("factor", 1.0),
        "rotating_pairs": rotating,
        "partial_rotary_factor": rotating / n,
    }
    return _Fit(
        "proportional",
        head.base,
        head.base_fit,
        head.base_uncertainty,
        head.base_snapped,
        parameters,
        model,
        scale,
        head.explained,
    )


def _on_grid(measured, sigma, fmt: str) -> bool:
    """Whether the frequencies measured precisely enough (to 2**-11) are numbers of ``fmt``
    (at least 4 of them)."""
    precise = sigma < 2.0**-11
    if np.count_nonzero(precise) < 4:
        return False
    grid = round_to_precision(measured[precise], fmt)
    return bool(np.all(np.abs(measured[precise] / grid - 1) <= 4 * sigma[precise]))


def _snap_attention(amplitude: float, fit: _Fit, u_storage: float) -> float:
    """The amplitude, snapped to 1 or to its variant's formula when within the rounding."""
    targets = [1.0]
    if fit.rope_type == "longrope":
        found = _longrope_attention(amplitude, u_storage)
        if found is not None:
            fit.parameters.update(found)
            targets.append(found["attention_factor_formula"])
    formula = fit.parameters.get("attention_factor_formula")
    if formula is not None:
        targets += [formula, formula**2]
    for target in targets:
        if abs(amplitude - target) <= 2 * u_storage * target + 1e-7:
            return float(target)
    return amplitude


def _longrope_attention(amplitude: float, u_storage: float) -> dict | None:
    """The LongRoPE factor and training length whose attention factor ``sqrt(1 + ln(factor) /
    ln(L))`` is the amplitude, both powers of two (Phi-3's 32 and 4,096), or None."""
    if amplitude <= 1:
        return None
    ratio = amplitude**2 - 1
    best = None
    for power in range(8, 21):
        length = 2**power
        rounded = 2.0 ** round(math.log2(length**ratio))
        formula = math.sqrt(1 + math.log(rounded) / math.log(length))
        if best is None or abs(formula - amplitude) < abs(best[2] - amplitude):
            best = (rounded, length, formula)
    if best is None or best[0] <= 1 or abs(best[2] - amplitude) > 2 * u_storage * amplitude + 1e-7:
        # (A factor of 1 is no scaling: an amplitude a rounding above 1 is not LongRoPE's.)
        return None
    return {
        "factor": best[0],
        "original_max_position_embeddings": best[1],
        "attention_factor_formula": best[2],
    }
