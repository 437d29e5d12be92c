"""A digest of what pe_core's public functions return over a fixed corpus of calls, to show that a
change that should not change behaviour (a move, a rename, a refactor) does not.

Each case calls public names only (``pe_core.<name>``), so the same script runs on the commits
before and after a restructuring; every result (arrays by dtype, shape and bytes; results by
their summary and fields; error messages of refused input) is hashed. Run it in each checkout
and compare::

    python benchmarks/api_digest.py --write /tmp/before.json     # in the old checkout
    python benchmarks/api_digest.py --compare /tmp/before.json   # in the new one

It prints how many cases agree and lists those that do not (exit 1 if any).
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pe_core  # noqa: E402

CONFIGS = ROOT / "tests" / "data" / "hf_configs"
CACHES = ROOT / "tests" / "data" / "rope_caches"


def _canonical(value, seen=None):
    """A JSON-able, order-stable form of ``value`` (arrays by dtype, shape and a hash of bytes)."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return [
            "ndarray",
            str(data.dtype),
            list(data.shape),
            hashlib.sha256(data.tobytes()).hexdigest(),
        ]
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return _canonical(value.item())
    if isinstance(value, float):
        return ["float", value.hex()]
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, enum.Enum):
        return ["enum", type(value).__name__, value.name]
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (dict, type(pe_core.CONVENTIONS))):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (set, frozenset)):
        return sorted(str(v) for v in value)
    if dataclasses.is_dataclass(value):
        fields = {
            f.name: _canonical(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not callable(getattr(value, f.name))
        }
        for method in ("summary", "words"):
            if callable(getattr(value, method, None)):
                try:
                    fields[f"{method}()"] = getattr(value, method)()
                except Exception as error:  # recorded as part of the result
                    fields[f"{method}()"] = f"{type(error).__name__}: {error}"
        return [type(value).__name__, fields]
    if callable(value):
        return ["callable", getattr(value, "__name__", type(value).__name__)]
    return ["repr", repr(value)]


def _wrong_table(bug, length: int, d_model: int, base: float = 10_000.0) -> np.ndarray:
    """The table ``bug`` makes (its ``encoding``, or the sin and cos of its ``angles``)."""
    positions = np.arange(length, dtype=np.float64)
    if bug.encoding is not None:
        return np.asarray(bug.encoding(positions, d_model, base), dtype=np.float64)
    angles = bug.angles(positions, d_model, base)
    even, odd = (np.sin, np.cos) if bug.first == "sin" else (np.cos, np.sin)
    table = np.empty_like(angles)
    table[:, 0::2], table[:, 1::2] = even(angles[:, 0::2]), odd(angles[:, 1::2])
    return table


def _cases():
    """(name, thunk) pairs: every public function over small, edge and real parameters."""
    P = pe_core
    rng = np.random.default_rng(0)
    cases = []

    def add(name, thunk):
        cases.append((name, thunk))

    for d in (1, 2, 3, 7, 64, 512):
        for convention in P.CONVENTIONS:
            for base in (1.01, 10_000.0, 1e9):
                tag = f"{d}-{convention}-{base:g}"
                add(
                    f"encoding {tag}",
                    lambda d=d, c=convention, b=base: P.sinusoidal_encoding(
                        np.arange(0, 300, 7), d, base=b, convention=c
                    ),
                )
                add(
                    f"wavelengths {tag}",
                    lambda d=d, c=convention, b=base: P.wavelengths(d, base=b, convention=c),
                )
                add(
                    f"offset_similarity {tag}",
                    lambda d=d, c=convention, b=base: P.offset_similarity(
                        np.arange(-50, 50), d, base=b, convention=c
                    ),
                )
        for precision in P.PRECISIONS:
            for cast in P.CASTS:
                add(
                    f"uniqueness {d} {precision} {cast}",
                    lambda d=d, p=precision, c=cast: P.uniqueness_report(
                        300, d, precision=p, cast=c
                    ),
                )
    for dtype in ("float64", "float32", "float16", "bfloat16"):
        add(
            f"encoding dtype {dtype}",
            lambda t=dtype: (
                P.sinusoidal_encoding(100, 33, dtype=t)
                if t != "bfloat16"
                else P.quantize(P.sinusoidal_encoding(100, 33), t)
            ),
        )
    add("reference", lambda: P.reference_encoding(40, 9))
    add("columns", lambda: P.encoding_columns(np.arange(1000), 128, [0, 5, 127]))
    add("block_mean", lambda: P.block_mean_encoding(5000, 64, 37))
    add("column_roles", lambda: P.column_roles(11, convention="musicgen"))
    add("frequencies", lambda: P.frequencies(13, base=500.0))
    add("similarity_matrix", lambda: P.similarity_matrix(60, 32))
    add(
        "cosine",
        lambda: P.cosine_similarity(
            P.sinusoidal_encoding(10, 16)[:3], P.sinusoidal_encoding(10, 16)[3:6]
        ),
    )
    add("rotation", lambda: P.relative_rotation(3, 16))
    add(
        "distances",
        lambda: P.encoding_distances(
            [0, 1, 2], [710, 3, 2], 512, precision="bfloat16", cast="positions"
        ),
    )
    add("nearest", lambda: P.nearest_neighbor_distances(200, 16))
    add("pairwise_limit", lambda: P.pairwise_limit(64))
    add(
        "embeddings",
        lambda: P.add_to_embeddings(
            rng.normal(size=(2, 10, 16)), P.sinusoidal_encoding(10, 16), scale=True
        ),
    )
    add("quantize", lambda: P.quantize([1 / 3, 257.0, 65504.0], "bfloat16"))
    for formula in P.FORMULAS:
        for compute in ("float32", "float16", "bfloat16"):
            add(
                f"textbook {formula} {compute}",
                lambda f=formula, c=compute: P.textbook_encoding(
                    64, 32, compute_dtype=c, formula=f
                ),
            )
    for layout in P.GRID_LAYOUTS:
        add(
            f"grid {layout}",
            lambda lay=layout: P.grid_encoding(4, 6, 32, layout=lay, extra_tokens=1),
        )
        add(
            f"identify_grid {layout}",
            lambda lay=layout: P.identify_grid(
                P.grid_encoding(4, 6, 32, layout=lay, extra_tokens=1)
            ),
        )
    for layout in P.GRID3D_LAYOUTS:
        add(f"grid3d {layout}", lambda lay=layout: P.grid3d_encoding((2, 3, 4), 48, layout=lay))
        add(
            f"identify_grid3d {layout}",
            lambda lay=layout: P.identify_grid3d(P.grid3d_encoding((2, 3, 4), 48, layout=lay)),
        )
    # identification and diagnosis
    for convention in P.CONVENTIONS:
        for dtype in ("float64", "float32", "float16"):
            add(
                f"identify {convention} {dtype}",
                lambda c=convention, t=dtype: P.identify_encoding(
                    P.sinusoidal_encoding(np.arange(1, 65), 10, convention=c, dtype=t)
                ),
            )
    for name, bug in P.BUGS.items():
        add(f"diagnose {name}", lambda b=bug: P.diagnose_encoding(_wrong_table(b, 80, 32)))
    add("diagnose clean", lambda: P.diagnose_encoding(P.sinusoidal_encoding(80, 32)))
    add(
        "identify decimals", lambda: P.identify_encoding(np.round(P.sinusoidal_encoding(50, 12), 4))
    )
    # rotary
    for rope_type in P.ROPE_TYPES:
        scaling = {
            "default": None,
            "linear": {"rope_type": "linear", "factor": 4.0},
            "dynamic": {"rope_type": "dynamic", "factor": 2.0},
            "yarn": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096},
            "longrope": {
                "rope_type": "longrope",
                "short_factor": [1.0] * 32,
                "long_factor": [2.0] * 32,
                "original_max_position_embeddings": 4096,
            },
            "llama3": {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
            "proportional": {"rope_type": "proportional", "factor": 2.0},
        }.get(rope_type)
        kw = {"max_position_embeddings": 131072} if rope_type in ("dynamic", "longrope") else {}
        add(
            f"rope_frequencies {rope_type}",
            lambda s=scaling, kw=kw: P.rope_frequencies(
                64, base=500_000.0, scaling=s, seq_len=200_000, **kw
            ),
        )
    rope = P.rope_frequencies(64, base=10_000.0)
    add("rope_cos_sin", lambda: P.rope_cos_sin(np.arange(100), rope, dtype="float32"))
    add(
        "rope_cos_sin interleaved",
        lambda: P.rope_cos_sin(np.arange(10), rope, layout="interleaved"),
    )
    add("apply_rope", lambda: P.apply_rope(rng.normal(size=(3, 5, 64)), np.arange(5), rope))
    add("rope_permutation", lambda: P.rope_permutation(64, 32))
    add("rope_scores", lambda: P.rope_scores(np.arange(200), rope, np.ones(64), np.ones(64)))
    add("rope_decay_bound", lambda: P.rope_decay_bound(np.arange(200), rope))
    for precision in ("float32", "float16", "bfloat16"):
        add(
            f"rope_angle_errors {precision}",
            lambda p=precision: P.rope_angle_errors(np.arange(0, 70000, 97), rope, p),
        )
    add(
        "transformers_angle_errors",
        lambda: P.transformers_angle_errors(np.arange(0, 70000, 97), rope),
    )
    add("inv_freq_float32_ulps", lambda: P.inv_freq_float32_ulps(rope))
    add("merged", lambda: [P.merged_position_ids(p) for p in ("float32", "float16", "bfloat16")])
    add("yarn_range", lambda: P.yarn_correction_range(32.0, 1.0, 64, 10_000.0, 4096))
    add("alibi", lambda: (P.alibi_slopes(12), P.alibi_bias(np.arange(-3, 10), P.alibi_slopes(4))))
    add("t5", lambda: P.t5_relative_buckets(np.arange(-300, 300), bidirectional=False))
    add("learned", lambda: P.learned_position_table(10, 8))
    add("mrope ids", lambda: P.mrope_position_ids([3, (1, 4, 6), 2]))
    add("mrope axes", lambda: P.mrope_axes(64, (16, 24, 24)))
    add("axial", lambda: P.axial_rope_frequencies(80))
    add(
        "multi_axis",
        lambda: P.multi_axis_angles(
            P.mrope_position_ids([3, (1, 4, 6)]), rope.inv_freq, P.mrope_axes(32, (8, 12, 12))
        ),
    )
    for key, family in P.FAMILIES.items():
        if family.scores is not None:
            add(f"family {key}", lambda f=family: f.score(40, 16))
        add(
            f"family card {key}",
            lambda f=family: (f.name, f.note, f.citation, f.reference, f.defaults),
        )
    for path in sorted(CONFIGS.glob("*.json")):
        if path.name == "reference.json":
            continue
        text = path.read_text()
        add(f"rope_from_config {path.name}", lambda t=text: P.rope_from_config(t))
        add(f"rope_layers {path.name}", lambda t=text: P.rope_layers(t))
        add(f"rope_config_sources {path.name}", lambda t=text: P.rope_config_sources(t))
        add(f"rope_config_essentials {path.name}", lambda t=text: P.rope_config_essentials(t))
        add(f"rope_query_temperature {path.name}", lambda t=text: P.rope_query_temperature(t))
    for path in sorted(CACHES.glob("*.npz")):
        config = path.with_suffix(".config.json")
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files}
        cos = next((v for k, v in arrays.items() if "cos" in k), None)
        sin = next((v for k, v in arrays.items() if "sin" in k), None)
        if cos is None:
            continue
        text = config.read_text() if config.exists() else None
        add(f"identify_rope {path.name}", lambda c=cos, s=sin: P.identify_rope(c, s))
        if text:
            add(
                f"identify_rope+config {path.name}",
                lambda c=cos, s=sin, t=text: P.identify_rope(c, s, config=t),
            )
    # refused input: the message is part of the behaviour
    bad = [
        ("d_model 0", lambda: P.sinusoidal_encoding(5, 0)),
        ("base 1", lambda: P.sinusoidal_encoding(5, 4, base=1.0)),
        ("convention", lambda: P.sinusoidal_encoding(5, 4, convention="nope")),
        ("alibi heads", lambda: P.alibi_slopes(10_000)),
        ("learned std", lambda: P.learned_position_table(3, 3, std=-1.0)),
        ("learned seed", lambda: P.learned_position_table(3, 3, seed=-1)),
        ("family slope", lambda: P.FAMILIES["alibi"].score(3, 8, slope=0)),
        ("family gamma", lambda: P.FAMILIES["xpos"].score(3, 8, gamma=1e7)),
        ("rope head_dim", lambda: P.rope_frequencies(1)),
        ("rope seq_len", lambda: P.rope_frequencies(8, seq_len=0.5)),
        ("config json", lambda: P.rope_from_config("{")),
        ("config depth", lambda: P.load_json("[" * 101 + "]" * 101)),
        ("t5 buckets", lambda: P.t5_relative_buckets([1], num_buckets=0)),
    ]
    cases.extend(bad)
    return cases


