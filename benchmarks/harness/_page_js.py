"""The scripts run in a page on the app: the hook installed before the app loads (Plotly
redraws, the last user input, the script state, whether the page has settled), and the page
functions the tests and benchmarks evaluate."""

#: Installed with ``add_init_script`` so that it runs in every page before the app's own code.
PAGE_HOOK_JS = r"""
(() => {
  if (window.__pe) return;
  const pe = (window.__pe = { draws: 0, lastDraw: 0, lastInput: 0, nextId: 1 });

  // Plotly's Events.init assigns `gd.emit` on every graph div before its first draw; a setter
  // on the prototype wraps it, so every plotly_afterplot is seen, the very first one included.
  Object.defineProperty(HTMLElement.prototype, "emit", {
    configurable: true,
    get() { return undefined; },
    set(original) {
      const gd = this;
      gd.__peId = gd.__peId || pe.nextId++;
      gd.__peDraws = gd.__peDraws || [];
      const emit = function (event) {
        if (event === "plotly_afterplot") {
          const now = performance.now();
          pe.draws += 1;
          pe.lastDraw = now;
          gd.__peDraws.push(now);
          if (gd.__peDraws.length > 50) gd.__peDraws.shift();
        }
        return original.apply(this, arguments);
      };
      Object.defineProperty(gd, "emit", {
        configurable: true, enumerable: true, writable: true, value: emit,
      });
    },
  });

  // The moment of the last real user input (a click or a key), the start of a "change".
  for (const type of ["pointerdown", "keydown"]) {
    window.addEventListener(type, (e) => { if (e.isTrusted) pe.lastInput = performance.now(); },
                            true);
  }

  const visible = (el) => (el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null);
  pe.scriptState = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app ? app.getAttribute("data-test-script-state") : null;
  };
  // When the page learnt that a run of the script ended (a timing aid only: the waits do not
  // rely on it, as a very short run may never show up as "running").
  pe.runEnds = [];
  // The last change of the app's elements (added, removed, text, attributes): when the page
  // was last seen to move, the end of "idle" for benchmarks/pages.py. What changes inside a
  // <canvas> is its fallback content, never on screen (st.dataframe's accessible table, which
  // its grid fills a few hundred ms after painting).
  pe.lastChange = 0;
  const onScreen = (record) => {
    const el = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    return !(el && el.closest("canvas"));
  };
  const watchRuns = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return void setTimeout(watchRuns, 50);
    new MutationObserver(() => {
      if (pe.scriptState() !== "notRunning") return;
      pe.runEnds.push(performance.now());
      if (pe.runEnds.length > 100) pe.runEnds.shift();
    }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
    new MutationObserver((records) => {
      if (records.some(onScreen)) pe.lastChange = performance.now();
    }).observe(
      app, { attributes: true, childList: true, characterData: true, subtree: true });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watchRuns);
  else watchRuns();
  // The views are the app's pages: links in the top navigation (or, on a narrow screen, in
  // the sidebar's); the current one has aria-current="page".
  pe.viewLinks = () =>
    Array.from(document.querySelectorAll(
      '[data-testid="stTopNavLink"], [data-testid="stSidebarNavLink"]'));
  pe.selectedView = () => {
    const link = pe.viewLinks().find((a) => a.getAttribute("aria-current") === "page");
    return link ? link.innerText.trim() : null;
  };
  // The open view has content (right after a click on a page link the main area may be empty).
  pe.viewReady = () => {
    const main = document.querySelector('[data-testid="stMain"]');
    return !!main && main.querySelectorAll('[data-testid="stElementContainer"]').length > 2;
  };
  // The charts: Plotly's, and the image heatmap (a component that marks its host element
  // with data-pe-image, data-pe-drawn (when it last drew) and data-pe-signature).
  pe.charts = () =>
    Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"], [data-pe-image]'))
      .filter(visible);
  // For each visible chart, the time of its first draw after `since` (null: not redrawn yet).
  pe.firstDraws = (since) =>
    pe.charts().map((chart) => {
      if (chart.hasAttribute("data-pe-image")) {
        const drawn = Number(chart.getAttribute("data-pe-drawn"));
        return drawn > since ? drawn : null;
      }
      const gd = chart.querySelector(".js-plotly-plot");
      const first = gd && gd.__peDraws ? gd.__peDraws.find((t) => t > since) : undefined;
      return first === undefined ? null : first;
    });
  // When every visible chart had been drawn after `since`, or null if one has not been. With
  // `some`, when the last of the charts that were redrawn was (null if none was): a change
  // redraws only the charts that depend on it (a fragment's rerun only its own charts).
  pe.redrawnAt = (since, some) => {
    const times = pe.firstDraws(since);
    const drawn = times.filter((t) => t !== null);
    if (!drawn.length || (!some && drawn.length < times.length)) return null;
    return Math.max(...drawn);
  };
  const hash = (text) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return (h >>> 0).toString(16) + ":" + text.length;
  };
  // A typed array (Plotly's decoded numbers) hashed by its bytes: JSON.stringify would write
  // a 512 x 512 heatmap as 262,144 '"i":value' entries and take about 150 ms of the page's thread.
  const hashBytes = (view) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    let h = 0x811c9dc5;
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
    return `${view.constructor.name}#${(h >>> 0).toString(16)}:${bytes.length}`;
  };
  const typedArraysHashed = (key, value) => (ArrayBuffer.isView(value) ? hashBytes(value) : value);
  // A fingerprint of what the visible charts show (their data and titles).
  pe.signature = () =>
    pe.charts().map((chart) => {
      if (chart.hasAttribute("data-pe-image")) return chart.getAttribute("data-pe-signature");
      const gd = chart.querySelector(".js-plotly-plot");
      if (!gd || !gd.data) return "-";
      if (gd.__peSigOf !== gd.data || gd.__peSigTitle !== JSON.stringify(gd.layout?.title)) {
        gd.__peSigOf = gd.data;
        gd.__peSigTitle = JSON.stringify(gd.layout?.title);
        gd.__peSig = hash(JSON.stringify(gd.data, typedArraysHashed) + gd.__peSigTitle);
      }
      return gd.__peSig;
    }).join("|");
  // A fingerprint of the whole main area: its text and its charts.
  pe.pageSignature = () => {
    const main = document.querySelector('[data-testid="stMain"]');
    return hash(main ? main.innerText : "") + "#" + pe.signature();
  };
  // Streamlit shows a skeleton while the code of a widget or chart type is still loading
  // (Plotly, for one, arrives after the run has finished).
  pe.loading = () =>
    Array.from(document.querySelectorAll('[data-testid="stSkeleton"]')).some(visible);
  // After a change made at `since` (performance.now()), from a page whose pageSignature() was
  // `before` (null: any): the run is over, every element has loaded, the open view has
  // content, the page shows something else, and every visible chart (with `some`: at least
  // one) was redrawn after `since` (a view without charts has nothing to redraw).
  pe.settled = (since, before, some) => {
    const done =
      pe.scriptState() === "notRunning" &&
      !pe.loading() &&
      pe.viewReady() &&
      (before === null || before === undefined || pe.pageSignature() !== before) &&
      (pe.charts().length === 0 || pe.redrawnAt(since, some) !== null);
    if (done) {
      pe.settledAt = performance.now();
      pe.settledChange = pe.lastChange;
    }
    return done;
  };
  // Idle: the run is over and no chart redrew for `ms` milliseconds.
  const imageDraws = () =>
    Array.from(document.querySelectorAll("[data-pe-image]"),
               (el) => Number(el.getAttribute("data-pe-drawn")) || 0);
  pe.quiet = (ms) =>
    pe.scriptState() === "notRunning" && !pe.loading() &&
    performance.now() - Math.max(pe.lastDraw, ...imageDraws()) > ms;
  // Every visible st.dataframe has painted its grid (a canvas and its accessible table).
  pe.tablesReady = () =>
    Array.from(document.querySelectorAll('[data-testid="stDataFrame"]')).filter(visible)
      .every((el) => el.querySelector("canvas") && el.querySelector("table"));
  // Anything that means the app failed: exceptions, error boxes.
  pe.problems = () => {
    const found = [];
    for (const el of document.querySelectorAll('[data-testid="stException"]'))
      found.push("exception: " + el.innerText.slice(0, 500));
    for (const el of document.querySelectorAll('[data-testid="stAlertContentError"]'))
      found.push("error alert: " + el.innerText.slice(0, 500));
    return found;
  };
})();
"""


