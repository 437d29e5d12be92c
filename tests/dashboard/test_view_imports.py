"""No page imports another page: what two pages share lives in a module they both import
(dashboard/view_parts, the figures, or the core). A page with several parts is a package of
its own (dashboard/views/<page>/), whose modules import one another but no other page; a part
in dashboard/view_parts serves two pages or more."""

import ast
from pathlib import Path

import pytest

from tests import ROOT

DASHBOARD = ROOT / "dashboard"
#: Every file of every page: a module dashboard/views/<page>.py, or each module of a package
#: dashboard/views/<page>/.
VIEWS = sorted(
    p for p in (DASHBOARD / "views").rglob("*.py") if p != DASHBOARD / "views" / "__init__.py"
)
SHARED = sorted(p for p in (DASHBOARD / "view_parts").glob("*.py") if p.name != "__init__.py")


def page_of(path: Path) -> str | None:
    """The page a file belongs to (``dashboard.views.<page>``), None outside dashboard/views."""
    parts = path.relative_to(DASHBOARD).with_suffix("").parts
    if parts[0] != "views" or len(parts) < 2:
        return None
    return f"dashboard.views.{parts[1]}"


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


@pytest.mark.parametrize(
    "path",
    VIEWS + SHARED,
    ids=lambda p: (
        str(p.relative_to(DASHBOARD / "views").as_posix())
        if p.is_relative_to(DASHBOARD / "views")
        else f"view_parts/{p.name}"
    ),
)
def test_no_page_or_shared_part_imports_another_page(path):
    own = page_of(path)
    others = {
        m
        for m in view_modules_imported_by(path)
        if own is None or not (m == own or m.startswith(own + "."))
    }
    assert not others


def test_there_are_pages_and_shared_parts():
    assert len({page_of(p) for p in VIEWS}) >= 10 and SHARED


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_a_shared_part_serves_two_pages_or_more(path):
    """A part that one page alone imports belongs in that page's package."""
    module = f"dashboard.view_parts.{path.stem}"
    pages = {
        page_of(view)
        for view in VIEWS
        if any(m == module or m.startswith(module + ".") for m in imported_modules(view))
    }
    assert len(pages) >= 2, f"{module} serves {sorted(pages)}"


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


def session_keys_written_as_text(path: Path) -> list[str]:
    """Literal strings used as session-state keys in ``path`` (``st.session_state["x"]``,
    ``.get("x")``, ``.pop("x")``, ``.setdefault("x", ...)``, f-strings too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        target = None
        if isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and node.args
        ):
            target, key = node.func.value, node.args[0]
        if (
            isinstance(target, ast.Attribute)
            and target.attr == "session_state"
            and isinstance(key, (ast.Constant, ast.JoinedStr))
        ):
            found.append(ast.unparse(key))
    return found


def test_one_module_owns_the_session_keys():
    """Issue 49: a session key is a parameter's (its URL key, on the parameter) or a name in
    dashboard/state.py, never a string written where it is used."""
    found = {
        str(path.relative_to(DASHBOARD)): keys
        for path in sorted(DASHBOARD.rglob("*.py"))
        if (keys := session_keys_written_as_text(path))
    }
    assert not found


def test_the_session_key_check_sees_each_form(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text(
        'st.session_state["a"] = 1\nst.session_state.get("b")\nst.session_state.pop(f"c{x}")\n'
        "st.session_state[state.VIEW] = 2\nst.session_state.get(param.key)\n"
    )
    assert session_keys_written_as_text(sample) == ["'a'", "'b'", "f'c{x}'"]
