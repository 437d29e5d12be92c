"""The Lesson on paper: a worksheet for the class (each step's question with room to predict and
to sketch, no answers) and an answer key for the lecturer (the answers, the explanations, the
charts, the lecturer's notes, the recap with its misconceptions, and a formula sheet).

Each is one HTML file that prints offline with page breaks in sensible places: formulas as
MathML, charts as small SVG drawings (:mod:`dashboard.figures.svg`), no script.
"""

from __future__ import annotations

import html

from dashboard.figures.svg import figure_svg
from dashboard.latex_mathml import to_mathml
from dashboard.views.lesson.plan import STEPS
from dashboard.views.lesson.step import (
    Step,
    answer_of,
    explanation_of,
    figures_of,
    formula_of,
    notes_of,
    options_of,
    takeaway_of,
    text_of,
)
from dashboard.views.lesson.text import MISCONCEPTIONS, NOTATION_ROWS, check_questions

TITLE = "Positional encodings: a first lecture"

#: Screen and print: A4 and Letter both fit (the page's margins, not its size, are set).
STYLE = """
body { font-family: Helvetica, Arial, sans-serif; max-width: 46rem; margin: 2rem auto;
  padding: 0 1rem; line-height: 1.45; color: #1f2933; font-size: 15px; }
h1 { font-size: 1.7rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; margin: 1.6rem 0 0.4rem; break-after: avoid; }
h3 { font-size: 1.05rem; margin: 1rem 0 0.3rem; break-after: avoid; }
.lead { color: #4b5563; }
.step { break-inside: avoid; border-top: 1px solid #d1d5db; padding-top: 0.4rem; }
.formula { margin: 0.5rem 0; overflow-x: auto; font-size: 1.05rem; }
math { font-size: 1.05em; }
ol.options { list-style: upper-alpha; padding-left: 1.6rem; }
ol.options li { margin: 0.2rem 0; }
.write { border-bottom: 1px solid #9ca3af; height: 1.9rem; }
.sketch { border: 1px solid #9ca3af; border-radius: 4px; height: 7rem; position: relative;
  margin: 0.4rem 0 0.2rem; }
.sketch .x { position: absolute; bottom: 0.2rem; left: 0; right: 0; text-align: center;
  font-size: 0.8rem; color: #6b7280; }
.sketch .y { position: absolute; top: 0.3rem; left: 0.4rem; font-size: 0.8rem; color: #6b7280; }
.figure { break-inside: avoid; margin: 0.6rem 0; }
.notes { background: #f3f4f6; border-left: 4px solid #6b7280; padding: 0.4rem 0.7rem; }
.card { border: 1px solid #d1d5db; border-radius: 6px; padding: 0.3rem 0.8rem;
  margin: 0.5rem 0; break-inside: avoid; }
table.notation { border-collapse: collapse; margin: 0.4rem 0 1rem; }
table.notation td { padding: 0.15rem 0.6rem; border-bottom: 1px solid #e5e7eb;
  vertical-align: top; }
table.notation td:first-child { font-style: italic; white-space: nowrap; }
@page { margin: 16mm 14mm; }
@media print {
  body { margin: 0; max-width: none; font-size: 10.5pt; line-height: 1.35; }
  h2 { margin-top: 0.8rem; }
  .page { break-before: page; }
  a { color: inherit; text-decoration: none; }
}
"""


#: What only the answer key marks: the right answers.
KEY_STYLE = """
.right { font-weight: bold; }
.right::after { content: "  ✓ the answer"; font-weight: normal; color: #047857; }
"""


def _page(title: str, lead: str, body: list[str], style: str = "") -> str:
    return "\n".join(
        [
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
            f"<title>{html.escape(title)}</title><style>{STYLE}{style}</style></head><body>",
            f"<h1>{html.escape(title)}</h1><p class='lead'>{html.escape(lead)}</p>",
            *body,
            "</body></html>",
        ]
    )


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{html.escape(part)}</p>" for part in text.split("\n\n"))


def _notation() -> str:
    rows = "".join(
        f"<tr><td>{html.escape(symbol)}</td><td>{html.escape(meaning)}</td></tr>"
        for symbol, meaning in NOTATION_ROWS
    )
    return f"<h2>Notation</h2><table class='notation'>{rows}</table>"


def _formula(step: Step) -> str:
    return f"<div class='formula'>{to_mathml(formula_of(step))}</div>"


def _given(step: Step) -> str:
    """The values of a step's own inputs (the sentence the handout's numbers were drawn on)."""
    return "".join(
        f"<p><b>{html.escape(param.label)}:</b> {html.escape(str(value))}</p>"
        for param, value in zip(step.inputs, step.defaults(), strict=True)
    )


