"""The Lesson's steps on the sinusoidal encoding itself: why sinusoids, why several
frequencies, their wavelengths, and relative position. Each chart is another view's own figure
builder (or a plain chart of pe_core's numbers) at the step's parameters."""

from __future__ import annotations

import numpy as np

import pe_core
from dashboard.config import Config
from dashboard.figures import charts, sinusoidal
from dashboard.formatting import counted
from dashboard.view_parts import similarity, sinusoids
from dashboard.views.lesson.step import PAPER, SMALL, Step


def step_number(slug: str) -> int:
    """The number of the step ``slug`` in the lecture (read when a text is written, so that a
    step's number in another's text follows the order)."""
    from dashboard.views.lesson import plan as lesson_plan  # the plan imports this module

    return lesson_plan.number_of(slug)


def setting(config: Config, *, what: str = "the encoding") -> str:
    """The step's parameters, said once where the step starts."""
    return (
        f"This step: {what} of positions 0 to {config.n_positions - 1:,}, d_model "
        f"{config.d_model:,} ({counted(config.d_model // 2, 'pair')}), base {config.base_text}."
    )


# --- Why sinusoids ----------------------------------------------------------------------------


def first_and_last_pair(config: Config) -> tuple[int, ...]:
    """The columns of the first pair and of the last one (at an even d_model)."""
    last = config.d_model - 2
    return (0, 1, last, last + 1)


def _sinusoids_text(config: Config) -> str:
    return (
        "The paper's answer: give position k a vector PE(k) of d_model numbers, the same width "
        "as the word vectors, and add it to the word at that position. Its columns come in "
        "pairs: column 2i holds sin(k·ω_i) and column 2i+1 holds cos(k·ω_i), each pair i "
        "turning at its own frequency ω_i. " + setting(config)
    )


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
        "meaning with the length L; a binary code jumps. Sines and cosines stay between −1 and "
        "1 at any length, change smoothly, need no training, and a shift of the position is "
        f"the same rotation of each pair for every k (step {step_number('relative')}): that is "
        "why each frequency has both a sin and a cos."
    )


def _sinusoids_takeaway(config: Config) -> str:
    lengths = pe_core.wavelengths(config.d_model, base=config.base)
    return (
        "PE(k) holds sin(k·ω_i) and cos(k·ω_i) for each pair i: bounded, smooth and computed, "
        f"the first pair fastest (every {lengths[0]:.3g} positions), each later pair slower."
    )


SINUSOIDS = Step(
    slug="sinusoids",
    title="Why sinusoids?",
    text=_sinusoids_text,
    question="Which columns change fastest from one position to the next?",
    options=("The first columns", "The last columns", "All change at the same speed"),
    answer=0,
    explanation=_counter_explanation,
    chart=lambda config: sinusoids.position_figure(config, first_and_last_pair(config), 0, 100),
    formula=r"\begin{gathered}\mathit{PE}(k, 2i) = \sin(k\,\omega_i), \quad "
    r"\mathit{PE}(k, 2i+1) = \cos(k\,\omega_i) \\ "
    # d for d_model in the exponent: a subscript there is drawn at half size, too small to read
    # when projected.
    r"\omega_i = \mathrm{base}^{-2i/d}, \quad d = d_{\mathrm{model}}\end{gathered}",
    takeaway=_sinusoids_takeaway,
    notes="Before revealing, ask what ω_0 is (base⁰ = 1: one radian per position). The "
    "binary-counter picture is the one to leave them with: fast bits for fine position, slow "
    "bits for coarse position. About 5 minutes.",
    view="sinusoids",
    config=SMALL,
    link={"dims": list(first_and_last_pair(SMALL))},
)

# --- Why several frequencies -----------------------------------------------------------------

#: The step's comparison: one pair, then this many columns.
SEVERAL_WIDTH = 16


def closest(config: Config, d_model: int) -> pe_core.UniquenessReport:
    """The two closest positions of ``config``'s range at ``d_model``."""
    return pe_core.uniqueness_report(config.n_positions, d_model, base=config.base)


