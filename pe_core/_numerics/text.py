"""Numbers as words in the core's prose (identifications, findings): one rule everywhere."""

from __future__ import annotations

#: A value within this relative distance of a whole number is that number (a position or a
#: coordinate computed as ``start + step * row`` carries a few float64 roundings).
WHOLE_RTOL = 1e-9


def number_words(value: float) -> str:
    """A position, coordinate or count in words: a whole number with thousands separators (also
    when it is whole but for float64 rounding), else to 6 significant digits.

    >>> number_words(1234.0), number_words(200 / 3 * 15), number_words(0.5), number_words(-0.0)
    ('1,234', '1,000', '0.5', '0')
    """
    value = float(value) + 0.0  # no "-0"
    if abs(value - round(value)) <= WHOLE_RTOL * max(1.0, abs(value)):
        return f"{round(value) + 0:,}"
    return f"{value:.6g}"
