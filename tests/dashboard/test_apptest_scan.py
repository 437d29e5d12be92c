"""The conftest's one-scan-per-process and one-compile-per-process patches of private Streamlit
functions still take effect.

If a Streamlit update renames ``streamlit.components.v2.manifest_scanner.scan_component_manifests``
or stops calling it through its module, the patch would do nothing and every AppTest would scan
the installed packages again (a quarter of the time of the tests without browser and fuzz, see
docs/benchmarks.md): this test fails instead.
"""

from pathlib import Path

import streamlit.components.v2.manifest_scanner as manifest_scanner
import streamlit.runtime.scriptrunner.script_cache as _script_cache
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


def test_every_apptest_run_reuses_the_compiled_script():
    """The conftest's one compile per process of a script (a private path of Streamlit's): a
    second run uses the bytecode compiled for the first, and a changed file compiles again."""
    assert _script_cache.ScriptCache.get_bytecode is conftest.get_bytecode
    at = AppTest.from_string("import streamlit as st\nst.write('once')", default_timeout=120)
    path = str(Path(at._script_path).resolve())

    def compiles():
        return [key for key in conftest._bytecode if key[0] == path]

    at.run()
    assert len(compiles()) == 1 and at.markdown[0].value == "once"
    at.run()
    assert len(compiles()) == 1
    Path(path).write_text("import streamlit as st\nst.write('changed')")
    at.run()
    assert len(compiles()) == 2 and at.markdown[0].value == "changed"
