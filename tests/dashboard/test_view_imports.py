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


def private_pe_core_names(path: Path) -> set[str]:
    """The private pe_core names ``path`` uses: a module or name with a leading underscore,
    imported (``from pe_core._files import ...``, ``from pe_core.x import _y``) or reached as
    an attribute (``pe_core._files``)."""
    used = {m for m in imported_modules(path) if m.split(".")[0] == "pe_core"}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        name = node.value if isinstance(node, ast.Attribute) else None
        if isinstance(name, ast.Name) and name.id == "pe_core":
            used.add(f"pe_core.{node.attr}")
    return {m for m in used if any(part.startswith("_") for part in m.split(".")[1:])}


def test_the_private_name_check_sees_both_kinds(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text(
        "import pe_core\nfrom pe_core._files import load\nfrom pe_core.a import _b\n"
        "x = pe_core._kernels\ny = pe_core.files\n"
    )
    assert private_pe_core_names(sample) == {
        "pe_core._files",
        "pe_core._files.load",
        "pe_core.a._b",
        "pe_core._kernels",
    }


@pytest.mark.parametrize(
    "path", sorted(DASHBOARD.rglob("*.py")), ids=lambda p: str(p.relative_to(DASHBOARD))
)
def test_the_dashboard_uses_no_private_pe_core_name(path):
    """Issue 49: the page reads files through the public reader (pe_core.files) and the core's
    public names, as any other program would."""
    assert not private_pe_core_names(path)
