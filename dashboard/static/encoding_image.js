export default function (component) {
  const { data, parentElement } = component;
  if (!data) return;
  const { bytes, header, body: png } = readPayload(data);
  const host = parentElement.getRootNode().host || parentElement;
  const root = newImageRoot(parentElement, header, `
    <div class="pe-frame"><canvas class="pe-canvas"></canvas><div class="pe-yname">position</div>
    <canvas class="pe-bar"></canvas><div class="pe-row"></div></div>
    <div class="pe-xname">dimension (column)</div><div class="pe-screen"></div>
    <div class="pe-play"><button type="button" class="pe-play-button">▶ Play</button>
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
      ? `At this size each screen pixel shows the mean of about ${merged.join(" \u00d7 ")}; `
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
    label.style.top = `calc(${((row + 0.5) / rows) * 100}% - 7px * var(--s))`;
    frame.appendChild(label);
  }
  for (const [column, text] of header.columnTicks) {
    const label = document.createElement("div");
    label.className = "pe-axis";
    label.textContent = text;
    label.style.top = `calc(${height}px + 4px)`;
    label.style.left = `calc(${((column + 0.5) / columns) * 100}% - 8px * var(--s))`;
    frame.appendChild(label);
  }
  const bar = root.querySelector(".pe-bar");
  const barLevels = 2 * header.zeroLevel + 1;  // -1 at the bottom, 1 at the top
  paint(bar, 1, barLevels, (p) => barLevels - 1 - p, palette);
  bar.style.height = height + "px";
  for (const value of [1, 0.5, 0, -0.5, -1]) {
    const label = document.createElement("div");
    label.className = "pe-axis";
    label.textContent = value.toString().replace("-", "\u2212");
    label.style.left = "calc(100% + 14px + 20px * var(--s))";
    label.style.top = `calc(${((1 - value) / 2) * 100}% - 7px * var(--s))`;
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
      : `positions ${number(first[row])}\u2013${number(last[row])} (mean)`;
    const what = header.columnLabels[column];
    const value = (levels[row * columns + column] - header.zeroLevel) * header.valueStep;
    showTip(tip, root, event, [where, what, `value \u2248 ${value.toFixed(3)} (\u00b1${bound})`]);
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
      : `positions ${number(first[row])}–${number(last[row])} (mean)`)
      + `: row ${number(row + 1)} of ${number(rows)}`;
    host.setAttribute("data-pe-played-row", String(row));
  };
  const stop = () => {
    clearInterval(root.__peTimer);
    root.__peTimer = undefined;
    button.textContent = "▶ Play";
  };
  const play = () => {
    if (current >= rows - 1) current = -1;  // from the top again
    button.textContent = "❚❚ Pause";
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
