"""Realistic inputs for fuzzing pe_core's GGUF functions and ``rope_cache_from_vectors``.

GGUF: the corpus of tests/data/gguf (files converted by llama.cpp's converter and cut after
their RoPE tensors, some with a known mistake), whole, cut at any byte or with one byte changed;
gguf-dump's text of three of them, whole, cut at a line or with one value changed; llama.cpp's
loader log and ``key = value`` lines written from the files' keys; the readings of all of these,
also with one RoPE key set to a value a file can hold but a model would not (a GgufMetadata is
what a file says, so each edited one stands for a file); the layers llama.cpp makes of them; and
the config.json each file was converted from.

Vectors: a batch of heads (or one head) before and after a rotation by a known cache (halves,
interleaved and partial, attention factor, bfloat16 arithmetic, positions from 1000, a halves
cache applied by an interleaved rotate), each with that cache, so that a rebuilt cache is
compared with the cache that made it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

import pe_core

CORPUS = Path(__file__).parents[1] / "data" / "gguf"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
#: Faithful conversions that llama.cpp runs otherwise than the config says (the converter does
#: not write the key that would say it): tests/core/test_gguf.py names the key.
CONVERTER_GAPS = ("qwen2.5-7b-yarn-attention-factor.gguf",)
FAITHFUL = frozenset(
    name
    for name, entry in MANIFEST["files"].items()
    if entry["mistake"] is None and name not in CONVERTER_GAPS
)

#: Mistakes llama.cpp acts on only at some context sizes (-c in (low, high]): without
#: original_context_length it takes context_length (131,072), so past 4,096 it keeps the LongRoPE
#: short factors where the config has the long ones, up to 131,072; elsewhere both agree.
SHOWS_AT_CONTEXT = {"phi3.5-longrope-no-orig-ctx.gguf": (4096, 131072)}

GGUF_FILES = sorted(CORPUS.glob("*.gguf"))
GGUF_DATA = {path.name: path.read_bytes() for path in GGUF_FILES}
GGUF_READINGS = {path.name: pe_core.read_gguf(path) for path in GGUF_FILES}
#: The config.json (text) each file was converted from.
GGUF_CONFIGS = {
    name: (CORPUS / entry["config"]).read_text() for name, entry in MANIFEST["files"].items()
}
#: gguf-dump's output for three files, by the file's name.
GGUF_DUMPS = {
    path.name.removesuffix(".dump.txt") + ".gguf": path.read_text()
    for path in sorted(CORPUS.glob("*.dump.txt"))
}

#: Values a GGUF key can hold (integers of every width, FLOAT32 and FLOAT64, strings, arrays,
#: bools) that no model has.
ODD_VALUES = [
    0,
    -1,
    1,
    3,
    2**31,
    2**32 - 1,
    2**64 - 1,
    -(2**63),
    0.0,
    -0.0,
    1e-45,
    1e-30,
    0.5,
    3.4e38,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    "",
    "yarn",
    "longrope",
    "none",
    "linear",
    "llama",
    True,
    False,
    (),
    (0,),
    (1, 2, 3),
    (0.5,) * 64,
]
#: What gguf-dump or the loader log may print for a value instead.
ODD_TOKENS = ["nan", "inf", "-inf", "-1", "0", "1e400", "1e-45", "4294967296", "'x'", "[1, 2, ...]"]
ODD_TOKENS += ["[]", "true", "0.5", "99999999999999999999999", "0x10", "yarn"]

#: The keys llama.cpp reads for RoPE (after the architecture's name) that an edit may change.
ROPE_SUFFIXES = [
    "block_count",
    "context_length",
    "embedding_length",
    "attention.head_count",
    "attention.key_length",
    "attention.key_length_swa",
    "attention.sliding_window",
    "attention.sliding_window_pattern",
    "rope.dimension_count",
    "rope.dimension_count_swa",
    "rope.dimension_sections",
    "rope.freq_base",
    "rope.freq_base_swa",
    "rope.scaling.type",
    "rope.scaling.factor",
    "rope.scale_linear",
    "rope.scaling.original_context_length",
    "rope.scaling.attn_factor",
    "rope.scaling.yarn_ext_factor",
    "rope.scaling.yarn_attn_factor",
    "rope.scaling.yarn_beta_fast",
    "rope.scaling.yarn_beta_slow",
    "rope.scaling.yarn_log_multiplier",
]


# --- bytes, files and text ---------------------------------------------------------------------


def _changed(data: bytes, at: int, byte: int) -> bytes:
    return data[:at] + bytes([byte]) + data[at + 1 :]


@st.composite
def gguf_bytes(draw) -> bytes:
    """A corpus file: whole, cut at any byte, or with one byte changed."""
    data = GGUF_DATA[draw(st.sampled_from(sorted(GGUF_DATA)))]
    kind = draw(st.sampled_from(["whole", "cut", "changed"]))
    if kind == "cut":
        return data[: draw(st.integers(0, len(data)))]
    if kind == "changed":
        at = draw(st.integers(0, len(data) - 1))
        return _changed(data, at, draw(st.integers(0, 255)))
    return data


def _loader_type(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "u32"
    if isinstance(value, float):
        return "f32"
    if isinstance(value, tuple):
        return f"arr[i32,{len(value)}]"
    return "str"


def _loader_value(value) -> str:
    if isinstance(value, float):
        return f"{value:f}"  # llama.cpp prints floats with %f
    if isinstance(value, tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def loader_log(meta) -> str:
    """llama.cpp's loader log of a reading's keys (``llama_model_loader: - kv 3: ...``)."""
    return "\n".join(
        f"llama_model_loader: - kv {index:3d}: {key:<40s} {_loader_type(value)} = "
        f"{_loader_value(value)}"
        for index, (key, value) in enumerate(meta.metadata.items())
    )


def key_value_lines(meta) -> str:
    """``key = value`` lines of a reading's keys (as someone might copy them)."""
    return "\n".join(f"{key} = {_loader_value(value)}" for key, value in meta.metadata.items())


