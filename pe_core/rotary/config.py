"""Hugging Face model configurations read as transformers reads them, into rotary encodings.

:func:`rope_from_config` gives one layer type's :class:`~pe_core.rotary.encoding.RotaryEncoding`,
:func:`rope_layers` every decoder layer's. What differs between model families (legacy keys,
class defaults, pair layout, layer pattern) is data in :mod:`pe_core.rotary.models`; the
frequencies are :func:`pe_core.rotary.encoding.rope_frequencies`'.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

from pe_core._numerics.checks import check_json_depth, check_length, describe, load_json
from pe_core.errors import InputError, InputTypeError
from pe_core.rotary.classes import (
    CLASS_DEFAULTS,
    IGNORED_ROPE_KEYS,
    LAYER_TYPE_NAMES,
    NO_ROTARY,
    TRANSFORMERS_VERSION,
    WRAPPERS,
)
from pe_core.rotary.encoding import RotaryEncoding, rope_frequencies
from pe_core.rotary.models import (
    ATTENTION_TYPES,
    GENERIC,
    LAYER_KEYS,
    MODEL_ROPES,
    NON_ROTARY_LAYER_TYPES,
    ModelRope,
)
from pe_core.rotary.variants import ROPE_VARIANTS

__all__ = [
    "MAX_LAYERS",
    "ConfigSource",
    "RopeConfigSources",
    "rope_config_essentials",
    "rope_config_sources",
    "rope_from_config",
    "rope_layers",
]

#: Most decoder layers a configuration may list (the deepest public models have about 130): a
#: pasted ``num_hidden_layers`` of a billion is refused before a per-layer list is built.
MAX_LAYERS = 4096


def _layer_count(value: object, name: str) -> int:
    count = check_length(value, name)
    if count > MAX_LAYERS:
        raise InputError(f"{name} must be at most {MAX_LAYERS:,} layers, got {count:,}")
    return count


#: Rotary parameters read by a model's attention code rather than by its rotary class.
_ATTENTION_KEYS = ("mrope_section", "mrope_interleaved", "llama_4_scaling_beta")


@dataclass(frozen=True)
class _ConfigReading:
    """A config.json read as transformers reads it: the keys with the model class's defaults
    and legacy spellings resolved, and the rotary parameters of each layer type."""

    config: Mapping
    model: ModelRope
    head_dim: int
    layer_types: tuple[str, ...] | None
    parameters: Mapping[str, dict]  # layer type ("*": every layer) -> rope parameters
    rotating: tuple[bool, ...] | None
    partial_rotary_factor: float = 1.0  # when neither the config nor its parameters give one
    layers_unknown: str | None = None  # why the layers cannot be listed (rotating is None)
    derived_types: tuple[str, ...] = ()  # the layer types its class derives (LAYER_TYPE_NAMES)

    def parameters_of(self, layer_type: str) -> dict:
        return dict(self.parameters.get(layer_type, self.parameters.get("*", {})))


def _model_type(config: Mapping) -> str | None:
    model_type = config.get("model_type")
    return model_type if isinstance(model_type, str) else None


def _model_of(config: Mapping, *, refuse: bool = True) -> ModelRope:
    """The model family's entry (:data:`GENERIC` for a model type not listed); with
    ``refuse``, a model type that has no rotary embedding, or one pe_core cannot read, is
    refused with the reason."""
    model_type = _model_type(config)
    model = MODEL_ROPES.get(model_type, GENERIC) if model_type else GENERIC
    if not refuse:
        return model
    if model.unread:
        raise InputError(f"config: model_type {model_type!r} is not read: {model.unread}")
    if model_type in NO_ROTARY:
        raise InputError(
            f"config: model_type {model_type!r} has no rotary position embedding: transformers "
            f"{TRANSFORMERS_VERSION}'s {model_type} text model applies none (its positions are "
            "learned, sinusoidal, relative, ALiBi or absent), so there is no RoPE to read"
        )
    default_parameters = CLASS_DEFAULTS.get(model_type, {}).get("rope_parameters") or {}
    if default_parameters.get("rope_type") == "axial":
        raise InputError(
            f"config: model_type {model_type!r} is not read: its rotary embedding is 2-D "
            "(axial) vision RoPE, which is not read here"
        )
    return model


def _text_part(config: Mapping) -> tuple[Mapping, str | None]:
    """The text model's config of a multimodal one (where RoPE is read), else the config; and
    the model type whose class defaults apply to it.

    The wrapper's model entry names the key (``text_config``; InternVL's ``llm_config``; an
    encoder-decoder's ``decoder``), followed down through a wrapper of a wrapper (Qwen2.5-Omni's
    ``thinker_config.text_config``). A text config without a model type is its wrapper's text
    class (:data:`pe_core.rotary.classes.WRAPPERS`), with that class's defaults. A wrapper of
    transformers' without a text config builds its own default text model, which the top
    level's keys do not reach (unless the wrapper reads them, as Qwen2-VL's does).
    """
    defaults_of = _model_type(config)
    for _ in range(3):
        model_type = _model_type(config)
        wrapper = WRAPPERS.get(model_type or "")
        text = config.get(_model_of(config, refuse=False).text_key)
        heads = "num_attention_heads" in config or "head_dim" in config
        # A wrapper's text model without a model type of its own is its text class: read with
        # the wrapper's entry when the table has one, else with its text class's.
        label = model_type
        if wrapper is not None and model_type not in MODEL_ROPES:
            label = wrapper[0]
        if isinstance(text, Mapping) and (wrapper is not None or not heads):
            defaults_of = _model_type(text) or (wrapper[0] if wrapper else model_type)
            config = {"model_type": label, **text}
            continue
        if wrapper is not None and not wrapper[1]:
            config = {"model_type": label}  # its own default text model (defaults_of: its own)
        break
    return config, defaults_of


class _Recording(dict):
    """A config with the model's defaults and legacy spellings resolved, that remembers which
    keys the reading asked for (:func:`rope_config_sources` says where each came from)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked: set[str] = set()

    def get(self, key, default=None):
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.asked.add(key)
        return super().__contains__(key)


