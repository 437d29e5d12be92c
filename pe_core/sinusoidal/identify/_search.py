"""The search: every convention's trials ranked on a sample of rows, the best evaluated on every
row in both orientations, and the simplest explanation chosen, with the others that fit as
well said in words."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pe_core._numerics.formats import PRECISIONS
from pe_core.errors import InputError
from pe_core.sinusoidal.conventions import CONVENTIONS
from pe_core.sinusoidal.identify._difference import (
    _explain,
    _hidden_formats,
    _rank_rows,
    _Storage,
    _storage,
)
from pe_core.sinusoidal.identify._fit import _encode, _fit, _positions, _round_spacing, _Trial
from pe_core.sinusoidal.identify.results import _NO_MATCH, Candidate, Identification

#: Widest matrix (columns = d_model) that is tried as an encoding.
_MAX_COLUMNS = 16384

#: The bases libraries use, most used first: between two equally round bases that give the same
#: table (at small d_model, tensor2tensor with base 10,000 is split with base 100,000 at
#: d_model 10), the more usual one names it.
USUAL_BASES = (10_000.0, 100_000.0, 1_000.0, 100.0, 500_000.0, 1_000_000.0, 10.0)

#: Entries compared at a time when a candidate is evaluated on every row (8 MiB of float64):
#: the largest table is compared without a full-size copy of its differences.
_EVALUATE_VALUES = 1 << 20


def _evaluate(
    matrix, trial: _Trial, storage: _Storage, padding: np.ndarray
) -> tuple[Candidate, np.ndarray]:
    n, d_model = matrix.shape
    row_errors = np.empty(n)
    # Printed values: each story's difference beyond what its printing explains, per row.
    stories = [None, *storage.printed_formats] if storage.printing is not None else []
    row_excess = {story: np.empty(n) for story in stories}
    largest, worst = -1.0, (0, 0)
    chunk = max(1, (_EVALUATE_VALUES // (1 + len(stories))) // d_model)
    for first in range(0, n, chunk):
        rows = np.arange(first, min(n, first + chunk))
        error = _encode(trial, rows, d_model)
        block = matrix[first : first + chunk]
        error -= block
        np.abs(error, out=error)
        error[padding[first : first + chunk]] = 0.0
        row_errors[rows] = np.max(error, axis=1)
        cell = int(np.argmax(error))
        if error.flat[cell] > largest:  # the first largest, in row order, as argmax gives it
            largest = float(error.flat[cell])
            worst = (first + cell // d_model, cell % d_model)
        for story, slack in storage.slacks(block, stories).items() if stories else ():
            beyond = error - slack
            beyond[padding[first : first + chunk]] = 0.0
            row_excess[story][rows] = np.max(beyond, axis=1)
    excess = row_excess if stories else {None: row_errors}
    precision = _explain(excess, _positions(trial, np.arange(n)), storage)
    candidate = Candidate(
        trial.convention,
        trial.base,
        trial.start,
        largest,
        (int(worst[0]), int(worst[1])),
        trial.step,
        precision,
        rows_compared=n,
    )
    return candidate, row_errors


def _padding(matrix) -> np.ndarray:
    """Rows that are all zeros, when the others are not (each row True or False)."""
    zero = ~np.any(matrix, axis=1)
    return zero if 0 < np.count_nonzero(zero) <= matrix.shape[0] - 2 else np.zeros_like(zero)


def _longest_run(padding: np.ndarray) -> tuple[int, int]:
    """First and end row of the longest run of rows that are not padding."""
    edges = np.flatnonzero(np.diff(np.concatenate([[1], padding.astype(np.int8), [1]])))
    starts, ends = edges[::2], edges[1::2]
    longest = int(np.argmax(ends - starts))
    return int(starts[longest]), int(ends[longest])


def _fit_around_padding(matrix, name: str, padding: np.ndarray) -> list[_Trial]:
    """:func:`_fit` on the longest run of rows between padding rows, with the first position
    carried back to the matrix's first row."""
    if not padding.any():
        return _fit(matrix, name)
    first, end = _longest_run(padding)
    if end - first < 2:
        return []
    return [replace(t, start=t.start - t.step * first) for t in _fit(matrix[first:end], name)]


