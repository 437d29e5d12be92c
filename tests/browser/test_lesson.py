"""The lesson in a browser: walked from start to end (each prediction made, the chart revealed,
the step's link opened in a new tab on the view it names with the step's parameters), one
screen a step in presentation mode at 1920 x 1080, the arrow keys and a clicker's keys moving
between steps, and the lecturer's window following the projected one."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from benchmarks.harness import SCREENSHOTS, AppPage
from dashboard.views import lesson
from dashboard.views.lesson.step import figures_of, right_answer

pytestmark = pytest.mark.timeout(600)  # and `browser`, from the folder (tests/conftest.py)


def _predict(app: AppPage, step) -> None:
    """Choose the right answer and wait for the chart."""
    main = app.page.locator('[data-testid="stMain"]')
    right = right_answer(step)
    since = app.now()
    main.get_by_text(right, exact=True).click()
    main.get_by_text(f"Right: {right}.").wait_for()
    app.wait_settled(since, some=True)


def test_walk_the_lesson_from_start_to_end(app: AppPage):
    from playwright.sync_api import expect

    app.open("lesson")
    main = app.page.locator('[data-testid="stMain"]')
    for number, step in enumerate(lesson.STEPS, start=1):
        if number > 1:
            since = app.now()
            steps = main.get_by_role("radiogroup", name="Step")
            steps.get_by_role("radio", name=str(number), exact=True).click()
            app.page.get_by_role("heading", name=f"{number}. {step.title}").wait_for()
            app.wait_settled(since)
            # a bound widget leaves its default (step 1) out of the address bar
            expect(app.page).to_have_url(re.compile(rf"/lesson\?(.*&)?lesson_step={number}(&|$)"))
        assert main.locator(".js-plotly-plot").count() == 0  # nothing shown before predicting
        _predict(app, step)
        assert main.locator(".js-plotly-plot").count() == len(figures_of(step))
        app.screenshot(SCREENSHOTS / f"lesson_step_{number}.png")
        link = main.get_by_role("link", name=re.compile("with these parameters"))
        if step.view is None:
            assert link.count() == 0
            continue
        assert link.get_attribute("href").endswith(lesson.link_of(step))
        assert link.get_attribute("target") == "_blank"  # the lesson stays open
        # The link, opened as the new tab would: its view, with the step's parameters.
        tab = app.new_page()
        tab.open(lesson.link_of(step))
        # Accepted as it is: the app puts a link right by switching to a corrected one.
        opened = urlsplit(tab.page.url)
        assert opened.path == f"/{step.view}"
        assert parse_qs(opened.query) == parse_qs(urlsplit(lesson.link_of(step)).query)
        assert tab.number_input("Number of positions L").input_value() == str(
            step.config.n_positions
        )
        assert tab.number_input("d_model").input_value() == str(step.config.d_model)
        assert tab.warnings() == [] or step.view == "uniqueness"  # its verdict is a warning
        assert tab.problems() == []
        tab.page.close()
    assert app.problems() == []


#: The top and the bottom of the question (the radio group of answers) and of each chart, and
#: how far the main area is scrolled.
BOXES_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.top, r.bottom]; };
  const question = main.querySelector('[data-testid="stRadio"]');
  return {
    scrolled: main.scrollTop + document.scrollingElement.scrollTop,
    question: question ? box(question) : null,
    charts: Array.from(main.querySelectorAll('[data-testid="stPlotlyChart"]')).map(box),
    height: window.innerHeight,
  };
}"""


#: Visible text under 18 px in the main area: [size, text]. Icon ligatures, text for screen
#: readers only (1 px, clipped) and zero-width characters (KaTeX's struts) are not read.
SMALL_TEXT_JS = """() => {
  const found = [];
  const main = document.querySelector('[data-testid="stMain"]');
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const text = node.textContent.replace(/[\\u200b\\s]/g, '');
    const el = node.parentElement;
    if (!text || el.closest('[data-testid="stIconMaterial"], .pe-chart-text')) continue;
    const box = el.getBoundingClientRect();
    if (box.width < 2 || box.height < 2) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (size < 18) found.push([size, text.slice(0, 40)]);
  }
  return found;
}"""


