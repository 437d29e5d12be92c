"""A plain two-page Streamlit app: the yardstick ``benchmarks/pages.py`` measures in the same run
as the dashboard, so that its figures can be read as ratios on a noisy machine.

Each page is made of what the dashboard's pages are made of, in about their amounts, and
nothing of its own: a title, a line of text, a row of three metrics, a closed expander, a
slider in the sidebar, two Plotly charts (two lines of 512 points; a 64 x 64 heatmap) sized and
configured as the dashboard's, and a table of 128 rows. It imports nothing from this
repository, so the same yardstick serves against any commit of the dashboard.

    python -m streamlit run benchmarks/reference_app.py
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="Reference", layout="wide")

POINTS = 512
MARGIN = {"l": 80, "r": 30, "t": 60, "b": 75}
CONFIG = {"displaylogo": False}


def _page(name: str, phase: float) -> None:
    st.title(f"Reference {name}")
    st.caption("A plain page: a title, this line, metrics, two charts and a table.")
    frequency = st.sidebar.slider("frequency", 1, 50, 5, key="frequency")
    left, middle, right = st.columns(3)
    left.metric("Frequency", frequency)
    middle.metric("Points", f"{POINTS:,}")
    right.metric("Phase", f"{phase:g}")
    with st.expander("What am I looking at?"):
        st.markdown("Two lines, a heatmap and a table, redrawn when the slider moves.")
    x = np.arange(POINTS)
    angle = 2 * np.pi * frequency * x / POINTS + phase
    lines = go.Figure(
        [go.Scatter(x=x, y=np.sin(angle), name="sin"), go.Scatter(x=x, y=np.cos(angle), name="cos")]
    )
    lines.update_layout(
        title=f"Two lines at frequency {frequency}",
        height=420,
        margin=MARGIN,
        xaxis_title="position",
        yaxis_title="value",
    )
    st.plotly_chart(lines, width="stretch", config=CONFIG, key=f"lines_{name}")
    grid = np.sin(np.outer(np.arange(64), np.arange(64)) * frequency / 64 + phase)
    heatmap = go.Figure(go.Heatmap(z=grid, zmin=-1, zmax=1, colorscale="RdBu"))
    heatmap.update_layout(
        title="A 64 × 64 heatmap",
        height=420,
        margin={**MARGIN, "r": 85},
        xaxis_title="column",
        yaxis_title="row",
    )
    st.plotly_chart(heatmap, width="stretch", config=CONFIG, key=f"heatmap_{name}")
    rows = np.arange(128)
    st.dataframe(
        pd.DataFrame({"row": rows, "sin": np.sin(rows * frequency / 128), "cos": np.cos(rows)}),
        hide_index=True,
        width="stretch",
        height=360,
    )


pages = [
    st.Page(lambda: _page("A", 0.0), title="Reference A", url_path="a", default=True),
    st.Page(lambda: _page("B", 0.5), title="Reference B", url_path="b"),
]
st.navigation(pages, position="sidebar", expanded=True).run()
