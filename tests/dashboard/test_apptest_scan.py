"""The conftest's one-scan-per-process patch of a private Streamlit function still takes effect.

If a Streamlit update renames ``streamlit.components.v2.manifest_scanner.scan_component_manifests``
or stops calling it through its module, the patch would do nothing and every AppTest would scan
the installed packages again (a quarter of the time of the tests without browser and fuzz, see
docs/benchmarks.md): this test fails instead.
"""

import streamlit.components.v2.manifest_scanner as manifest_scanner
from streamlit.testing.v1 import AppTest

from tests import conftest


def test_every_apptest_asks_the_one_scan_of_the_process():
    assert manifest_scanner.scan_component_manifests is conftest.scan_component_manifests
    before = conftest._scan_once.cache_info()
    for _ in range(2):
        at = AppTest.from_string("import streamlit as st\nst.write(1)", default_timeout=120)
        at.run()
        assert not at.exception
    after = conftest._scan_once.cache_info()
    assert after.hits + after.misses == before.hits + before.misses + 2  # each went through it
    assert after.misses <= 1  # and the packages were scanned once
