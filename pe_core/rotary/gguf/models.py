"""What llama.cpp does with a GGUF file's RoPE settings, as data: per architecture, the rotation
mode, which layers rotate and with which base, and the loader's defaults for absent keys.

The source is llama.cpp at commit 0c1e57098 (:data:`LLAMA_CPP_VERSION`, the copy vendored in
llama-cpp-python 0.3.36, whose gguf-py is 0.19.0): ``llama_model_rope_type`` and the generic
``load_hparams`` in ``src/llama-model.cpp``, each architecture's ``load_arch_hparams`` and graph
in ``src/models/*.cpp``, the context parameters in ``src/llama-context.cpp`` and the CPU kernel
in ``ggml/src/ggml-cpu/ops.cpp``. :data:`LLAMA_CPP_ARCHS` is read as
:data:`pe_core.MODEL_ROPES` is for transformers: one entry per architecture, no branches on
names elsewhere.

What the loader does for every architecture (``llama_model_base::load_hparams``):

- ``{arch}.rope.freq_base`` absent: 10,000.
- ``{arch}.rope.scaling.type`` absent: "linear"; ``.rope.scaling.factor`` (or the older
  ``.rope.scale_linear``) absent or 0: no scaling (``freq_scale = 1 / factor``).
- ``{arch}.rope.scaling.original_context_length`` absent: ``{arch}.context_length``.
- ``{arch}.rope.dimension_count`` absent: the head width (``embedding_length / head_count``, or
  ``attention.key_length``).
- ``{arch}.rope.scaling.attn_factor`` absent: 1 (a factor on cos and sin).
- At context creation (``llama_context``): ``ext_factor`` is 1 for YaRN, 0 otherwise (the file's
  ``rope.scaling.yarn_ext_factor`` is read by the grok architecture only); YaRN's attention
  factor is ``0.1 ln(factor) + 1`` (or DeepSeek's ratio when ``rope.scaling.yarn_log_multiplier``
  is set), divided by ``1 + 0.1 ln(factor)`` because the kernel multiplies it back, times
  ``rope.scaling.attn_factor``; ``beta_fast`` 32 and ``beta_slow`` 1 unless the architecture
  reads ``.rope.scaling.yarn_beta_fast/slow`` (grok, mistral3). The kernel floors and ceils
  YaRN's correction range always (transformers' ``truncate: false`` is not available).
- LongRoPE: the ``rope_factors_long`` tensor when the context (``n_ctx_seq``, the context size
  given to llama.cpp, not the length of a sequence) exceeds the original context length, else
  ``rope_factors_short``; a ``rope_freqs`` tensor (Llama 3's factors) is used whenever present.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "LLAMA_CPP_ARCHS",
    "LLAMA_CPP_VERSION",
    "NON_ROTARY_ARCHS",
    "UNREAD_KEYS",
    "LlamaCppArch",
    "NopeRule",
    "RopeMode",
    "SwaRule",
]

#: The llama.cpp this table describes.
LLAMA_CPP_VERSION = "llama.cpp 0c1e57098 (vendored in llama-cpp-python 0.3.36, gguf-py 0.19.0)"

#: The loader's defaults for absent keys (``llama_model_base::load_hparams``).
DEFAULT_FREQ_BASE = 10_000.0
#: ``llama_hparams::rope_freq_base_train_swa``'s initial value, kept by architectures that do
#: not copy the full layers' base first (Gemma 3, Gemma 3n, EmbeddingGemma, ModernBERT, PLaMo 3).
DEFAULT_FREQ_BASE_SWA = 10_000.0
#: YaRN's ramp limits when the architecture does not read them from the file.
DEFAULT_BETA_FAST = 32.0
DEFAULT_BETA_SLOW = 1.0


class RopeMode(enum.Enum):
    """ggml's rotation modes (``GGML_ROPE_TYPE_*``): which columns a pair rotates."""

    NORMAL = 0  # columns 2i and 2i + 1 (GPT-J / Meta's original)
    NEOX = 2  # columns i and i + n_rot/2 (GPT-NeoX, Hugging Face's rotate_half)
    MROPE = 8  # NEOX pairs, sections of pairs on time, height, width (Qwen2-VL)
    IMROPE = 40  # M-RoPE with the axes interleaved pair by pair (Qwen3-VL)
    VISION = 24  # 2-D vision RoPE
    NONE = -1  # no RoPE

    @property
    def layout(self) -> str | None:
        """The pair layout in :data:`pe_core.LAYOUTS`'s words (None without RoPE)."""
        if self is RopeMode.NONE:
            return None
        return "interleaved" if self is RopeMode.NORMAL else "halves"