#: The screens a lecture is projected on: a projector's 1920 x 1080, where each step must be one
#: screen (issue 52), and a laptop's 1440 x 900, where the text must still be legible (issue 38).
SCREENS = {"1920x1080": (1920, 1080), "1440x900": (1440, 900)}


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("number", range(1, len(lesson.STEPS) + 1))
def test_in_presentation_mode_each_step_is_legible_and_one_screen_at_1920_by_1080(
    app: AppPage, number: int, screen: str
):
    """Issue 38: no text under 18 px, legible from the back of a room; issue 52: at 1920 x 1080
    the question and, once answered, the chart on one screen, no scrolling. A grid of step and
    screen: the quick tiers take each step once and each screen once (tests/conftest.py), the
    exhaustive tier the rest."""
    width, height = SCREENS[screen]
    app.page.set_viewport_size({"width": width, "height": height})
    step = lesson.STEPS[number - 1]
    app.open(f"lesson?present=true&lesson_step={number}")
    _predict(app, step)
    app.wait_quiet()
    assert app.page.evaluate(SMALL_TEXT_JS) == []
    if screen == "1920x1080":
        found = app.page.evaluate(BOXES_JS)
        assert found["scrolled"] == 0 and len(found["charts"]) == len(figures_of(step))
        outside = [
            (top, bottom)
            for top, bottom in [found["question"], *found["charts"]]
            if top < 0 or bottom > found["height"]
        ]
        assert outside == []
        # For a person to look at (PE_SCREENSHOTS=1): the whole page.
        app.screenshot(SCREENSHOTS / f"lesson_present_1920_step_{number}.png")
    app.assert_clean()


def test_presentation_mode_has_no_text_under_18_px_in_the_recap(app: AppPage):
    """Issue 38: the recap, with an answer open, at 1440 px (the steps: the test above)."""
    app.page.set_viewport_size({"width": 1440, "height": 900})
    main = app.page.locator('[data-testid="stMain"]')
    app.open(f"lesson?present=true&lesson_step={lesson.RECAP}")
    main.get_by_text(f"1. {lesson.check_questions()[0][0]}").click()
    app.page.wait_for_timeout(300)
    assert app.page.evaluate(SMALL_TEXT_JS) == []
    app.assert_clean()


def _ready(app: AppPage, number: int) -> None:
    """Wait until the keyboard's component is on the page, at step ``number``."""
    app.page.wait_for_function(
        "n => document.querySelector(`[data-pe-lesson-step='${n}']`) !== null", arg=number
    )


def _heading(app: AppPage, number: int):
    title = lesson.STEPS[number - 1].title if number <= len(lesson.STEPS) else "Recap"
    name = title if number > len(lesson.STEPS) else f"{number}. {title}"
    return app.page.get_by_role("heading", name=name, exact=True)


def test_the_arrow_keys_and_a_clicker_move_between_steps(app: AppPage):
    """Issue 52: Right and Left (and PageDown and PageUp, which clickers send, in presentation
    mode) move the lecture; Left and Right on a chosen answer do not change it."""
    app.page.set_viewport_size({"width": 1920, "height": 1080})
    app.open("lesson?present=true")
    _ready(app, 1)
    keyboard = app.page.keyboard
    for key, number in (("ArrowRight", 2), ("PageDown", 3), ("PageUp", 2), ("ArrowLeft", 1)):
        keyboard.press(key)
        _heading(app, number).wait_for()
        _ready(app, number)
    # An answer chosen with the mouse keeps the focus on its radio button: Right moves on.
    step = lesson.STEPS[0]
    _predict(app, step)
    keyboard.press("ArrowRight")
    _heading(app, 2).wait_for()
    _ready(app, 2)
    keyboard.press("ArrowLeft")
    _heading(app, 1).wait_for()
    _ready(app, 1)
    app.wait_quiet()
    main = app.page.locator('[data-testid="stMain"]')
    assert main.get_by_text(f"Right: {right_answer(step)}.").count() == 1  # kept
    # Typing in the sentence box moves its cursor, not the lecture.
    number = lesson.plan.number_of("inside-attention")
    app.open(f"lesson?present=true&lesson_step={number}")
    _ready(app, number)
    box = app.page.get_by_role("textbox", name=re.compile("Your sentence"))
    box.click()
    keyboard.press("ArrowRight")
    keyboard.press("ArrowLeft")
    app.page.wait_for_timeout(500)
    assert _heading(app, number).count() == 1
    app.assert_clean()


