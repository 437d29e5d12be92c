const ACTIVITY = ["pointermove", "pointerdown", "keydown", "wheel", "touchstart"];

export default function ({ data }) {
  // Once per page, whatever the runs and the views: a module stays loaded.
  if (!data || window.__pePlotlyPreload) return;
  window.__pePlotlyPreload = true;
  // Streamlit imports its chunks relative to its entry script; so does this.
  const entry = document.querySelector('script[type="module"][src*="/static/js/index."]');
  if (!entry) return;
  const url = new URL(data.module, entry.src).href;
  const whenIdle = window.requestIdleCallback || ((run) => setTimeout(run, 0));
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    for (const type of ACTIVITY) window.removeEventListener(type, start, true);
    whenIdle(() => import(url).catch(() => {}), { timeout: 5000 });  // else Streamlit loads it
  };
  const onScreenFor = (ms) => {  // a hidden tab waits until it is shown
    if (document.hidden) {
      document.addEventListener("visibilitychange", () => onScreenFor(ms), { once: true });
    } else {
      setTimeout(() => (document.hidden ? onScreenFor(ms) : start()), ms);
    }
  };
  setTimeout(() => {
    for (const type of ACTIVITY) {
      window.addEventListener(type, start, { capture: true, passive: true });
    }
    onScreenFor(data.fallback);
  }, data.delay);
}
