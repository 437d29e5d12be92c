"""The mistakes people make when they write a sinusoidal encoding, and naming the one in a table.

:data:`BUGS` is a catalogue: each entry is a name, the wrong line as people write it, the fix,
and how to build the wrong table (``wrong_table(positions, d_model, base)``, in float64).
:func:`diagnose_encoding` first asks :func:`pe_core.identify_encoding`; a table it explains is
an encoding, and only what the fit itself shows can be a mistake there (a base that is
10,000 squared, or e**4 from ``log10``; a first position of 1; angles computed in a small
format). A table it does not explain is compared with every entry's wrong table at the
usual bases, and the entry that reproduces it is named.

>>> wrong = BUGS["inverted_frequency"].wrong_table(np.arange(50), 16, 10_000.0)
>>> diagnose_encoding(wrong).bug.name
'inverted_frequency'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.formats import PRECISIONS
from pe_core.errors import InputError
from pe_core.sinusoidal.arithmetic import FORMULAS, textbook_encoding
from pe_core.sinusoidal.conventions import CONVENTIONS
from pe_core.sinusoidal.encoding import sinusoidal_encoding
from pe_core.sinusoidal.identify import Identification, PrecisionKind, _identify
from pe_core.sinusoidal.identify._difference import _spread_rows, _Storage
from pe_core.sinusoidal.identify._search import USUAL_BASES, _digits, _usual_rank

__all__ = ["BUGS", "Bug", "Diagnosis", "diagnose_encoding"]

#: Rows compared before a whole table is (most candidates fail on these).
_SAMPLE_ROWS = 8

#: Bases tried for a table no convention explains (the paper's first, then RoPE's and others).
COMMON_BASES = USUAL_BASES


def _interleaved(angles: NDArray[np.float64], first: str = "sin") -> NDArray[np.float64]:
    """Columns ``j`` of ``angles`` as sin (even ``j``) and cos (odd ``j``), or the reverse."""
    table = np.cos(angles)
    even = 0 if first == "sin" else 1
    table[:, even::2] = np.sin(angles[:, even::2])
    return table


def _angles(positions, d_model: int, exponent_of_column) -> NDArray[np.float64]:
    """``k * base**exponent_of_column(j)`` for every position ``k`` and column ``j``."""
    k = np.asarray(positions, dtype=np.float64)[:, None]
    return k * exponent_of_column(np.arange(d_model))[None, :]


def _pair(j):
    return 2 * (j // 2)


def _paper_angles(positions, d_model, base):
    return _angles(positions, d_model, lambda j: base ** (-_pair(j) / d_model))


def _inverted_angles(positions, d_model, base):
    return _angles(positions, d_model, lambda j: base ** (_pair(j) / d_model))


def _column_angles(positions, d_model, base):
    return _angles(positions, d_model, lambda j: base ** (-j / d_model))


def _doubled_angles(positions, d_model, base):
    return _angles(positions, d_model, lambda j: base ** (-2 * j / d_model))


def _wrong_axis_angles(positions, d_model, base):
    # pe[:, L] for a sequence of L positions 0 .. L-1: every row is position L, the next one.
    return _paper_angles(np.full(len(positions), np.max(positions) + 1), d_model, base)


def _squared_base(positions, d_model, base):
    return sinusoidal_encoding(positions, d_model, base=base**2)


def _log10_for_ln(positions, d_model, base):
    return sinusoidal_encoding(positions, d_model, base=math.exp(math.log10(base)))


def _start_at_one(positions, d_model, base):
    return sinusoidal_encoding(np.asarray(positions, dtype=np.float64) + 1, d_model, base=base)


def _float32_angles(positions, d_model, base):
    return textbook_encoding(positions, d_model, compute_dtype="float32", base=base)


@dataclass(frozen=True)
class Bug:
    """One mistake: what people write, what it does, the fix, and the wrong table it makes.

    Attributes
    ----------
    name : str
        Key in :data:`BUGS`.
    title : str
        The mistake in a few words.
    wrong_code : str
        The line as it is written (PyTorch-tutorial style, ``i`` the pair and ``j`` the
        column index).
    fix : str
        The one-line fix.
    angles : callable or None
        For a table that is no encoding: ``angles(positions, d_model, base)``, the angle of
        every entry, whose sin (even columns; cos with ``first="cos"``) and cos make the wrong
        table. The diagnosis compares with it. None for a mistake that still makes an
        encoding, which :func:`identify_encoding`'s fit shows (a base, a start, a format).
    encoding : callable or None
        For such a mistake: ``encoding(positions, d_model, base)``, the table it makes.
    first : {"sin", "cos"}
        Which function the even columns hold, for ``angles``.
    on_purpose : tuple of str
        Code that makes this table on purpose (then it is a mistake only where the code meant
        otherwise): positions from 1 are fairseq's with ``padding_idx=0``.
    """

    name: str
    title: str
    wrong_code: str
    fix: str
    angles: Callable[[NDArray[np.float64], int, float], NDArray[np.float64]] | None = None
    encoding: Callable[[NDArray[np.float64], int, float], NDArray[np.floating]] | None = None
    first: str = "sin"
    on_purpose: tuple[str, ...] = ()

    @property
    def seen_by(self) -> str:
        """ "table" when the wrong table is no encoding, "fit" when identify's fit shows it."""
        return "table" if self.angles is not None else "fit"

    def wrong_table(self, positions, d_model: int, base: float) -> NDArray[np.float64]:
        """The table this mistake makes at ``positions`` (float64)."""
        positions = np.asarray(positions, dtype=np.float64)
        if self.angles is not None:
            return _interleaved(self.angles(positions, d_model, base), self.first)
        return np.asarray(self.encoding(positions, d_model, base), dtype=np.float64)