@st.composite
def gguf_texts(draw) -> str:
    """gguf-dump's output, the loader log or key = value lines of a corpus file: whole, cut at
    a line, without one line, or with one line's value changed."""
    name = draw(st.sampled_from(sorted(GGUF_DUMPS)))
    writer = draw(st.sampled_from(["dump", "loader", "lines"]))
    if writer == "dump":
        text = GGUF_DUMPS[name]
    elif writer == "loader":
        text = loader_log(GGUF_READINGS[name])
    else:
        text = key_value_lines(GGUF_READINGS[name])
    lines = text.splitlines()
    at = draw(st.integers(0, len(lines) - 1))
    kind = draw(st.sampled_from(["whole", "cut", "dropped", "changed"]))
    if kind == "cut":
        lines = lines[:at]
    elif kind == "dropped":
        del lines[at]
    elif kind == "changed":
        head, sign, _ = lines[at].rpartition("=")
        if sign:
            lines[at] = f"{head}= {draw(st.sampled_from(ODD_TOKENS))}"
    return "\n".join(lines)


#: The path of a file that is not GGUF, or of no regular file.
OTHER_PATHS = [
    CORPUS / "manifest.json",
    CORPUS / "llama3.1-8b.dump.txt",
    CORPUS,
    Path("/dev/null"),
    CORPUS / "no-such-file.gguf",
]
gguf_paths = st.one_of(
    st.sampled_from(GGUF_FILES),
    st.sampled_from(GGUF_FILES).map(str),
    st.sampled_from(OTHER_PATHS),
)
#: How a caller names the bytes (the Check page: "the file").
gguf_names = st.one_of(
    st.sampled_from(["the file", "the upload", "model-head.gguf", "FILE 'x.gguf'"]),
    st.text(max_size=20),
)


# --- readings ----------------------------------------------------------------------------------

#: Readings of the corpus: each file, each dump, and a file cut inside its RoPE tensor.
GGUF_METAS = [
    *GGUF_READINGS.values(),
    *(pe_core.parse_gguf_dump(text) for text in GGUF_DUMPS.values()),
    pe_core.read_gguf_bytes(GGUF_DATA["llama3.1-8b.gguf"][:-8]),
    pe_core.read_gguf_bytes(GGUF_DATA["phi3.5-longrope.gguf"][:-8]),
]


def with_key(meta, suffix: str, value) -> pe_core.GgufMetadata:
    """``meta`` with ``{architecture}.{suffix}`` set to ``value`` (removed if ``value`` is
    None)."""
    metadata = dict(meta.metadata)
    key = f"{meta.architecture}.{suffix}"
    if value is None:
        metadata.pop(key, None)
    else:
        metadata[key] = value
    return dataclasses.replace(meta, metadata=metadata)


