"""Sentences that state a property of the parameters on screen (issue 37).

Fixed text turns false at parameters people try ("the last pairs barely change" at base 1.01,
"constant along every diagonal" at d_model 3). Here each such sentence is produced from the
property as the core computes it for these parameters, and says what is true otherwise. Every
claim a run makes is recorded (its kind, the facts it rests on and its text), so that a test can
render every page over a grid of edge parameters and check each claim it showed against the
core (``tests/dashboard/test_claims.py``).
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

import pe_core
from dashboard import state
from dashboard.formatting import counted, format_number

_RECORD = state.CLAIMS

#: A pair "barely changes" over the positions on screen when its angle moves by less than this
#: (radians): its sin and cos then move by less than sin(π/8) ≈ 0.38 of their range.
BARELY = math.pi / 8


def start_run() -> None:
    """Forget the claims of the last run (called once at the top of every run)."""
    st.session_state[_RECORD] = []


def record(kind: str, text: str, **facts) -> str:
    """``text``, remembered as a claim of kind ``kind`` resting on ``facts``."""
    st.session_state.setdefault(_RECORD, []).append({"kind": kind, "text": text, **facts})
    return text


def ratio_text(ratio: float) -> str:
    """A ratio with the digits that tell it from 1: 1.0000461 at base 1.01, 1.037 at 10,000."""
    if ratio == 1 or not math.isfinite(ratio):
        return f"{ratio:g}"
    digits = max(4, 2 + math.ceil(-math.log10(abs(ratio - 1))))
    return f"{ratio:.{digits}g}"


def positions_text(value: float) -> str:
    """A length in positions, as prose reads it: 6.28, 628, 62,832, 1.6e+19 (the app's one
    formatter for lengths, :func:`dashboard.formatting.format_number`)."""
    return format_number(value)


def pace(bank: pe_core.FrequencyBank, n_positions: int) -> str:
    """How fast the pairs turn at these parameters: the fastest and the slowest pair's
    wavelength, and whether the slowest barely changes over the positions shown."""
    omega = np.asarray(bank.frequencies, dtype=float)
    turning = omega[omega > 0]
    if turning.size == 0:
        return record(
            "pace",
            "No pair turns here (every frequency is 0): every position has the same encoding.",
            fastest=None,
            slowest=None,
            barely=None,
        )
    fastest, slowest = 2 * math.pi / turning.max(), 2 * math.pi / turning.min()
    span = max(n_positions - 1, 0)
    barely = bool(turning.min() * span < BARELY)
    if turning.size == 1:
        text = f"The one turning pair repeats every {positions_text(fastest)} positions"
    else:
        text = (
            f"The fastest pair repeats every {positions_text(fastest)} positions, the slowest "
            f"every {positions_text(slowest)}"
        )
    if barely:
        text += f", so slowly that it barely changes over these {counted(n_positions, 'position')}"
    elif turning.size > 1:
        text += (
            f": over these {counted(n_positions, 'position')} even the slowest turns by "
            f"{turning.min() * span:,.3g} radians"
        )
    return record("pace", text + ".", fastest=fastest, slowest=slowest, barely=barely)


def rows(n_positions: int, row_first: np.ndarray, row_last: np.ndarray) -> str:
    """What a row of the heatmap is: one position, or the mean of a block of positions."""
    widths = np.asarray(row_last) - np.asarray(row_first) + 1
    widest = int(widths.max()) if widths.size else 1
    if widest == 1:
        first, last = int(row_first[0]), int(row_last[-1])
        every = first == 0 and last == n_positions - 1
        text = (
            "Each row is one position k"
            + ("" if every else f" (positions {first:,} to {last:,} of {n_positions:,})")
            + ", each column one dimension of the encoding."
        )
    else:
        text = (
            f"Each row is the mean of {widest:,} consecutive positions (there are more "
            "positions than rows), each column one dimension of the encoding. A column whose "
            "pair turns many times within a block averages to about 0 and is drawn pale: "
            "the mean is small, not the encoding."
        )
    return record("rows", text, n_positions=n_positions, widest=widest)


def offset_only(config) -> bool:
    """Whether PE(k)·PE(k+δ) depends on the offset δ alone at these parameters: every turning
    column has a partner of its frequency (sin with cos), as the core's column layout says; a
    lone column's sin(kω)·sin((k+δ)ω) depends on k itself."""
    return bool(config.layout.is_paired)


