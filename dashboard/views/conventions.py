"""Conventions lab: the conventions side by side, what changes between them, who uses which."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import caching, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.figures import matrices, similarity
from dashboard.formatting import counted
from dashboard.view_parts.heatmap import heatmap_data
from dashboard.view_parts.wavelengths import wavelength_figure

PANEL_ROWS = 64
#: Columns in each panel: enough to see the layout (a 512-column panel 160 px wide is noise).
PANEL_COLUMNS = 32

OTHER = params.Choice(
    "lab_other", "Difference: current minus", "tensor2tensor", options=tuple(pe_core.CONVENTIONS)
)
PARAMS = (OTHER,)


def _names(**attributes) -> str:
    """The conventions with these attributes, by name ("vaswani, split")."""
    return ", ".join(
        name
        for name, convention in pe_core.CONVENTIONS.items()
        if all(getattr(convention, key) == value for key, value in attributes.items())
    )


def _same_frequencies_everywhere(config: Config) -> bool:
    """Whether every convention has the same frequencies at this d_model and base."""
    found = {
        tuple(pe_core.frequencies(config.d_model, base=config.base, convention=name).tolist())
        for name in pe_core.CONVENTIONS
    }
    return len(found) == 1


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"The conventions libraries use, side by side: {config.summary}."


def render(config: Config) -> None:
    ui.explain(
        f"Libraries write the same idea in {len(pe_core.CONVENTIONS)} ways. The layout decides "
        f"where the sin and cos columns go: interleaved ({_names(layout='interleaved')}) or in "
        f"two halves, the sin half first ({_names(layout='halves', first='sin')}) or the cos "
        f"half first ({_names(layout='halves', first='cos')}). The spacing decides the "
        f"frequencies: the paper's base^(−2i/d_model) ({_names(spacing='paper')}) or "
        "base^(−i/(h−s)) with h = ⌊d_model/2⌋, the shift s of diffusers' "
        f"get_timestep_embedding: s = 1 ({_names(spacing='shifted', shift=1.0)}) ends exactly "
        f"at 1/base (from d_model 4 on; below, one frequency, 1), s = 0 "
        f"({_names(spacing='shifted', shift=0.0)}) is the paper's spacing at even d_model. "
        "Changing the layout only permutes columns, so distances and similarities between "
        "positions do not change at all; changing the spacing changes the frequencies, and "
        "with them the similarity"
        + (
            f" (not here: at d_model {config.d_model} every convention has the same frequencies)."
            if _same_frequencies_everywhere(config)
            else "."
        ),
    )
    _side_by_side(config)
    _what_changes(config)
    _library_table()
    st.caption(
        "To check a table from your own code (its convention, base, arithmetic, and the usual "
        "mistakes), open **Check my encoding** in the navigation above."
    )


def _panel(config: Config, name: str) -> tuple[np.ndarray, int]:
    variant = Config(min(config.n_positions, PANEL_ROWS), config.d_model, config.base, name)
    data = heatmap_data(variant, "window", 0, 0)
    return data.values[:, :PANEL_COLUMNS], data.values.shape[0]


def _side_by_side(config: Config) -> None:
    st.subheader("The same positions under each convention")
    rows = min(config.n_positions, PANEL_ROWS)
    shown = min(config.d_model, PANEL_COLUMNS)
    if shown < config.d_model:
        columns = f"the first {shown} of {config.d_model:,} columns"
    else:
        columns = "the only column" if shown == 1 else f"all {shown} columns"
    st.caption(
        ("Position 0" if rows == 1 else f"Positions 0–{rows - 1}")
        + f" and {columns}: enough to see where each convention puts its sin and cos columns. "
        "Drag on a panel to zoom; the others follow."
    )
    ui.chart(caching.figure(_panels_figure, config), "lab_panels")
    st.markdown("\n".join(_layout_and_formula(name) for name in pe_core.CONVENTIONS))
    other = OTHER.widget(config, label=f"Difference: {config.convention} minus")
    ui.chart(caching.figure(_difference_figure, config, other), "lab_difference")


def _layout_and_formula(name: str) -> str:
    """A Markdown list item: where the convention puts its columns, and its frequencies."""
    convention = pe_core.CONVENTIONS[name]
    layout = (
        "sin and cos interleaved"
        if convention.layout == "interleaved"
        else f"two halves, the {convention.first} half first"
    )
    return f"- **{name}**: {layout}; `{convention.formula}`"


def _panels_figure(config: Config):
    return matrices.matrix_panels(
        {name: _panel(config, name)[0] for name in pe_core.CONVENTIONS},
        title="Each convention's columns at the same positions",
    )


def _difference_figure(config: Config, other: str):
    mine, n_rows = _panel(config, config.convention)
    theirs, _ = _panel(config, other)
    difference = mine.astype(np.float64) - theirs
    return matrices.matrix_heatmap(
        difference,
        rows=list(range(n_rows)),
        columns=list(range(difference.shape[1])),
        title=f"{config.convention} − {other}",
        subtitle=f"largest |difference| {np.max(np.abs(difference), initial=0):.3g} in the "
        f"{counted(n_rows, 'position')} and {counted(difference.shape[1], 'column')} shown",
        symmetric_range=2.0,
        height=340,
    )


#: Offsets of the similarity profiles compared (0 .. MAX_OFFSETS - 1 at most).
MAX_OFFSETS = 4096


def _what_changes(config: Config) -> None:
    st.subheader("Layout permutes columns; spacing changes the similarity")
    n_offsets = int(min(max(config.n_positions, 2), MAX_OFFSETS))
    # What this section computes depends on L only up to MAX_OFFSETS: every longer L shares it.
    capped = dataclasses.replace(config, n_positions=min(config.n_positions, MAX_OFFSETS))
    profiles = convention_profiles(capped, n_offsets)
    left, right = st.columns([2, 1])
    with left:
        if profiles:
            ui.chart(caching.figure(_profiles_figure, capped, n_offsets), "lab_profiles")
        else:
            st.info(_no_profile_reason(config))
    with right:
        for other in pe_core.CONVENTIONS:
            if other != config.convention:
                _compare(capped, other, profiles)
    ui.chart(caching.figure(_small_wavelength_figure, config), "lab_wavelengths")


def _compare(config: Config, other: str, profiles: dict[str, np.ndarray]) -> None:
    """What changes from the current convention to ``other``: only the layout (a permutation of
    the columns, the same similarity) or the frequencies (another similarity)."""
    mine = config.bank
    theirs = Config(config.n_positions, config.d_model, config.base, other).bank
    same_frequencies = np.array_equal(mine.frequencies, theirs.frequencies)
    lines = []
    if same_frequencies and mine.layout.n_sin == theirs.layout.n_sin:
        lines.append(
            f"entries differ by at most **{_amount(permutation_error(config, other))}** once "
            f"{config.convention}'s columns are permuted into its layout: the same numbers, in "
            "other columns"
        )
    if config.convention in profiles and other in profiles:
        # Said as what it is (issue 53, case 10): a largest difference of two curves, over the
        # offsets drawn, not a similarity.
        difference = float(np.max(np.abs(profiles[config.convention] - profiles[other])))
        last = profiles[other].size - 1
        shown = _amount(difference) if same_frequencies else f"{difference:.3g}"
        why = "same frequencies, another layout" if same_frequencies else "another spacing"
        lines.append(
            f"the similarity of positions k and k + offset differs by at most **{shown}** "
            f"(offsets 0 to {last:,}; {why})"
        )
    if lines:
        st.markdown(f"**{other}**: " + "; ".join(lines) + ".")


def _amount(value: float) -> str:
    """A difference that is often exactly zero: "0", else in scientific notation."""
    return "0" if value == 0 else f"{value:.1e}"


@cached
def convention_profiles(config: Config, n_offsets: int) -> dict[str, np.ndarray]:
    """Cosine similarity against offset for every convention whose closed form holds."""
    profiles = {}
    for name in pe_core.CONVENTIONS:
        bank = Config(config.n_positions, config.d_model, config.base, name).bank
        if bank.is_paired and bank.n_frequencies:
            profiles[name] = pe_core.offset_similarity(np.arange(n_offsets), bank)
    return profiles


@cached
def permutation_error(config: Config, other: str) -> float:
    """max |other - mine[:, p]| with ``p`` the column permutation between the two layouts."""
    rows = min(config.n_positions, 256)
    mine = config.bank
    theirs = Config(config.n_positions, config.d_model, config.base, other).bank
    permutation = theirs.layout.permutation_from(mine.layout)
    difference = (
        pe_core.sinusoidal_encoding(rows, theirs)
        - pe_core.sinusoidal_encoding(rows, mine)[:, permutation]
    )
    return float(np.max(np.abs(difference), initial=0.0))


def _no_profile_reason(config: Config) -> str:
    """Why no convention has a closed-form similarity profile at this d_model, per convention."""
    reasons = []
    for name, convention in pe_core.CONVENTIONS.items():
        layout = convention.column_layout(config.d_model)
        if layout.n_frequencies == 0:
            reasons.append(f"{name} has only a zero column (every encoding is the zero vector)")
        elif not layout.is_paired:
            reasons.append(f"{name} leaves its last sin column without a cos partner")
    return (
        f"No closed-form similarity against offset at d_model = {config.d_model}: "
        + "; ".join(reasons)
        + "."
    )


def _profiles_figure(config: Config, n_offsets: int):
    profiles = convention_profiles(config, n_offsets)
    return similarity.profiles_overlay(profiles, current=config.convention)


def _small_wavelength_figure(config: Config):
    return wavelength_figure(config, overlay=True, small=True)


def _library_table() -> None:
    table = pd.DataFrame(
        [
            {
                "convention": c.name,
                "layout": c.layout,
                "frequencies": c.formula,
                "odd d_model": c.odd_rule,
                "used by": ", ".join(c.libraries),
            }
            for c in pe_core.CONVENTIONS.values()
        ]
    ).set_index("convention")
    st.table(table)  # a static table wraps long cells ("used by") instead of cutting them
