"""Conventions lab: the conventions side by side, and "identify my matrix"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import pe_core
from dashboard import compute, figures, ui, uploads
from dashboard.compute import Config
from dashboard.views.wavelengths import wavelength_figure

PANEL_ROWS = 64


def render(config: Config) -> None:
    ui.explain(
        "Libraries write the same idea in three ways. The layout decides where the sin and cos "
        "columns go: interleaved (vaswani) or in two halves (split, tensor2tensor). The spacing "
        "decides the frequencies: the paper's base^(−2i/d_model) (vaswani, split) or "
        "tensor2tensor's base^(−i/(h−1)), which ends exactly at 1/base. Changing the layout only "
        "permutes columns, so distances and similarities between positions do not change at "
        "all; changing the spacing changes the frequencies, and with them the similarity.",
    )
    _side_by_side(config)
    _what_changes(config)
    _library_table()
    st.divider()
    _identify()


def _panel(config: Config, name: str) -> tuple[np.ndarray, int]:
    variant = Config(min(config.n_positions, PANEL_ROWS), config.d_model, config.base, name)
    data = compute.heatmap_data(variant, "window", 0, 0)
    return data.values, data.values.shape[0]


def _side_by_side(config: Config) -> None:
    st.subheader("The same positions under each convention")
    panels = st.columns(len(pe_core.CONVENTIONS))
    for column, name in zip(panels, pe_core.CONVENTIONS, strict=True):
        with column:
            ui.chart(compute.figure(_panel_figure, config, name), f"lab_panel_{name}")
    other = st.selectbox(
        f"Difference: {config.convention} minus",
        options=[n for n in pe_core.CONVENTIONS],
        key="lab_other",
        persist_state="session",
    )
    ui.chart(compute.figure(_difference_figure, config, other), "lab_difference")


def _panel_figure(config: Config, name: str):
    values, n_rows = _panel(config, name)
    return figures.matrix_heatmap(
        values,
        rows=[f"position {k}" for k in range(n_rows)],
        columns=list(range(values.shape[1])),
        title=name,
        subtitle=pe_core.CONVENTIONS[name].formula,
        symmetric_range=1.0,
        height=340,
    )


def _difference_figure(config: Config, other: str):
    mine, n_rows = _panel(config, config.convention)
    theirs, _ = _panel(config, other)
    difference = mine.astype(np.float64) - theirs
    return figures.matrix_heatmap(
        difference,
        rows=[f"position {k}" for k in range(n_rows)],
        columns=list(range(difference.shape[1])),
        title=f"{config.convention} − {other}",
        subtitle=f"largest |difference| {np.max(np.abs(difference), initial=0):.3g}; "
        f"first {n_rows} positions",
        symmetric_range=2.0,
        height=340,
    )


def _what_changes(config: Config) -> None:
    st.subheader("Layout permutes columns; spacing changes the similarity")
    n_offsets = int(min(max(config.n_positions, 2), 4096))
    profiles = compute.convention_profiles(config, n_offsets)
    left, right = st.columns([2, 1])
    with left:
        if profiles:
            ui.chart(compute.figure(_profiles_figure, config, n_offsets), "lab_profiles")
        else:
            st.info(
                "No closed-form similarity for this d_model "
                "(an odd d_model leaves a sin column unpaired)."
            )
    with right:
        if config.d_model % 2 == 0:
            st.metric(
                "split vs permuted vaswani",
                f"{compute.layout_permutation_error(config):.1e}",
                help="Largest difference after permuting vaswani's columns into two halves: "
                "split exactly.",
            )
        if "vaswani" in profiles and "split" in profiles:
            same = float(np.max(np.abs(profiles["vaswani"] - profiles["split"])))
            st.metric(
                "Similarity: vaswani vs split",
                f"{same:.1e}",
                help="Largest difference of the cosine similarity against offset: "
                "same frequencies, different layout.",
            )
        if "vaswani" in profiles and "tensor2tensor" in profiles:
            changed = float(np.max(np.abs(profiles["vaswani"] - profiles["tensor2tensor"])))
            st.metric(
                "Similarity: vaswani vs tensor2tensor",
                f"{changed:.3g}",
                help="Largest difference of the cosine similarity against offset: "
                "different frequency spacing.",
            )
        ui.chart(compute.figure(_small_wavelength_figure, config), "lab_wavelengths")


def _profiles_figure(config: Config, n_offsets: int):
    profiles = compute.convention_profiles(config, n_offsets)
    return figures.profiles_overlay(profiles, current=config.convention)


def _small_wavelength_figure(config: Config):
    fig = wavelength_figure(config, overlay=True)
    return fig.update_layout(height=300, showlegend=False, title={"text": "Wavelengths"})


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
    )
    st.dataframe(table, hide_index=True, width="stretch")


def _identify() -> None:
    st.subheader("Identify my matrix")
    st.markdown(
        "Upload an encoding matrix with positions in rows (.npy, or .csv like this app's download) "
        "and the lab finds the convention, base and first position that explain it, or says that "
        "none does and where it differs."
    )
    upload = st.file_uploader(
        "Encoding matrix",
        type=["npy", "csv"],
        key="lab_upload",
        max_upload_size=uploads.MAX_BYTES // (1024 * 1024),
    )
    if upload is None:
        return
    data = upload.getvalue()
    try:
        with st.spinner("Fitting each convention…"):
            shape, found = compute.identify(data, upload.name)
    except uploads.UploadError as error:
        st.error(f"Cannot read {ui.escape_markdown(upload.name)}: {ui.escape_markdown(error)}.")
        return
    st.caption(f"{ui.escape_markdown(upload.name)}: {shape[0]:,} × {shape[1]:,} values.")
    if found.matches:
        st.success(f"Identified: {found.summary()}.")
    else:
        st.warning(found.summary().capitalize() + ".")
    table = pd.DataFrame(
        [
            {
                "convention": c.convention,
                "base": c.base,
                "first position": c.start,
                "largest |difference|": c.max_abs_error,
                "at (row, column)": str(c.worst_cell),
            }
            for c in found.candidates
        ]
    )
    st.dataframe(table, hide_index=True, width="stretch")
    if found.transposed:
        st.info("The matrix had positions in its columns; it was transposed before fitting.")