def _with_model_knowledge(config: Mapping, model: ModelRope, defaults_of: str | None) -> _Recording:
    """The config with its class's defaults under it (transformers 5.24's config class, from
    :data:`pe_core.rotary.classes.CLASS_DEFAULTS`, over the model entry's own) and its legacy
    spellings read. A class's default rope parameters (gpt-oss's YaRN) apply only to a config
    that gives none of its own."""
    resolved = _Recording(model.defaults)  # remote-code classes, and rules of the entry's own
    resolved.update(CLASS_DEFAULTS.get(defaults_of, {}) if defaults_of else {})
    own_rope = config.get("rope_parameters") is not None or config.get("rope_scaling") is not None
    if own_rope or model.per_layer_type:
        # The config's own rope dict replaces the class's; a model whose entry says where each
        # layer type's parameters come from (Gemma 3's rope_local_base_freq) reads them so.
        for key in ("rope_parameters", "rope_scaling"):
            resolved.pop(key, None)
    resolved.update(config)
    for legacy, key in model.renamed.items():
        if legacy in config and key not in config:
            resolved[key] = config[legacy]
    resolved.asked.clear()
    return resolved


def _mapping(value: object, key: str) -> dict:
    if not isinstance(value, Mapping):
        raise InputTypeError(f"config['{key}'] must be a mapping, got {describe(value)}")
    return dict(value)


