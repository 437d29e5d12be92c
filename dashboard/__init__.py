"""Positional Encoding Explorer dashboard (Streamlit)."""
