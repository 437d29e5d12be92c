"""The Lesson's steps on the sinusoidal encoding itself: why sinusoids, their wavelengths, why
several frequencies, and relative position. Each chart is another view's own figure builder
(or a plain chart of pe_core's numbers) at the step's parameters."""

from __future__ import annotations

import numpy as np

import pe_core
from dashboard.config import Config
from dashboard.figures import charts
from dashboard.view_parts import similarity, sinusoids, wavelengths
from dashboard.view_parts.lesson_step import PAPER, SMALL, Step


def first_and_last_pair(config: Config) -> tuple[int, ...]:
    """The columns of the first pair and of the last one (at an even d_model)."""
    last = config.d_model - 2
    return (0, 1, last, last + 1)


def _counter_explanation(config: Config) -> str:
    freqs = pe_core.frequencies(config.d_model, base=config.base, convention=config.convention)
    lengths = 2 * np.pi / freqs
    ratio = freqs[0] / freqs[1]
    first, last = first_and_last_pair(config)[::2]
    return (
        f"The first columns. In the chart columns {first} and {first + 1} repeat every "
        f"{lengths[0]:.3g} positions, columns {last} and {last + 1} every {lengths[-1]:,.0f}. "
        "Like the bits of a binary counter (the lowest bit flips every step, the next every "
        "two steps, the next every four), each pair turns more slowly than the one before it, "
        f"here by a factor of {ratio:.4g} = {config.base_digits}^(2/{config.d_model}).\n\n"
        "Why sinusoids and not the position itself? k grows without bound and k/L changes "
        "meaning with the length L; a binary code jumps. Sines and cosines stay between -1 and "
        "1 at any length, change smoothly, need no training, and a shift of the position is "
        "the same rotation of each pair for every k (step 5): that is why each frequency has "
        "both a sin and a cos."
    )


def longest(config: Config) -> float:
    """The slowest pair's wavelength."""
    return float(
        pe_core.wavelengths(config.d_model, base=config.base, convention=config.convention)[-1]
    )


def _wavelength_options(config: Config) -> tuple[str, ...]:
    slowest = longest(config)
    return (
        f"About {2 * np.pi:.3g} positions",
        f"About {slowest:,.0f} positions",
        f"About {2 * np.pi * config.base:,.0f} positions",
    )


def _wavelength_explanation(config: Config) -> str:
    slowest = longest(config)
    last = config.d_model // 2 - 1
    return (
        f"The slowest pair is i = {last}, with λ = 2π·{config.base_digits}^({2 * last}/"
        f"{config.d_model}) ≈ {slowest:,.0f} positions, {slowest / (2 * np.pi * config.base):.1%} "
        f'of 2π·{config.base_text}: the paper\'s "up to 10000·2π" rounds this up (see the '
        "misconceptions below). The fastest pair repeats every 2π ≈ 6.28 positions, and the "
        "wavelengths in between grow geometrically: a straight line on the log axis."
    )


#: The widths the step on several frequencies compares (pairs: 1, 2, 4, 8).
SEVERAL_WIDTHS = (2, 4, 8, 16)


def closest(config: Config, d_model: int) -> pe_core.UniquenessReport:
    """The two closest positions of ``config``'s range at ``d_model``."""
    return pe_core.uniqueness_report(config.n_positions, d_model, base=config.base)


def _several_answer(config: Config) -> int:
    report = closest(config, config.d_model)
    a, b = report.closest_pair
    return 1 if report.min_distance < 0.01 and abs(b - a) > 1 else 0


def _several_explanation(config: Config) -> str:
    words = []
    for d_model in SEVERAL_WIDTHS:
        report = closest(config, d_model)
        a, b = report.closest_pair
        words.append(
            f"with {d_model // 2} pair{'s' if d_model > 2 else ''} (d_model {d_model}), "
            f"positions {a:,} and {b:,} come closest, at distance {report.min_distance:.2g}"
        )
    return (
        f"Among positions 0 to {config.n_positions - 1:,}: " + "; ".join(words) + ". Each pair "
        "added turns at its own, slower speed and tells apart the positions the faster ones "
        "confuse: with enough pairs the closest positions are neighbours. That is why the "
        "encoding has d_model/2 frequencies and not one. The chart draws, for each position, "
        "the distance to its nearest other position."
    )


def _several_figure(config: Config):
    positions = np.arange(config.n_positions)
    lines = {
        f"d_model {d_model}": pe_core.nearest_neighbor_distances(
            config.n_positions, d_model, base=config.base
        )
        for d_model in SEVERAL_WIDTHS
    }
    return charts.curves(
        positions,
        lines,
        title="Distance from each position to its nearest other position",
        subtitle=f"positions 0 to {config.n_positions - 1:,}, base {config.base_text}",
        x_title="position k",
        y_title="nearest distance",
        log_y=True,
    )


def _relative_explanation(config: Config) -> str:
    return (
        "PE(k + Δ) is PE(k) with each pair rotated by the angle Δ·ω_i, whatever k is. So "
        "PE(k)·PE(k + Δ) = Σ cos(Δ·ω_i) depends on the offset Δ only: the chart is the same "
        "curve from every starting position (the dots are direct checks at several k). That "
        "holds for the encodings themselves; once attention's query and key projections have "
        "mixed them with the words, a score is not a function of Δ alone, and the model has "
        "to learn projections that keep what it needs (RoPE, the next step, builds it in)."
    )


SINUSOIDS = Step(
    "Why sinusoids?",
    "Column 2i holds sin(k·ω_i) and column 2i+1 holds cos(k·ω_i), with ω_i = "
    "base^(-2i/d_model). The chart draws the first pair of columns and the last one against "
    "the position.",
    "Which columns change fastest from one position to the next?",
    ("The first columns", "The last columns", "All change at the same speed"),
    0,
    _counter_explanation,
    lambda config: sinusoids.position_figure(config, first_and_last_pair(config), 0, 100),
    "sinusoids",
    SMALL,
    {"dims": list(first_and_last_pair(SMALL))},
)

WAVELENGTHS = Step(
    "Wavelengths",
    "Pair i repeats every λ_i = 2π/ω_i positions. At the paper's d_model 512 and base 10,000:",
    "How long is the longest wavelength?",
    _wavelength_options,
    1,
    _wavelength_explanation,
    lambda config: wavelengths.wavelength_figure(config, False),
    "wavelengths",
    PAPER,
    {},
)

SEVERAL = Step(
    "Why several frequencies?",
    "One pair turns by 1 radian per position: it comes back near where it started every "
    "2π ≈ 6.28 positions. Whole-number positions never land exactly on a multiple of 2π, "
    "but some land close. Take d_model 2 (that one pair) and positions 0 to 1,999:",
    "Do some positions far apart get almost the same encoding?",
    (
        "No: each position's encoding stays far from every other's",
        "Yes: some positions far apart get almost the same encoding",
    ),
    _several_answer,
    _several_explanation,
    _several_figure,
    "uniqueness",
    Config(2000, 2, 10_000.0, "vaswani"),
    {},
)

RELATIVE = Step(
    "Relative position",
    "Compare the encoding of position k with that of position k + Δ by their dot product.",
    "Does PE(k)·PE(k + Δ) depend on k?",
    ("Yes, it changes along the sequence", "No, only on the offset Δ"),
    1,
    _relative_explanation,
    lambda config: similarity.profile_figure(config, "dot"),
    "rotation",
    PAPER,
    {},
)
