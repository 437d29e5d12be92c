function pageIsDark(element) {
  const context = document.createElement("canvas").getContext("2d");
  context.fillStyle = getComputedStyle(element).getPropertyValue("--st-background-color").trim()
    || "#ffffff";
  const colour = context.fillStyle;  // "#rrggbb", or "rgba(r, g, b, a)"
  const [red, green, blue] = colour.startsWith("#")
    ? [1, 3, 5].map((at) => parseInt(colour.slice(at, at + 2), 16))
    : colour.match(/[\d.]+/g).map(Number);
  return 0.2126 * red + 0.7152 * green + 0.0722 * blue < 128;
}
