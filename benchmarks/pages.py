"""Every page at the speed of a click: the times a person waits, as ratios to a plain page.

Opens the app in headless Chromium as a person does and times, from the input (the click's
``pointerdown``, the key press, the navigation) to the moment the page is done:

- **switch**: a click on each page's link in the sidebar navigation, round after round (the
  first round fills the server's caches and is reported as "first visit"; the figures are
  the medians of the rounds after it);
- **fresh visit**: a new browser (empty HTTP cache) opening the app's address: its first chart;
- **link**: a few pages opened from their address in a new tab of a browser that has seen the
  app before;
- **slider**: one step of the sidebar's base slider on the Heatmap (an image) and on Sinusoids
  (two Plotly charts), each step a new value;
- **upload**: a 1 MB table (a float32 ``.npy``, 2,048 x 128) uploaded on Check my encoding, to
  its verdict on screen.

Done means: the run is over, every chart on screen was drawn after the input ("drawn"), and
nothing in the app changed for 400 ms ("idle": its time is the last change before that quiet,
so a chart that Streamlit or Plotly draws a second time counts). The times are read from the
page hook (``benchmarks/harness/_page_js.py``: each Plotly ``afterplot``, each image drawn,
each end of a run, each change of the app's elements), not from when a poll noticed them.

The same is measured on a plain two-page app (``benchmarks/reference_app.py``: a title, a line,
a slider and one Plotly chart) served beside the dashboard in the same run, its rounds
interleaved with the dashboard's, and every figure is also given as a ratio to its reference
(a switch and an upload against the reference's switch, a fresh visit, a link and a slider
step against the reference's own). The machine's load average is printed with the table.

    .venv/bin/python benchmarks/pages.py                # the table, 5 rounds (~3 min at rest)
    .venv/bin/python benchmarks/pages.py --check        # CI: 2 rounds, fails on a page > 2x
    .venv/bin/python benchmarks/pages.py --record       # store this run's ratios as the record
    .venv/bin/python benchmarks/pages.py --root ../old  # another checkout's dashboard

``--check`` fails (exit status 1) only when a figure's ratio is more than ``--limit`` (2) times
its recorded ratio (``benchmarks/pages_ratios.json``) in two runs in a row: when one is over,
the whole check runs once more (a moment of load on a shared machine can double one figure),
and only what is over in both fails. It never compares absolute times.
``--port N`` serves the dashboard on N and the reference on N + 1 (default: free ports in
8600-8799). ``--json FILE`` also writes every sample.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.harness import (  # noqa: E402
    CHROMIUM_ARGS,
    PAGE_HOOK_JS,
    VIEWPORT,
    AppPage,
    StreamlitServer,
    find_chromium,
)

RECORD = ROOT / "benchmarks" / "pages_ratios.json"
REFERENCE_APP = ROOT / "benchmarks" / "reference_app.py"
#: Pages opened from their address (slugs): the first Plotly page, the heaviest, a table, and
#: the lesson's step-3 link, whose 2,000 markers took 19-24 s to open while page.css searched
#: every chart's insides (issue 51; about 3.5 s without).
LINKS = ("sinusoids", "rope", "wavelengths", "uniqueness?L=2000&d=2")
SLIDER = "base (log scale)"
SLIDER_PAGES = ("Heatmap", "Sinusoids")
#: The value a range input takes after a key (as its ``value``: a string).
NEXT_VALUE_JS = """(e, key) => {
  const [value, step, low, high] = [e.value, e.step || 1, e.min, e.max].map(Number);
  const next = {ArrowRight: value + step, ArrowLeft: value - step, Home: low, End: high}[key];
  return String(Math.min(high, Math.max(low, next)));
}"""
UPLOAD_ROWS, UPLOAD_COLUMNS = 2048, 128  # float32: 1 MiB of values
QUIET_MS = 400
TIMEOUT_MS = 90_000

#: When the page was done after an input made at ``start`` (performance.now()): "drawn", the
#: run over and every chart on screen drawn once after ``start``; "idle", the last change of
#: the app (a draw, a run's end, an element) before the quiet that ended the wait.
TIMES_JS = """(start) => {
  const pe = window.__pe;
  const after = (times) => times.filter((t) => t > start);
  const runs = after(pe.runEnds);
  const firsts = pe.firstDraws(start).filter((t) => t !== null);
  const images = after(Array.from(document.querySelectorAll("[data-pe-image]"),
                                  (el) => Number(el.getAttribute("data-pe-drawn")) || 0));
  // A page without charts: its elements as they were when the page was seen settled.
  const still = pe.charts().length ? [] : after([pe.settledChange || 0]);
  const drawn = Math.max(start, ...runs, ...firsts, ...still);
  const idle = Math.max(drawn, pe.lastDraw, ...images, pe.lastChange);
  return {drawn: drawn - start, idle: idle - start, charts: pe.charts().length};
}"""

#: The run is over and nothing in the app changed (an element, a chart) for ``ms``.
QUIET_JS = """(ms) => {
  const pe = window.__pe;
  if (!pe || pe.scriptState() !== "notRunning" || pe.loading()) return false;
  const images = Array.from(document.querySelectorAll("[data-pe-image]"),
                            (el) => Number(el.getAttribute("data-pe-drawn")) || 0);
  return performance.now() - Math.max(pe.lastDraw, pe.lastChange, ...images) > ms;
}"""

#: ``window.__peShown``: a promise of performance.now() when the main area's text contains
#: ``text`` (kept on the window: a promise returned to Playwright would be awaited at once).
TEXT_SHOWN_JS = """(text) => { window.__peShown = new Promise((resolve) => {
  const seen = () => document.querySelector('[data-testid="stMain"]')?.textContent.includes(text);
  if (seen()) return resolve(performance.now());
  const observer = new MutationObserver(() => {
    if (seen()) { observer.disconnect(); resolve(performance.now()); }
  });
  observer.observe(document.body, {childList: true, subtree: true, characterData: true});
}); }"""


VERBOSE = False


def say(*words) -> None:
    if VERBOSE:
        print(f"{time.strftime('%H:%M:%S')}", *words, file=sys.stderr, flush=True)


def load_average() -> str:
    with open("/proc/loadavg") as handle:
        return " ".join(handle.read().split()[:3])


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free loopback ports in 8600-8799 (this project's
    range on a shared machine), picked at random."""
    starts = list(range(8600, 8800 - count + 1))
    random.shuffle(starts)
    for start in starts:
        if all(_port_free(start + i) for i in range(count)):
            return start
    raise SystemExit("no free ports in 8600-8799")


