"""The real Streamlit server, driven by headless Chromium through Playwright: the pytest-free
plumbing shared by the browser tests (``tests/browser``) and the benchmarks.

Finding Chromium, starting and stopping the server, :data:`PAGE_HOOK_JS` (a script installed in
every page before the app loads that records each Plotly redraw, the time of the last user input
and the app's script state), :class:`AppPage` (a page on the app and what a test or a benchmark
does with it), and :func:`open_view` (a view in an AppTest session). Playwright is imported
lazily (by the callers), so importing this module never fails where Playwright is missing.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: An absolute path: same app, same working directory (the repo root), but a command line that
#: a broad ``pkill -f "streamlit run dashboard/app.py"`` elsewhere on the machine does not hit.
APP = str(ROOT / "dashboard" / "app.py")

#: Playwright's own browser download does not work here: always use the system Chromium.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 900}
#: Where ``AppPage.screenshot`` saves, with ``PE_SCREENSHOTS=1``.
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
#: Longest wait for one rerun of the app and its charts (2 slow cores, cold caches).
RUN_TIMEOUT_MS = 60_000


def find_chromium() -> str | None:
    """Path of the system Chromium, or None."""
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def free_port() -> int:
    """A loopback port nobody listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGTERM when the thread that started it (always the main thread
    here) dies, even by SIGKILL, so a killed test run leaves no server behind."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


class ServerError(RuntimeError):
    pass


