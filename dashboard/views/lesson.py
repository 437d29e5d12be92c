"""A first lecture: an ordered walk through the views, each step a question to predict before
the chart is revealed, and cards for the misconceptions people write about.

The charts are the other views' own figure builders at the step's parameters, and every number
in the text is computed by pe_core at those parameters, so a step says what its view shows.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

import numpy as np
import streamlit as st

import pe_core
from dashboard import caching, params, registry, sidebar, ui
from dashboard.config import Config
from dashboard.figures import charts, matrices
from dashboard.view_parts import attention, similarity, sinusoids, wavelengths


@dataclass(frozen=True)
class Step:
    """One step of the lesson.

    ``config`` is the step's sidebar; ``link`` the parameters of the view it opens (the
    sidebar's and the view's own, as a link writes them). What depends on numbers is a
    function of the config, computed by pe_core: the explanation always, the options and the
    index of the right one when they carry numbers.
    """

    title: str
    text: str
    question: str
    options: tuple[str, ...] | Callable[[Config], tuple[str, ...]]
    answer: int | Callable[[Config], int]
    explanation: Callable[[Config], str]
    chart: Callable[[Config], object]
    view: str
    config: Config
    link: dict[str, object]


def _shuffle_explanation(config: Config) -> str:
    found = attention.shuffle_outputs()
    sentence = " ".join(attention.SENTENCE)
    shuffled = " ".join(attention.SENTENCE[i] for i in attention.SHUFFLE)
    return (
        "Self-attention compares every word with every other and sums the results. The chart "
        f"runs one attention layer on “{sentence}” and on “{shuffled}”, and puts the shuffled "
        "outputs back in the sentence's order. Without position codes each word's output is "
        f"the same in both (they differ by {found.change_without:.1e}, rounding): the layer "
        "sees a bag of words. With the encoding PE(k) added to the word at position k, the "
        f"outputs change (by up to {found.change_with:.2f}): the order now reaches the layer."
    )


def _shuffle_figure(config: Config):
    found = attention.shuffle_outputs()
    return matrices.matrix_panels(
        found.panels,
        title="One attention layer's outputs, each word on its row",
        symmetric_range=float(max(np.abs(p).max() for p in found.panels.values())),
        row_title="word (sentence order)",
        column_title="output column",
    )


def _counter_explanation(config: Config) -> str:
    freqs = pe_core.frequencies(config.d_model, base=config.base, convention=config.convention)
    lengths = 2 * np.pi / freqs
    ratio = freqs[0] / freqs[1]
    first, last = _first_and_last_pair(config)[::2]
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


def _longest(config: Config) -> float:
    return float(
        pe_core.wavelengths(config.d_model, base=config.base, convention=config.convention)[-1]
    )


def _wavelength_options(config: Config) -> tuple[str, ...]:
    longest = _longest(config)
    return (
        f"About {2 * np.pi:.3g} positions",
        f"About {longest:,.0f} positions",
        f"About {2 * np.pi * config.base:,.0f} positions",
    )


def _wavelength_explanation(config: Config) -> str:
    longest = _longest(config)
    last = config.d_model // 2 - 1
    return (
        f"The slowest pair is i = {last}, with λ = 2π·{config.base_digits}^({2 * last}/"
        f"{config.d_model}) ≈ {longest:,.0f} positions, {longest / (2 * np.pi * config.base):.1%} "
        f'of 2π·{config.base_text}: the paper\'s "up to 10000·2π" rounds this up (see the '
        "misconceptions below). The fastest pair repeats every 2π ≈ 6.28 positions, and the "
        "wavelengths in between grow geometrically: a straight line on the log axis."
    )


#: The widths the step on several frequencies compares (pairs: 1, 2, 4, 8).
SEVERAL_WIDTHS = (2, 4, 8, 16)


def _closest(config: Config, d_model: int) -> pe_core.UniquenessReport:
    return pe_core.uniqueness_report(config.n_positions, d_model, base=config.base)


def _several_answer(config: Config) -> int:
    report = _closest(config, config.d_model)
    a, b = report.closest_pair
    return 1 if report.min_distance < 0.01 and abs(b - a) > 1 else 0


def _several_explanation(config: Config) -> str:
    words = []
    for d_model in SEVERAL_WIDTHS:
        report = _closest(config, d_model)
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


def _rope_explanation(config: Config) -> str:
    found = attention.rotated_scores(config.d_model, config.base)
    starts = ", ".join(f"{n:,}" for n in attention.ROPE_STARTS)
    return (
        "Rotary encodings (RoPE) add nothing to the word vector: each attention head rotates "
        "each pair of its query and of its key by k·ω_i at position k, the sinusoid's angles. "
        f"The chart rotates one query and one key (head_dim {config.d_model}, base "
        f"{config.base_text}) with the key at positions {starts} and the query δ after it: the "
        f"three curves of q·k are one (they differ by {found.spread:.1e}, rounding), because a "
        "rotation by the query's angle and one by the key's leave only their difference. The "
        "score depends on the offset δ alone."
    )


def _rope_figure(config: Config):
    found = attention.rotated_scores(config.d_model, config.base)
    return charts.curves(
        found.offsets,
        found.scores,
        title="q·k after RoPE, the key at three positions",
        subtitle="one random query and key; the query δ positions after the key",
        x_title="offset δ (positions)",
        y_title="score q·k",
    )


def _first_and_last_pair(config: Config) -> tuple[int, ...]:
    """The columns of the first pair and of the last one (at an even d_model)."""
    last = config.d_model - 2
    return (0, 1, last, last + 1)


PAPER = Config(2048, 512, 10_000.0, "vaswani")
SMALL = Config(100, 20, 10_000.0, "vaswani")

STEPS: tuple[Step, ...] = (
    Step(
        "What is a position code?",
        "A transformer reads all the words of a sentence at once. To know which word came "
        "first, each position k gets a vector PE(k) of the same width as the word vectors.",
        "If you shuffle the words of a sentence, does self-attention without position codes "
        "notice?",
        (
            "Yes: each word gets a different output than before",
            "No: each word gets the same output as before, only the outputs' order follows "
            "the shuffle",
        ),
        1,
        _shuffle_explanation,
        _shuffle_figure,
        "sinusoids",
        SMALL,
        {"at": "0, 1, 10, 50"},
    ),
    Step(
        "Why sinusoids?",
        "Column 2i holds sin(k·ω_i) and column 2i+1 holds cos(k·ω_i), with ω_i = "
        "base^(-2i/d_model). The chart draws the first pair of columns and the last one against "
        "the position.",
        "Which columns change fastest from one position to the next?",
        ("The first columns", "The last columns", "All change at the same speed"),
        0,
        _counter_explanation,
        lambda config: sinusoids.position_figure(config, _first_and_last_pair(config), 0, 100),
        "sinusoids",
        SMALL,
        {"dims": list(_first_and_last_pair(SMALL))},
    ),
    Step(
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
    ),
    Step(
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
    ),
    Step(
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
    ),
    Step(
        "Then RoPE",
        "Most language models today do not add a position vector at all.",
        "In a rotary encoding (RoPE), what happens to the word vector?",
        (
            "A position vector is added to it",
            "Its queries and keys are rotated by angles k·ω_i",
            "The position is concatenated to it",
        ),
        1,
        _rope_explanation,
        _rope_figure,
        "rope",
        Config(2048, 128, 10_000.0, "vaswani"),
        {},
    ),
)

#: The last stop after the steps: what the lecture showed, and questions to check it.
RECAP = len(STEPS) + 1

STEP = params.Choice(
    "step",
    "Step",
    1,
    options=tuple(range(1, RECAP + 1)),
    format_func=lambda number: "Recap" if number == RECAP else str(number),
    kind="segmented",
    convert=int,
    help="The steps of a first lecture, in order.",
)
PARAMS = (STEP,)


def options_of(step: Step, config: Config) -> tuple[str, ...]:
    """The step's answers, with their numbers at ``config``."""
    return step.options(config) if callable(step.options) else step.options


