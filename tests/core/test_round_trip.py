"""Issue 53's round trip: every table and cache the project produces, in every storage format,
through every road into a check (each upload format, numpy's print and a list pasted, a CSV
written with the printings people use, the command line) gets the same identification, up
to what the road's digits hide (then the hidden format is said as equally good).

It would have caught issue 53's cases 1, 2 (a float16 table or a float32 inv_freq through
text), 6 (a parameter against a config named on every road), 7 (a table given to the RoPE
check) and 8 (the command line reading a CSV as the page does).

The example count follows the active hypothesis profile (a fifteenth of its
``max_examples``, at least 5): the default profile (tests/conftest.py, 150) runs 10 of each
drawing, about 45 s in all on a 2-core machine at load 8 (2026-11-28); a profile with more
examples runs more.
"""

from __future__ import annotations

import contextlib
import io
import json
import struct
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pe_core
from dashboard import uploads
from dashboard.views.check.table import check_table as page_check_table
from pe_core import files, judgement
from pe_core.__main__ import main

#: Examples per test: a fifteenth of the active profile's (CI's default profile: 10).
EXAMPLES = max(5, settings().max_examples // 15)
ROUND_TRIP = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

#: How people write a table as text: printf formats, and numpy's print of the array.
PRINTINGS = ("%.4f", "%.6g", "%.8g", "numpy print", "list")

#: The largest half unit each printing leaves on a value near 1 (numpy's print of float64
#: writes 8 decimals; of a smaller format, its shortest decimals, which read back exactly).
HALF_UNIT = {"%.4f": 5e-5, "%.6g": 5e-7, "%.8g": 5e-9, "numpy print": 5e-9, "list": 0.0}


def shows(printing: str, fmt: str) -> bool:
    """Whether a printing's digits are fine enough to show the rounding of format ``fmt``
    (values near 1 are rounded by up to half its unit roundoff, which the digits must
    resolve)."""
    if fmt == "float64":
        return True
    return HALF_UNIT[printing] < 0.25 * pe_core.PRECISIONS[fmt].unit_roundoff


def stored(values: np.ndarray, fmt: str) -> np.ndarray:
    """``values`` stored in ``fmt`` (bfloat16 as float32 numbers, as torch's .float() gives)."""
    if fmt == "bfloat16":
        return pe_core.quantize(values, "bfloat16").astype(np.float32)
    return np.asarray(values).astype(fmt)


def text_of(array: np.ndarray, printing: str) -> str:
    if printing == "numpy print":
        with np.printoptions(threshold=np.inf):
            return str(array)
    if printing == "list":
        return str(array.tolist())
    buffer = io.StringIO()
    np.savetxt(buffer, np.atleast_2d(array), fmt=printing, delimiter=",")
    return buffer.getvalue()


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def safetensors(arrays: dict[str, np.ndarray], bf16: bool) -> bytes:
    """A safetensors file written by hand (BF16 from float32 values that are bfloat16)."""
    header, blobs, offset = {}, [], 0
    for name, array in arrays.items():
        if bf16:
            data = (np.ascontiguousarray(array, dtype="<f4").view("<u4") >> 16).astype("<u2")
            dtype = "BF16"
        else:
            dtype = {"float64": "F64", "float32": "F32", "float16": "F16"}[array.dtype.name]
            data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        raw = data.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [0, 0]}
        header[name]["data_offsets"] = [offset, offset + len(raw)]
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


# --- tables ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A table the project produces, stored in a format."""

    convention: str
    base: float
    start: int
    n: int
    d: int
    fmt: str

    def values(self) -> np.ndarray:
        exact = pe_core.sinusoidal_encoding(
            self.start + np.arange(self.n), self.d, base=self.base, convention=self.convention
        )
        return stored(exact, self.fmt)


tables = st.builds(
    Table,
    convention=st.sampled_from(sorted(pe_core.CONVENTIONS)),
    base=st.sampled_from([10_000.0, 500.0, 100_000.0]),
    start=st.sampled_from([0, 2, 7]),
    n=st.integers(24, 80),
    d=st.sampled_from([8, 10, 16, 32]),
    fmt=st.sampled_from(["float64", "float32", "float16", "bfloat16"]),
)