def test_the_lecturer_window_follows_the_projected_one(app: AppPage):
    """Issue 52: notes the class does not see, on the lecturer's own screen."""
    app.page.set_viewport_size({"width": 1920, "height": 1080})
    app.open("lesson?present=true")
    _ready(app, 1)
    notes = app.new_page()
    notes.open("lesson?lesson_notes=true")
    notes.page.get_by_text("Lecturer notes: step 1,").wait_for()
    _ready(notes, 1)
    assert app.page.get_by_text("Lecturer notes: step").count() == 0  # not on the projector
    app.page.bring_to_front()
    app.page.keyboard.press("ArrowRight")
    _heading(app, 2).wait_for()
    notes.page.get_by_text("Lecturer notes: step 2,").wait_for()  # it followed
    _ready(notes, 2)
    notes.page.bring_to_front()
    notes.page.keyboard.press("ArrowRight")
    _heading(app, 3).wait_for()  # and the projector follows the lecturer's keys
    notes.assert_clean()
    app.assert_clean()


#: Font sizes of the text inside the image charts' shadow roots (heatmaps): [size, text].
IMAGE_TEXT_JS = """() => {
  const found = [];
  for (const host of document.querySelectorAll('[data-pe-image]')) {
    const root = host.shadowRoot || host;
    for (const el of root.querySelectorAll('.pe-axis, .pe-xname, .pe-yname, .pe-title,'
                                           + ' .pe-subtitle')) {
      if (!el.textContent.trim()) continue;
      found.push([parseFloat(getComputedStyle(el).fontSize), el.textContent.slice(0, 30)]);
    }
  }
  return found;
}"""
#: Font sizes of the colour bars' text of the Plotly charts on the page.
COLOUR_BAR_TEXT_JS = """() =>
  Array.from(document.querySelectorAll('.js-plotly-plot .colorbar text'))
    .map(t => [parseFloat(getComputedStyle(t).fontSize), t.textContent])"""
#: The tick labels of every log axis of the Plotly charts on the page.
LOG_TICKS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap(plot =>
  Object.entries(plot._fullLayout).filter(([k, a]) => /^[xy]axis/.test(k) && a.type === 'log')
    .flatMap(([k]) => Array.from(plot.querySelectorAll(`.${k.replace('axis', '')}tick text`))
      .map(t => t.textContent)))"""


def test_presentation_mode_scales_every_chart_s_text_and_writes_log_ticks_one_way(app: AppPage):
    """Issue 52: the heatmaps' axes and colour bars stayed at about 10 px in presentation mode
    (they are drawn by the page, not by Plotly); log axes wrote "1e+4" beside "100"."""
    app.page.set_viewport_size({"width": 1920, "height": 1080})
    for view in ("heatmap", "similarity?L=2048&d=512"):  # the similarity image: from 1,024
        app.open(f"{view}{'&' if '?' in view else '?'}present=true")
        app.page.wait_for_function(
            "() => document.querySelector('[data-pe-image][data-pe-drawn]') !== null"
        )
        found = app.page.evaluate(IMAGE_TEXT_JS)
        assert found, view
        assert [f for f in found if f[0] < 18] == [], view
    # A Plotly heatmap's colour bar (the embeddings and their sum with the encoding).
    app.open("embeddings?present=true")
    bars = app.page.evaluate(COLOUR_BAR_TEXT_JS)
    assert bars and [b for b in bars if b[0] < 18] == [], bars
    app.open("wavelengths?present=true")
    ticks = app.page.evaluate(LOG_TICKS_JS)
    assert ticks and not [t for t in ticks if "e" in t.lower()], ticks
    app.assert_clean()


def test_the_two_handouts_download_and_print(app: AppPage, tmp_path):
    """Issue 52: the worksheet and the answer key download from the page and print (Chromium's
    own print to PDF, A4), each well under 2 MB; the worksheet holds no answer."""
    app.open("lesson")
    main = app.page.locator('[data-testid="stMain"]')
    printed = {}
    for label in ("Worksheet for the class", "Answer key with notes"):
        with app.page.expect_download() as download:
            main.get_by_role("button", name=re.compile(re.escape(label))).click()
        path = tmp_path / download.value.suggested_filename
        download.value.save_as(path)
        text = path.read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>") and path.stat().st_size < 2_000_000
        page = app.page.context.new_page()
        page.goto(path.as_uri())
        pdf = page.pdf(format="A4", print_background=True)
        page.close()
        printed[label] = text
        assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
    worksheet = printed["Worksheet for the class"]
    for step in lesson.STEPS:
        assert step.question.split(",")[0] in worksheet
    assert "✓" not in worksheet and "<svg" not in worksheet
    answers = printed["Answer key with notes"]
    assert answers.count("<li class=right>") == len(lesson.STEPS)
    app.assert_clean()