def diagonals(config) -> str:
    """The similarity matrix: constant along its diagonals or not, as computed."""
    if offset_only(config):
        text = (
            "the dot product of two encodings depends only on how far apart the positions "
            "are, not on where they are: the matrix is constant along every diagonal"
        )
        holds = True
    else:
        text = (
            f"at d_model {config.d_model:,} ({config.convention}) some column has no partner "
            "of the same frequency, and the dot product depends on where the positions are "
            "too, not only on how far apart: the matrix is not constant along its diagonals"
        )
        holds = False
    return record(
        "diagonals",
        text,
        holds=holds,
        d_model=config.d_model,
        convention=config.convention,
        base=config.base,
    )


def head_width(d_model: int, head_dim: int) -> str:
    """The rotary head the sidebar's d_model makes (an even width, at least 2), and how."""
    if head_dim == d_model:
        text = f"a head of {head_dim:,} columns (d_model)"
    elif head_dim < d_model:
        text = f"a head of {head_dim:,} columns (d_model {d_model:,} rounded down to an even width)"
    else:
        text = f"a head of {head_dim:,} columns (d_model {d_model:,} raised to the smallest head)"
    return record("head_width", text, d_model=d_model, head_dim=head_dim)


def encoding_norm(layout: pe_core.ColumnLayout) -> str:
    """The norm of one position's encoding: √(number of pairs) at every position when every
    turning column has its partner (sin² + cos² = 1 per pair); else it varies with k."""
    pairs = layout.n_cos
    lone = layout.n_sin - layout.n_cos
    if lone == 0:
        text = f"the encoding has norm √{pairs} ≈ {math.sqrt(pairs):.4g} at every position"
        low = high = math.sqrt(pairs)
    else:
        low, high = math.sqrt(pairs), math.sqrt(pairs + lone)
        text = (
            f"the encoding has norm between √{pairs} ≈ {low:.4g} and √{pairs + lone} ≈ "
            f"{high:.4g}, depending on the position ({counted(lone, 'sin column')} without a "
            "cos partner)"
        )
    return record("norm", text, low=low, high=high)


def exact_collisions(bank: pe_core.FrequencyBank) -> str:
    """Whether distinct integer positions can share an encoding in exact arithmetic: not when a
    column turns by 1 radian per position (sin k = sin j only for k = j, π being irrational),
    as the first pair does in every convention; always when no column turns."""
    if not turning(bank):
        text = (
            "Here no column turns (every value is 0 or constant), so every position has the "
            "same encoding."
        )
        distinct = False
    elif np.any(np.asarray(bank.frequencies) == 1.0):
        text = (
            "In exact arithmetic that never happens for distinct integer positions (the "
            "fastest pair alone turns by a whole radian per step, and 2π is irrational), but "
            "rounding can merge them."
        )
        distinct = True
    else:  # not reached by the app's conventions: each has ω_0 = 1 when it has a pair
        text = "Whether they collide in exact arithmetic depends on the frequencies."
        distinct = None
    return record("exact_collisions", text, distinct=distinct)


def _columns(part: slice, d_model: int) -> list[int]:
    return list(range(d_model))[part]