#: The catalogue, in the order the diagnosis tries it.
BUGS: MappingProxyType[str, Bug] = MappingProxyType(
    {
        bug.name: bug
        for bug in (
            Bug(
                "inverted_frequency",
                "frequency inverted: positions multiplied by base^(2i/d), not divided",
                "pe[k, 2*i] = sin(k * 10000 ** (2 * i / d_model))",
                "divide instead: sin(k / 10000 ** (2 * i / d_model)); "
                "the frequencies must fall from 1 to 1/base",
                _inverted_angles,
            ),
            Bug(
                "column_exponent",
                "exponent from the column index: cos uses (2i+1)/d",
                "pe[k, j] = cos(k / 10000 ** (j / d_model))  # j = 2*i + 1",
                "use the pair index for both columns of a pair: 10000 ** (2 * (j // 2) / d_model)",
                _column_angles,
            ),
            Bug(
                "doubled_exponent",
                "exponent 2j/d from the column index j, in a loop over even columns",
                "pe[k, j + 1] = cos(k / 10000 ** (2 * (j + 1) / d_model))",
                "with j = 2*i the exponent is j / d_model, not 2 * j / d_model",
                _doubled_angles,
            ),
            Bug(
                "sin_cos_swapped",
                "sin and cos swapped: cos in the even columns",
                "pe[:, 0::2] = cos(k * w); pe[:, 1::2] = sin(k * w)",
                "sin goes in the even columns: pe[:, 0::2] = sin(k * w)",
                _paper_angles,
                first="cos",
            ),
            Bug(
                "wrong_axis_slice",
                "one row added to every position: the (1, L, d) buffer sliced as pe[:, L]",
                "x = x + self.pe[:, x.size(1)]",
                "slice a range: x = x + self.pe[:, : x.size(1)]",
                _wrong_axis_angles,
            ),
            Bug(
                "squared_base",
                "exponent 4i/d: the column index 2i used as the pair index (base 10,000 squared)",
                "for j in range(0, d_model, 2): pe[k, j] = sin(k / 10000 ** (2 * j / d_model))",
                "with j = 2*i the exponent is j / d_model",
                encoding=_squared_base,
            ),
            Bug(
                "log10_for_ln",
                "log10 where the natural log belongs (base e^4 = 54.6 instead of 10,000)",
                "div_term = exp(arange(0, d_model, 2) * -(math.log10(10000.0) / d_model))",
                "use math.log(10000.0)",
                encoding=_log10_for_ln,
            ),
            Bug(
                "start_at_one",
                "positions start at 1",
                "position = torch.arange(1, max_len + 1)",
                "position = torch.arange(max_len)  (the first token is position 0)",
                encoding=_start_at_one,
                on_purpose=(
                    # fairseq/utils.py make_positions: "Position numbers begin at
                    # padding_idx+1"; transformers' ports keep it (modeling_fsmt.py,
                    # create_position_ids_from_input_ids in M2M100, XGLM, Speech2Text).
                    "fairseq's SinusoidalPositionalEmbedding with padding_idx=0 (its positions "
                    "begin at padding_idx + 1; with fairseq's usual padding_idx=1, and in the "
                    "models ported from it, FSMT, M2M100, XGLM, NLLB-MoE, Speech2Text, they "
                    "begin at 2)",
                ),
            ),
            Bug(
                "float32_angles",
                "angles k * w computed in a small format, wrong at long context",
                "pe[:, 0::2] = sin(position * div_term)  # position, div_term: float32 or float16",
                "compute the table in float64 (or exactly, as pe_core does) and cast once",
                encoding=_float32_angles,
                # Every library computes in its working format on purpose (PyTorch's float32,
                # keras' mixed_float16 policy): the formulas' libraries (FORMULAS).
                on_purpose=tuple(
                    dict.fromkeys(lib for f in FORMULAS.values() for lib in f.libraries)
                ),
            ),
        )
    }
)


