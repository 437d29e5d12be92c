"""The tests, laid out as the code is: ``core/`` (pe_core), ``dashboard/`` (the app through
AppTest, and its modules), ``browser/`` (the app in Chromium, marked ``browser``), ``fuzz/``
(hypothesis fuzzing, marked ``fuzz``); ``data/`` holds the reference tables they read."""

from pathlib import Path

#: The repository's root.
ROOT = Path(__file__).resolve().parents[1]
#: tests/data: reference tables computed once with the libraries' own code.
DATA = ROOT / "tests" / "data"