def _read_config(config: Mapping | str | bytes) -> _ConfigReading:
    if isinstance(config, (str, bytes, bytearray)):
        config = load_json(config, name="config")
    if not isinstance(config, Mapping):
        raise InputTypeError(
            f"config must be a mapping (a parsed config.json), got {describe(config)}"
        )
    check_json_depth(config, "config")
    config, defaults_of = _text_part(config)
    model = _model_of(config)
    given = config
    config = _with_model_knowledge(config, model, defaults_of)

    # Multi-head latent attention rotates qk_rope_head_dim columns of each head: DeepSeek's
    # config sets head_dim to it, Mistral 4's to qk_nope_head_dim + qk_rope_head_dim with
    # partial_rotary_factor qk_rope_head_dim / head_dim (model.head_dim_rule).
    partial = 1.0
    mla = model.head_dim_rule != "head_dim" and config.get("qk_rope_head_dim") is not None
    if mla:
        head_dim = check_length(config["qk_rope_head_dim"], "config['qk_rope_head_dim']")
        if model.head_dim_rule == "qk_sum":
            rotary = head_dim
            head_dim += check_length(config.get("qk_nope_head_dim"), "config['qk_nope_head_dim']")
            # transformers sets it into the rope parameters before reading a legacy
            # rope_scaling, which then replaces them: with that key the whole head rotates.
            if given.get("rope_scaling") is None or given.get("rope_parameters") is not None:
                partial = rotary / head_dim
    elif config.get("head_dim") is not None:
        head_dim = check_length(config["head_dim"], "config['head_dim']")
    else:
        missing = [k for k in ("hidden_size", "num_attention_heads") if k not in config]
        if missing:
            raise InputError(
                f"config needs head_dim, or hidden_size and num_attention_heads (missing: "
                f"{', '.join(missing)})"
            )
        hidden = check_length(config["hidden_size"], "config['hidden_size']")
        heads = check_length(config["num_attention_heads"], "config['num_attention_heads']")
        head_dim = hidden // heads

    layer_types = config.get("layer_types")
    listed = layer_types is not None
    if layer_types is not None:
        if not isinstance(layer_types, (list, tuple)) or not all(
            isinstance(kind, str) for kind in layer_types
        ):
            raise InputTypeError(
                f"config['layer_types'] must be a list of strings, got {describe(layer_types)}"
            )
        _layer_count(len(layer_types) or 1, "config['layer_types']")
        layer_types = tuple(layer_types)
    elif model.layer_types is not None and config.get("num_hidden_layers") is not None:
        n_layers = _layer_count(config["num_hidden_layers"], "config['num_hidden_layers']")
        layer_types = tuple(model.layer_types.layer_types(config, n_layers))
    layers_unknown = _why_layers_unknown(given, model, layer_types, listed=listed)

    top_theta = config.get("rope_theta", model.default_theta)
    parameters: dict[str, dict] = {}
    rope_parameters = config.get("rope_parameters")
    if rope_parameters is not None:
        flat = _mapping(rope_parameters, "rope_parameters")
        if flat and all(isinstance(v, Mapping) or v is None for v in flat.values()):
            for kind, values in flat.items():
                if values is not None:
                    parameters[kind] = {"rope_theta": top_theta, **values}
            flat = None
        else:
            flat.setdefault("rope_theta", top_theta)
    else:
        flat = _mapping(config.get("rope_scaling") or {}, "rope_scaling")
        flat["rope_theta"] = top_theta
    if flat is not None:
        if model.flat_unread and (given.get("rope_parameters") or given.get("rope_scaling")):
            raise InputError(f"config: model_type {_model_type(given)!r}: {model.flat_unread}")
        if model.per_layer_type:
            for kind, rule in model.per_layer_type.items():
                values = dict(flat) if rule.scaled else {}
                theta = config.get(rule.theta_key) if rule.theta_key else None
                values["rope_theta"] = rule.default_theta if theta is None else theta
                parameters[kind] = values
        else:
            parameters["*"] = flat

    derived = LAYER_TYPE_NAMES.get(defaults_of or "", ())
    if (
        layers_unknown is None
        and layer_types is None
        and model.layer_types is None
        and set(derived) - {"full_attention"}
        and set(parameters) - {"*"}
    ):
        # Its class derives layer types with rope parameters of their own (dots.llm3's) by a
        # rule not read here: which layer is which is not known, though each type can be read.
        # (Derived types that share one set rotate alike: the layers are listed as one type.)
        layers_unknown = (
            f"model_type {_model_type(given)!r} derives its layer types ({', '.join(derived)}) "
            "by a rule not read here: give layer_types to list them"
        )
    rotating = None
    n_layers = len(layer_types) if layer_types is not None else config.get("num_hidden_layers")
    if (
        layers_unknown is None
        and isinstance(n_layers, int)
        and not isinstance(n_layers, bool)
        and n_layers > 0
    ):
        n_layers = _layer_count(n_layers, "config['num_hidden_layers']")
        rotating = tuple(_layer_rotates(config, model, layer_types, i) for i in range(n_layers))
    return _ConfigReading(
        config,
        model,
        head_dim,
        layer_types,
        parameters,
        rotating,
        partial,
        layers_unknown,
        derived,
    )


def _layer_keys_read(model: ModelRope) -> set[str]:
    """The layer-describing keys (:data:`pe_core.rope_models.LAYER_KEYS`) a model's reading
    uses."""
    read = {"layer_types", *(model.layer_types.keys if model.layer_types else ())}
    read |= {legacy for legacy, key in model.renamed.items() if key == "layer_types"}
    if model.rotates == "no_rope_layers":
        read |= {"no_rope_layers", "no_rope_layer_interval"}
    if model.rotates == "not_cross_attention":
        read.add("cross_attention_layers")
    return read