@dataclass
class Samples:
    """One kind of measurement: its times (ms, "drawn" and "idle") and what it cost (the
    server's CPU, the page's main thread, the bytes the page received), one entry a run."""

    drawn: list[float] = field(default_factory=list)
    idle: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    page_ms: list[float] = field(default_factory=list)
    layouts: list[float] = field(default_factory=list)
    received_kb: list[float] = field(default_factory=list)

    def add(self, times: dict) -> None:
        for name in ("drawn", "idle", "server_ms", "page_ms", "layouts", "received_kb"):
            getattr(self, name).append(times[name])

    @property
    def cpu_ms(self) -> list[float]:
        """The server's and the page's CPU time, run by run."""
        return [a + b for a, b in zip(self.server_ms, self.page_ms, strict=True)]


class Session:
    """One page in a browser context on a server, with the waits and timings of this script.

    Each action returns its times (from :data:`TIMES_JS`) and what it cost, from the input
    until the page was idle: the server's CPU time (from /proc), the CPU time of the page's
    renderer process (Chromium's ``ProcessTime``: script, style, layout, paint and raster, on
    every thread of the page, counted in steps of 10 ms), its layouts (``LayoutCount``) and
    the bytes the page received on its websocket. CPU times are less at the mercy of the
    machine's other work than wall-clock times.
    """

    def __init__(self, context, server: StreamlitServer) -> None:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        self.app = AppPage(page, server)
        self.page = page
        self.server = server
        self.received = 0
        self.drawn: dict[str, set[str]] = {}  # each slider's values drawn in this session
        page.on("websocket", self._on_websocket)
        self.cdp = context.new_cdp_session(page)
        self.cdp.send("Performance.enable")

    def _on_websocket(self, socket) -> None:
        socket.on("framereceived", self._on_frame)

    def _on_frame(self, payload) -> None:
        self.received += len(payload)

    def _metrics(self) -> dict[str, float]:
        return {m["name"]: m["value"] for m in self.cdp.send("Performance.getMetrics")["metrics"]}

    def _measured(self, action, start_js: str | None) -> dict:
        """Run ``action``, wait until the page is idle; its times from ``start_js``'s value
        (None: from the navigation's start) and what it cost."""
        cpu, before, received = self.server.cpu_seconds(), self._metrics(), self.received
        action()
        self.quiet()
        start = 0.0 if start_js is None else self.page.evaluate(start_js)
        times = self.times(start)
        after = self._metrics()
        times["server_ms"] = 1000 * (self.server.cpu_seconds() - cpu)
        times["page_ms"] = 1000 * (after["ProcessTime"] - before["ProcessTime"])
        times["layouts"] = after["LayoutCount"] - before["LayoutCount"]
        times["received_kb"] = (self.received - received) / 1000
        return times

    def quiet(self) -> None:
        self.page.wait_for_function(QUIET_JS, arg=QUIET_MS, polling=50, timeout=TIMEOUT_MS)

    def times(self, start: float) -> dict:
        return self.page.evaluate(TIMES_JS, start)

    def open(self, path: str = "") -> dict:
        """Navigate to ``path``; times from the navigation's start."""
        say("open", self.server.url, path)

        def navigate() -> None:
            self.page.goto(self.server.url + "/" + path)
            self.app.wait_settled(since=-1)

        return self._measured(navigate, None)

    def labels(self) -> list[str]:
        return self.page.evaluate("window.__pe.viewLinks().map((a) => a.innerText.trim())")

    def selected(self) -> str | None:
        return self.page.evaluate("window.__pe.selectedView()")

    def switch(self, label: str) -> dict:
        """A click on ``label`` in the navigation; times from its pointerdown."""
        say("switch to", label)
        # click_tab waits until every chart was drawn and the run is over, then for quiet.
        return self._measured(lambda: self.app.click_tab(label), "window.__pe.lastInput")

    def slider_step(self, key: str) -> dict:
        """One step of the page's slider. Each measured step goes to a value not drawn before
        in this session (a value drawn before is answered from the caches): at the slider's
        end, an uncounted step back to its first stop comes first, and a slider with no value
        left to draw is an error that names --rounds."""
        label = SLIDER if self.app.slider(SLIDER).count() else "frequency"
        slider = self.app.slider(label)
        drawn = self.drawn.setdefault(label, {slider.evaluate("e => e.value")})
        if key == "ArrowRight" and slider.evaluate("e => e.value === e.max"):
            say("slider", label, "Home (not counted)")
            self.app.step_slider(label, "Home")
            drawn.add(slider.evaluate("e => e.value"))
        if slider.evaluate(NEXT_VALUE_JS, key) in drawn:
            raise SystemExit(
                f"the {label!r} slider has no value left that this session has not drawn: "
                "use fewer --rounds, or --skip slider"
            )
        say("slider", label, key)
        times = self._measured(lambda: self.app.step_slider(label, key), "window.__pe.lastInput")
        drawn.add(slider.evaluate("e => e.value"))
        return times

    def upload(self, path: Path, text: str) -> dict:
        """``path`` given to the page's file input; "drawn" is when ``text`` shows."""
        say("upload", path.name)
        self.page.evaluate(TEXT_SHOWN_JS, text)  # watching before the upload
        self.page.evaluate("window.__peUpload = performance.now()")

        def upload() -> None:
            self.page.locator('input[type="file"]').first.set_input_files(path)
            self.page.get_by_text(text).first.wait_for(timeout=TIMEOUT_MS)

        times = self._measured(upload, "window.__peUpload")
        shown = self.page.evaluate("window.__peShown.then((t) => t - window.__peUpload)")
        times["drawn"] = shown
        times["idle"] = max(times["idle"], shown)
        return times


