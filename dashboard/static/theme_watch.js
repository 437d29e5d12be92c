export default function ({ data, parentElement, setStateValue }) {
  const host = parentElement.host || parentElement;
  const theme = pageIsDark(host) ? "dark" : "light";
  if (theme !== data) setStateValue("theme", theme);
}
