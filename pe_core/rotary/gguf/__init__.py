"""GGUF, llama.cpp's model format, in the rotary wing: what llama.cpp does with a file's RoPE
(:mod:`~pe_core.rotary.gguf.models`: its rules per architecture, as data), a reader of the
metadata and RoPE tensors only (:mod:`~pe_core.rotary.gguf.file`), llama.cpp's rotation of each
layer in its CPU kernel's float32 arithmetic (:mod:`~pe_core.rotary.gguf.rope`), and the
comparison with the config.json the file came from (:mod:`~pe_core.rotary.gguf.check`).
"""

from pe_core.rotary.gguf.check import GgufCheck, GgufFinding, Origin, check_gguf
from pe_core.rotary.gguf.file import GgufMetadata, parse_gguf_dump, read_gguf, read_gguf_bytes
from pe_core.rotary.gguf.models import (
    LLAMA_CPP_ARCHS,
    LLAMA_CPP_VERSION,
    NON_ROTARY_ARCHS,
    LlamaCppArch,
)
from pe_core.rotary.gguf.rope import (
    LlamaCppLayer,
    llama_cpp_angles,
    llama_cpp_cos_sin,
    llama_cpp_layers,
)

__all__ = [
    "LLAMA_CPP_ARCHS",
    "LLAMA_CPP_VERSION",
    "NON_ROTARY_ARCHS",
    "GgufCheck",
    "GgufFinding",
    "GgufMetadata",
    "LlamaCppArch",
    "LlamaCppLayer",
    "Origin",
    "check_gguf",
    "llama_cpp_angles",
    "llama_cpp_cos_sin",
    "llama_cpp_layers",
    "parse_gguf_dump",
    "read_gguf",
    "read_gguf_bytes",
]
