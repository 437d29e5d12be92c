"""What :func:`pe_core.identify_rope` returns: the arithmetic behind the data
(:class:`RopeArithmetic`), where it departs from a config (:class:`Departure`), and the whole
identification (:class:`RopeIdentification`) with its verdict in words and as JSON."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.text import number_words
from pe_core.rotary.bugs import ROPE_BUGS, Finding
from pe_core.rotary.encoding import RotaryEncoding

__all__ = ["Departure", "RopeArithmetic", "RopeIdentification"]


@dataclass(frozen=True)
class RopeArithmetic:
    """The arithmetic a cache or ``inv_freq`` was computed in, as fields.

    Attributes
    ----------
    storage : str
        The smallest format that holds every value ("float64", "float32", "bfloat16",
        "float16"): a bfloat16 cache is a float32 one cast once.
    angles : str or None
        "exact" when the values equal the exact ``cos(p w)`` to their storage's rounding;
        "float32" when they differ by up to the rounding of ``p w`` computed in float32, as
        transformers computes it (``inv_freq @ position_ids`` in float32); "bfloat16" or
        "float16" when the product itself was computed in that format (matmul under
        autocast); "unresolved" for vectors whose rotation's rounding is larger than
        float32's angle rounding (exact and float32 explain them alike); None for an
        ``inv_freq`` vector, or when no arithmetic explains a cache.
    inv_freq : str or None
        "bfloat16" or "float16" when the frequencies were rounded to that format; the dtype
        of an ``inv_freq`` vector given as such; None when a cache cannot tell (frequencies in
        float32 or finer).
    positions : str
        "exact", or "bfloat16" / "float16" when the position ids were rounded to that format
        (positions 256 and 257 become one in bfloat16).
    rotated : str or None
        For vectors given before and after rotation: the format they were rotated in
        ("bfloat16", "float16", "float32", "float64"), whose rounding bounds how precisely
        the rebuilt cos and sin are known (``storage`` is then that format too). ``angles`` is
        "unresolved" when that rounding hides whether the angles were exact or float32.
        None for a cache or ``inv_freq``.
    written : str or None
        For values given as decimal text that are no binary numbers (an ``inv_freq`` pasted
        as numpy prints it, a CSV of a cache): the digits they were written with ("5
        significant digits"); ``storage`` (and an ``inv_freq``'s ``inv_freq``) is then the
        format those digits show, or "float64" when they are too few to show one.
    """

    storage: str
    angles: str | None
    inv_freq: str | None
    positions: str = "exact"
    rotated: str | None = None
    written: str | None = None

    @property
    def words(self) -> str:
        """The arithmetic in a few words."""
        if self.angles is None and self.inv_freq is None:
            if self.rotated is not None:
                return f"no arithmetic explains it (vectors rotated in {self.rotated})"
            if self.written is not None:
                return f"no arithmetic explains it (values written with {self.written})"
            return f"no arithmetic explains it (values stored as {self.storage})"
        parts = []
        if self.rotated is not None:
            parts.append(f"vectors rotated in {self.rotated}")
        if self.angles == "unresolved":
            hides = "the rotation's rounding" if self.rotated is not None else "the digits"
            parts.append(f"exact or float32 angles ({hides} hides which)")
        elif self.angles == "exact":
            parts.append("exact angles")
        elif self.angles == "float32":
            parts.append("float32 angles, as transformers computes them")
        elif self.angles is not None:
            parts.append(f"angles computed in {self.angles}")
        if self.written is not None and self.angles is None:
            shown = "" if self.inv_freq == "float64" else f" (the digits show {self.inv_freq})"
            parts.append(f"inv_freq written with {self.written}{shown}")
            return ", ".join(parts)
        if self.inv_freq in ("bfloat16", "float16"):
            parts.append(f"inv_freq rounded to {self.inv_freq}")
        elif self.inv_freq is not None and self.angles is None:
            parts.append(f"inv_freq in {self.inv_freq}")
        if self.positions != "exact":
            parts.append(f"position ids rounded to {self.positions}")
        if self.rotated is None:
            parts.append(f"stored as {self.storage}")
        if self.written is not None:
            parts.append(f"written as text with {self.written}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Departure:
    """Where the data first departs from a config by more than its precision explains.

    Attributes
    ----------
    row, column : int
        In the array as given (``column`` is a pair's index for ``inv_freq``).
    position : float
        The position of that row (None for ``inv_freq``).
    array : str
        "cos", "sin" or "inv_freq"; "after" for vectors rotated by a rotate whose pairs are
        not the cache's (``column`` is then a column of the head).
    value, expected, tolerance : float
        The value found, the config's, and the largest difference the data's precision
        explains there.
    """

    row: int
    column: int
    position: float | None
    array: str
    value: float
    expected: float
    tolerance: float


@dataclass(frozen=True)
class RopeIdentification:
    """What :func:`identify_rope` found, as fields.

    Attributes
    ----------
    source : {"cache", "inv_freq", "vectors"}
        What was given ("vectors": before and after rotation, read as the cache that rotates
        one into the other).
    base, base_fit, base_uncertainty : float
        The base (``rope_theta``), snapped to a round value when the fit allows it, the fitted
        value and its relative uncertainty (the evidence: ``base_snapped`` says whether
        ``base`` is a rounding of ``base_fit`` within it).
    base_snapped : bool
    rotary_dim : int
        Rotating columns (twice the pairs).
    width : int
        Columns given (``rotary_dim`` plus columns that do not rotate: cos 1, sin 0).
    rotary_columns : tuple of int
        The first and one past the last rotating column: (0, rotary_dim) for the common
        [rope | pass] split, (width - rotary_dim, width) for DeepSeek's [nope | rope].
    layout : {"halves", "interleaved", "per_pair"} or None
        Where each pair's two columns are ("per_pair": one column per pair, as vLLM's and
        flash-attn's caches); None for ``inv_freq`` or a single pair.
    rope_type : str or None
        The scaling variant (a key of :data:`pe_core.ROPE_VARIANTS`) that explains the
        frequencies; None when none of them does (``scale`` holds the per-pair ratio).
    parameters : mapping
        The variant's parameters as measured (``factor``, ``low_freq_factor``,
        ``correction_range``, per-pair ``factors`` ...).
    inv_freq : ndarray of float64, shape (rotary_dim // 2,)
        The frequencies measured from the data.
    scale : ndarray of float64
        ``base**(-2i/rotary_dim) / inv_freq`` per pair: how much slower each pair turns than
        plain RoPE with ``base``.
    attention_factor : float or None
        The amplitude of cos and sin (transformers' ``attention_scaling`` folded in); None
        for ``inv_freq``.
    arithmetic : RopeArithmetic
    positions : tuple of float
        The first and last position (``()`` for ``inv_freq``); ``n_positions`` rows.
    max_abs_error : float
        Largest difference between the data and the encoding identified, in the arithmetic
        identified.
    explained : bool
        Whether that difference is within what the arithmetic found explains, on every entry
        (False: ``arithmetic.angles`` is None and the data is not that encoding).
    findings : tuple of Finding
        Bugs of :data:`pe_core.ROPE_BUGS` and observations, each with its evidence.
    config_matches : bool or None
        With a config: whether the data is that config's encoding within its precision.
    departure : Departure or None
        With a config that the data does not match: the first position and column that
        departs.
    likely_cause : str or None
        With such a departure: the bug (a key of :data:`pe_core.ROPE_BUGS`) that reproduces
        the data, or "parameters" when the data is another encoding (the differences are in
        the findings), or None.
    expected : RotaryEncoding or None
        The config's encoding.
    """

    source: str
    base: float
    base_fit: float
    base_uncertainty: float
    base_snapped: bool
    rotary_dim: int
    width: int
    rotary_columns: tuple[int, int]
    layout: str | None
    rope_type: str | None
    parameters: Mapping
    inv_freq: NDArray[np.float64]
    scale: NDArray[np.float64]
    attention_factor: float | None
    arithmetic: RopeArithmetic
    positions: tuple[float, ...]
    n_positions: int
    max_abs_error: float
    explained: bool = True
    findings: tuple[Finding, ...] = ()
    config_matches: bool | None = None
    departure: Departure | None = None
    likely_cause: str | None = None
    expected: RotaryEncoding | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", MappingProxyType(dict(self.parameters)))
        for name in ("inv_freq", "scale"):
            values = np.array(getattr(self, name), dtype=np.float64)
            values.flags.writeable = False
            object.__setattr__(self, name, values)

    @property
    def bugs(self) -> tuple[str, ...]:
        """The names of the catalogue's bugs among the findings."""
        return tuple(f.name for f in self.findings if f.bug is not None)

    @property
    def matches(self) -> bool:
        """With a config: ``config_matches``. Without: a known variant explains the data and
        no bug was found."""
        if self.config_matches is not None:
            return self.config_matches
        return self.rope_type is not None and self.explained and not self.bugs

    def summary(self) -> str:
        """The verdict in one paragraph."""
        what = _variant_words(self)
        text = f"{what}; {self.arithmetic.words}"
        if self.source in ("cache", "vectors"):
            first, last = self.positions
            text += (
                f"; positions {number_words(first)} to {number_words(last)} "
                f"({self.n_positions:,} rows), "
                f"largest difference from that encoding {self.max_abs_error:.2g}"
            )
            if not self.explained:
                text += ", more than any arithmetic explains"
        text += "."
        if self.config_matches is True:
            text += " It matches the config within its precision."
        elif self.config_matches is False:
            d = self.departure
            where = (
                f"pair {d.column}"
                if d.position is None
                else f"position {number_words(d.position)} (row {d.row}), column {d.column}"
            )
            text += (
                f" It departs from the config at {where}: {d.array} {d.value:.6g} where the "
                f"config gives {d.expected:.6g} (precision explains {d.tolerance:.2g})."
            )
            if self.likely_cause in ROPE_BUGS:
                bug = ROPE_BUGS[self.likely_cause]
                text += f" Likely cause: {bug.title}. Fix: {bug.fix}."
            elif self.likely_cause == "parameters":
                listed = "; ".join(f.title for f in self.differences) or (
                    "none of the parameters compared differs, so the frequencies differ in a "
                    "way no parameter names"
                )
                text += f" Likely cause: different parameters: {listed}."
        shown = {f.name for f in self.differences} if self.likely_cause == "parameters" else set()
        for finding in self.findings:
            if finding.name != self.likely_cause and finding.name not in shown:
                text += f" Found: {finding.title}."
        return text

    @property
    def differences(self) -> tuple[Finding, ...]:
        """The findings that name a parameter whose value in the data is not the config's
        (evidence ``parameter``, ``data``, ``config``)."""
        return tuple(f for f in self.findings if "parameter" in f.evidence and f.bug is None)

    def to_dict(self) -> dict:
        """The result as JSON-ready data (what ``python -m pe_core check-rope --json``
        prints)."""

        def plain(value):
            if isinstance(value, np.ndarray):
                return [plain(v) for v in value.tolist()]
            if isinstance(value, (np.floating, float)):
                value = float(value)
                return value if math.isfinite(value) else str(value)
            if isinstance(value, (np.integer,)):
                return int(value)
            if isinstance(value, Mapping):
                return {str(k): plain(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value

        d = self.departure
        return {
            "matches": self.matches,
            "summary": self.summary(),
            "source": self.source,
            "base": self.base,
            "base_fit": self.base_fit,
            "base_uncertainty": self.base_uncertainty,
            "base_snapped": self.base_snapped,
            "rotary_dim": self.rotary_dim,
            "width": self.width,
            "rotary_columns": list(self.rotary_columns),
            "layout": self.layout,
            "rope_type": self.rope_type,
            "parameters": plain(self.parameters),
            "inv_freq": plain(self.inv_freq),
            "scale": plain(self.scale),
            "attention_factor": self.attention_factor,
            "arithmetic": {
                "storage": self.arithmetic.storage,
                "angles": self.arithmetic.angles,
                "inv_freq": self.arithmetic.inv_freq,
                "positions": self.arithmetic.positions,
                "rotated": self.arithmetic.rotated,
                "written": self.arithmetic.written,
                "words": self.arithmetic.words,
            },
            "positions": list(self.positions),
            "n_positions": self.n_positions,
            "max_abs_error": self.max_abs_error,
            "explained": self.explained,
            "findings": [
                {
                    "name": f.name,
                    "title": f.title,
                    "evidence": plain(f.evidence),
                    "references": list(f.references),
                    "bug": f.bug is not None,
                    "fix": f.bug.fix if f.bug is not None else None,
                }
                for f in self.findings
            ],
            "config_matches": self.config_matches,
            "departure": None
            if d is None
            else {
                "row": d.row,
                "column": d.column,
                "position": d.position,
                "array": d.array,
                "value": d.value,
                "expected": d.expected,
                "tolerance": d.tolerance,
            },
            "likely_cause": self.likely_cause,
            "differences": [
                {
                    "parameter": f.evidence["parameter"],
                    "data": plain(f.evidence["data"]),
                    "config": plain(f.evidence["config"]),
                }
                for f in self.differences
            ],
        }


def _variant_words(found: RopeIdentification) -> str:
    if found.parameters.get("base_assumed"):
        note = " (the common base under which every pair's factor is >= 1)"
    else:
        note = "" if found.base_snapped else " (fitted, not round)"
    base = f"base {found.base:,.10g}{note}"
    if found.rope_type is None:
        kind = "rotary frequencies of no known variant (per-pair ratio in scale)"
    elif found.rope_type == "default":
        kind = "plain RoPE"
        if "xpos_scale_base" in found.parameters:
            kind += (
                f" with xPos (scale_base {found.parameters['xpos_scale_base']:,.6g}, centred at "
                f"position {found.parameters['xpos_centre']:,.6g})"
            )
    else:
        shown = {
            k: v
            for k, v in found.parameters.items()
            if k in ("factor", "low_freq_factor", "high_freq_factor", "correction_range")
            or k == "original_max_position_embeddings"
        }
        listed = ", ".join(f"{k} {_param(v)}" for k, v in shown.items())
        kind = f"RoPE {found.rope_type}" + (f" ({listed})" if listed else "")
    columns = f"{found.rotary_dim} rotary columns"
    if found.width != found.rotary_dim:
        first, end = found.rotary_columns
        columns += f" (columns {first} to {end - 1} of {found.width})"
    layout = f", {found.layout} layout" if found.layout else ""
    factor = (
        f", attention factor {found.attention_factor:.6g}"
        if found.attention_factor is not None
        else ""
    )
    return f"{kind}, {base}, {columns}{layout}{factor}"


def _param(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_param(v) for v in value) + ")"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
