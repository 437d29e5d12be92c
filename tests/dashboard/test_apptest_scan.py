"""The conftest's patches of private Streamlit functions still take effect: one scan of the
installed packages and one compile of a script per process, and a script run awaited by joining
its thread.

If a Streamlit update renames ``streamlit.components.v2.manifest_scanner.scan_component_manifests``
or stops calling it through its module, the patch would do nothing and every AppTest would scan
the installed packages again (a quarter of the time of the tests without browser and fuzz, see
docs/benchmarks.md): this test fails instead.
"""

from pathlib import Path

import pytest
import streamlit.components.v2.manifest_scanner as manifest_scanner
import streamlit.runtime.scriptrunner.script_cache as _script_cache
import streamlit.testing.v1.local_script_runner as _local_script_runner
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


def test_a_run_is_awaited_by_joining_its_thread_and_still_times_out():
    """The conftest's wait for a script run (a private function of Streamlit's AppTest)."""
    assert _local_script_runner.require_widgets_deltas is conftest.require_widgets_deltas
    at = AppTest.from_string("import streamlit as st\nst.write('done')", default_timeout=120)
    at.run()
    assert at.markdown[0].value == "done"
    slow = AppTest.from_string("import time\ntime.sleep(0.6)", default_timeout=0.1)
    with pytest.raises(RuntimeError, match=r"timed out after 0\.1\(s\)"):
        slow.run()
