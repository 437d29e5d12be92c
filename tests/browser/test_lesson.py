"""The lesson walked from start to end in a browser: each step chosen in order, the prediction
made, the chart revealed, and the step's link opened in a new tab on the view it names with
the step's parameters in the sidebar."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from benchmarks.harness import SCREENSHOTS, AppPage
from dashboard.views import lesson

pytestmark = pytest.mark.timeout(600)  # and `browser`, from the folder (tests/conftest.py)


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
        if number > 1:  # a bound widget leaves its default (step 1) out of the address bar
            expect(app.page).to_have_url(re.compile(rf"/lesson\?(.*&)?step={number}(&|$)"))
        assert main.locator(".js-plotly-plot").count() == 0  # nothing shown before predicting
        right = lesson.options_of(step, step.config)[lesson.answer_of(step, step.config)]
        since = app.now()
        main.get_by_text(right, exact=True).click()
        main.get_by_text(f"Right: {right}.").wait_for()
        app.wait_settled(since, some=True)
        assert main.locator(".js-plotly-plot").count() == 1
        link = main.get_by_role("link", name=re.compile("with these parameters"))
        assert link.get_attribute("href").endswith(lesson.link_of(step))
        assert link.get_attribute("target") == "_blank"  # the lesson stays open
        app.screenshot(SCREENSHOTS / f"lesson_step_{number}.png")
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


def test_presentation_mode_has_no_text_under_18_px(app: AppPage):
    """Issue 38: legible from the back of a room, at 1440 px: every step, its chart revealed,
    and the recap with an answer open."""
    app.page.set_viewport_size({"width": 1440, "height": 900})
    main = app.page.locator('[data-testid="stMain"]')
    found = []
    for number, step in enumerate(lesson.STEPS, start=1):
        app.open(f"lesson?present=true&step={number}")
        right = lesson.options_of(step, step.config)[lesson.answer_of(step, step.config)]
        since = app.now()
        main.get_by_text(right, exact=True).click()
        main.get_by_text(f"Right: {right}.").wait_for()
        app.wait_settled(since, some=True)
        found += [(number, *small) for small in app.page.evaluate(SMALL_TEXT_JS)]
    app.open(f"lesson?present=true&step={lesson.RECAP}")
    main.get_by_text(f"1. {lesson.check_questions()[0][0]}").click()
    app.page.wait_for_timeout(300)
    found += [("recap", *small) for small in app.page.evaluate(SMALL_TEXT_JS)]
    assert found == []
    app.assert_clean()
