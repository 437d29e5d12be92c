"""The app's parameters: their defaults and rules, presets, and their round trip through the URL.

Every parameter a person would want in a shared link has one entry in :data:`PARAMS`. Its name is
both the widget key in ``st.session_state`` and the URL query parameter. On the first run of a
session the URL is read and checked (a bad value gives a warning and the default); after every
run :func:`sync_url` writes the non-default values back, so the address bar is always a link to
what is on screen.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

import pe_core
from dashboard.ui import escape_markdown

MAX_POSITIONS = 1_000_000
MAX_D_MODEL = 8192
MIN_BASE, MAX_BASE = 1.01, 1e9

VIEWS = {
    "heatmap": "Heatmap",
    "sinusoids": "Sinusoids",
    "wavelengths": "Wavelengths",
    "similarity": "Similarity",
    "uniqueness": "Uniqueness",
    "rotation": "Relative position",
    "embeddings": "Embeddings",
    "conventions": "Conventions",
    "example": "Worked example",
}
PRECISIONS = tuple(pe_core.PRECISIONS)
DEFAULT_SENTENCES = "the cat sat on the mat\na dog barked\nthe bird flew over the tall tree"
EMBEDDING_STDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
CASTS = pe_core.CASTS
SIMILARITY_KINDS = ("cosine", "dot", "distance")


def _int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"not an integer, expected {low:,} to {high:,}") from None
        if not low <= value <= high:
            raise ValueError(f"out of range, expected {low:,} to {high:,}")
        return value

    return parse


def _parse_base(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("not a number") from None
    if not (math.isfinite(value) and MIN_BASE <= value <= MAX_BASE):
        raise ValueError(f"out of range, expected {MIN_BASE} to {MAX_BASE:g}")
    return value


def _float_in(low: float, high: float) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"not a number, expected {low:g} to {high:g}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise ValueError(f"out of range, expected {low:g} to {high:g}")
        return value

    return parse


def _text(max_length: int) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if len(raw) > max_length:
            raise ValueError(f"longer than {max_length} characters")
        return raw

    return parse


def _one_of(choices) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return raw

    return parse


def _one_of_float(choices) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"expected one of {', '.join(map(str, choices))}") from None
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(map(str, choices))}")
        return value

    return parse


def _int_list(raw: str) -> list[int]:
    try:
        values = [int(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise ValueError("expected integers separated by commas, e.g. 0,1,4") from None
    if not values or len(values) > 12 or min(values) < 0 or max(values) >= MAX_POSITIONS:
        raise ValueError("expected 1 to 12 integers from 0 to 999,999")
    return sorted(set(values))


def _boolean(raw: str) -> bool:
    if raw not in ("true", "false"):
        raise ValueError("expected true or false")
    return raw == "true"


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}" if value == float(f"{value:g}") else repr(value)
    return str(value)


@dataclass(frozen=True)
class Param:
    """One shareable parameter: its URL/session key, default and parser."""

    key: str
    default: Any
    parse: Callable[[str], Any]
    label: str
    #: Another value that counts as the default (not written to the URL) given the others.
    fitted_default: Callable[[], Any] | None = None

    def is_default(self, current: Any) -> bool:
        fitted = self.fitted_default() if self.fitted_default else self.default
        return current in (self.default, fitted)


PARAMS: dict[str, Param] = {
    p.key: p
    for p in [
        Param("view", "heatmap", _one_of(tuple(VIEWS)), "view"),
        Param("L", 2048, _int_in(1, MAX_POSITIONS), "number of positions"),
        Param("d", 512, _int_in(1, MAX_D_MODEL), "d_model"),
        Param("base", 10000.0, _parse_base, "base"),
        Param("conv", "vaswani", _one_of(tuple(pe_core.CONVENTIONS)), "convention"),
        Param("hm_mode", "blocks", _one_of(("blocks", "window")), "heatmap rows"),
        Param("hm_start", 0, _int_in(0, MAX_POSITIONS - 1), "heatmap first position"),
        Param("hm_col", 0, _int_in(0, MAX_D_MODEL - 1), "heatmap first column"),
        # Fast to slow at the paper's d_model: wavelengths 6.3, 20, 63 and 628 positions.
        Param(
            "dims",
            [0, 64, 128, 256],
            _int_list,
            "dimensions",
            fitted_default=lambda: default_dims(int(value("d"))),
        ),
        Param("sin_from", 0, _int_in(0, MAX_POSITIONS - 1), "first position"),
        Param("sin_span", 100, _int_in(2, MAX_POSITIONS), "positions shown"),
        Param("at", [0, 1, 10, 50], _int_list, "positions"),
        Param("overlay", True, _boolean, "overlay conventions"),
        Param("sim_kind", "cosine", _one_of(SIMILARITY_KINDS), "similarity"),
        Param("sim_mode", "sampled", _one_of(("sampled", "window")), "similarity positions"),
        Param("sim_start", 0, _int_in(0, MAX_POSITIONS - 1), "similarity first position"),
        Param("prec", "float64", _one_of(PRECISIONS), "precision"),
        Param("cast", "outputs", _one_of(CASTS), "rounding at"),
        Param("rot_offset", 1.0, _float_in(-MAX_POSITIONS, MAX_POSITIONS), "offset"),
        Param("rot_k", 5, _int_in(0, MAX_POSITIONS - 1), "position k"),
        Param("rot_first", 0, _int_in(0, MAX_D_MODEL), "first pair of M"),
        Param("rot_pairs", [0, 16, 64, 160], _int_list, "pairs"),
        Param("emb_mode", "sentences", _one_of(("sentences", "random")), "embedding input"),
        Param("emb_text", DEFAULT_SENTENCES, _text(600), "sentences"),
        Param("emb_batch", 3, _int_in(1, 16), "batch"),
        Param("emb_seq", 8, _int_in(1, 256), "sequence length"),
        Param("emb_seed", 0, _int_in(0, 2**31 - 1), "embedding seed"),
        Param("emb_std", 0.02, _one_of_float(EMBEDDING_STDS), "embedding std"),
        Param("emb_scale", True, _boolean, "scale by sqrt(d_model)"),
        Param("emb_dropout", 0.0, _float_in(0.0, 0.9), "dropout"),
        Param("emb_dseed", 0, _int_in(0, 2**31 - 1), "dropout seed"),
        Param(
            "lab_other", "tensor2tensor", _one_of(tuple(pe_core.CONVENTIONS)), "compared convention"
        ),
    ]
}


@dataclass(frozen=True)
class Preset:
    """A named configuration that sets several parameters at once."""

    name: str
    values: dict[str, Any]
    note: str


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset(
            "Attention Is All You Need",
            {"L": 2048, "d": 512, "base": 10000.0, "conv": "vaswani"},
            "The paper's base model: d_model 512, base 10000.",
        ),
        Preset(
            "Tutorial",
            {"L": 10, "d": 4, "base": 100.0, "conv": "vaswani"},
            "Small enough to read every number.",
        ),
        Preset(
            "Lab", {"L": 128, "d": 256, "base": 10000.0, "conv": "vaswani"}, "A mid-size lab setup."
        ),
        Preset(
            "d2l",
            {"L": 60, "d": 32, "base": 10000.0, "conv": "vaswani"},
            "Dive into Deep Learning, 11.6.",
        ),
        Preset(
            "Annotated Transformer",
            {"L": 100, "d": 20, "base": 10000.0, "conv": "vaswani", "dims": [4, 5, 6, 7]},
            "The Annotated Transformer's sinusoid plot: dimensions 4 to 7.",
        ),
    ]
}
CUSTOM = "Custom"


def value(key: str) -> Any:
    """Current value of a parameter (its default until set, or when a control was cleared)."""
    current = st.session_state.get(key)
    return PARAMS[key].default if current is None else current


def init_from_url() -> None:
    """Once per session: move valid URL values into session state, collect warnings for the rest."""
    if st.session_state.get("_url_read"):
        return
    st.session_state["_url_read"] = True
    warnings = []
    unknown = []
    for key in st.query_params:
        raw = st.query_params.get(key, "")
        param = PARAMS.get(key)
        if param is None:
            unknown.append(key)
            continue
        try:
            st.session_state[key] = param.parse(raw)
        except ValueError as error:
            warnings.append(
                f"Ignored URL parameter {escape_markdown(f'{key}={raw[:40]}')} "
                f"({param.label}: {error}); using the default {_format_value(param.default)}."
            )
    if unknown:  # one warning, however many there are
        warnings.append(unknown_parameters_warning(unknown))
    for key, param in PARAMS.items():
        st.session_state.setdefault(key, param.default)
    st.session_state["_url_warnings"] = warnings


#: Unknown URL parameters named in the warning; the rest are counted.
MAX_NAMED_UNKNOWN = 5


def unknown_parameters_warning(names: list[str]) -> str:
    """One sentence for every unknown URL parameter: the first few named, the rest counted."""
    shown = ", ".join(escape_markdown(name[:40]) for name in names[:MAX_NAMED_UNKNOWN])
    more = len(names) - MAX_NAMED_UNKNOWN
    rest = f" and {more:,} more" if more > 0 else ""
    noun = "parameter" if len(names) == 1 else "parameters"
    return f"Ignored unknown URL {noun} {shown}{rest}."


def url_warnings() -> list[str]:
    return st.session_state.get("_url_warnings", [])


def dismiss_url_warnings() -> None:
    st.session_state["_url_warnings"] = []


def default_dims(d_model: int) -> list[int]:
    """The sinusoid view's default columns that exist at this d_model (else the first four)."""
    fitting = [j for j in PARAMS["dims"].default if j < d_model]
    return fitting or list(range(min(4, d_model)))


