"""The shape of pe_core, as rules: the public namespace, the wings and who may import what.

- ``pe_core.__all__`` is the list below (a change to it is a change to the public API, made here
  on purpose), and every name in it is importable from ``pe_core``.
- ``pe_core._numerics`` (argument checks, kernels, float formats) imports no wing and no family.
- The sinusoidal and rotary wings import nothing of each other.
- Outside a wing, a module imports the wing's front (``pe_core.rotary``), never a module behind
  it; and no module imports a private name (``_x``) or a private module from another wing.
- The dashboard and the benchmarks import no private module or name of pe_core.
- The core imports NumPy and SciPy only (no Streamlit, Plotly or pandas).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import pe_core
from tests import ROOT

CORE = ROOT / "pe_core"
WINGS = ("sinusoidal", "rotary")

PUBLIC = [
    "BUGS", "CASTS", "CONVENTIONS", "FAMILIES", "FORMULAS", "GRID3D_LAYOUTS", "GRID_LAYOUTS",
    "LAYOUTS", "MAX_ELEMENTS", "MAX_JSON_DEPTH", "MAX_LEARNED_ELEMENTS", "MAX_REFERENCE_ELEMENTS",
    "MAX_ROTATION_D_MODEL", "MODEL_DTYPES", "MODEL_ROPES", "PAIRWISE_LIMIT", "PRECISIONS",
    "ROPE_BUGS", "ROPE_TYPES", "ROPE_VARIANTS", "Bug", "Coincidence", "ColumnLayout",
    "ConfigSource", "Convention", "Departure", "Diagnosis", "Family", "FamilyParameter",
    "Finding", "FloatFormat", "FrequencyBank", "Grid3DIdentification", "Grid3DLayout",
    "GridIdentification", "GridLayout", "Identification", "InputError", "InputTypeError",
    "ModelRope", "Precision", "PrecisionKind", "QueryTemperature", "RopeArithmetic", "RopeBug",
    "RopeConfigSources", "RopeIdentification", "RopeVariant", "RotaryEncoding",
    "TextbookFormula", "UniquenessReport", "add_to_embeddings", "alibi_bias", "alibi_slopes",
    "apply_rope", "axial_rope_frequencies", "block_mean_encoding", "column_roles",
    "cosine_similarity", "diagnose_encoding", "encoding_columns", "encoding_distances",
    "frequencies", "grid3d_encoding", "grid_encoding", "identify_encoding", "identify_grid",
    "identify_grid3d", "identify_rope", "inv_freq_float32_ulps", "learned_position_table",
    "load_json", "merged_position_ids", "mrope_axes", "mrope_position_ids", "multi_axis_angles",
    "nearest_neighbor_distances", "offset_similarity", "pairwise_limit", "quantize",
    "reference_encoding", "relative_rotation", "rope_angle_errors", "rope_config_essentials",
    "rope_cache_from_vectors", "rope_config_sources", "rope_cos_sin", "rope_decay_bound",
    "rope_frequencies",
    "rope_from_config", "rope_layers", "rope_permutation", "rope_query_temperature",
    "rope_scores", "similarity_matrix", "sinusoidal_bank", "sinusoidal_encoding",
    "t5_relative_buckets", "textbook_encoding", "transformers_angle_errors", "uniqueness_report",
    "wavelengths", "yarn_correction_range",
    # the first position past an angle error (issue 53)
    "AngleErrorCrossing", "first_angle_error_above",
    # GGUF (issue 50)
    "GgufCheck", "GgufFinding", "GgufMetadata", "LLAMA_CPP_ARCHS", "LLAMA_CPP_VERSION",
    "LlamaCppArch", "LlamaCppLayer", "check_gguf", "llama_cpp_angles", "llama_cpp_cos_sin",
    "llama_cpp_layers", "parse_gguf_dump", "read_gguf", "read_gguf_bytes",
]  # fmt: skip


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache  # the files do not change while the tests run; each rule reads them all
def syntax_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def imports(path: Path, root: Path = ROOT) -> tuple[tuple[str, str | None], ...]:
    """``(module, name)`` for every import in ``path`` (``name`` None for ``import module``),
    relative imports resolved, at any depth (TYPE_CHECKING blocks too)."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(syntax_tree(path)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.extend((module, alias.name) for alias in node.names)
    return tuple(found)


def targets(path: Path, root: Path = ROOT) -> set[str]:
    """The pe_core modules and names ``path`` imports, as dotted paths (``from a import b``
    gives ``a.b``: a submodule or a name)."""
    out = set()
    for module, name in imports(path, root):
        if module == "pe_core" or module.startswith("pe_core."):
            out.add(f"{module}.{name}" if name else module)
    return out


def is_private(dotted: str) -> bool:
    return any(part.startswith("_") and part != "__init__" for part in dotted.split(".")[1:])