def _why_layers_unknown(
    given: Mapping, model: ModelRope, layer_types, *, listed: bool
) -> str | None:
    """Why the config's layers cannot be listed layer by layer, or None: a layer-describing key
    its model's reading does not use, a class that derives its layer types by a rule not read
    here, a layer type that is neither attention with RoPE nor a layer without it."""
    model_type = _model_type(given) or "this model"
    read = _layer_keys_read(model)
    for key, (kind, whose) in LAYER_KEYS.items():
        if key in read or given.get(key) is None or (listed and kind == "types"):
            continue
        return (
            f"config['{key}'] ({whose}) says which layers "
            + ("are attention" if kind == "types" else "rotate")
            + f", a key not read for model_type {model_type!r}: give layer_types to list them"
        )
    derived = LAYER_TYPE_NAMES.get(_model_type(given) or "", ())
    if not listed and model.layer_types is None and set(derived) - set(ATTENTION_TYPES):
        return (
            f"model_type {model_type!r} derives its layer types ({', '.join(derived)}) by a rule "
            "not read here: give layer_types to list them"
        )
    known = (*ATTENTION_TYPES, *NON_ROTARY_LAYER_TYPES)
    strange = [kind for kind in dict.fromkeys(layer_types or ()) if kind not in known]
    if strange:
        return (
            f"layer type {strange[0]!r} is neither attention with RoPE ("
            + ", ".join(ATTENTION_TYPES)
            + ") nor a layer without it ("
            + ", ".join(NON_ROTARY_LAYER_TYPES)
            + "): which of those layers rotate is not known here"
        )
    return None


def _layer_rotates(config: Mapping, model: ModelRope, layer_types, index: int) -> bool:
    kind = layer_types[index] if layer_types is not None else "full_attention"
    if kind not in ATTENTION_TYPES:
        return False
    if model.rotates == "no_rope_layers":
        flags = config.get("no_rope_layers")
        if isinstance(flags, (list, tuple)) and index < len(flags):
            return bool(flags[index])
        interval = config.get("no_rope_layer_interval", 4)
        return (index + 1) % interval != 0 if isinstance(interval, int) and interval > 0 else True
    if model.rotates == "sliding":
        return kind == "sliding_attention" and config.get("sliding_window") is not None
    if model.rotates == "sliding_or_no_window":
        return config.get("sliding_window") is None or kind == "sliding_attention"
    if model.rotates == "position_embedding_type":
        return config.get("position_embedding_type") == "rope"
    if model.rotates == "not_alibi":
        return not config.get("alibi")
    if model.rotates == "not_cross_attention":
        cross = config.get("cross_attention_layers")
        return index not in set(cross if isinstance(cross, (list, tuple)) else ())
    return True


def _rotating_types(reading: _ConfigReading) -> list[str]:
    """The layer types with RoPE, in order of first appearance (when which layers rotate is
    not known, the attention types the config names)."""
    if reading.rotating is None:
        kinds = dict.fromkeys(reading.layer_types or reading.derived_types)
        return [kind for kind in kinds if kind in ATTENTION_TYPES] or ["full_attention"]
    if reading.layer_types is None:
        return ["full_attention"] if any(reading.rotating) else []
    found: list[str] = []
    for kind, rotates in zip(reading.layer_types, reading.rotating, strict=True):
        if rotates and kind not in found:
            found.append(kind)
    return found


def _layer_head_dim(reading: _ConfigReading, layer_type: str) -> int:
    """The head width of one layer type: transformers 5.24's per_layer_config override of its
    first layer (Gemma 4 saves {"5": {"head_dim": 512}, ...}), else the model's own key for it
    (Gemma 4's global_head_dim), else the config's head_dim."""
    config, model = reading.config, reading.model
    overrides = config.get("per_layer_config")
    if isinstance(overrides, Mapping) and reading.layer_types is not None:
        first = reading.layer_types.index(layer_type) if layer_type in reading.layer_types else -1
        for index, values in overrides.items():
            number = str(index).strip()
            if (
                number.isdigit()
                and len(number) <= 9
                and int(number) == first
                and isinstance(values, Mapping)
                and values.get("head_dim") is not None
            ):
                name = f"config['per_layer_config'][{index!r}]['head_dim']"
                return check_length(values["head_dim"], name)
    key = model.layer_head_dim.get(layer_type)
    if key is not None and config.get(key) is not None:
        return check_length(config[key], f"config['{key}']")
    return reading.head_dim