def closest_offset(config: Config, d_model: int | None = None) -> int:
    """How far apart the two closest positions are (at the step's d_model by default)."""
    a, b = closest(config, d_model or config.d_model).closest_pair
    return abs(b - a)


def _several_candidates(config: Config) -> list[int]:
    """The offsets the options name: neighbours, about one turn of the fastest pair, and the
    offset of the closest positions (each once, in increasing order)."""
    one_turn = max(1, round(2 * np.pi))
    return sorted({1, one_turn, closest_offset(config)})


def _several_options(config: Config) -> tuple[str, ...]:
    one_turn = max(1, round(2 * np.pi))
    words = {1: "(neighbours, such as 0 and 1)", one_turn: "(about one turn: 2π ≈ 6.28)"}
    return tuple(
        f"{offset:,} apart {words.get(offset, f'(such as 0 and {offset:,})')}"
        for offset in _several_candidates(config)
    )


def _several_answer(config: Config) -> int:
    return _several_candidates(config).index(closest_offset(config))


def _several_text(config: Config) -> str:
    return (
        "One pair (d_model 2) turns by one radian per position: it comes back near where it "
        "started every 2π ≈ 6.28 positions. Whole-number positions never land exactly on a "
        f"multiple of 2π, but some land close. This step: positions 0 to "
        f"{config.n_positions - 1:,}, one pair, then {SEVERAL_WIDTH // 2} pairs (d_model "
        f"{SEVERAL_WIDTH}), base {config.base_text}."
    )


def _several_explanation(config: Config) -> str:
    one = closest(config, config.d_model)
    many = closest(config, SEVERAL_WIDTH)
    a, b = one.closest_pair
    turns = (b - a) / (2 * np.pi)
    c, e = many.closest_pair
    return (
        f"With one pair, positions {a:,} and {b:,} come closest, at distance "
        f"{one.min_distance:.2g}: {b - a:,} radians is {turns:,.5f} turns, almost a whole "
        "number, so the pair has come back to where it started (and so have 1 and "
        f"{b + 1:,}, 2 and {b + 2:,}, …: the distance depends on the offset only). With "
        f"{SEVERAL_WIDTH // 2} pairs (d_model {SEVERAL_WIDTH}) the closest two are positions "
        f"{c:,} and {e:,}, {abs(e - c):,} apart, at distance {many.min_distance:.2g}: each "
        "added pair turns at its own, slower speed and tells apart the positions that the "
        "faster ones confuse. That is why the encoding has d_model/2 frequencies and not one. "
        "The chart draws the distance between two encodings against their offset δ, the same "
        "for every starting position."
    )


def _several_figure(config: Config):
    offsets = np.arange(1, config.n_positions)
    lines = {
        f"{counted(d_model // 2, 'pair')} (d_model {d_model})": pe_core.offset_similarity(
            offsets, d_model, base=config.base, kind="distance"
        )
        for d_model in (config.d_model, SEVERAL_WIDTH)
    }
    one = closest(config, config.d_model)
    a, b = one.closest_pair
    return charts.curves(
        offsets,
        lines,
        title="Distance between PE(k) and PE(k + δ), against the offset δ",
        subtitle=f"positions 0 to {config.n_positions - 1:,}, base {config.base_text}; the same "
        "for every k",
        x_title="offset δ (positions)",
        y_title="distance ‖PE(k + δ) − PE(k)‖",
        log_y=True,
        points={
            f"closest with one pair: δ = {b - a:,} (positions {a:,} and {b:,}), "
            f"distance {one.min_distance:.2g}": (b - a, one.min_distance)
        },
    )


def _several_takeaway(config: Config) -> str:
    one, many = closest(config, config.d_model), closest(config, SEVERAL_WIDTH)
    a, b = one.closest_pair
    return (
        f"One frequency confuses positions far apart ({a:,} and {b:,} at distance "
        f"{one.min_distance:.2g}); with {SEVERAL_WIDTH // 2} pairs the closest positions are "
        f"{closest_offset(config, SEVERAL_WIDTH):,} apart, at distance {many.min_distance:.2g}."
    )


