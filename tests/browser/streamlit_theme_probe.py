"""A page with one chart drawn in Streamlit's own chart theme (``theme="streamlit"``), for
tests/browser/test_plotly_theme.py: what that theme resolves to in the browser."""

import plotly.graph_objects as go
import streamlit as st

st.plotly_chart(go.Figure(data=[{"type": "scatter", "y": [1, 2]}]), theme="streamlit")
