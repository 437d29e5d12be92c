"""What a step of the Lesson is: a question to predict, its answers, the explanation, the chart,
the formula, a takeaway for the recap and notes for the lecturer, each computed at the step's
parameters (and at the values of its own inputs, for a step that has some), and the view it
opens."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dashboard.config import Config

#: The paper's encoding, and a small one whose every column a chart can draw.
PAPER = Config(2048, 512, 10_000.0, "vaswani")
SMALL = Config(100, 20, 10_000.0, "vaswani")

#: A text of the step: fixed prose, or a function of the config (and the inputs' values).
Text = str | Callable[..., str]


@dataclass(frozen=True)
class Step:
    """One step of the lesson.

    ``slug`` names the step where a number would change when steps move (its answer's key).
    ``config`` is the step's sidebar; ``link`` the parameters of the view it opens (the
    sidebar's and the view's own, as a link writes them), ``view`` None for a step no view
    repeats. What depends on numbers is a function of the config, computed by pe_core: the
    explanation always, the text, the options and the index of the right one when they carry
    numbers. A step with ``inputs`` (widgets of its own, such as a sentence to type) passes
    their values after the config to each of those functions, and to ``link`` when it is one.
    ``chart`` returns one figure, or a tuple of figures drawn side by side on a wide screen
    and one under the other on a phone. ``formula`` is LaTeX (typeset by KaTeX on the page and
    as MathML in the handouts). ``takeaway`` is what the recap says the step showed;
    ``notes`` what the lecturer reads and the class does not see.
    """

    slug: str
    title: str
    text: Text
    question: str
    options: tuple[str, ...] | Callable[..., tuple[str, ...]]
    answer: int | Callable[..., int]
    explanation: Callable[..., str]
    chart: Callable[..., object]
    formula: Text
    takeaway: Callable[..., str]
    notes: Text
    view: str | None
    config: Config
    link: Mapping[str, object] | Callable[..., Mapping[str, object]] = ()
    inputs: tuple[Any, ...] = ()

    def defaults(self) -> tuple:
        """The values of the step's inputs when nobody has changed them (the handouts')."""
        return tuple(param.default for param in self.inputs)


def _at(step: Step, function, values: tuple | None, config: Config | None = None):
    values = step.defaults() if values is None else tuple(values)
    return function(config or step.config, *values)


def _text(step: Step, text: Text, values: tuple | None) -> str:
    return _at(step, text, values) if callable(text) else text


def options_of(step: Step, config: Config | None = None, values: tuple | None = None):
    """The step's answers, with their numbers at ``config`` (by default the step's) and its
    inputs' ``values`` (by default theirs)."""
    return _at(step, step.options, values, config) if callable(step.options) else step.options


def answer_of(step: Step, config: Config | None = None, values: tuple | None = None) -> int:
    """Index of the right answer."""
    return _at(step, step.answer, values, config) if callable(step.answer) else step.answer


def right_answer(step: Step, values: tuple | None = None) -> str:
    """The text of the right answer at the step's parameters."""
    return options_of(step, None, values)[answer_of(step, None, values)]


def text_of(step: Step, values: tuple | None = None) -> str:
    """What the step says before its question."""
    return _text(step, step.text, values)


def formula_of(step: Step, values: tuple | None = None) -> str:
    """The step's formula, as LaTeX."""
    return _text(step, step.formula, values)


def notes_of(step: Step, values: tuple | None = None) -> str:
    """The lecturer's notes of the step."""
    return _text(step, step.notes, values)


def takeaway_of(step: Step, values: tuple | None = None) -> str:
    """What the step showed, for the recap."""
    return _at(step, step.takeaway, values)


def explanation_of(step: Step, values: tuple | None = None) -> str:
    """The explanation, computed."""
    return _at(step, step.explanation, values)


def chart_of(step: Step, values: tuple | None = None):
    """The chart: one figure or a tuple of them."""
    return _at(step, step.chart, values)


def figures_of(step: Step, values: tuple | None = None) -> tuple:
    """The step's figures, always as a tuple."""
    chart = chart_of(step, values)
    return chart if isinstance(chart, tuple) else (chart,)


def link_values(step: Step, values: tuple | None = None) -> dict[str, object]:
    """The parameters of the view the step opens, beyond the sidebar's."""
    if callable(step.link):
        values = step.defaults() if values is None else tuple(values)
        return dict(step.link(*values))
    return dict(step.link)
