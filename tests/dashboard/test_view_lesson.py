"""The lesson: every step asks before it shows, its answer is true at its parameters, and its
link opens its view with those parameters (checked by opening the link as a new session)."""

from __future__ import annotations

import html
import json
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

import pe_core
from dashboard import registry
from dashboard.view_parts import attention, lesson_families, lesson_sinusoids
from dashboard.view_parts.lesson_step import chart_of, explanation_of, link_values
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
    for key, value in link_values(step).items():
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
            a, b = lesson_sinusoids.closest(step.config, d_model).closest_pair
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

    def test_step_1_reverses_the_sentence_through_an_rnn_a_convolution_and_attention(self):
        found = attention.reversal_changes().changes
        traces = self._figure(1)["data"]
        assert [t["type"] for t in traces] == ["bar"]
        assert list(traces[0]["y"]) == [*attention.LAYERS, attention.WITH_POSITIONS]
        np.testing.assert_allclose(
            decode(traces[0]["x"]), [100 * found[name] for name in traces[0]["y"]]
        )
        # The claim: only self-attention gives each word the same output; the order reaches it
        # once PE(k) is added; the RNN and the convolution see the order by themselves.
        rnn, convolution, plain = (found[name] for name in attention.LAYERS)
        assert plain < 1e-12 and rnn > 0.1 and convolution > 0.1
        assert found[attention.WITH_POSITIONS] > 0.1
        step = lesson.STEPS[0]
        right = lesson.options_of(step, step.config)[lesson.answer_of(step, step.config)]
        assert right == "Self-attention"
        text = explanation_of(step)
        assert f"{rnn:.0%}" in text and f"{found[attention.WITH_POSITIONS]:.0%}" in text

    def test_attention_is_permutation_equivariant_and_the_rnn_is_not(self):
        # Independently of the step: any permutation of the rows, not only the reversal.
        rng = np.random.default_rng(7)
        x = rng.standard_normal((5, 8))
        perm = rng.permutation(5)
        weights = tuple(rng.standard_normal((8, 8)) / np.sqrt(8) for _ in range(3))
        np.testing.assert_allclose(
            attention._attention(x[perm], weights), attention._attention(x, weights)[perm]
        )
        rnn = attention._recurrent
        assert not np.allclose(rnn(x[perm], weights[:2]), rnn(x, weights[:2])[perm])

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
    # The steps with an input of their own show the value their chart was drawn with.
    assert "the cat sat on the mat</p>" in page
    for title in (
        "Positions inside attention",
        "Does position information survive",
        "What happens beyond the training length",
    ):
        assert title in page
    assert page.count("plotly.js v") == 1  # the library inlined once (it works offline)
    for question, answer in lesson.check_questions():
        assert html.escape(question) in page and html.escape(answer) in page