def answer_of(step: Step, config: Config) -> int:
    """Index of the right answer at ``config``."""
    return step.answer(config) if callable(step.answer) else step.answer


def link_of(step: Step) -> str:
    """The relative link that opens the step's view with its parameters, written as the app
    writes its address bar: values at their defaults left out."""
    config = step.config
    view = registry.BY_SLUG[step.view]
    declared = {p.key: p for p in (*sidebar.PARAMS, *view.params)}
    shared = view.shared(lambda param: step.link.get(param.key, param.default))
    values = {"L": config.n_positions, "d": config.d_model, "base": config.base}
    values |= {"conv": config.convention}
    values = {key: value for key, value in values.items() if key in shared} | step.link
    query = {}
    for key, value in values.items():
        param = declared[key]
        default = param.default(config) if callable(param.default) else param.default
        if value != default:
            query[key] = param.to_url(value)
    path = "./" if step.view == registry.DEFAULT.slug else step.view  # the default is at /
    return f"{path}?{urlencode(query, doseq=True)}" if query else path


#: The lesson's steps use their own parameters: the sidebar shows none of its own.
SHARED = ()


def subtitle(config: Config) -> str:
    """The page's one-line subtitle: where the lecture is."""
    number = STEP.value(config)
    where = "the recap" if number == RECAP else f"step {number}: {STEPS[number - 1].title}"
    end = "" if where.endswith(("?", ".")) else "."
    return (
        f"A first lecture in {len(STEPS)} steps and a recap; now {where}{end} Each step uses its "
        "own parameters, not the sidebar's."
    )


