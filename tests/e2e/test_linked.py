"""Linked highlighting (issue 15): a point clicked in one chart of a view is marked in the other
chart of that view, and a double click clears it."""

from __future__ import annotations

import pytest

from dashboard import figures

from .conftest import AppPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

#: Where on the page the first point at or after ``x`` of trace ``curve`` is drawn.
POINT_JS = """(plot, [x, curve]) => {
  const trace = plot._fullData[curve];
  const xs = Array.from(trace.x);
  const i = xs.findIndex((value) => value >= x);
  const xaxis = plot._fullLayout.xaxis, yaxis = plot._fullLayout.yaxis;
  const box = plot.getBoundingClientRect();
  return [box.left + xaxis._offset + xaxis.l2p(xs[i]),
          box.top + yaxis._offset + yaxis.l2p(trace.y[i])];
}"""


def _click(app: AppPage, chart: int, x: float, curve: int) -> None:
    plot = app.page.locator(".js-plotly-plot").nth(chart)
    plot.scroll_into_view_if_needed()
    left, top = plot.evaluate(POINT_JS, [x, curve])
    since = app.page.evaluate("performance.now()")
    app.page.mouse.click(left, top)
    app.wait_settled(since, some=True)  # the clicked chart itself is not drawn again


def _clear(app: AppPage, chart: int) -> None:
    """A double click on the chart away from its points: Plotly clears the selection."""
    plot = app.page.locator(".js-plotly-plot").nth(chart)
    box = plot.evaluate(
        "p => { const r = p.getBoundingClientRect(), x = p._fullLayout.xaxis,"
        " y = p._fullLayout.yaxis; return [r.left + x._offset + x._length - 5,"
        " r.top + y._offset + 5]; }"
    )
    since = app.page.evaluate("performance.now()")
    app.page.mouse.dblclick(*box)
    app.wait_settled(since, some=True)


def _captions(app: AppPage) -> str:
    return " ".join(app.page.locator('[data-testid="stCaptionContainer"]').all_inner_texts())


def _wait_for_caption(app: AppPage, text: str, *, shown: bool = True) -> None:
    """Until a caption says ``text`` (or none does): a click in one fragment may run the whole
    page once more to redraw the linked chart."""
    app.page.wait_for_function(
        "([text, shown]) => Array.from(document.querySelectorAll("
        "'[data-testid=stCaptionContainer]')).some((c) => c.innerText.includes(text)) === shown",
        arg=[text, shown],
    )
    app.wait_quiet()


def test_an_offset_clicked_on_the_profile_is_marked_in_the_matrix(app: AppPage):
    app.open("similarity")
    _click(app, 1, 300, 0)  # the closed form's line, near offset 300
    _wait_for_caption(app, "(clicked): cosine")
    shapes = app.page.locator(".js-plotly-plot").first.evaluate(
        "plot => (plot.layout.shapes || []).map((s) => [s.x0 - s.y0, s.line.color])"
    )
    offset = int(_captions(app).split("Offset δ = ")[1].split(" ")[0].replace(",", ""))
    assert 290 <= offset <= 310
    assert sorted(shapes) == sorted(
        [[offset, figures.CHOSEN_COLOUR], [-offset, figures.CHOSEN_COLOUR]]
    )
    _clear(app, 1)
    _wait_for_caption(app, "(clicked)", shown=False)
    assert (
        app.page.locator(".js-plotly-plot").first.evaluate("p => (p.layout.shapes || []).length")
        == 0
    )
    assert app.problems() == []


def test_a_position_clicked_on_the_curves_is_drawn_in_the_chart_below(app: AppPage):
    app.open("sinusoids")
    _click(app, 0, 37, 1)  # the first curve's marker at position 37
    _wait_for_caption(app, "Position 37, clicked in the chart above, is drawn thick.")
    names = (
        app.page.locator(".js-plotly-plot")
        .nth(1)
        .evaluate("plot => plot.data.map((t) => [t.name, t.line && t.line.color])")
    )
    assert ["position 37 (chosen above)", figures.CHOSEN_COLOUR] in names
    _clear(app, 0)
    _wait_for_caption(app, "clicked in the chart above", shown=False)
    names = app.page.locator(".js-plotly-plot").nth(1).evaluate("p => p.data.map((t) => t.name)")
    assert "position 37 (chosen above)" not in names
    assert app.problems() == []