SEVERAL = Step(
    slug="several",
    title="Why several frequencies?",
    text=_several_text,
    question="With one pair, how far apart are the two positions whose encodings come closest?",
    options=_several_options,
    answer=_several_answer,
    explanation=_several_explanation,
    chart=_several_figure,
    formula=r"\lVert \mathit{PE}(k+\delta) - \mathit{PE}(k)\rVert^2 = "
    r"4\sum_i \sin^2\!\left(\frac{\delta\,\omega_i}{2}\right)",
    takeaway=_several_takeaway,
    notes="Most students pick 6 (one turn); 2π is irrational, so the pair never comes back "
    "exactly, and whole-number positions come closest where δ is nearly a multiple of 2π "
    "(710 ≈ 113·2π, the same 355/113 that approximates π). The formula shows why more pairs "
    "help: the distance is 0 only when every δ·ω_i is a multiple of 2π at once. About 5 minutes.",
    view="uniqueness",
    config=Config(2000, 2, 10_000.0, "vaswani"),
)

# --- Wavelengths ------------------------------------------------------------------------------


def longest(config: Config) -> float:
    """The slowest pair's wavelength."""
    return float(
        pe_core.wavelengths(config.d_model, base=config.base, convention=config.convention)[-1]
    )


def cycle_counts(config: Config) -> tuple[int, int, int]:
    """Of the pairs, how many complete a full turn within positions 0 .. L − 1 (a wavelength of
    at most L − 1 positions): as the encoding spaces them (geometrically), as many as if the
    wavelengths grew by equal steps from the fastest to the slowest, and all of them."""
    lengths = pe_core.wavelengths(config.d_model, base=config.base, convention=config.convention)
    span = config.n_positions - 1
    even_steps = np.linspace(lengths[0], lengths[-1], lengths.size)
    return int(np.sum(lengths <= span)), int(np.sum(even_steps <= span)), int(lengths.size)


def _wavelength_candidates(config: Config) -> list[int]:
    return sorted(set(cycle_counts(config)))


def _wavelength_options(config: Config) -> tuple[str, ...]:
    pairs = cycle_counts(config)[2]
    return tuple(
        f"All {count:,}" if count == pairs else f"{count:,} of {pairs:,}"
        for count in _wavelength_candidates(config)
    )


def _wavelength_answer(config: Config) -> int:
    return _wavelength_candidates(config).index(cycle_counts(config)[0])


def _wavelength_text(config: Config) -> str:
    lengths = pe_core.wavelengths(config.d_model, base=config.base, convention=config.convention)
    return (
        "Pair i repeats every λ_i = 2π/ω_i positions, its wavelength. At the paper's d_model "
        f"{config.d_model} and base {config.base_text} the fastest pair repeats every "
        f"{lengths[0]:.3g} positions and the slowest every {lengths[-1]:,.0f}. Take a "
        f"sequence of {config.n_positions:,} positions."
    )


def _wavelength_explanation(config: Config) -> str:
    within, even, pairs = cycle_counts(config)
    lengths = pe_core.wavelengths(config.d_model, base=config.base, convention=config.convention)
    ratio = lengths[1] / lengths[0]
    span = config.n_positions - 1
    return (
        f"{within:,} of {pairs:,}. The wavelengths form a geometric series: each is "
        f"{ratio:.4g} = {config.base_digits}^(2/{config.d_model}) times the one before, a "
        "straight line on the chart's log axis. "
        + (
            f"Pairs 0 to {within - 1:,} repeat within L − 1 = {span:,} positions, "
            f"{within / pairs:.0%} of them. "
            if within
            else f"Not one repeats within L − 1 = {span:,} positions. "
        )
        + f"Had the wavelengths grown by equal steps from {lengths[0]:.3g} to {lengths[-1]:,.0f}, "
        f"{even:,} would turn within the sequence. The other {pairs - within:,} pairs "
        "turn less than once: over these positions they are a smooth ramp that tells early "
        f"from late (step {step_number('beyond')} asks what they do past the training length)."
    )


