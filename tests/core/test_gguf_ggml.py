"""llama.cpp's angles as pe_core computes them (pe_core.llama_cpp_cos_sin) against ggml's rope op,
``ggml_rope_ext`` on the CPU, called through ctypes: cos and sin bit for bit.

ggml is not a dependency: build it from llama.cpp's source (the copy in llama-cpp-python's sdist,
see benchmarks/gguf_corpus.py) with ``cmake -DBUILD_SHARED_LIBS=ON`` and point ``PE_LIBGGML`` at
the folder holding libggml-base.so and libggml-cpu.so. Without it these tests skip, saying so.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np
import pytest

from pe_core.rotary.gguf.file import read_gguf
from pe_core.rotary.gguf.models import RopeMode
from pe_core.rotary.gguf.rope import LlamaCppLayer, llama_cpp_cos_sin, llama_cpp_layers

pytestmark = pytest.mark.library

CORPUS = Path(__file__).parents[1] / "data" / "gguf"


class _InitParams(ctypes.Structure):
    _fields_ = [
        ("mem_size", ctypes.c_size_t),
        ("mem_buffer", ctypes.c_void_p),
        ("no_alloc", ctypes.c_bool),
    ]


def _ggml():
    folder = os.environ.get("PE_LIBGGML")
    if not folder:
        pytest.skip(
            "PE_LIBGGML is not set: build libggml from llama.cpp's source (shared "
            "libraries) and point PE_LIBGGML at its folder to compare with ggml_rope_ext"
        )
    folder = Path(folder)
    try:
        base = ctypes.CDLL(str(folder / "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
        cpu = ctypes.CDLL(str(folder / "libggml-cpu.so"), mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        pytest.skip(f"libggml cannot be loaded from PE_LIBGGML={folder}: {error}")
    p = ctypes.c_void_p
    base.ggml_init.argtypes, base.ggml_init.restype = [_InitParams], p
    base.ggml_free.argtypes = [p]
    base.ggml_new_tensor_1d.argtypes = [p, ctypes.c_int, ctypes.c_int64]
    base.ggml_new_tensor_1d.restype = p
    base.ggml_new_tensor_3d.argtypes = [p, ctypes.c_int] + [ctypes.c_int64] * 3
    base.ggml_new_tensor_3d.restype = p
    base.ggml_get_data.argtypes, base.ggml_get_data.restype = [p], p
    base.ggml_rope_ext.argtypes = [p, p, p, p] + [ctypes.c_int] * 3 + [ctypes.c_float] * 6
    base.ggml_rope_ext.restype = p
    base.ggml_new_graph.argtypes, base.ggml_new_graph.restype = [p], p
    base.ggml_build_forward_expand.argtypes = [p, p]
    cpu.ggml_graph_compute_with_ctx.argtypes = [p, p, ctypes.c_int]
    return base, cpu


def ggml_cos_sin(layer: LlamaCppLayer, positions: np.ndarray):
    """cos and sin of each pair as ggml_rope_ext computes them: unit vectors rotated."""
    base, cpu = _ggml()
    ctx = base.ggml_init(_InitParams(64 * 1024 * 1024, None, False))
    try:
        n = positions.size
        head = layer.n_dims
        x = base.ggml_new_tensor_3d(ctx, 0, head, 1, n)  # GGML_TYPE_F32
        pos = base.ggml_new_tensor_1d(ctx, 26, n)  # GGML_TYPE_I32
        data = np.zeros((n, head), dtype=np.float32)
        if layer.mode is RopeMode.NORMAL:
            data[:, 0::2] = 1.0
        else:
            data[:, : head // 2] = 1.0
        ctypes.memmove(base.ggml_get_data(x), data.ctypes.data, data.nbytes)
        positions32 = positions.astype(np.int32)
        ctypes.memmove(base.ggml_get_data(pos), positions32.ctypes.data, positions32.nbytes)
        factors = None
        if layer.freq_factors is not None:
            factors = base.ggml_new_tensor_1d(ctx, 0, layer.n_pairs)
            values = np.ascontiguousarray(layer.freq_factors[: layer.n_pairs], dtype=np.float32)
            ctypes.memmove(base.ggml_get_data(factors), values.ctypes.data, values.nbytes)
        out = base.ggml_rope_ext(
            ctx,
            x,
            pos,
            factors,
            layer.n_dims,
            layer.mode.value,
            layer.n_ctx_orig,
            layer.freq_base,
            layer.freq_scale,
            layer.ext_factor,
            layer.attn_factor,
            layer.beta_fast,
            layer.beta_slow,
        )
        graph = base.ggml_new_graph(ctx)
        base.ggml_build_forward_expand(graph, out)
        cpu.ggml_graph_compute_with_ctx(ctx, graph, 1)
        result = np.empty((n, head), dtype=np.float32)
        ctypes.memmove(result.ctypes.data, base.ggml_get_data(out), result.nbytes)
    finally:
        base.ggml_free(ctx)
    if layer.mode is RopeMode.NORMAL:
        return result[:, 0::2], result[:, 1::2]
    return result[:, : head // 2], result[:, head // 2 :]


FILES = [
    "llama3.1-8b.gguf",  # rope_freqs, NORMAL pairs
    "qwen2.5-7b.gguf",  # NEOX, base 1e6
    "qwen2.5-7b-yarn.gguf",  # YaRN: ramp, mscale
    "phi3.5-longrope.gguf",  # LongRoPE long factors, attention factor
    "gemma3-4b.gguf",  # linear factor 8 on the global layer, 10000 on the local ones
    "phi-1.gguf",  # partial rotary
]


@pytest.mark.parametrize("name", FILES)
def test_cos_sin_bit_for_bit_with_ggml_rope_ext(name):
    rope = llama_cpp_layers(read_gguf(CORPUS / name))
    positions = np.concatenate(
        [np.arange(0, 300), [4095, 4096, 8191, 8192, 32767, 65535, 100_000, 131_071, 1_000_000]]
    )
    seen = set()
    for layer in rope.layers:
        signature = (layer.freq_base, layer.freq_scale, layer.ext_factor, layer.n_dims)
        if not layer.rotates or signature in seen:
            continue
        seen.add(signature)
        want_cos, want_sin = ggml_cos_sin(layer, positions)
        cos, sin = llama_cpp_cos_sin(positions, layer)
        differ = (cos.view(np.uint32) != want_cos.view(np.uint32)) | (
            sin.view(np.uint32) != want_sin.view(np.uint32)
        )
        assert not differ.any(), (
            f"{name} layer {layer.index}: {int(differ.sum())} of {differ.size} values differ "
            f"from ggml_rope_ext, first at position {positions[np.argwhere(differ)[0][0]]}"
        )