def column_words(config) -> str:
    """Which columns hold sin(k·ω_i), which cos(k·ω_i) and which are 0, as this convention lays
    them out at this d_model, and its frequencies."""
    layout, convention = config.layout, pe_core.CONVENTIONS[config.convention]
    sin = _columns(layout.sin_columns, config.d_model)
    cos = _columns(layout.cos_columns, config.d_model)

    def span(columns: list[int]) -> str:
        if len(columns) == 1:
            return f"column {columns[0]}"
        if columns == list(range(columns[0], columns[-1] + 1)):
            return f"columns {columns[0]} to {columns[-1]}"
        return f"columns {columns[0]}, {columns[1]}, … {columns[-1]}"

    parts = []
    if sin and cos and layout.sin_columns.step == 2:
        parts.append("column 2i holds sin(k·ω_i) and column 2i+1 holds cos(k·ω_i)")
        if len(sin) > len(cos):
            parts.append(f"the last column, {sin[-1]}, holds a sin without its cos")
    else:
        if sin:
            parts.append(
                f"{span(sin)} hold sin(k·ω_i)" if len(sin) > 1 else f"{span(sin)} holds sin(k·ω_0)"
            )
        if cos:
            parts.append(
                f"{span(cos)} hold cos(k·ω_i)" if len(cos) > 1 else f"{span(cos)} holds cos(k·ω_0)"
            )
    zeros = list(layout.zero_columns)
    if zeros:
        parts.append(f"{span(zeros)} {'is' if len(zeros) == 1 else 'are'} always 0")
    text = "; ".join(parts) if parts else "there is no column"
    text = f"{text[:1].upper()}{text[1:]} ({config.convention}: {convention.formula})"
    return record(
        "columns",
        text,
        d_model=config.d_model,
        convention=config.convention,
        sin=sin,
        cos=cos,
        zeros=zeros,
    )


def turning(bank: pe_core.FrequencyBank) -> bool:
    """Whether some column of the encoding changes with the position (a frequency above 0)."""
    return bool(np.any(np.asarray(bank.frequencies) > 0))


def sequence_length(rope: pe_core.RotaryEncoding, seq_len: int) -> str:
    """What the current sequence length does to this encoding: for a variant whose frequencies
    follow it (``RopeVariant.depends_on_seq_len``: dynamic NTK, LongRoPE), the length they are
    for; for the others, nothing."""
    follows = pe_core.ROPE_VARIANTS[rope.rope_type].depends_on_seq_len
    if not follows:
        text = (
            f"rope_type {rope.rope_type}: its frequencies do not depend on the current sequence "
            f"length, so {seq_len:,} changes nothing here; the lengths drawn are the config's."
        )
    elif rope.rope_type == "longrope":
        factors = rope.parameters.get("factors_used")
        text = (
            f"At a current sequence length of {seq_len:,} transformers uses `{factors}` "
            f"({'above' if factors == 'long_factor' else 'at most'} the training length, "
            f"{rope.training_length:,})."
        )
    else:
        text = (
            f"At a current sequence length of {seq_len:,} dynamic NTK computes its base for "
            f"{rope.target_length:,} positions (the longer of it and max_position_embeddings)."
        )
    return record(
        "sequence_length",
        text,
        rope_type=rope.rope_type,
        seq_len=seq_len,
        follows=follows,
        target=rope.target_length,
    )


def first_crossing(found: pe_core.AngleErrorCrossing, frequencies: str) -> str:
    """Where a float32 angle error first passes its threshold, as the core found it position by
    position (pe_core.first_angle_error_above with these ``frequencies``): one position, none
    up to the last, or the range it is known to lie in."""
    mark = f"{found.threshold:g} rad"
    last = found.stop - 1
    if found.exact and found.high is not None:
        text = f"first pass {mark} at position {found.high:,}"
    elif found.exact:
        text = f"stay within {mark} at every position up to {last:,}"
    elif found.high is not None:
        text = f"first pass {mark} somewhere from position {found.low:,} to {found.high:,}"
    else:
        text = (
            f"stay within {mark} at every position up to {found.low - 1:,} at least (beyond "
            "it, not computed position by position)"
        )
    return record(
        "first_crossing",
        text,
        low=found.low,
        high=found.high,
        stop=found.stop,
        threshold=found.threshold,
        exact=found.exact,
        frequencies=frequencies,
    )


