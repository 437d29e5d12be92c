"""The lesson: every step asks before it shows, its answer is true at its parameters (checked
against numbers computed here independently), its chart shows what it asks, its link opens its
view with those parameters, old links open the step they named, and the two handouts say what
they should (the worksheet no answer)."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

import pe_core
from dashboard import registry
from dashboard.latex_mathml import to_mathml
from dashboard.views import lesson
from dashboard.views.lesson import families, handouts, plan, sinusoids, small_models
from dashboard.views.lesson import text as lesson_text
from dashboard.views.lesson.step import (
    chart_of,
    explanation_of,
    figures_of,
    formula_of,
    link_values,
    notes_of,
    right_answer,
    takeaway_of,
    text_of,
)
from tests.apptest_helpers import decode, new_app, no_errors, page_of

STEPS = range(1, len(lesson.STEPS) + 1)
BY_SLUG = plan.BY_SLUG


def _number(slug: str) -> int:
    return plan.number_of(slug)


def _answer(at, step, option: str):
    at.radio(key=lesson.answer_key(step)).set_value(option).run()
    no_errors(at)
    return at


@pytest.mark.parametrize("number", STEPS)
def test_each_step_asks_first_then_shows_the_chart(number):
    at = new_app(view="lesson", lesson_step=number)
    at.run()
    no_errors(at)
    step = lesson.STEPS[number - 1]
    assert at.subheader[0].value == f"{number}. {step.title}"
    assert not at.get("plotly_chart"), "the chart is shown before the prediction"
    assert at.info[0].value.startswith("Predict first: choose an answer")
    # Every step has its formula typeset.
    assert [e.value.strip("$\n") for e in at.latex] == [formula_of(step)]
    options = lesson.options_of(step, step.config)
    right = options[lesson.answer_of(step, step.config)]
    wrong = next(o for o in options if o != right)
    _answer(at, step, wrong)
    assert at.info[0].value.startswith("Not quite") and right in at.info[0].value
    assert len(at.get("plotly_chart")) == len(figures_of(step))
    _answer(at, step, right)
    assert at.success[0].value == f"Right: {right}."
    assert len(at.get("plotly_chart")) == len(figures_of(step))


@pytest.mark.parametrize("number", [n for n in STEPS if lesson.STEPS[n - 1].view])
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
    for key, value in link_values(step).items():
        shown = at.session_state[key]
        assert shown == value or [str(v) for v in np.atleast_1d(shown)] == [
            str(v) for v in np.atleast_1d(value)
        ], key


def test_the_first_step_has_no_button_to_a_view_that_does_not_repeat_it():
    """Issue 52: step 1's "Open Sinusoids" led elsewhere; no page repeats its experiment."""
    at = new_app(view="lesson")
    at.run()
    step = lesson.STEPS[0]
    _answer(at, step, right_answer(step))
    assert step.view is None and not at.get("link_button")


class TestTheOrderIsATeachingOrder:
    """Issue 52: motivation before mechanism, and old links open the step they named."""

    def test_why_several_frequencies_before_wavelengths_and_attention_before_rope(self):
        assert _number("several") < _number("wavelengths")
        assert _number("inside-attention") < _number("rope")
        assert _number("upper-layers") < _number("rope")
        assert len(lesson.STEPS) + 1 == plan.RECAP

    #: The titles old links named, by their number then (the order before issue 52).
    OLD: ClassVar[dict[int, str]] = {
        1: "why-positions",
        2: "sinusoids",
        3: "wavelengths",
        4: "several",
        5: "relative",
        6: "rope",
        7: "inside-attention",
        8: "upper-layers",
        9: "beyond",
    }

    @pytest.mark.parametrize("old", [*OLD, "Recap"])
    def test_an_old_link_opens_the_step_it_named(self, old):
        at = new_app(view="lesson", step=old)
        at.run()
        no_errors(at)
        assert at.session_state["_link_warnings"] == []
        if old == "Recap":
            assert at.subheader[0].value == "Recap"
            assert at.query_params["lesson_step"] == "Recap"
            return
        new = _number(self.OLD[old])
        assert at.subheader[0].value == f"{new}. {BY_SLUG[self.OLD[old]].title}"
        assert "step" not in at.query_params
        assert at.query_params.get("lesson_step", "1") == str(new)

    def test_an_old_link_with_a_number_out_of_range_gets_a_warning(self):
        at = new_app(view="lesson", step=42)
        at.run()
        no_errors(at)
        assert at.subheader[0].value.startswith("1. ")
        assert any("42" in w for w in at.session_state["_link_warnings"])


