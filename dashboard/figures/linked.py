"""Linked highlighting: what a click in one chart of a view chose, drawn in another (a colour,
the style of a clicked point, outlines and bands over a chart)."""

from __future__ import annotations

from collections.abc import Sequence

#: Colour of what was chosen in another chart of the view (linked highlighting): an amber that
#: reads on white, on the dark theme and over the red and blue of the heatmaps.
CHOSEN_COLOUR = "#f59e0b"
#: How a clicked point is drawn (Plotly's selected and unselected styles): in the chosen
#: colour, for a line's hidden markers (the others stay hidden) and for visible markers (the
#: others unchanged: Plotly would fade them).
CLICKED_MARKER = {
    "selected": {"marker": {"opacity": 1, "size": 12, "color": CHOSEN_COLOUR}},
    "unselected": {"marker": {"opacity": 0}},
}
CLICKED_VISIBLE_MARKER = {
    "selected": {"marker": {"opacity": 1, "size": 11, "color": CHOSEN_COLOUR}},
    "unselected": {"marker": {"opacity": 1}},
}


def block_outline(indices: Sequence[int], columns: Sequence[int]) -> list[dict]:
    """Outlines over a :func:`~dashboard.figures.relative.rotation_heatmap` of rows and
    columns ``indices`` around the cells where the rows and the columns ``columns`` meet (one
    pair's 2x2 block): one square when those columns are neighbours in the window, one square
    per cell otherwise (the split layout puts a pair's sin and cos apart); none when a column
    is not in the window."""
    where = {column: n for n, column in enumerate(indices)}
    if not columns or any(column not in where for column in columns):
        return []
    shown = sorted(where[column] for column in columns)
    line = {"color": CHOSEN_COLOUR, "width": 3}
    if shown[-1] - shown[0] == len(shown) - 1:
        spans = [(shown[0], shown[-1])]  # neighbours: one square around them all
    else:
        spans = [(cell, cell) for cell in shown]
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "y",
            "x0": x0 - 0.5,
            "x1": x1 + 0.5,
            "y0": y0 - 0.5,
            "y1": y1 + 0.5,
            "line": line,
        }
        for y0, y1 in spans
        for x0, x1 in spans
    ]


def column_bands(columns: Sequence[int], n_shown: int) -> list[dict]:
    """Amber bands behind the given columns of a chart whose x axis counts the columns
    0 .. ``n_shown``-1 (the columns another chart of the view chose); those beyond, none."""
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": column - 0.5,
            "x1": column + 0.5,
            "y0": 0,
            "y1": 1,
            "fillcolor": CHOSEN_COLOUR,
            "opacity": 0.25,
            "line": {"width": 0},
            "layer": "below",
        }
        for column in columns
        if 0 <= column < n_shown
    ]
