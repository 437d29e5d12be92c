"""Linked highlighting (issue 15): a point clicked in one chart of a view is marked in the other
chart of that view, and a double click clears it."""

from __future__ import annotations

import pytest

from benchmarks.harness import AppPage
from dashboard.figures import linked

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)

#: Where on the page the first point at or after ``x`` of trace ``curve`` is drawn (on the
#: trace's own axes, linear or log).
POINT_JS = """(plot, [x, curve]) => {
  const trace = plot._fullData[curve];
  const xs = Array.from(trace.x);
  const i = xs.findIndex((value) => value >= x);
  const suffix = (trace.xaxis || "x").slice(1);
  const xaxis = plot._fullLayout["xaxis" + suffix], yaxis = plot._fullLayout["yaxis" + suffix];
  const y = yaxis.type === "log" ? Math.log10(trace.y[i]) : trace.y[i];
  const box = plot.getBoundingClientRect();
  return [box.left + xaxis._offset + xaxis.l2p(xs[i]), box.top + yaxis._offset + yaxis.l2p(y)];
}"""


def _click(app: AppPage, chart: int, x: float, curve: int) -> None:
    plot = app.page.locator(".js-plotly-plot").nth(chart)
    plot.scroll_into_view_if_needed()
    left, top = plot.evaluate(POINT_JS, [x, curve])
    app.page.mouse.move(left, top)  # Plotly clicks the point it hovers: wait for its label
    plot.locator(".hoverlayer .hovertext").first.wait_for()
    since = app.page.evaluate("performance.now()")
    app.page.mouse.click(left, top)
    app.wait_settled(since, some=True)  # the clicked chart itself is not drawn again


#: A spot near the top right corner of the first subplot where a double click reaches the plot
#: area itself (Plotly's "nsewdrag"), not the drag handle of an axis: on a chart of several
#: subplots, such as the unit circles, the next subplot's y axis handle lies along the edge.
EMPTY_CORNER_JS = """(plot) => {
  const box = plot.getBoundingClientRect();
  const x = plot._fullLayout.xaxis, y = plot._fullLayout.yaxis;
  for (const inset of [5, 15, 25, 40]) {
    const spot = [box.left + x._offset + x._length - inset, box.top + y._offset + inset];
    if (document.elementFromPoint(...spot)?.classList.contains("nsewdrag")) return spot;
  }
  return null;
}"""


def _clear(app: AppPage, chart: int) -> None:
    """A double click on the chart away from its points: Plotly clears the selection."""
    plot = app.page.locator(".js-plotly-plot").nth(chart)
    box = plot.evaluate(EMPTY_CORNER_JS)
    assert box is not None, "no spot of the plot area near its top right corner"
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
    app.open("similarity?L=2048&d=512")  # the image of a sampled matrix
    _click(app, 0, 300, 0)  # the closed form's line, near offset 300 (the matrix is an image)
    _wait_for_caption(app, "(clicked): cosine")
    offset = int(_captions(app).split("Offset δ = ")[1].split(" ")[0].replace(",", ""))
    assert 290 <= offset <= 310
    # Two dashed diagonals in the matrix (2,048 positions sampled every 4: position p at cell
    # p / 4 + 0.5), each from the first shown position to the last.
    cell = lambda p: p / 4 + 0.5  # noqa: E731
    assert _diagonals(app) == [
        [cell(offset), cell(0), cell(2044), cell(2044 - offset)],
        [cell(0), cell(offset), cell(2044 - offset), cell(2044)],
    ]
    _clear(app, 0)
    _wait_for_caption(app, "(clicked)", shown=False)
    assert _diagonals(app) == []
    assert app.problems() == []


def _diagonals(app: AppPage) -> list[list[float]]:
    """The diagonals the similarity image draws, as the dashed lines on the page say."""
    lines = app.page.locator("[data-pe-image] .pe-diagonal")
    for i in range(lines.count()):
        assert lines.nth(i).get_attribute("stroke") == linked.CHOSEN_COLOUR
    return [
        [float(lines.nth(i).get_attribute(name)) for name in ("x1", "y1", "x2", "y2")]
        for i in range(lines.count())
    ]