@dataclass(frozen=True)
class SwaRule:
    """Which layers are sliding-window layers, and what RoPE they get.

    Layer ``il`` is a sliding-window layer when ``il % pattern < pattern - 1``
    (``dense_first``: when ``il % pattern != 0``), ``pattern`` being
    ``{arch}.attention.sliding_window_pattern`` or ``default_pattern`` (an array under that key
    lists the layers instead). ``needs_window``: only when ``{arch}.attention.sliding_window`` is
    above 0. ``base``: what an absent ``{arch}.rope.freq_base_swa`` gives, "inherit" (the full
    layers' base) or "default" (10,000); ``scale``: "inherit" (the full layers' scaling) or
    "one" (none). ``own_base``: whether the graph rotates these layers with that base at all
    (False: read but the global base is used). ``plain``: YaRN is switched off on them
    (ext_factor 0, attention factor 1).
    """

    default_pattern: int
    dense_first: bool = False
    needs_window: bool = True
    base: str = "inherit"
    scale: str = "inherit"
    own_base: bool = True
    plain: bool = False

    def is_swa(self, layer: int, pattern: int) -> bool:
        if pattern == 0:
            return True
        if self.dense_first:
            return layer % pattern != 0
        return layer % pattern < pattern - 1


@dataclass(frozen=True)
class NopeRule:
    """Layers without RoPE: layer ``il`` skips it when ``(il + offset) % step == 0``.

    ``only_with_swa``: the rule applies when the file has sliding-window layers (Llama 4 without a
    window rotates every layer); ``swa_only``: instead of a step, only sliding-window layers
    rotate (Cohere 2, EXAONE 4); ``hard_coded``: the step is fixed in llama.cpp's code, not read
    from the file (SmolLM3's 4).
    """

    step: int = 4
    offset: int = 1
    only_with_swa: bool = False
    swa_only: bool = False
    hard_coded: bool = True

    def rotates(self, layer: int, *, is_swa: bool, has_swa: bool) -> bool:
        if self.swa_only:
            return is_swa or not has_swa
        if self.only_with_swa and not has_swa:
            return True
        return (layer + self.offset) % self.step != 0


@dataclass(frozen=True)
class LlamaCppArch:
    """One llama.cpp architecture's RoPE.

    Attributes
    ----------
    name : str
        ``general.architecture``.
    mode : RopeMode
        ``llama_model_rope_type``'s answer; ``mrope_mode`` when ``rope.dimension_sections``
        gives a time and a height section (GLM-4, Hunyuan-VL, Bailing MoE 3).
    rotates : bool
        False where the graph applies no RoPE whatever the mode says (StarCoder, BERT: learned
        absolute positions).
    swa : SwaRule or None
    nope : NopeRule or None
    switch_key : str or None
        A key that switches RoPE off in every layer when false (Granite's
        ``rope.scaling.finetuned``, default true).
    reads : frozenset of str
        Keys beyond the common ones that this architecture reads (``rope.scaling.yarn_*``).
    per_layer_read : bool
        True when the per-layer rules were read in this architecture's own code; False when they
        are the common rules because a search of its code found no per-layer RoPE (a claim about
        its layers is then said with that reservation).
    hf_model_types : tuple of str
        transformers' ``model_type`` values the converter writes as this architecture.
    """

    name: str
    mode: RopeMode
    mrope_mode: RopeMode | None = None
    rotates: bool = True
    swa: SwaRule | None = None
    nope: NopeRule | None = None
    switch_key: str | None = None
    reads: frozenset = frozenset()
    per_layer_read: bool = False
    hf_model_types: tuple[str, ...] = ()


_NORMAL, _NEOX = RopeMode.NORMAL, RopeMode.NEOX

