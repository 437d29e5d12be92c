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
