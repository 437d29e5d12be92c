"""What a step of the Lesson is: a question to predict, its answers, the explanation and the
chart, each computed at the step's parameters (and at the values of its own inputs, for a step
that has some), and the view it opens."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dashboard.config import Config

#: The paper's encoding, and a small one whose every column a chart can draw.
PAPER = Config(2048, 512, 10_000.0, "vaswani")
SMALL = Config(100, 20, 10_000.0, "vaswani")


@dataclass(frozen=True)
class Step:
    """One step of the lesson.

    ``config`` is the step's sidebar; ``link`` the parameters of the view it opens (the
    sidebar's and the view's own, as a link writes them). What depends on numbers is a
    function of the config, computed by pe_core: the explanation always, the options and the
    index of the right one when they carry numbers. A step with ``inputs`` (widgets of its own,
    such as a sentence to type) passes their values after the config to each of those
    functions, and to ``link`` when it is one.
    """

    title: str
    text: str
    question: str
    options: tuple[str, ...] | Callable[..., tuple[str, ...]]
    answer: int | Callable[..., int]
    explanation: Callable[..., str]
    chart: Callable[..., object]
    view: str
    config: Config
    link: Mapping[str, object] | Callable[..., Mapping[str, object]]
    inputs: tuple[Any, ...] = ()

    def defaults(self) -> tuple:
        """The values of the step's inputs when nobody has changed them (the printout's)."""
        return tuple(param.default for param in self.inputs)


def _at(step: Step, function, values: tuple | None, config: Config | None = None):
    values = step.defaults() if values is None else tuple(values)
    return function(config or step.config, *values)


def options_of(step: Step, config: Config | None = None, values: tuple | None = None):
    """The step's answers, with their numbers at ``config`` (by default the step's) and its
    inputs' ``values`` (by default theirs)."""
    return _at(step, step.options, values, config) if callable(step.options) else step.options


def answer_of(step: Step, config: Config | None = None, values: tuple | None = None) -> int:
    """Index of the right answer."""
    return _at(step, step.answer, values, config) if callable(step.answer) else step.answer


def explanation_of(step: Step, values: tuple | None = None) -> str:
    """The explanation, computed."""
    return _at(step, step.explanation, values)


def chart_of(step: Step, values: tuple | None = None):
    """The chart."""
    return _at(step, step.chart, values)


def link_values(step: Step, values: tuple | None = None) -> dict[str, object]:
    """The parameters of the view the step opens, beyond the sidebar's."""
    if callable(step.link):
        values = step.defaults() if values is None else tuple(values)
        return dict(step.link(*values))
    return dict(step.link)