#: ``llama_model_rope_type`` for every architecture of this llama.cpp (generated from its switch
#: by reading the source; 153 architectures).
_MODES = {
    RopeMode.NONE: (
        "arwkv7 bloom clip glm5-next gpt2 gptj jais jamba jina-bert-v2 kimi-k3 kimi-linear mamba "
        "mamba2 mpt nemotron_h nemotron_h_moe refact rwkv6 rwkv6qwen2 rwkv7 t5 t5encoder "
        "wavtokenizer-dec"
    ),
    _NORMAL: (
        "arcee arctic baichuan bailingmoe chameleon chatglm cohere2 cohere2moe command-r deci "
        "deepseek deepseek2 deepseek2-ocr deepseek32 deepseek4 dots3note eagle3 ernie4_5 "
        "ernie4_5-moe glm-dsa granite granite_swa granitehybrid granitemoe graniteswitch hy_v4 "
        "internlm2 llada llama llama-embed llama4 maincoder minicpm mistral3 mistral4 "
        "muse-glimmer nanbeige neo-bert olmo plm pockettts smollm3 starcoder xverse"
    ),
    _NEOX: (
        "afmoe apertus bailingmoe2 bert bitnet codeshell cogvlm dbrx dots1 dream eurobert exaone "
        "exaone-moe exaone4 falcon falcon-h1 gemma gemma-embedding gemma2 gemma3 gemma3n gemma4 "
        "gemma4-assistant gpt-oss gptneox grok grovemoe hrm_text hunyuan-dense hunyuan-moe "
        "hy_v3 jais2 jina-bert-v3 laguna lfm2 lfm2moe llada-moe maple mellum mimo2 minicpm3 "
        "minimax-01 minimax-m2 minimax-m3 modern-bert nemotron nomic-bert nomic-bert-moe olmo2 "
        "olmoe openelm orion pangu-embedded phi2 phi3 phimoe plamo plamo2 plamo3 qwen qwen2 "
        "qwen2moe qwen3 qwen3moe qwen3next rnd1 seed_oss smallthinker spark2_5 stablelm "
        "starcoder2 step35 talkie"
    ),
    RopeMode.MROPE: "qwen2vl paddleocr",
    RopeMode.IMROPE: "qwen35 qwen35moe qwen3tts qwen3vl qwen3vlmoe qwen4exp",
}
#: Modes that depend on the file: (mode with M-RoPE sections, mode without).
_CONDITIONAL = {
    "bailingmoe3": (RopeMode.MROPE, _NORMAL),
    "glm4": (RopeMode.MROPE, _NORMAL),
    "glm4moe": (RopeMode.MROPE, _NEOX),
    "hunyuan_vl": (RopeMode.MROPE, _NEOX),
}
#: Architectures llama.cpp has but whose RoPE depends on more than this table says (a draft
#: model following its target, DeepSeek V4's hyper-connections): refused by name.
_NOT_DESCRIBED = {
    "dflash": "a draft model whose RoPE follows its target model",
}

_YARN_ALL = frozenset(
    {
        "rope.scaling.yarn_ext_factor",
        "rope.scaling.yarn_attn_factor",
        "rope.scaling.yarn_beta_fast",
        "rope.scaling.yarn_beta_slow",
    }
)

#: Per-architecture rules read in the architecture's own code (load_arch_hparams and graph).
_READ = [
    LlamaCppArch("llama", _NORMAL, hf_model_types=("llama", "mistral")),
    LlamaCppArch(
        "llama4",
        _NORMAL,
        swa=SwaRule(4, needs_window=False),
        nope=NopeRule(step=4, offset=1, only_with_swa=True),
        hf_model_types=("llama4", "llama4_text"),
    ),
    LlamaCppArch("smollm3", _NORMAL, nope=NopeRule(step=4, offset=1), hf_model_types=("smollm3",)),
    LlamaCppArch("qwen2", _NEOX, hf_model_types=("qwen2",)),
    LlamaCppArch("qwen2moe", _NEOX, hf_model_types=("qwen2_moe",)),
    LlamaCppArch("qwen3", _NEOX, hf_model_types=("qwen3",)),
    LlamaCppArch("qwen3moe", _NEOX, hf_model_types=("qwen3_moe",)),
    LlamaCppArch("phi3", _NEOX, hf_model_types=("phi3",)),
    LlamaCppArch("phi2", _NEOX, hf_model_types=("phi",)),
    LlamaCppArch("gptneox", _NEOX, hf_model_types=("gpt_neox",)),
    LlamaCppArch("stablelm", _NEOX, hf_model_types=("stablelm",)),
    LlamaCppArch("gemma", _NEOX, hf_model_types=("gemma",)),
    LlamaCppArch("gemma2", _NEOX, swa=SwaRule(2, needs_window=False), hf_model_types=("gemma2",)),
    LlamaCppArch(
        "gemma3",
        _NEOX,
        swa=SwaRule(6, base="default", scale="one"),
        hf_model_types=("gemma3", "gemma3_text"),
    ),
    LlamaCppArch("gemma3n", _NEOX, swa=SwaRule(5, needs_window=False, base="default", scale="one")),
    LlamaCppArch(
        "gemma-embedding",
        _NEOX,
        swa=SwaRule(6, needs_window=False, base="default", scale="one"),
    ),
    LlamaCppArch("gpt-oss", _NEOX, swa=SwaRule(2, needs_window=False), hf_model_types=("gpt_oss",)),
    LlamaCppArch(
        "cohere2",
        _NORMAL,
        swa=SwaRule(4, needs_window=False, own_base=False),
        nope=NopeRule(swa_only=True),
        hf_model_types=("cohere2",),
    ),
    LlamaCppArch(
        "exaone4",
        _NEOX,
        swa=SwaRule(4, own_base=False),
        nope=NopeRule(swa_only=True),
        hf_model_types=("exaone4",),
    ),
    LlamaCppArch(
        "olmo2",
        _NEOX,
        swa=SwaRule(4, scale="one", own_base=False, plain=True),
        hf_model_types=("olmo2", "olmo3"),
    ),
    LlamaCppArch(
        "afmoe",
        _NEOX,
        swa=SwaRule(4),
        nope=NopeRule(step=4, offset=1),
        hf_model_types=("afmoe",),
    ),
    LlamaCppArch(
        "smallthinker",
        _NEOX,
        swa=SwaRule(4, dense_first=True),
        nope=NopeRule(step=4, offset=0, only_with_swa=True),
    ),
    LlamaCppArch("modern-bert", _NEOX, swa=SwaRule(3, dense_first=True, base="default")),
    LlamaCppArch("plamo3", _NEOX, swa=SwaRule(8, base="default", scale="one")),
    LlamaCppArch(
        "laguna",
        _NEOX,
        swa=SwaRule(4, dense_first=True, scale="one", plain=True),
    ),
    LlamaCppArch(
        "mistral3",
        _NORMAL,
        reads=frozenset(
            {
                "rope.scaling.yarn_beta_fast",
                "rope.scaling.yarn_beta_slow",
                "rope.scaling.yarn_log_multiplier",
            }
        ),
        hf_model_types=("mistral3", "ministral3"),
    ),
    LlamaCppArch("grok", _NEOX, reads=_YARN_ALL),
    LlamaCppArch(
        "granite",
        _NORMAL,
        switch_key="rope.scaling.finetuned",
        hf_model_types=("granite",),
    ),
    LlamaCppArch("granitehybrid", _NORMAL, switch_key="rope.scaling.finetuned"),
    LlamaCppArch("graniteswitch", _NORMAL, switch_key="rope.scaling.finetuned"),
    LlamaCppArch("starcoder", _NORMAL, rotates=False),
    LlamaCppArch("bert", _NEOX, rotates=False),
    LlamaCppArch("starcoder2", _NEOX, hf_model_types=("starcoder2",)),
    LlamaCppArch("internlm2", _NORMAL, hf_model_types=("internlm2",)),
]

