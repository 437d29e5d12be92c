"""Identify a rotary encoding from its numbers: the base, rotary columns, pair layout, scaling
variant and its parameters, attention factor and arithmetic behind a dumped cos/sin cache or
``inv_freq`` vector, the RoPE bugs of :data:`pe_core.ROPE_BUGS` it shows, and where it departs
from the config.json it should implement."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike

from pe_core._numerics.checks import as_array, as_real_array, check_size
from pe_core._numerics.formats import PRECISIONS, round_to_precision
from pe_core._numerics.printing import Printing, shows_format
from pe_core.errors import InputError
from pe_core.rotary.bugs import ROPE_BUGS, Finding
from pe_core.rotary.config import rope_from_config
from pe_core.rotary.identify._arithmetic import _arithmetic
from pe_core.rotary.identify._cache import _Cache, _measure, _read_cache, _squeeze_vector
from pe_core.rotary.identify._compare import _U32, _angles, _Comparison
from pe_core.rotary.identify._findings import Context as Context  # what a bug's detector sees
from pe_core.rotary.identify._findings import _against_config, _blind_findings, _unique
from pe_core.rotary.identify._fit import COMMON_BASES as COMMON_BASES
from pe_core.rotary.identify._fit import (
    _fit_variant,
    _on_grid,
    _proportional_fit,
    _snap_attention,
)
from pe_core.rotary.identify._vectors import ROTATION_ULPS as ROTATION_ULPS
from pe_core.rotary.identify._vectors import _partners, _rebuild
from pe_core.rotary.identify.results import Departure, RopeArithmetic, RopeIdentification

__all__ = [
    "ROTATION_ULPS",
    "Departure",
    "Finding",
    "RopeArithmetic",
    "RopeIdentification",
    "identify_rope",
    "rope_cache_from_vectors",
]


def rope_cache_from_vectors(
    before: ArrayLike, after: ArrayLike, *, positions: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cos/sin cache that rotates vectors ``before`` into ``after``, as
    :func:`identify_rope` reads them: ``(cos, sin, positions)``.

    Parameters
    ----------
    before, after, positions
        As :func:`identify_rope` takes them.

    Returns
    -------
    cos, sin : ndarray of float64, shape (n_positions, head_dim)
        Full width, in the pair layout in which the rotation keeps every pair's norm (columns
        that do not rotate are cos 1, sin 0); each pair's values are
        ``z_after conj(z_before) / |z_before|^2`` summed over the heads.
    positions : ndarray of float64, shape (n_positions,)

    Raises
    ------
    InputError
        As :func:`identify_rope` does for vectors.

    Examples
    --------
    >>> import pe_core
    >>> rope = pe_core.rope_frequencies(8)
    >>> q = np.random.default_rng(0).standard_normal((2, 16, 8))
    >>> cos, sin, _ = rope_cache_from_vectors(q, pe_core.apply_rope(q, 16, rope))
    >>> bool(np.allclose(cos, pe_core.rope_cos_sin(16, rope)[0]))
    True
    """
    rebuilt = _rebuild(before, after, positions)
    return rebuilt.cos, rebuilt.sin, rebuilt.positions


