"""Small pieces every view uses: charts that survive errors, explanations, guarded rendering."""

from __future__ import annotations

import logging
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

logger = logging.getLogger("pe_explorer")

#: Plotly toolbar: keep the PNG export, drop tools a learner does not need.
PLOTLY_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


def chart(fig: go.Figure, key: str) -> None:
    """Show a figure and remember it as this chart's last good version."""
    st.session_state[f"_last_chart_{key}"] = fig
    st.plotly_chart(fig, key=key, config=PLOTLY_CONFIG, width="stretch")


def last_good_charts(prefix: str) -> None:
    """Show the last good figures of a view (after an error, so the page does not go blank)."""
    for name in list(st.session_state):
        if name.startswith(f"_last_chart_{prefix}"):
            st.caption("Last valid figure, kept while the parameters above cannot be shown:")
            st.plotly_chart(st.session_state[name], config=PLOTLY_CONFIG, width="stretch")


def explain(markdown: str, latex: str | None = None, *, expanded: bool = False) -> None:
    """A short explanation for a learner, with the view's formula."""
    with st.expander("What am I looking at?", expanded=expanded):
        st.markdown(markdown)
        if latex:
            st.latex(latex)


def guarded(view: str, render: Callable[[], None]) -> None:
    """Run a view; a bad combination of parameters becomes a message, never a traceback."""
    try:
        render()
    except (ValueError, TypeError) as error:
        st.warning(f"This combination cannot be shown: {error}")
        last_good_charts(view)
    except Exception:  # the app must keep answering whatever happens in one view
        logger.exception("view %s failed", view)
        st.error(
            "Something went wrong while drawing this view. The other views still work; "
            "try other parameters."
        )
        last_good_charts(view)
