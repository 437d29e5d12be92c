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

from dashboard import formatting, ui
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


CSS = """
.pe-image { font-family: inherit; color: var(--st-text-color, #1f2933); position: relative; }
.pe-title { font-weight: 600; font-size: 16px; margin: 0 0 2px 2px; }
.pe-subtitle { font-size: 11.5px; font-weight: 600; margin: 0 0 8px 2px; opacity: .85; }
.pe-frame { position: relative; margin-left: 64px; margin-right: 88px; }
.pe-canvas { display: block; width: 100%; image-rendering: pixelated; cursor: crosshair; }
.pe-screen { font-size: 11.5px; color: #6b7280; margin: 4px 0 0 64px; min-height: 1em; }
.pe-axis { position: absolute; font-size: 11px; color: #6b7280; white-space: nowrap; }
.pe-yname { position: absolute; left: -58px; top: 50%; transform: rotate(-90deg) translateX(50%);
  transform-origin: left top; font-size: 12px; color: #6b7280; }
.pe-xname { text-align: center; font-size: 12px; color: #6b7280; margin-top: 22px; }
.pe-bar { position: absolute; left: calc(100% + 14px); top: 0; width: 14px; }
.pe-row { position: absolute; left: -4px; right: -4px; display: none; pointer-events: none;
  border: 2px solid #d62728; border-radius: 2px; box-sizing: border-box; min-height: 4px; }
.pe-play { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; font-size: 13px;
  margin: 10px 0 0 64px; }
.pe-play button, .pe-play select { font: inherit; color: inherit; background: transparent;
  border: 1px solid #9ca3af; border-radius: 6px; padding: 2px 10px; cursor: pointer; }
.pe-play select option { color: #1f2933; }
.pe-tip { position: absolute; pointer-events: none;
  background: var(--st-background-color, #fff); color: var(--st-text-color, #1f2933);
  border: 1px solid #9ca3af; border-radius: 4px; padding: 4px 7px; font-size: 12px;
  line-height: 1.35; white-space: nowrap; display: none; z-index: 10;
  box-shadow: 0 1px 4px rgba(0,0,0,.15); }
"""

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
IMAGE_JS = """
const number = (k) => k.toLocaleString("en-US");

// A payload: a little-endian header length, the JSON header, then the body.
function readPayload(data) {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  const length = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + length)));
  return { bytes, header, body: bytes.subarray(4 + length) };
}

// A new .pe-image in `parentElement` in place of the last one (its observer and timer
// stopped): described by the header's description, its title, its subtitle, then `html`.
function newImageRoot(parentElement, header, html) {
  const old = parentElement.querySelector(".pe-image");
  if (old) {
    old.__peObserver?.disconnect();
    clearInterval(old.__peTimer);
    old.remove();
  }
  const root = document.createElement("div");
  root.className = "pe-image";
  root.setAttribute("role", "img");
  root.setAttribute("aria-label", header.description);
  root.innerHTML = `<div class="pe-title"></div><div class="pe-subtitle"></div>${html}`;
  parentElement.appendChild(root);
  root.querySelector(".pe-title").textContent = header.title;
  root.querySelector(".pe-subtitle").textContent = header.subtitle;
  return root;
}

// A width x height canvas whose pixel p has the colour palette[levelAt(p)] (RGB triples).
function paint(canvas, width, height, levelAt, palette) {
  const image = new ImageData(width, height);
  for (let p = 0; p < width * height; p++) {
    const level = levelAt(p);
    image.data[4 * p] = palette[3 * level];
    image.data[4 * p + 1] = palette[3 * level + 1];
    image.data[4 * p + 2] = palette[3 * level + 2];
    image.data[4 * p + 3] = 255;
  }
  canvas.width = width;
  canvas.height = height;
  canvas.getContext("2d").putImageData(image, 0, 0);
}

// The hover box: one line each of `lines`, next to the pointer and inside `root`.
function showTip(tip, root, event, lines) {
  tip.textContent = "";
  for (const line of lines) {
    const div = document.createElement("div");
    div.textContent = line;
    tip.appendChild(div);
  }
  const rootBox = root.getBoundingClientRect();
  tip.style.display = "block";
  const left = event.clientX - rootBox.left + 14, top = event.clientY - rootBox.top + 14;
  tip.style.left = Math.min(left, rootBox.width - tip.offsetWidth - 4) + "px";
  tip.style.top = top + "px";
}

// Draw now, and again whenever the canvas changes width.
function drawAndFollowWidth(root, frame, canvas, draw) {
  draw();
  let width = canvas.clientWidth;
  root.__peObserver = new ResizeObserver(() => {
    if (canvas.clientWidth !== width) {
      width = canvas.clientWidth;
      draw();
    }
  });
  root.__peObserver.observe(frame);
}

// Box means of `levels` (rows x columns) on an outRows x outColumns grid: each output pixel is
// the mean of the cells it covers, so a screen shorter than the matrix shows local means
// (as a block-mean heatmap would), never a sample of every third row.
function boxMeans(levels, rows, columns, outRows, outColumns) {
  const out = new Float32Array(outRows * outColumns);
  const columnOf = new Int32Array(columns);
  const columnCount = new Float32Array(outColumns);
  for (let c = 0; c < columns; c++) {
    columnOf[c] = Math.floor((c * outColumns) / columns);
    columnCount[columnOf[c]] += 1;
  }
  const sums = new Float32Array(outColumns);
  for (let r = 0; r < outRows; r++) {
    const first = Math.floor((r * rows) / outRows), stop = Math.floor(((r + 1) * rows) / outRows);
    sums.fill(0);
    for (let row = first; row < stop; row++) {
      const base = row * columns;
      for (let c = 0; c < columns; c++) sums[columnOf[c]] += levels[base + c];
    }
    for (let c = 0; c < outColumns; c++) {
      out[r * outColumns + c] = sums[c] / (columnCount[c] * (stop - first));
    }
  }
  return out;
}
"""

