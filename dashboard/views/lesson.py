"""A first lecture: an ordered walk through the views, each step a question to predict before
the chart is revealed, and cards for the misconceptions people write about.

The steps live in ``dashboard/view_parts/lesson_*.py`` by topic (the encoding itself, inside
attention, the families). Their charts are the other views' own figure builders at the step's
parameters, or plain charts of numbers computed by pe_core and by small seeded NumPy layers
(``view_parts/attention.py``), and every number in the text is computed at those parameters, so
a step says what its chart shows.
"""

from __future__ import annotations

import html
from urllib.parse import urlencode

import numpy as np
import streamlit as st

import pe_core
from dashboard import caching, params, registry, sidebar, ui
from dashboard.config import Config
from dashboard.view_parts import attention, lesson_attention, lesson_families, lesson_sinusoids
from dashboard.view_parts.lesson_step import (
    PAPER,
    Step,
    answer_of,
    chart_of,
    explanation_of,
    link_values,
    options_of,
)

#: The lecture, in order. Steps 1 to 6 keep the numbers they had before steps 7 to 9 came:
#: a link to one of them still opens the same step.
STEPS: tuple[Step, ...] = (
    lesson_attention.ORDER,
    lesson_sinusoids.SINUSOIDS,
    lesson_sinusoids.WAVELENGTHS,
    lesson_sinusoids.SEVERAL,
    lesson_sinusoids.RELATIVE,
    lesson_attention.ROPE,
    lesson_attention.SENTENCE_STEP,
    lesson_attention.LAYERS,
    lesson_families.EXTRAPOLATION,
)

#: The last stop after the steps: what the lecture showed, and questions to check it.
RECAP = len(STEPS) + 1


def _step_label(number: int) -> str:
    return "Recap" if number == RECAP else str(number)


def _step_number(text: str) -> int:
    """A link's step: a number, or the recap's label (what the address bar shows for it)."""
    return RECAP if text.strip().lower() == _step_label(RECAP).lower() else int(text)


STEP = params.Choice(
    "step",
    "Step",
    1,
    options=tuple(range(1, RECAP + 1)),
    format_func=_step_label,
    kind="segmented",
    convert=_step_number,
    help="The steps of a first lecture, in order.",
)
PARAMS = (STEP, *(param for step in STEPS for param in step.inputs))


def link_of(step: Step, values: tuple | None = None) -> str:
    """The relative link that opens the step's view with its parameters (and its inputs'
    ``values``, by default theirs), written as the app writes its address bar: values at
    their defaults left out."""
    config = step.config
    view = registry.BY_SLUG[step.view]
    declared = {p.key: p for p in (*sidebar.PARAMS, *view.params)}
    link = link_values(step, values)
    shared = view.shared(lambda param: link.get(param.key, param.default))
    values = {"L": config.n_positions, "d": config.d_model, "base": config.base}
    values |= {"conv": config.convention}
    values = {key: value for key, value in values.items() if key in shared} | link
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
    several = lesson_sinusoids.SEVERAL.config
    closest = lesson_sinusoids.closest(several, 2)
    order = attention.reversal_changes().changes
    rnn, _, plain = attention.LAYERS
    stack = attention.residual_stack()
    beyond = lesson_families.BEYOND
    rows = lesson_families.training_length(beyond)
    return (
        (
            "Why does self-attention need position codes, when a recurrent network does not?",
            "An RNN reads the words in order: reversing the sentence changed a word's output "
            f"by up to {order[rnn]:.0%}. Self-attention compares all the words at once, as a "
            f"set: {order[plain]:.0%}"
            + (", each word's output the same." if order[plain] < 1e-9 else ".")
            + " With PE(k) added to the "
            f"word at position k: {order[attention.WITH_POSITIONS]:.0%}.",
        ),
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
        (
            f"The encoding is added below the first layer. How does it reach layer "
            f"{stack.layers[-1]}?",
            "Through the residual connections: each layer adds its output to its input, "
            "x + f(x), so what the first layer got, the word plus PE(k), is carried up. In "
            "the lesson's random stack the copies of one word still differed by "
            f"{stack.with_residual[-1]:.0%} after layer "
            f"{stack.layers[-1]}; without the residual connections "
            + (
                "they were one vector."
                if stack.without_residual[-1] < 1e-12
                else f"{stack.without_residual[-1]:.1%}."
            ),
        ),
        (
            f"Trained on {rows:,} positions, which of the sinusoid, a learned table, RoPE and "
            "ALiBi has no value at all past that length?",
            f"A learned table: it holds {rows:,} rows, one per position, and nothing past "
            "them. The sinusoid and RoPE are computed at any position (their slow pairs "
            "reach angles not seen in training); ALiBi's −m·d goes on as the same line.",
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
        given = "".join(
            f"<p><b>{html.escape(param.label)}:</b> {html.escape(str(value))}</p>"
            for param, value in zip(step.inputs, step.defaults(), strict=True)
        )
        parts += [
            f"<h2>{number}. {html.escape(step.title)}</h2>",
            paragraphs(step.text),
            given,
            f"<p><b>Predict:</b> {html.escape(step.question)}</p><ul>",
            *(
                f"<li{' class=answer' if option == right else ''}>{html.escape(option)}</li>"
                for option in options
            ),
            "</ul>",
            paragraphs(explanation_of(step)),
            chart_of(step).to_html(full_html=False, include_plotlyjs=number == 1),
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
    values = tuple(param.widget(config) for param in step.inputs)
    try:
        options = options_of(step, config, values)
        right = options[answer_of(step, config, values)]
    except pe_core.InputError as error:  # a step's own input that it cannot use
        st.warning(f"{error}.")
        return
    chosen = st.radio(
        f"**Predict:** {step.question}",
        options,
        index=None,
        key=f"lesson_answer_{number}",
    )
    if chosen is None:
        st.info("Predict first: choose an answer to see the chart and why.")
    else:
        if chosen == right:
            st.success(f"Right: {right}.")
        else:
            st.info(f"Not quite: the answer is “{right}”.")
        st.markdown(explanation_of(step, values))
        ui.chart(caching.figure(_chart, number, values), f"lesson_step_{number}")
    st.link_button(
        f"Open {_view_label(step.view)} with these parameters",
        link_of(step, values),
        icon=":material/open_in_new:",
    )


def _chart(number: int, values: tuple):
    return chart_of(STEPS[number - 1], values)


def _view_label(slug: str) -> str:
    return registry.BY_SLUG[slug].label


# --- Misconceptions ------------------------------------------------------------------------


def _tensor2tensor_longest(d_model: int, base: float) -> float:
    return float(pe_core.wavelengths(d_model, base=base, convention="tensor2tensor")[-1])


def _misconceptions() -> None:
    st.subheader("Misconceptions")
    d, base = PAPER.d_model, PAPER.base
    paper_longest = lesson_sinusoids.longest(PAPER)
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