def _encoding(reading: _ConfigReading, layer_type: str, seq_len) -> RotaryEncoding:
    config, model = reading.config, reading.model
    head_dim = _layer_head_dim(reading, layer_type)
    scaling = reading.parameters_of(layer_type)
    _validate_as_transformers(reading, scaling)
    base = scaling.pop("rope_theta", model.default_theta)
    # Keys that the model's attention reads, not its rotary frequencies (M-RoPE's sections,
    # Llama 4's attention temperature): kept with the parameters.
    kept = {key: scaling.pop(key) for key in _ATTENTION_KEYS if key in scaling}
    for key in model.ignored_keys:  # keys the model's config tells transformers to ignore
        scaling.pop(key, None)
    if scaling.get("rope_type", scaling.get("type")) == "mrope":
        # Qwen2-VL's "type": "mrope" is the default frequencies, in M-RoPE's sections.
        scaling.pop("type", None)
        scaling["rope_type"] = "default"
    variant = ROPE_VARIANTS.get(scaling.get("rope_type", scaling.get("type")) or "default")
    if variant is not None:
        # Keys transformers warned about (above) and no compute function reads: dropped here,
        # so that rope_frequencies does not warn a second time in other words.
        for key in [k for k in scaling if k not in variant.keys and k not in _NOT_SCALING]:
            scaling.pop(key)
    if (
        config.get("original_max_position_embeddings") is not None
        and variant is not None
        and variant.reads_original_length
    ):
        # As Hugging Face: a top-level value (Phi-3) takes priority over the one in rope_scaling.
        scaling["original_max_position_embeddings"] = config["original_max_position_embeddings"]
    # As transformers 5.24's convert_rope_params_to_dict: the rope parameters' own fraction
    # first, then the config's (or its class's default), then the model's rule.
    partial = scaling.pop(
        "partial_rotary_factor",
        config.get("partial_rotary_factor", reading.partial_rotary_factor),
    )
    if model.rotary_dim_key and config.get(model.rotary_dim_key) is not None:
        rotary_dim = check_length(config[model.rotary_dim_key], f"config['{model.rotary_dim_key}']")
        partial = rotary_dim / head_dim
    layout = model.layout
    if model.interleave_key is not None:
        layout = "interleaved" if config.get(model.interleave_key) else "halves"
    try:
        rope = rope_frequencies(
            head_dim,
            base=base,
            scaling=scaling,
            partial_rotary_factor=partial,
            max_position_embeddings=config.get("max_position_embeddings"),
            seq_len=seq_len,
        )
    except InputError as error:
        if "seq_len" in str(error):
            raise
        raise type(error)(f"config: {error}") from None
    softmax_factor = 1.0
    if model.softmax_mscale and rope.rope_type != "default":
        # DeepSeek's yarn_apply_mscale: the softmax scale times mscale**2, with mscale from
        # mscale_all_dim (0 or absent: no change).
        mscale_all_dim = rope.parameters.get("mscale_all_dim") or 0
        factor = rope.parameters.get("factor", 1.0)
        if mscale_all_dim:
            mscale = 1.0 if factor <= 1 else 0.1 * mscale_all_dim * math.log(factor) + 1.0
            softmax_factor = mscale * mscale
    return replace(
        rope,
        layout=layout,
        layer_type=layer_type,
        softmax_factor=softmax_factor,
        parameters={**rope.parameters, **kept},
    )


#: Keys of a rope parameters mapping that are not a scaling variant's own.
_NOT_SCALING = ("rope_type", "type", "rope_theta", "partial_rotary_factor")


def _validate_as_transformers(reading: _ConfigReading, scaling: Mapping) -> None:
    """What transformers 5.24's config validation says of one layer type's rope parameters
    (``RotaryEmbeddingConfigMixin._check_received_keys``): a missing required key is refused,
    as its ``KeyError``; a key its rope_type does not take is warned about in its words,
    unless the model's class tells it to ignore that key (M-RoPE's sections)."""
    rope_type = scaling.get("rope_type", scaling.get("type")) or "default"
    variant = ROPE_VARIANTS.get(rope_type if rope_type != "mrope" else "default")
    if variant is None:
        return  # refused by rope_frequencies, naming the rope types there are
    model_type = _model_type(reading.config) or ""
    ignored = {*IGNORED_ROPE_KEYS.get(model_type, ()), *reading.model.ignored_keys}
    received = set(scaling) - ignored - {"type"}
    if variant.reads_original_length:
        received.add("original_max_position_embeddings")  # standardize_rope_params fills it
    # The keys rope_frequencies needs are refused there; these only by the config's validation.
    missing = [key for key in variant.config_requires if key not in received]
    if missing:
        raise InputError(
            f"config: scaling for rope_type {rope_type!r} needs the key {missing[0]!r}: "
            f"transformers {TRANSFORMERS_VERSION} refuses a config without it (KeyError: Missing "
            f"required keys in `rope_parameters`), though its compute function alone would take "
            "it from the lengths"
        )
    unrecognized = sorted(received - variant.accepted_keys - set(_NOT_SCALING))
    if unrecognized:
        warnings.warn(
            f"Unrecognized keys in `rope_parameters` for 'rope_type'='{rope_type}': "
            "{" + ", ".join(map(repr, unrecognized)) + "}",
            UserWarning,
            stacklevel=4,
        )


