"""``python -m pe_core`` run from the tests, the one way every test file runs it.

In this process by default: the same ``main`` the module runs, its exit status, its standard
output and error, without starting an interpreter and importing NumPy again for each call
(0.8 s of CPU each, most of the command-line tests' time). ``in_child=True`` runs the real
command in a child process, for the tests of the entry point itself.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from pe_core.__main__ import main
from tests import ROOT


def run_cli(
    *args: str | Path, in_child: bool = False, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run ``python -m pe_core *args`` from the project's root; what it printed, as text."""
    argv = [str(arg) for arg in args]
    command = [sys.executable, "-m", "pe_core", *argv]
    if in_child:
        return subprocess.run(
            command,
            cwd=ROOT,  # this checkout's pe_core first on sys.path
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit:  # argparse's usage errors
            status = exit.code if isinstance(exit.code, int) else 1
    return subprocess.CompletedProcess(command, status, out.getvalue(), err.getvalue())
