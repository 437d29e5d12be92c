"""Layout a test can see in a real browser: formulas are not cut off at 1440 and 768 px.

(AppTest sees the text of a formula, not whether it fits: issue 9 found the similarity
explainer's formula clipped at the right edge at 1440 px and below.)
"""

from __future__ import annotations

import pytest

from dashboard.registry import VIEWS

from .conftest import AppPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

#: For every displayed formula: how much of it does not fit its box (px): what its box would
#: have to scroll, or how far it passes the box's right edge.
OVERFLOW_JS = """() => Array.from(document.querySelectorAll('.katex-display')).map((el) => {
  const box = el.closest('[data-testid="stElementContainer"]') || el.parentElement;
  const formula = el.querySelector('.katex-html') || el;
  const passes = formula.getBoundingClientRect().right - box.getBoundingClientRect().right;
  return [formula.textContent.slice(0, 60), Math.max(el.scrollWidth - el.clientWidth, passes)];
})"""


@pytest.mark.parametrize("width", [1440, 768])
def test_no_formula_is_cut_off(app: AppPage, width: int):
    app.page.set_viewport_size({"width": width, "height": 900})
    cut = []
    for slug in (view.slug for view in VIEWS):
        app.open(f"?view={slug}")
        expander = app.page.locator('[data-testid="stExpander"] summary').first
        if expander.count() and app.page.locator(".katex-display").count() == 0:
            expander.click()  # open the explanation, where the formula is
            app.page.wait_for_timeout(300)
        for text, overflow in app.page.evaluate(OVERFLOW_JS):
            if overflow > 2:  # a pixel or two of sub-pixel rounding is not a cut
                cut.append(f"{slug}: {text!r} passes its box by {overflow:.0f} px")
    assert cut == []
    app.assert_clean()
