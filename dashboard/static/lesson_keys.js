// The Lesson's keyboard and its lecturer window: Left and Right (and, in presentation mode,
// PageUp and PageDown, which presentation clickers send) move to the previous or the next step;
// each window on the Lesson tells the others of this browser where it went (BroadcastChannel),
// so that the lecturer's window with notes follows the projected one, and the other way round
// (only windows in presentation mode or with the notes: a student's tabs stay apart).
// One listener per page, installed once; each render hands it the step on screen.
const CHANNEL = "pe-lesson";
// Where a key press must not move the lecture: typing in a box moves its cursor.
const TYPING = "input:not([type=radio]):not([type=checkbox]), textarea, select, [contenteditable]";

export default function ({ data, parentElement, setTriggerValue }) {
  if (!data) return;
  const host = parentElement.host || parentElement;
  const state = (window.__peLesson = window.__peLesson || { installed: false, step: null });
  const previous = state.step;
  Object.assign(state, { data, host, setTriggerValue, step: data.step });
  const go = (step) => {
    if (!state.host.isConnected) return; // the Lesson is no longer on screen
    const target = Math.min(Math.max(step, 1), state.data.last);
    if (target !== state.data.step) state.setTriggerValue("go", target);
  };
  if (!state.installed) {
    state.installed = true;
    window.addEventListener(
      "keydown",
      (event) => {
        if (!state.host.isConnected || event.altKey || event.ctrlKey || event.metaKey) return;
        if (event.target.closest && event.target.closest(TYPING)) return;
        const clicker = state.data.present && ["PageDown", "PageUp"].includes(event.key);
        const arrow = ["ArrowRight", "ArrowLeft"].includes(event.key);
        if (!clicker && !arrow) return;
        // Left and Right on a radio button would change the answer: they move the lecture, and
        // Up and Down still choose among the answers.
        event.preventDefault();
        event.stopPropagation();
        go(state.data.step + (["ArrowRight", "PageDown"].includes(event.key) ? 1 : -1));
      },
      true,
    );
    if ("BroadcastChannel" in window) {
      state.channel = new BroadcastChannel(CHANNEL);
      state.channel.onmessage = ({ data: message }) => {
        if (!state.host.isConnected || !state.data.sync) return;
        if (message.ask) state.channel.postMessage({ step: state.data.step });
        else if (Number.isInteger(message.step)) go(message.step);
      };
      // A new window joins the lecture where it is.
      if (data.sync) state.channel.postMessage({ ask: true });
    }
  }
  // This window moved: the others follow (not on its first render, which would pull the
  // lecture back to where this window happened to open).
  if (state.channel && data.sync && previous !== null && previous !== data.step) {
    state.channel.postMessage({ step: data.step });
  }
  host.setAttribute("data-pe-lesson-step", String(data.step));
}