def rope_from_config(
    config: Mapping | str | bytes,
    *,
    layer_type: str | None = None,
    seq_len: int | None = None,
) -> RotaryEncoding:
    """The rotary frequencies a Hugging Face model configuration describes.

    Parameters
    ----------
    config : mapping, or str or bytes of JSON
        A ``config.json`` as ``json.load`` gives it, or its text, read as transformers reads
        it: ``rope_parameters`` (flat, or one set per layer type) or ``rope_theta`` plus
        ``rope_scaling`` (``type`` or ``rope_type``); ``qk_rope_head_dim`` (DeepSeek), else
        ``head_dim``, else ``hidden_size // num_attention_heads``; ``partial_rotary_factor``;
        ``max_position_embeddings``; and per ``model_type`` (:data:`MODEL_ROPES`) the legacy
        keys (GPT-NeoX's ``rotary_pct``, Gemma 3's ``rope_local_base_freq``, ModernBERT's
        ``global_rope_theta``...), the model class's defaults for absent keys, the pair layout
        and the layer pattern. A multimodal configuration's ``text_config`` is read when the
        top level has no attention heads. Arrays and objects may nest at most
        :data:`MAX_JSON_DEPTH` (100) levels deep.
    layer_type : str, optional
        transformers' name of the layers wanted ("full_attention", "sliding_attention", ...).
        By default the full-attention layers' encoding, with a ``UserWarning`` when the
        config's layer types have different ones (or the first layer type with RoPE, when
        full-attention layers have none).
    seq_len : int, optional
        As in Hugging Face's functions (dynamic NTK and LongRoPE depend on it).

    Returns
    -------
    RotaryEncoding
        With the model's pair ``layout``.

    Raises
    ------
    InputError
        A value that breaks a rule, naming the key; a ``layer_type`` the config does not have
        or that has no RoPE.

    Examples
    --------
    >>> rope = rope_from_config('{"hidden_size": 4096, "num_attention_heads": 32,'
    ...                         ' "rope_theta": 10000.0, "max_position_embeddings": 4096}')
    >>> rope.rotary_dim, rope.rope_type, rope.layout
    (128, 'default', 'halves')
    >>> pythia = {"model_type": "gpt_neox", "hidden_size": 768, "num_attention_heads": 12,
    ...           "rotary_pct": 0.25, "rotary_emb_base": 10000}
    >>> rope_from_config(pythia).rotary_dim
    16
    """
    if layer_type is not None and not isinstance(layer_type, str):
        raise InputTypeError(f"layer_type must be a string or None, got {describe(layer_type)}")
    reading = _read_config(config)
    with_rope = _rotating_types(reading)
    if not with_rope:
        raise InputError("config: no layer of this model uses RoPE")
    if layer_type is None:
        layer_type = "full_attention" if "full_attention" in with_rope else with_rope[0]
        others = [
            k for k in with_rope if reading.parameters_of(k) != reading.parameters_of(layer_type)
        ]
        if others:
            warnings.warn(
                f"config has layer types with different RoPE ({', '.join(with_rope)}); this is "
                f"the {layer_type} layers' (pass layer_type= for another)",
                UserWarning,
                stacklevel=2,
            )
    elif layer_type not in with_rope:
        present = reading.layer_types or ("full_attention",)
        reason = "has no RoPE in its" if layer_type in present else "has no"
        raise InputError(
            f"layer_type must name layers of the config that use RoPE "
            f"({', '.join(map(repr, with_rope))}); the config {reason} {layer_type!r} layers, "
            f"got layer_type={describe(layer_type)}"
        )
    return _encoding(reading, layer_type, seq_len)


