"""A first lecture: an ordered walk through the views, each step a question to predict before
the chart is revealed, then a recap with what the lecture showed, the misconceptions people
write about and questions to check it; a worksheet and an answer key to print.

This page is a package: its steps live in ``sinusoids.py``, ``attention.py`` and
``families.py`` by topic (the encoding itself, inside attention, the families), their order in
``plan.py``, the recap's words in ``text.py`` and the handouts in ``handouts.py``. Their charts
are the other views' own figure builders at the step's parameters, or plain charts of numbers
computed by pe_core and by small seeded NumPy layers (``small_models.py``), and every number in
the text is computed at those parameters, so a step says what its chart shows.

In presentation mode a step is one screen at 1920 × 1080 (its question beside its chart), the
arrow keys and a clicker's PageUp and PageDown move between steps, and a second window with
the lecturer's notes (``lesson_notes=true``) follows the projected one.
"""

from __future__ import annotations

import functools
from urllib.parse import urlencode

import streamlit as st

import pe_core
from dashboard import caching, params, registry, sidebar, state, static, ui
from dashboard.config import Config
from dashboard.views.lesson import handouts, plan
from dashboard.views.lesson.plan import RECAP, STEPS
from dashboard.views.lesson.step import (
    Step,
    answer_of,
    explanation_of,
    figures_of,
    formula_of,
    link_values,
    notes_of,
    options_of,
    takeaway_of,
    text_of,
)
from dashboard.views.lesson.text import MISCONCEPTIONS, NOTATION, check_questions


def _step_label(number: int) -> str:
    return "Recap" if number == RECAP else str(number)


def _step_number(text: str) -> int:
    """A link's step: a number, or the recap's label (what the address bar shows for it)."""
    return RECAP if text.strip().lower() == _step_label(RECAP).lower() else int(text)


STEP = params.Choice(
    "lesson_step",
    "Step",
    1,
    options=tuple(range(1, RECAP + 1)),
    format_func=_step_label,
    kind="segmented",
    convert=_step_number,
    help="The steps of a first lecture, in order. The arrow keys move between them.",
)
NOTES = params.Toggle(
    "lesson_notes",
    "Lecturer notes",
    False,
    help="The notes for each step, for the lecturer's own screen: open this page in a second "
    "window with the notes on, and it follows the projected window (in the same browser), "
    "whichever of the two you move.",
)


def _step_before_52(raw: str) -> str:
    """A step as links numbered it before the lecture's order changed (``step=3``: what is now
    step 4), in the new numbering; other text as it is."""
    try:
        old = _step_number(raw)
    except ValueError:
        return raw
    if 1 <= old <= len(plan.STEPS_BEFORE_52) + 1:
        return _step_label(plan.number_before_52(old))
    return raw


#: Links written before the steps took their teaching order said ``step=N`` in the old order.
RENAMED = (params.Renamed("step", STEP, _step_before_52),)
PARAMS = (STEP, NOTES, *(param for step in STEPS for param in step.inputs))


def answer_key(step: Step) -> str:
    """The session key of the step's prediction (by its name, not its number)."""
    return f"lesson_answer_{step.slug}"


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
    return f"A first lecture in {len(STEPS)} steps and a recap; now {where}{end}"


#: The keyboard, and the link between the projected window and the lecturer's.
_KEYS = st.components.v2.component("pe_lesson_keys", js=static.text("lesson_keys.js"))
#: The Lesson's page style (lesson.css), and in presentation mode a compact one, so that a step
#: is one screen (lesson_present.css).
STYLE = f"<style>\n{static.text('lesson.css')}</style>"
PRESENT_STYLE = f"<style>\n{static.text('lesson_present.css')}</style>"


def render(config: Config) -> None:
    presenting = sidebar.presenting()
    notes = bool(NOTES.value(config))
    _keep_answers()
    st.html(STYLE + (PRESENT_STYLE if presenting else ""))
    left, right = st.columns(2)
    with left:
        ui.explain(
            "A walk through the views for a first lecture. Each step asks a question: predict "
            "the answer, then the chart and the explanation appear. The arrow keys move "
            "between the steps (and a clicker's PageUp and PageDown in presentation mode). "
            "Each step uses its own parameters, not the sidebar's; its button opens the full "
            "view with them in a new tab. The recap sums up, with the misconceptions people "
            "write about. The worksheet and the answer key at the bottom print on paper.",
            expanded=False,
        )
    with right, st.expander("Notation: the letters used here and on every page"):
        st.markdown(NOTATION)
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        number = STEP.widget(config, label_visibility="collapsed" if presenting else "visible")
        st.button(
            "Start again",
            key="lesson_reset",
            on_click=_reset,
            icon=":material/restart_alt:",
            type="tertiary",
            help="Forget every prediction and the sentence typed, and go back to step 1.",
        )
        NOTES.widget(config)
    _keys(number, presenting, notes)
    if not presenting:
        label = "Recap" if number == RECAP else f"Step {number} of {len(STEPS)}"
        st.container(key="lesson_progress").progress(
            min(number, len(STEPS)) / len(STEPS), text=label
        )
    if notes:
        _notes(number)
    if number == RECAP:
        _recap()
    else:
        _step(number, STEPS[number - 1], presenting)
    _previous_next(number)
    _handouts()


_KEYS_KEY = state.LESSON_KEYS


def _keys(number: int, presenting: bool, notes: bool) -> None:
    """The keyboard and the other window's component, told the step on screen; a key press
    (or the other window moving) asks for another step."""
    _KEYS(
        key=_KEYS_KEY,
        data={"step": number, "last": RECAP, "present": presenting, "sync": presenting or notes},
        on_go_change=_go_from_keys,
        height=0,
    )


