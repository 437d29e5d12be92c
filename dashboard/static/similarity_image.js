async function inflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Float32Array(await new Response(stream).arrayBuffer());
}

export default function (component) {
  const { data, parentElement } = component;
  if (!data) return;
  const { bytes, header, body } = readPayload(data);
  const host = parentElement.getRootNode().host || parentElement;
  const root = newImageRoot(parentElement, header, `
    <div class="pe-frame pe-square"><canvas class="pe-canvas"></canvas>
    <svg class="pe-lines" preserveAspectRatio="none"></svg>
    <div class="pe-yname">position</div><canvas class="pe-bar"></canvas></div>
    <div class="pe-xname pe-square">position</div><div class="pe-screen"></div>
    <div class="pe-tip"></div>`);
  const frame = root.querySelector(".pe-frame");
  const canvas = root.querySelector(".pe-canvas");
  const screenNote = root.querySelector(".pe-screen");
  const tip = root.querySelector(".pe-tip");
  const { n, positions, low, high, levels: top } = header;
  const palette = pageIsDark(host) ? header.paletteDark : header.palette;
  const levelOf = high > low
    ? (value) => Math.max(0, Math.min(top, Math.round(((value - low) / (high - low)) * top)))
    : () => top >> 1;  // one value: the middle of the scale
  host.setAttribute("data-pe-image", "");
  host.setAttribute("data-pe-signature", `${bytes.length}:${header.title}:${header.subtitle}`);
  let values = null;

  // The chosen offset: dashed diagonals, in cell coordinates (the svg spans n x n cells).
  const lines = root.querySelector(".pe-lines");
  lines.setAttribute("viewBox", `0 0 ${Math.max(n, 1)} ${Math.max(n, 1)}`);
  for (const [x0, y0, x1, y1] of header.diagonals) {
    const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
    for (const [name, value] of Object.entries({ x1: x0, y1: y0, x2: x1, y2: y1 })) {
      line.setAttribute(name, String(value));
    }
    line.setAttribute("stroke", "__CHOSEN__");
    line.setAttribute("stroke-width", "2");
    line.setAttribute("stroke-dasharray", "6 4");
    line.setAttribute("vector-effect", "non-scaling-stroke");
    line.classList.add("pe-diagonal");
    lines.appendChild(line);
  }
  host.setAttribute("data-pe-diagonals", JSON.stringify(header.diagonals));

  const draw = () => {
    const side = canvas.clientWidth;
    canvas.style.height = side + "px";
    const ratio = window.devicePixelRatio || 1;
    const out = Math.max(1, Math.min(n, Math.round(side * ratio)));
    const means = out < n ? boxMeans(values, n, n, out, out) : values;
    paint(canvas, out, out, (p) => levelOf(means[p]), palette);
    bar.style.height = side + "px";
    for (const label of frame.querySelectorAll(".pe-xtick")) label.style.top = side + 4 + "px";
    screenNote.textContent = out < n
      ? `At this size each screen pixel shows the mean of about ${(n / out).toFixed(1)} \u00d7 `
        + `${(n / out).toFixed(1)} cells; hover reads single cells, and a wider window shows more.`
      : "";
    const drawn = performance.now();
    host.setAttribute("data-pe-drawn", String(drawn));
    root.dataset.drawn = String(drawn);
  };

  // Axes: round positions on the left and below, the colour bar right.
  for (const [cell, text] of header.ticks) {
    const at = `${(cell / n) * 100}%`;
    const left = document.createElement("div");
    left.className = "pe-axis";
    left.textContent = text;
    left.style.right = "calc(100% + 6px)";
    left.style.top = `calc(${at} - 7px * var(--s))`;
    const below = document.createElement("div");
    below.className = "pe-axis pe-xtick";
    below.textContent = text;
    below.style.left = `calc(${at} - ${text.length * 3}px * var(--s))`;
    frame.append(left, below);
  }
  const bar = root.querySelector(".pe-bar");
  paint(bar, 1, top + 1, (p) => top - p, palette);  // the lowest value at the bottom
  for (const [fraction, text] of header.valueTicks) {
    const label = document.createElement("div");
    label.className = "pe-axis";
    label.textContent = text;
    label.style.left = "calc(100% + 14px + 20px * var(--s))";
    label.style.top = `calc(${(1 - fraction) * 100}% - 7px * var(--s))`;
    frame.appendChild(label);
  }

  // Hover: the two positions, their offset, and the value (float32, 6 significant digits).
  canvas.addEventListener("mousemove", (event) => {
    if (!values) return;
    const box = canvas.getBoundingClientRect();
    const column = Math.min(n - 1, Math.floor(((event.clientX - box.left) / box.width) * n));
    const row = Math.min(n - 1, Math.floor(((event.clientY - box.top) / box.height) * n));
    if (column < 0 || row < 0) return;
    const a = positions[row], b = positions[column];
    const value = values[row * n + column].toPrecision(6);
    showTip(tip, root, event, [`positions ${number(a)} and ${number(b)}`,
      `offset ${number(Math.abs(b - a))}`, `${header.kind} ${value.replace("-", "\u2212")}`]);
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });

  inflate(body).then((matrix) => {
    values = matrix;
    drawAndFollowWidth(root, frame, canvas, draw);
  });
}
