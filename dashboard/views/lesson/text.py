"""What the Lesson says beside its steps: the notation (stated once), the misconceptions people
write about, and the recap's check questions, every number computed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard.views.lesson import families, plan, sinusoids, small_models
from dashboard.views.lesson.step import PAPER

#: The letters of the Lesson and of every page, each for one thing.
NOTATION_ROWS = (
    ("k", "a position: 0, 1, 2, … (the paper writes pos)"),
    ("δ", "an offset between two positions: k and k + δ; a query δ positions after its key"),
    ("i", "a pair of columns, 2i and 2i + 1"),
    ("ω_i", "pair i's angular frequency, base^(−2i/d_model) radians per position"),
    ("λ_i", "pair i's wavelength, 2π/ω_i positions"),
    ("d_model", "the width of the encoding and of the word vectors"),
    ("d_head", "the width of one attention head (RoPE rotates within it)"),
    ("L", "the number of positions shown; T the training length"),
    ("PE(k)", "the encoding of position k, a vector of d_model numbers"),
    ("x", "a word's vector (its embedding, plus PE(k) when the encoding is added)"),
    (
        "q, κ",
        "a query q = x W_Q and a key κ = x W_K; papers write the key k, here k is the position",
    ),
    ("M(δ)", "the rotation that takes PE(k) to PE(k + δ), the same for every k"),
    ("R(k)", "RoPE's rotation at position k: each pair (2i, 2i + 1) turned by k·ω_i"),
)

NOTATION = (
    "| symbol | meaning |\n|---|---|\n"
    + "\n".join(f"| {symbol} | {meaning} |" for symbol, meaning in NOTATION_ROWS)
    + "\n\nM(δ) and R turn the same way: the sinusoid writes each pair as (sin, cos), so its "
    "points run clockwise as k grows; RoPE writes a pair as (x_2i, x_2i+1) and turns it "
    "anticlockwise. With the two coordinates swapped, M(δ) is R(δ)."
)


@dataclass(frozen=True)
class Misconception:
    """A card of the recap: the mistake, and what holds instead (computed where it has
    numbers)."""

    title: str
    text: Callable[[], str]


def _tensor2tensor_longest() -> float:
    return float(
        pe_core.wavelengths(PAPER.d_model, base=PAPER.base, convention="tensor2tensor")[-1]
    )


def _two_pi_base() -> str:
    d, base = PAPER.d_model, PAPER.base
    paper_longest = sinusoids.longest(PAPER)
    return (
        f"With the paper's own formula, ω_i = base^(−2i/d_model), the slowest pair at d_model "
        f"{d} has λ ≈ {paper_longest:,.0f} positions, below 2π·{base:,g} ≈ "
        f"{2 * np.pi * base:,.0f}. tensor2tensor spaces the exponents by 1/(d_model/2 − 1) "
        f"instead of 2/d_model and its slowest pair reaches 2π·{base:,g} exactly "
        f"(λ = {_tensor2tensor_longest():,.0f})."
    )


def _extrapolates() -> str:
    config = families.BEYOND
    found = families.beyond_training(config)
    return (
        "A computed encoding has a value at every position, but past the training length "
        f"its slow pairs reach angles no training text showed (step "
        f"{plan.number_of('beyond')}: up to {int(found.unseen.max())} of "
        f"{config.d_model // 2} pairs). Press et al. (2022) measured it: models with the "
        "sinusoid got worse right past the length they were trained on."
    )


MISCONCEPTIONS = (
    Misconception(
        "The encoding is added, not concatenated",
        lambda: (
            "The paper adds PE(k) to the word's embedding (section 3.5: “we add "
            "positional encodings to the input embeddings”); both have d_model columns, and the "
            "sum is what the first layer sees. Concatenating would widen every vector."
        ),
    ),
    Misconception(
        "GPT-2's positions are learned, not sinusoidal",
        lambda: (
            "GPT-2 (and BERT) keep a trained table, one row per position (`wpe`, "
            "`nn.Embedding(n_positions, n_embd)`), and cannot go past its last row. The sinusoid "
            "is computed, needs no training and has a value at every position."
        ),
    ),
    Misconception(
        "“Wavelengths up to 10000·2π” holds for the tensor2tensor spacing only", _two_pi_base
    ),
    Misconception(
        "cos is at odd dimensions, not at odd positions",
        lambda: (
            "PE(k, 2i+1) = cos(k·ω_i): the odd index is the column (the dimension), and k, "
            "the position, can be any number. Every position has both sines and cosines."
        ),
    ),
    Misconception("“Computed at any position” does not mean “works at any length”", _extrapolates),
    Misconception(
        "RoPE adds nothing to the word vector",
        lambda: (
            "RoPE rotates the query and the key inside each attention head, in every "
            "layer; the vectors that flow between the layers carry no position code at all."
        ),
    ),
)


def check_questions() -> tuple[tuple[str, str], ...]:
    """The recap's questions and their answers, each number computed."""
    paper = PAPER
    lengths = pe_core.wavelengths(paper.d_model, base=paper.base, convention=paper.convention)
    several = sinusoids.SEVERAL.config
    closest = sinusoids.closest(several, several.d_model)
    within, _, pairs = sinusoids.cycle_counts(sinusoids.WAVELENGTHS.config)
    order = small_models.reversal_changes().changes
    rnn, _, plain, causal = small_models.LAYERS
    stack = small_models.residual_stack()
    beyond = families.BEYOND
    rows = families.training_length(beyond)
    return (
        (
            "Why does self-attention need position codes, when a recurrent network does not?",
            "An RNN reads the words in order: reversing the sentence changed a word's output "
            f"by up to {order[rnn]:.0%}. Self-attention without a mask compares all the words "
            f"at once, as a set: {order[plain]:.0%}"
            + (", each word's output the same." if order[plain] < 1e-9 else ".")
            + f" A decoder's causal mask changes that a little ({order[causal]:.0%}); with "
            f"PE(k) added to the word at position k: {order[small_models.WITH_POSITIONS]:.0%}.",
        ),
        (
            "Why does each frequency have both a sin and a cos column?",
            "Because then moving every position by δ turns each (sin, cos) pair by the angle "
            "δ·ω_i: one rotation M(δ), the same for every position k. With a sin alone, "
            "sin((k + δ)ω) needs cos(kω), which the encoding would not hold.",
        ),
        (
            f"With one pair (d_model 2), which two of positions 0 to "
            f"{several.n_positions - 1:,} come closest, and why does the encoding use many "
            "pairs?",
            f"Positions {closest.closest_pair[0]:,} and {closest.closest_pair[1]:,}, at "
            f"distance {closest.min_distance:.2g}: {closest.closest_pair[1]:,} radians is "
            "almost a whole number of turns. Each added pair turns at another speed and "
            "separates them.",
        ),
        (
            f"At d_model {paper.d_model} and base {paper.base_text}, after how many positions "
            "does the fastest pair repeat, and the slowest? How many pairs turn at least once "
            f"within {paper.n_positions:,} positions?",
            f"The fastest every {lengths[0]:.3g} positions (2π), the slowest every "
            f"{lengths[-1]:,.0f}; {within:,} of {pairs:,} pairs, because the wavelengths grow "
            "geometrically.",
        ),
        (
            "What does a rotary encoding (RoPE) rotate, and what does the score then depend on?",
            "The query q and the key κ of each head, pair by pair, by k·ω_i at their position "
            "k; their dot product then depends on the offset δ between the two positions only.",
        ),
        (
            f"The encoding is added below the first layer. How does it reach layer "
            f"{stack.layers[-1]}?",
            "Through the residual connections: each layer adds its output to its input, "
            "x + f(x), so what the first layer got, the word plus PE(k), is carried up. In "
            "the lesson's random stack the copies of one word still differed by "
            f"{stack.with_residual[-1]:.0%} after layer {stack.layers[-1]}; without the "
            "residual connections "
            + (
                "they were one vector."
                if stack.without_residual[-1] < 1e-12
                else f"{stack.without_residual[-1]:.1%}."
            ),
        ),
        (
            f"Trained on {rows:,} positions, which of the sinusoid, a learned table, RoPE and "
            "ALiBi has no value at all past that length, and which hand attention angles it "
            "never saw?",
            f"A learned table has no value: it holds {rows:,} rows, one per position. The "
            "sinusoid and RoPE are computed at any position, but their slow pairs reach "
            "angles not seen in training; ALiBi's −m·δ goes on as the same line.",
        ),
    )
