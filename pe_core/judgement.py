"""One judgement for every road into a check: the command line (``python -m pe_core identify``
and ``check-rope``) and the Check page ask these two functions, and differ only in how they
show the answer.

:func:`check_table` names a sinusoidal table (its convention, base, positions and arithmetic,
the mistake that made it, or the 2-D or 3-D grid it encodes); :func:`check_rope` names the
rotary encoding in a file's arrays, and says so when they are a sinusoidal table instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from pe_core.errors import InputError
from pe_core.files import Written, WrongFamily, rope_inputs
from pe_core.rotary import Finding, RopeIdentification, identify_rope
from pe_core.sinusoidal import (
    Diagnosis,
    Grid3DIdentification,
    GridIdentification,
    diagnose_encoding,
    identify_grid,
    identify_grid3d,
)

__all__ = ["TableCheck", "check_rope", "check_table"]


@dataclass(frozen=True)
class TableCheck:
    """What :func:`check_table` found.

    Attributes
    ----------
    diagnosis : Diagnosis
        The 1-D identification and the mistake named, if any.
    grid, grid3d : GridIdentification or Grid3DIdentification or None
        Tried when the table is no 1-D encoding and no known mistake: the 2-D grid of patches,
        then the 3-D volume, it encodes (None when not tried or not readable as one).
    written : Written or None
        How the table was written, when the road knows (a file or pasted text).
    """

    diagnosis: Diagnosis
    grid: GridIdentification | None = None
    grid3d: Grid3DIdentification | None = None
    written: Written | None = None

    @property
    def kind(self) -> str:
        """ "grid" or "grid3d" when a grid explains the table, else "table"."""
        if self.grid is not None and self.grid.matches:
            return "grid"
        if self.grid3d is not None and self.grid3d.matches:
            return "grid3d"
        return "table"

    @property
    def matches(self) -> bool:
        """True when the table is a known encoding with no likely mistake: a correct 1-D
        table (a mistake some library makes on purpose is not one), or a grid."""
        return self.kind != "table" or self.diagnosis.correct

    def summary(self) -> str:
        """The verdict in words."""
        if self.kind == "grid":
            return f"A 2-D encoding: {self.grid.summary()}."
        if self.kind == "grid3d":
            return f"A 3-D encoding: {self.grid3d.summary()}."
        return self.diagnosis.summary()

    def to_dict(self) -> dict:
        """The result as JSON-ready data (``python -m pe_core identify --json``)."""
        diagnosis = self.diagnosis
        found = diagnosis.identification
        precision = found.precision
        bug = diagnosis.bug
        return {
            "matches": self.matches,
            "summary": self.summary(),
            "kind": self.kind,
            "convention": found.convention,
            "base": found.base,
            "start": found.start,
            "step": found.step,
            "n_positions": found.n_positions,
            "transposed": found.transposed,
            "precision": precision.words,
            "precision_kind": precision.kind.value,
            "format": precision.format,
            "decimals": precision.decimals,
            "significant_digits": precision.significant,
            "max_abs_error": _plain(found.max_abs_error),
            "worst_cell": list(found.worst_cell),
            "equivalents": list(found.equivalents),
            "bug": None if bug is None else bug.name,
            "likely_mistake": diagnosis.likely_mistake,
            "on_purpose_in": [] if bug is None else list(bug.on_purpose),
            "grid": None if self.kind != "grid" else self.grid.summary(),
            "grid3d": None if self.kind != "grid3d" else self.grid3d.summary(),
            "input": None if self.written is None else self.written.to_dict(),
        }


def _plain(value: float) -> float | str:
    return float(value) if math.isfinite(value) else str(value)


def check_table(matrix: ArrayLike, *, written: Written | None = None) -> TableCheck:
    """Name a sinusoidal table: :func:`pe_core.diagnose_encoding`, then, for a table that is
    no 1-D encoding and no known mistake, the 2-D grid (:func:`pe_core.identify_grid`) and
    the 3-D volume (:func:`pe_core.identify_grid3d`) it may encode.

    Parameters
    ----------
    matrix : array_like, shape (n_positions, d_model)
        As :func:`pe_core.identify_encoding` takes it.
    written : Written, optional
        How it was written (kept on the result, for the verdict's words).

    Returns
    -------
    TableCheck

    Raises
    ------
    InputError
        As :func:`pe_core.identify_encoding` does.

    Examples
    --------
    >>> import pe_core
    >>> check_table(pe_core.grid_encoding(4, 6, 16)).kind
    'grid'
    """
    diagnosis = diagnose_encoding(matrix)
    found = diagnosis.identification
    if found.matches or diagnosis.bug is not None:
        return TableCheck(diagnosis, written=written)
    values = np.squeeze(np.asarray(matrix, dtype=np.float64))
    values = values.T if found.transposed else values
    # identify_grid takes any width (positional-encodings cuts channels that are not a
    # multiple of 4); a table it cannot read as a grid is not one.
    try:
        grid = identify_grid(values)
    except InputError:
        grid = None
    grid3d = None
    if grid is None or not grid.matches:
        try:
            grid3d = identify_grid3d(values)
        except InputError:
            grid3d = None
    return TableCheck(diagnosis, grid, grid3d, written)


#: Names of a positions array beside a cache (not a table).
_POSITION_NAMES = ("positions", "position_ids")


def _single_table(arrays: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The file's one array when it is a matrix (positions x columns) that could be a table,
    else None."""
    others = [name for name in arrays if name.lower() not in _POSITION_NAMES]
    if len(others) != 1:
        return None
    array = np.asarray(arrays[others[0]])
    kept = [n for n in array.shape if n != 1]
    if len(kept) != 2 or min(kept) < 2 or array.dtype.kind not in "iuf":
        return None
    return array.reshape(kept)


def _sinusoidal(table: np.ndarray) -> Diagnosis | None:
    """The table's diagnosis when it is a sinusoidal encoding (or a known mistake in one)."""
    try:
        diagnosis = diagnose_encoding(table)
    except InputError:
        return None
    if diagnosis.identification.matches or diagnosis.bug is not None:
        return diagnosis
    return None


def _not_rotary(diagnosis: Diagnosis, why: str) -> WrongFamily:
    return WrongFamily(
        f"the file's single array is a sinusoidal encoding table, not a rotary cache ({why}). "
        f"{diagnosis.summary()} Check it as a table: python -m pe_core identify FILE, or the "
        "Check page with What to check: sinusoidal",
        family="sinusoidal",
    )


def check_rope(
    arrays: Mapping[str, np.ndarray],
    *,
    config: Mapping | str | bytes | None = None,
    layer_type: str | None = None,
    cos: str | None = None,
    sin: str | None = None,
    inv_freq: str | None = None,
    before: str | None = None,
    after: str | None = None,
    positions: str | None = None,
    hint: str = "",
) -> RopeIdentification:
    """Name the rotary encoding in a file's arrays (:func:`pe_core.files.rope_inputs`, then
    :func:`pe_core.identify_rope`), or say that they are a sinusoidal table.

    A file of one (L, d) array is read as vLLM's ``cos_sin_cache`` ([cos | sin]). When no
    rotary encoding explains it and it is a sinusoidal encoding table, that is what is said
    (:class:`pe_core.files.WrongFamily`); when both explain it (the ``diffusion`` convention's
    [cos | sin] table is plain RoPE's ``cos_sin_cache``, bit for bit), a finding
    "sinusoidal_table" says so beside the rotary verdict.

    Parameters
    ----------
    arrays : mapping of str to ndarray
        A file's arrays (:func:`pe_core.files.read_arrays`).
    config, layer_type
        As :func:`pe_core.identify_rope` takes them.
    cos, sin, inv_freq, before, after, positions, hint
        As :func:`pe_core.files.rope_inputs` takes them.

    Returns
    -------
    RopeIdentification

    Raises
    ------
    WrongFamily
        A sinusoidal table (family "sinusoidal").
    InputError
        Arrays no check can read, or a bad config.
    """
    named = any(v is not None for v in (cos, sin, inv_freq, before, after))
    table = None if named else _single_table(arrays)
    try:
        inputs = rope_inputs(
            arrays,
            cos=cos,
            sin=sin,
            inv_freq=inv_freq,
            before=before,
            after=after,
            positions=positions,
            hint=hint,
        )
    except WrongFamily:
        raise
    except InputError as error:
        diagnosis = None if table is None else _sinusoidal(table)
        if diagnosis is not None:
            raise _not_rotary(diagnosis, str(error)) from None
        raise
    try:
        found = identify_rope(config=config, layer_type=layer_type, **inputs)
    except InputError as error:
        diagnosis = None if table is None or "cos" not in inputs else _sinusoidal(table)
        if diagnosis is not None:
            raise _not_rotary(diagnosis, str(error)) from None
        raise
    if table is None or "cos" not in inputs:
        return found
    rotary = found.explained and found.rope_type is not None
    if not rotary:
        diagnosis = _sinusoidal(table)
        if diagnosis is not None:
            why = "read as vLLM's [cos | sin] cache, no rotary encoding explains it"
            raise _not_rotary(diagnosis, why)
        return found
    note = _also_a_table(found)
    if note is None:
        return found
    return replace(found, findings=(*found.findings, note))


def _also_a_table(found: RopeIdentification) -> Finding | None:
    """For a single array read as [cos | sin] that plain RoPE explains: the sinusoidal
    tables with the same numbers ([cos | sin] at base**(-i/h) is the ``diffusion``
    convention at that base, and the ``musicgen`` one, base**(-i/(h-1)), at
    base**((h-1)/h)), the round bases first."""
    if (
        found.rope_type != "default"
        or found.layout != "per_pair"
        or found.attention_factor != 1.0
        or found.rotary_columns[0] != 0
        or found.width != found.rotary_dim // 2
    ):
        return None
    h = found.rotary_dim // 2
    tolerance = max(3 * found.base_uncertainty, 1e-9)
    readings = []
    for convention, power in (("diffusion", 1.0), ("musicgen", (h - 1) / h)):
        if power == 0:
            continue
        base = found.base_fit**power
        round_base = _round(base, tolerance * power)
        readings.append((round_base is None, convention, round_base or base))
    readings.sort()
    named = " or ".join(f"the {c} convention's at base {b:,.10g}" for _, c, b in readings)
    first = readings[0]
    return Finding(
        "sinusoidal_table",
        f"the same numbers are a sinusoidal table ([cos | sin]): {named}; if that is what it "
        "is, check it as a table (python -m pe_core identify FILE)",
        {"convention": first[1], "base": first[2]},
    )


def _round(value: float, relative: float) -> float | None:
    """The roundest number (1 to 3 significant digits) within ``relative`` of ``value``."""
    for digits in (1, 2, 3):
        candidate = float(f"{value:.{digits}g}")
        if abs(candidate - value) <= relative * abs(value):
            return candidate
    return None