class TestTheNewStepsAnswerTheirQuestions:
    """Issue 38's missing steps: each chart shows the answer its step states, checked against
    numbers computed here from pe_core directly."""

    def test_step_7_the_copies_of_a_word_score_alike_without_positions_only(self):
        step = lesson.STEPS[6]
        assert step.inputs and step.defaults() == ("the cat sat on the mat",)
        figure = chart_of(step).to_plotly_json()
        without, with_positions = (decode(t["z"]) for t in figure["data"])
        assert [t["type"] for t in figure["data"]] == ["heatmap", "heatmap"]
        assert list(figure["layout"]["yaxis"]["ticktext"]) == [
            "0 the", "1 cat", "2 sat", "3 on", "4 the", "5 mat"
        ]  # fmt: skip
        # "the" at 0 and at 4: the same row and column of scores without the encoding ...
        np.testing.assert_array_equal(without[0], without[4])
        np.testing.assert_array_equal(without[:, 0], without[:, 4])
        # ... and not with it; the difference is the encoding's alone.
        assert np.max(np.abs(with_positions[0] - with_positions[4])) > 0.1
        # The panels are q·k/√d of the words' vectors and of the vectors plus PE(k).
        found = attention.sentence_scores(("the", "cat", "sat", "on", "the", "mat"))
        np.testing.assert_allclose(without, found.without, rtol=1e-6)
        right = lesson.options_of(step, step.config)[lesson.answer_of(step, step.config)]
        assert right.startswith("Yes")
        text = explanation_of(step)
        assert "“the” at positions 0 and 4" in text and "differ by 0)" in text

    def test_step_7_scores_are_those_of_the_words_plus_the_encoding(self):
        words = ("a", "b", "a")
        found = attention.sentence_scores(words)
        # Recomputed: the word vectors as the Embeddings page draws them (N(0, 1), seed 0, one
        # per word of the sorted vocabulary), the head's projections (seed 0).
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

    def test_step_8_the_residual_stream_keeps_the_positions_apart(self):
        step = lesson.STEPS[7]
        found = attention.residual_stack(step.config.d_model, copies=step.config.n_positions)
        figure = chart_of(step).to_plotly_json()
        kept, lost = (decode(t["y"]) / 100 for t in figure["data"])
        np.testing.assert_allclose(kept, found.with_residual)
        np.testing.assert_allclose(lost, found.without_residual)
        # Layer 0 is the input: one word vector plus PE(k), its copies apart by PE's spread.
        vector = np.random.default_rng(0).standard_normal(step.config.d_model)
        encoding = pe_core.sinusoidal_encoding(step.config.n_positions, step.config.d_model)
        start = vector + encoding
        spread = np.linalg.norm(encoding - encoding.mean(0)) / np.linalg.norm(start)
        assert kept[0] == lost[0] == pytest.approx(spread, rel=1e-12)
        # With x + f(x) the copies stay apart to the top; with f(x) alone they become one.
        assert kept.min() > 0.05
        assert lost[-1] < 1e-9 and lost[3:].max() < 1e-9
        right = lesson.options_of(step, step.config)[lesson.answer_of(step, step.config)]
        assert "residual connection" in right
        text = explanation_of(step)
        assert f"still differ by {kept[-1]:.0%}" in text and "random weights" in text

    def test_step_9_the_learned_table_stops_at_the_training_length(self):
        step = lesson.STEPS[8]
        config = step.config
        length = lesson_families.training_length(config)
        figure = chart_of(step).to_plotly_json()
        curves = {t["name"]: decode(t["y"]) for t in figure["data"]}
        assert list(curves) == list(lesson_families.COMPARED.values())
        learned = curves["a learned table"]
        assert np.isfinite(learned[:length]).all() and np.isnan(learned[length:]).all()
        for name in ("the sinusoid", "RoPE", "ALiBi"):
            assert np.isfinite(curves[name]).all() and curves[name].size == 2 * length
        # The dashed line stands at the training length.
        assert [shape["x0"] for shape in figure["layout"]["shapes"]] == [length]
        # The curves, recomputed: the sinusoid's PE(n-1)·PE(n-1-d), ALiBi's line -m·d.
        n = config.n_positions
        table = pe_core.sinusoidal_encoding(n, config.d_model)
        dots = table[n - 1 - np.arange(n)] @ table[n - 1]
        np.testing.assert_allclose(curves["the sinusoid"], dots / np.abs(dots).max(), atol=1e-12)
        np.testing.assert_allclose(curves["ALiBi"], -np.arange(n) / (n - 1), atol=1e-12)
        right = lesson.options_of(step, config)[lesson.answer_of(step, config)]
        assert right == "A learned table"
        # The pairs that turn less than once within the training length, as the text says.
        unturned = np.sum(pe_core.wavelengths(config.d_model) > length)
        assert f"{unturned} turn less than once within {length:,}" in explanation_of(step)


class TestTheSentenceStep:
    """Step 7 reads the student's sentence (bound to the URL) and redraws on it."""

    NUMBER = 7

    def test_a_typed_sentence_is_drawn_and_linked(self):
        at = new_app(view="lesson", step=self.NUMBER, lesson_text="a dog saw a cat")
        at.run()
        no_errors(at)
        assert at.text_input(key="lesson_text").value == "a dog saw a cat"
        _answer(at, self.NUMBER, lesson.options_of(lesson.STEPS[6], None)[0])
        figure = json.loads(at.get("plotly_chart")[0].proto.spec)
        assert figure["layout"]["yaxis"]["ticktext"] == ["0 a", "1 dog", "2 saw", "3 a", "4 cat"]
        assert any("“a” at positions 0 and 3" in m.value for m in at.markdown)
        assert figure["layout"]["xaxis"]["ticktext"] == figure["layout"]["yaxis"]["ticktext"]
        link = lesson.link_of(lesson.STEPS[6], ("a dog saw a cat",))
        assert "emb_text=a+dog+saw+a+cat" in link

    def test_a_long_sentence_names_its_columns_by_position(self):
        text = " ".join(f"w{k}" for k in range(20))
        layout = chart_of(lesson.STEPS[6], (text,)).to_plotly_json()["layout"]
        assert len(layout["yaxis"]["ticktext"]) == 16  # the first 16 words, named on the rows
        assert "ticktext" not in layout["xaxis"]  # the columns by position

    def test_a_sentence_without_a_repeated_word_says_so(self):
        step = lesson.STEPS[6]
        text = explanation_of(step, ("one two three",))
        assert "repeats no word" in text
        # The answer holds all the same (checked on the sentence with its first word again).
        assert lesson.answer_of(step, None, ("one two three",)) == 0

    def test_an_empty_sentence_is_advice_not_a_crash(self):
        at = new_app(view="lesson", step=self.NUMBER)
        at.run()
        at.text_input(key="lesson_text").set_value("   ").run()
        assert not at.exception
        assert any("at least one word" in w.value for w in at.warning)
        with pytest.raises(pe_core.InputError, match="at least one word"):
            attention.words_of("")


def test_the_recap_s_link_opens_the_recap():
    """The address bar writes the recap as step=Recap (its label); that link opens it, without
    a warning (it used to fall back to step 1)."""
    at = new_app(view="lesson", step="Recap")
    at.run()
    no_errors(at)
    assert at.session_state["_link_warnings"] == []
    assert at.subheader[0].value == "Recap"
    assert at.query_params["step"] == "Recap"