@dataclass(frozen=True)
class Diagnosis:
    """What :func:`diagnose_encoding` found.

    Attributes
    ----------
    identification : Identification
        :func:`identify_encoding`'s answer for the table.
    bug : Bug or None
        The mistake that explains the table, or None.
    base, start : float or None
        The base and first position at which ``bug``'s wrong table reproduces the table.
    max_abs_error : float or None
        Largest difference between the table and that wrong table.
    arithmetic : str or None
        In words, the textbook formula and format that reproduce the table to two units in the
        last place (:func:`pe_core.textbook_encoding` with ``compute_dtype``, ``formula`` and
        ``convention``), or None.
    compute_dtype, formula, convention : str or None
        Those arguments, when ``arithmetic`` is set.
    """

    identification: Identification
    bug: Bug | None = None
    base: float | None = None
    start: float | None = None
    max_abs_error: float | None = None
    arithmetic: str | None = None
    compute_dtype: str | None = None
    formula: str | None = None
    convention: str | None = None

    @property
    def likely_mistake(self) -> bool:
        """True when a mistake is named that no known code makes on purpose."""
        return self.bug is not None and not self.bug.on_purpose

    @property
    def correct(self) -> bool:
        """True when the table is an encoding with no likely mistake (what a mistake makes
        when known code makes it on purpose, as fairseq starts positions at 1, is none), or a
        library's arithmetic reproduced to its last place (keras-hub's float16 table)."""
        known = self.identification.matches or self.arithmetic is not None
        return known and not self.likely_mistake

    def summary(self) -> str:
        """The verdict and, for a mistake, what the table is and the fix."""
        found = self.identification
        if self.bug is None:
            if found.matches:
                return f"No mistake found: {found.summary()}."
            return (
                "No mistake in the catalogue explains this table either: it is neither a "
                "sinusoidal encoding we know nor one of the usual mistakes in writing one."
            )
        if self.bug.on_purpose:
            title = self.bug.title
            if self.bug.name == "float32_angles":  # the format found, not the catalogue's
                fmt = self.compute_dtype or found.precision.format or "a small format"
                title = f"angles k * w computed in {fmt}"
            return (
                f"{_capitalized(title)}: {self.table_words}. "
                f"{_capitalized(self.on_purpose_words)}; a mistake only if your code meant "
                f"otherwise (fix: {self.bug.fix})."
            )
        return f"Likely mistake: {self.bug.title}; {self.table_words}. Fix: {self.bug.fix}."

    @property
    def on_purpose_words(self) -> str:
        """Who makes the named table on purpose, in words ("" when nobody does): for a
        library's arithmetic, the libraries that write the formula found."""
        if self.bug is None or not self.bug.on_purpose:
            return ""
        if self.formula is not None:
            libraries = FORMULAS[self.formula].libraries
            return f"done on purpose in {self.compute_dtype} by " + "; ".join(libraries)
        return "done on purpose by " + "; ".join(self.bug.on_purpose)

    @property
    def table_words(self) -> str:
        """What the table is, for a named mistake ("the table is ..."); "" without one."""
        if self.bug is None:
            return ""
        if self.bug.seen_by == "table":
            return (
                f"the table is this mistake's at base {self.base:g}, positions from "
                f"{self.start:g} (largest difference {self.max_abs_error:.2g})"
            )
        if self.arithmetic is not None:
            return f"the table is the {self.arithmetic}"
        return f"the table is the {self.identification.summary()}"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def _noise_bound(angles: NDArray[np.float64], unit_roundoff: float) -> NDArray[np.float64]:
    """What computing the angles in a format of this unit roundoff can move an entry by."""
    return 4.0 * unit_roundoff * (np.abs(angles) + 1.0) + 1e-12


