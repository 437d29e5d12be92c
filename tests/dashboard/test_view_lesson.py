"""The lesson: every step asks before it shows, its answer is true at its parameters, and its
link opens its view with those parameters (checked by opening the link as a new session)."""

from __future__ import annotations

import html
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

import pe_core
from dashboard import registry
from dashboard.views import lesson
from tests.apptest_helpers import decode, new_app, no_errors, page_of

STEPS = range(1, len(lesson.STEPS) + 1)


def _answer(at, number: int, option: str):
    at.radio(key=f"lesson_answer_{number}").set_value(option).run()
    no_errors(at)
    return at


@pytest.mark.parametrize("number", STEPS)
def test_each_step_asks_first_then_shows_the_chart(number):
    at = new_app(view="lesson", step=number)
    at.run()
    no_errors(at)
    step = lesson.STEPS[number - 1]
    assert at.subheader[0].value == f"{number}. {step.title}"
    assert not at.get("plotly_chart"), "the chart is shown before the prediction"
    assert at.info[0].value.startswith("Predict first: choose an answer")
    options = lesson.options_of(step, step.config)
    right = options[lesson.answer_of(step, step.config)]
    wrong = next(o for o in options if o != right)
    _answer(at, number, wrong)
    assert at.info[0].value.startswith("Not quite") and right in at.info[0].value
    assert len(at.get("plotly_chart")) == 1
    _answer(at, number, right)
    assert at.success[0].value == f"Right: {right}."
    assert len(at.get("plotly_chart")) == 1


@pytest.mark.parametrize("number", STEPS)
def test_each_link_opens_its_view_with_its_parameters(number):
    step = lesson.STEPS[number - 1]
    link = urlsplit(lesson.link_of(step))
    query = {
        key: values if len(values) > 1 else values[0]
        for key, values in parse_qs(link.query).items()
    }
    at = new_app(query, view=link.path)
    at.run()
    no_errors(at)
    assert page_of(at) == step.view
    assert at.session_state["_link_warnings"] == []  # every parameter was accepted
    config = step.config
    shared = {"L": config.n_positions, "d": config.d_model, "base": config.base}
    shared["conv"] = config.convention
    read = registry.BY_SLUG[step.view].shared(lambda param: at.session_state[param.key])
    assert read, "each step's view draws the step's encoding from the sidebar's parameters"
    for key in read:  # the sidebar's parameters that view reads (the RoPE lab: not conv)
        assert at.session_state[key] == shared[key], key
    for key, value in step.link.items():
        shown = at.session_state[key]
        assert shown == value or [str(v) for v in np.atleast_1d(shown)] == [
            str(v) for v in np.atleast_1d(value)
        ], key


class TestTheAnswersAreTrue:
    """The questions with numbers, checked against facts stated independently of the lesson."""

    def test_the_longest_wavelength_is_below_two_pi_base(self):
        step = lesson.STEPS[2]
        config = step.config
        longest = 2 * np.pi * config.base ** ((config.d_model - 2) / config.d_model)
        right = lesson.options_of(step, config)[lesson.answer_of(step, config)]
        assert right == f"About {longest:,.0f} positions"
        assert longest < 2 * np.pi * config.base

    def test_one_pair_brings_far_positions_close_and_more_pairs_separate_them(self):
        # Step 4, checked by brute force: every pair of positions 0..1,999 compared.
        step = lesson.STEPS[3]
        n = step.config.n_positions

        def distances(d_model):
            table = pe_core.sinusoidal_encoding(n, d_model)
            gram = table @ table.T
            squared = np.diag(gram)[:, None] + np.diag(gram)[None, :] - 2 * gram
            np.fill_diagonal(squared, np.inf)
            return np.sqrt(np.maximum(squared, 0.0))

        text = step.explanation(step.config)
        for d_model in (2, 16):
            matrix = distances(d_model)
            # The pair the page names is a closest one (many share its offset, to rounding).
            a, b = lesson._closest(step.config, d_model).closest_pair
            assert matrix[a, b] == pytest.approx(matrix.min(), abs=1e-9)
            assert f"positions {a:,} and {b:,} come closest, at distance {matrix.min():.2g}" in text
            if d_model == 2:
                assert b - a > 100 and matrix.min() < 1e-3  # far apart, almost the same
            else:
                assert b - a == 1  # with 8 pairs the closest positions are neighbours
        right = lesson.options_of(step, step.config)[lesson.answer_of(step, step.config)]
        assert right.startswith("Yes")

    def test_the_first_columns_turn_fastest(self):
        freqs = pe_core.frequencies(20, base=10_000.0)
        assert np.all(np.diff(freqs) < 0)
        assert lesson.STEPS[1].options[lesson.STEPS[1].answer] == "The first columns"

    def test_the_dot_product_depends_on_the_offset_only(self):
        table = pe_core.sinusoidal_encoding(400, 64)
        dots = [table[k] @ table[k + 7] for k in (0, 50, 300)]
        np.testing.assert_allclose(dots, dots[0], rtol=0, atol=1e-12)

    def test_tensor2tensor_reaches_two_pi_base(self):
        longest = pe_core.wavelengths(512, base=10_000.0, convention="tensor2tensor")[-1]
        assert longest == pytest.approx(2 * np.pi * 10_000.0, rel=1e-12)