def sync_url() -> None:
    """Write every non-default parameter to the URL (only when something changed)."""
    wanted = {
        key: _format_value(value(key))
        for key, param in PARAMS.items()
        if not param.is_default(value(key))
    }
    if wanted != st.query_params.to_dict():
        st.query_params.from_dict(wanted)


def apply_preset() -> None:
    """Callback of the preset selector: set all of the preset's parameters at once."""
    preset = PRESETS.get(st.session_state.get("preset"))
    if preset is None:
        return
    for key, new_value in preset.values.items():
        st.session_state[key] = new_value
    if "dims" not in preset.values:
        st.session_state["dims"] = PARAMS["dims"].default


def matching_preset() -> str:
    """The preset whose values are all current, or ``CUSTOM``."""
    for preset in PRESETS.values():
        if all(value(key) == v for key, v in preset.values.items()):
            return preset.name
    return CUSTOM


#: The range of the numeric sidebar inputs (their widgets carry no bounds, see sidebar.py).
RANGES = {"L": (1, MAX_POSITIONS), "d": (1, MAX_D_MODEL)}


def keep_in_range(key: str) -> None:
    """Callback of a numeric input: a typed value outside its range is replaced by the nearest
    allowed one (a cleared box by the default), with a note saying so."""
    low, high = RANGES[key]
    typed = st.session_state.get(key)
    notes = st.session_state.setdefault("_range_notes", {})
    notes.pop(key, None)
    if typed is None:
        st.session_state[key] = PARAMS[key].default
        notes[key] = f"{PARAMS[key].label} cannot be empty: using {PARAMS[key].default:,}."
    elif not low <= typed <= high:
        st.session_state[key] = min(max(int(typed), low), high)
        notes[key] = (
            f"{PARAMS[key].label} must be between {low:,} and {high:,}: using "
            f"{st.session_state[key]:,} instead of {typed:,}."
        )


def range_note(key: str) -> str:
    """The note left by :func:`keep_in_range` for ``key`` ("" if the value was in range)."""
    return st.session_state.get("_range_notes", {}).get(key, "")


def clamp(key: str, low: int, high: int) -> int:
    """Keep a parameter inside bounds that depend on other parameters (before its widget)."""
    current = min(max(value(key), low), high)
    st.session_state[key] = current
    return current
