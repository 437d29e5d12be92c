"""The Lesson's formulas for print: the small subset of LaTeX they are written in, as MathML
that a browser typesets without any script (Chromium, Firefox and Safari draw MathML Core).

The page shows the same LaTeX with KaTeX (``st.latex``); the handouts are single files that
must print offline, so they get MathML. A command outside the subset raises ``ValueError``
naming it (the Lesson's tests convert every formula it has).
"""

from __future__ import annotations

import html
import re

#: Greek letters by name.
_GREEK = {
    name: chr(code)
    for name, code in {
        "alpha": 0x3B1, "beta": 0x3B2, "gamma": 0x3B3, "delta": 0x3B4, "epsilon": 0x3B5,
        "zeta": 0x3B6, "eta": 0x3B7, "theta": 0x3B8, "iota": 0x3B9, "kappa": 0x3BA,
        "lambda": 0x3BB, "mu": 0x3BC, "nu": 0x3BD, "xi": 0x3BE, "pi": 0x3C0, "rho": 0x3C1,
        "sigma": 0x3C3, "tau": 0x3C4, "phi": 0x3C6, "chi": 0x3C7, "psi": 0x3C8,
        "omega": 0x3C9, "Delta": 0x394, "Theta": 0x398, "Lambda": 0x39B, "Pi": 0x3A0,
        "Sigma": 0x3A3, "Phi": 0x3A6, "Omega": 0x3A9, "ell": 0x2113,
    }.items()
}  # fmt: skip
#: Operators and relations by command name.
_OPERATORS = {
    "cdot": "·", "times": "×", "approx": "≈", "ne": "≠", "neq": "≠", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "in": "∈", "notin": "∉", "to": "→", "pm": "±", "langle": "⟨",
    "rangle": "⟩", "lVert": "‖", "rVert": "‖", "Vert": "‖", "lvert": "|", "rvert": "|",
    "sum": "∑", "prod": "∏", "infty": "∞", "top": "⊤", "ldots": "…", "dots": "…",
    "cdots": "⋯", "lbrace": "{", "rbrace": "}", "{": "{", "}": "}",
}  # fmt: skip
#: Named functions, set upright.
_FUNCTIONS = {"sin", "cos", "tan", "exp", "log", "ln", "min", "max", "arg", "bmod", "mod"}
#: Spaces by command (em).
_SPACES = {",": 0.17, ";": 0.28, ":": 0.22, " ": 0.25, "quad": 1.0, "qquad": 2.0}
#: Commands that only size or style what follows: dropped.
_IGNORED = {
    "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
    "textstyle", "displaystyle", "!", "limits",
}  # fmt: skip
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([0-9]+(?:\.[0-9]+)?)|(\s+)|(.)", re.S)


def _tokens(latex: str) -> list[tuple[str, str]]:
    found = []
    for command, number, space, char in _TOKEN.findall(latex):
        if command:
            found.append(("cmd", command))
        elif number:
            found.append(("num", number))
        elif space:
            found.append(("space", " "))
        else:
            found.append(("chr", char))
    return found