#: An entry whose noise bound exceeds this says nothing about the formula (its angle is lost).
_INFORMATIVE = 0.1


def _matches_table(values, wrong, angles, unit_roundoff) -> tuple[bool, float]:
    """Whether ``values`` is ``wrong`` up to the arithmetic's noise, on the informative entries."""
    bound = _noise_bound(angles, unit_roundoff)
    informative = bound <= _INFORMATIVE
    if np.count_nonzero(informative) < max(4, informative.size // 4):
        return False, math.inf
    error = np.abs(values - wrong)
    largest = float(np.max(error[informative]))
    return bool(np.all(error[informative] <= bound[informative])), largest


def _diagnose_table(values, unit_roundoff: float) -> tuple[Bug, float, float, float] | None:
    n, d_model = values.shape
    # The sample includes the last row, which the wrong-axis entry needs.
    sample = _spread_rows(n, _SAMPLE_ROWS)
    best = None
    for bug in (b for b in BUGS.values() if b.seen_by == "table"):
        if bug.name == "wrong_axis_slice" and not np.all(values == values[0]):
            continue
        for base in COMMON_BASES:
            for start in (0.0, 1.0):
                positions = start + np.arange(n, dtype=np.float64)
                fits = False
                for rows in (sample, slice(None)):  # most candidates fail on the sample
                    angles = bug.angles(positions[rows], d_model, base)
                    if not np.all(np.isfinite(angles)):
                        break
                    wrong = _interleaved(angles, bug.first)
                    fits, error = _matches_table(values[rows], wrong, angles, unit_roundoff)
                    if not fits:
                        break
                if fits and (best is None or error < best[3]):
                    best = (bug, base, start, error)
        if best is not None:
            return best
    return None


def _arithmetic_trials(found: Identification):
    """(convention, base, start) to try: the identified candidates' and the common ones."""
    # Far along, a table computed in float16 is too wrong for identify to rank its convention.
    # The identified one first: conventions that coincide up to their base (tensor2tensor with
    # base b is split with base b**(h/(h-1))) both fit, and identify chose the simpler base.
    conventions = dict.fromkeys(
        [found.convention, *(c.convention for c in found.candidates[:3]), *CONVENTIONS]
    )
    # The round bases first: a table computed in float16 is fitted with a base a few parts in
    # a thousand off (9,980 for keras-hub's 10,000), and that base in that format may reproduce
    # it too, to the two ulps allowed.
    fitted = [c.base for c in found.candidates[:3]]
    rounded = [float(f"{base:.{digits}g}") for base in fitted for digits in (1, 2)]
    bases = sorted(
        dict.fromkeys([*COMMON_BASES, *rounded, *fitted]),
        key=lambda base: (_digits(base), _usual_rank(base)),
    )
    starts = dict.fromkeys([*(float(round(c.start)) for c in found.candidates[:3]), 0.0, 1.0])
    for convention in conventions:
        for base in bases:
            for start in starts:
                yield convention, base, start


def _near_the_unit_circle(values, layout, unit_roundoff: float) -> bool:
    """Whether every (sin, cos) pair of ``layout`` in ``values`` could be a textbook table's in a
    format of this unit roundoff ``u``, to the tolerance :func:`_arithmetic` allows (4u).

    A textbook table's pair is ``s = sin a (1 + e1)``, ``c = cos a (1 + e2)`` with one angle ``a``
    and ``|e1|, |e2| <= u``, so ``|s^2 + c^2 - 1| <= 2u + u^2``; entries within 4u of those move
    ``s^2 + c^2`` by at most ``8u (|s| + |c|) + 32u^2 <= 8 sqrt(2) u + 32u^2``. Below ``16u``
    in all (u <= 2**-8). A necessary condition, checked once per convention and format
    instead of once per base, start and formula.
    """
    pairs = min(layout.n_sin, layout.n_cos)
    sines = values[:, layout.sin_columns][:, :pairs]
    cosines = values[:, layout.cos_columns][:, :pairs]
    return bool(np.all(np.abs(sines * sines + cosines * cosines - 1.0) <= 16 * unit_roundoff))


def _arithmetic(
    values, found: Identification, storage: _Storage | None = None
) -> tuple[str, str, str, float, float] | None:
    """(format, formula, convention, base, start) whose textbook table equals ``values`` to two
    units in the last place (plus, for a printed table, what its printing moves each value);
    None if none does. Round bases are tried first, and of the two formulas the one closer to
    the table is named (in float16 both may be within two ulps)."""
    if found.transposed or found.padding_rows:
        return None
    n, d_model = values.shape
    step = found.step
    sample = _spread_rows(n, _SAMPLE_ROWS)
    printed = storage is not None and storage.printing is not None
    formats = ("float32", "float16", "bfloat16")
    if printed:
        formats = tuple(f for f in formats if f in storage.printed_formats)
    # Each value's printing, on the sample rows (the whole table's only for a trial that
    # passes them: a full-size array per format would weigh on the page's memory budget).
    sample_slack = {fmt: storage.slack(values[sample], fmt) if printed else 0.0 for fmt in formats}
    on_circle = {}  # (convention, format): can the sample's pairs be that format's sin and cos?
    for convention, base, start in _arithmetic_trials(found):
        positions = start + step * np.arange(n, dtype=np.float64)
        for fmt in formats:
            # Two ulps just below 1, and each value's printing.
            two_ulps = 4 * PRECISIONS[fmt].unit_roundoff
            if (convention, fmt) not in on_circle:
                layout = CONVENTIONS[convention].column_layout(d_model)
                widest = float(np.max(sample_slack[fmt])) if printed else 0.0
                on_circle[convention, fmt] = _near_the_unit_circle(
                    values[sample], layout, PRECISIONS[fmt].unit_roundoff + widest
                )
            if not on_circle[convention, fmt]:
                continue
            hits = []  # (largest difference, formula): the formula that reproduces it best
            for formula in FORMULAS:

                def table(rows, fmt=fmt, formula=formula, trial=(convention, base, positions)):
                    return textbook_encoding(
                        trial[2][rows],
                        d_model,
                        compute_dtype=fmt,
                        base=trial[1],
                        convention=trial[0],
                        formula=formula,
                    )

                try:
                    if np.any(
                        np.abs(table(sample) - values[sample]) > two_ulps + sample_slack[fmt]
                    ):
                        continue
                    difference = np.abs(table(slice(None)) - values)
                except InputError:  # positions or angles beyond the format's range
                    continue
                difference -= storage.slack(values, fmt) if printed else 0.0
                if np.all(difference <= two_ulps):
                    order = list(FORMULAS).index(formula)  # ties: the first listed
                    hits.append((float(np.max(difference)), order, formula))
            if hits:
                return fmt, min(hits)[2], convention, base, start
    return None


def diagnose_encoding(matrix: ArrayLike) -> Diagnosis:
    """Name the mistake in an encoding table, if it is one of the usual ones.

    Parameters
    ----------
    matrix : array_like, shape (n_positions, d_model)
        As for :func:`pe_core.identify_encoding`.

    Returns
    -------
    Diagnosis
        The identification, and the mistake from :data:`BUGS` that explains the table (None
        for a correct table, and for one that no entry explains).

    Raises
    ------
    ValueError, TypeError
        As :func:`pe_core.identify_encoding` does.

    Notes
    -----
    A table that :func:`identify_encoding` explains gets a mistake named only when the fit
    itself shows one: base 10,000 squared, base e^4 (``log10`` for ``ln``), a first position
    of 1, or angles computed in float32, float16 or bfloat16. The format and formula are then
    pinned down when the textbook formula in that format (:func:`pe_core.textbook_encoding`)
    reproduces the table to two units in the last place; that also explains float16 tables
    whose errors are beyond what identify calls a match. Any other table is compared with
    each "table" entry's wrong table, positions from 0 or 1 and the bases in
    :data:`COMMON_BASES`, on the entries whose angle the table's own format still carries.
    """
    found, values, storage = _identify(matrix)
    if found.transposed:
        values = values.T
    with np.errstate(over="ignore", invalid="ignore"):
        if found.matches:
            return _diagnose_fit(values, found, storage)
        arithmetic = _arithmetic(values, found, storage)
        if arithmetic is not None:
            return _arithmetic_diagnosis(found, arithmetic, values)
        unit_roundoff = PRECISIONS[storage.arithmetic].unit_roundoff
        if storage.printing is not None:  # the printing moves each value by up to this
            widest = float(np.max(storage.printing.half_unit(values)))
            unit_roundoff = max(unit_roundoff, 2 * widest)
        hit = _diagnose_table(values, unit_roundoff)
    if hit is None:
        return Diagnosis(found)
    bug, base, start, error = hit
    return Diagnosis(found, bug, base, start, error)


def _arithmetic_diagnosis(found, arithmetic, values) -> Diagnosis:
    fmt, formula, convention, base, start = arithmetic
    n, d_model = values.shape
    positions = start + found.step * np.arange(n, dtype=np.float64)
    exact = sinusoidal_encoding(positions, d_model, base=base, convention=convention)
    error = float(np.max(np.abs(values - exact)))
    end = start + found.step * (n - 1)
    direction = " (rows in decreasing order)" if found.step < 0 else ""
    words = (
        f"{convention} encoding, base {base:g}, positions from {start:g} to {end:g}{direction}, "
        f"computed in {fmt} with the {formula} formula ({FORMULAS[formula].expression}); it is "
        f"up to {error:.2g} from the exact encoding"
    )
    return Diagnosis(
        found, BUGS["float32_angles"], base, start, error, words, fmt, formula, convention
    )


def _close(value: float, target: float) -> bool:
    return abs(value - target) <= 1e-6 * target


def _diagnose_fit(values, found: Identification, storage: _Storage | None = None) -> Diagnosis:
    if found.rescaled:  # a normalized table (PatchTST's): its arithmetic is the rescaling's
        return Diagnosis(found)
    if found.base_determined and _close(found.base, 10_000.0**2):
        return Diagnosis(found, BUGS["squared_base"], 10_000.0, found.start, found.max_abs_error)
    if found.base_determined and _close(found.base, math.exp(4.0)):
        return Diagnosis(found, BUGS["log10_for_ln"], 10_000.0, found.start, found.max_abs_error)
    if found.start == 1.0 and found.step == 1 and not found.padding_rows:
        return Diagnosis(found, BUGS["start_at_one"], found.base, 0.0, found.max_abs_error)
    computed = found.precision.kind is PrecisionKind.COMPUTED
    if computed and found.precision.format != "float64":
        arithmetic = _arithmetic(values, found, storage)
        if arithmetic is not None:
            return _arithmetic_diagnosis(found, arithmetic, values)
        return Diagnosis(found, BUGS["float32_angles"], found.base, found.start)
    return Diagnosis(found)
