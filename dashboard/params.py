"""Shareable parameters: each declared once, as the widget that shows it, bound to the URL.

A parameter is a small frozen description of one widget (its key, label, default and rule:
bounds, options or a parser). ``widget()`` draws it with ``bind="query-params"``, so Streamlit
itself keeps the address bar and the widget in step and drops the parameters of views that are
not on screen. The same description checks a link's raw values once per session
(:func:`check_link`): a bad value gets a warning that names it and the value used instead, and
the link is put right before any widget takes a value from it.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

import pe_core
from dashboard import formatting, state
from dashboard.formatting import escape_markdown

#: Bounds, options or defaults that depend on the shared parameters (the last position is L - 1).
Dynamic = Callable[[Any], Any]


def _resolve(value, config):
    return value(config) if callable(value) else value


def _format(value: Any) -> str:
    """A value as the warnings show it."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:,g}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_format(v) for v in value) or "none"
    return str(value) or "an empty value"


#: Most digits read as an integer. Longer integer text is beyond every range and never
#: converted: Python's int() of a few hundred digits gives an int too large for a float
#: (math.isfinite raises OverflowError) and of more than 4,300 digits raises on 3.11+ only, so no
#: answer here depends on the interpreter's limits.
MAX_NUMBER_CHARS = 64
_INTEGER_TEXT = re.compile(r"([+-]?)0*([0-9]+)")


def _read_number(text: str, integer: bool) -> float | int:
    """The number ``text`` stands for, ±inf for integer text of more than
    :data:`MAX_NUMBER_CHARS` digits (out of every range); raises ValueError when it is not a
    number (not an integer, with ``integer``)."""
    text = text.strip()
    whole = _INTEGER_TEXT.fullmatch(text)
    if whole:
        sign, digits = whole.groups()
        if len(digits) > MAX_NUMBER_CHARS:
            return -math.inf if sign == "-" else math.inf
        text = sign + digits
    elif integer and len(text) > MAX_NUMBER_CHARS:
        raise ValueError("not an integer")  # never handed to int(), whatever its length
    # float() reads text of any length on every Python version (inf when too large).
    return int(text) if integer else float(text)


class Invalid(pe_core.InputError):
    """A raw URL value that breaks the parameter's rule; the message says which rule."""


@dataclass(frozen=True)
class Param:
    """One shareable parameter. Subclasses know their widget and their rule.

    ``follows`` names the shared parameters (URL keys) its default depends on: a preset that
    sets one of them puts this one back to its default, unless the preset sets it too (the
    Sinusoids page's columns follow d_model, its positions follow L).
    """

    key: str
    label: str
    default: Any
    help: str | None = None
    follows: tuple[str, ...] = ()

    def parse(self, raw: list[str], config) -> Any:
        """The value a link's raw text stands for; raises :class:`Invalid` naming the rule."""
        raise NotImplementedError

    def correction(self, raw: list[str], config) -> Any:
        """The value to use for a bad raw value (the default unless a rule says better)."""
        return _resolve(self.default, config)

    def to_url(self, value: Any) -> str | list[str]:
        """The text the bound widget writes into the URL for ``value``."""
        return str(value)

    def value(self, config=None) -> Any:
        """The current value; before the widget has been drawn, what the link asks for (the
        widget will take it from there) or the default."""
        current = st.session_state.get(self.key)
        if current is None:
            current = link_value(self, config)
        return _resolve(self.default, config) if current is None else current