def _axis_titles(step: Step) -> tuple[str, str]:
    """The axes of the step's first chart, for a frame to sketch a prediction in (their titles
    say what is drawn, never what it shows)."""
    layout = figures_of(step)[0].to_plotly_json()["layout"]
    bottom = next(
        (k for k in sorted(layout) if k.startswith("xaxis") and layout[k].get("title")), ""
    )
    side = next((k for k in sorted(layout) if k.startswith("yaxis") and layout[k].get("title")), "")

    def title(key: str) -> str:
        text = ((layout.get(key) or {}).get("title") or {}).get("text") or ""
        return text.replace("<br>", " ")

    return title(bottom), title(side)


def worksheet() -> str:
    """The class's handout: the steps' questions with room for a prediction, a reason and a
    sketch, and the recap's questions with room to answer; no answer anywhere."""
    body = [_notation()]
    for number, step in enumerate(STEPS, start=1):
        x_title, y_title = _axis_titles(step)
        options = "".join(f"<li>{html.escape(option)}</li>" for option in options_of(step))
        body += [
            f"<section class='step'><h2>{number}. {html.escape(step.title)}</h2>",
            _paragraphs(text_of(step)),
            _given(step),
            _formula(step),
            f"<p><b>Predict:</b> {html.escape(step.question)}</p>",
            f"<ol class='options'>{options}</ol>",
            "<p>My prediction (letter) and why:</p><div class='write'></div>",
            "<p>Sketch what you expect the chart to show:</p>"
            f"<div class='sketch'><span class='y'>↑ {html.escape(y_title)}</span>"
            f"<span class='x'>{html.escape(x_title)} →</span></div>",
            "</section>",
        ]
    body.append("<section class='page'><h2>Check yourself</h2><ol>")
    for question, _ in check_questions():
        body.append(
            f"<li class='step'><p>{html.escape(question)}</p><div class='write'></div>"
            "<div class='write'></div></li>"
        )
    body.append("</ol></section>")
    return _page(
        f"{TITLE}: worksheet",
        "Predict before you look: write your answer and a reason, sketch the chart you "
        "expect, then compare with the screen.",
        body,
    )


def _formula_sheet() -> str:
    items = "".join(
        f"<li><b>{html.escape(step.title)}</b><div class='formula'>"
        f"{to_mathml(formula_of(step))}</div></li>"
        for step in STEPS
    )
    return f"<section class='page'><h2>Formula sheet</h2><ol>{items}</ol></section>"


def answer_key() -> str:
    """The lecturer's handout: each step with its right answer marked, the explanation, the
    chart, the takeaway and the notes; the recap's misconceptions and questions with their
    answers; the notation and a formula sheet."""
    body = [_notation()]
    for number, step in enumerate(STEPS, start=1):
        options = options_of(step)
        right = answer_of(step)
        items = "".join(
            f"<li{' class=right' if j == right else ''}>{html.escape(option)}</li>"
            for j, option in enumerate(options)
        )
        figures = "".join(f"<div class='figure'>{figure_svg(f)}</div>" for f in figures_of(step))
        body += [
            f"<section class='page'><h2>{number}. {html.escape(step.title)}</h2>",
            _paragraphs(text_of(step)),
            _given(step),
            _formula(step),
            f"<p><b>Predict:</b> {html.escape(step.question)}</p>",
            f"<ol class='options'>{items}</ol>",
            _paragraphs(explanation_of(step)),
            figures,
            f"<p><b>Takeaway:</b> {html.escape(takeaway_of(step))}</p>",
            f"<div class='notes'><b>Lecturer notes.</b> {html.escape(notes_of(step))}</div>",
            "</section>",
        ]
    body.append("<section class='page'><h2>Recap: what the lecture showed</h2><ol>")
    body += [
        f"<li><b>{html.escape(step.title)}</b> {html.escape(takeaway_of(step))}</li>"
        for step in STEPS
    ]
    body.append("</ol><h2>Misconceptions</h2>")
    body += [
        f"<div class='card'><h3>{html.escape(card.title)}</h3>{_paragraphs(card.text())}</div>"
        for card in MISCONCEPTIONS
    ]
    body.append("<h2>Check yourself, with answers</h2><ol>")
    body += [
        f"<li class='step'><p>{html.escape(question)}</p><p class='right'>"
        f"{html.escape(answer)}</p></li>"
        for question, answer in check_questions()
    ]
    body.append("</ol></section>")
    body.append(_formula_sheet())
    return _page(
        f"{TITLE}: answer key",
        "For the lecturer: each step's answer (marked ✓), the explanation and the chart as "
        "the app draws them, notes, the recap, and a formula sheet.",
        body,
        KEY_STYLE,
    )