def upload_files(directory: Path, count: int) -> list[tuple[Path, str]]:
    """``count`` 1 MiB float32 tables, each at another base (so no upload is answered from a
    cache), and the words of each one's verdict."""
    import pe_core

    files = []
    for index in range(count):
        base = 10_000 + 1_000 * index
        table = pe_core.sinusoidal_encoding(UPLOAD_ROWS, UPLOAD_COLUMNS, base=base)
        path = directory / f"table_base{base}.npy"
        buffer = io.BytesIO()
        np.save(buffer, table.astype(np.float32))
        path.write_bytes(buffer.getvalue())
        files.append((path, f"base {base}"))
    return files


def commit_of(root: Path) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%h %cs"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"


class Results:
    """Samples by row; each row knows the reference row it is divided by."""

    def __init__(self) -> None:
        self.rows: dict[str, Samples] = {}
        self.reference: dict[str, str] = {}

    def add(self, row: str, reference: str, times: dict) -> None:
        self.rows.setdefault(row, Samples()).add(times)
        self.reference[row] = reference

    def median(self, row: str) -> float:
        return statistics.median(self.rows[row].idle)

    def ratio(self, row: str) -> float:
        return self.median(row) / self.median(self.reference[row])

    def cpu_ratio(self, row: str) -> float:
        """The median CPU time (server and page) over the reference's."""
        cpu = statistics.median(self.rows[row].cpu_ms)
        return cpu / max(1.0, statistics.median(self.rows[self.reference[row]].cpu_ms))

    def with_rows_of(self, other: Results) -> Results:
        """These rows and ``other``'s (the reference's) in one."""
        merged = Results()
        for source in (self, other):
            merged.rows.update(source.rows)
            merged.reference.update(source.reference)
        return merged

    def as_json(self) -> dict:
        return {row: {**vars(s), "reference": self.reference[row]} for row, s in self.rows.items()}