@dataclass(frozen=True)
class Number(Param):
    """A number input. ``low`` and ``high`` may depend on the shared parameters.

    With ``bounded_widget=False`` the widget carries no bounds (the browser would keep an
    out-of-range value in the box, outlined in red, while the old one stays in force): a value
    typed outside them is brought back in by a callback, with a note, so the box always shows
    the value in use.
    """

    low: float | Dynamic = 0
    high: float | Dynamic = math.inf
    step: float = 1
    integer: bool = True
    bounded_widget: bool = True
    format: str | None = None

    def bounds(self, config) -> tuple[float, float]:
        return _resolve(self.low, config), _resolve(self.high, config)

    def parse(self, raw, config):
        try:
            number = _read_number(raw[-1], self.integer)
        except ValueError:
            kind = "an integer" if self.integer else "a number"
            raise Invalid(f"not {kind}") from None
        low, high = self.bounds(config)
        if not (math.isfinite(number) and low <= number <= high):
            raise Invalid(f"out of range, expected {_format(low)} to {_format(high)}")
        return number

    def correction(self, raw, config):
        """The nearest allowed value, as for a value typed into the box (the default for text
        that is not a number)."""
        low, high = self.bounds(config)
        try:
            number = _read_number(raw[-1], integer=False)
        except ValueError:
            return _resolve(self.default, config)
        if math.isnan(number) or (
            math.isinf(number) and not _INTEGER_TEXT.fullmatch(raw[-1].strip())
        ):
            return _resolve(self.default, config)  # "inf", "nan": not a number a person typed
        return self._typed(min(max(number, low), high))

    def to_url(self, value) -> str:
        return str(int(value)) if self.integer else formatting.number_text(value)

    def widget(self, config=None, container=None, label=None, **options) -> Any:
        low, high = self.bounds(config)
        self.keep_in_range(config)
        kwargs = dict(
            # The URL omits the widget's default; within bounds it must be (a view's default
            # position may lie beyond a short sequence).
            value=self._typed(min(max(_resolve(self.default, config), low), high)),
            step=int(self.step) if self.integer else float(self.step),
            key=self.key,
            help=self.help,
            bind="query-params",
            format=self.format,
            **options,
        )
        if self.bounded_widget:
            kwargs.update(min_value=self._typed(low), max_value=self._typed(high))
        else:
            kwargs.update(on_change=self._bring_into_range, args=(config,))
        value = (container or st).number_input(label or self.label, **kwargs)
        if not self.bounded_widget and self.key in _notes():
            (container or st).caption(f":orange[{_notes()[self.key]}]")
        return value

    def _typed(self, number):
        return int(number) if self.integer else float(number)

    def keep_in_range(self, config) -> None:
        """Before the widget: a value left over from other shared parameters (a first position
        beyond a smaller L) is moved into the current bounds."""
        current = st.session_state.get(self.key)
        low, high = self.bounds(config)
        if current is not None and not low <= current <= high:
            st.session_state[self.key] = self._typed(min(max(current, low), high))

    def _bring_into_range(self, config) -> None:
        typed = st.session_state.get(self.key)
        low, high = self.bounds(config)
        _notes().pop(self.key, None)
        if typed is None:
            st.session_state[self.key] = _resolve(self.default, config)
            _notes()[self.key] = f"{self.label} cannot be empty: using {_format(self.default)}."
        elif not low <= typed <= high:
            st.session_state[self.key] = self._typed(min(max(typed, low), high))
            _notes()[self.key] = (
                f"{self.label} must be between {_format(low)} and {_format(high)}: using "
                f"{_format(st.session_state[self.key])} instead of {_format(typed)}."
            )


def _notes() -> dict[str, str]:
    return st.session_state.setdefault(state.RANGE_NOTES, {})


@dataclass(frozen=True)
class Choice(Param):
    """One of a list of options: a selectbox, a segmented control or a select slider.

    A bound widget writes an option's label (``format_func``) into the URL, so labels are
    short stable words (the options themselves, or numbers written as a link writes them).
    """

    options: Sequence[Any] | Dynamic = ()
    kind: str = "selectbox"  # "selectbox", "segmented" or "select_slider"
    format_func: Callable[[Any], str] = str
    #: How a raw URL value becomes an option (str for text options, float for numbers).
    convert: Callable[[str], Any] = str

    def choices(self, config) -> list[Any]:
        return list(_resolve(self.options, config))

    def parse(self, raw, config):
        value = raw[-1]
        if len(value) <= MAX_NUMBER_CHARS:  # longer text is no option (see _read_number)
            with contextlib.suppress(ValueError):
                value = self.convert(value)
        if value not in self.choices(config):
            shown = ", ".join(_format(c) for c in self.choices(config)[:12])
            raise Invalid(f"expected one of {shown}")
        return value

    def to_url(self, value) -> str:
        return self.format_func(value)

    def widget(self, config=None, container=None, label=None, **options) -> Any:
        place, label = container or st, label or self.label
        choices = self.choices(config)
        default = _resolve(self.default, config)  # a bound widget's URL omits its default
        common = dict(key=self.key, help=self.help, bind="query-params", **options)
        if self.kind == "segmented":
            return place.segmented_control(
                label,
                options=choices,
                format_func=self.format_func,
                required=True,
                default=default,
                **common,
            )
        if self.kind == "select_slider":
            return place.select_slider(
                label, options=choices, format_func=self.format_func, value=default, **common
            )
        return place.selectbox(
            label,
            options=choices,
            format_func=self.format_func,
            index=choices.index(default),
            **common,
        )


