"""transformers' config classes as pe_core reads them: class defaults, no rotary, layer types.

Development only: needs torch and transformers (``/work/main/.venv`` has torch 2.13.0+cpu and
transformers 5.24.0). Writes two files:

- ``pe_core/rotary/classes.py``: for every ``model_type`` of transformers' ``CONFIG_MAPPING``
  whose text model has a rotary embedding, the defaults of its text config class for the keys
  pe_core reads (``CLASS_DEFAULT_KEYS``: the dataclass fields' own defaults, never a value a
  class derives from others, such as ``head_dim`` from ``hidden_size``); the model types whose
  text model applies no rotary embedding at all (its modeling file names neither "rotary" nor
  "rope"); and the layer types each class can derive when a config lists none.
- ``tests/data/hf_class_defaults_5_24.json``: transformers' own reading of sparse configs of
  every rotary model type (``{"model_type": t}``; with 12 layers; with a YaRN or dynamic NTK
  ``rope_scaling`` and no lengths), through its rotary class (hf_reference.compute_config):
  ``inv_freq`` per layer type (float32, base64), attention factor, layer types, rotating layers,
  lengths. ``tests/core/test_rope_classes.py`` compares pe_core with it.

    HF_HUB_OFFLINE=1 python benchmarks/hf_class_defaults.py   # --module-only: the module alone
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import inspect
import json
import logging
import os
import pprint
import re
import subprocess
import sys
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import transformers  # noqa: E402
from hf_reference import (  # noqa: E402
    CONFIG_MAPPING,
    compute_config,
    modeling_module,
    rotary_class,
    text_config_of,
)

transformers.logging.set_verbosity_error()
ROOT = HERE.parent
MODULE = ROOT / "pe_core" / "rotary" / "classes.py"
REFERENCE = ROOT / "tests" / "data" / "hf_class_defaults_5_24.json"
MODELS = Path(transformers.__file__).parent / "models"

#: The keys whose class defaults pe_core takes when a config lacks them (every key its reading
#: of a config asks for that a config class may default).
CLASS_DEFAULT_KEYS = (
    "alibi",
    "attention_chunk_size",
    "attn_scale",
    "attn_temperature_tuning",
    "floor_scale",
    "full_attention_interval",
    "global_attn_every_n_layers",
    "global_head_dim",
    "head_dim",
    "hidden_size",
    "kv_channels",
    "layer_group_size",
    "max_position_embeddings",
    "max_window_layers",
    "no_rope_layer_interval",
    "num_attention_heads",
    "num_hidden_layers",
    "original_max_position_embeddings",
    "partial_rotary_factor",
    "position_embedding_type",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "rope_interleave",
    "rotary_dim",
    "sliding_window",
    "use_sliding_window",
)
#: Sparse configs read by transformers for the reference: name -> extra keys.
SPARSE = {
    "defaults": {},
    "12 layers": {"num_hidden_layers": 12},
    "yarn": {"rope_scaling": {"rope_type": "yarn", "factor": 2.0}},
    "dynamic": {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}},
}


def _text_class(model_type: str):
    """The text model's config (built with the class's defaults), or None."""
    try:
        return text_config_of(CONFIG_MAPPING[model_type]())
    except Exception:  # a class that cannot be built bare: not classified
        return None


def _modeling_source(text) -> str | None:
    try:
        module = modeling_module(text)
    except Exception:
        return None
    return Path(module.__file__).read_text(encoding="utf-8")


def classify() -> tuple[dict, list]:
    """(rotary model type -> its text config, model types with no rotary embedding)."""
    rotary, none = {}, []
    for model_type in sorted(CONFIG_MAPPING.keys()):
        text = _text_class(model_type)
        if text is None:
            continue
        source = _modeling_source(text)
        if source is None:
            continue
        try:
            rotary_class(modeling_module(text))
        except LookupError:
            if not _attention_rotates(modeling_module(text)):
                none.append(model_type)
            continue
        rotary[model_type] = text
    return rotary, none


def _attention_rotates(module) -> bool:
    """Whether some attention class of a modeling module (no rotary class of its own) rotates:
    its forward calls a rotary function or is handed (cos, sin) position embeddings. Jamba's,
    Nemotron-H's and Kimi Linear's attention are not (their files keep a copied
    apply_rotary_pos_emb that nothing calls; Kimi Linear's MLA keeps a k_rot it never turns)."""
    for name in dir(module):
        cls = getattr(module, name)
        if not (isinstance(cls, type) and "Attention" in name and hasattr(cls, "forward")):
            continue
        try:
            source = inspect.getsource(cls.forward)
        except (OSError, TypeError):
            return True  # not readable: not claimed to have no RoPE
        rotates = r"apply_rotary|rotate_half|rotary_emb|apply_rope|freqs_cis|position_embeddings"
        if re.search(rotates, source):
            return True
    return False


def _theta_from_the_top_level(cls) -> bool:
    """Whether a config's top-level rope_theta reaches the class's default rope parameters
    (Phi-3's: yes; Ministral 3's YaRN keeps its own 1e6)."""
    try:
        built = cls(rope_theta=12_345.0)
    except Exception:
        return True
    parameters = getattr(built, "rope_parameters", None) or {}
    return isinstance(parameters, dict) and parameters.get("rope_theta") == 12_345.0


def _theta_beside_a_rope_dict(cls) -> float | None:
    """The base of a config whose rope dict gives none (Ministral 3: its class's
    default_theta, 10,000, not its default dict's 1e6; Ring/Ling: 6e6)."""
    try:
        built = cls(rope_scaling={"rope_type": "default"})
    except Exception:
        built = None
    parameters = getattr(built, "rope_parameters", None) or {}
    theta = parameters.get("rope_theta") if isinstance(parameters, dict) else None
    if isinstance(theta, (int, float)) and not isinstance(theta, bool):
        return float(theta)
    theta = getattr(cls, "default_theta", None)
    if isinstance(theta, (int, float)) and not isinstance(theta, bool):
        return float(theta)
    return None


def _partial_always(text, partial, *, instance: bool) -> bool:
    """Whether a class's rotary fraction holds whatever rope dict a config gives (Phi's 0.5,
    set through kwargs) rather than only inside its own default dict (Moonshine Streaming's),
    and is a constant (not Mistral 4's qk_rope_head_dim over the head)."""
    cls = type(text)
    if not instance and _derived_partial(cls, partial):
        return False
    try:
        other = cls(rope_scaling={"rope_type": "default", "rope_theta": 10_000.0})
    except Exception:
        return False
    parameters = getattr(other, "rope_parameters", None) or {}
    return parameters.get("partial_rotary_factor") == partial


def _derived_partial(cls, partial) -> bool:
    """Whether a class computes its default rotary fraction from the head's widths (Mistral 4:
    qk_rope_head_dim over the head) rather than holding a constant (Phi's 0.5)."""
    names = {field.name for field in dataclasses.fields(cls)}
    widths = {"qk_rope_head_dim": 16, "qk_nope_head_dim": 112, "head_dim": 48}
    try:
        other = cls(**{k: v for k, v in widths.items() if k in names})
    except Exception:
        return False
    parameters = getattr(other, "rope_parameters", None) or {}
    return parameters.get("partial_rotary_factor") != partial


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
    except TypeError:
        return False
    return True


def class_defaults(text, *, instance: bool = False) -> dict:
    """The text class's own defaults of CLASS_DEFAULT_KEYS (dataclass fields, not None), and
    what it puts in ``rope_parameters`` when a config has none. With ``instance``: the values
    of ``text`` itself (a wrapper's default text config, which may differ from its class's)."""
    cls = type(text)
    found = {}
    for field in dataclasses.fields(cls):
        if field.name not in CLASS_DEFAULT_KEYS:
            continue
        try:
            value = getattr(text, field.name, None) if instance else dataclasses.MISSING
        except Exception:  # Gemma 4's per-layer head_dim: the class's default below
            value = dataclasses.MISSING
        if value is not dataclasses.MISSING:
            pass
        elif field.default is not dataclasses.MISSING:
            value = field.default
        elif field.default_factory is not dataclasses.MISSING:
            value = field.default_factory()
        else:
            continue
        if value is not None and _jsonable(value):
            found[field.name] = value
    # The base when a config gives none (the class's default_theta), and what the class puts
    # in rope_parameters when the config has no rope dict of its own: a scaling (gpt-oss's
    # YaRN), another base (Ministral 3's 1e6), a rotary fraction set there (Moonshine
    # Streaming's 0.8), one set per layer type (Gemma 4). A fraction the class passes however
    # the config spells its rope dict (Phi's 0.5, through kwargs) is a default of its own.
    theta = _theta_beside_a_rope_dict(cls)
    if theta is not None:
        found["rope_theta"] = theta
    parameters = getattr(text if instance else cls(), "rope_parameters", None)
    if not isinstance(parameters, dict) or not _jsonable(parameters):
        return dict(sorted(found.items()))
    nested = any(isinstance(v, dict) for v in parameters.values())
    partial = None if nested else parameters.get("partial_rotary_factor")
    if partial not in (None, 1, 1.0) and _partial_always(text, partial, instance=instance):
        found["partial_rotary_factor"] = partial
        parameters = {k: v for k, v in parameters.items() if k != "partial_rotary_factor"}
    elif partial is not None and not instance and _derived_partial(cls, partial):
        # Computed from the head's widths (Mistral 4): pe_core's rule for the model, not a value.
        parameters = {k: v for k, v in parameters.items() if k != "partial_rotary_factor"}
    if not nested:
        if parameters.get("partial_rotary_factor") in (1, 1.0):
            parameters = {k: v for k, v in parameters.items() if k != "partial_rotary_factor"}
        if not instance and _theta_from_the_top_level(cls):
            # A config's own rope_theta (or the class's default_theta) goes into these.
            parameters = {k: v for k, v in parameters.items() if k != "rope_theta"}
    own = (
        nested
        or parameters.get("rope_type", parameters.get("type")) not in (None, "default")
        or "rope_theta" in parameters
        or "partial_rotary_factor" in parameters
    )
    if own:
        found["rope_parameters"] = parameters
    return dict(sorted(found.items()))


def wrapper_text(model_type: str, text) -> tuple[str, bool] | None:
    """For a wrapper (multimodal, encoder-decoder) whose text model is another config class:
    the text model's type, and whether the wrapper reads a config's top-level text keys into
    it when the config has no text config (Qwen2-VL's backward compatibility; most do not, and
    then the wrapper's own default text config applies whatever the top level says)."""
    cls = CONFIG_MAPPING[model_type]
    if isinstance(text, cls):
        return None
    try:
        built = cls.from_dict({"model_type": model_type, "num_hidden_layers": 7})
        reads = getattr(text_config_of(built), "num_hidden_layers", None) == 7
    except Exception:
        reads = False
    return text.model_type, reads


def layer_type_names(text) -> list[str]:
    """The layer types the class derives when a config lists none, at 1 to 24 layers."""
    names = set()
    for n in range(1, 25):
        try:
            built = type(text)(num_hidden_layers=n)
        except Exception:
            continue
        names |= set(getattr(built, "layer_types", None) or ())
    return sorted(names)


def _runs(names) -> list | None:
    """A list of layer types as [name, count] runs (100 layers of a 5:1 pattern: 34 runs)."""
    if not names:
        return None
    runs: list = []
    for name in names:
        if runs and runs[-1][0] == name:
            runs[-1][1] += 1
        else:
            runs.append([name, 1])
    return runs


def _bits(layers, n_layers) -> str:
    """The rotating layers as a string of 0 and 1, one character a layer."""
    chosen = set(layers)
    return "".join("1" if i in chosen else "0" for i in range(n_layers))


def _b64(values) -> str:
    return base64.b64encode(np.asarray(values, dtype=np.float32).tobytes()).decode()


def reference(model_type: str) -> dict:
    records = {}
    for name, extra in SPARSE.items():
        config = {"model_type": model_type, **copy.deepcopy(extra)}
        try:
            # transformers changes a config's nested dicts in place: each reading its own copy.
            found = compute_config(copy.deepcopy(config))
        except Exception as exc:
            records[name] = {"error": f"{type(exc).__name__}: {exc}"[:120]}
            continue
        cfg = CONFIG_MAPPING[model_type].from_dict(copy.deepcopy(config))
        text = text_config_of(cfg)
        per_type = {}
        for layer_type, entry in found["per_layer_type"].items():
            inv_freq = entry.get("inv_freq_after_forward", entry["inv_freq"])
            per_type[layer_type] = {
                "inv_freq_float32": _b64(inv_freq),
                "attention_scaling": entry["attention_scaling"],
                "rotary_dim": entry["rotary_dim"],
            }
        records[name] = {
            "text_model_type": found["text_model_type"],
            "num_hidden_layers": found["num_hidden_layers"],
            "max_position_embeddings": getattr(text, "max_position_embeddings", None),
            "layer_types": _runs(getattr(text, "layer_types", None)),
            "rotating_layers": _bits(found["rotating_layers"], found["num_hidden_layers"]),
            "per_layer_type": per_type,
        }
    return records


def ignored_rope_keys(text) -> tuple[str, ...]:
    """The rope parameters the class tells transformers' validation not to warn about
    (``ignore_keys_at_rope_validation``: M-RoPE's sections, Ministral 3's query scaling)."""
    keys = getattr(text, "ignore_keys_at_rope_validation", None) or ()
    return tuple(sorted(set(keys) - {"partial_rotary_factor"}))


def _module_text(
    defaults: dict, none: list, layer_types: dict, ignored: dict, wrappers: dict
) -> str:
    lines = [
        '"""What transformers\' config classes default, per ``model_type``: generated by',
        "benchmarks/hf_class_defaults.py from transformers "
        f"{transformers.__version__}; do not edit.",
        "",
        "Read by :mod:`pe_core.rope_config`: a config.json without a key takes its class's",
        "default from :data:`CLASS_DEFAULTS`, as transformers does; a model type of",
        ":data:`NO_ROTARY` has no rotary position embedding and is refused;",
        ":data:`LAYER_TYPE_NAMES` are the layer types a class derives when a config lists none.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping",
        "from types import MappingProxyType",
        "",
        "__all__ = [",
        '    "CLASS_DEFAULTS",',
        '    "IGNORED_ROPE_KEYS",',
        '    "LAYER_TYPE_NAMES",',
        '    "NO_ROTARY",',
        '    "TRANSFORMERS_VERSION",',
        '    "WRAPPERS",',
        "]",
        "",
        f"TRANSFORMERS_VERSION = {transformers.__version__!r}",
        "",
        "#: model_type -> the text config class's defaults of the keys pe_core reads (dataclass",
        "#: fields with a default other than None; ``rope_theta``, ``partial_rotary_factor`` and",
        "#: ``rope_parameters``: what the class puts in its rope parameters when a config has",
        "#: none). For a wrapper of :data:`WRAPPERS` that does not read the top level: the values",
        "#: of its own default text config.",
        "_DEFAULTS = " + pprint.pformat(defaults, width=96, sort_dicts=True),
        "CLASS_DEFAULTS: Mapping[str, Mapping[str, object]] = MappingProxyType(",
        "    {key: MappingProxyType(value) for key, value in _DEFAULTS.items()}",
        ")",
        "#: Model types whose text model applies no rotary position embedding (its modeling file",
        '#: names neither "rotary" nor "rope": learned, sinusoidal, relative, ALiBi or none).',
        "NO_ROTARY = frozenset(" + pprint.pformat(none, width=96, compact=True) + ")",
        "#: model_type -> the layer types its config class derives (1 to 24 layers) when a config",
        "#: lists none; absent: it derives none (every layer is full attention).",
        "LAYER_TYPE_NAMES: Mapping[str, tuple[str, ...]] = MappingProxyType(",
        "    " + pprint.pformat(layer_types, width=92, sort_dicts=True).replace("\n", "\n    "),
        ")",
        "#: A wrapper's model_type -> (its text model's type, whether a config's top-level text",
        "#: keys reach the text model when the config has no text config): without one, the",
        "#: wrapper's own default text config (:data:`CLASS_DEFAULTS` of the wrapper) applies.",
        "WRAPPERS: Mapping[str, tuple[str, bool]] = MappingProxyType(",
        "    " + pprint.pformat(wrappers, width=92, sort_dicts=True).replace("\n", "\n    "),
        ")",
        "#: model_type -> rope parameters its class tells transformers' validation not to warn",
        "#: about (``ignore_keys_at_rope_validation``); absent: none.",
        "IGNORED_ROPE_KEYS: Mapping[str, tuple[str, ...]] = MappingProxyType(",
        "    " + pprint.pformat(ignored, width=92, sort_dicts=True).replace("\n", "\n    "),
        ")",
        "",
    ]
    return "\n".join(lines)


def tables() -> tuple[dict, list, dict, dict, dict]:
    """The tables of pe_core/rotary/classes.py: class defaults, model types with no rotary
    embedding, derived layer types, keys not validated, wrappers."""
    rotary, none = classify()
    wrappers = {mt: found for mt, text in rotary.items() if (found := wrapper_text(mt, text))}
    # A wrapper without a text config in the file: its own default text config, unless it
    # reads the top level (then the text class's defaults, as for the text type itself).
    defaults = {
        mt: class_defaults(text, instance=mt in wrappers and not wrappers[mt][1])
        for mt, text in rotary.items()
    }
    for mt, text in rotary.items():
        if mt in wrappers and wrappers[mt][0] not in defaults:
            defaults[wrappers[mt][0]] = class_defaults(text)
    layer_types = {}
    for mt, text in rotary.items():
        names = layer_type_names(text)
        if names and names != ["full_attention"]:
            layer_types[mt] = tuple(names)
    ignored = {mt: keys for mt, text in rotary.items() if (keys := ignored_rope_keys(text))}
    return defaults, none, layer_types, ignored, wrappers


def main() -> int:
    defaults, none, layer_types, ignored, wrappers = tables()
    MODULE.write_text(
        _module_text(defaults, none, layer_types, ignored, wrappers), encoding="utf-8"
    )
    # The project's formatting (the file is checked by ruff like the others).
    subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(MODULE)], check=False)
    if "--module-only" in sys.argv:
        return 0
    records = {}
    for model_type in sorted(set(defaults) & set(classify()[0])):
        records[model_type] = reference(model_type)
        print(model_type, flush=True)
    REFERENCE.write_text(
        json.dumps(
            {
                "source": f"transformers {transformers.__version__} on torch "
                f"{__import__('torch').__version__}, benchmarks/hf_class_defaults.py",
                "configs": SPARSE,
                "results": records,
            },
            indent=1,
            sort_keys=True,
        )
        + "\n",
        encoding="utf-8",
    )
    print(len(records), "rotary model types,", len(none), "with no rotary embedding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