def render(config: Config) -> None:
    ui.explain(
        "A walk through the views for a first lecture. Each step asks a question: predict the "
        "answer, then the chart and the explanation appear. Each step uses its own parameters "
        "(the sidebar's are not used here); its button opens the full view with them in a new "
        "tab. Below the steps, short cards answer the misconceptions people write about.",
    )
    number = STEP.widget(config)
    if number == RECAP:
        st.progress(1.0, text="Recap")
        _recap()
    else:
        st.progress(number / RECAP, text=f"Step {number} of {len(STEPS)}")
        _step(number, STEPS[number - 1])
    _previous_next(number)
    st.download_button(
        "The whole lesson as one page, for handing out (HTML)",
        data=printout,
        file_name="positional-encodings-lesson.html",
        mime="text/html",
        key="lesson_printout",
        on_click="ignore",
        type="tertiary",
        icon=":material/print:",
    )
    _misconceptions()


def check_questions() -> tuple[tuple[str, str], ...]:
    """The recap's questions and their answers, each number computed."""
    paper = PAPER
    lengths = pe_core.wavelengths(paper.d_model, base=paper.base, convention=paper.convention)
    several = STEPS[3].config
    closest = _closest(several, 2)
    return (
        (
            "Why does each frequency have both a sin and a cos column?",
            "Because then moving every position by δ turns each (sin, cos) pair by the angle "
            "δ·ω_i: one rotation M(δ), the same for every position k. With a sin alone, "
            "sin(k + δ) needs cos(k), which the encoding would not hold.",
        ),
        (
            f"At d_model {paper.d_model} and base {paper.base_text}, after how many positions "
            "does the fastest pair repeat, and the slowest?",
            f"The fastest every {lengths[0]:.3g} positions (2π), the slowest every "
            f"{lengths[-1]:,.0f}.",
        ),
        (
            f"With one pair (d_model 2), which two of positions 0 to {several.n_positions - 1:,} "
            "come closest, and why does the encoding use many pairs?",
            f"Positions {closest.closest_pair[0]:,} and {closest.closest_pair[1]:,}, at distance "
            f"{closest.min_distance:.2g}: one frequency comes back near where it started. "
            "Each added pair turns at another speed and separates them.",
        ),
        (
            "What does a rotary encoding (RoPE) rotate, and what does the score then depend on?",
            "The query and the key of each head, pair by pair, by k·ω_i at position k; their "
            "dot product then depends on the offset between the two positions only.",
        ),
    )


def _recap() -> None:
    """What the steps showed, and questions to check it (each answer computed, shown on demand)."""
    st.subheader("Recap")
    st.markdown(
        "\n".join(f"{i}. **{step.title}**: {step.question}" for i, step in enumerate(STEPS, 1))
    )
    questions = check_questions()
    st.markdown("**Check yourself**")
    for number, (question, answer) in enumerate(questions, 1):
        with st.expander(f"{number}. {question}"):
            st.markdown(answer)


def printout() -> str:
    """The whole lesson as one HTML page for handing out: each step's question, its answer,
    the explanation and the chart, then the recap's questions with their answers."""

    def paragraphs(text: str) -> str:
        return "".join(f"<p>{html.escape(part)}</p>" for part in text.split("\n\n"))

    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<title>Positional encodings: a first lecture</title>"
        "<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto;line-height:1.5}"
        "h2{margin-top:2.5rem}.answer{font-weight:bold}</style></head><body>",
        "<h1>Positional encodings: a first lecture</h1>",
    ]
    for number, step in enumerate(STEPS, start=1):
        config = step.config
        options = options_of(step, config)
        right = options[answer_of(step, config)]
        parts += [
            f"<h2>{number}. {html.escape(step.title)}</h2>",
            paragraphs(step.text),
            f"<p><b>Predict:</b> {html.escape(step.question)}</p><ul>",
            *(
                f"<li{' class=answer' if option == right else ''}>{html.escape(option)}</li>"
                for option in options
            ),
            "</ul>",
            paragraphs(step.explanation(config)),
            step.chart(config).to_html(full_html=False, include_plotlyjs=number == 1),
        ]
    parts.append("<h2>Recap: check yourself</h2><ol>")
    parts += [
        f"<li><p>{html.escape(q)}</p><p class=answer>{html.escape(a)}</p></li>"
        for q, a in check_questions()
    ]
    parts.append("</ol></body></html>")
    return "\n".join(parts)