class TestTheAnswersAreTrue:
    """The questions with numbers, checked against facts computed here independently."""

    def test_wavelengths_161_of_256_pairs_turn_within_the_paper_s_length(self):
        step = BY_SLUG["wavelengths"]
        config = step.config
        i = np.arange(config.d_model // 2)
        wavelength = 2 * np.pi * config.base ** (2 * i / config.d_model)  # the paper's formula
        within = int(np.sum(wavelength <= config.n_positions - 1))
        assert within == 161  # the figure, at d_model 512, base 10,000, L = 2,048
        even = np.linspace(wavelength[0], wavelength[-1], i.size)
        assert right_answer(step) == f"{within} of 256"
        assert f"{int(np.sum(even <= config.n_positions - 1))} of 256" in lesson.options_of(step)
        assert "All 256" in lesson.options_of(step)

    def test_one_pair_brings_far_positions_close_and_more_pairs_separate_them(self):
        # Every pair of positions 0..1,999 compared, by brute force.
        step = BY_SLUG["several"]
        n = step.config.n_positions

        def distances(d_model):
            table = pe_core.sinusoidal_encoding(n, d_model)
            gram = table @ table.T
            squared = np.diag(gram)[:, None] + np.diag(gram)[None, :] - 2 * gram
            np.fill_diagonal(squared, np.inf)
            return np.sqrt(np.maximum(squared, 0.0))

        one = distances(2)
        a, b = np.unravel_index(np.argmin(one), one.shape)
        assert abs(int(b) - int(a)) == 710 and one.min() < 1e-4
        assert right_answer(step) == "710 apart (such as 0 and 710)"
        text = explanation_of(step)
        assert f"at distance {one.min():.2g}" in text
        many = distances(sinusoids.SEVERAL_WIDTH)
        a, b = np.unravel_index(np.argmin(many), many.shape)
        assert abs(int(b) - int(a)) == 1  # with 8 pairs the closest positions are neighbours
        assert f"{abs(int(b) - int(a))} apart, at distance {many.min():.2g}" in text

    def test_the_first_columns_turn_fastest(self):
        freqs = pe_core.frequencies(20, base=10_000.0)
        assert np.all(np.diff(freqs) < 0)
        assert right_answer(BY_SLUG["sinusoids"]) == "The first columns"

    def test_the_dot_product_depends_on_the_offset_only(self):
        table = pe_core.sinusoidal_encoding(400, 64)
        dots = [table[k] @ table[k + 7] for k in (0, 50, 300)]
        np.testing.assert_allclose(dots, dots[0], rtol=0, atol=1e-12)
        assert right_answer(BY_SLUG["relative"]) == "No, only on the offset δ"

    def test_rope_scores_depend_on_the_offset_alone(self):
        """RoPE rotated here by a plain loop over the pairs (not pe_core)."""
        step = BY_SLUG["rope"]
        d, base = step.config.d_model, step.config.base
        omega = base ** (-np.arange(0, d, 2) / d)
        rng = np.random.default_rng(1)
        q, kappa = rng.standard_normal((2, d))

        def rotate(vector, k):  # the pairs (i, i + d/2), as Hugging Face's layout has them
            out = vector.copy()
            for j, w in enumerate(omega):
                a, b = vector[j], vector[j + d // 2]
                out[j] = a * np.cos(k * w) - b * np.sin(k * w)
                out[j + d // 2] = a * np.sin(k * w) + b * np.cos(k * w)
            return out

        scores = [rotate(q, key + 5) @ rotate(kappa, key) for key in (0, 1_000, 10_000)]
        np.testing.assert_allclose(scores, scores[0], rtol=1e-9)
        assert right_answer(step) == "No: it depends on the offset δ only"

    def test_past_the_training_length_slow_pairs_stand_at_unseen_angles(self):
        step = BY_SLUG["beyond"]
        config = step.config
        length = families.training_length(config)
        omega = pe_core.frequencies(config.d_model, base=config.base)
        seen = np.mod(np.arange(length)[:, None] * omega[None, :], 2 * np.pi)
        at = families.asked_position(config)
        angle = np.mod(at * omega, 2 * np.pi)
        # A pair's angle is new when it lies beyond every angle training showed (a pair that
        # went all the way round showed angles up to 2π, to one step of it).
        largest = seen.max(axis=0)
        went_round = (length - 1) * omega >= 2 * np.pi
        unseen = int(np.sum(~went_round & (angle > largest + 1e-12)))
        assert unseen > 0
        found = families.beyond_training(config)
        assert found.unseen[at] == unseen
        assert found.missing() == ("learned",)
        assert right_answer(step).startswith("The learned table has no row; the sinusoid")

    def test_tensor2tensor_reaches_two_pi_base(self):
        longest = pe_core.wavelengths(512, base=10_000.0, convention="tensor2tensor")[-1]
        assert longest == pytest.approx(2 * np.pi * 10_000.0, rel=1e-12)
        assert f"(λ = {longest:,.0f})" in lesson_text.MISCONCEPTIONS[2].text()


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
    assert at.session_state["lesson_step"] == lesson.RECAP
    assert not [b for b in at.button if b.key == "lesson_next"]
    # The check questions' answers, computed (the closest pair at d_model 2 above).
    answers = " ".join(m.value for e in at.expander for m in e.markdown)
    assert "Positions 0 and 710, at distance 6e-05" in answers
    assert "slowest every 60,611; 161 of 256 pairs" in answers
    at.button(key="lesson_previous").click().run()
    assert at.subheader[0].value.startswith(f"{len(lesson.STEPS)}. ")


class TestTheRecap:
    """Issue 52: the recap says what each step showed, holds the misconceptions (no longer
    under every step, where they gave answers away) and the check questions."""

    def test_takeaways_misconceptions_and_questions(self):
        at = new_app(view="lesson", lesson_step="Recap")
        at.run()
        no_errors(at)
        text = " ".join(m.value for m in at.markdown)
        for step in lesson.STEPS:
            assert takeaway_of(step) in text
        for card in lesson_text.MISCONCEPTIONS:
            assert card.title in text and card.text() in text
        questions = [e.label for e in at.expander if e.label[:1].isdigit()]
        assert len(questions) == len(lesson_text.check_questions())

    @pytest.mark.parametrize("number", STEPS)
    def test_no_misconception_under_a_step(self, number):
        at = new_app(view="lesson", lesson_step=number)
        at.run()
        text = " ".join(m.value for m in at.markdown)
        assert not any(card.title in text for card in lesson_text.MISCONCEPTIONS)


def test_a_prediction_is_kept_when_the_lecture_comes_back_to_its_step():
    at = new_app(view="lesson")
    at.run()
    step = lesson.STEPS[0]
    _answer(at, step, right_answer(step))
    at.button(key="lesson_next").click().run()
    at.button(key="lesson_previous").click().run()
    no_errors(at)
    assert at.success[0].value == f"Right: {right_answer(step)}."


def test_start_again_forgets_the_predictions_and_the_sentence():
    at = new_app(view="lesson", lesson_step=_number("inside-attention"))
    at.run()
    step = BY_SLUG["inside-attention"]
    at.text_input(key="lesson_text").set_value("a b a").run()
    _answer(at, step, right_answer(step, ("a b a",)))
    at.button(key="lesson_next").click().run()
    at.button(key="lesson_reset").click().run()
    no_errors(at)
    assert at.session_state["lesson_step"] == 1
    assert at.subheader[0].value.startswith("1. ")
    assert lesson.answer_key(step) not in at.session_state
    assert at.session_state["lesson_text"] == "the cat sat on the mat"


class TestLecturerNotes:
    def test_notes_show_the_answer_only_when_asked_for(self):
        number = _number("wavelengths")
        step = BY_SLUG["wavelengths"]
        at = new_app(view="lesson", lesson_step=number)
        at.run()
        text = " ".join(m.value for m in at.markdown)
        assert notes_of(step) not in text and "Lecturer notes:" not in text
        at = new_app(view="lesson", lesson_step=number, lesson_notes="true", present="true")
        at.run()
        no_errors(at)
        text = " ".join(m.value for m in at.markdown)
        assert notes_of(step) in text and f"**Answer:** {right_answer(step)}" in text
        assert not at.get("plotly_chart")  # the class's question is still open


class TestEachChartAnswersItsQuestion:
    """Issues 38 and 52: the chart of a step shows what its question asks."""

    def _figure(self, slug, j=0):
        return figures_of(BY_SLUG[slug])[j].to_plotly_json()

    def test_the_first_step_reverses_the_sentence_through_each_layer(self):
        found = small_models.reversal_changes().changes
        traces = self._figure("why-positions")["data"]
        assert [t["type"] for t in traces] == ["bar"]
        assert list(traces[0]["y"]) == [*small_models.LAYERS, small_models.WITH_POSITIONS]
        np.testing.assert_allclose(
            decode(traces[0]["x"]), [100 * found[name] for name in traces[0]["y"]]
        )
        # Only unmasked self-attention gives each word the same output; a decoder's mask,
        # the RNN and the convolution see the order; with PE(k) added the order reaches it.
        rnn, convolution, plain, causal = (found[name] for name in small_models.LAYERS)
        assert plain < 1e-12 and min(rnn, convolution, causal) > 0.1
        assert found[small_models.WITH_POSITIONS] > 0.1
        assert right_answer(BY_SLUG["why-positions"]) == "Self-attention"

    def test_attention_is_permutation_equivariant_and_the_rnn_and_the_mask_are_not(self):
        rng = np.random.default_rng(7)
        x = rng.standard_normal((5, 8))
        perm = rng.permutation(5)
        weights = tuple(rng.standard_normal((8, 8)) / np.sqrt(8) for _ in range(3))
        np.testing.assert_allclose(
            small_models._attention(x[perm], weights), small_models._attention(x, weights)[perm]
        )
        causal = small_models._causal_attention
        assert not np.allclose(causal(x[perm], weights), causal(x, weights)[perm])
        # The mask by hand: the first word attends to itself alone.
        np.testing.assert_allclose(causal(x, weights)[0], x[0] @ weights[2])
        rnn = small_models._recurrent
        assert not np.allclose(rnn(x[perm], weights[:2]), rnn(x, weights[:2])[perm])

    def test_sinusoids_draws_the_first_and_the_last_pair(self):
        config = BY_SLUG["sinusoids"].config
        names = " ".join(t.get("name") or "" for t in self._figure("sinusoids")["data"])
        last = config.d_model - 2
        for column in (0, 1, last, last + 1):
            assert f"{column}" in names
        assert f"d_model {config.d_model}" in text_of(BY_SLUG["sinusoids"])  # said once

    def test_several_marks_the_positions_that_collide(self):
        figure = self._figure("several")
        lines = [t for t in figure["data"] if t["mode"] == "lines"]
        point = next(t for t in figure["data"] if t["mode"] == "markers")
        offsets = decode(lines[0]["x"])
        one_pair = decode(lines[0]["y"])
        # The distance for one pair, recomputed: 2|sin(δ/2)|; its minimum is the marked one.
        np.testing.assert_allclose(one_pair, 2 * np.abs(np.sin(offsets / 2)), atol=1e-12)
        assert list(point["x"]) == [offsets[np.argmin(one_pair)]] == [710]
        assert "positions 0 and 710" in point["name"]
        assert figure["layout"]["yaxis"]["type"] == "log"

    def test_wavelengths_splits_the_pairs_at_the_sequence_length(self):
        figure = self._figure("wavelengths")
        within, beyond, line = figure["data"]
        assert decode(within["x"]).size == 161 and decode(beyond["x"]).size == 95
        assert decode(within["y"]).max() <= 2047 < decode(beyond["y"]).min()
        assert list(line["y"]) == [2047, 2047]
        assert "161 of 256" in within["name"]

    def test_rope_draws_three_curves_that_stay_visible_on_top_of_one_another(self):
        traces = self._figure("rope")["data"]
        assert len(traces) == 3  # the key at three positions
        curves = [decode(t["y"]) for t in traces]
        for other in curves[1:]:
            np.testing.assert_allclose(other, curves[0], rtol=0, atol=1e-9)
        assert np.ptp(curves[0]) > 1.0
        widths = [t["line"]["width"] for t in traces]
        dashes = [t["line"].get("dash") for t in traces]
        assert widths == sorted(widths, reverse=True) and len(set(widths)) == 3
        assert len(set(dashes)) == 3

    def test_relative_opens_the_relative_position_view(self):
        step = BY_SLUG["relative"]
        assert step.view == "rotation" and lesson.link_of(step).startswith("rotation")

    def test_beyond_draws_one_quantity_per_axis_and_past_the_length_dashed(self):
        step = BY_SLUG["beyond"]
        config = step.config
        length = families.training_length(config)
        figure = chart_of(step).to_plotly_json()
        layout = figure["layout"]
        axes = sorted(k for k in layout if k.startswith("yaxis"))
        assert len(axes) == 4  # one per family, each its own scale
        titles = [layout[a]["title"]["text"] for a in axes]
        assert [t.split("<br>")[0] for t in titles] == [
            "sinusoid", "RoPE", "ALiBi", "learned table"
        ]  # fmt: skip
        pairs = [figure["data"][j : j + 2] for j in range(0, len(figure["data"]), 2)]
        n = config.n_positions
        table = pe_core.sinusoidal_encoding(n, config.d_model)
        for (before, after), title in zip(pairs, titles, strict=True):
            assert decode(before["x"]).max() < length <= decode(after["x"]).min()
            assert after["line"]["dash"] == "dash"
            values = np.concatenate([decode(before["y"]), decode(after["y"])])
            if title.startswith("sinusoid"):
                np.testing.assert_allclose(values, table @ table[0], atol=1e-9)
            if title.startswith("ALiBi"):
                slope = pe_core.FAMILIES["alibi"].defaults["slope"]
                np.testing.assert_allclose(values, -slope * np.arange(n), atol=1e-12)
            if title.startswith("learned"):
                assert np.isfinite(decode(before["y"])).all()
                assert np.isnan(decode(after["y"])).all()  # no row past the training length
        shaded = [s for s in layout["shapes"] if s["type"] == "rect"]
        assert len(shaded) == 4 and all(s["x0"] == length for s in shaded)
        notes = " ".join(a["text"] for a in layout["annotations"])
        unseen = int(families.beyond_training(config).unseen.max())
        assert f"up to {unseen} of 32 pairs at angles never seen" in notes


class TestTheSentenceStep:
    """The step on the student's own sentence reads it (bound to the URL) and redraws on it;
    a new sentence asks for a new prediction."""

    @property
    def number(self):
        return _number("inside-attention")

    @property
    def step(self):
        return BY_SLUG["inside-attention"]

    def test_a_typed_sentence_is_drawn_and_linked(self):
        at = new_app(view="lesson", lesson_step=self.number, lesson_text="a dog saw a cat")
        at.run()
        no_errors(at)
        assert at.text_input(key="lesson_text").value == "a dog saw a cat"
        _answer(at, self.step, lesson.options_of(self.step, None)[0])
        without, with_positions = (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
        labels = ["0 a", "1 dog", "2 saw", "3 a", "4 cat"]
        for figure in (without, with_positions):
            assert figure["layout"]["yaxis"]["ticktext"] == labels
            assert figure["layout"]["xaxis"]["ticktext"] == labels
        assert any("“a” at positions 0 and 3" in m.value for m in at.markdown)
        link = lesson.link_of(self.step, ("a dog saw a cat",))
        assert "emb_text=a+dog+saw+a+cat" in link

    def test_a_new_sentence_clears_the_previous_prediction(self):
        """Issue 52: the chart of a new sentence appeared without a new prediction."""
        at = new_app(view="lesson", lesson_step=self.number)
        at.run()
        _answer(at, self.step, right_answer(self.step))
        assert len(at.get("plotly_chart")) == 2
        at.text_input(key="lesson_text").set_value("a dog saw a cat").run()
        no_errors(at)
        assert not at.get("plotly_chart")
        assert at.info[0].value.startswith("Predict first")

    def test_the_scores_are_those_of_the_words_plus_the_encoding(self):
        figures = figures_of(self.step)
        without, with_positions = (decode(f.to_plotly_json()["data"][0]["z"]) for f in figures)
        np.testing.assert_array_equal(without[0], without[4])  # "the" at 0 and 4
        np.testing.assert_array_equal(without[:, 0], without[:, 4])
        assert np.max(np.abs(with_positions[0] - with_positions[4])) > 0.1
        words = ("a", "b", "a")
        found = small_models.sentence_scores(words)
        rng = np.random.default_rng(0)
        table = {w: rng.normal(0.0, 1.0, 16) for w in sorted(set(words))}
        x = np.array([table[w] for w in words]).astype(np.float32).astype(np.float64)
        total = (np.array([table[w] for w in words]) + pe_core.sinusoidal_encoding(3, 16)).astype(
            np.float32
        )
        wq, wk = np.random.default_rng(0).standard_normal((2, 16, 16)) / 4.0
        np.testing.assert_allclose(found.without, (x @ wq) @ (x @ wk).T / 4.0, rtol=1e-9)
        x = total.astype(np.float64)
        np.testing.assert_allclose(found.with_positions, (x @ wq) @ (x @ wk).T / 4.0, rtol=1e-9)

    def test_the_positions_only_term_is_not_a_function_of_the_offset(self):
        wq, wk = small_models.head_projections()
        table = pe_core.sinusoidal_encoding(16, 16)
        term = [table[k + 1] @ wq @ wk.T @ table[k] / 4.0 for k in range(15)]
        np.testing.assert_allclose(small_models.position_term(16, 1), term, rtol=1e-12)
        assert np.ptp(term) > 0.1
        assert f"from {min(term):.2f} to {max(term):.2f}" in explanation_of(self.step)

    def test_a_long_sentence_names_its_columns_by_position(self):
        text = " ".join(f"w{k}" for k in range(20))
        layout = figures_of(self.step, (text,))[0].to_plotly_json()["layout"]
        assert len(layout["yaxis"]["ticktext"]) == 16  # the first 16 words, named on the rows
        assert "ticktext" not in layout["xaxis"]  # the columns by position

    def test_a_sentence_without_a_repeated_word_says_so(self):
        text = explanation_of(self.step, ("one two three",))
        assert "repeats no word" in text
        assert lesson.answer_of(self.step, None, ("one two three",)) == 0

    def test_an_empty_sentence_is_advice_not_a_crash(self):
        at = new_app(view="lesson", lesson_step=self.number)
        at.run()
        at.text_input(key="lesson_text").set_value("   ").run()
        assert not at.exception
        assert any("at least one word" in w.value for w in at.warning)
        with pytest.raises(pe_core.InputError, match="at least one word"):
            small_models.words_of("")


def test_the_upper_layers_step_keeps_the_positions_apart():
    step = BY_SLUG["upper-layers"]
    found = small_models.residual_stack(step.config.d_model, copies=step.config.n_positions)
    kept, lost = (decode(t["y"]) / 100 for t in chart_of(step).to_plotly_json()["data"])
    np.testing.assert_allclose(kept, found.with_residual)
    np.testing.assert_allclose(lost, found.without_residual)
    vector = np.random.default_rng(0).standard_normal(step.config.d_model)
    encoding = pe_core.sinusoidal_encoding(step.config.n_positions, step.config.d_model)
    start = vector + encoding
    spread = np.linalg.norm(encoding - encoding.mean(0)) / np.linalg.norm(start)
    assert kept[0] == lost[0] == pytest.approx(spread, rel=1e-12)
    assert kept.min() > 0.05 and lost[-1] < 1e-9
    assert "residual connection" in right_answer(step)


class TestOneNotation:
    """Issue 52: position k, offset δ, query q and key κ, d_model, ω_i: each its own letter."""

    def _texts(self):
        for step in lesson.STEPS:
            yield (
                step.slug,
                " ".join(
                    [
                        text_of(step),
                        step.question,
                        explanation_of(step),
                        takeaway_of(step),
                        notes_of(step),
                        *lesson.options_of(step),
                    ]
                ),
            )
        yield "recap", " ".join(q + " " + a for q, a in lesson_text.check_questions())

    def test_no_capital_delta_no_w_i_and_no_key_named_k(self):
        for where, text in self._texts():
            assert "Δ" not in text, where
            assert not re.search(r"\bw_i\b", text), where
            assert not re.search(r"key k\b|q·k\b|k = x", text), where

    def test_every_formula_is_typeset_for_print_too(self):
        for step in lesson.STEPS:
            math = to_mathml(formula_of(step))
            ET.fromstring(math)
            assert "\\" not in math, step.slug  # no command left untranslated

    def test_the_notation_card_names_each_letter_once(self):
        symbols = [symbol for symbol, _ in lesson_text.NOTATION_ROWS]
        assert len(symbols) == len(set(symbols))
        for letter in ("k", "δ", "q, κ", "d_model", "ω_i", "M(δ)", "R(k)"):
            assert letter in symbols


class TestHandouts:
    """Issue 52: a worksheet with no answers, an answer key with answers, misconceptions and a
    formula sheet; each a file that prints, well under 2 MB."""

    def test_the_worksheet_holds_every_question_and_no_answer(self):
        page = handouts.worksheet()
        assert len(page.encode()) < 2_000_000
        assert "<script" not in page and "<svg" not in page  # no chart: a chart is an answer
        for step in lesson.STEPS:
            assert html.escape(step.question) in page
            options = lesson.options_of(step)
            # every option written alike: nothing marks the right one
            for option in options:
                assert f"<li>{html.escape(option)}</li>" in page
            assert html.escape(explanation_of(step)[:60]) not in page
            assert html.escape(takeaway_of(step)) not in page
            assert html.escape(notes_of(step)) not in page
        for question, answer in lesson_text.check_questions():
            assert html.escape(question) in page and html.escape(answer) not in page
        assert "class=right" not in page and "✓" not in page
        for card in lesson_text.MISCONCEPTIONS:
            assert html.escape(card.title) not in page

    def test_the_answer_key_holds_answers_charts_notes_misconceptions_and_formulas(self):
        page = handouts.answer_key()
        assert len(page.encode()) < 2_000_000
        assert "<script" not in page
        for step in lesson.STEPS:
            assert f"<li class=right>{html.escape(right_answer(step))}</li>" in page
            assert html.escape(explanation_of(step).split("\n\n")[0]) in page
            assert html.escape(notes_of(step)) in page
        assert page.count("<svg") == sum(len(figures_of(s)) for s in lesson.STEPS)
        for card in lesson_text.MISCONCEPTIONS:
            assert html.escape(card.title) in page
        for question, answer in lesson_text.check_questions():
            assert html.escape(question) in page and html.escape(answer) in page
        assert "Formula sheet" in page
        assert page.count("<math") == 2 * len(lesson.STEPS)  # with each step, and the sheet
        assert "break-before: page" in page and "break-inside: avoid" in page

    def test_both_are_offered_as_downloads(self):
        at = new_app(view="lesson")
        at.run()
        labels = [b.proto.label for b in at.get("download_button")]
        assert any(label.startswith("Worksheet for the class") for label in labels)
        assert any(label.startswith("Answer key with notes") for label in labels)
