"""Settings shared by every test module: the hypothesis profile, and one scan of the installed
packages for Streamlit components per test process.

``default``: 150 examples, no deadline (shared machines are noisy: a slow example is not a bug).
Fuzz modules set their own example counts (PE_FUZZ_EXAMPLES, PE_FUZZ_APP_EXAMPLES).
"""

import functools

import streamlit.components.v2.manifest_scanner as _manifest_scanner
from hypothesis import settings

settings.register_profile("default", max_examples=150, deadline=None)
settings.load_profile("default")

# Every new AppTest scans the metadata of every installed distribution for Streamlit components
# (streamlit/testing/v1/app_test.py: a new BidiComponentManager per AppTest), about 0.16 s here:
# 220 scans were a quarter of the time of the tests without browser and fuzz. The installed
# packages do not change while the tests run, so one scan per process gives the same answer.
_scan_once = functools.cache(_manifest_scanner.scan_component_manifests)
_manifest_scanner.scan_component_manifests = lambda *args, **kwargs: list(
    _scan_once(*args, **kwargs)
)