def _go_to(number: int) -> None:
    """Callback of Previous and Next: the step control (and the URL) follow."""
    st.session_state[STEP.key] = number


def _previous_next(number: int) -> None:
    left, right = st.columns(2)
    if number > 1:
        left.button(
            f"Previous: {STEPS[number - 2].title}",
            key="lesson_previous",
            on_click=_go_to,
            args=(number - 1,),
            icon=":material/arrow_back:",
            width="stretch",
        )
    if number < RECAP:
        right.button(
            f"Next: {STEPS[number].title}" if number < len(STEPS) else "Next: Recap",
            key="lesson_next",
            on_click=_go_to,
            args=(number + 1,),
            icon=":material/arrow_forward:",
            type="primary",
            width="stretch",
        )


def _step(number: int, step: Step) -> None:
    config = step.config
    st.subheader(f"{number}. {step.title}")
    st.markdown(step.text)
    options = options_of(step, config)
    chosen = st.radio(
        f"**Predict:** {step.question}",
        options,
        index=None,
        key=f"lesson_answer_{number}",
    )
    if chosen is None:
        st.info("Predict first: choose an answer to see the chart and why.")
    else:
        right = options[answer_of(step, config)]
        if chosen == right:
            st.success(f"Right: {right}.")
        else:
            st.info(f"Not quite: the answer is “{right}”.")
        st.markdown(step.explanation(config))
        ui.chart(caching.figure(_chart, number), f"lesson_step_{number}")
    st.link_button(
        f"Open {_view_label(step.view)} with these parameters",
        link_of(step),
        icon=":material/open_in_new:",
    )


def _chart(number: int):
    step = STEPS[number - 1]
    return step.chart(step.config)


def _view_label(slug: str) -> str:
    return registry.BY_SLUG[slug].label


# --- Misconceptions ------------------------------------------------------------------------


def _tensor2tensor_longest(d_model: int, base: float) -> float:
    return float(pe_core.wavelengths(d_model, base=base, convention="tensor2tensor")[-1])


def _misconceptions() -> None:
    st.subheader("Misconceptions")
    d, base = PAPER.d_model, PAPER.base
    paper_longest = _longest(PAPER)
    t2t_longest = _tensor2tensor_longest(d, base)
    cards = (
        (
            "The encoding is added, not concatenated",
            "The paper adds PE(k) to the word's embedding (section 3.5: “we add positional "
            "encodings to the input embeddings”); both have d_model columns, and the sum "
            "is what the first layer sees. Concatenating would widen every vector.",
        ),
        (
            "GPT-2's positions are learned, not sinusoidal",
            "GPT-2 (and BERT) keep a trained table, one row per position (`wpe`, "
            "`nn.Embedding(n_positions, n_embd)`), and cannot go past its last row. The "
            "sinusoid is computed, needs no training and has a value at every position.",
        ),
        (
            "“Wavelengths up to 10000·2π” holds for the tensor2tensor spacing only",
            f"With the paper's own formula, ω_i = base^(-2i/d), the slowest pair at d_model "
            f"{d} has λ ≈ {paper_longest:,.0f} positions, below 2π·{base:,g} ≈ "
            f"{2 * np.pi * base:,.0f}. tensor2tensor spaces the exponents by "
            f"1/(d/2 - 1) instead of 2/d and its slowest pair reaches 2π·{base:,g} exactly "
            f"(λ = {t2t_longest:,.0f}).",
        ),
        (
            "cos is at odd dimensions, not at odd positions",
            "PE(k, 2i+1) = cos(k·ω_i): the odd index is the column (the dimension), and k, "
            "the position, can be any number. Every position has both sines and cosines.",
        ),
    )
    for left, right in (cards[:2], cards[2:]):
        for column, (title, text) in zip(st.columns(2), (left, right), strict=True):
            with column.container(border=True):
                st.markdown(f"**{title}**")
                st.markdown(text)
