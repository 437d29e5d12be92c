"""What the bug detectors of :data:`pe_core.ROPE_BUGS` see (:class:`Context`) and what is
found with them: the findings the data shows on its own and, with a config, whether the data
matches it, where it first departs and the likely cause."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.formats import round_to_precision
from pe_core.rotary.bugs import ROPE_BUGS, Finding
from pe_core.rotary.encoding import RotaryEncoding
from pe_core.rotary.identify._cache import _Cache
from pe_core.rotary.identify._compare import (
    _CHUNK_VALUES,
    _FREQ_ULPS,
    _INV_FREQ_TOLERANCE,
    _U32,
    _Comparison,
    _Model,
)
from pe_core.rotary.identify._fit import _Fit
from pe_core.rotary.identify.results import Departure


@dataclass
class Context:
    """What a bug's detector sees: the data, what was measured and fitted, the config's
    encoding (or None) and a comparison that tells whether a model explains the data."""

    cache: _Cache | None
    measured: NDArray[np.float64]
    sigma: NDArray[np.float64]
    fit: _Fit
    amplitude: float | None
    expected: RotaryEncoding | None
    comparison: _Comparison | None
    sin_sign: float = 1.0
    explained: bool = True  # the data is the identified encoding in the arithmetic found

    def explains(self, inv_freq, attention_factor=None, **arithmetic) -> bool:
        """Whether a cache with these frequencies (and attention factor, and roundings)
        explains the data's rows, on a sample then on every row."""
        inv_freq = np.asarray(inv_freq, dtype=np.float64)
        if self.comparison is None:  # inv_freq data
            if inv_freq.size != self.measured.size:
                return False
            if arithmetic.get("sin_sign", 1.0) < 0:
                return False
            fmt = arithmetic.get("freq_format")
            w = round_to_precision(inv_freq, fmt) if fmt else inv_freq
            return bool(np.all(np.abs(self.measured / w - 1) <= _INV_FREQ_TOLERANCE))
        factor = self.amplitude if attention_factor is None else attention_factor
        model = _Model(inv_freq, factor, **arithmetic)
        if not self.comparison.explains(model):
            return False
        return self.comparison.scan(model)[2] is None


def _unique(findings) -> tuple[Finding, ...]:
    seen, kept = set(), []
    for finding in findings:
        if finding.name not in seen:
            seen.add(finding.name)
            kept.append(finding)
    return tuple(kept)


def _blind_findings(context: Context) -> list[Finding]:
    found = []
    for bug in ROPE_BUGS.values():
        if bug.detect_blind is None:
            continue
        evidence = bug.detect_blind(context)
        if evidence is not None:
            found.append(bug.finding(**evidence))
    return found


def _against_config(context: Context):
    """(matches, departure, likely cause, findings) of the data against the config."""
    expected = context.expected
    cache = context.cache
    findings: list[Finding] = []
    # Structure first: the columns that rotate and the pair layout.
    structural = []
    if cache is not None:
        for bug in ROPE_BUGS.values():
            if bug.detect_structure is not None:
                evidence = bug.detect_structure(context)
                if evidence is not None:
                    structural.append(bug.finding(**evidence))
    if cache is None:
        departure, cause, more = _inv_freq_departure(context)
        return departure is None, departure, cause, more
    if structural:
        return False, _structural_departure(context), structural[0].name, structural
    if cache.cos.shape[1] != expected.n_pairs:
        departure = Departure(0, 0, float(cache.positions[0]), "cos", math.nan, math.nan, 0.0)
        findings.append(
            _difference(
                "rotary_dim",
                2 * cache.cos.shape[1],
                expected.rotary_dim,
                config_rotary_dim=expected.rotary_dim,
            )
        )
        return False, departure, "parameters", findings
    model = _Model(expected.inv_freq, expected.attention_factor)
    _, _, hit = context.comparison.scan(model)
    if hit is None:
        return True, None, None, findings
    row, pair, array, value, wanted, tolerance = hit
    column = int(cache.pair_columns[pair])
    departure = Departure(row, column, float(cache.positions[row]), array, value, wanted, tolerance)
    named = _named_bugs(context)
    if named:
        return False, departure, named[0].name, findings + named
    findings += _parameter_findings(context)
    return False, departure, "parameters", findings


def _named_bugs(context: Context) -> list[Finding]:
    """Every bug of the catalogue that reproduces the data from the config (two can make the
    same cache: at base 10,000 the exponent i/d gives base 100, as a base off by 100x does)."""
    named = []
    for bug in ROPE_BUGS.values():
        if bug.detect is None:
            continue
        evidence = bug.detect(context)
        if evidence is not None:
            named.append(bug.finding(**evidence))
    return named


