"""Figure factories: arrays in, ``plotly.graph_objects.Figure`` out. No Streamlit, no state.

One module per topic: :mod:`~dashboard.figures.base` (palette, chart frame, axes),
:mod:`~dashboard.figures.sinusoidal`, :mod:`~dashboard.figures.similarity`,
:mod:`~dashboard.figures.relative` (rotation), :mod:`~dashboard.figures.matrices`,
:mod:`~dashboard.figures.rotary` (RoPE), :mod:`~dashboard.figures.charts` (plain lines and bars),
:mod:`~dashboard.figures.animation` (Play), :mod:`~dashboard.figures.linked` (linked
highlighting) and :mod:`~dashboard.figures.accessibility` (text alternatives). Numbers as text
are :mod:`dashboard.formatting`'s.
"""