def test_a_position_clicked_on_the_curves_is_drawn_in_the_chart_below(app: AppPage):
    app.open("sinusoids")
    _click(app, 0, 37, 1)  # the first curve's marker at position 37
    _wait_for_caption(app, "Position 37, clicked in the chart above, is drawn thick.")
    names = (
        app.page.locator(".js-plotly-plot")
        .nth(1)
        .evaluate("plot => plot.data.map((t) => [t.name, t.line && t.line.color])")
    )
    assert ["position 37 (chosen above)", linked.CHOSEN_COLOUR] in names
    _clear(app, 0)
    _wait_for_caption(app, "clicked in the chart above", shown=False)
    names = app.page.locator(".js-plotly-plot").nth(1).evaluate("p => p.data.map((t) => t.name)")
    assert "position 37 (chosen above)" not in names
    assert app.problems() == []


def test_a_position_clicked_stays_chosen_when_the_base_leaves_its_curve(app: AppPage):
    """Issue 51: dimension 0 (the view's default at d_model 64) is the same curve at every
    base, so a step of the base keeps its chart on the page, the clicked marker selected; the
    chart below keeps drawing that position (at the new base), as the caption says. It was
    dropped from the chart below while the marker stayed selected above."""
    app.open("sinusoids")
    _click(app, 0, 37, 1)
    _wait_for_caption(app, "Position 37, clicked in the chart above, is drawn thick.")
    above = app.page.locator(".js-plotly-plot").nth(0)
    above.evaluate("plot => { plot.__peKept = true; }")  # the same chart after the step
    app.step_slider("base (log scale)")
    assert above.evaluate("plot => plot.__peKept === true")
    assert above.evaluate("plot => plot.data[1].selectedpoints") == [37]
    assert "Position 37, clicked in the chart above, is drawn thick." in _captions(app)
    names = app.page.locator(".js-plotly-plot").nth(1).evaluate("p => p.data.map((t) => t.name)")
    assert "position 37 (chosen above)" in names
    assert app.problems() == []


def _shapes(app: AppPage, chart: int) -> list[list]:
    return (
        app.page.locator(".js-plotly-plot")
        .nth(chart)
        .evaluate("p => (p.layout.shapes || []).map((s) => [s.x0, s.x1, s.y0, s.y1])")
    )


def test_a_pair_clicked_on_the_circles_is_outlined_in_the_rotation_matrix(app: AppPage):
    app.open("rotation?d=512&rot_k=5")
    _click(app, 2, 0.5, 5)  # a point of the third circle: pair 64, outside the window 0-15
    _wait_for_caption(app, "Pair 64 (sin column 128, cos column 129), clicked on the circles")
    assert app.page.get_by_label("First pair shown in M (16 of 256)").input_value() == "64"
    assert _shapes(app, 0) == [[-0.5, 1.5, -0.5, 1.5]]  # its 2x2 block, first in the window
    _clear(app, 2)
    _wait_for_caption(app, "clicked on the circles below", shown=False)
    assert _shapes(app, 0) == []
    assert app.problems() == []


def test_a_rope_pair_clicked_is_shaded_in_the_layouts_chart(app: AppPage):
    app.open("rope?d=512")
    _click(app, 0, 3, 1)  # pair 3's marker on the wavelength chart (head of 512 columns)
    _wait_for_caption(app, "Pair 3 (unchanged), clicked")
    assert "6.9993" in _captions(app)  # λ_3 = 2π / 10000^(-6/512)
    # Its columns among the first 16: 3 (halves; 259 is beyond) and 6, 7 (interleaved).
    assert _shapes(app, 3) == [[2.5, 3.5, 0, 1], [5.5, 6.5, 0, 1], [6.5, 7.5, 0, 1]]
    _clear(app, 0)
    _wait_for_caption(app, "Click a pair's marker")
    assert _shapes(app, 3) == []
    assert app.problems() == []
