"""The real Streamlit server, driven by headless Chromium through Playwright: the pytest-free
plumbing shared by the browser tests (``tests/browser``) and the benchmarks.

Finding Chromium, starting and stopping the server, :data:`PAGE_HOOK_JS` (a script installed in
every page before the app loads that records each Plotly redraw, the time of the last user input
and the app's script state), :class:`AppPage` (a page on the app and what a test or a benchmark
does with it), and :func:`open_view` (a view in an AppTest session). Playwright is imported
lazily (by the callers), so importing this module never fails where Playwright is missing.

One module a topic: ``_server`` (the server), ``_page_js`` (the scripts run in the page),
``_page`` (Chromium's settings and :class:`AppPage`), ``_apptest`` (:func:`open_view`).
"""

from benchmarks.harness._apptest import open_view
from benchmarks.harness._page import (
    CHROMIUM_ARGS,
    RUN_TIMEOUT_MS,
    SCREENSHOTS,
    VIEWPORT,
    AppPage,
    app_context,
    app_page,
    find_chromium,
)
from benchmarks.harness._page_js import (
    PAGE_HOOK_JS,
    PLAY_FRAMES_JS,
    PLOTLY_INTERRUPTED,
    SIDEBAR_CLOSED_JS,
    widened_margins_js,
)
from benchmarks.harness._server import APP, ROOT, ServerError, StreamlitServer, free_port

__all__ = [
    "APP",
    "CHROMIUM_ARGS",
    "PAGE_HOOK_JS",
    "PLAY_FRAMES_JS",
    "PLOTLY_INTERRUPTED",
    "ROOT",
    "RUN_TIMEOUT_MS",
    "SCREENSHOTS",
    "SIDEBAR_CLOSED_JS",
    "VIEWPORT",
    "AppPage",
    "ServerError",
    "StreamlitServer",
    "app_context",
    "app_page",
    "find_chromium",
    "free_port",
    "open_view",
    "widened_margins_js",
]
