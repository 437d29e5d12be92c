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