CORE_FILES = sorted(CORE.rglob("*.py"))


def wing_of(dotted: str) -> str | None:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in WINGS else None


def test_public_names_are_as_listed_and_importable():
    assert sorted(pe_core.__all__) == sorted(PUBLIC)
    assert len(set(PUBLIC)) == len(PUBLIC)
    for name in PUBLIC:
        assert getattr(pe_core, name) is not None, name


@pytest.mark.parametrize("wing", WINGS)
def test_each_wing_front_lists_what_pe_core_exports_from_it(wing):
    front = __import__(f"pe_core.{wing}", fromlist=["__all__"])
    for name in front.__all__:
        assert getattr(front, name) is getattr(pe_core, name, getattr(front, name))


def test_the_numerics_layer_imports_no_wing_or_family():
    for path in sorted((CORE / "_numerics").glob("*.py")):
        for target in targets(path):
            allowed = target.startswith(("pe_core._numerics", "pe_core.errors", "pe_core.bank"))
            assert allowed, f"{path.relative_to(ROOT)} imports {target}"


@pytest.mark.parametrize("wing", WINGS)
def test_a_wing_imports_nothing_of_the_other(wing):
    other = {"sinusoidal": "rotary", "rotary": "sinusoidal"}[wing]
    for path in sorted((CORE / wing).rglob("*.py")):
        for target in targets(path):
            assert wing_of(target) != other, f"{path.relative_to(ROOT)} imports {target}"


def test_outside_a_wing_only_its_front_is_imported():
    """Families, the command line, pe_core.testing and the top level see a wing through its
    front (``pe_core.rotary``), not the modules behind it."""
    for path in CORE_FILES:
        own = wing_of(module_name(path))
        for target in targets(path):
            wing = wing_of(target)
            if wing is None or wing == own:
                continue
            front = f"pe_core.{wing}"
            name = target.removeprefix(front + ".")
            assert "." not in name and hasattr(__import__(front, fromlist=["_"]), name), (
                f"{path.relative_to(ROOT)} imports {target} from behind the {wing} wing's front"
            )


def test_no_private_name_crosses_a_wing():
    for path in CORE_FILES:
        own = module_name(path).split(".")[1:2]
        for target in targets(path):
            where = target.split(".")[1:2]
            if where != own and where and where[0] in (*WINGS, "families"):
                assert not is_private(target), f"{path.relative_to(ROOT)} imports {target}"


def private_pe_core_names(path: Path, root: Path = ROOT) -> set[str]:
    """The private pe_core names ``path`` uses: a module or name with a leading underscore,
    imported (``from pe_core._numerics import ...``, ``from pe_core.x import _y``) or reached as
    an attribute (``pe_core._numerics``)."""
    used = targets(path, root)
    for node in ast.walk(syntax_tree(path)):
        value = node.value if isinstance(node, ast.Attribute) else None
        if isinstance(value, ast.Name) and value.id == "pe_core":
            used.add(f"pe_core.{node.attr}")
    return {name for name in used if is_private(name)}


@pytest.mark.parametrize("folder", ["dashboard", "benchmarks"])
def test_no_private_pe_core_name_outside_the_core(folder):
    """The page and the benchmarks use pe_core as any other program would: its public names
    (the files it is handed are read by the public pe_core.files)."""
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in sorted(private_pe_core_names(path))
    ]
    assert not found


def test_the_core_imports_numpy_and_scipy_only():
    allowed_third_party = {"numpy", "scipy", "gguf"}
    stdlib = set(__import__("sys").stdlib_module_names)
    for path in CORE_FILES:
        for module, _ in imports(path):
            top = module.split(".")[0]
            if top and top != "pe_core" and top not in stdlib:
                assert top in allowed_third_party, f"{path.relative_to(ROOT)} imports {module}"


def test_the_rules_see_what_they_forbid(tmp_path):
    """The helpers find a private import, a relative one and one behind a front."""
    sample = tmp_path / "pe_core" / "sinusoidal" / "x.py"
    sample.parent.mkdir(parents=True)
    sample.write_text(
        "from pe_core.rotary.config import _read_config\nfrom . import conventions\n"
        "import pe_core._numerics.kernels\n"
    )
    found = {m for m, _ in imports(sample, root=tmp_path)}
    assert found == {"pe_core.rotary.config", "pe_core.sinusoidal", "pe_core._numerics.kernels"}
    other = tmp_path / "y.py"
    other.write_text(
        "import pe_core\nfrom pe_core.a import _b\nx = pe_core._kernels\ny = pe_core.files\n"
    )
    assert private_pe_core_names(other, root=tmp_path) == {"pe_core.a._b", "pe_core._kernels"}
    assert is_private("pe_core.rotary.config._read_config")
    assert wing_of("pe_core.rotary.config._read_config") == "rotary"