class _Parser:
    def __init__(self, latex: str) -> None:
        self.tokens = _tokens(latex)
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        """The next token; spaces are skipped (math ignores them, text keeps them)."""
        while self.at < len(self.tokens) and self.tokens[self.at][0] == "space":
            self.at += 1
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, *, keep_space: bool = False) -> tuple[str, str]:
        token = self.tokens[self.at] if keep_space and self.at < len(self.tokens) else None
        token = token or self.peek()
        if token is None:
            raise ValueError("unexpected end of formula")
        self.at += 1
        return token

    def group_text(self) -> str:
        """The raw text of a {…} group (for \\text and \\mathrm), spaces kept as one."""
        if self.take() != ("chr", "{"):
            raise ValueError("expected { after a text command")
        depth, parts = 1, []
        while True:
            kind, value = self.take(keep_space=True)
            if (kind, value) == ("chr", "{"):
                depth += 1
            elif (kind, value) == ("chr", "}"):
                depth -= 1
                if depth == 0:
                    return "".join(parts)
            parts.append(value if kind != "cmd" else _GREEK.get(value, _OPERATORS.get(value, "")))
        # unreachable

    def expression(self, stop: tuple[str, ...] = ()) -> str:
        """Terms up to a closing brace, ``\\end``, ``&``, ``\\\\`` or a command in ``stop``."""
        parts = []
        while True:
            token = self.peek()
            if token is None or token == ("chr", "}") or token[1] in stop:
                return "".join(parts)
            if token in (("chr", "&"), ("cmd", "\\"), ("cmd", "end")):
                return "".join(parts)
            parts.append(self.term())

    def term(self) -> str:
        big = self.peek() in (("cmd", "sum"), ("cmd", "prod"))
        base = self.atom()
        sub = sup = None
        while self.peek() in (("chr", "_"), ("chr", "^")):
            kind = self.take()[1]
            argument = self.atom()
            if kind == "_":
                sub = argument
            else:
                sup = argument
        if big and sub is not None:  # a sum's index goes under it
            if sup is not None:
                return f"<munderover>{base}{sub}{sup}</munderover>"
            return f"<munder>{base}{sub}</munder>"
        if sub is not None and sup is not None:
            return f"<msubsup>{base}{sub}{sup}</msubsup>"
        if sub is not None:
            return f"<msub>{base}{sub}</msub>"
        if sup is not None:
            return f"<msup>{base}{sup}</msup>"
        return base

    def group(self) -> str:
        self.take()  # {
        inner = self.expression()
        if self.take() != ("chr", "}"):
            raise ValueError("unbalanced braces")
        return f"<mrow>{inner}</mrow>"

    def atom(self) -> str:
        kind, value = self.peek() or ("", "")
        if (kind, value) == ("chr", "{"):
            return self.group()
        self.take()
        if kind == "num":
            return f"<mn>{value}</mn>"
        if kind == "chr":
            if value.isalpha():
                return f"<mi>{html.escape(value)}</mi>"
            symbol = {"-": "−", "'": "′", "*": "∗"}.get(value, value)
            return f"<mo>{html.escape(symbol)}</mo>"
        return self.command(value)

    def command(self, name: str) -> str:
        if name in _GREEK:
            return f"<mi>{_GREEK[name]}</mi>"
        if name in _OPERATORS:
            return f"<mo>{html.escape(_OPERATORS[name])}</mo>"
        if name in _FUNCTIONS:
            word = "mod" if name == "bmod" else name
            return f'<mi mathvariant="normal">{word}</mi>'
        if name in _SPACES:
            return f'<mspace width="{_SPACES[name]}em"/>'
        if name in _IGNORED:
            return ""
        if name in ("mathrm", "operatorname", "mathbf", "mathit", "text"):
            text = html.escape(self.group_text())
            if name == "text":
                return f"<mtext>\u00a0{text}\u00a0</mtext>" if text.strip() else "<mtext> </mtext>"
            if name == "mathit":  # MathML Core sets a name of several letters upright
                return f'<mi style="font-style: italic">{text}</mi>'
            variant = "bold" if name == "mathbf" else "normal"
            return f'<mi mathvariant="{variant}">{text}</mi>'
        if name == "frac":
            return f"<mfrac>{self.atom()}{self.atom()}</mfrac>"
        if name == "sqrt":
            return f"<msqrt>{self.atom()}</msqrt>"
        if name == "begin":
            return self.environment(self.group_text())
        raise ValueError(f"the LaTeX command \\{name} is not in the subset the handouts typeset")

    def environment(self, name: str) -> str:
        if name not in ("pmatrix", "aligned", "gathered", "matrix"):
            raise ValueError(f"the LaTeX environment {name} is not in the subset")
        rows, cells = [], []
        while True:
            cells.append(f"<mtd>{self.expression()}</mtd>")
            token = self.take()
            if token == ("chr", "&"):
                continue
            rows.append(f"<mtr>{''.join(cells)}</mtr>")
            cells = []
            if token == ("cmd", "\\"):
                continue
            if token == ("cmd", "end"):
                self.group_text()
                break
            raise ValueError(f"unexpected {token[1]} in {name}")
        align = ' columnalign="right left"' if name == "aligned" else ""
        table = f"<mtable{align}>{''.join(rows)}</mtable>"
        if name == "pmatrix":
            return f'<mrow><mo stretchy="true">(</mo>{table}<mo stretchy="true">)</mo></mrow>'
        return table


def to_mathml(latex: str, *, display: bool = True) -> str:
    """``latex`` (the subset the Lesson uses) as a ``<math>`` element."""
    parser = _Parser(latex)
    body = parser.expression()
    if parser.peek() is not None:
        raise ValueError(f"unexpected {parser.peek()[1]!r} in the formula")
    mode = ' display="block"' if display else ""
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML"{mode}><mrow>{body}</mrow></math>'