def identify_rope(
    cos: ArrayLike | None = None,
    sin: ArrayLike | None = None,
    *,
    inv_freq: ArrayLike | None = None,
    before: ArrayLike | None = None,
    after: ArrayLike | None = None,
    positions: ArrayLike | None = None,
    config: Mapping | str | bytes | None = None,
    layer_type: str | None = None,
) -> RopeIdentification:
    """Name the rotary encoding behind a cos/sin cache or an ``inv_freq`` vector, and its bugs.

    Parameters
    ----------
    cos, sin : array_like, shape (n_positions, columns)
        The cache as a framework returns it (singleton axes such as transformers' (1, L, d)
        are dropped): the halves layout (``cat(freqs, freqs)``, rotate_half), the
        interleaved one (each pair's value twice side by side) or one column per pair; the
        attention factor folded in or not; columns that do not rotate (cos 1, sin 0) before
        or after the rotary ones. float16 and bfloat16 values are recognized as such.
    inv_freq : array_like, shape (rotary_dim // 2,), optional
        Instead of a cache: the frequencies (radians per position), one per pair.
    before, after : array_like, shape (..., n_positions, head_dim), optional
        Instead of a cache: vectors (a query or key, one head or a batch of them) before and
        after the rotation, as ``apply_rotary_pos_emb`` takes and returns them. The pair
        layout is the one in which the rotation keeps every pair's norm (times the attention
        factor); columns where ``after`` equals ``before`` do not rotate. Each pair's cos and
        sin at each position are rebuilt as ``z_after conj(z_before) / |z_before|^2`` summed
        over the heads, and known to the rounding of the format the vectors hold (bfloat16,
        float16 given as such, float32 or float64), which ``arithmetic.rotated`` names. A
        cache of one layout applied by the other layout's rotate (no pair keeps its norm) is
        solved column by column over 2 or more heads, identified, and named as the
        catalogue's ``wrong_pair_layout``.
    positions : array_like, optional
        The position of each row of the cache or the vectors (by default 0, 1, ...): any
        whole or real positions, with one 1 to 3 from the smallest (a slice of a long cache,
        1000 to 1063, is fine); for vectors, strictly increasing.
    config : mapping, or str or bytes of JSON, optional
        The config.json the data should implement, read by :func:`pe_core.rope_from_config`
        (at ``seq_len`` = the largest position + 1, as transformers' dynamic and LongRoPE
        updates see it).
    layer_type : str, optional
        For a config with layer types of different RoPE.

    Returns
    -------
    RopeIdentification
        The base, rotary columns, layout, variant and parameters, attention factor,
        arithmetic and findings; with a config, whether the data matches it, where it first
        departs and the likely cause.

    Raises
    ------
    InputError
        Not exactly one of a cache, ``inv_freq`` and ``before``/``after``; cos and sin (or
        before and after) of different shapes; fewer than 2 rows; non-finite values;
        positions without two 1 to 3 apart; vectors that are zero, not rotated, not a
        rotation in either layout, or positions not increasing; a bad config.
    InputTypeError
        Non-numeric arrays.

    Notes
    -----
    Each pair's phase ``atan2(sin, cos)`` is ``p w_i``, so its change from the row of the
    smallest position is ``(p - p_0) w_i``: it is unwrapped along rows whose distances from
    that row at most double (from one 1 to 3 away, where ``|d w| < pi`` as ``w <= 1``), so a
    frequency is measured to the phase noise over the largest distance. ``log w_i`` of the
    fastest pairs (which context extension leaves alone) gives the base, snapped to the
    roundest value within its uncertainty; the ratio of ``base**(-2i/d)`` to each measured
    frequency then names the variant: 1 everywhere (default), one factor (linear), 1 then a
    ramp then a factor (YaRN, ramp linear in ``i``; Llama 3, linear in ``1/wavelength``),
    a factor of its own per pair (LongRoPE). The amplitude ``sqrt(cos^2 + sin^2)`` is the
    attention factor. The data is then compared entry by entry with the encoding found, in
    the arithmetic that explains it: exact, ``p w`` in float32 as transformers computes it
    (differences up to ``4 u32 (p w + 1)``), or with position ids, frequencies or the
    product rounded to bfloat16 or float16. With a config, the tolerance of each entry is
    the storage's rounding plus the float32 angle's, and each bug of
    :data:`pe_core.ROPE_BUGS` is asked whether it reproduces a departure.

    A cache rebuilt from vectors rotated in a format of unit roundoff ``u`` is known to
    ``8 u`` (times the attention factor) in place of the storage's rounding: the rotation
    rounds cos, sin, both products and the sum, at most ``5.5 u`` of the pair's norm. In
    bfloat16 that hides float32's angle rounding (``arithmetic.angles`` is then
    "unresolved"), not the roundings of the catalogue's bugs.

    References
    ----------
    Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding" (2021);
    Hugging Face transformers' ``modeling_rope_utils`` (the variants' definitions).

    Examples
    --------
    >>> import pe_core
    >>> rope = pe_core.rope_frequencies(128, base=500_000.0)
    >>> cos, sin = pe_core.rope_cos_sin(4096, rope)
    >>> found = identify_rope(cos, sin)
    >>> found.rope_type, found.base, found.rotary_dim, found.layout, found.arithmetic.angles
    ('default', 500000.0, 128, 'halves', 'exact')

    Two heads of a query at positions 0 to 63, before and after rotation in float32:

    >>> import numpy as np
    >>> q = np.random.default_rng(0).standard_normal((2, 64, 128)).astype(np.float32)
    >>> q_embed = pe_core.apply_rope(q, 64, rope).astype(np.float32)
    >>> found = identify_rope(before=q, after=q_embed)
    >>> found.source, found.rope_type, found.base, found.arithmetic.words
    ('vectors', 'default', 500000.0, 'vectors rotated in float32, exact angles')
    """
    if (cos is None) != (sin is None):
        raise InputError("cos and sin must be given together (the cache), or neither")
    if (before is None) != (after is None):
        missing = "after" if after is None else "before"
        raise InputError(
            f"before and after must be given together (the vectors), {missing} is missing"
        )
    given = (cos is not None) + (inv_freq is not None) + (before is not None)
    if given != 1:
        raise InputError(
            "give one of a cache (cos and sin), inv_freq, or vectors (before and after), "
            f"got {'none' if given == 0 else given}"
        )
    rebuilt = None
    if before is not None:
        rebuilt = _rebuild(before, after, positions)
        cache = _read_cache(rebuilt.cos, rebuilt.sin, rebuilt.positions)
        cache.storage, cache.unit, cache.rotated = rebuilt.rotated, rebuilt.unit, rebuilt.rotated
    else:
        cache = None if cos is None else _read_cache(cos, sin, positions)
    expected = None
    if config is not None:
        if cache is not None:
            reach = cache.positions
        elif positions is not None:
            reach = as_real_array(positions, "positions", ndim=1)
        else:
            reach = np.empty(0)
        seq_len = int(np.max(np.abs(reach))) + 1 if reach.size else None
        if seq_len is not None and seq_len > 2**53:
            raise InputError(
                f"positions must be at most 2**53 to compare with a config, got {seq_len - 1:g}"
            )
        expected = rope_from_config(config, layer_type=layer_type, seq_len=seq_len)
    if cache is None:
        return _identify_inv_freq(inv_freq, expected)
    found = _identify_cache(cache, expected)
    if rebuilt is not None and rebuilt.rotate_pairs is not None:
        found = _mismatched_rotate(found, rebuilt, before, after, expected)
    return found