def table_roads(table: Table, tmp_path) -> dict[str, tuple[np.ndarray, files.Written | None]]:
    """The table through every road: (the array the check is given, how it was written)."""
    values = table.values()
    bf16 = table.fmt == "bfloat16"
    roads = {}
    for name, data in (
        ("t.npy", npy(values)),
        ("t.npz", npz(table=values)),
        ("t.safetensors", safetensors({"table": values}, bf16)),
    ):
        arrays = files.load_arrays(data, name)
        key, matrix = files.table_array(arrays)
        roads[name] = (matrix, arrays.written[key])
    for printing in PRINTINGS:
        text = text_of(values, printing)
        if printing.startswith("%"):
            arrays = files.load_arrays(text.encode(), "t.csv")
            roads[f"csv {printing}"] = (arrays["array"], arrays.written["array"])
        else:
            # The page's paste box, through the page's own limits.
            roads[f"paste {printing}"] = uploads.read_pasted(text)
    return roads


def signature(found: pe_core.Identification) -> tuple:
    return (found.matches, found.convention, found.base, found.start, found.step, found.n_positions)


def expected_precisions(table: Table, road: str) -> set[tuple[str, str | None]]:
    """The (kind, format) a road may name: the binary roads name the stored format's
    rounding; a printing that shows the format names it too. One that hides it (4 decimals
    of float32 numbers) names the exact values written, with the format said beside as
    equally good; or the format, when some value shows it all the same (a float32 value next
    to a tie of its fourth decimal is written on the other side of it)."""
    fmt = table.fmt
    printing = road.split(" ", 1)[1] if road.startswith(("csv", "paste")) else None
    if fmt == "float64":
        return {("exact", None)} if printing in (None, "list") else {("decimals", None)}
    if printing is None or printing == "list" or shows(printing, fmt):
        return {("rounded", fmt)}
    return {("decimals", None), ("rounded", fmt)}


@ROUND_TRIP
@given(table=tables)
@example(table=Table("vaswani", 10_000.0, 1, 64, 10, "float16"))  # issue 53, case 1
def test_every_road_gives_a_table_the_same_identification(table, tmp_path_factory):
    binary = judgement.check_table(table.values())
    assert binary.diagnosis.identification.matches, (table, binary.summary())
    want = signature(binary.diagnosis.identification)
    for road, (matrix, written) in table_roads(table, tmp_path_factory.mktemp("t")).items():
        found = judgement.check_table(matrix, written=written)
        identification = found.diagnosis.identification
        assert signature(identification) == want, (table, road, found.summary(), want)
        assert found.diagnosis.likely_mistake == binary.diagnosis.likely_mistake, (table, road)
        precision = identification.precision
        named = (precision.kind.value, precision.format)
        assert named in expected_precisions(table, road), (table, road, found.summary())
        if named[0] == "decimals" and table.fmt != "float64":
            # The hidden format is said as equally good, with the digits that would show it.
            assert any(table.fmt in note for note in identification.equivalents), (
                table,
                road,
                identification.equivalents,
            )


@dataclass(frozen=True)
class Produced:
    """Another table the project produces: a library's arithmetic (textbook_encoding), a
    mistake of the catalogue, a 2-D grid or a 3-D volume."""

    kind: str
    which: str
    d: int
    n: int
    fmt: str

    def values(self) -> np.ndarray:
        if self.kind == "textbook":
            compute, formula = self.which.split("/")
            table = pe_core.textbook_encoding(
                self.n, self.d, compute_dtype=compute, formula=formula
            )
            return stored(table, compute if self.fmt == "compute" else "float64")
        if self.kind == "bug":
            return stored(
                pe_core.BUGS[self.which].wrong_table(np.arange(self.n), self.d, 1e4), "float64"
            )
        if self.kind == "grid":
            return stored(pe_core.grid_encoding(6, 7, self.d, layout=self.which), self.fmt)
        shape = (3, 4, 5)
        return stored(pe_core.grid3d_encoding(shape, self.d, layout=self.which), self.fmt)