@dataclass(frozen=True)
class Toggle(Param):
    def parse(self, raw, config):
        if raw[-1].lower() not in ("true", "false"):
            raise Invalid("expected true or false")
        return raw[-1].lower() == "true"

    def to_url(self, value) -> str:
        return "true" if value else "false"

    def widget(self, config=None, container=None, **options) -> Any:
        return (container or st).toggle(
            self.label,
            value=self.default,
            key=self.key,
            help=self.help,
            bind="query-params",
            **options,
        )


@dataclass(frozen=True)
class Slider(Param):
    low: float = 0.0
    high: float = 1.0
    step: float = 0.1

    def parse(self, raw, config):
        try:
            number = _read_number(raw[-1], integer=False)
        except ValueError:
            raise Invalid(
                f"not a number, expected {_format(self.low)} to {_format(self.high)}"
            ) from None
        if not (math.isfinite(number) and self.low <= number <= self.high):
            raise Invalid(f"out of range, expected {_format(self.low)} to {_format(self.high)}")
        return number

    def to_url(self, value) -> str:
        return formatting.number_text(value)

    def widget(self, config=None, container=None, **options) -> Any:
        return (container or st).slider(
            self.label,
            min_value=self.low,
            max_value=self.high,
            step=self.step,
            value=self.default,
            key=self.key,
            help=self.help,
            bind="query-params",
            **options,
        )


@dataclass(frozen=True)
class Text(Param):
    """Free text, checked by ``rule`` (which raises :class:`pe_core.InputError` with the
    reason)."""

    max_chars: int = 200
    area: bool = False
    rule: Callable[[str, Any], Any] | None = None

    def parse(self, raw, config):
        text = raw[-1]
        if len(text) > self.max_chars:
            raise Invalid(f"longer than {self.max_chars} characters")
        if self.rule is not None:
            try:
                self.rule(text, config)
            except pe_core.InputError as error:
                raise Invalid(str(error)) from None
        return text

    def widget(self, config=None, container=None, **options) -> Any:
        make = (container or st).text_area if self.area else (container or st).text_input
        return make(
            self.label,
            value=_resolve(self.default, config),
            key=self.key,
            max_chars=self.max_chars,
            help=self.help,
            bind="query-params",
            **options,
        )


@dataclass(frozen=True)
class Multi(Param):
    """Several options (a multiselect), one URL value each (``dims=4&dims=5``). Links made
    before native binding wrote them comma-separated (``dims=4,5``); those still open with the
    same values."""

    options: Sequence[Any] | Dynamic = ()
    max_selections: int | None = None
    convert: Callable[[str], Any] = int

    def choices(self, config) -> list[Any]:
        return list(_resolve(self.options, config))

    def _values(self, raw) -> list[Any]:
        parts = [part.strip() for item in raw for part in item.split(",") if part.strip()]
        try:
            # Text longer than any option stays text, matching none (see _read_number).
            return [self.convert(p) if len(p) <= MAX_NUMBER_CHARS else p for p in parts]
        except ValueError:
            raise Invalid("expected values separated by commas, e.g. 0,1,4") from None

    def parse(self, raw, config):
        values = self._values(raw)
        allowed = set(self.choices(config))
        if not values or any(v not in allowed for v in values):
            if not allowed:
                shown = "none"
            elif all(isinstance(v, int) for v in allowed):
                shown = f"{min(allowed):,} to {max(allowed):,}"
            else:
                shown = ", ".join(str(v) for v in self.choices(config))
            raise Invalid(f"expected values from {shown}")
        if self.max_selections is not None and len(values) > self.max_selections:
            raise Invalid(f"at most {self.max_selections} values")
        return list(dict.fromkeys(values))

    def correction(self, raw, config):
        """The values that are allowed (duplicates and the excess dropped), else the default."""
        allowed = set(self.choices(config))
        try:
            values = [v for v in self._values(raw) if v in allowed]
        except Invalid:
            values = []
        values = list(dict.fromkeys(values))[: self.max_selections]
        return values or _resolve(self.default, config)

    def to_url(self, value) -> list[str]:
        return [str(v) for v in value]

    def widget(self, config=None, container=None, **options) -> Any:
        return (container or st).multiselect(
            self.label,
            options=self.choices(config),
            default=_resolve(self.default, config),
            max_selections=self.max_selections,
            key=self.key,
            help=self.help,
            bind="query-params",
            **options,
        )


