"""The sidebar shared by every view: presets, positions, d_model, base, convention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

import pe_core
from dashboard import formatting, params, state
from dashboard.config import Config

MAX_POSITIONS = 1_000_000
MAX_D_MODEL = 8192
MIN_BASE, MAX_BASE = 1.01, 1e9

#: The base control's stops: 1-2-5 steps on a log scale.
BASE_STOPS = tuple(
    float(m * 10.0**e) for e in range(0, 9) for m in (1, 2, 5) if 2 <= m * 10.0**e <= 1e8
)


def base_options(current: float | None) -> list[float]:
    """The log-scale stops, plus the current value if a link or preset chose another one."""
    return sorted(set(BASE_STOPS) | ({float(current)} if current else set()))


def _base_choices(_config=None) -> list[float]:
    current = st.session_state.get(BASE.key)
    if current is None:  # the first run: the link may ask for a base between the stops
        current = params.link_value(BASE_FROM_LINK)
    return base_options(current)


#: What a page opens on when a link names no values: small enough that the heatmap shows every
#: position and every column (300 x 64: one row a pixel, the slow columns visible), long enough
#: that bfloat16 position ids collide (from 256 on, on the Uniqueness page). The paper's 2,048 x
#: 512 is one click away (PAPER_BUTTON), and a link that names its values opens them.
DEFAULT_POSITIONS, DEFAULT_D_MODEL = 300, 64

POSITIONS = params.Number(
    "L",
    "Number of positions L",
    DEFAULT_POSITIONS,
    help="Positions 0 to L−1 (1 to 1,000,000). The paper's model: 2,048.",
    low=1,
    high=MAX_POSITIONS,
    bounded_widget=False,
)
D_MODEL = params.Number(
    "d",
    "d_model",
    DEFAULT_D_MODEL,
    help="Width of the encoding (1 to 8,192). The − and + buttons step by 2, so an even d_model "
    "stays even; odd values follow the convention's rule. The paper's model: 512.",
    low=1,
    high=MAX_D_MODEL,
    step=2,
    bounded_widget=False,
)
BASE = params.Choice(
    "base",
    "base (log scale)",
    10000.0,
    help="Sets how slowly the last pairs turn: the longest wavelength is at most 2π·base "
    "(tensor2tensor's spacing reaches it; the paper's approaches it as d_model grows). "
    "10,000 in the paper.",
    options=_base_choices,
    kind="select_slider",
    format_func=formatting.number_text,  # also the URL's text: base=10000, as links always had it
    convert=float,
)
#: The base as a link gives it, before the slider exists (any value in range, not only stops).
BASE_FROM_LINK = params.Number("base", "base", 10000.0, low=MIN_BASE, high=MAX_BASE, integer=False)
CONVENTION = params.Choice("conv", "Convention", "vaswani", options=tuple(pe_core.CONVENTIONS))
PRESENT = params.Toggle(
    "present",
    "Presentation mode",
    False,
    help="Larger text and taller charts, for a projector. A link with it opens with the "
    "sidebar closed.",
)
PARAMS = (POSITIONS, D_MODEL, BASE, CONVENTION, PRESENT)
#: What a link's values are checked against (the base: any value in range, not only the stops).
LINK_PARAMS = (POSITIONS, D_MODEL, BASE_FROM_LINK, CONVENTION, PRESENT)


def presenting() -> bool:
    """Whether presentation mode is on (what the link asks for before the toggle is drawn)."""
    return bool(PRESENT.value())


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
#: The preset the sidebar's one button applies.
PAPER = PRESETS["Attention Is All You Need"]


def _apply_paper() -> None:
    """Callback of the paper's button: its configuration, as the preset sets it."""
    st.session_state[state.PRESET] = PAPER.name
    _apply_preset()


def current() -> Config:
    """The shared parameters in force (defaults before the sidebar has been drawn)."""
    return Config(
        int(POSITIONS.value()),
        int(D_MODEL.value()),
        float(BASE.value()),
        str(CONVENTION.value()),
    )


def from_link() -> Config:
    """The shared parameters a link asks for (their defaults where it asks for none or a bad
    value): the bounds of the views' parameters depend on them."""

    def linked(param, fallback):
        value = params.link_value(param)
        return fallback if value is None else value

    return Config(
        int(linked(POSITIONS, POSITIONS.default)),
        int(linked(D_MODEL, D_MODEL.default)),
        float(linked(BASE_FROM_LINK, BASE.default)),
        str(linked(CONVENTION, CONVENTION.default)),
    )


def _apply_preset() -> None:
    """Callback of the preset selector: set all of the preset's parameters at once."""
    preset = PRESETS.get(st.session_state.get(state.PRESET))
    if preset is None:
        return
    for key, new_value in preset.values.items():
        st.session_state[key] = new_value
    from dashboard import registry  # the pages import the sidebar: read them at call time

    for view in registry.VIEWS:
        for param in view.params:
            if param.key not in preset.values and set(param.follows) & set(preset.values):
                st.session_state.pop(param.key, None)  # its default, for the preset's values


def _matching_preset(config: Config) -> str:
    """The preset whose values are all current, or ``CUSTOM``."""
    shared = {"L": config.n_positions, "d": config.d_model, "base": config.base}
    shared["conv"] = config.convention
    for preset in PRESETS.values():
        if all(shared.get(key, st.session_state.get(key)) == v for key, v in preset.values.items()):
            return preset.name
    return CUSTOM


#: The sidebar's parameters by URL key, in the order they are drawn.
SHARED_WIDGETS = {param.key: param for param in (POSITIONS, D_MODEL, BASE, CONVENTION)}


def _keep(keys) -> None:
    """Values of parameters this page does not draw, kept for the pages that do (Streamlit
    forgets a widget's value when a run does not draw it)."""
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def render(view) -> None:
    """The sidebar of ``view`` (a :class:`dashboard.registry.View`): the preset and the shared
    parameters it reads, and no others; presentation mode everywhere."""
    shared = view.shared()
    _keep(key for key in SHARED_WIDGETS if key not in shared)
    with st.sidebar:
        if shared:
            st.header("Parameters")
        if set(shared) == set(SHARED_WIDGETS):
            st.session_state[state.PRESET] = _matching_preset(current())
            st.selectbox(
                "Preset",
                options=[CUSTOM, *PRESETS],
                key=state.PRESET,
                on_change=_apply_preset,
                help="Sets several parameters at once.",
            )
            preset = PRESETS.get(st.session_state[state.PRESET])
            if preset is not None:
                st.caption(preset.note)
            if preset is not PAPER:
                st.button(
                    "The paper's configuration (2,048 × 512)",
                    key="paper_configuration",
                    on_click=_apply_paper,
                    icon=":material/article:",
                    help="2,048 positions, d_model 512, base 10,000, as in Attention Is All "
                    "You Need: the preset of the same name.",
                )
        for key in SHARED_WIDGETS:
            if key in shared:
                SHARED_WIDGETS[key].widget()
        if CONVENTION.key in shared:
            convention = pe_core.CONVENTIONS[CONVENTION.value()]
            used_by = (
                f"Used by {', '.join(convention.libraries[:4])}."
                if convention.libraries
                else "No library we know of uses it."
            )
            st.caption(
                f"{convention.layout.capitalize()}: {convention.description} "
                f"{convention.formula}. {used_by}"
            )
        if shared:
            st.divider()
        PRESENT.widget()
        st.caption(
            "The address bar always holds a link to what you see: copy it to share this view "
            "with these parameters."
        )