produced = st.one_of(
    st.builds(
        Produced,
        kind=st.just("textbook"),
        which=st.sampled_from(["float32/exp", "float16/pow", "float32/pow"]),
        d=st.sampled_from([16, 32]),
        n=st.just(400),
        fmt=st.sampled_from(["compute", "float64"]),
    ),
    st.builds(
        Produced,
        kind=st.just("bug"),
        which=st.sampled_from([n for n, b in pe_core.BUGS.items() if n != "float32_angles"]),
        d=st.sampled_from([16, 32]),
        n=st.sampled_from([40, 100]),
        fmt=st.just("float64"),
    ),
    st.builds(
        Produced,
        kind=st.just("grid"),
        which=st.sampled_from(sorted(pe_core.GRID_LAYOUTS)),
        d=st.sampled_from([16, 32]),
        n=st.just(42),
        fmt=st.sampled_from(["float64", "float32"]),
    ),
    st.builds(
        Produced,
        kind=st.just("grid3d"),
        which=st.sampled_from(sorted(pe_core.GRID3D_LAYOUTS)),
        d=st.sampled_from([48, 96]),  # a multiple of 16 (diffusers) and of 6
        n=st.just(60),
        fmt=st.sampled_from(["float64", "float32"]),
    ),
)


def verdict(found: judgement.TableCheck) -> tuple:
    """What a check says of a table, beyond its arithmetic's digits."""
    diagnosis = found.diagnosis
    if found.kind == "grid":
        g = found.grid
        return ("grid", g.layout, g.height, g.width, g.base, g.extra_tokens)
    if found.kind == "grid3d":
        g = found.grid3d
        return ("grid3d", g.layout, tuple(g.shape), g.base)
    identification = diagnosis.identification
    return (
        "table",
        diagnosis.bug and diagnosis.bug.name,
        diagnosis.base,
        diagnosis.start,
        diagnosis.compute_dtype,
        diagnosis.formula,
        identification.matches,
        identification.convention if identification.matches else None,
    )


@ROUND_TRIP
@given(table=produced)
def test_every_road_gives_the_other_tables_the_same_verdict(table):
    """Library arithmetic, the catalogue's mistakes, 2-D and 3-D grids: through the binary
    files and the printings fine enough to show float32 (more digits than its rounding)."""
    values = table.values()
    binary = judgement.check_table(values)
    want = verdict(binary)
    assert want[0] == table.kind if table.kind.startswith("grid") else True, binary.summary()
    roads = {"t.npy": npy(values)}
    for printing in ("%.8g", "numpy print"):
        roads[f"t.csv {printing}"] = text_of(values, printing).encode()
    for name, data in roads.items():
        arrays = files.load_arrays(data, name.split(" ")[0])
        found = judgement.check_table(arrays["array"])
        assert verdict(found) == want, (table, name, found.summary(), binary.summary())


#: Conventions whose table is also a rotary cos_sin_cache ([cos | sin], base**(-2i/d) for
#: some base): the RoPE check names both.
ALSO_ROTARY = ("diffusion", "musicgen")


@ROUND_TRIP
@given(table=tables)
def test_a_table_given_to_the_rope_check_is_said_to_be_a_table(table):
    """Issue 53, case 7, on every road: a sinusoidal table is no rotary cache (the RoPE check
    says what it is and points to identify), unless its numbers are one as well."""
    values = table.values()
    texts = {f"t.csv {p}": text_of(values, p).encode() for p in ("%.8g", "numpy print")}
    # (diffusion at base b is musicgen at base b**((h-1)/h): the identification names the
    # rounder; either way the table's own identification is what the message names.)
    for name, data in {"t.npy": npy(values), "t.npz": npz(table=values), **texts}.items():
        arrays = files.load_arrays(data, name.split(" ")[0])
        if table.convention in ALSO_ROTARY and table.d % 2 == 0 and table.start == 0:
            with contextlib.suppress(files.WrongFamily):
                found = judgement.check_rope(arrays)
                notes = [f for f in found.findings if f.name == "sinusoidal_table"]
                assert notes and table.convention in notes[0].title, (table, name, found.summary())
            continue
        with pytest.raises(files.WrongFamily) as error:
            judgement.check_rope(arrays)
        assert error.value.family == "sinusoidal"
        assert "python -m pe_core identify" in str(error.value), (table, name)
        named = judgement.check_table(values).diagnosis.identification.convention
        assert f"{named} convention" in str(error.value), (table, name)


