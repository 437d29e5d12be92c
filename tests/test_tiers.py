"""The tiers of tests/conftest.py (issue 48): the covering selection that leaves the rest of each
grid to the ``exhaustive`` tier keeps every parameter value, and the README's commands name
only registered markers."""

from __future__ import annotations

import ast
import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import ROOT
from tests.conftest import PROFILE_EXAMPLES, covering_selection, grid_values


def _pairs(case):
    return set(case.items())


@given(
    st.lists(
        st.dictionaries(st.integers(0, 3), st.integers(0, 5), min_size=1, max_size=4),
        min_size=1,
        max_size=40,
    )
)
def test_the_cases_kept_cover_every_value(cases):
    kept = covering_selection(cases)
    assert kept == sorted(set(kept)) and all(0 <= i < len(cases) for i in kept)
    covered = set().union(*(_pairs(cases[i]) for i in kept))
    assert covered == set().union(*(_pairs(case) for case in cases))
    # No case kept for nothing: each covered a value no case kept before it had.
    assert len(kept) <= len(covered)


@pytest.mark.parametrize("sizes", [(5, 11, 4, 3), (2, 2), (7,), (3, 1, 6)])
def test_a_full_grid_keeps_as_many_cases_as_its_longest_list(sizes):
    # test_every_exact_small_table's grid (5 x 11 x 4 x 3 = 660 cases) keeps 11.
    cases = [dict(enumerate(values)) for values in itertools.product(*map(range, sizes))]
    assert len(covering_selection(cases)) == max(sizes)


def test_a_list_of_rows_keeps_every_row():
    cases = [{0: f"row{i}"} for i in range(9)]
    assert covering_selection(cases) == list(range(9))


@pytest.mark.parametrize("first", ["a", "b"])
@pytest.mark.parametrize("second", ["x", "y", "z"])
def test_grid_values_name_each_list_of_a_stacked_grid(request, first, second):
    assert grid_values(request.node) == {"first": ("str", first), "second": ("str", second)}


@pytest.mark.parametrize(
    ("model", "variant", "table"),
    [("llama", "dynamic", [1]), ("llama", "yarn", [1]), ("qwen", "dynamic", [1]), (1, True, [])],
)
def test_grid_values_of_a_list_of_rows(request, model, variant, table):
    """Each argument of one call's rows is a dimension: equal numbers and strings are one value
    (``1`` and ``True`` are not), any other value is the object handed to the case."""
    values = grid_values(request.node)
    assert values["model"] == (type(model).__name__, model)
    assert values["variant"] == (type(variant).__name__, variant)
    assert values["table"] == ("object", id(table))


def test_a_list_of_rows_keeps_each_value_of_each_column():
    rows = [("llama", "dynamic"), ("llama", "yarn"), ("qwen", "dynamic"), ("qwen", "yarn")]
    cases = [{"model": ("str", m), "variant": ("str", v)} for m, v in rows]
    assert covering_selection(cases) == [0, 3]


COMMANDS = ("<!-- quick-command -->", "<!-- test-command -->", "<!-- browser-command -->")


def _readme_command(anchor: str) -> str:
    """The bash block after ``anchor`` in the README, as .ci/run reads it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split(anchor, 1)[1].split("```bash\n", 1)[1].split("\n```", 1)[0]


def _marker_names(expression: str) -> set[str]:
    """The markers a ``-m`` expression names."""
    return set(re.findall(r"\w+", expression)) - {"and", "or", "not"}


def test_the_readme_commands_use_registered_markers():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    registered = set(re.findall(r'^\s*"(\w+): ', pyproject, flags=re.MULTILINE))
    registered.add("hypothesis")  # registered by hypothesis' own pytest plugin
    assert {"browser", "fuzz", "slow", "library", "exhaustive"} <= registered
    for anchor in COMMANDS:
        block = _readme_command(anchor)
        for expression in re.findall(r'-m "([^"]+)"', block):
            words = _marker_names(expression)
            assert words <= registered, (anchor, words - registered)
        for profile in re.findall(r"PE_HYPOTHESIS_PROFILE=(\w+)", block):
            assert profile in PROFILE_EXAMPLES, (anchor, profile)


def _selects(expression: str, marks: set[str]) -> bool:
    """Whether pytest's ``-m expression`` selects a test carrying ``marks`` (the grammar is
    Python's: and, or, not, parentheses and names)."""
    names = _marker_names(expression)
    return eval(expression, {"__builtins__": {}}, {name: name in marks for name in names})