def rope_layers(
    config: Mapping | str | bytes, *, seq_len: int | None = None
) -> list[RotaryEncoding | None]:
    """Each decoder layer's rotary encoding, ``None`` where a layer has none.

    Parameters
    ----------
    config : mapping, or str or bytes of JSON
        As for :func:`rope_from_config`; it must give the number of layers
        (``num_hidden_layers`` or ``layer_types``).
    seq_len : int, optional
        As for :func:`rope_from_config`.

    Returns
    -------
    list of RotaryEncoding or None, one per layer
        Layers of one type share one object. ``None``: no positional encoding in that layer
        (NoPE layers as Llama 4's and SmolLM3's ``no_rope_layers``, EXAONE 4's and Cohere 2's
        global layers, linear-attention and convolution layers).

    Examples
    --------
    >>> config = {"model_type": "smollm3", "head_dim": 128, "num_hidden_layers": 8}
    >>> [rope is not None for rope in rope_layers(config)]
    [True, True, True, False, True, True, True, False]
    """
    reading = _read_config(config)
    if reading.layers_unknown is not None:
        raise InputError(f"config: its layers cannot be listed: {reading.layers_unknown}")
    if reading.rotating is None:
        raise InputError(
            "config needs num_hidden_layers (or layer_types) to list its layers, got neither"
        )
    kinds = reading.layer_types or ("full_attention",) * len(reading.rotating)
    encodings = {kind: _encoding(reading, kind, seq_len) for kind in _rotating_types(reading)}
    return [
        encodings[kind] if rotates else None
        for kind, rotates in zip(kinds, reading.rotating, strict=True)
    ]


def rope_config_essentials(config: Mapping | str | bytes) -> dict:
    """The part of a config.json that sets its RoPE, layer by layer: ``model_type`` and every key
    the reading asks for (with the file's own spelling), nothing else.

    A config.json is mostly about other things (vocabulary, tokens, dtype); this is the short
    config that gives the same encodings, to share or to paste.

    Parameters
    ----------
    config : mapping, or str or bytes of JSON
        As for :func:`rope_from_config`. A multimodal config's text part is returned (where
        RoPE is read).

    Returns
    -------
    dict
        Checked to give the same :func:`rope_layers` (or, without a layer count, the same
        :func:`rope_from_config` for each layer type) as ``config``: where it would not, the
        whole text part is returned.

    Examples
    --------
    >>> config = {"model_type": "llama", "vocab_size": 128256, "hidden_size": 4096,
    ...           "num_attention_heads": 32, "rope_theta": 500000.0, "bos_token_id": 1}
    >>> rope_config_essentials(config)
    {'model_type': 'llama', 'hidden_size': 4096, 'num_attention_heads': 32, 'rope_theta': 500000.0}
    """
    if isinstance(config, (str, bytes, bytearray)):
        config = load_json(config, name="config")
    reading = _read_config(config)
    for kind in _rotating_types(reading):
        _encoding(reading, kind, None)
    original = _text_part(config)[0]
    asked = set(reading.config.asked) | {"model_type"}
    asked |= {legacy for legacy, key in reading.model.renamed.items() if key in asked}
    essentials = {key: value for key, value in original.items() if key in asked}
    if _encodings(essentials) != _encodings(original):
        return dict(original)
    return essentials


def _encodings(config: Mapping) -> tuple:
    """What a config's RoPE is, layer by layer, comparable with ==."""

    def key(rope: RotaryEncoding | None):
        return None if rope is None else (rope.signature, rope.layer_type)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the same warnings for both
        try:
            return ("layers", *map(key, rope_layers(config)))
        except InputError:
            pass
        try:
            reading = _read_config(config)
            kinds = _rotating_types(reading) or ["full_attention"]
            return ("types", *(key(rope_from_config(config, layer_type=k)) for k in kinds))
        except InputError as error:
            return ("error", str(error))


#: Names of top-level keys that set positions or rotary frequencies in some model family: one
#: of these present in a config and not read is listed as unused (a config's other keys, such
#: as vocab_size, are not about positions).
_POSITIONAL_KEY = re.compile(
    r"rope|rotary|theta|position|partial_rotary|layer_types|interleave|yarn"
)


@dataclass(frozen=True)
class ConfigSource:
    """Where one value of a config's RoPE came from.

    Attributes
    ----------
    key : str
        The key, as transformers names it (``rope_parameters.factor`` for a scaling key).
    value : object
        The value used.
    source : str
        "config.json", "config.json: <legacy key>" (a model's own spelling), or "default of
        <model_type>" / "transformers' default" (absent from the file).
    """

    key: str
    value: object
    source: str


@dataclass(frozen=True)
class RopeConfigSources:
    """What :func:`rope_from_config` read from a config, and what it did not.

    Attributes
    ----------
    used : tuple of ConfigSource
        Every value the encoding was built from, with where it came from.
    unused : tuple of str
        Keys present in the file that name positional settings and were not read (a scaling
        key the rope_type does not take, a key of another model family), for this layer type.
    warnings : tuple of str
        What transformers would warn about while reading it (and pe_core did).
    """

    used: tuple[ConfigSource, ...]
    unused: tuple[str, ...]
    warnings: tuple[str, ...]