#: The frames a Play button plays on the page's last chart, recorded as [time (ms), frame name]
#: in ``window.__frames`` (Plotly's plotly_animatingframe events).
PLAY_FRAMES_JS = """(chart = -1) => {
  const plots = document.querySelectorAll('.js-plotly-plot');
  window.__frames = [];
  const plot = plots[(chart + plots.length) % plots.length];
  plot.on('plotly_animatingframe', (e) => window.__frames.push([performance.now(), e.name]));
}"""
#: What the page reports when Pause interrupts a Plotly animation: plotly.js rejects the promise
#: of the interrupted Plotly.animate with no reason (its onInterrupt is the promise's reject)
#: and the Play button's call does not catch it. Nothing else goes wrong.
PLOTLY_INTERRUPTED = "pageerror: undefined"


def widened_margins_js(sides: str = "lrtb") -> str:
    """A page function giving, for each Plotly chart, its title and whether Plotly widened one
    of the margins on ``sides`` (of "l", "r", "t", "b") that its layout sets. Such a chart was
    drawn in full a second time before it showed (Plotly's automargin), with no
    ``plotly_afterplot`` of its own to tell."""
    return f"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((plot) => [
  plot.layout.title?.text ?? "",
  {list(sides)!r}.some((side) => plot._fullLayout._size[side] > (plot.layout.margin || {{}})[side]),
])"""


#: The views are listed in the sidebar (a narrow screen), and the sidebar is closed: wholly off
#: the screen's left edge (its closing animation over).
SIDEBAR_CLOSED_JS = """() => {
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  const listed = sidebar?.querySelector('[data-testid="stSidebarNav"]');
  return Boolean(listed) && sidebar.getBoundingClientRect().right <= 0;
}"""