@ROUND_TRIP
@given(table=tables.filter(lambda t: t.fmt != "float64"), printing=st.sampled_from(PRINTINGS))
def test_the_command_line_and_the_page_read_a_table_as_the_core_does(
    table, printing, tmp_path_factory, capsys
):
    """``python -m pe_core identify`` on the file, and the Check page on its upload, give the
    verdict the core gives the values (in-process: the CLI's main with its exit status)."""
    folder = tmp_path_factory.mktemp("cli")
    values = table.values()
    text = text_of(values, printing)
    for name, data in (("t.npy", npy(values)), ("t.csv", text.encode())):
        path = folder / name
        path.write_bytes(data)
        capsys.readouterr()
        status = main(["identify", str(path), "--json"])
        result = json.loads(capsys.readouterr().out)
        arrays = files.read_arrays(path)
        core = judgement.check_table(arrays["array"], written=arrays.written["array"])
        assert status == (0 if core.matches else 1)
        assert result["summary"] == core.summary(), (table, name)
        page = page_check_table(*uploads.read_table(name, data))
        assert page.verdict.summary() == core.summary(), (table, name)


# --- caches ----------------------------------------------------------------------------------

#: RoPE scalings the project computes, as config keys.
SCALINGS = (
    None,
    {"rope_type": "linear", "factor": 4.0},
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
)


@dataclass(frozen=True)
class Cache:
    head_dim: int
    base: float
    scaling: int  # index into SCALINGS
    layout: str
    n: int
    fmt: str

    def rope(self) -> pe_core.RotaryEncoding:
        return pe_core.rope_frequencies(
            self.head_dim, base=self.base, scaling=SCALINGS[self.scaling]
        )

    def cos_sin(self) -> tuple[np.ndarray, np.ndarray]:
        cos, sin = pe_core.rope_cos_sin(self.n, self.rope(), layout=self.layout)
        return stored(cos, self.fmt), stored(sin, self.fmt)


#: Rows of a cache written as text.
TEXT_ROWS = 512

caches = st.builds(
    Cache,
    head_dim=st.sampled_from([32, 64, 128]),
    base=st.sampled_from([10_000.0, 500_000.0]),
    scaling=st.integers(0, len(SCALINGS) - 1),
    layout=st.sampled_from(["halves", "interleaved"]),
    # Real caches are long; a short bfloat16 one cannot show its slow pairs' scaling.
    n=st.sampled_from([2048, 4096]),
    fmt=st.sampled_from(["float64", "float32", "bfloat16"]),
)


def rope_signature(found: pe_core.RopeIdentification) -> tuple:
    factor = found.parameters.get("factor")
    return (found.rope_type, found.base, None if factor is None else round(float(factor), 6))