@dataclass(frozen=True)
class Renamed:
    """A URL key that links had before its parameter took another: a link with ``old`` opens
    as if it named ``param`` with ``translate(raw)`` (the raw text in the new key's terms, such
    as a step's new number; text it does not know it returns as it is, for the check to judge).
    A view lists its renamed keys in ``RENAMED``."""

    old: str
    param: Param
    translate: Callable[[str], str]


# --- A link's values, checked once per session -------------------------------------------------


@dataclass
class LinkCheck:
    """What the check found in a link: warnings to show, and the link put right (valid values
    as their widgets write them, corrected values instead of bad ones, the rest dropped)."""

    warnings: list[str] = field(default_factory=list)
    query: dict[str, str | list[str]] = field(default_factory=dict)


#: Query parameters Streamlit reads itself (embedding), never ours to judge or drop.
RESERVED = ("embed", "embed_options")
#: Unknown URL parameters named in the warning; the rest are counted.
MAX_NAMED_UNKNOWN = 5


def check_link(
    on_screen: Sequence[Param], elsewhere: Sequence[Param], config, ignore: Sequence[str] = ()
) -> LinkCheck:
    """Check a link's raw values (on a session's first run, before any widget reads them).

    ``on_screen`` are the parameters of what the link opens (the sidebar's and its view's): they
    stay in the link, valid or corrected. ``elsewhere`` are other views' parameters: checked (a
    bad one gets a warning) but dropped, as Streamlit drops them when one leaves a view.
    ``config`` holds the shared values the link asks for (bounds may depend on them). Unknown
    keys get one warning, however many there are; keys in ``ignore`` are left to the caller.
    """
    shown = {p.key: p for p in on_screen}
    others = {p.key: p for p in elsewhere if p.key not in shown}
    found = LinkCheck()
    unknown = []
    for key in st.query_params:
        if key in ignore:
            continue
        if key in RESERVED:
            found.query[key] = st.query_params.get_all(key)
            continue
        param = shown.get(key) or others.get(key)
        if param is None:
            unknown.append(key)
            continue
        raw = st.query_params.get_all(key)
        try:
            value = param.parse(raw, config)
        except Invalid as error:
            value = param.correction(raw, config)
            text = escape_markdown(f"{key}={raw[-1][:40]}")
            found.warnings.append(
                f"Ignored URL parameter {text} ({param.label}: {error}); using "
                f"{escape_markdown(_format(value))} instead."
            )
        if key in shown and value != _resolve(param.default, config):
            found.query[key] = param.to_url(value)
    if unknown:
        named = ", ".join(escape_markdown(name[:40]) for name in unknown[:MAX_NAMED_UNKNOWN])
        more = len(unknown) - MAX_NAMED_UNKNOWN
        noun = "parameter" if len(unknown) == 1 else "parameters"
        found.warnings.append(
            f"Ignored unknown URL {noun} {named}"
            + (f" and {more:,} more" if more > 0 else "")
            + "."
        )
    return found


def link_value(param: Param, config=None) -> Any:
    """The value a link asks for (before its widget is drawn), or None when it asks for none or
    for a bad one: used where the widget's own options must include it (the base slider)."""
    if param.key not in st.query_params:
        return None
    try:
        return param.parse(st.query_params.get_all(param.key), config)
    except Invalid:
        return None


#: What ▶ Play offers, in positions per second.
PLAY_SPEEDS = (1, 2, 5, 10, 20)


def play_speed(key: str, where: str) -> Choice:
    """The speed of a view's ▶ Play, in positions per second; ``where`` says what it sweeps."""
    return Choice(
        key,
        "Play speed (positions per second)",
        5,
        options=PLAY_SPEEDS,
        kind="segmented",
        convert=int,
        help=f"How fast ▶ Play sweeps the position k {where} (in your browser).",
    )