def with_factors(meta, values) -> pe_core.GgufMetadata:
    """``meta`` with its RoPE factor tensors holding ``values`` instead."""
    tensors = {
        name: dataclasses.replace(tensor, shape=(len(values),), values=values)
        if tensor.values is not None
        else tensor
        for name, tensor in meta.tensors.items()
    }
    return dataclasses.replace(meta, tensors=tensors)


ODD_FACTORS = [
    np.zeros(64, np.float32),
    np.full(64, np.nan, np.float32),
    np.full(64, -1.0, np.float32),
    np.full(64, np.inf, np.float32),
    np.full(64, 1e-45, np.float32),
    np.ones(1, np.float32),
    np.ones(0, np.float32),
]


@st.composite
def edited_metas(draw) -> pe_core.GgufMetadata:
    """A reading with one RoPE key set to an odd value or removed, or odd factor tensors."""
    meta = draw(st.sampled_from(GGUF_METAS))
    if draw(st.integers(0, 5)) == 0:
        return with_factors(meta, draw(st.sampled_from(ODD_FACTORS)))
    suffix = draw(st.sampled_from(ROPE_SUFFIXES))
    return with_key(meta, suffix, draw(st.one_of(st.none(), st.sampled_from(ODD_VALUES))))


gguf_metas = st.one_of(st.sampled_from(GGUF_METAS), edited_metas())


def _distinct_layers():
    """Every differently rotating layer llama.cpp makes of the corpus (LongRoPE's short and
    long factors included)."""
    found = {}
    for meta in GGUF_READINGS.values():
        for n_ctx in (None, 4096, 131072):
            for layer in pe_core.llama_cpp_layers(meta, n_ctx=n_ctx).layers:
                key = [getattr(layer, f.name) for f in dataclasses.fields(layer)]
                key[0] = None  # the index
                key[-3] = None if layer.freq_factors is None else layer.freq_factors.tobytes()
                found.setdefault(repr(key), layer)
    return list(found.values())


GGUF_LAYERS = _distinct_layers()

#: llama.cpp's positions: int32 ids below 2**24 (a count n: 0 to n - 1).
llama_positions = st.one_of(
    st.integers(0, 300),
    st.lists(st.integers(0, 2**24 - 1), max_size=12),
    st.builds(
        lambda start, n: start + np.arange(n),
        st.integers(0, 2**24 - 300),
        st.integers(0, 300),
    ),
    st.sampled_from([[2**24 - 1], [0], np.arange(8, dtype=np.int32), [131071, 131072]]),
)
n_ctx_values = st.one_of(
    st.none(),
    st.integers(1, 2**20),
    st.sampled_from([4096, 4097, 8192, 32768, 131072, 2**32 - 1]),
)


@st.composite
def gguf_with_config(draw) -> tuple:
    """(meta, config, file name): a corpus reading (of the file, its dump, or edited) with the
    config.json it was converted from (as text or a dict), another file's, or none."""
    name = draw(st.sampled_from(sorted(GGUF_READINGS)))
    source = draw(st.sampled_from(["file", "file", "dump", "edited"]))
    meta = GGUF_READINGS[name]
    if source == "dump" and name in GGUF_DUMPS:
        meta = pe_core.parse_gguf_dump(GGUF_DUMPS[name])
    elif source == "edited":
        meta = with_key(
            meta, draw(st.sampled_from(ROPE_SUFFIXES)), draw(st.sampled_from(ODD_VALUES))
        )
    which = draw(st.sampled_from(["own", "own", "other", "none"]))
    if which == "none":
        return meta, None, name
    config_of = name if which == "own" else draw(st.sampled_from(sorted(GGUF_CONFIGS)))
    config = GGUF_CONFIGS[config_of]
    if draw(st.booleans()):
        config = json.loads(config)
    return meta, config, name if (which == "own" and source == "file") else None


# --- vectors before and after a rotation -------------------------------------------------------


