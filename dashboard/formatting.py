"""Numbers and column descriptions as a person reads them: in hover boxes, axis ticks, widget
labels and links. NumPy only: the sidebar and the parameters use it without loading Plotly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def format_number(value: float) -> str:
    """A wavelength or position as a person reads it, the same on every page (issue 53: one
    wavelength was 7.61702e+08 on one page and 761,702,272 on another): 6.28, 87.3, 1,213,
    761,702,272, 1.6e+19 (whole positions grouped up to 10**15, three digits below 100)."""
    if not np.isfinite(value):
        return str(value)
    if abs(value) < 100 or abs(value) >= 1e15:
        return f"{value:.3g}"
    return f"{value:,.0f}"


def round_step(raw: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is at least ``raw`` (> 0)."""
    magnitude = 10.0 ** np.floor(np.log10(raw))
    return float(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw))


def nice_step(span: float, n_ticks: int = 10) -> int:
    """A whole round tick step (1, 2 or 5 times a power of ten) giving about ``n_ticks`` ticks."""
    return int(round_step(max(span / n_ticks, 1.0)))


def round_ticks(
    first: Sequence[int], last: Sequence[int] | None = None, n_ticks: int = 10
) -> tuple[list[int], list[str]]:
    """Ticks at round numbers on an axis of rows (or columns) that cover number ranges.

    Row ``j`` covers the numbers ``first[j] .. last[j]`` (one number each when ``last`` is
    None); each round number gets a tick at the row that covers it, so an axis of block means
    reads 0, 100,000, 200,000 rather than the blocks' own first positions. Returns the rows and
    the tick texts.
    """
    if not len(first):
        return [], []
    first = np.asarray(first)
    last = first if last is None else np.asarray(last)
    step = nice_step(last[-1] - first[0], n_ticks)
    rounds = np.arange(-(-first[0] // step) * step, last[-1] + 1, step)
    rows = np.searchsorted(first, rounds, side="right") - 1
    covered = (rows >= 0) & (last[np.maximum(rows, 0)] >= rounds)
    return rows[covered].tolist(), [f"{r:,}" for r in rounds[covered]]


def number_text(value: float, *, grouping: bool = False) -> str:
    """A number as the shortest text that reads back as the same float, without a trailing
    ".0": 10000, 1000001, 2.5, 1e-07 (``f"{x:g}"`` keeps six digits: base 1000001 read
    1e+06); with ``grouping``, thousands separated: 10,000, 1,000,001.5."""
    text = repr(float(value)).removesuffix(".0")
    if not grouping or "e" in text or not np.isfinite(value):
        return text
    whole, dot, fraction = text.partition(".")
    return f"{int(whole):,}{dot}{fraction}"


def format_offset(offset: float) -> str:
    """An offset as typed: 1, -3, 2.5, 1,000,000 (no 1e+06)."""
    return f"{offset:,.0f}" if float(offset).is_integer() else f"{offset:,g}"


def column_labels(
    columns: Sequence[int],
    pair: Sequence[int],
    role: Sequence[str],
    frequency: Sequence[float],
    wavelength: Sequence[float],
) -> list[str]:
    """One description per column for the hover box: index, pair, sin or cos, ω and λ."""
    labels = []
    for column, i, kind, w, lam in zip(columns, pair, role, frequency, wavelength, strict=True):
        if kind == "zero":
            labels.append(f"column {column} (zero padding)")
        else:
            labels.append(
                f"column {column}: pair i={i}, {kind}, ω={w:.4g} rad/pos, λ={lam:.4g} pos"
            )
    return labels


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and its noun, singular for one: "1 layer", "2,048 layers"."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


_MARKDOWN_SPECIAL = set("\\`*_{}[]()<>#+-.!|~$:")


def escape_markdown(text: str) -> str:
    """Text from a user (URL, file name) shown literally in Markdown: no links, images, math
    or code spans can be smuggled in."""
    return "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in str(text))