def _go_from_keys() -> None:
    """Callback of the keyboard: the step it asks for (before the step control is drawn)."""
    wanted = (st.session_state.get(_KEYS_KEY) or {}).get("go")
    if isinstance(wanted, int) and 1 <= wanted <= RECAP:
        st.session_state[STEP.key] = wanted


def _keep_answers() -> None:
    """The predictions of the steps not on screen, kept for when the lecture comes back to
    them (Streamlit forgets the value of a widget that a run does not draw)."""
    for step in STEPS:
        key = answer_key(step)
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def _reset() -> None:
    """Callback of Start again: no prediction made, the sentence as it was, step 1."""
    for step in STEPS:
        st.session_state.pop(answer_key(step), None)
        for param in step.inputs:
            st.session_state[param.key] = param.default
    st.session_state[STEP.key] = 1


def _clear_answer(step: Step) -> None:
    """A new value of a step's input asks for a new prediction."""
    st.session_state.pop(answer_key(step), None)


def _notes(number: int) -> None:
    """The lecturer's notes of the step on screen: what to say, the answer, what comes next."""
    with st.container(border=True):
        if number == RECAP:
            st.markdown(
                "**Lecturer notes: recap.** Read the takeaways aloud, then let the class "
                "answer the check questions in pairs before opening them. Hand out the answer "
                "key at the end, the worksheet at the start."
            )
            return
        step = STEPS[number - 1]
        following = STEPS[number].title if number < len(STEPS) else "the recap"
        options = options_of(step)
        st.markdown(
            f"**Lecturer notes: step {number}, {step.title}** (next: {following})\n\n"
            f"{notes_of(step)}\n\n**Answer:** {options[answer_of(step)]}\n\n"
            f"**Takeaway:** {takeaway_of(step)}"
        )


def _recap() -> None:
    """What the steps showed, the misconceptions, and questions to check it (each answer
    computed, shown on demand)."""
    st.subheader("Recap")
    st.markdown("**What the lecture showed**")
    st.markdown(
        "\n".join(f"{i}. **{step.title}** {takeaway_of(step)}" for i, step in enumerate(STEPS, 1))
    )
    st.markdown("**Misconceptions**")
    for row in range(0, len(MISCONCEPTIONS), 2):
        pair = MISCONCEPTIONS[row : row + 2]
        for column, card in zip(st.columns(2), pair, strict=False):
            with column.container(border=True):
                st.markdown(f"**{card.title}**")
                st.markdown(card.text())
    st.markdown("**Check yourself**")
    for number, (question, answer) in enumerate(check_questions(), 1):
        with st.expander(f"{number}. {question}"):
            st.markdown(answer)


def _handouts() -> None:
    """The worksheet (questions with room to predict, no answers) and the answer key."""
    left, right = st.columns(2)
    left.download_button(
        "Worksheet for the class (HTML, prints on A4 or Letter)",
        data=handouts.worksheet,
        file_name="positional-encodings-worksheet.html",
        mime="text/html",
        key="lesson_worksheet",
        on_click="ignore",
        type="tertiary",
        icon=":material/print:",
    )
    right.download_button(
        "Answer key with notes and a formula sheet (HTML, prints)",
        data=handouts.answer_key,
        file_name="positional-encodings-answer-key.html",
        mime="text/html",
        key="lesson_handout_answers",
        on_click="ignore",
        type="tertiary",
        icon=":material/print:",
    )


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


def _step(number: int, step: Step, presenting: bool) -> None:
    config = step.config
    # In presentation mode the question beside the chart: one screen at 1920 × 1080.
    ask, show = st.columns([5, 7], gap="large") if presenting else (st.container(),) * 2
    with ask:
        st.subheader(f"{number}. {step.title}")
        text = st.empty()  # above the step's own inputs, written once they are read
        values = tuple(
            param.widget(config, on_change=_clear_answer, args=(step,)) for param in step.inputs
        )
        text.markdown(text_of(step, values))
        st.latex(formula_of(step, values))
        try:
            options = options_of(step, config, values)
            right = options[answer_of(step, config, values)]
        except pe_core.InputError as error:  # a step's own input that it cannot use
            st.warning(f"{error}.")
            return
        chosen = st.radio(
            f"**Predict:** {step.question}", options, index=None, key=answer_key(step)
        )
        if chosen is None:
            st.info("Predict first: choose an answer to see the chart and why.")
        elif chosen == right:
            st.success(f"Right: {right}.")
        else:
            st.info(f"Not quite: the answer is “{right}”.")
    if chosen is None:
        return
    with show:
        count = _figure_count(number)  # the same for any value of a step's inputs
        columns = st.columns(count) if count > 1 else (st.container(),)
        for j, column in enumerate(columns):
            with column:
                figure = caching.figure(_chart, number, values, j)
                ui.chart(figure, f"lesson_step_{number}" + (f"_{j}" if j else ""))
    st.markdown(explanation_of(step, values))
    if step.view is not None:
        st.link_button(
            f"Open {_view_label(step.view)} with these parameters",
            link_of(step, values),
            icon=":material/open_in_new:",
        )


def _chart(number: int, values: tuple, j: int):
    """The step's ``j``-th figure (each cached on its own)."""
    return figures_of(STEPS[number - 1], values)[j]


@functools.cache
def _figure_count(number: int) -> int:
    return len(figures_of(STEPS[number - 1]))


def _view_label(slug: str) -> str:
    return registry.BY_SLUG[slug].label