def test_ci_runs_every_test():
    """No test falls between .ci/run's selections: the README's test command, its browser
    tests' command and the exhaustive tier, for a test with any combination of markers."""
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "$(readme_command test-command)" in run and "$(readme_command browser-command)" in run
    expressions = [
        re.search(r'-m "([^"]+)"', _readme_command(anchor)).group(1) for anchor in COMMANDS[1:]
    ]
    assert re.search(r"pytest -p no:cacheprovider -m exhaustive\)", run)
    expressions.append("exhaustive")
    markers = ("browser", "fuzz", "slow", "library", "exhaustive", "hypothesis")
    for marks in itertools.product((False, True), repeat=len(markers)):
        carried = {marker for marker, carries in zip(markers, marks, strict=True) if carries}
        assert any(_selects(expression, carried) for expression in expressions), carried


LIBRARIES = {"torch", "transformers", "diffusers", "positional_encodings"}


def _marks(node) -> set[str]:
    """The ``pytest.mark.X`` names among a function's or a class's decorators."""
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and ast.unparse(target).startswith("pytest.mark."):
            names.add(target.attr)
    return names


def _live_tests(tree: ast.Module):
    """(name, marks) of each test that imports a library by ``pytest.importorskip``."""
    module_marks = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and "pytestmark" in ast.unparse(node.targets[0]):
            module_marks = set(re.findall(r"pytest\.mark\.(\w+)", ast.unparse(node.value)))
    scopes = [(node, set()) for node in tree.body]
    while scopes:
        node, inherited = scopes.pop()
        if isinstance(node, ast.ClassDef):
            scopes += [(child, inherited | _marks(node)) for child in node.body]
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            for call in ast.walk(node):
                if (
                    isinstance(call, ast.Call)
                    and ast.unparse(call.func) == "pytest.importorskip"
                    and isinstance(call.args[0], ast.Constant)
                    and call.args[0].value in LIBRARIES
                ):
                    yield node.name, module_marks | inherited | _marks(node)
                    break


def test_every_live_comparison_is_marked_library():
    """A test that needs torch, transformers, diffusers or positional-encodings carries
    ``library``, so that the tier holds every live comparison (and the quick loop none)."""
    unmarked = [
        f"{path.relative_to(ROOT)}::{name}"
        for path in sorted((ROOT / "tests").rglob("test_*.py"))
        for name, marks in _live_tests(ast.parse(path.read_text(encoding="utf-8")))
        if "library" not in marks
    ]
    assert unmarked == []


def test_the_quick_loop_runs_95_percent_of_the_test_functions(pytestconfig):
    """The README's promise for the quick loop (issue 48): a new browser or slow test lowers
    the share; mark ``slow`` the heavy cases of a grid only, and the function stays in."""
    from tests.conftest import QUICK_FUNCTIONS, QUICK_LEAVES_OUT, QUICK_SHARE

    expression = re.search(r'-m "([^"]+)"', _readme_command(COMMANDS[0])).group(1)
    # The share is counted for the tiers the README's quick command leaves out.
    assert _marker_names(expression) == QUICK_LEAVES_OUT
    counts = pytestconfig.stash.get(QUICK_FUNCTIONS, None)
    if counts is None:
        pytest.skip("counted only when the whole suite is collected (pytest without paths)")
    quick, total = counts
    assert quick >= QUICK_SHARE * total, f"the quick loop runs {quick} of {total} functions"