def _best_of_orientation(matrix, storage: _Storage, padding: np.ndarray):
    """Every convention's trials ranked on a sample of rows; the few best evaluated on every row.

    Returns the candidates, best first (each convention's best among them, those not
    shortlisted compared on the sample rows only, as their ``rows_compared`` says), and a map
    from each fully evaluated candidate to its trial. ``padding`` rows are not compared.
    """
    n, d_model = matrix.shape
    trials = [t for name in CONVENTIONS for t in _fit_around_padding(matrix, name, padding)]
    if not trials:
        return [], {}
    sample = _rank_rows(n)
    rough = {}  # trial -> (largest difference on the sample rows, its cell)
    for trial in trials:
        error = np.abs(_encode(trial, sample, d_model) - matrix[sample])
        error[padding[sample]] = 0.0
        worst = np.unravel_index(int(np.argmax(error)), error.shape)
        rough[trial] = (float(error[worst]), (int(sample[worst[0]]), int(worst[1])))
    least = min(largest for largest, _ in rough.values())
    ordered = sorted(trials, key=lambda t: rough[t][0])
    close = [t for t in ordered if rough[t][0] <= 4 * least + 1e-9]
    # The closest few and the simplest few (a whole start, a round base): the rounded trials'
    # differences are a little larger, and the fitted ones alone would fill the shortlist.
    simplest = sorted(
        close,
        key=lambda t: (t.start != round(t.start), _digits(t.base), _usual_rank(t.base)),
    )
    half = _SHORTLIST // 2
    shortlist = list(dict.fromkeys([*close[:half], *simplest[:half], *close]))[:_SHORTLIST]
    evaluated = {_evaluate(matrix, trial, storage, padding)[0]: trial for trial in shortlist}
    candidates = list(evaluated)
    for name in CONVENTIONS:  # each convention's best, for the record
        if any(c.convention == name for c in candidates):
            continue
        own = [t for t in ordered if t.convention == name]
        if own:
            largest, cell = rough[own[0]]
            candidates.append(
                Candidate(
                    name,
                    own[0].base,
                    own[0].start,
                    largest,
                    cell,
                    own[0].step,
                    _NO_MATCH,
                    rows_compared=sample.size,
                )
            )
    return sorted(candidates, key=lambda c: c.max_abs_error), evaluated


#: Trials evaluated on every row.
_SHORTLIST = 6


def _simplest(candidates: list[Candidate]) -> Candidate:
    """Among candidates that are all explained (or, if none is, about equally good), the simplest:
    a whole first position, then a round base (the more usual of equally round ones), then the
    smaller error (fitted values carry the matrix's rounding noise, and some conventions
    coincide: tensor2tensor with base b is split with base b**(h/(h-1)))."""
    explained = [c for c in candidates if c.precision.explained]
    if explained:
        good = explained
    else:
        least = min(c.max_abs_error for c in candidates)
        good = [c for c in candidates if c.max_abs_error <= 1.5 * least + 1e-12]
    return min(good, key=_simplicity)


def _simplicity(c: Candidate) -> tuple:
    """The order of :func:`_simplest`: the simpler story, whole start, round spacing and base,
    then the convention listed first in :data:`CONVENTIONS` (of two that coincide up to their
    base, neither base round, the fits' errors differ only by the table's rounding)."""
    return (
        c.precision.rank,
        c.start != round(c.start),
        abs(c.step) != 1 and not _round_spacing(c.step),
        _digits(c.base),
        _usual_rank(c.base),
        list(CONVENTIONS).index(c.convention),
        c.max_abs_error,
    )


def _usual_rank(base: float) -> int:
    """The base's place in :data:`USUAL_BASES` (after all of them when it is none)."""
    return USUAL_BASES.index(base) if base in USUAL_BASES else len(USUAL_BASES)


def _digits(value: float) -> int:
    """Significant digits of a number as written: 10000 has 1, 10000.5 has 6."""
    mantissa = f"{value:.15e}".split("e")[0].replace(".", "").replace("-", "")
    return len(mantissa.rstrip("0"))