def _rotate_pairs(x, cos, sin, pairs: str):
    """``x cos + rotate(x) sin`` with the rotate of ``pairs`` (halves: rotate_half)."""
    if pairs == "halves":
        half = x.shape[-1] // 2
        turned = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    else:
        turned = np.empty_like(x)
        turned[..., 0::2], turned[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    return x * cos + turned * sin


def _full_width(cos, sin, width: int):
    """A rotary cache padded to the head's width with columns that do not rotate."""
    n, rotary = cos.shape
    full_cos, full_sin = np.ones((n, width)), np.zeros((n, width))
    full_cos[:, :rotary], full_sin[:, :rotary] = cos, sin
    return full_cos, full_sin


@dataclasses.dataclass(frozen=True)
class VectorCase:
    """Vectors before and after a rotation by a known cache (full width), and how closely a
    rebuilt cache must match it (absolute, on cos and sin)."""

    before: np.ndarray
    after: np.ndarray
    positions: np.ndarray | None
    cos: np.ndarray
    sin: np.ndarray
    tolerance: float


#: A rebuilt cache's error allowed: 8 units of the rotation's format (pe_core's ROTATION_ULPS),
#: times the attention factor (at most 1.14 here), times 4.5 for the least squares of a cache
#: applied by the other layout's rotate (1 / sqrt(0.05), the worst conditioning it uses).
FLOAT64_TOLERANCE = 8 * 2.0**-53 * 1.14
BFLOAT16_TOLERANCE = 8 * 2.0**-8


def _vector_cases() -> list[VectorCase]:
    rng = np.random.default_rng(0)
    yarn = pe_core.rope_from_config(
        {
            "head_dim": 8,
            "rope_theta": 100.0,
            "max_position_embeddings": 64,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0},
        }
    )
    partial = pe_core.rope_frequencies(8, partial_rotary_factor=0.5)
    llama = pe_core.rope_frequencies(16, base=500_000.0)
    f64 = np.float64
    heads = rng.standard_normal((2, 64, 8))
    one_head = rng.standard_normal((48, 16))
    cases = []
    # float64 rotations (apply_rope), two heads or one
    cos, sin = pe_core.rope_cos_sin(64, yarn, dtype=f64)
    after = pe_core.apply_rope(heads, 64, yarn)
    cases.append(VectorCase(heads, after, None, cos, sin, FLOAT64_TOLERANCE))
    rotary = pe_core.rope_cos_sin(64, partial, dtype=f64, layout="interleaved")
    cos, sin = _full_width(*rotary, 8)
    after = pe_core.apply_rope(heads, 64, partial, layout="interleaved")
    cases.append(VectorCase(heads, after, None, cos, sin, FLOAT64_TOLERANCE))
    positions = 1000.0 + np.arange(48)
    cos, sin = pe_core.rope_cos_sin(positions, llama, dtype=f64)
    after = pe_core.apply_rope(one_head, positions, llama)
    cases.append(VectorCase(one_head, after, positions, cos, sin, FLOAT64_TOLERANCE))
    # bfloat16: vectors and cache rounded to it, the rotation's products and sum too
    x = pe_core.quantize(rng.standard_normal((3, 32, 16)), "bfloat16")
    cos, sin = (pe_core.quantize(c, "bfloat16") for c in pe_core.rope_cos_sin(32, llama, dtype=f64))
    products = x * cos, _rotate_pairs(x, 0.0, sin, "halves")
    after = pe_core.quantize(sum(pe_core.quantize(p, "bfloat16") for p in products), "bfloat16")
    cases.append(VectorCase(x, after, None, cos, sin, BFLOAT16_TOLERANCE))
    # a halves cache applied by an interleaved rotate (wrong_pair_layout), over 4 heads
    x = rng.standard_normal((4, 32, 16))
    cos, sin = pe_core.rope_cos_sin(32, llama, dtype=f64)
    after = _rotate_pairs(x, cos, sin, "interleaved")
    cases.append(VectorCase(x, after, None, cos, sin, 4.5 * FLOAT64_TOLERANCE))
    return cases


VECTOR_CASES = _vector_cases()


def vector_case_of(before, after, positions) -> VectorCase | None:
    """The case ``before`` and ``after`` (the very arrays) and ``positions`` come from."""
    for case in VECTOR_CASES:
        if before is case.before and after is case.after:
            if positions is None and case.positions is None:
                return case
            if positions is not None and case.positions is not None:
                given = np.asarray(positions, dtype=np.float64).reshape(-1)
                if np.array_equal(given, case.positions):
                    return case
            if positions is not None and case.positions is None:
                given = np.asarray(positions, dtype=np.float64).reshape(-1)
                if np.array_equal(given, np.arange(case.before.shape[-2])):
                    return case
    return None


vector_positions = st.one_of(
    st.none(),
    st.sampled_from([case.positions for case in VECTOR_CASES if case.positions is not None]),
    st.sampled_from([np.arange(64), np.arange(32) * 2.0, np.arange(48)[::-1], [0.0, 1.0]]),
)
