"""A restart of the server while a page is open (issue 16): the page reconnects and shows the
same view with the same parameters, because the URL holds them."""

import re

import pytest

from . import PAGE_HOOK_JS, VIEWPORT, StreamlitServer
from .conftest import RUN_TIMEOUT_MS, AppPage

pytestmark = pytest.mark.browser


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

    link = "rope?rope_model=gpt-oss-20b+%28YaRN+x32%29&rope_qk=random&d=64"
    # The session's browser (one Playwright per process), on this test's own server.
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.add_init_script(PAGE_HOOK_JS)
        page = context.new_page()
        page.set_default_timeout(RUN_TIMEOUT_MS)
        app = AppPage(page, own_server)
        app.open(link)
        assert app.selected_tab() == "RoPE lab"
        before = app.page_signature()
        own_server.restart()
        # Streamlit's page notices the lost connection, reconnects to the new server and
        # reruns the script on the URL it shows.
        page.wait_for_function(
            "before => window.__pe.scriptState() === 'notRunning' &&"
            " window.__pe.pageSignature() === before",
            arg=before,
            polling=200,
            timeout=RUN_TIMEOUT_MS,
        )
        assert app.selected_tab() == "RoPE lab"
        expect(page).to_have_url(re.compile(r"/rope\?.*rope_qk=random"))
        configuration = page.locator('input[role="combobox"][aria-label="Configuration"]')
        assert configuration.input_value() == "gpt-oss-20b (YaRN x32)"
        assert app.number_input("d_model").input_value() == "64"
        # Connected to the new server: a change is answered and lands in the URL.
        app.set_number("d_model", 96)
        expect(page).to_have_url(re.compile(r"[?&]d=96(&|$)"))
        # While the server was down the page's reconnection attempts failed (refused health
        # checks and websocket); those are expected, nothing else is.
        expected = ("net::ERR_CONNECTION_REFUSED", "WebSocket connection to")
        app.console_errors = [
            e for e in app.console_errors if not any(text in e for text in expected)
        ]
        app.assert_clean()
    finally:
        context.close()
