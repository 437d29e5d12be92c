"""What the handouts are made of: LaTeX as MathML (dashboard/latex_mathml.py) and Plotly
figures as static SVG (dashboard/figures/svg.py), literal small cases first."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import plotly.graph_objects as go
import pytest

from dashboard.figures import charts, matrices
from dashboard.figures.svg import figure_svg
from dashboard.latex_mathml import to_mathml

MATH = "{http://www.w3.org/1998/Math/MathML}"


class TestToMathML:
    def test_a_fraction_a_subscript_and_a_greek_letter(self):
        math = to_mathml(r"\frac{2\pi}{\omega_i}")
        assert math.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">')
        assert "<mfrac><mrow><mn>2</mn><mi>π</mi></mrow><mrow><msub><mi>ω</mi><mi>i</mi>" in math

    def test_text_keeps_its_spaces_and_functions_are_upright(self):
        math = to_mathml(r"\sin^2 x \text{ for a pair}")
        assert '<msup><mi mathvariant="normal">sin</mi><mn>2</mn></msup>' in math
        assert "for a pair" in math

    def test_a_matrix_and_aligned_rows(self):
        math = to_mathml(r"\begin{pmatrix}a & b\\ c & d\end{pmatrix}")
        tree = ET.fromstring(math)
        assert len(tree.findall(f".//{MATH}mtr")) == 2
        assert len(tree.findall(f".//{MATH}mtd")) == 4

    def test_a_sum_takes_its_index_below(self):
        assert "<munder><mo>∑</mo><mi>i</mi></munder>" in to_mathml(r"\sum_i x")

    def test_a_command_outside_the_subset_is_named(self):
        with pytest.raises(ValueError, match=r"\\oint"):
            to_mathml(r"\oint x")

    def test_unbalanced_braces_are_refused(self):
        with pytest.raises(ValueError):
            to_mathml(r"\frac{a}{b")


def _svg(fig: go.Figure) -> ET.Element:
    return ET.fromstring(figure_svg(fig, width=600))


class TestFigureSVG:
    def test_a_line_is_drawn_at_its_values(self):
        fig = charts.curves(
            np.array([0.0, 10.0]), {"a": np.array([0.0, 1.0])}, title="t", x_title="x",
            y_title="y",
        )  # fmt: skip
        fig.update_layout(xaxis_range=[0, 10], yaxis_range=[0, 1])
        svg = _svg(fig)
        paths = [p for p in svg.iter("{http://www.w3.org/2000/svg}path")]
        assert len(paths) == 1
        (x0, y0), (x1, y1) = (
            tuple(map(float, point.split(",")))
            for point in re.findall(r"[ML]([-\d.]+,[-\d.]+)", paths[0].get("d"))
        )
        margin = fig.layout.margin
        assert x0 == pytest.approx(margin.l, abs=0.1) and x1 == pytest.approx(600 - margin.r)
        assert y0 > y1  # y grows upwards
        texts = " ".join(t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text"))
        assert "t" in texts and "x" in texts and "a" in texts  # title, axis, legend

    def test_a_missing_value_breaks_the_line(self):
        fig = charts.curves(
            np.arange(4.0), {"a": np.array([0.0, 1.0, np.nan, 3.0])}, title="t", x_title="x",
            y_title="y",
        )  # fmt: skip
        path = next(_svg(fig).iter("{http://www.w3.org/2000/svg}path")).get("d")
        assert path.count("M") == 2

    def test_a_heatmap_is_an_image_of_its_cells(self):
        fig = matrices.matrix_panels({"m": np.array([[1.0, -1.0], [0.0, 0.5]])}, title="t")
        images = list(_svg(fig).iter("{http://www.w3.org/2000/svg}image"))
        assert len(images) == 2  # the cells and the colour bar
        assert images[0].get("href").startswith("data:image/png;base64,")

    def test_a_trace_it_does_not_know_is_refused(self):
        with pytest.raises(ValueError, match="pie"):
            figure_svg(go.Figure(go.Pie(values=[1, 2])))


def test_a_curve_given_by_its_first_position_and_step_is_drawn_at_those_positions():
    """Issue 51: the sinusoids' smooth curves send ``x0`` and ``dx`` instead of their positions
    (and a trace with neither has Plotly's 0, 1, 2, ...): the handout draws the same curve."""
    y = np.sin(np.linspace(0, 6, 40))
    given = go.Figure(go.Scatter(x=2.5 + 0.25 * np.arange(40), y=y, mode="lines"))
    stepped = go.Figure(go.Scatter(x0=2.5, dx=0.25, y=y, mode="lines"))
    assert figure_svg(stepped) == figure_svg(given)
    counted = go.Figure(go.Scatter(x=np.arange(40.0), y=y, mode="lines"))
    assert figure_svg(go.Figure(go.Scatter(y=y, mode="lines"))) == figure_svg(counted)
