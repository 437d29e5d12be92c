"""The similarity matrix drawn as an image: every pair of positions a pixel, hover to the digit.

A Plotly heatmap of the 512 x 512 matrix went to the browser as 1.5 MB of typed arrays and took
Chromium about 0.9 s to draw, twice (Streamlit's chart draws again when it applies the theme).
Here the values go as float32, deflate-compressed: the matrix of a paired layout is constant
along its diagonals, so each row repeats the one above shifted by one and the default matrix
compresses to a few kilobytes. A small component colours the values on a canvas (the diverging
scale on [-1, 1] for cosine, Viridis over the data's range otherwise), marks a chosen offset by
two dashed diagonals and says in its hover which positions, which offset and which value (the
float32 value itself, to six significant digits).

:func:`payload` is pure (arrays in, bytes out); :func:`show` mounts the component.
"""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import streamlit as st

from dashboard import encoding_image, formatting, static, ui
from dashboard.figures import linked

#: The page's name for each measure, for the title, the colour bar and the hover.
TITLES = {"cosine": "Cosine similarity", "dot": "Dot product", "distance": "Euclidean distance"}
#: One colour per level: level ``round((v - low) / (high - low) * LEVELS)``.
LEVELS = 2 * encoding_image.ZERO
VIRIDIS = encoding_image.palette_of("Viridis")


def value_range(matrix: np.ndarray, kind: str) -> tuple[float, float]:
    """The values the colour scale spans: [-1, 1] for cosine, the data's range otherwise."""
    if kind == "cosine" or matrix.size == 0:
        return -1.0, 1.0
    return float(matrix.min()), float(matrix.max())