JS = (
    ui.PAGE_IS_DARK_JS
    + IMAGE_JS
    + """
export default function (component) {
  const { data, parentElement } = component;
  if (!data) return;
  const { bytes, header, body: png } = readPayload(data);
  const host = parentElement.getRootNode().host || parentElement;
  const root = newImageRoot(parentElement, header, `
    <div class="pe-frame"><canvas class="pe-canvas"></canvas><div class="pe-yname">position</div>
    <canvas class="pe-bar"></canvas><div class="pe-row"></div></div>
    <div class="pe-xname">dimension (column)</div><div class="pe-screen"></div>
    <div class="pe-play"><button type="button" class="pe-play-button">\u25b6 Play</button>
    <label>speed <select class="pe-speed" aria-label="Play speed (rows per second)">
    __ROW_SPEED_OPTIONS__</select> rows a second</label>
    <span class="pe-played" aria-live="polite"></span></div><div class="pe-tip"></div>`);
  const frame = root.querySelector(".pe-frame");
  const canvas = root.querySelector(".pe-canvas");
  const screenNote = root.querySelector(".pe-screen");
  const tip = root.querySelector(".pe-tip");
  const { rows, columns } = header;
  const palette = pageIsDark(host) ? header.paletteDark : header.palette;
  const height = Math.max(320, Math.min(900, rows));
  canvas.style.height = height + "px";
  host.setAttribute("data-pe-image", "");
  host.setAttribute("data-pe-signature", `${bytes.length}:${header.title}:${header.subtitle}`);
  let levels = null;

  const draw = () => {
    const ratio = window.devicePixelRatio || 1;
    const outColumns = Math.max(1, Math.min(columns, Math.round(canvas.clientWidth * ratio)));
    const outRows = Math.max(1, Math.min(rows, Math.round(height * ratio)));
    const means = boxMeans(levels, rows, columns, outRows, outColumns);
    paint(canvas, outColumns, outRows, (p) => Math.round(means[p]), palette);
    const merged = [];
    if (outRows < rows) merged.push(`${(rows / outRows).toFixed(1)} rows`);
    if (outColumns < columns) merged.push(`${(columns / outColumns).toFixed(1)} columns`);
    screenNote.textContent = merged.length
      ? `At this size each screen pixel shows the mean of about ${merged.join(" \\u00d7 ")}; `
        + "hover reads single cells, and a wider window or zooming in shows more."
      : "";
    const drawn = performance.now();
    host.setAttribute("data-pe-drawn", String(drawn));
    root.dataset.drawn = String(drawn);
  };

  createImageBitmap(new Blob([png], { type: "image/png" })).then((bitmap) => {
    const scratch = document.createElement("canvas");
    scratch.width = columns;
    scratch.height = rows;
    const context = scratch.getContext("2d", { willReadFrequently: true });
    context.drawImage(bitmap, 0, 0);
    const gray = context.getImageData(0, 0, columns, rows).data;
    levels = new Uint8Array(columns * rows);
    for (let p = 0; p < columns * rows; p++) levels[p] = gray[4 * p];
    drawAndFollowWidth(root, frame, canvas, draw);
  });

  // Axes: round positions on the left, round column numbers below, the colour bar right.
  const first = header.rowFirst, last = header.rowLast || first;
  for (const [row, text] of header.rowTicks) {
    const label = document.createElement("div");
    label.className = "pe-axis";
    label.textContent = text;
    label.style.right = "calc(100% + 6px)";
    label.style.top = `calc(${((row + 0.5) / rows) * 100}% - 7px)`;
    frame.appendChild(label);
  }
  for (const [column, text] of header.columnTicks) {
    const label = document.createElement("div");
    label.className = "pe-axis";
    label.textContent = text;
    label.style.top = `calc(${height}px + 4px)`;
    label.style.left = `calc(${((column + 0.5) / columns) * 100}% - 8px)`;
    frame.appendChild(label);
  }
  const bar = root.querySelector(".pe-bar");
  const barLevels = 2 * header.zeroLevel + 1;  // -1 at the bottom, 1 at the top
  paint(bar, 1, barLevels, (p) => barLevels - 1 - p, palette);
  bar.style.height = height + "px";
  for (const value of [1, 0.5, 0, -0.5, -1]) {
    const label = document.createElement("div");
    label.className = "pe-axis";
    label.textContent = value.toString().replace("-", "\\u2212");
    label.style.left = "calc(100% + 34px)";
    label.style.top = `calc(${((1 - value) / 2) * 100}% - 7px)`;
    frame.appendChild(label);
  }

  // Hover: what the cell is, and its value as the image holds it.
  // The value shown with 3 decimals is within half a gray level plus half a last digit.
  const bound = (header.valueStep / 2 + 0.0005).toFixed(4);
  canvas.addEventListener("mousemove", (event) => {
    if (!levels) return;
    const box = canvas.getBoundingClientRect();
    const x = (event.clientX - box.left) / box.width, y = (event.clientY - box.top) / box.height;
    const column = Math.min(columns - 1, Math.floor(x * columns));
    const row = Math.min(rows - 1, Math.floor(y * rows));
    if (column < 0 || row < 0) return;
    const where = first[row] === last[row] ? `position ${number(first[row])}`
      : `positions ${number(first[row])}\\u2013${number(last[row])} (mean)`;
    const what = header.columnLabels[column];
    const value = (levels[row * columns + column] - header.zeroLevel) * header.valueStep;
    showTip(tip, root, event, [where, what, `value \\u2248 ${value.toFixed(3)} (\\u00b1${bound})`]);
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });

  // Play: a frame moves down the rows in the browser, one row at a time (a row is the
  // encoding vector of its position); a click on the image moves it to that row.
  const marker = root.querySelector(".pe-row");
  const played = root.querySelector(".pe-played");
  const button = root.querySelector(".pe-play-button");
  const speed = root.querySelector(".pe-speed");
  let current = -1;  // no row shown yet: Play starts at the first
  const show = (row) => {
    current = row;
    marker.style.display = "block";
    marker.style.top = `${(row / rows) * 100}%`;
    marker.style.height = `${100 / rows}%`;
    played.textContent = (first[row] === last[row] ? `position ${number(first[row])}`
      : `positions ${number(first[row])}\u2013${number(last[row])} (mean)`)
      + `: row ${number(row + 1)} of ${number(rows)}`;
    host.setAttribute("data-pe-played-row", String(row));
  };
  const stop = () => {
    clearInterval(root.__peTimer);
    root.__peTimer = undefined;
    button.textContent = "\u25b6 Play";
  };
  const play = () => {
    if (current >= rows - 1) current = -1;  // from the top again
    button.textContent = "\u275a\u275a Pause";
    root.__peTimer = setInterval(() => {
      if (!root.isConnected || current >= rows - 1) return stop();
      show(current + 1);
    }, 1000 / Number(speed.value));
  };
  button.addEventListener("click", () => (root.__peTimer === undefined ? play() : stop()));
  speed.addEventListener("change", () => { if (root.__peTimer !== undefined) { stop(); play(); } });
  canvas.addEventListener("click", (event) => {
    const box = canvas.getBoundingClientRect();
    const row = Math.floor(((event.clientY - box.top) / box.height) * rows);
    show(Math.min(rows - 1, Math.max(0, row)));
  });
}
""".replace("__ROW_SPEED_OPTIONS__", _ROW_SPEED_OPTIONS)
)


_COMPONENT = st.components.v2.component("pe_encoding_image", css=CSS, js=JS)


def show(data: bytes, key: str) -> None:
    """Mount the image heatmap with a :func:`payload`."""
    _COMPONENT(data=data, key=key)
