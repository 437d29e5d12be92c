"""The encoding heatmap drawn as an image: every cell a pixel, blitted by the browser.

A Plotly heatmap of the default 2,048 x 512 encoding is a million cells of JSON that the browser
lays out one by one; here the values go as one 8-bit grayscale PNG (about 440 kB) that a small
component colours with the app's diverging scale (the light or the dark theme's, as the page is
drawn) and draws on a canvas, with a hover that says what a cell is (position, column, pair, sin
or cos, frequency, wavelength, value).

:func:`payload` is pure (arrays in, bytes out); :func:`show` mounts the component.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Sequence

import numpy as np
import plotly.colors
import streamlit as st
from PIL import Image

from dashboard import formatting, static, ui
from dashboard.figures import base

#: Gray level of the value 0: level ``ZERO + round(127 v)`` holds ``v``, so -1, 0 and 1 are
#: exact (levels 0, 127 and 254; 255 is not used).
ZERO = 127
#: One gray level is 1/127 of a unit: a value read back from the image is within half of this.
VALUE_STEP = 1.0 / ZERO


def palette_of(scale) -> np.ndarray:
    """One colour per gray level (-1 first) of a Plotly colour scale, as (levels, 3) uint8."""
    positions = [*np.linspace(0.0, 1.0, 2 * ZERO + 1).tolist(), 1.0]
    if isinstance(scale, str):
        scale = plotly.colors.get_colorscale(scale)
    colours = plotly.colors.sample_colorscale(scale, positions)
    return np.array([plotly.colors.unlabel_rgb(colour) for colour in colours], dtype=np.uint8)


#: The diverging scale of every [-1, 1] chart of the app, one colour per gray level.
PALETTE = palette_of(base.DIVERGING)
#: The same on the dark theme (:data:`dashboard.figures.base.DIVERGING_DARK`); the component
#: picks the palette of the page's theme each time it draws.
PALETTE_DARK = palette_of(base.DIVERGING_DARK)


def gray_levels(values: np.ndarray) -> np.ndarray:
    """Values in [-1, 1] as 8-bit levels (0 is -1, 127 is 0, 254 is 1); beyond, clipped."""
    return (np.round(np.clip(values, -1.0, 1.0) * ZERO) + ZERO).astype(np.uint8)


def png(levels: np.ndarray, *, palette: np.ndarray | None = None) -> bytes:
    """An 8-bit PNG of ``levels`` (rows x columns): grayscale, or coloured with ``palette``
    (one colour per level, such as :data:`PALETTE`)."""
    image = Image.fromarray(np.ascontiguousarray(levels), mode="L")
    if palette is not None:
        image = image.convert("P")
        image.putpalette(palette.ravel().tolist())
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def payload(
    values: np.ndarray,
    *,
    row_first: Sequence[int],
    row_last: Sequence[int],
    column_numbers: Sequence[int],
    column_labels: Sequence[str],
    title: str,
    subtitle: str,
    description: str,
) -> bytes:
    """What the component draws: a little-endian header length, a JSON header (titles, the
    positions of each row (``rowLast`` null when each row is one position), the number and
    hover text of each column, the palette) and the grayscale PNG of ``values`` (rows x
    columns, in [-1, 1])."""
    rows, columns = values.shape
    header = {
        "title": title,
        "subtitle": subtitle,
        "description": description,
        "rows": rows,
        "columns": columns,
        "rowFirst": [int(k) for k in row_first],
        "rowTicks": list(zip(*formatting.round_ticks(row_first, row_last, 8), strict=True)),
        "columnTicks": list(zip(*formatting.round_ticks(column_numbers, None, 8), strict=True)),
        # null when every row is one position (11 kB less for the default 2,048 rows)
        "rowLast": None if list(row_last) == list(row_first) else [int(k) for k in row_last],
        "columnLabels": list(column_labels),
        "palette": PALETTE.ravel().tolist(),
        "paletteDark": PALETTE_DARK.ravel().tolist(),
        "valueStep": VALUE_STEP,
        "zeroLevel": ZERO,
    }
    encoded = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode()
    return struct.pack("<I", len(encoded)) + encoded + png(gray_levels(values))


def decode(data: bytes) -> tuple[dict, np.ndarray]:
    """The header and the values (``(level - ZERO) * VALUE_STEP``) of a :func:`payload`."""
    (length,) = struct.unpack("<I", data[:4])
    header = json.loads(data[4 : 4 + length])
    levels = np.asarray(Image.open(io.BytesIO(data[4 + length :])))
    return header, (levels.astype(np.float64) - ZERO) * VALUE_STEP


CSS = static.text("image.css")

#: The speeds Play offers (rows a second), and the one chosen at first.
ROW_SPEEDS = (1, 2, 5, 10, 20, 100)
FIRST_ROW_SPEED = 5
_ROW_SPEED_OPTIONS = "".join(
    f"<option{' selected' * (speed == FIRST_ROW_SPEED)}>{speed}</option>" for speed in ROW_SPEEDS
)

#: What the two image components share (:mod:`dashboard.similarity_image` too): reading the
#: payload, the titled root in place of the last one, box means for a screen with fewer pixels
#: than the matrix has cells, colouring levels on a canvas, the hover box, and drawing again
#: when the width changes.
IMAGE_JS = static.text("image.js")

JS = (
    ui.PAGE_IS_DARK_JS
    + IMAGE_JS
    + static.text("encoding_image.js").replace("__ROW_SPEED_OPTIONS__", _ROW_SPEED_OPTIONS)
)


_COMPONENT = st.components.v2.component("pe_encoding_image", css=CSS, js=JS)


def show(data: bytes, key: str) -> None:
    """Mount the image heatmap with a :func:`payload`."""
    _COMPONENT(data=data, key=key)