class StreamlitServer:
    """``python -m streamlit run dashboard/app.py`` on a free loopback port.

    :meth:`start` waits until ``/_stcore/health`` answers "ok"; :meth:`stop` terminates the
    server (SIGTERM, then SIGKILL after a timeout) and is safe to call more than once. Every
    started server is also stopped at interpreter exit, and, on Linux, when its parent dies.
    """

    def __init__(self, log_path: str | os.PathLike | None = None) -> None:
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        if log_path is None:
            handle, log_path = tempfile.mkstemp(prefix="pe-streamlit-", suffix=".log")
            os.close(handle)
        self.log_path = Path(log_path)
        atexit.register(self.stop)  # a crash or an interrupted run leaves no stray server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self, port: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            APP,
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            # Without a file watcher, a save in dashboard/ while the tests or the benchmark run
            # (an editor, a colleague) cannot cause a "source changed" prompt or a rerun.
            "--server.fileWatcherType",
            "none",
        ]

    def start(
        self, timeout: float = 60.0, attempts: int = 3, port: int | None = None
    ) -> StreamlitServer:
        """Start on a free port (or on ``port``: a restart keeps its address)."""
        for _ in range(1 if port else attempts):
            self.port = port or free_port()
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    self.command(self.port),
                    cwd=ROOT,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group, stopped as a whole
                    preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
                )
            if self._wait_healthy(timeout):
                return self
            exited = self.process.poll() is not None
            self.stop()
            if not exited:  # alive but never healthy: retrying will not help
                break
            # It exited: most likely the port was taken between free_port() and its bind.
        raise ServerError(f"Streamlit did not become healthy; its log:\n{self.log_tail()}")

    def _wait_healthy(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as answer:
                    # "ok" from our port while our process is alive: it is our server (a
                    # server that lost the port race exits instead of sharing it).
                    if answer.read().decode().strip() == "ok" and self.process.poll() is None:
                        return True
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        return False

    def restart(self) -> None:
        """Stop the server and start it again on the same port (open pages reconnect)."""
        port = self.port
        self.stop()
        self.start(port=port)

    def stop(self, timeout: float = 10.0) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)  # the group we created, nothing else
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout)

    def exit_status(self) -> str | None:
        """None while the server runs; otherwise how it ended (a crash, or killed by someone)."""
        if self.process is None:
            return "not running (never started or already stopped)"
        code = self.process.poll()
        if code is None:
            return None
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with status {code}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def memory_kib(self) -> dict[str, int]:
        """VmRSS (now) and VmHWM (peak so far) of the server process, from /proc, in KiB."""
        values: dict[str, int] = {}
        if self.process is None:
            return values
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    key, _, rest = line.partition(":")
                    if key in ("VmRSS", "VmHWM"):
                        values[key] = int(rest.split()[0])
        except (OSError, ValueError):
            pass
        return values

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process used so far (from /proc; 0 if unknown)."""
        if self.process is None:
            return 0.0
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def __enter__(self) -> StreamlitServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


#: Installed with ``add_init_script`` so that it runs in every page before the app's own code.
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
  const watchRuns = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return void setTimeout(watchRuns, 50);
    new MutationObserver(() => {
      if (pe.scriptState() !== "notRunning") return;
      pe.runEnds.push(performance.now());
      if (pe.runEnds.length > 100) pe.runEnds.shift();
    }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
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
    if (done) pe.settledAt = performance.now();
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


#: Opened directly on a view's path (/similarity), Streamlit's page first asks
#: /similarity/_stcore/health and /similarity/_stcore/host-config, to find out whether the app
#: is served under that prefix; the 404s it gets are how it learns that it is not. Only these
#: are not counted as errors.
_PROBE = re.compile(r"^http://127\.0\.0\.1:\d+/[a-z]+/_stcore/(health|host-config)$")


def _base_path_probe(message) -> bool:
    url = (message.location or {}).get("url", "")
    return "404" in message.text and bool(_PROBE.match(url))


#: The views are listed in the sidebar (a narrow screen), and the sidebar is closed: wholly off
#: the screen's left edge (its closing animation over).
SIDEBAR_CLOSED_JS = """() => {
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  const listed = sidebar?.querySelector('[data-testid="stSidebarNav"]');
  return Boolean(listed) && sidebar.getBoundingClientRect().right <= 0;
}"""


class AppPage:
    """Drives the app in one page and waits for its reruns through the hook in PAGE_HOOK_JS."""

    def __init__(self, page, server: StreamlitServer) -> None:
        self.page = page
        self.server = server
        self.log_start = len(server.log_text())  # this page's share of the server log
        self.console_errors: list[str] = []
        # Every console error and uncaught page error counts; nothing is filtered out.
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.console_errors.append(f"pageerror: {error}"))

    def _on_console(self, message) -> None:
        if message.type == "error" and not _base_path_probe(message):
            self.console_errors.append(f"console.error: {message.text} ({message.location})")

    # --- navigation and waiting -------------------------------------------------------------

    def new_page(self) -> AppPage:
        """Another page in the same browser context (a second Streamlit session)."""
        return app_page(self.page.context, self.server)

    def open(self, query: str = "") -> None:
        """Load the app (``query`` like ``"?L=100&view=sinusoids"``) and wait for its charts."""
        self.page.goto(self.server.url + "/" + query)
        self.wait_settled(since=-1)

    def now(self) -> float:
        return self.page.evaluate("performance.now()")

    def signature(self) -> str:
        """Fingerprint of the data and titles of the visible charts."""
        return self.page.evaluate("window.__pe.signature()")

    def page_signature(self) -> str:
        """Fingerprint of the main area: its text and its charts."""
        return self.page.evaluate("window.__pe.pageSignature()")

    def wait_settled(self, since: float, before: str | None = None, some: bool = False) -> None:
        """Wait until the run is over, the page differs from ``before`` (a page_signature()),
        and every visible chart (``some``: at least one, as after a change that only some of
        them depend on) was redrawn after ``since`` (see ``pe.settled`` in PAGE_HOOK_JS)."""
        try:
            self.page.wait_for_function(
                "([since, before, some]) => window.__pe?.settled(since, before, some)",
                arg=[since, before, some],
                polling=100,
                timeout=RUN_TIMEOUT_MS,
            )
        except Exception as error:
            state = self.page.evaluate(
                "({script: window.__pe?.scriptState(), charts: window.__pe?.charts().length,"
                " draws: window.__pe?.draws, problems: window.__pe?.problems()})"
            )
            raise AssertionError(
                f"the app did not settle after the change: {state}; "
                f"console: {self.console_errors}; "
                f"server: {self.server.exit_status() or 'running'}; "
                f"server log:\n{self.server.log_tail(30)}"
            ) from error

    def wait_quiet(self, ms: int = 400) -> None:
        """Wait until the run is over and no chart redrew for ``ms`` milliseconds."""
        self.page.wait_for_function(
            "ms => window.__pe && window.__pe.quiet(ms)", arg=ms, polling=100
        )

    # --- controls ---------------------------------------------------------------------------

    @property
    def sidebar(self):
        return self.page.locator('[data-testid="stSidebar"]')

    def tab(self, label: str):
        """The view's link in the page navigation (top bar, or the sidebar's when narrow)."""
        links = self.page.locator('[data-testid="stTopNavLink"], [data-testid="stSidebarNavLink"]')
        return links.filter(has_text=re.compile("^" + re.escape(label) + "$")).first

    def selected_tab(self) -> str | None:
        return self.page.evaluate("window.__pe.selectedView()")

    def number_input(self, label: str):
        return self.sidebar.locator(f'[data-testid="stNumberInput"] input[aria-label="{label}"]')

    def combobox(self, label: str):
        return self.sidebar.locator(f'input[role="combobox"][aria-label="{label}"]')

    def slider(self, label: str):
        return self.sidebar.locator(f'input[type="range"][aria-label="{label}"]')

    def click_tab(self, label: str) -> None:
        """Go to a view through the navigation, as a person does."""
        before, since = self.page_signature(), self.now()
        link = self.tab(label)
        opens_sidebar = self.page.evaluate(SIDEBAR_CLOSED_JS)
        if opens_sidebar:
            # On a narrow screen the views are listed in the sidebar, which starts closed.
            self.page.locator('[data-testid="stExpandSidebarButton"]').click()
            self.page.wait_for_function(f"() => !({SIDEBAR_CLOSED_JS})()")
        more = self.page.locator('[data-testid="stSidebarNavViewButton"]', has_text="more")
        if link.count() == 0 and more.count():
            more.click()  # the sidebar lists the first views and "View N more"
        if link.evaluate("link => link.closest('[inert]') !== null"):
            # Beyond the bar's width the link sits in the "N more" menu (hidden, inert).
            self.page.locator('[data-testid="stTopNavSection"]').click()
            link = self.page.locator('[data-testid="stTopNavDropdownLink"]').filter(
                has_text=re.compile("^" + re.escape(label) + "$")
            )
        link.click()
        self.page.wait_for_function("label => window.__pe.selectedView() === label", arg=label)
        self.wait_settled(since, before)  # the view's charts are new: each must be drawn
        if opens_sidebar:  # and closed again, as a person does on a phone to see the view
            self.page.locator('[data-testid="stSidebarCollapseButton"] button').click()
            self.page.wait_for_function(SIDEBAR_CLOSED_JS)
        self.wait_quiet()

    def go_back(self) -> None:
        """The browser's Back button; wait until the previous view was drawn and nothing redraws
        (a second Back pressed while a run is still in flight races Streamlit's own history)."""
        before, since = self.page_signature(), self.now()
        self.page.go_back()
        self.wait_settled(since, before)
        self.wait_quiet()

    def set_number(self, label: str, value: int) -> None:
        """Type a value into a sidebar number input and press Enter; wait until charts were
        redrawn and show something else, then until nothing redraws any more."""
        before, since = self.page_signature(), self.now()
        field = self.number_input(label)
        field.fill(str(value))
        field.press("Enter")
        self.wait_settled(since, before, some=True)
        self.wait_quiet()

    def choose(self, label: str, option: str) -> None:
        """Pick the option that starts with ``option`` in a sidebar selectbox."""
        box = self.combobox(label)
        # Scrolled to first, as a person does: a click that scrolls the sidebar to reach the
        # box focuses it without opening its list.
        box.scroll_into_view_if_needed()
        box.click()
        self.page.locator('[role="listbox"]').wait_for(state="visible")
        choice = self.page.get_by_role("option").filter(
            has_text=re.compile("^" + re.escape(option))
        )
        before, since = self.page_signature(), self.now()
        choice.first.click()
        self.wait_settled(since, before, some=True)
        self.wait_quiet()

    def step_slider(self, label: str, key: str = "ArrowRight") -> None:
        before, since = self.page_signature(), self.now()
        self.slider(label).focus()
        self.page.keyboard.press(key)
        self.wait_settled(since, before, some=True)
        self.wait_quiet()

    # --- checks -----------------------------------------------------------------------------

    def problems(self) -> list[str]:
        found = self.page.evaluate("window.__pe.problems()") + self.console_errors
        ended = self.server.exit_status()
        if ended is not None:
            found.insert(0, f"the Streamlit server {ended}; log:\n{self.server.log_tail(20)}")
        log = self.server.log_text()[self.log_start :]
        if "Traceback (most recent call last)" in log:
            found.append("the server logged a traceback:\n" + log[-4000:])
        return found

    def assert_clean(self) -> None:
        assert self.problems() == []

    def warnings(self) -> list[str]:
        alerts = self.page.locator('[data-testid="stAlertContentWarning"]')
        return [text.strip() for text in alerts.all_inner_texts()]

    def screenshot(self, path: Path) -> None:
        """A full-page screenshot, taken when ``PE_SCREENSHOTS=1`` (about a second of the
        browser's time each; nothing is checked on them: they are for a person to look at).
        The app scrolls inside its main block, not the document, so the viewport is made as
        tall as the content for the shot, then restored."""
        if os.environ.get("PE_SCREENSHOTS") != "1":
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        height = self.page.evaluate(
            "Math.max(...['stMain', 'stSidebarContent'].map(id =>"
            " document.querySelector(`[data-testid=${id}]`)?.scrollHeight || 0))"
        )
        self.page.set_viewport_size({"width": VIEWPORT["width"], "height": max(height, 300)})
        self.next_frames()
        self.wait_quiet()
        self.page.wait_for_function("window.__pe.tablesReady()", polling=100)
        self.next_frames()
        self.page.screenshot(path=str(path), full_page=True)
        self.page.set_viewport_size(VIEWPORT)
        self.next_frames()
        self.wait_quiet()

    def next_frames(self) -> None:
        """Let the page lay out and paint after a resize (two animation frames)."""
        self.page.evaluate(
            "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )


def app_context(browser):
    """A browser context whose pages get PAGE_HOOK_JS before the app loads."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PAGE_HOOK_JS)
    return context


def app_page(context, server: StreamlitServer) -> AppPage:
    """A new page in ``context`` on the app, waiting up to RUN_TIMEOUT_MS for anything."""
    page = context.new_page()
    page.set_default_timeout(RUN_TIMEOUT_MS)
    return AppPage(page, server)


def open_view(at, view: str):
    """Go to a view in the same AppTest session (``at``), as a click in the navigation does;
    ``view`` is a slug or a label.

    AppTest.switch_page() finds only pages that are files; the app's pages are functions,
    registered by their URL path, so the page's hash is looked up among the registered pages.
    """
    from dashboard import registry

    labels = {v.slug: v.label for v in registry.VIEWS}
    slug = view if view in labels else next(s for s, label in labels.items() if label == view)
    default = slug == registry.DEFAULT.slug
    at._page_hash = next(
        page_hash
        for page_hash, info in at._registered_pages.items()
        if info.get("url_pathname") == ("" if default else slug)
    )
    return at.run()