def _equivalents(
    best: Candidate, candidates: list[Candidate], d_model: int, base_determined: bool
) -> tuple[str, ...]:
    """Other explained candidates, said in words: the same frequencies or a fit within the
    input's own rounding."""
    notes = []
    best_freqs = CONVENTIONS[best.convention].frequencies(d_model, best.base)
    for other in sorted(candidates, key=_simplicity):  # each convention's simplest fit
        if other is best or not other.precision.explained or other.convention == best.convention:
            continue
        if any(other.convention in note for note in notes):
            continue
        freqs = CONVENTIONS[other.convention].frequencies(d_model, other.base)
        same_layout = _columns(other.convention, d_model) == _columns(best.convention, d_model)
        same = (
            same_layout
            and freqs.shape == best_freqs.shape
            and np.allclose(freqs, best_freqs, rtol=1e-12, atol=0)
        )
        described = f"{other.convention} with " + (
            f"base {other.base:g}" if base_determined else "any base"
        )
        if same:
            notes.append(
                f"{described} is the same table at d_model {d_model}: the same frequencies in "
                "the same columns, under another convention's rule"
            )
        else:
            notes.append(
                f"{described} also fits (largest difference {other.max_abs_error:.2g}), within "
                "the input's own rounding: the table cannot tell the two apart"
            )
    return tuple(notes)


def _hidden_words(storage: _Storage, precision) -> tuple[str, ...]:
    """Formats the printing hides beside the story named, in words (what tells them apart)."""
    hidden = _hidden_formats(storage, precision)
    if not hidden:
        return ()
    named = precision.format or "the exact values"
    listed = " or ".join(hidden)
    finest = hidden[0]
    digits = {"float32": 9, "float16": 5, "bfloat16": 4}[finest]
    return (
        f"{listed} numbers written the same way fit as well: {precision.printing_words} are "
        f"coarser than {finest}'s rounding ({PRECISIONS[finest].unit_roundoff:.2g} of a value "
        f"near 1), so the text cannot tell them from {named}; written with {digits} "
        f"significant digits (%.{digits}g) it would",
    )


def _columns(name: str, d_model: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The sin columns and the cos columns of a convention, in pair order."""
    layout = CONVENTIONS[name].column_layout(d_model)
    columns = np.arange(d_model)
    return tuple(columns[layout.sin_columns].tolist()), tuple(columns[layout.cos_columns].tolist())


def _identify_values(
    values: np.ndarray, dtype: np.dtype, squeezed_from, storage: _Storage | None = None
) -> Identification:
    """:func:`identify_encoding` on a checked 2-D float64 ``values`` of input dtype ``dtype``
    (``storage``: what is known of how they were written, when not from the values
    themselves: a rescaled table's printing)."""
    results = {}
    # Values near the float64 limit (a table of 1e300s) overflow the fits' products: such a
    # table matches nothing and is reported as no match, without NumPy's warnings.
    with np.errstate(over="ignore", invalid="ignore"):
        storage = _storage(values, dtype) if storage is None else storage
        for transposed in (False, True):
            oriented = values.T if transposed else values
            if oriented.shape[1] > _MAX_COLUMNS:  # wider than any encoding we identify
                continue
            padding = _padding(oriented)
            ranked, trials = _best_of_orientation(oriented, storage, padding)
            if ranked:
                results[transposed] = (ranked, trials, padding)
                if any(c.precision.explained for c in ranked):
                    break  # explained: no need to try the other orientation
    if not results:
        raise InputError(
            f"matrix of shape {values.shape} cannot be an encoding: it needs a sin/cos pair "
            f"(2 columns) and at most {_MAX_COLUMNS} columns, positions in rows or in columns"
        )
    # Transposed only when positions in columns explain the matrix (or are the only reading).
    transposed = True in results and (
        False not in results or any(c.precision.explained for c in results[True][0])
    )
    ranked, trials, padding = results[transposed]
    best = _simplest([c for c in ranked if c in trials])  # fully evaluated ones only
    oriented_shape = values.shape[::-1] if transposed else values.shape
    worst = best.worst_cell[::-1] if transposed else best.worst_cell
    return Identification(
        matches=best.precision.explained,
        convention=best.convention,
        base=best.base,
        start=best.start,
        max_abs_error=best.max_abs_error,
        worst_cell=worst,
        transposed=transposed,
        precision=best.precision,
        candidates=tuple(ranked),
        step=best.step,
        n_positions=oriented_shape[0],
        squeezed_from=squeezed_from,
        base_determined=trials[best].base_determined,
        equivalents=(
            *_equivalents(best, ranked, oriented_shape[1], trials[best].base_determined),
            *_hidden_words(storage, best.precision),
        ),
        padding_rows=tuple(np.flatnonzero(padding).tolist()) if best.precision.explained else (),
    )
