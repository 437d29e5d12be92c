"""The mark after the page's first chart (ui.chart_shown): page.css puts the explanation under
the chart by it, with no :has() over a row's subtree (issue 51). It must stand in the page's
column right after the row that holds the first chart, once, wherever that chart is drawn."""

from __future__ import annotations

import pytest

from dashboard import ui
from tests.apptest_helpers import new_app, no_errors


def _rows(at) -> list:
    return list(at.main.children.values())


def _row_keys(node) -> set[str]:
    """The keys of the elements and blocks in a row (itself included)."""
    keys, stack = set(), [node]
    while stack:
        item = stack.pop()
        key = getattr(item, "key", None) or getattr(getattr(item, "proto", None), "id", "")
        if key:
            keys.add(str(key).rsplit("-", 1)[-1])
        stack.extend(getattr(item, "children", {}).values())
    return keys


#: Each page and its first chart's key: on its own (Wavelengths, Conventions), in a fragment
#: (Sinusoids: Plotly; the Heatmap: an image), in a column (Relative position).
FIRST_CHARTS = {
    "wavelengths": "wavelengths_main",
    "conventions": "lab_panels",
    "sinusoids": "sinusoids_position",
    "heatmap": "heatmap_main",
    "rotation": "rotation_matrix",
}


@pytest.mark.parametrize("slug", list(FIRST_CHARTS))
def test_the_mark_follows_the_row_of_the_first_chart(slug):
    at = new_app(view=slug)
    at.run()
    no_errors(at)
    rows = _rows(at)
    marks = [i for i, row in enumerate(rows) if ui.FIRST_CHART_MARK in _row_keys(row)]
    assert len(marks) == 1, [sorted(_row_keys(r)) for r in rows]
    (mark,) = marks
    holder = next(i for i, row in enumerate(rows) if FIRST_CHARTS[slug] in _row_keys(row))
    between = [_row_keys(row) for row in rows[holder + 1 : mark]]
    # Only the chart's own link between them, when it is a row of the column too: it stays with
    # its chart, above the explanation.
    assert all(
        keys <= {"html_" + FIRST_CHARTS[slug], "png_" + FIRST_CHARTS[slug]} for keys in between
    )
    assert len(between) <= 1 and mark > holder, (holder, mark, between)
    assert _row_keys(rows[mark]) == {ui.FIRST_CHART_MARK}  # the mark's row holds the mark only
    explanation = next(
        i for i, row in enumerate(rows) if any(k.startswith("explain_") for k in _row_keys(row))
    )
    assert explanation < holder


def test_a_page_without_a_chart_has_no_mark():
    at = new_app(view="example")
    at.run()
    no_errors(at)
    assert not any(ui.FIRST_CHART_MARK in _row_keys(row) for row in _rows(at))