def _structural_departure(context: Context) -> Departure | None:
    """The first row (by position) and column where the array as given departs from the
    config's cache laid out as the config says (its rotary columns first, in its layout, the
    others cos 1 and sin 0), comparing every column."""
    cache, expected = context.cache, context.expected
    width, rotary_dim, half = cache.width, expected.rotary_dim, expected.rotary_dim // 2
    columns = np.arange(min(width, rotary_dim))
    pair_of = columns % half if expected.layout == "halves" else columns // 2
    a = expected.attention_factor
    order = np.argsort(np.abs(cache.positions), kind="stable")
    chunk = max(1, _CHUNK_VALUES // max(1, width))
    u = cache.u_data
    for first in range(0, order.size, chunk):
        rows = order[first : first + chunk]
        angles = np.multiply.outer(cache.positions[rows], expected.inv_freq[pair_of])
        for name, data, function, passing in (
            ("cos", cache.full_cos, np.cos, 1.0),
            ("sin", cache.full_sin, np.sin, 0.0),
        ):
            wanted = np.full((rows.size, width), passing)
            wanted[:, : columns.size] = a * function(angles)
            tolerance = np.full((rows.size, width), 4 * _U32 + u)
            tolerance[:, : columns.size] = abs(a) * (
                u + _FREQ_ULPS * _U32 * np.abs(angles) + 4 * _U32
            )
            error = np.abs(np.asarray(data[rows], dtype=np.float64) - wanted)
            bad = np.argwhere(error > tolerance)
            if bad.size:
                i, column = (int(v) for v in bad[0])
                row = int(rows[i])
                return Departure(
                    row,
                    column,
                    float(cache.positions[row]),
                    name,
                    float(data[row, column]),
                    float(wanted[i, column]),
                    float(tolerance[i, column]),
                )
    return None


def _difference(parameter: str, data, config, **evidence) -> Finding:
    """A parameter whose value in the data is not the config's: ``{parameter}_differs``, with
    both values (evidence ``parameter``, ``data``, ``config``)."""
    return Finding(
        f"{parameter}_differs",
        f"{parameter} {_value(data)} in the data, {_value(config)} in the config",
        {"parameter": parameter, "data": data, "config": config, **evidence},
    )


def _value(value) -> str:
    if isinstance(value, float):
        return f"{value:,.6g}"
    if isinstance(value, tuple):
        shown = ", ".join(_value(v) for v in value[:4])
        return f"({shown}{', ...' if len(value) > 4 else ''})"
    return str(value)


#: Parameters of a variant compared with the config's (when both name them).
_COMPARED = (
    "factor",
    "low_freq_factor",
    "high_freq_factor",
    "original_max_position_embeddings",
    "correction_range",
    "partial_rotary_factor",
)


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-3, abs_tol=1e-9)
    return a == b


def _parameter_findings(context: Context) -> list[Finding]:
    """What differs between the data's encoding and the config's, when no bug explains it:
    each parameter with the data's value and the config's."""
    fit, expected = context.fit, context.expected
    found = []
    if fit.rope_type != expected.rope_type:
        found.append(
            _difference(
                "rope_type",
                str(fit.rope_type or "of no known variant"),
                expected.rope_type,
                rope_type=str(fit.rope_type),
                config_rope_type=expected.rope_type,
            )
        )
    if not math.isclose(fit.base, expected.effective_base, rel_tol=1e-6):
        found.append(
            _difference(
                "base",
                fit.base,
                expected.effective_base,
                config_base=expected.effective_base,
            )
        )
    configured = dict(expected.parameters)
    if expected.rope_type == "longrope" and fit.rope_type == "longrope":
        own = fit.parameters.get("factors")
        ratio = expected.original_inv_freq / expected.inv_freq
        if own is not None and len(own) == ratio.size and not _same(tuple(own), tuple(ratio)):
            worst = int(np.argmax(np.abs(np.asarray(own) / ratio - 1)))
            found.append(
                _difference(
                    "factors",
                    tuple(float(v) for v in own),
                    tuple(float(v) for v in ratio),
                    first_pair_that_differs=worst,
                )
            )
    for key in _COMPARED:
        if key in fit.parameters and key in configured and configured[key] is not None:
            data, config = fit.parameters[key], configured[key]
            if isinstance(config, list):
                config = tuple(config)
            if not _same(data, config):
                found.append(_difference(key, data, config))
    if context.amplitude is not None and not math.isclose(
        context.amplitude, expected.attention_factor, rel_tol=1e-3
    ):
        found.append(
            _difference(
                "attention_factor",
                context.amplitude,
                expected.attention_factor,
                config_attention_factor=expected.attention_factor,
            )
        )
    return found


def _inv_freq_departure(context: Context):
    expected = context.expected
    findings: list[Finding] = []
    if context.measured.size != expected.n_pairs:
        findings.append(
            _difference(
                "rotary_dim",
                2 * context.measured.size,
                expected.rotary_dim,
                config_rotary_dim=expected.rotary_dim,
            )
        )
        return Departure(0, 0, None, "inv_freq", math.nan, math.nan, 0.0), "parameters", findings
    relative = np.abs(context.measured / expected.inv_freq - 1)
    allowed = np.full(relative.size, _INV_FREQ_TOLERANCE)
    bad = np.flatnonzero(relative > allowed)
    if bad.size == 0:
        return None, None, findings
    pair = int(bad[0])
    departure = Departure(
        0,
        pair,
        None,
        "inv_freq",
        float(context.measured[pair]),
        float(expected.inv_freq[pair]),
        float(allowed[pair] * expected.inv_freq[pair]),
    )
    named = _named_bugs(context)
    if named:
        return departure, named[0].name, findings + named
    return departure, "parameters", findings + _parameter_findings(context)