def _mismatched_rotate(found, rebuilt, before, after, expected) -> RopeIdentification:
    """The result for vectors rotated by a cache of one layout with the other layout's
    rotate: the cache's encoding as identified, with the catalogue's wrong_pair_layout named
    first; against a config, never a match, departing where ``after`` first differs from the
    config's own rotation of ``before``."""
    finding = ROPE_BUGS["wrong_pair_layout"].finding(
        cache_layout=rebuilt.layout, rotated_pairs=rebuilt.rotate_pairs
    )
    findings = (finding, *(f for f in found.findings if f.name != finding.name))
    if expected is None:
        return replace(found, findings=findings)
    departure = _vector_departure(before, after, rebuilt, expected)
    return replace(
        found,
        findings=findings,
        config_matches=False,
        departure=departure,
        likely_cause=finding.name,
    )


def _vector_departure(before, after, rebuilt, expected) -> Departure | None:
    """The first position (and column) where ``after`` differs from the config's rotation of
    ``before`` by more than the rotation's rounding (relative to the pair's norm)."""
    x = np.asarray(before, dtype=np.float64)
    y = np.asarray(after, dtype=np.float64)
    n, width = x.shape[-2:]
    x, y = x.reshape(-1, n, width), y.reshape(-1, n, width)
    d = min(expected.rotary_dim, width)
    partner, sign = _partners(d, expected.layout)
    pair = np.arange(d) % (d // 2) if expected.layout == "halves" else np.arange(d) // 2
    a = expected.attention_factor
    unit = ROTATION_ULPS * PRECISIONS[rebuilt.rotated].unit_roundoff  # the rotation's own
    for row in np.argsort(np.abs(rebuilt.positions), kind="stable"):
        angles = rebuilt.positions[row] * expected.inv_freq[pair]
        xr = x[:, row, :d]
        wanted = a * (xr * np.cos(angles) + sign * xr[:, partner] * np.sin(angles))
        norm = np.hypot(xr, xr[:, partner])
        tolerance = 2 * unit * abs(a) * norm + 1e-300
        bad = np.abs(y[:, row, :d] - wanted) > tolerance
        if bad.any():
            head, column = (int(v) for v in np.argwhere(bad)[0])
            return Departure(
                int(row),
                column,
                float(rebuilt.positions[row]),
                "after",
                float(y[head, row, column]),
                float(wanted[head, column]),
                float(tolerance[head, column]),
            )
    return None


def _identify_cache(cache: _Cache, expected) -> RopeIdentification:
    comparison = _Comparison(cache)
    rows = comparison.sample
    amplitude_values = np.hypot(
        np.asarray(cache.cos[rows], dtype=np.float64), np.asarray(cache.sin[rows], dtype=np.float64)
    )
    amplitude = float(np.mean(amplitude_values))
    xpos = None
    if np.max(amplitude_values) > np.min(amplitude_values) * (1 + 64 * comparison.u_storage):
        # Not one amplitude: xPos's decay per pair and position, when it explains it.
        xpos = _xpos_fit(cache, rows, comparison.u_storage)
        if xpos is not None:
            comparison.xpos = xpos
            amplitude = 1.0
    signed, reach = _measure(cache)
    # sin = -sin(p w) (exp(-i p w), or rotate_half's halves swapped) makes every phase run
    # backwards: measured as such, named by the catalogue's negated_sin.
    sin_sign = -1.0 if np.median(signed) < 0 else 1.0
    measured = np.abs(signed)
    u_storage = comparison.u_storage
    # A phase read from values rounded to the storage moves by about 2u; float32 angles add
    # their own rounding, relative to the angle. Rotated vectors: the rotation's roundings
    # (ROTATION_ULPS u at most together) are independent, about 2u root-sum-square.
    u_phase = u_storage if cache.rotated is None else cache.unit * 2 / ROTATION_ULPS
    with np.errstate(divide="ignore"):
        sigma = 2 * u_phase / (measured * reach) + 2 * _U32
    still = np.all(cache.sin == 0, axis=0)
    if still.any():
        fit = _proportional_fit(measured, sigma, amplitude, still)
    else:
        fit = _fit_variant(measured, sigma, amplitude)
    loose = not fit.explained or fit.rope_type in (None, "longrope")
    if loose and _on_grid(measured, sigma, "bfloat16"):
        # Frequencies rounded to bfloat16 (a model cast to it): fit the variant to that
        # rounding; the arithmetic below then names it. (LongRoPE's factors of its own per
        # pair would absorb any rounding: a structured variant is preferred.)
        coarse = _fit_variant(measured, np.maximum(sigma, 2.0**-8), amplitude)
        if coarse.explained and coarse.rope_type not in (None, "longrope"):
            fit = coarse
    amplitude = _snap_attention(amplitude, fit, u_storage)
    if xpos is not None:
        fit.parameters.update({"xpos_scale_base": xpos[1], "xpos_centre": xpos[0]})
    context = Context(
        cache, measured, sigma, fit, amplitude, expected, comparison, sin_sign=sin_sign
    )

    # The arithmetic: the simplest model that explains every row.
    reference = fit.model if fit.explained else measured
    arithmetic, model, findings = _arithmetic(context, reference, amplitude)
    largest, beyond_storage, departure = comparison.scan(model)
    explained = departure is None
    context.explained = explained
    if not explained:  # no arithmetic explains every row: none of its roundings is named
        arithmetic = RopeArithmetic(cache.storage, None, None)
        findings = []
    elif beyond_storage <= 0 and arithmetic.angles == "float32":
        angles = "exact"
        if cache.unit is not None and not _float32_shows(comparison, reference, amplitude):
            angles = "unresolved"
        arithmetic = replace(arithmetic, angles=angles)
    if cache.rotated is not None:
        arithmetic = replace(arithmetic, rotated=cache.rotated)
    if cache.written is not None:
        arithmetic = replace(arithmetic, written=cache.written)
    findings += _blind_findings(context)
    if xpos is not None:
        findings.append(_xpos_finding(*xpos))
    config_matches, departure_found, cause = None, None, None
    if expected is not None:
        config_matches, departure_found, cause, more = _against_config(context)
        findings += more
    return RopeIdentification(
        source="cache" if cache.rotated is None else "vectors",
        base=fit.base,
        base_fit=fit.base_fit,
        base_uncertainty=fit.base_uncertainty,
        base_snapped=fit.base_snapped,
        rotary_dim=2 * measured.size,
        width=cache.width,
        rotary_columns=cache.rotary_columns,
        layout=cache.layout,
        rope_type=fit.rope_type,
        parameters=fit.parameters,
        inv_freq=measured,
        scale=fit.scale,
        attention_factor=amplitude,
        arithmetic=arithmetic,
        positions=(float(np.min(cache.positions)), float(np.max(cache.positions))),
        n_positions=int(cache.positions.size),
        max_abs_error=largest,
        explained=explained,
        findings=_unique(findings),
        config_matches=config_matches,
        departure=departure_found,
        likely_cause=cause,
        expected=expected,
    )


#: xPos's per-pair ratio (Sun et al. 2022; torchscale's XPOS, rotary-embedding-torch,
#: x-transformers and flash-attn alike): ``zeta_i = (2i + 0.4 d) / (1.4 d)``.
def xpos_zeta(rotary_dim: int) -> np.ndarray:
    """xPos's ``zeta_i = (2i + 0.4 d) / (1.4 d)`` for the pairs of ``rotary_dim`` columns."""
    return (2 * np.arange(rotary_dim // 2, dtype=np.float64) + 0.4 * rotary_dim) / (
        1.4 * rotary_dim
    )


def _xpos_finding(centre: float, scale_base: float, zeta: np.ndarray) -> Finding:
    return Finding(
        "xpos",
        f"xPos (Sun et al. 2022): each pair scaled by zeta_i ** ((p - {centre:,.6g}) / "
        f"{scale_base:,.6g}), zeta_i = (2i + 0.4 d) / (1.4 d), as rotary-embedding-torch "
        "(use_xpos), x-transformers (use_xpos) and flash-attn (scale_base) build the queries' "
        "cache (the keys' divides by it); transformers has no xPos",
        {"scale_base": scale_base, "centre": centre, "zeta_first": float(zeta[0])},
        ("https://arxiv.org/abs/2212.10554",),
    )


def _xpos_fit(cache, rows, u_storage: float):
    """``(centre, scale_base, zeta)`` when each entry's amplitude is xPos's
    ``zeta_i ** ((p - centre) / scale_base)`` (a query's cache: cos and sin times the scale;
    a key's divides, a negative scale_base), the centre and scale_base snapped to whole numbers;
    else None."""
    cos = np.asarray(cache.cos[rows], dtype=np.float64)
    sin = np.asarray(cache.sin[rows], dtype=np.float64)
    amplitude = np.hypot(cos, sin)
    if amplitude.shape[1] < 2 or not np.all(amplitude > 0):
        return None
    zeta = xpos_zeta(2 * amplitude.shape[1])
    positions = cache.positions[rows]
    logs = np.log(amplitude)
    centred = positions - positions.mean()
    spread = float(centred @ centred)
    if spread == 0:
        return None
    slope = centred @ (logs - logs.mean(axis=0)) / spread
    intercept = logs.mean(axis=0) - slope * positions.mean()
    if np.any(slope == 0):
        return None
    scale_bases = np.log(zeta) / slope
    centres = -intercept / slope
    scale_base, centre = float(np.median(scale_bases)), float(np.median(centres))
    if not np.all(np.abs(scale_bases / scale_base - 1) < 1e-2):
        return None
    scale_base = (
        float(round(scale_base)) if abs(scale_base - round(scale_base)) < 0.05 else scale_base
    )
    centre = float(round(centre)) if abs(centre - round(centre)) < 0.05 else centre
    model = np.log(zeta)[None, :] * ((positions - centre) / scale_base)[:, None]
    if np.max(np.abs(logs - model)) > 16 * u_storage + 1e-6:
        return None
    return centre, scale_base, zeta


def _float32_shows(comparison: _Comparison, inv_freq, amplitude: float) -> bool:
    """Whether float32 angles (transformers' ``inv_freq @ position_ids``) would differ from
    exact ones by more than the data's own precision somewhere on the sample rows: if not, the
    data cannot tell the two apart."""
    rows = comparison.sample
    positions = comparison.cache.positions[rows]
    exact = _angles(positions, inv_freq)
    rounded = _angles(positions, inv_freq, angle_format="float32")
    largest = np.max(np.abs(np.exp(1j * rounded) - np.exp(1j * exact))) * abs(amplitude)
    return bool(largest > 2 * comparison.u_storage * abs(amplitude))


def _inv_freq_format(values: np.ndarray, dtype: np.dtype) -> tuple[str, Printing | None]:
    """The format an inv_freq was stored in, from its values whatever container it came in
    (``.tolist()`` of a float32 tensor is float32 numbers in float64 reprs), and the printing
    of values that are no binary numbers of any smaller format (then the format is the finest
    one the digits are fine enough to show, else float64: the digits hide it)."""
    if dtype == np.float16:
        return "float16", None
    for name in ("bfloat16", "float16", "float32"):  # coarsest first: the smallest that holds
        if name == "float32" and dtype == np.float32:
            return name, None
        with np.errstate(over="ignore"):
            if np.array_equal(round_to_precision(values, name), values):
                return name, None
    printing = Printing.of(values)
    if printing is None:
        return "float64", None
    for name in ("bfloat16", "float16", "float32"):  # the coarsest the digits show
        if shows_format(values, printing, name, PRECISIONS[name].unit_roundoff):
            return name, printing
    return "float64", printing


def _identify_inv_freq(inv_freq, expected) -> RopeIdentification:
    given = as_array(inv_freq, "inv_freq")
    values = np.abs(as_real_array(_squeeze_vector(given), "inv_freq", ndim=1))
    if values.size < 2:
        raise InputError(f"inv_freq must hold at least 2 frequencies, got {values.size}")
    if np.any(values == 0):
        raise InputError("inv_freq must hold frequencies > 0 (a pair of frequency 0 is not RoPE)")
    check_size(values.size, "identifying inv_freq")
    fmt, printing = _inv_freq_format(values, given.dtype)
    u = PRECISIONS[fmt].unit_roundoff
    sigma = np.full(values.size, u)
    if printing is not None:  # each value known to half a unit of its last written digit
        sigma = np.maximum(sigma, printing.half_unit(values) / values)
    fit = _fit_variant(values, sigma, None)
    context = Context(None, values, sigma, fit, None, expected, None)
    findings = _blind_findings(context)
    if fmt in ("bfloat16", "float16"):
        findings.append(ROPE_BUGS["bf16_inv_freq"].finding(format=fmt))
    reference = fit.model if fit.explained else values
    largest = float(np.max(np.abs(values - reference)))
    config_matches = departure = cause = None
    if expected is not None:
        config_matches, departure, cause, more = _against_config(context)
        findings += more
    return RopeIdentification(
        source="inv_freq",
        base=fit.base,
        base_fit=fit.base_fit,
        base_uncertainty=fit.base_uncertainty,
        base_snapped=fit.base_snapped,
        rotary_dim=2 * values.size,
        width=2 * values.size,
        rotary_columns=(0, 2 * values.size),
        layout=None,
        rope_type=fit.rope_type,
        parameters=fit.parameters,
        inv_freq=values,
        scale=fit.scale,
        attention_factor=None,
        arithmetic=RopeArithmetic(
            fmt, None, fmt, written=None if printing is None else printing.words
        ),
        positions=(),
        n_positions=0,
        max_abs_error=largest,
        explained=fit.explained,
        findings=_unique(findings),
        config_matches=config_matches,
        departure=departure,
        likely_cause=cause,
        expected=expected,
    )
