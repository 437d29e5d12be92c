"""Fixtures for the real-browser tests: one Streamlit server and one Chromium for the session
(Chromium's headless shell where it is installed, as in CI: the same renderer, less CPU).

Without Chromium or Playwright the tests are skipped, unless ``PE_REQUIRE_BROWSER=1`` (set by
CI), where a missing browser is a failure: the browser tests must run there. The plumbing (the
server, Chromium's arguments, the page hook, :class:`AppPage`) is ``benchmarks/harness/``,
shared with the benchmarks.
"""

from __future__ import annotations

import contextlib
import os

import pytest

from benchmarks.harness import (
    CHROMIUM_ARGS,
    ServerError,
    StreamlitServer,
    app_context,
    app_page,
)
from benchmarks.harness import find_chromium as _find_chromium


def _unavailable() -> str | None:
    if _find_chromium() is None:
        return "Chromium not found (neither /usr/bin/chromium nor `chromium` on PATH)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as error:
        return f"the playwright package is not importable ({error})"
    return None


@pytest.fixture(scope="session")
def chromium_path() -> str:
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("PE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(f"browser tests need Chromium and Playwright: {reason}")
    return _find_chromium(headless_shell=True)


@pytest.fixture(scope="session")
def server(chromium_path, tmp_path_factory):
    """The real app, served on a free loopback port; always stopped at the end."""
    instance = StreamlitServer(tmp_path_factory.mktemp("streamlit") / "server.log")
    try:
        instance.start(timeout=60)
    except ServerError as error:
        instance.stop()
        pytest.fail(str(error), pytrace=False)
    try:
        yield instance
    finally:
        instance.stop()


@pytest.fixture(scope="session")
def browser(chromium_path, server):  # after `server`, so it closes before the server stops
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(scope="session")
def shared_context(browser):
    """One browser context for the tests' pages: they share its HTTP cache, so the app's
    scripts are not fetched again for every test (a page load alone: 2.2 s in a new context,
    1.8 to 2.0 s as a new page of a used one)."""
    context = app_context(browser)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def app(shared_context, server):
    """A new page on the app (a new Streamlit session per test) in the shared context. What
    Streamlit keeps in the browser's storage (the sidebar's width, its list of views expanded,
    a theme) is cleared after the test, and the pages it opened are closed."""
    try:
        yield app_page(shared_context, server)
    finally:
        for opened in shared_context.pages:
            if opened.url.startswith(server.url):
                with contextlib.suppress(Exception):  # a page that crashed has nothing to clear
                    opened.evaluate("localStorage.clear()")
            opened.close()


@pytest.fixture
def fresh_app(browser, server):
    """A page in a context of its own, for a test of what the page loads (an empty cache)."""
    context = app_context(browser)
    try:
        yield app_page(context, server)
    finally:
        context.close()