def test_next_alone_walks_from_the_first_step_to_the_recap():
    """Issue 38: a student goes through the lecture with Next alone, to the recap; the progress
    and the URL follow."""
    at = new_app(view="lesson")
    at.run()
    for number in range(1, len(lesson.STEPS) + 1):
        no_errors(at)
        assert at.subheader[0].value.startswith(f"{number}. ")
        progress = at.get("progress")[0]
        assert progress.proto.text == f"Step {number} of {len(lesson.STEPS)}"
        at.button(key="lesson_next").click().run()
    no_errors(at)
    assert at.subheader[0].value == "Recap"
    assert at.session_state["step"] == lesson.RECAP
    assert not [b for b in at.button if b.key == "lesson_next"]
    # The check questions' answers, computed (step 4's closest pair at d_model 2 above).
    answers = " ".join(m.value for e in at.expander for m in e.markdown)
    assert "Positions 0 and 710, at distance 6e-05" in answers
    assert "slowest every 60,611" in answers
    at.button(key="lesson_previous").click().run()
    assert at.subheader[0].value.startswith(f"{len(lesson.STEPS)}. ")


class TestEachChartAnswersItsQuestion:
    """Issue 38: the chart of a step shows what its question asks."""

    def _figure(self, number):
        step = lesson.STEPS[number - 1]
        return step.chart(step.config).to_plotly_json()

    def test_step_1_runs_attention_on_the_sentence_and_its_shuffle(self):
        from dashboard.view_parts import attention

        found = attention.shuffle_outputs()
        panels = list(found.panels.values())
        # Without positions: each word's output unchanged by the shuffle (to rounding);
        # with them: changed.
        np.testing.assert_allclose(panels[1], panels[0], rtol=0, atol=1e-12)
        assert np.max(np.abs(panels[3] - panels[2])) > 0.1
        traces = self._figure(1)["data"]
        assert [t["type"] for t in traces] == ["heatmap"] * 4
        np.testing.assert_array_equal(decode(traces[1]["z"]), panels[1].astype(np.float32))
        text = lesson.STEPS[0].explanation(lesson.STEPS[0].config)
        assert f"by {found.change_without:.1e}" in text and f"{found.change_with:.2f}" in text

    def test_step_2_draws_the_first_and_the_last_pair(self):
        config = lesson.STEPS[1].config
        names = " ".join(t.get("name") or "" for t in self._figure(2)["data"])
        last = config.d_model - 2
        for column in (0, 1, last, last + 1):
            assert f"{column}" in names
        # and the first pair is the fastest: its wavelength is the shortest
        lengths = pe_core.wavelengths(config.d_model, base=config.base)
        assert lengths[0] == lengths.min()

    def test_step_3_draws_the_paper_s_convention_only(self):
        # No legend of conventions the student has not met: of the five, only vaswani's curve.
        names = [t.get("name") or "" for t in self._figure(3)["data"]]
        drawn = {c for c in pe_core.CONVENTIONS for name in names if name.startswith(c)}
        assert drawn == {"vaswani"}

    def test_step_6_shows_the_score_depends_on_the_offset_alone(self):
        step = lesson.STEPS[5]
        traces = self._figure(6)["data"]
        assert len(traces) == 3  # the key at three positions
        curves = [decode(t["y"]) for t in traces]
        # One curve: RoPE's score is a function of the offset alone (to rounding, 1e-9 of
        # scores of size ~10).
        for other in curves[1:]:
            np.testing.assert_allclose(other, curves[0], rtol=0, atol=1e-9)
        # and not a constant: the score does change with the offset
        assert np.ptp(curves[0]) > 1.0
        assert "differ by" in step.explanation(step.config)

    def test_step_5_opens_the_relative_position_view(self):
        assert lesson.STEPS[4].view == "rotation"
        assert lesson.link_of(lesson.STEPS[4]).startswith("rotation")


def test_the_printout_holds_every_step_its_answer_chart_and_the_recap():
    """Issue 38: a teacher's handout, the whole lesson as one HTML page."""
    page = lesson.printout()
    for number, step in enumerate(lesson.STEPS, start=1):
        assert f"<h2>{number}. " in page
        right = lesson.options_of(step, step.config)[lesson.answer_of(step, step.config)]
        assert f"<li class=answer>{html.escape(right)}</li>" in page
    assert page.count('class="plotly-graph-div"') == len(lesson.STEPS)
    assert page.count("plotly.js v") == 1  # the library inlined once (it works offline)
    for question, answer in lesson.check_questions():
        assert html.escape(question) in page and html.escape(answer) in page