@dataclass
class App:
    """One dashboard checkout under test: its server, its session, and its results."""

    name: str
    root: Path
    server: StreamlitServer
    results: Results = field(default_factory=Results)
    session: Session | None = None
    context: object = None
    order: list[str] = field(default_factory=list)


def measure(args, roots: list[Path]) -> tuple[list[App], Results]:
    """Every measurement of every checkout in ``roots``, and the reference's, interleaved."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("Chromium not found: apt-get install chromium")
    port = args.port or free_ports(len(roots) + 1)
    apps = [
        App(
            name=root.name if len(roots) > 1 else "",
            root=root,
            server=StreamlitServer(app=root / "dashboard" / "app.py", cwd=root),
        )
        for root in roots
    ]
    reference = Results()
    ref_server = StreamlitServer(app=REFERENCE_APP, cwd=ROOT)
    servers = [app.server for app in apps] + [ref_server]
    with contextlib.ExitStack() as stack:
        for offset, server in enumerate(servers):
            stack.callback(server.stop)
            server.start(port=port + offset)
        playwright = stack.enter_context(sync_playwright())
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        stack.callback(browser.close)

        def new_context():
            made = browser.new_context(viewport=VIEWPORT)
            made.add_init_script(PAGE_HOOK_JS)
            return made

        # Each server's first page pays its imports: one page each, not timed.
        for server in servers:
            warm = new_context()
            Session(warm, server).open()
            warm.close()
        for app in apps:
            app.context = new_context()
            app.session = Session(app.context, app.server)
            app.session.open()
            home = app.session.selected()
            labels = app.session.labels()
            app.order = [label for label in labels if label != home] + [home]
        ref_context = new_context()
        ref = Session(ref_context, ref_server)
        ref.open()
        ref_order = [*ref.labels()[1:], ref.labels()[0]]

        def reference_switches(round_: int) -> None:
            for label in ref_order:
                times = ref.switch(label)
                if round_:
                    reference.add("reference switch", "reference switch", times)

        # Round 0 visits every page once (the servers' caches fill: "first visit"); the
        # rounds after it are the figures. The reference's switches come before and after
        # each checkout's pages, so that both see the same moments of the machine's load.
        for round_ in range(args.rounds + 1):
            if round_ and "fresh" not in args.skip:
                for server, results, row in [
                    *((a.server, a.results, "fresh visit: first chart") for a in apps),
                    (ref_server, reference, "reference fresh visit"),
                ]:
                    fresh = new_context()
                    results.add(row, "reference fresh visit", Session(fresh, server).open())
                    fresh.close()
            for app in apps:
                reference_switches(round_)
                for label in app.order:
                    row = f"switch: {label}" if round_ else f"first visit: {label}"
                    app.results.add(row, "reference switch", app.session.switch(label))
            reference_switches(round_)
            if round_ and round_ <= args.link_rounds and "links" not in args.skip:
                for app in apps:
                    for slug in LINKS:
                        tab = Session(app.context, app.server)
                        app.results.add(f"link: /{slug}", "reference link", tab.open(slug))
                        tab.page.close()
                tab = Session(ref_context, ref_server)
                reference.add("reference link", "reference link", tab.open("b"))
                tab.page.close()
            print(f"round {round_} done, load average {load_average()}", file=sys.stderr)
        if "slider" not in args.skip:
            # Each step a value not seen before. The first step after opening a page is not
            # counted: it waits out the end of the switch (with 2 rounds, --check's median
            # was the mean of that step and one other: the Heatmap's 148 ms step read 302 ms).
            # The checkouts' steps and the reference's alternate, one each in turn: one
            # checkout's steps after another's put a moment of load on one of them only (a
            # run of 91cb7a4 against speed4: 343 against 582 ms with less CPU for the latter).
            ref.slider_step("ArrowRight")
            for label in SLIDER_PAGES:
                for app in apps:
                    if app.session.selected() != label:
                        app.session.switch(label)
                    app.session.slider_step("ArrowRight")
                for _ in range(args.rounds):
                    for app in apps:
                        app.results.add(
                            f"slider: {label}, base",
                            "reference slider",
                            app.session.slider_step("ArrowRight"),
                        )
                    reference.add(
                        "reference slider", "reference slider", ref.slider_step("ArrowRight")
                    )
        if "upload" not in args.skip:
            # On Check, each file at another base: the first warms the page, the others count.
            uploads = upload_files(scratch, args.rounds + 1)
            for app in apps:
                check = next(label for label in app.order if label.startswith("Check"))
                app.session.switch(check)
                for index, (path, words) in enumerate(uploads):
                    times = app.session.upload(path, words)
                    if index:
                        app.results.add("upload 1 MB .npy: verdict", "reference switch", times)
        problems = [p for app in apps for p in app.session.app.problems()] + ref.app.problems()
        if problems:
            raise SystemExit(f"the app reported problems: {problems}")
    return apps, reference


def table(results: Results, reference: Results, recorded: dict, limit: float):
    """The markdown table of one checkout (and the reference's rows), and its rows over their
    limit."""
    merged = results.with_rows_of(reference)
    lines = [
        "| page or action | idle | drawn | server CPU | page CPU | layouts | received | runs | "
        f"ratio | CPU ratio | recorded | over {limit:g}x? |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    over = []
    for row, samples in merged.rows.items():
        ratio = merged.ratio(row)
        before = recorded.get(row)
        verdict = "" if before is None else ("**yes**" if ratio > limit * before else "no")
        if verdict == "**yes**":
            over.append((row, f"{row}: ratio {ratio:.2f}, recorded {before:.2f}"))
        cells = [
            row,
            f"{merged.median(row):,.0f} ms",
            f"{statistics.median(samples.drawn):,.0f} ms",
            f"{statistics.median(samples.server_ms):,.0f} ms",
            f"{statistics.median(samples.page_ms):,.0f} ms",
            f"{statistics.median(samples.layouts):,.0f}",
            f"{statistics.median(samples.received_kb):,.0f} kB",
            str(len(samples.idle)),
            f"{ratio:.2f}",
            f"{merged.cpu_ratio(row):.2f}",
            "-" if before is None else f"{before:.2f}",
            verdict,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines), over


def comparison(apps: list[App]) -> str:
    """Idle medians of every row side by side, and each checkout's over the first's."""
    first = apps[0]
    lines = [
        "| page or action | "
        + " | ".join(app.name for app in apps)
        + " | "
        + " | ".join(f"{app.name} / {first.name}" for app in apps[1:])
        + " |",
        "|---|" + "---:|" * (2 * len(apps) - 1),
    ]
    for row in first.results.rows:
        if not all(row in app.results.rows for app in apps):
            continue
        medians = [app.results.median(row) for app in apps]
        lines.append(
            f"| {row} | "
            + " | ".join(f"{m:,.0f} ms" for m in medians)
            + " | "
            + " | ".join(f"{m / medians[0]:.2f}" for m in medians[1:])
            + " |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, help="measured rounds (5; 2 with --check)")
    parser.add_argument("--check", action="store_true", help="fail on a ratio over the limit")
    parser.add_argument("--record", action="store_true", help=f"store the ratios in {RECORD.name}")
    parser.add_argument("--limit", type=float, default=2.0, help="times the recorded ratio")
    parser.add_argument(
        "--root",
        action="append",
        help="a checkout whose dashboard to run (this one by default; given twice or more, "
        "their pages are measured in turn in the same run and compared)",
    )
    parser.add_argument("--port", type=int, help="the first of the consecutive ports used")
    parser.add_argument("--skip", default="", help="any of fresh,links,slider,upload")
    parser.add_argument("--verbose", action="store_true", help="say each step on stderr")
    parser.add_argument("--json", help="write every sample to this file")
    args = parser.parse_args()
    args.skip = set(filter(None, args.skip.split(",")))
    global VERBOSE
    VERBOSE = args.verbose
    if args.rounds is None:
        args.rounds = 2 if args.check else 5
    args.link_rounds = 1 if args.check else min(args.rounds, 3)
    roots = [Path(root).resolve() for root in (args.root or [ROOT])]
    started, load_before = time.monotonic(), load_average()
    apps, reference = measure(args, roots)
    load_after = load_average()
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    print(
        f"\n{args.rounds} rounds, {time.monotonic() - started:.0f} s; load average "
        f"{load_before} before, {load_after} after; {os.cpu_count()} CPUs"
    )
    failed: dict[str, str] = {}
    for app in apps:
        text, over = table(app.results, reference, record.get("ratios", {}), args.limit)
        print(f"\n{app.name or 'dashboard'}: {commit_of(app.root)} ({app.root})\n\n{text}")
        failed |= {f"{app.name}/{row}": f"{app.name or 'dashboard'}: {line}" for row, line in over}
    if len(apps) > 1:
        print("\n" + comparison(apps))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {app.name: app.results.as_json() for app in apps}
                | {"reference": reference.as_json()},
                indent=1,
            )
        )
    if args.record:
        app = apps[0]
        merged = app.results.with_rows_of(reference)
        ratios = {
            row: round(merged.ratio(row), 3)
            for row in app.results.rows
            if not row.startswith("first visit")
        }
        RECORD.write_text(
            json.dumps(
                {
                    "commit": commit_of(app.root),
                    "load average": f"{load_before} before, {load_after} after",
                    "rounds": args.rounds,
                    "ratios": ratios,
                },
                indent=1,
            )
            + "\n"
        )
        print(f"\nrecorded in {RECORD.relative_to(ROOT)}")
    if args.check:
        if failed:
            # A moment of load on a shared machine can double one figure: what is over its limit
            # is measured again, and fails only if it is over in both runs.
            print(f"\nover {args.limit:g} times the record: {', '.join(failed)}; measuring again")
            apps, reference = measure(args, roots)
            print(f"\nsecond run, load average {load_average()}")
            again: dict[str, str] = {}
            for app in apps:
                text, over = table(app.results, reference, record.get("ratios", {}), args.limit)
                print(f"\n{app.name or 'dashboard'}: {commit_of(app.root)}\n\n{text}")
                again |= {f"{app.name}/{row}": line for row, line in over}
            failed = {key: again[key] for key in failed if key in again}
        if failed:
            print(f"\nFAILED: more than {args.limit:g} times the recorded ratio, in both runs:")
            print("\n".join(f"  {line}" for line in failed.values()))
            raise SystemExit(1)
        print(f"\nevery page within {args.limit:g} times its recorded ratio")


if __name__ == "__main__":
    main()
