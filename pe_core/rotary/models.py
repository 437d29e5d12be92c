"""What Hugging Face transformers knows about each model family's rotary encoding, as data.

Per ``model_type``: the legacy spellings of RoPE keys, the model class's defaults for the keys
that define RoPE, the pair layout, how the layer types follow when a config does not list them,
the rotary parameters of each layer type, and which layers rotate at all. Read by
:func:`pe_core.rope_from_config` and :func:`pe_core.rope_layers`; a model family is one entry
of :data:`MODEL_ROPES` (transformers 5.24's configuration and modeling files are the source of
each).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pe_core.errors import InputTypeError

__all__ = [
    "LAYER_KEYS",
    "MODEL_ROPES",
    "NON_ROTARY_LAYER_TYPES",
    "LayerIndices",
    "LayerPattern",
    "LayerTypeRope",
    "MRopeSections",
    "ModelRope",
    "TemperatureRule",
]

#: Layer types that are attention with RoPE in transformers' ``layer_types`` (``indexed_attention``:
#: DeepSeek V3.2's sparse attention, whose main attention rotates as full attention does;
#: ``attention``: Granite 4.0's spelling); any other type (``linear_attention``, ``conv``,
#: ``mamba``, ...) has no positional encoding of its own.
ATTENTION_TYPES = (
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "indexed_attention",
    "attention",
)


#: Layer types without a rotary embedding of their own: linear attention (Qwen3-Next's
#: Gated DeltaNet, MiniMax's lightning attention, Jamba's and Bamba's Mamba layers as transformers
#: 5 names them), LFM2's short convolutions, Granite 4.0's "mamba" (its older
#: ``layers_block_type``), Nemotron-H's MLP and MoE blocks. A layer type in neither this nor
#: :data:`ATTENTION_TYPES` (Falcon-H1's "hybrid", ...) is not guessed: the layer map is refused.
NON_ROTARY_LAYER_TYPES = ("linear_attention", "conv", "mamba", "mlp", "moe")

#: Keys that say which layers are attention, or which attention layers rotate, in the spellings
#: of every transformers version and of the model authors' own code: key -> ("types": it lists
#: or derives the layer types, superseded by an explicit ``layer_types``; "rotation": it says
#: which layers rotate, whatever their types), and whose key it is. A config that has one its
#: model's reading does not use gets no per-layer map: it would be a guess.
LAYER_KEYS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "layer_types": ("types", "transformers 5"),
        "full_attn_idxs": ("types", "LFM2's attention layers (its first configs)"),
        "attn_layer_indices": ("types", "Bamba's attention layers"),
        "attn_layer_period": ("types", "Jamba's attention period"),
        "attn_layer_offset": ("types", "Jamba's attention offset"),
        "layers_block_type": ("types", "Granite 4.0, Zamba 2, Nemotron-H, RecurrentGemma"),
        "hybrid_override_pattern": ("types", "Nemotron-H's layer pattern"),
        "attn_type_list": ("types", "MiniMax-Text-01's lightning / softmax attention"),
        "block_types": ("types", "RecurrentGemma's recurrent and attention blocks"),
        "hybrid_layer_ids": ("types", "Zamba 2's shared attention blocks"),
        "attention_types": ("types", "GPT-Neo's global and local attention"),
        "linear_attn_config": ("types", "Kimi Linear's linear and full attention layers"),
        "sliding_window_pattern": ("types", "Gemma 2/3, Cohere 2, EXAONE 4"),
        "_sliding_window_pattern": ("types", "Gemma 3 re-saved by transformers 4.5x"),
        "global_attn_every_n_layers": ("types", "ModernBERT, AFMoE"),
        "full_attention_interval": ("types", "Qwen3-Next, Qwen3.5"),
        "layer_group_size": ("types", "Ring/Ling hybrid"),
        "cross_attention_layers": ("rotation", "Mllama's cross-attention layers (no RoPE)"),
        "no_rope_layers": ("rotation", "Llama 4, SmolLM3"),
        "no_rope_layer_interval": ("rotation", "Llama 4, SmolLM3"),
    }
)


def _frozen(mapping: Mapping | None = None) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class LayerPattern:
    """How a model class lists its layer types when the config has no ``layer_types``.

    Layer ``i`` is ``every`` when ``(i + offset) % n == 0`` and ``other`` otherwise, ``n``
    being ``config[key]`` (``default`` when absent; a fixed pattern has no key). A string
    value such as EXAONE 4's ``"LLLG"`` spells the pattern out: ``G`` is ``every``.
    """

    every: str
    other: str
    default: int
    key: str | None = None
    offset: int = 1

    def layer_types(self, config: Mapping, n_layers: int) -> list[str]:
        value = config.get(self.key, self.default) if self.key else self.default
        if isinstance(value, str) and value:
            return [
                self.every if value[i % len(value)] == "G" else self.other for i in range(n_layers)
            ]
        n = int(value) if isinstance(value, int) and value > 0 else self.default
        return [self.every if (i + self.offset) % n == 0 else self.other for i in range(n_layers)]

    @property
    def keys(self) -> tuple[str, ...]:
        """The config keys this rule reads."""
        return (self.key,) if self.key else ()


@dataclass(frozen=True)
class LayerIndices:
    """Layer types from a list of layer indices: layer ``i`` is ``every`` when ``i`` is in
    ``config[key]`` and ``other`` otherwise. Without the key (or with null), every layer is
    ``every`` when ``absent_means_all`` (LFM2: ``list(range(num_hidden_layers))``), else none is
    (Bamba: no attention layer)."""

    every: str
    other: str
    key: str
    absent_means_all: bool = True

    def layer_types(self, config: Mapping, n_layers: int) -> list[str]:
        chosen = config.get(self.key)
        if chosen is None:
            return [self.every if self.absent_means_all else self.other] * n_layers
        if not isinstance(chosen, (list, tuple)) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in chosen
        ):
            raise InputTypeError(
                f"config['{self.key}'] must be a list of layer indices, got {type(chosen).__name__}"
            )
        listed = set(chosen)
        return [self.every if i in listed else self.other for i in range(n_layers)]

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key,)


@dataclass(frozen=True)
class LayerTypeRope:
    """Where one layer type's ``rope_theta`` comes from in a flat (older) config.

    ``theta_key`` is the key read (``None``: always the class default, as Olmo 3's sliding
    layers), ``scaled`` whether the config's ``rope_scaling`` applies to this layer type.
    """

    theta_key: str | None
    default_theta: float
    scaled: bool


@dataclass(frozen=True)
class TemperatureRule:
    """Where a model family reads a position-dependent factor on its queries, applied by its
    attention outside the rotary class: ``1 + beta * ln(1 + floor((p + shift) / length))``.

    ``beta_key`` and ``length_key`` are read from the layer's rope parameters when
    ``in_parameters`` (Ministral 3's ``llama_4_scaling_beta`` over
    ``original_max_position_embeddings``), else from the config (Llama 4's ``attn_scale`` and
    ``floor_scale``); ``enabled_key``, when given, switches it on (Llama 4's
    ``attn_temperature_tuning``); ``layers`` is "rope" (the layers with RoPE) or "nope" (those
    without: Llama 4).
    """

    beta_key: str
    length_key: str
    shift: int
    layers: str
    in_parameters: bool = False
    enabled_key: str | None = None


@dataclass(frozen=True)
class MRopeSections:
    """How a multimodal rotary class shares its pairs among the (temporal, height, width) axes
    when the config has no ``mrope_section``: its modeling file's
    ``config.rope_parameters.get("mrope_section", default)``.

    ``sections`` counts pairs per axis (they sum to ``head_dim / 2``); ``interleaved``: the axes
    take turns pair by pair (Qwen3-VL's ``apply_interleaved_mrope``), else each axis has one
    block of consecutive pairs (Qwen2-VL). :func:`pe_core.mrope_axes` gives the axis of each
    pair.
    """

    sections: tuple[int, int, int]
    interleaved: bool = False


@dataclass(frozen=True)
class ModelRope:
    """One model family's RoPE conventions in transformers.

    Attributes
    ----------
    model_types : tuple of str
        The ``model_type`` values (a multimodal wrapper's and its text model's).
    default_theta : float
        ``rope_theta`` when the config has none (the class's ``default_theta``).
    renamed : mapping
        Legacy key -> the key transformers reads it as (GPT-NeoX's ``rotary_emb_base``).
    defaults : mapping
        The class's defaults for keys that define RoPE, used when the config lacks them.
    layout : {"halves", "interleaved"}
        The pairs the model's ``apply_rotary_pos_emb`` rotates together.
    interleave_key : str or None
        A config flag that chooses interleaved pairs when true (DeepSeek's ``rope_interleave``).
    rotary_dim_key : str or None
        A key giving the rotary width in columns (GPT-J's ``rotary_dim``).
    head_dim_rule : {"qk_rope_head_dim", "head_dim", "qk_sum"}
        Where the rotary class's ``head_dim`` comes from: ``qk_rope_head_dim`` when the config
        has it (DeepSeek's multi-head latent attention), else ``head_dim``, else ``hidden_size //
        num_attention_heads``; "head_dim": never from ``qk_rope_head_dim`` (dots.llm3, whose
        per-layer-type ``partial_rotary_factor`` is of ``head_dim``); "qk_sum":
        ``qk_nope_head_dim + qk_rope_head_dim``, with ``partial_rotary_factor`` defaulting to
        ``qk_rope_head_dim`` over it (Mistral 4).
    ignored_keys : tuple of str
        Rope parameters the model's config saves but tells transformers not to validate or
        use (Mistral 4's copy of ``max_position_embeddings``): not read, not warned about
        (:func:`pe_core.rope_config_sources` still lists them as unused).
    text_key : str
        Where a multimodal wrapper keeps its language model's config (InternVL's remote-code
        ``llm_config``; ``text_config`` for transformers' own).
    layer_head_dim : mapping of str to str
        A layer type whose heads have a width of their own: the key that gives it, its class
        default in ``defaults`` (Gemma 4's full-attention layers: ``global_head_dim``, 512). A
        ``per_layer_config`` override (transformers 5.24 saves one per layer) comes first.
    stand_in : str or None
        For a remote-code model transformers has no class for, the ``model_type`` whose
        transformers classes read its config and compute its rotary embedding as its own code
        does (InternLM2's modeling file copies Llama's rotary classes: "llama").
    layer_types : LayerPattern, LayerIndices or None
        How ``layer_types`` follows when the config does not list them.
    per_layer_type : mapping of str to LayerTypeRope
        The rotary parameters of each layer type in a flat config; empty: every layer type
        shares the config's one set.
    softmax_mscale : bool
        The attention multiplies its softmax scale by ``mscale**2``, with YaRN's
        ``mscale = 0.1 * mscale_all_dim * ln(factor) + 1`` (DeepSeek V2/V3's
        ``yarn_apply_mscale``), outside the rotary class.
    rotates : {"attention", "no_rope_layers", "sliding", "sliding_or_no_window", \
"position_embedding_type", "not_alibi", "not_cross_attention"}
        Which layers apply RoPE: every attention layer; those with a true
        ``no_rope_layers[i]`` (its default: all but every ``no_rope_layer_interval``-th); the
        sliding-window layers, none without a window (Cohere 2); the sliding-window layers,
        all without a window (EXAONE 4); every attention layer when
        ``position_embedding_type`` is "rope", none otherwise (Granite 4.0); every attention
        layer unless ``alibi`` is true (Falcon); every layer not in ``cross_attention_layers``
        (Mllama's text model: ``defaults`` gives the class's list).
    flat_unread : str or None
        Why one flat set of rope parameters (``rope_scaling``, or a ``rope_parameters`` not per
        layer type) is not read for this model, which then takes its layer types' own from
        elsewhere (dots.llm3's per_layer_config): such a config is refused with this reason.
    mrope : MRopeSections or None
        A multimodal model's default split of the rotary pairs among its position axes.
    unread : str or None
        Why pe_core does not read this model's RoPE (a rotation, layer rule or width it has no
        form for): its configs are refused with this reason, not read into a wrong answer.
    """

    model_types: tuple[str, ...]
    default_theta: float = 10_000.0
    renamed: Mapping[str, str] = field(default_factory=_frozen)
    defaults: Mapping[str, object] = field(default_factory=_frozen)
    layout: str = "halves"
    interleave_key: str | None = None
    rotary_dim_key: str | None = None
    head_dim_rule: str = "qk_rope_head_dim"
    text_key: str = "text_config"
    ignored_keys: tuple[str, ...] = ()
    layer_head_dim: Mapping[str, str] = field(default_factory=_frozen)
    stand_in: str | None = None
    layer_types: LayerPattern | LayerIndices | None = None
    per_layer_type: Mapping[str, LayerTypeRope] = field(default_factory=_frozen)
    softmax_mscale: bool = False
    rotates: str = "attention"
    temperature: TemperatureRule | None = None
    mrope: MRopeSections | None = None
    flat_unread: str | None = None
    unread: str | None = None


_SLIDING_EVERY = "full_attention", "sliding_attention"
#: gpt-oss's YaRN (its class defaults; OpenAI's privacy filter reuses it).
_GPT_OSS_YARN = _frozen(
    {
        "rope_type": "yarn",
        "factor": 32.0,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "truncate": False,
        "original_max_position_embeddings": 4096,
    }
)
#: Mistral's Llama 4 style query scaling (Ministral 3, Mistral 4): beta and the original length
#: read from the rope parameters, from position p itself, on every rotary layer.
_MISTRAL_QUERY_SCALING = TemperatureRule(
    "llama_4_scaling_beta",
    "original_max_position_embeddings",
    shift=0,
    layers="rope",
    in_parameters=True,
)
#: DeepSeek V3.2-style configs: every layer is sparse (indexed) attention.
_ALL_INDEXED = LayerPattern("indexed_attention", "indexed_attention", default=1)

_ENTRIES = (
    # GPT-NeoX / Pythia: configuration_gpt_neox.py reads rotary_emb_base and rotary_pct (0.25).
    ModelRope(
        ("gpt_neox",),
        renamed=_frozen({"rotary_emb_base": "rope_theta", "rotary_pct": "partial_rotary_factor"}),
        defaults=_frozen({"partial_rotary_factor": 0.25}),
    ),
    # GPT-J and CodeGen: rotary_dim columns, rotate_every_two (interleaved pairs).
    ModelRope(
        ("gptj", "codegen"),
        layout="interleaved",
        rotary_dim_key="rotary_dim",
        renamed=_frozen(
            {
                "n_embd": "hidden_size",
                "n_head": "num_attention_heads",
                "n_layer": "num_hidden_layers",
                "n_positions": "max_position_embeddings",
            }
        ),
        defaults=_frozen({"rotary_dim": 64}),
    ),
    # Cohere (Command-R, Aya): repeat_interleave pairs; class default theta 500,000.
    ModelRope(("cohere",), default_theta=500_000.0, layout="interleaved"),
    # Cohere 2: interleaved pairs, RoPE on the sliding-window layers only (3 of every 4).
    ModelRope(
        ("cohere2",),
        layout="interleaved",
        layer_types=LayerPattern(*_SLIDING_EVERY, default=4, key="sliding_window_pattern"),
        rotates="sliding",
    ),
    # GLM and GLM-4: half of each head rotates, interleaved.
    ModelRope(
        ("glm", "glm4"), layout="interleaved", defaults=_frozen({"partial_rotary_factor": 0.5})
    ),
    # DeepSeek V2/V3 and the models built on their attention (A.X K1, GLM-4.7-Flash's
    # glm4_moe_lite, Youtu-LLM): qk_rope_head_dim columns; rope_interleave (default true) pairs
    # them; yarn_apply_mscale.
    ModelRope(
        ("deepseek_v3", "deepseek_v2", "axk1", "glm4_moe_lite", "youtu"),
        interleave_key="rope_interleave",
        defaults=_frozen({"rope_interleave": True}),
        softmax_mscale=True,
    ),
    # DeepSeek V3.2's sparse attention (indexed_attention layers) and its followers (GLM-5's
    # glm_moe_dsa, A.X K2), LongCat-Flash and Ring/Ling hybrid (bailing_hybrid): MLA rotated
    # in adjacent pairs whatever rope_interleave says (apply_rotary_pos_emb_interleave,
    # unconditional); yarn_apply_mscale. Their indexers' own rotation of index_head_dim
    # columns is not modelled.
    ModelRope(
        ("deepseek_v32", "glm_moe_dsa", "axk2"),
        layout="interleaved",
        layer_types=_ALL_INDEXED,
        softmax_mscale=True,
    ),
    ModelRope(("longcat_flash",), layout="interleaved", softmax_mscale=True),
    ModelRope(
        ("bailing_hybrid",),
        default_theta=6_000_000.0,
        layout="interleaved",
        layer_types=LayerPattern(
            "full_attention", "linear_attention", default=6, key="layer_group_size"
        ),
        softmax_mscale=True,
    ),
    # HY V4 (Hunyuan): the same sparse MLA, rotated in halves ("Non-interleave RoPE"); its
    # vision-language model's text attention pairs adjacent columns (its rotate_half).
    ModelRope(("hy_v4",), layer_types=_ALL_INDEXED, softmax_mscale=True),
    ModelRope(
        ("hy_v4_vl", "hy_v4_vl_text"),
        layout="interleaved",
        layer_types=_ALL_INDEXED,
        softmax_mscale=True,
    ),
    # Qwen4-exp: 3 linear-attention layers to 1 sparse (indexed) attention layer.
    ModelRope(
        ("qwen4_exp", "qwen4_exp_text"),
        layer_types=LayerPattern(
            "indexed_attention", "linear_attention", default=4, key="full_attention_interval"
        ),
    ),
    # Mistral 4 (Mistral Small 4): MLA whose head_dim is qk_nope_head_dim + qk_rope_head_dim,
    # rotated on its last qk_rope_head_dim columns (partial_rotary_factor); rope_interleave;
    # YaRN x128 by default; yarn_apply_mscale; Llama 4 style query scaling (modeling_mistral4.py).
    ModelRope(
        ("mistral4",),
        head_dim_rule="qk_sum",
        ignored_keys=("max_position_embeddings",),
        interleave_key="rope_interleave",
        defaults=_frozen(
            {
                "rope_interleave": True,
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "num_hidden_layers": 36,
                "qk_rope_head_dim": 64,
                "qk_nope_head_dim": 64,
                "max_position_embeddings": 1_048_576,
                "rope_parameters": {
                    "type": "yarn",
                    "rope_theta": 10_000.0,
                    "factor": 128.0,
                    "original_max_position_embeddings": 8192,
                    "beta_fast": 32.0,
                    "beta_slow": 1.0,
                    "mscale_all_dim": 1.0,
                    "mscale": 1.0,
                    "llama_4_scaling_beta": 0.1,
                },
            }
        ),
        softmax_mscale=True,
        temperature=_MISTRAL_QUERY_SCALING,
    ),
    # Mistral Large 4: sparse MLA (head_dim = qk_rope_head_dim) in adjacent pairs, no RoPE on
    # every 4th layer (no_rope_layers); its learned per-head log-position query scaling is
    # weights, not config, and not shown.
    ModelRope(
        ("mistral_large4", "mistral_large4_text"),
        layout="interleaved",
        defaults=_frozen(
            {
                "max_position_embeddings": 1_048_576,
                "rope_parameters": {
                    "rope_type": "yarn",
                    "rope_theta": 10_000.0,
                    "factor": 2048.0,
                    "original_max_position_embeddings": 512,
                    "beta_fast": 32.0,
                    "beta_slow": 1.0,
                    "attention_factor": 1.0,
                },
            }
        ),
        layer_types=_ALL_INDEXED,
        rotates="no_rope_layers",
        softmax_mscale=True,
    ),
    # dots.llm3 (dots3_note): per-layer-type partial_rotary_factor of head_dim (256), not of
    # qk_rope_head_dim; adjacent pairs (apply_rotary_pos_emb_interleave, unconditional).
    ModelRope(
        ("dots3_note", "dots3_note_text"),
        head_dim_rule="head_dim",
        layout="interleaved",
        defaults=_frozen(
            {
                "rope_parameters": {
                    "indexed_attention": {
                        "rope_type": "default",
                        "rope_theta": 80_000_000.0,
                        "partial_rotary_factor": 0.25,
                    },
                    "sliding_attention": {
                        "rope_type": "default",
                        "rope_theta": 50_000.0,
                        "partial_rotary_factor": 0.25,
                    },
                }
            }
        ),
        flat_unread="with one flat set of rope parameters, transformers gives each layer type "
        "the rotary fraction of its per_layer_config heads, which is not read here",
    ),
    # Models whose rotate_half pairs adjacent columns (x[..., ::2], x[..., 1::2]).
    ModelRope(("ernie4_5", "ernie4_5_moe"), default_theta=500_000.0, layout="interleaved"),
    ModelRope(("helium",), default_theta=100_000.0, layout="interleaved"),
    ModelRope(
        ("blt_global_transformer", "blt_local_decoder", "blt_local_encoder"),
        default_theta=500_000.0,
        layout="interleaved",
    ),
    ModelRope(("blt_patcher",), layout="interleaved"),
    ModelRope(
        ("moonshine_streaming",),
        layout="interleaved",
        # Its 0.8 of a head is in its class's default rope parameters (rotary.classes): a config
        # with a rope dict of its own rotates the whole head, as transformers reads it.
    ),
    # Perception Encoder audio / video encoders: a 2x2 rotation of each adjacent pair
    # (apply_rotary_pos_emb reshapes the head to (..., -1, 1, 2)); base 20,000.
    ModelRope(
        ("pe_audio_encoder", "pe_video_encoder", "pe_audio_video_encoder"),
        default_theta=20_000.0,
        layout="interleaved",
    ),
    # OpenAI's privacy filter: gpt-oss's YaRN, applied to adjacent pairs (_apply_rotary_emb).
    ModelRope(
        ("openai_privacy_filter",),
        default_theta=150_000.0,
        layout="interleaved",
        defaults=_frozen(
            {
                "rope_scaling": _GPT_OSS_YARN,
            }
        ),
    ),
    # GLM-4.5 (glm4_moe): half of each head rotates, in halves (unlike GLM-4's pairs).
    ModelRope(("glm4_moe",), defaults=_frozen({"partial_rotary_factor": 0.5})),
    # JetMoE: the head width is kv_channels (transformers' attribute_map head_dim).
    ModelRope(
        ("jetmoe",),
        renamed=_frozen({"kv_channels": "head_dim"}),
        defaults=_frozen({"head_dim": 128}),
    ),
    # InternLM2 / InternLM2.5 (remote code, configuration_internlm2.py): rope_scaling
    # {"type": "linear" | "dynamic", "factor"}, read as transformers' linear and dynamic.
    ModelRope(
        ("internlm2",),
        stand_in="llama",
        defaults=_frozen(
            {
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "num_hidden_layers": 32,
                "max_position_embeddings": 2048,
            }
        ),
    ),
    # Gemma 4 (and the models built on its text model): full-attention layers have heads of
    # global_head_dim (512) columns, a quarter rotating ("proportional": the rest at zero
    # frequency); sliding layers head_dim, base 10,000; 5 sliding : 1 full.
    ModelRope(
        (
            "gemma4",
            "gemma4_text",
            "gemma4_unified",
            "gemma4_unified_text",
            "diffusion_gemma",
            "diffusion_gemma_text",
            "embedding_gemma2",
            "embedding_gemma2_text",
        ),
        defaults=_frozen(
            {
                "global_head_dim": 512,
                "rope_parameters": {
                    "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
                    "full_attention": {
                        "rope_type": "proportional",
                        "partial_rotary_factor": 0.25,
                        "rope_theta": 1_000_000.0,
                    },
                },
            }
        ),
        layer_types=LayerPattern(*_SLIDING_EVERY, default=6, key="sliding_window_pattern"),
        layer_head_dim=_frozen({"full_attention": "global_head_dim"}),
    ),
    # Granite 4.0 (granitemoehybrid): mamba and attention layers (its first configs'
    # layers_block_type, transformers' attribute_map for layer_types); RoPE only when
    # position_embedding_type is "rope" (the class default, None, and the H models' "nope":
    # none).
    ModelRope(
        ("granitemoehybrid",),
        renamed=_frozen({"layers_block_type": "layer_types"}),
        rotates="position_embedding_type",
    ),
    # Bamba: Mamba 2 layers and attention layers at attn_layer_indices (none without it).
    ModelRope(
        ("bamba",),
        layer_types=LayerIndices(
            "full_attention", "linear_attention", key="attn_layer_indices", absent_means_all=False
        ),
    ),
    # Falcon: RoPE unless the config asks for ALiBi (Falcon-RW's alibi: true).
    ModelRope(("falcon",), rotates="not_alibi"),
    # Mllama (Llama 3.2 Vision): its text model's cross_attention_layers attend to the image
    # without RoPE; the others rotate.
    ModelRope(
        ("mllama", "mllama_text_model"),
        defaults=_frozen({"cross_attention_layers": (3, 8, 13, 18, 23, 28, 33, 38)}),
        rotates="not_cross_attention",
    ),
    # Encoder-decoders: the decoder's config (transformers' get_text_config(decoder=True)).
    ModelRope(("t5gemma",), text_key="decoder"),
    # T5Gemma 2: Gemma 3's 5 sliding : 1 full layers, each type its own base.
    ModelRope(
        ("t5gemma2", "t5gemma2_decoder", "t5gemma2_encoder", "t5gemma2_text"),
        text_key="decoder",
        layer_types=LayerPattern(*_SLIDING_EVERY, default=6, key="sliding_window_pattern"),
        per_layer_type=_frozen(
            {
                "full_attention": LayerTypeRope("rope_theta", 1_000_000.0, scaled=True),
                "sliding_attention": LayerTypeRope("rope_local_base_freq", 10_000.0, scaled=False),
            }
        ),
    ),
    ModelRope(("dia",), text_key="decoder_config"),
    # Moonshine: the decoder's heads and layers (encoder_* / decoder_* keys); 0.9 of a head
    # rotates, in adjacent pairs (its rotate_half).
    ModelRope(
        ("moonshine",),
        layout="interleaved",
        renamed=_frozen(
            {
                "decoder_num_attention_heads": "num_attention_heads",
                "decoder_num_hidden_layers": "num_hidden_layers",
            }
        ),
        defaults=_frozen(
            {
                "hidden_size": 288,
                "num_attention_heads": 8,
                "num_hidden_layers": 6,
                "max_position_embeddings": 512,
                "partial_rotary_factor": 0.9,
            }
        ),
    ),
    # Qwen2.5-Omni, Qwen3-Omni: the thinker's config, then its text_config.
    ModelRope(("qwen2_5_omni", "qwen3_omni_moe"), text_key="thinker_config"),
    # InternVL 1.5-3.5 (remote code, configuration_internvl_chat.py): the language model's config
    # is llm_config (InternLM2, Qwen2, Llama, Phi-3, ... by its architectures).
    ModelRope(("internvl_chat",), text_key="llm_config"),
    # Llama 4: pairs of adjacent columns (view_as_complex); no RoPE on every 4th layer, whose
    # queries modeling_llama4.py scales by log1p(floor((p + 1) / floor_scale)) * attn_scale + 1.
    ModelRope(
        ("llama4", "llama4_text"),
        default_theta=500_000.0,
        defaults=_frozen({"attn_temperature_tuning": True, "floor_scale": 8192, "attn_scale": 0.1}),
        layout="interleaved",
        rotates="no_rope_layers",
        temperature=TemperatureRule(
            "attn_scale",
            "floor_scale",
            shift=1,
            layers="nope",
            enabled_key="attn_temperature_tuning",
        ),
    ),
    # Ministral 3 (Devstral 2, Mistral 3's text model): YaRN by default; modeling_ministral3.py
    # scales the queries by 1 + beta * log(1 + floor(p / original_max_position_embeddings)).
    ModelRope(
        ("ministral3",),
        # Its class's default_theta is 10,000 (a config with a rope dict and no base); its default
        # rope parameters below carry 1e6.
        defaults=_frozen(
            {
                "rope_parameters": {
                    "type": "yarn",
                    "rope_theta": 1_000_000.0,
                    "factor": 16.0,
                    "original_max_position_embeddings": 16384,
                    "beta_fast": 32.0,
                    "beta_slow": 1.0,
                    "mscale_all_dim": 1.0,
                    "mscale": 1.0,
                    "llama_4_scaling_beta": 0.1,
                }
            }
        ),
        temperature=_MISTRAL_QUERY_SCALING,
    ),
    # SmolLM3: no RoPE on every 4th layer (no_rope_layers).
    ModelRope(("smollm3",), default_theta=2_000_000.0, rotates="no_rope_layers"),
    # EXAONE 4: RoPE on sliding layers only when there is a window (global NoPE).
    ModelRope(
        ("exaone4",),
        layer_types=LayerPattern(*_SLIDING_EVERY, default=4, key="sliding_window_pattern"),
        rotates="sliding_or_no_window",
    ),
    # ModernBERT: global layers base 160,000 (global_rope_theta), local 10,000.
    ModelRope(
        ("modernbert",),
        defaults=_frozen(
            {
                "hidden_size": 768,
                "num_attention_heads": 12,
                "num_hidden_layers": 22,
                "max_position_embeddings": 8192,
            }
        ),
        layer_types=LayerPattern(
            *_SLIDING_EVERY, default=3, key="global_attn_every_n_layers", offset=0
        ),
        per_layer_type=_frozen(
            {
                "full_attention": LayerTypeRope("global_rope_theta", 160_000.0, scaled=True),
                "sliding_attention": LayerTypeRope("local_rope_theta", 10_000.0, scaled=True),
            }
        ),
    ),
    # ModernBERT decoder: ModernBERT's layers and bases; rope_scaling on both layer types.
    ModelRope(
        ("modernbert-decoder",),
        layer_types=LayerPattern(
            *_SLIDING_EVERY, default=3, key="global_attn_every_n_layers", offset=0
        ),
        per_layer_type=_frozen(
            {
                "full_attention": LayerTypeRope("global_rope_theta", 160_000.0, scaled=True),
                "sliding_attention": LayerTypeRope("local_rope_theta", 10_000.0, scaled=True),
            }
        ),
    ),
    # Gemma 3n: every 5th layer full (rope_theta, 1e6, with rope_scaling), the others sliding
    # (rope_local_base_freq, 10,000, unscaled).
    ModelRope(
        ("gemma3n", "gemma3n_text"),
        layer_types=LayerPattern("full_attention", "sliding_attention", default=5),
        per_layer_type=_frozen(
            {
                "full_attention": LayerTypeRope("rope_theta", 1_000_000.0, scaled=True),
                "sliding_attention": LayerTypeRope("rope_local_base_freq", 10_000.0, scaled=False),
            }
        ),
    ),
    # Gemma 2: sliding and full layers alternate, one RoPE for both.
    ModelRope(("gemma2",), layer_types=LayerPattern(*_SLIDING_EVERY, default=2)),
    # Gemma 3: global layers rope_theta (1e6) with rope_scaling, sliding layers
    # rope_local_base_freq (10,000) unscaled; 5 sliding : 1 full.
    ModelRope(
        ("gemma3", "gemma3_text"),
        default_theta=1_000_000.0,
        defaults=_frozen(
            {
                "head_dim": 256,
                "hidden_size": 2304,
                "num_attention_heads": 8,
                "num_hidden_layers": 26,
                "max_position_embeddings": 131_072,
            }
        ),
        layer_types=LayerPattern(*_SLIDING_EVERY, default=6, key="sliding_window_pattern"),
        per_layer_type=_frozen(
            {
                "full_attention": LayerTypeRope("rope_theta", 1_000_000.0, scaled=True),
                "sliding_attention": LayerTypeRope("rope_local_base_freq", 10_000.0, scaled=False),
            }
        ),
    ),
    # Olmo 3: rope_scaling on full layers only; sliding layers always take the class default
    # (transformers pops rope_theta for the full layers first).
    ModelRope(
        ("olmo3",),
        default_theta=500_000.0,
        layer_types=LayerPattern(*_SLIDING_EVERY, default=4),
        per_layer_type=_frozen(
            {
                "full_attention": LayerTypeRope("rope_theta", 500_000.0, scaled=True),
                "sliding_attention": LayerTypeRope(None, 500_000.0, scaled=False),
            }
        ),
    ),
    # gpt-oss: sliding and full layers alternate; one YaRN for both.
    ModelRope(
        ("gpt_oss",),
        default_theta=150_000.0,
        defaults=_frozen(
            {
                "head_dim": 64,
                "hidden_size": 2880,
                "num_attention_heads": 64,
                "num_hidden_layers": 36,
                "max_position_embeddings": 131_072,
                "rope_scaling": _GPT_OSS_YARN,
            }
        ),
        layer_types=LayerPattern(*_SLIDING_EVERY, default=2),
    ),
    # Qwen3-Next, Qwen3.5: 3 linear-attention layers (no RoPE) to 1 full; a quarter rotates.
    ModelRope(
        ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"),
        defaults=_frozen({"partial_rotary_factor": 0.25}),
        layer_types=LayerPattern(
            "full_attention", "linear_attention", default=4, key="full_attention_interval"
        ),
    ),
    # LFM2: convolution layers (no RoPE) and a few full-attention layers, listed as
    # layer_types or, in its first configs (LFM2-1.2B), as the indices full_attn_idxs.
    ModelRope(
        ("lfm2",),
        default_theta=1_000_000.0,
        layer_types=LayerIndices("full_attention", "conv", key="full_attn_idxs"),
    ),
    # Qwen2-VL, Qwen2.5-VL: "type": "mrope" is the default frequencies plus M-RoPE sections.
    ModelRope(
        ("qwen2_vl", "qwen2_vl_text", "qwen2_5_vl", "qwen2_5_vl_text"),
        default_theta=1_000_000.0,
        mrope=MRopeSections((16, 24, 24)),
    ),
    ModelRope(
        ("qwen3_vl", "qwen3_vl_text"),
        default_theta=500_000.0,
        mrope=MRopeSections((24, 20, 20), interleaved=True),
    ),
    # Read differently by transformers 5.24 than any entry here can say (found by
    # benchmarks/hf_model_types.py): refused with the reason rather than misread.
    ModelRope(
        ("nanochat",),
        unread="its rotate_half is cat(x2, -x1), a rotation by minus the angle, which no pair "
        "layout here describes",
    ),
    ModelRope(
        ("cohere2_moe",),
        unread="its dense first layers use RoPE whatever their layer type, a layer rule not "
        "read here",
    ),
    ModelRope(
        ("zamba2",),
        unread="its attention heads are 2 * hidden_size / num_attention_heads wide and its "
        "shared hybrid blocks rotate only with use_mem_rope, rules not read here",
    ),
    ModelRope(
        ("zaya",),
        unread="its 'hybrid' layers nest their own rope parameters, a layout not read here",
    ),
    ModelRope(
        ("deepseek_v4",),
        unread="its compressed-attention layers rotate with a second set of frequencies "
        "(compress_rope_theta), which is not read here",
    ),
    ModelRope(
        ("ernie4_5_vl_moe", "ernie4_5_vl_moe_text"),
        unread="its rotary frequencies are allotted to three position axes in its own way, "
        "which is not read here",
    ),
    ModelRope(
        ("musicflamingo",),
        unread="its top-level head_dim belongs to the audio model, not to the language model's "
        "rotary embedding",
    ),
    ModelRope(
        ("unlimited_ocr", "unlimited_ocr_text"),
        unread="its 'reference_sliding_attention' layer type is not read here",
    ),
    ModelRope(("mlcd", "mlcd_vision_model"), unread="its RoPE is 2-D (axial) vision RoPE"),
    ModelRope(
        ("esm",),
        unread="its attention rotates only with position_embedding_type 'rotary' (absolute by "
        "default), in a rotary class of its own that takes no rope scaling",
    ),
    ModelRope(
        ("hrm_text",),
        unread="its num_hidden_layers is rewritten into stacks and cycles (H_cycles, L_cycles), "
        "a layer count not read here",
    ),
    ModelRope(
        ("dbrx",),
        unread="transformers reads neither its d_model and n_heads nor its "
        "attn_config.rope_theta (500,000) as the rotary embedding's",
    ),
)

#: ``model_type`` -> :class:`ModelRope`; a model type not listed reads as Llama does.
MODEL_ROPES: Mapping[str, ModelRope] = _frozen(
    {model_type: entry for entry in _ENTRIES for model_type in entry.model_types}
)

#: The conventions of every model type not in :data:`MODEL_ROPES` (Llama, Mistral, Qwen2, ...).
GENERIC = ModelRope(("*",))
