"""Play: Plotly's frames sweep a position over a chart in the browser (no server run per
frame), with Play and Pause buttons and a slider to drag the position by hand."""

from __future__ import annotations

import numpy as np

from dashboard.figures.base import RED

#: Colour of the position being played (the vector on the circles, the line on the sinusoids).
PLAYED_COLOUR = RED


def _animation(frame_ms: int) -> dict:
    return {
        "frame": {"duration": frame_ms, "redraw": False},
        "transition": {"duration": 0},
        "mode": "immediate",
        "fromcurrent": True,
    }


def _play_buttons(frame_ms: int) -> dict:
    """Play (from the current position) and Pause, under the circles, above the slider."""
    return {
        "type": "buttons",
        "direction": "left",
        "showactive": False,
        "x": 0.0,
        "xanchor": "left",
        "y": -0.17,
        "yanchor": "top",
        "pad": {"r": 8, "t": 0},
        "buttons": [
            {"label": "▶ Play", "method": "animate", "args": [None, _animation(frame_ms)]},
            {
                "label": "❚❚ Pause",
                "method": "animate",
                "args": [[None], _animation(0)],
            },
        ],
    }


def _position_slider(positions: np.ndarray, frame_ms: int) -> dict:
    """A slider over the positions; playing moves it, dragging it shows that position."""
    return {
        "active": 0,
        "x": 0.0,
        "len": 1.0,
        "y": -0.36,
        "yanchor": "top",
        "pad": {"t": 0, "b": 0},
        "currentvalue": {"prefix": "k = ", "visible": True, "xanchor": "left"},
        "steps": [
            {
                "label": str(position),
                "method": "animate",
                "args": [[str(position)], _animation(frame_ms)],
            }
            for position in positions
        ],
    }