@ROUND_TRIP
@given(cache=caches)
def test_every_road_gives_a_cache_the_same_identification(cache):
    cos, sin = cache.cos_sin()
    binary = pe_core.identify_rope(cos, sin)
    assert binary.explained and binary.rope_type is not None, (cache, binary.summary())
    want = rope_signature(binary)
    bf16 = cache.fmt == "bfloat16"
    half = cos.shape[1] // 2
    roads = {
        "cache.npz": npz(cos=cos, sin=sin),
        "stacked.npy": npy(np.stack([cos, sin])),
        "cache.safetensors": safetensors({"cos": cos, "sin": sin}, bf16),
    }
    if cache.layout == "halves":  # vLLM's cos_sin_cache: [cos | sin] of the pairs
        roads["cos_sin_cache.npy"] = npy(np.concatenate([cos[:, :half], sin[:, :half]], axis=1))
    for name, data in roads.items():
        found = judgement.check_rope(files.load_arrays(data, name))
        assert rope_signature(found) == want, (cache, name, found.summary())
        assert found.explained, (cache, name, found.summary())
        assert found.arithmetic.storage == binary.arithmetic.storage, (cache, name)
    if cache.layout == "halves" and cache.fmt != "bfloat16":
        # As text (numpy's print of 262,144 values takes seconds: the first TEXT_ROWS rows,
        # compared with the binary identification of those rows).
        cos, sin = cos[:TEXT_ROWS], sin[:TEXT_ROWS]
        single = np.concatenate([cos[:, :half], sin[:, :half]], axis=1)
        short = pe_core.identify_rope(cos, sin)
        for printing in ("%.8g", "numpy print"):
            text = text_of(single, printing).encode()
            found = judgement.check_rope(files.load_arrays(text, "cos_sin_cache.csv"))
            assert rope_signature(found) == rope_signature(short), (cache, printing)
            assert found.explained, (cache, printing, found.summary())
            assert found.arithmetic.storage == short.arithmetic.storage, (cache, printing)
            assert found.arithmetic.written is not None, (cache, printing)
    # Against a config whose factor is not the data's: the parameter and both values named.
    if SCALINGS[cache.scaling] is not None and cache.layout == "halves":  # as Llama lays it
        config = {
            "model_type": "llama",
            "hidden_size": cache.head_dim * 8,
            "num_attention_heads": 8,
            "rope_theta": cache.base,
            "max_position_embeddings": 131_072,
            "rope_scaling": {**SCALINGS[cache.scaling], "factor": 2.0},
        }
        for name in ("cache.npz", "cache.safetensors"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # transformers' own warnings about the config
                found = judgement.check_rope(files.load_arrays(roads[name], name), config=config)
            assert not found.matches and found.likely_cause == "parameters", (cache, name)
            assert {"parameter": "factor", "data": want[2], "config": 2.0} in [
                {k: f.evidence[k] for k in ("parameter", "data", "config")}
                for f in found.differences
            ], (cache, name, found.summary())
            assert "factor" in found.summary() and "in the config" in found.summary()
    # inv_freq pasted: its values, numpy's print, a list, torch's 5-digit print.
    rope = cache.rope()
    inv = stored(rope.inv_freq, "float32")
    for text in (str(inv.tolist()), text_of(inv, "numpy print"), repr(inv)):
        arrays = files.parse_text(text)
        found = judgement.check_rope({"inv_freq": arrays["array"].ravel()})
        assert rope_signature(found) == rope_signature(pe_core.identify_rope(inv_freq=inv))
        assert found.arithmetic.storage == "float32", (cache, text[:60], found.summary())


def test_the_issue_s_cases_are_examples_of_the_property():
    """Cases 1 and 2 as the issue gives them (the float16 table pasted as numpy prints it, and
    ``.tolist()`` of a float32 inv_freq), kept as literal checks beside the drawn ones."""
    table = Table("vaswani", 10_000.0, 1, 64, 10, "float16")
    for road, (matrix, written) in table_roads(table, None).items():
        found = judgement.check_table(matrix, written=written).diagnosis.identification
        assert found.matches and found.start == 1 and found.base == 10_000.0, road
        assert found.precision.format == "float16", (road, found.summary())
    inv = pe_core.rope_frequencies(128, base=500_000.0).inv_freq.astype(np.float32)
    found = pe_core.identify_rope(inv_freq=files.parse_text(str(inv.tolist()))["array"])
    assert found.arithmetic.storage == "float32"


@pytest.mark.parametrize("printing", PRINTINGS)
def test_shows_is_what_the_digits_resolve(printing):
    """The oracle above: 4 decimals hide float32 and show float16; 8 significant digits show
    float32."""
    assert shows(printing, "bfloat16")
    assert shows(printing, "float16")
    assert shows(printing, "float32") == (printing in ("%.8g", "numpy print", "list"))