def levels(matrix: np.ndarray, kind: str) -> np.ndarray:
    """The colour level of each value (0 at the scale's low end, :data:`LEVELS` at its high
    end), as the component computes it; a range that is one point takes the middle level."""
    low, high = value_range(matrix, kind)
    values = np.asarray(matrix, dtype=np.float64)
    if not high > low:
        return np.full(values.shape, LEVELS // 2, dtype=np.uint8)
    scaled = np.floor((values - low) / (high - low) * LEVELS + 0.5)  # JavaScript's Math.round
    return np.clip(scaled, 0, LEVELS).astype(np.uint8)


def png(matrix: np.ndarray, kind: str) -> bytes:
    """The matrix as a coloured PNG, one pixel a pair of positions, in the page's colours."""
    return encoding_image.png(levels(matrix, kind), palette=palette(kind))


def palette(kind: str) -> np.ndarray:
    """One colour per level: the app's diverging scale for cosine, Viridis otherwise."""
    return encoding_image.PALETTE if kind == "cosine" else VIRIDIS


def value_ticks(low: float, high: float, n_ticks: int = 5) -> list[tuple[float, str]]:
    """Round values on the colour bar between ``low`` and ``high``: ``(fraction, text)``, the
    fraction 0 at ``low`` and 1 at ``high``; one tick at the middle when the range is a point."""
    if not high > low:
        return [(0.5, _value_text(low))]
    step = formatting.round_step((high - low) / n_ticks)
    values = np.arange(np.ceil(low / step), np.floor(high / step) + 1) * step
    return [(float((v - low) / (high - low)), _value_text(v)) for v in values]


def _value_text(value: float) -> str:
    return f"{float(value) + 0.0:.6g}".replace("-", "\N{MINUS SIGN}")  # + 0.0: no "-0"


def cells(positions: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (positions) in cell units of a matrix of the evenly spaced ``positions``:
    cell ``j`` spans ``[j, j + 1)``, and its position sits at its centre ``j + 0.5``."""
    step = float(positions[1] - positions[0]) if positions.size > 1 else 1.0
    return (np.asarray(values, dtype=np.float64) - float(positions[0])) / step + 0.5


def position_ticks(positions: np.ndarray, n_ticks: int = 8) -> list[tuple[float, str]]:
    """Round positions on both axes, as ``(cell coordinate, text)``."""
    first, last = int(positions[0]), int(positions[-1])
    step = formatting.nice_step(last - first, n_ticks)
    rounds = np.arange(-(-first // step) * step, last + 1, step)
    return [(float(c), f"{r:,}") for c, r in zip(cells(positions, rounds), rounds, strict=True)]


def offset_diagonals(positions: np.ndarray, offset: int | None) -> list[list[float]]:
    """Where the pairs of positions ``offset`` apart lie, as line segments ``[x0, y0, x1, y1]``
    in cell coordinates (x the column's position, y the row's): the diagonals ``y = x - offset``
    and ``y = x + offset`` (one for 0), from the first shown position to the last; none without
    an offset or beyond the shown span."""
    first, last = int(positions[0]), int(positions[-1])
    if offset is None or not 0 <= offset <= last - first:
        return []
    ends = [(first + offset, first, last, last - offset)]
    if offset:
        ends.append((first, first + offset, last - offset, last))
    return [cells(positions, np.array(end)).tolist() for end in ends]


def payload(
    matrix: np.ndarray,
    *,
    positions: np.ndarray,
    kind: str,
    subtitle: str,
) -> bytes:
    """What the component draws: a little-endian header length, a JSON header (titles, the
    positions, the colour scale and its ticks, no diagonals: :func:`mark_offset` adds them)
    and the matrix as little-endian float32, deflate-compressed."""
    values = np.ascontiguousarray(matrix, dtype="<f4")
    low, high = value_range(values, kind)
    cosine = kind == "cosine"
    n = values.shape[0]
    header = {
        "title": f"{TITLES[kind]} between positions",
        "subtitle": subtitle,
        "description": f"Heatmap of the {kind} between {n:,} positions and each other, "
        + (
            "blue for −1 through the colour of the page (0) to red for +1."
            if cosine
            else f"Viridis colours from {_value_text(low)} (dark purple) to "
            f"{_value_text(high)} (yellow)."
        ),
        "kind": kind,
        "n": n,
        "positions": [int(k) for k in positions],
        "ticks": position_ticks(positions) if n else [],
        "low": low,
        "high": high,
        "levels": LEVELS,
        "valueTicks": value_ticks(low, high),
        "palette": palette(kind).ravel().tolist(),
        "paletteDark": (encoding_image.PALETTE_DARK if cosine else VIRIDIS).ravel().tolist(),
        "diagonals": [],
    }
    return _pack(header, zlib.compress(values.tobytes(), 6))


def mark_offset(data: bytes, offset: int | None) -> bytes:
    """A :func:`payload` with the diagonals of ``offset`` (:func:`offset_diagonals`) drawn:
    the matrix is compressed once, and a click on another offset only changes the header."""
    header, body = _unpack(data)
    positions = np.array(header["positions"])
    header["diagonals"] = offset_diagonals(positions, offset) if positions.size else []
    return _pack(header, body)


def decode(data: bytes) -> tuple[dict, np.ndarray]:
    """The header and the matrix of a :func:`payload`."""
    header, body = _unpack(data)
    values = np.frombuffer(zlib.decompress(body), dtype="<f4")
    return header, values.reshape(header["n"], header["n"])


def _pack(header: dict, body: bytes) -> bytes:
    encoded = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode()
    return struct.pack("<I", len(encoded)) + encoded + body


def _unpack(data: bytes) -> tuple[dict, bytes]:
    (length,) = struct.unpack("<I", data[:4])
    return json.loads(data[4 : 4 + length]), data[4 + length :]


CSS = static.text("similarity_image.css")

JS = (
    ui.PAGE_IS_DARK_JS
    + encoding_image.IMAGE_JS
    + static.text("similarity_image.js").replace("__CHOSEN__", linked.CHOSEN_COLOUR)
)


_COMPONENT = st.components.v2.component("pe_similarity_image", css=encoding_image.CSS + CSS, js=JS)


def show(data: bytes, key: str) -> None:
    """Mount the similarity image with a :func:`payload`."""
    _COMPONENT(data=data, key=key)
