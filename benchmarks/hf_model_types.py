"""Every transformers model type with a text rotary embedding, read by pe_core and by transformers.

Development only: needs torch and transformers (``/work/main/.venv`` has torch 2.13.0+cpu and
transformers 5.24.0). For each ``model_type`` in ``CONFIG_MAPPING`` whose modeling file defines a
``*RotaryEmbedding`` class, the model class's default config (``to_dict()``, every key written
out) is read by transformers (hf_reference.compute_config: its rotary class's inv_freq and
attention factor per layer type, the pair layout from its code) and by
``pe_core.rope_from_config``; the differences are printed and written to
/tmp/hf_model_types.json. The layers that rotate are hf_reference.py's rules, not each model's
attention code: this walk checks frequencies, factors and layouts, not layer maps.

    HF_HUB_OFFLINE=1 python benchmarks/hf_model_types.py
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.simplefilter("ignore")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
import transformers  # noqa: E402
from hf_reference import CONFIG_MAPPING, compute_config  # noqa: E402

import pe_core  # noqa: E402
from pe_core.rotary.models import MODEL_ROPES  # noqa: E402

MODELS = Path(transformers.__file__).parent / "models"


def rotary_model_types() -> list[str]:
    """Model types whose package's modeling file has a text RotaryEmbedding class."""
    found = []
    for model_type, cls in CONFIG_MAPPING.items():
        package = cls.__module__.rsplit(".", 1)[0].rsplit(".", 1)[-1]
        text = "".join(
            path.read_text(encoding="utf-8") for path in (MODELS / package).glob("modeling_*.py")
        )
        if "RotaryEmbedding(" in text:
            found.append(model_type)
    return found


def compare(model_type: str) -> dict:
    raw = CONFIG_MAPPING[model_type]().to_dict()
    raw = json.loads(json.dumps(raw, default=str))
    raw["model_type"] = model_type
    try:
        reference = compute_config(raw)
    except Exception as exc:
        return {"status": "transformers", "error": f"{type(exc).__name__}: {exc}"[:300]}
    out = {
        "text_model_type": reference["text_model_type"],
        "rotary_class": reference["rotary_class"],
        "layout": reference["layout"],
        "in_table": model_type in MODEL_ROPES or reference["text_model_type"] in MODEL_ROPES,
        "problems": [],
    }
    for layer_type, expected in reference["per_layer_type"].items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rope = pe_core.rope_from_config(
                    raw,
                    layer_type=None if layer_type == "all" else layer_type,
                    seq_len=8192,
                )
        except Exception as exc:
            out["problems"].append(f"{layer_type}: pe_core {type(exc).__name__}: {exc}"[:300])
            continue
        inv = np.asarray(expected.get("inv_freq_after_forward", expected["inv_freq"]))
        if rope.rotary_dim != expected["rotary_dim"]:
            out["problems"].append(
                f"{layer_type}: rotary_dim {rope.rotary_dim} != {expected['rotary_dim']}"
            )
        elif not np.allclose(rope.inv_freq, inv, rtol=1e-6, atol=0):
            out["problems"].append(f"{layer_type}: inv_freq differs")
        if not np.isclose(rope.attention_factor, expected["attention_scaling"], rtol=2**-23):
            out["problems"].append(
                f"{layer_type}: attention factor {rope.attention_factor} != "
                f"{expected['attention_scaling']}"
            )
        if rope.layout != reference["layout"]:
            out["problems"].append(f"{layer_type}: layout {rope.layout} != {reference['layout']}")
    out["status"] = "differs" if out["problems"] else "same"
    return out


def main() -> int:
    types = rotary_model_types()
    results = {}
    for model_type in types:
        results[model_type] = compare(model_type)
        r = results[model_type]
        print(
            model_type,
            r["status"],
            "; ".join(r.get("problems", [])) or r.get("error", ""),
            flush=True,
        )
    Path("/tmp/hf_model_types.json").write_text(json.dumps(results, indent=1) + "\n")
    counts = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(len(types), "model types with a RotaryEmbedding:", counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