def rope_config_sources(
    config: Mapping | str | bytes, *, layer_type: str | None = None
) -> RopeConfigSources:
    """Where each value of :func:`rope_from_config`'s answer came from: the file, a model's
    legacy spelling or a default; the positional keys it did not read; its warnings.

    Parameters
    ----------
    config, layer_type
        As for :func:`rope_from_config`.

    Returns
    -------
    RopeConfigSources

    Examples
    --------
    >>> pythia = {"model_type": "gpt_neox", "hidden_size": 768, "num_attention_heads": 12,
    ...           "rotary_pct": 0.25, "rotary_emb_base": 10000, "rope_scaling": None}
    >>> found = rope_config_sources(pythia)
    >>> [(s.key, s.source) for s in found.used if s.key == "rope_theta"]
    [('rope_theta', 'config.json: rotary_emb_base')]
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if isinstance(config, (str, bytes, bytearray)):
            config = load_json(config, name="config")
        rope = rope_from_config(config, layer_type=layer_type)
        reading = _read_config(config)
        if layer_type is None:
            layer_type = rope.layer_type
        _encoding(reading, layer_type, None)  # the keys this layer type's encoding reads
    original = _text_part(config)[0] if isinstance(config, Mapping) else {}
    model = reading.model
    resolved = reading.config
    legacy_of = {key: legacy for legacy, key in model.renamed.items() if legacy in original}
    model_name = original.get("model_type") or "this model"
    used: list[ConfigSource] = []
    for key in sorted(resolved.asked):
        if key in ("text_config", "rope_scaling", "rope_parameters"):
            continue  # read below, key by key
        if key in original:
            source = "config.json"
        elif key in legacy_of:
            source = f"config.json: {legacy_of[key]}"
        elif key in resolved:
            source = f"default of {model_name}"
        else:
            continue  # absent, and no default: not used
        used.append(ConfigSource(key, resolved[key], source))
    # The rotary parameters of this layer type: from rope_parameters (flat or nested) or
    # rope_scaling, the base possibly from the top level or a per-layer-type key.
    given = reading.parameters_of(layer_type)
    where = "rope_parameters" if original.get("rope_parameters") is not None else "rope_scaling"
    nested = isinstance(original.get(where), Mapping) and layer_type in original.get(where, {})
    prefix = f"{where}.{layer_type}" if nested else where
    inside = original.get(where) or {}
    inside = inside.get(layer_type, {}) if nested else inside
    variant = ROPE_VARIANTS.get(rope.rope_type)
    taken = {*(variant.keys if variant else ()), *rope.parameters, *_ATTENTION_KEYS}
    taken |= {"rope_type", "type"}
    # The model class's own rotary parameters, where the config gives none (gpt-oss's YaRN).
    defaulted = {
        where: model.defaults[where]
        for where in ("rope_parameters", "rope_scaling")
        if isinstance(model.defaults.get(where), Mapping) and where not in original
    }
    default_where = next(iter(defaulted), "")
    for key, value in given.items():
        if key == "rope_theta":
            if isinstance(inside, Mapping) and "rope_theta" in inside:
                used.append(ConfigSource(f"{prefix}.rope_theta", value, "config.json"))
            elif not any(s.key in ("rope_theta", *model.renamed.values()) for s in used):
                used.append(ConfigSource("rope_theta", rope.base, f"default of {model_name}"))
            continue
        if key in taken and isinstance(inside, Mapping) and key in inside:
            used.append(ConfigSource(f"{prefix}.{key}", value, "config.json"))
        elif key in taken and key in defaulted.get(default_where, {}):
            used.append(ConfigSource(f"{default_where}.{key}", value, f"default of {model_name}"))
    unused = [
        f"{prefix}.{key}"
        for key in (inside if isinstance(inside, Mapping) else {})
        if key not in taken and key not in ("rope_theta", "partial_rotary_factor")
    ]
    unused += [
        key
        for key in original
        if key not in resolved.asked
        and key not in legacy_of.values()
        and key not in model.renamed
        and _POSITIONAL_KEY.search(key)
        and key not in ("rope_scaling", "rope_parameters", "model_type")
    ]
    messages = tuple(dict.fromkeys(str(w.message) for w in caught))
    return RopeConfigSources(tuple(used), tuple(unused), messages)
