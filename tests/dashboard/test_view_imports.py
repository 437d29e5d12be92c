"""No view imports another view: what two views share lives in a module they both import
(dashboard/view_parts, the figures, or the core)."""

import ast
from pathlib import Path

import pytest

from tests import ROOT

DASHBOARD = ROOT / "dashboard"
VIEWS = sorted(p for p in (DASHBOARD / "views").glob("*.py") if p.name != "__init__.py")
SHARED = sorted((DASHBOARD / "view_parts").glob("*.py"))


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (``from a import b`` counts ``a`` and
    ``a.b``, which may be a module)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level:  # relative: resolve against dashboard/views or dashboard/view_parts
                package = ["dashboard", path.parent.name][: 3 - node.level]
                base = ".".join([*package, node.module])
            else:
                base = node.module
            modules.add(base)
            modules.update(f"{base}.{alias.name}" for alias in node.names)
    return modules


def view_modules_imported_by(path: Path) -> set[str]:
    return {
        m
        for m in imported_modules(path)
        if m == "dashboard.views" or m.startswith("dashboard.views.")
    }


def test_the_check_sees_a_view_import(tmp_path):
    (tmp_path / "views").mkdir()
    sample = tmp_path / "views" / "x.py"
    sample.write_text("from dashboard.views import rope\nfrom dashboard.views.heatmap import a\n")
    assert view_modules_imported_by(sample) == {
        "dashboard.views",
        "dashboard.views.rope",
        "dashboard.views.heatmap",
        "dashboard.views.heatmap.a",
    }


@pytest.mark.parametrize("path", VIEWS + SHARED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_view_or_shared_part_imports_a_view(path):
    assert not view_modules_imported_by(path)


def test_there_are_views_and_shared_parts():
    assert len(VIEWS) >= 10 and SHARED


def test_params_loads_no_plotting_code():
    """The parameters (imported by every page and by the link check) load none of the app's
    figures or its chart helpers: a parameter is a widget and a URL key, not a drawing."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, dashboard.params; "
            "print(sorted(m for m in sys.modules if m.startswith(('dashboard.ui', "
            "'dashboard.figures', 'dashboard.views'))))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert loaded == "[]"