def wavelength_title(wavelengths) -> str:
    """The wavelength chart's title: a geometric progression (a straight line on a log axis) is
    a claim about at least two wavelengths that grow by one factor; over one frequency (d_model
    1, or 3 in musicgen) there is one point, and the title says so."""
    lengths = np.asarray(wavelengths, dtype=float)
    lengths = lengths[np.isfinite(lengths)]
    ratios = lengths[1:] / lengths[:-1] if lengths.size > 1 else np.array([])
    geometric = bool(lengths.size > 1 and np.allclose(ratios, ratios[0], rtol=1e-9))
    if geometric:
        text = "Wavelengths form a geometric progression (a straight line on a log axis)"
    elif lengths.size == 1:
        text = "One frequency, one wavelength"
    elif lengths.size == 0:
        text = "No frequency: no wavelength"
    else:
        text = "Wavelength of each frequency"
    return record("wavelength_title", text, n_pairs=int(lengths.size), geometric=geometric)


#: The paper's base: "the wavelengths form a geometric progression from 2π to 10000 · 2π"
#: (Vaswani et al. 2017, §3.5) is a statement about it.
PAPER_BASE = 10_000.0


def wavelength_mark(kind: str, value: float, *, config, current: np.ndarray) -> str:
    """The label of a reference line of the wavelength chart, from what it marks: the sequence
    length, the fastest or slowest pair's wavelength (2π when it is), or 2π·base, which is the
    paper's "up to 10000·2π" only at the paper's base, and reached or not by this convention."""
    value = float(value)
    lengths = np.asarray(current, dtype=float)
    if kind == "length":
        text = f"L = {counted(config.n_positions, 'position')}"
    elif kind == "fastest":
        text = f"fastest pair: λ_0 = {format_number(value)}"
        if np.isclose(value, 2 * math.pi, rtol=1e-12, atol=0.0):
            text += " (2π)"
    elif kind == "slowest":
        text = f"slowest pair: λ_{lengths.size - 1} = {format_number(value)}"
        if np.isclose(value, 2 * math.pi * config.base, rtol=1e-12, atol=0.0):
            text += " = 2π·base" + (", the paper's upper end" if config.base == PAPER_BASE else "")
    else:  # two_pi_base
        reached = bool(lengths.size) and np.isclose(lengths[-1], value, rtol=1e-12, atol=0.0)
        # Two lines in the legend when it says both (a phone's legend does not wrap).
        text = f"2π·base = {format_number(value)}"
        if config.base == PAPER_BASE:
            text += ': the paper\'s<br>"up to 10000·2π"'
        if not reached:
            text += ", not reached here"
    return record(
        "wavelength_mark",
        text,
        mark=kind,
        value=value,
        d_model=config.d_model,
        base=config.base,
        convention=config.convention,
        n_positions=config.n_positions,
    )


def pair_count(layout: pe_core.ColumnLayout) -> str:
    """How many sin/cos pairs the encoding has, and its sin columns without a cos partner (at an
    odd d_model): a lone sin column is not a pair."""
    pairs, lone = layout.n_cos, layout.n_sin - layout.n_cos
    text = f"{pairs:,}" + (f" + {lone:,} lone sin" if lone else "")
    return record("pair_count", text, pairs=pairs, lone=lone, d_model=layout.d_model)


def offsets_drawn(n_positions: int, offsets, checks) -> None:
    """Record what an offset chart draws (its axis is a claim too): the offsets of a sequence of
    ``n_positions`` positions are 0 to n − 1, and a direct check from position k pairs it with
    positions up to n − 1 only."""
    offsets = np.asarray(offsets)
    record(
        "offsets_drawn",
        "",
        n_positions=n_positions,
        largest=int(offsets.max()) if offsets.size else None,
        checks={int(k): int(np.max(o)) if np.size(o) else None for k, (o, _) in checks.items()},
    )
