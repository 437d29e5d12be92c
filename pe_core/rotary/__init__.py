"""The rotary wing: RoPE and everything around it. The encoding and its scaling variants
(transformers' ``ROPE_INIT_FUNCTIONS`` as data), what transformers knows per ``model_type``, a
config.json read layer by layer, scores against the offset, angle errors in float32 and a
model's dtype (with torch's own float32 arithmetic), the attention temperature beside RoPE,
multimodal M-RoPE axes, and the identification of a cache, ``inv_freq`` or rotated vectors
with its bug catalogue; and GGUF, llama.cpp's format: what llama.cpp does with a file's RoPE
and whether that is what its config.json says (:mod:`pe_core.rotary.gguf`).

One module a topic; this front lists the wing's public names (all of them are also in
:mod:`pe_core`). Other wings import this front, never the modules behind it.
"""

from pe_core.rotary.bugs import ROPE_BUGS, Finding, RopeBug
from pe_core.rotary.config import (
    ConfigSource,
    RopeConfigSources,
    rope_config_essentials,
    rope_config_sources,
    rope_from_config,
    rope_layers,
)
from pe_core.rotary.encoding import (
    LAYOUTS,
    ROPE_TYPES,
    RotaryEncoding,
    apply_rope,
    rope_cos_sin,
    rope_frequencies,
    rope_permutation,
    yarn_correction_range,
)
from pe_core.rotary.gguf import (
    LLAMA_CPP_ARCHS,
    LLAMA_CPP_VERSION,
    GgufCheck,
    GgufFinding,
    GgufMetadata,
    LlamaCppArch,
    LlamaCppLayer,
    check_gguf,
    llama_cpp_angles,
    llama_cpp_cos_sin,
    llama_cpp_layers,
    parse_gguf_dump,
    read_gguf,
    read_gguf_bytes,
)
from pe_core.rotary.identify import (
    Departure,
    RopeArithmetic,
    RopeIdentification,
    identify_rope,
    rope_cache_from_vectors,
)
from pe_core.rotary.models import MODEL_ROPES, ModelRope
from pe_core.rotary.mrope import (
    axial_rope_frequencies,
    mrope_axes,
    mrope_position_ids,
    multi_axis_angles,
)
from pe_core.rotary.precision import (
    MODEL_DTYPES,
    AngleErrorCrossing,
    first_angle_error_above,
    inv_freq_float32_ulps,
    merged_position_ids,
    rope_angle_errors,
    transformers_angle_errors,
)
from pe_core.rotary.scores import rope_decay_bound, rope_scores
from pe_core.rotary.temperature import QueryTemperature, rope_query_temperature
from pe_core.rotary.variants import ROPE_VARIANTS, RopeVariant

__all__ = [
    "LAYOUTS",
    "LLAMA_CPP_ARCHS",
    "LLAMA_CPP_VERSION",
    "MODEL_DTYPES",
    "MODEL_ROPES",
    "ROPE_BUGS",
    "ROPE_TYPES",
    "ROPE_VARIANTS",
    "AngleErrorCrossing",
    "ConfigSource",
    "Departure",
    "Finding",
    "GgufCheck",
    "GgufFinding",
    "GgufMetadata",
    "LlamaCppArch",
    "LlamaCppLayer",
    "ModelRope",
    "QueryTemperature",
    "RopeArithmetic",
    "RopeBug",
    "RopeConfigSources",
    "RopeIdentification",
    "RopeVariant",
    "RotaryEncoding",
    "apply_rope",
    "axial_rope_frequencies",
    "check_gguf",
    "first_angle_error_above",
    "identify_rope",
    "inv_freq_float32_ulps",
    "llama_cpp_angles",
    "llama_cpp_cos_sin",
    "llama_cpp_layers",
    "merged_position_ids",
    "mrope_axes",
    "mrope_position_ids",
    "multi_axis_angles",
    "parse_gguf_dump",
    "read_gguf",
    "read_gguf_bytes",
    "rope_angle_errors",
    "rope_cache_from_vectors",
    "rope_config_essentials",
    "rope_config_sources",
    "rope_cos_sin",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_from_config",
    "rope_layers",
    "rope_permutation",
    "rope_query_temperature",
    "rope_scores",
    "transformers_angle_errors",
    "yarn_correction_range",
]