#: Architectures whose per-layer RoPE code this table does not describe (each has sliding-window
#: or per-layer RoPE code of its own not read here): their global settings are compared, their
#: layers are not claimed.
_LAYERS_UNKNOWN = frozenset(
    [
        "cohere2moe",
        "deepseek2",
        "deepseek32",
        "deepseek4",
        "dots3note",
        "exaone-moe",
        "gemma4",
        "gemma4-assistant",
        "glm-dsa",
        "granite_swa",
        "maple",
        "mellum",
        "mimo2",
        "muse-glimmer",
        "spark2_5",
        "step35",
    ]
)


def _build() -> dict[str, LlamaCppArch]:
    table: dict[str, LlamaCppArch] = {}
    for mode, names in _MODES.items():
        for name in names.split():
            table[name] = LlamaCppArch(name, mode)
    for name, (with_sections, without) in _CONDITIONAL.items():
        table[name] = LlamaCppArch(name, without, mrope_mode=with_sections)
    for arch in _READ:
        if arch.mode is not table[arch.name].mode:  # pragma: no cover - a typo in the table
            raise AssertionError(f"{arch.name}: mode {arch.mode} against {table[arch.name].mode}")
        table[arch.name] = LlamaCppArch(**{**arch.__dict__, "per_layer_read": True})
    return table


#: Every llama.cpp architecture, by ``general.architecture``.
LLAMA_CPP_ARCHS = MappingProxyType(_build())

#: Architectures without RoPE in llama.cpp's graph.
NON_ROTARY_ARCHS = frozenset(
    name for name, arch in LLAMA_CPP_ARCHS.items() if arch.mode is RopeMode.NONE or not arch.rotates
)

#: Keys the converter may write that this llama.cpp reads for no architecture (or only for the
#: ones named), so a value in them changes nothing here (runtimes built on other versions or
#: forks may read them).
UNREAD_KEYS = MappingProxyType(
    {
        "rope.scaling.yarn_ext_factor": ("grok",),
        "rope.scaling.yarn_attn_factor": ("grok",),
        "rope.scaling.yarn_beta_fast": ("grok", "mistral3"),
        "rope.scaling.yarn_beta_slow": ("grok", "mistral3"),
        "rope.scaling.yarn_log_multiplier": ("deepseek2", "deepseek32", "glm-dsa", "mistral3"),
    }
)


def layers_unknown(name: str) -> str | None:
    """Why this table does not describe an architecture's layers (None when it does)."""
    if name in _NOT_DESCRIBED:
        return _NOT_DESCRIBED[name]
    if name in _LAYERS_UNKNOWN:
        return "its per-layer RoPE code is not in this table"
    return None