def _wavelength_figure(config: Config):
    lengths = pe_core.wavelengths(config.d_model, base=config.base, convention=config.convention)
    return sinusoidal.cycles_within_chart(lengths, config.n_positions - 1)


def _wavelength_takeaway(config: Config) -> str:
    within, _, pairs = cycle_counts(config)
    lengths = pe_core.wavelengths(config.d_model, base=config.base, convention=config.convention)
    return (
        f"The wavelengths grow geometrically, from {lengths[0]:.3g} to {lengths[-1]:,.0f} "
        f"positions (d_model {config.d_model}): {within:,} of {pairs:,} pairs turn at least once "
        f"within {config.n_positions:,} positions, the rest are slow ramps."
    )


WAVELENGTHS = Step(
    slug="wavelengths",
    title="Wavelengths",
    text=_wavelength_text,
    question=f"How many of the {PAPER.d_model // 2} pairs complete at least one full turn within "
    f"the {PAPER.n_positions:,} positions?",
    options=_wavelength_options,
    answer=_wavelength_answer,
    explanation=_wavelength_explanation,
    chart=_wavelength_figure,
    formula=r"\lambda_i = \frac{2\pi}{\omega_i} = 2\pi\cdot\mathrm{base}^{2i/d}, \qquad "
    r"\frac{\lambda_{i+1}}{\lambda_i} = \mathrm{base}^{2/d}, \qquad d = d_{\mathrm{model}}",
    takeaway=_wavelength_takeaway,
    notes="The wrong answer most students give is the one with equal steps: they picture the "
    "wavelengths spread evenly up to the slowest. Ask them to take logarithms: log λ_i is "
    "linear in i, so the crossing point is at log(L/2π)/log(λ_max/2π) of the way. The paper's "
    '"up to 10000·2π" is a misconception card in the recap. About 5 minutes.',
    view="wavelengths",
    config=PAPER,
)

# --- Relative position ------------------------------------------------------------------------


def _relative_explanation(config: Config) -> str:
    return (
        "PE(k + δ) is PE(k) with each pair turned by the angle δ·ω_i, whatever k is: one "
        "rotation M(δ) for every position. So PE(k)·PE(k + δ) = Σ cos(δ·ω_i) depends on the "
        "offset δ only: the chart is the same curve from every starting position (the dots are "
        "direct checks at several k). It is also even in δ: the dot product alone cannot tell "
        "before from after, the rotation can (M(−δ) turns the other way). That holds for the "
        "encodings themselves; the next step shows what attention's projections make of them."
    )


def _relative_takeaway(config: Config) -> str:
    return (
        "PE(k + δ) = M(δ)·PE(k), one rotation for every k: the dot product of two encodings "
        "depends on their offset δ only."
    )


RELATIVE = Step(
    slug="relative",
    title="Relative position",
    text=lambda config: (
        "Compare the encoding of position k with that of position k + δ, δ "
        "positions later, by their dot product. " + setting(config)
    ),
    question="Does PE(k)·PE(k + δ) depend on k?",
    options=("Yes, it changes along the sequence", "No, only on the offset δ"),
    answer=1,
    explanation=_relative_explanation,
    chart=lambda config: similarity.profile_figure(config, "dot"),
    formula=r"\begin{gathered}\mathit{PE}(k+\delta) = M(\delta)\,\mathit{PE}(k) \\ "
    r"\mathit{PE}(k)\cdot \mathit{PE}(k+\delta) = \sum_i \cos(\delta\,\omega_i)"
    r"\end{gathered}",
    takeaway=_relative_takeaway,
    notes="The proof fits on the board: sin(a+b) and cos(a+b) expand into sin a, cos a times "
    "constants of b. M(δ) is block-diagonal, one 2×2 rotation per pair. Point out the sin "
    "before cos order: it makes M(δ) turn the (sin, cos) points clockwise; RoPE's R turns "
    "anticlockwise because it writes the pair the other way round. About 5 minutes.",
    view="rotation",
    config=PAPER,
)