def digest() -> dict[str, str]:
    results = {}
    for name, thunk in _cases():
        try:
            value = _canonical(thunk())
        except (ValueError, TypeError) as error:
            value = ["raised", type(error).__name__, str(error)]
        text = json.dumps(value, sort_keys=True, default=str)
        results[name] = hashlib.sha256(text.encode()).hexdigest()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, help="write the digest of this checkout here")
    group.add_argument("--compare", type=Path, help="compare this checkout with a written digest")
    args = parser.parse_args()
    results = digest()
    if args.write:
        args.write.write_text(json.dumps(results, indent=1, sort_keys=True))
        print(f"{len(results)} cases written to {args.write}")
        return 0
    before = json.loads(args.compare.read_text())
    differ = sorted(k for k in before.keys() & results.keys() if before[k] != results[k])
    only_before = sorted(before.keys() - results.keys())
    only_now = sorted(results.keys() - before.keys())
    same = len(before.keys() & results.keys()) - len(differ)
    print(f"{same} of {len(before.keys() & results.keys())} cases identical")
    for label, names in (("differ", differ), ("only before", only_before), ("only now", only_now)):
        for name in names:
            print(f"  {label}: {name}")
    return 1 if differ or only_before or only_now else 0


if __name__ == "__main__":
    raise SystemExit(main())
