"""A restart of the server while a page is open (issue 16): the page reconnects and shows the
same view with the same parameters, because the URL holds them."""

import re

import pytest

from benchmarks.harness import PAGE_HOOK_JS, RUN_TIMEOUT_MS, VIEWPORT, AppPage, StreamlitServer

pytestmark = pytest.mark.browser  # also from the folder (tests/conftest.py)


#: Keeps every WebSocket the page creates, so a test can tell when the page has a connection
#: to the new server (Streamlit's reconnection after a restart may not rerun the script, and
#: shows no status when it is quick: the page's content alone cannot tell).
TRACK_SOCKETS_JS = r"""
(() => {
  const Native = window.WebSocket;
  const sockets = (window.__sockets = []);
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.__opened = false;
      this.addEventListener("open", () => { this.__opened = true; });
      sockets.push(this);
    }
  };
})();
"""


@pytest.fixture
def own_server(chromium_path, tmp_path):
    """A server of this test's own (the shared one must not restart under other tests)."""
    server = StreamlitServer(log_path=tmp_path / "streamlit.log").start()
    try:
        yield server
    finally:
        server.stop()


def test_a_restart_keeps_the_view_and_its_parameters(browser, own_server):
    from playwright.sync_api import expect

    # The lab's default configuration is the sidebar's sinusoid, so a change of d_model
    # redraws its charts (with a model's configuration it would only change the caption).
    link = "rope?rope_qk=random&d=64&L=512"
    # The session's browser (one Playwright per process), on this test's own server.
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.add_init_script(PAGE_HOOK_JS)
        context.add_init_script(TRACK_SOCKETS_JS)
        page = context.new_page()
        page.set_default_timeout(RUN_TIMEOUT_MS)
        app = AppPage(page, own_server)
        app.open(link)
        assert app.selected_tab() == "RoPE lab"
        before = app.page_signature()
        own_server.restart()
        # The page notices the lost connection and opens a new one to the new server; until
        # then a change would go nowhere. The old page stays on screen meanwhile.
        page.wait_for_function(
            "() => window.__sockets.filter((s) => s.__opened).length >= 2 &&"
            " window.__sockets.at(-1).readyState === WebSocket.OPEN",
            polling=100,
            timeout=RUN_TIMEOUT_MS,
        )
        page.wait_for_function(
            "before => window.__pe.scriptState() === 'notRunning' &&"
            " window.__pe.pageSignature() === before",
            arg=before,
            polling=200,
            timeout=RUN_TIMEOUT_MS,
        )
        # While the server was down the page's attempts to reach it failed, and Streamlit
        # logs each as a console error, worded by how it failed (refused, timed out, "not
        # responding"): those are expected. An uncaught page error is not, nor is anything
        # logged from here on.
        app.console_errors = [e for e in app.console_errors if e.startswith("pageerror")]
        assert app.selected_tab() == "RoPE lab"
        expect(page).to_have_url(re.compile(r"/rope\?.*rope_qk=random"))
        configuration = page.locator('input[role="combobox"][aria-label="Configuration"]')
        assert configuration.input_value() == "The sidebar's sinusoid"
        assert app.number_input("d_model").input_value() == "64"
        assert app.number_input("Number of positions L").input_value() == "512"
        # Connected to the new server: a change is answered and lands in the URL.
        app.set_number("d_model", 96)
        expect(page).to_have_url(re.compile(r"[?&]d=96(&|$)"))
        # A request made during the outage may still time out after the reconnection.
        late = ("No response received when attempting to reach /_stcore/health",)
        app.console_errors = [e for e in app.console_errors if not any(t in e for t in late)]
        app.assert_clean()
    finally:
        context.close()
