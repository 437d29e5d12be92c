"""Headless Chromium on the app: its arguments and viewport, and :class:`AppPage`, a page on the
app that waits for its reruns through :data:`PAGE_HOOK_JS` and does what a person does (open a
view, type a number, pick an option, step a slider) and checks what went wrong."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from benchmarks.harness._page_js import PAGE_HOOK_JS, SIDEBAR_CLOSED_JS
from benchmarks.harness._server import ROOT, StreamlitServer

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


#: Chromium's headless shell (Debian's ``chromium-headless-shell``; Playwright's own choice for
#: headless runs): the same Blink and V8 without the browser's window and its interface (the
#: full browser preloads an omnibox popup page, a process of its own, for every new tab).
HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"


def find_chromium(*, headless_shell: bool = False) -> str | None:
    """Path of the system Chromium, or None.

    With ``headless_shell``, the headless shell where it is installed, else the full browser:
    the browser tests' choice (a sixth less CPU over their pages, docs/benchmarks.md, issue 48).
    The benchmarks keep the full browser, what a person opens.
    """
    if headless_shell and os.access(HEADLESS_SHELL, os.X_OK):
        return HEADLESS_SHELL
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


#: Opened directly on a view's path (/similarity), Streamlit's page first asks
#: /similarity/_stcore/health and /similarity/_stcore/host-config, to find out whether the app
#: is served under that prefix; the 404s it gets are how it learns that it is not. Only these
#: are not counted as errors.
_PROBE = re.compile(r"^http://127\.0\.0\.1:\d+/[a-z]+/_stcore/(health|host-config)$")


def _base_path_probe(message) -> bool:
    url = (message.location or {}).get("url", "")
    return "404" in message.text and bool(_PROBE.match(url))


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
