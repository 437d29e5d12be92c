"""Settings shared by every test module: the hypothesis profile, the markers that follow the
folders, and one scan of the installed packages for Streamlit components per test process.

``default``: 150 examples, no deadline (shared machines are noisy: a slow example is not a bug).
Fuzz modules set their own example counts (PE_FUZZ_EXAMPLES, PE_FUZZ_APP_EXAMPLES).
"""

import functools
from pathlib import Path

import pytest
import streamlit.components.v2.manifest_scanner as _manifest_scanner
from hypothesis import settings

settings.register_profile("default", max_examples=150, deadline=None)
settings.load_profile("default")

#: Every test in these folders gets the folder's marker (``-m "not browser and not fuzz"``).
FOLDER_MARKERS = {"browser": pytest.mark.browser, "fuzz": pytest.mark.fuzz}
_TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        path = Path(item.path).resolve()
        if path.is_relative_to(_TESTS):
            marker = FOLDER_MARKERS.get(path.relative_to(_TESTS).parts[0])
            if marker is not None:
                item.add_marker(marker)


# Every new AppTest scans the metadata of every installed distribution for Streamlit components
# (streamlit/testing/v1/app_test.py: a new BidiComponentManager per AppTest), about 0.12 to
# 0.16 s here. The installed packages do not change while the tests run, so one scan per process
# gives the same answer. Streamlit has no public setting for this: the patch replaces a private
# function, and tests/dashboard/test_apptest_scan.py fails if a Streamlit update renames it or
# stops calling it through the module (the patch would then do nothing, silently).
_real_scan = _manifest_scanner.scan_component_manifests
_scan_once = functools.cache(_real_scan)


def scan_component_manifests(*args, **kwargs):
    """The first scan's answer, as a new list each time (as the real function returns)."""
    return list(_scan_once(*args, **kwargs))


_manifest_scanner.scan_component_manifests = scan_component_manifests
