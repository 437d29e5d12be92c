"""Write caches.npz and SOURCES.json: RoPE caches computed with the libraries' own code, for
issue 53's naming cases (tests/core/test_checker_naming.py).

Run once, with torch and transformers installed and the other libraries' sources on the path
(none is a dependency of pe_core)::

    pip install --target LIBS --no-deps keras==3.15.1 keras-hub==0.32.0 \\
        rotary-embedding-torch==0.9.1 x-transformers==2.31.10 einops einx frozendict loguru \\
        torch-einops-utils absl-py rich namex optree ml-dtypes h5py markdown-it-py mdurl \\
        pygments regex
    pip download litgpt==0.5.13 --no-deps   # litgpt/model.py is read from the wheel
    KERAS_BACKEND=torch PYTHONPATH=LIBS python tests/data/library_rope_caches/generate.py \\
        --litgpt-wheel litgpt-0.5.13-py3-none-any.whl --flash-attn-rotary rotary.py

``rotary.py`` is flash-attn's ``flash_attn/layers/rotary.py`` (commit in SOURCES.json): its
``RotaryEmbedding`` builds its cache in plain torch, run here with the Triton kernel that
applies it (not used by the cache) left out. litgpt's ``build_rope_cache`` is run from its
own source text, taken from the wheel (the package's import pulls in lightning).

Each cache is stored at a few rows (positions 0 to 31, then doubling to the last): the rows a
check reads, as ``<name>_cos``, ``<name>_sin`` and ``<name>_positions``, float32 as the
libraries return them.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import typing
import zipfile
from importlib.metadata import version
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent


def rows(last: int) -> np.ndarray:
    """Positions 0 to 31 and then every doubling (and the last): what a check reads."""
    doubling = [2**k for k in range(5, 40) if 2**k < last]
    return np.array(sorted({*range(32), *doubling, last - 1}), dtype=np.int64)


def source_functions(text: str, names: tuple[str, ...]) -> str:
    """The source of the named top-level functions of a module's text."""
    tree = ast.parse(text)
    wanted = [node for node in tree.body if getattr(node, "name", None) in names]
    return "\n\n".join(ast.get_source_segment(text, node) for node in wanted)


def litgpt_yarn(wheel: Path) -> dict:
    """litgpt 0.5.13's build_rope_cache with a YaRN extra_config, from its own source."""
    text = zipfile.ZipFile(wheel).read("litgpt/model.py").decode()
    namespace = {"torch": torch, "math": math}
    exec(source_functions(text, ("yarn_get_mscale", "build_rope_cache")), namespace)
    extra = {"factor": 4.0, "beta_fast": 32.0, "beta_slow": 1.0, "original_max_seq_len": 4096}
    cos, sin = namespace["build_rope_cache"](16_384, 128, base=10_000, extra_config=extra)
    kept = rows(16_384)
    return {
        "cos": cos[kept].numpy(),
        "sin": sin[kept].numpy(),
        "positions": kept,
        "source": "litgpt 0.5.13 (wheel litgpt-0.5.13-py3-none-any.whl) litgpt/model.py "
        "build_rope_cache(16384, 128, base=10000, extra_config={'factor': 4.0, 'beta_fast': "
        "32.0, 'beta_slow': 1.0, 'original_max_seq_len': 4096}), run from its source text",
    }


def keras_hub_dynamic() -> dict:
    """keras-hub's RotaryEmbedding(rope_type='dynamic', scaling_factor=4)'s cos and sin."""
    import keras
    from keras_hub.layers import RotaryEmbedding

    layer = RotaryEmbedding(max_wavelength=10_000, scaling_factor=4.0, rope_type="dynamic")
    kept = rows(8192)
    positions = keras.ops.convert_to_tensor(kept.astype(np.float32))
    cos, sin = layer._compute_cos_sin_embedding(
        keras.ops.zeros((1, kept.size, 128)), positions=positions
    )
    return {
        "cos": keras.ops.convert_to_numpy(cos)[0],
        "sin": keras.ops.convert_to_numpy(sin)[0],
        "positions": kept,
        "source": f"keras-hub {version('keras-hub')} (keras {version('keras')}, torch backend) "
        "keras_hub.layers.RotaryEmbedding(max_wavelength=10000, scaling_factor=4.0, "
        "rope_type='dynamic')._compute_cos_sin_embedding(zeros((1, n, 128)), positions=rows)",
    }


def transformers_cache(raw: dict, last: int, what: str) -> dict:
    """transformers' own rotary class for a config, called on the rows."""
    import transformers
    from transformers import CONFIG_MAPPING

    config = CONFIG_MAPPING[raw["model_type"]].from_dict(raw)
    module = __import__(
        f"transformers.models.{raw['model_type']}.modeling_{raw['model_type']}", fromlist=["_"]
    )
    name = next(n for n in dir(module) if n.endswith("RotaryEmbedding"))
    rotary = getattr(module, name)(config=config)
    kept = rows(last)
    width = 2 * rotary.inv_freq.numel()
    cos, sin = rotary(torch.zeros(1, kept.size, width), torch.tensor(kept)[None])
    return {
        "cos": cos[0].numpy(),
        "sin": sin[0].numpy(),
        "positions": kept,
        "source": f"transformers {transformers.__version__} {module.__name__}.{name}"
        f"(config): {what}; the config is under 'config'",
        "config": raw,
    }


#: Phi-3-mini-128k-instruct's first release (rope_scaling type "su", LongRoPE): its config's
#: rope keys, factors as the model card's config.json lists them.
PHI3_MINI_128K = {
    "model_type": "phi3",
    "hidden_size": 3072,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "intermediate_size": 8192,
    "vocab_size": 32064,
    "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096,
    "rope_theta": 10000.0,
    "rope_scaling": {
        "type": "longrope",
        "long_factor": [
            1.0299999713897705,
            1.0499999523162842,
            1.0499999523162842,
            1.0799999237060547,
            1.2299998998641968,
            1.2299998998641968,
            1.2999999523162842,
            1.4499999284744263,
            1.5999999046325684,
            1.6499998569488525,
            1.8999998569488525,
            2.859999895095825,
            3.68999981880188,
            5.419999599456787,
            5.489999771118164,
            5.489999771118164,
            9.09000015258789,
            11.579999923706055,
            15.65999984741211,
            15.769999504089355,
            15.789999961853027,
            18.360000610351562,
            21.989999771118164,
            23.079999923706055,
            30.009998321533203,
            32.35000228881836,
            32.590003967285156,
            35.56000518798828,
            39.95000457763672,
            53.840003967285156,
            56.20000457763672,
            57.95000457763672,
            59.29000473022461,
            59.77000427246094,
            59.920005798339844,
            61.190006256103516,
            61.96000671386719,
            62.50000762939453,
            63.3700065612793,
            63.48000717163086,
            63.48000717163086,
            63.66000747680664,
            63.850006103515625,
            64.08000946044922,
            64.760009765625,
            64.80001068115234,
            64.81001281738281,
            64.81001281738281,
        ],
        "short_factor": [
            1.05,
            1.05,
            1.05,
            1.1,
            1.1,
            1.1,
            1.2500000000000002,
            1.2500000000000002,
            1.4000000000000004,
            1.4500000000000004,
            1.5500000000000005,
            1.8500000000000008,
            1.9000000000000008,
            *[2.000000000000001] * 19,
            2.1000000000000005,
            2.1000000000000005,
            2.2,
            2.3499999999999996,
            2.3499999999999996,
            2.3499999999999996,
            2.3499999999999996,
            2.3999999999999995,
            2.3999999999999995,
            2.6499999999999986,
            2.6999999999999984,
            2.8999999999999977,
            2.9499999999999975,
            3.049999999999997,
            3.049999999999997,
            3.049999999999997,
        ],
    },
}

#: Llama 4 Scout's rope_scaling (llama3 with equal low and high frequency factors).
LLAMA4_SCOUT = {
    "model_type": "llama",
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "head_dim": 128,
    "max_position_embeddings": 10485760,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "factor": 16.0,
        "high_freq_factor": 1.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}


def rotary_embedding_torch_xpos() -> dict:
    from rotary_embedding_torch import RotaryEmbedding

    rotary = RotaryEmbedding(dim=64, use_xpos=True, xpos_scale_base=512)
    seq = torch.arange(2048, dtype=torch.float32)
    freqs = rotary(seq, seq_len=2048)
    scale = rotary.get_scale(seq, seq_len=2048)
    kept = rows(2048)
    return {
        "cos": (freqs.cos() * scale)[kept].numpy(),
        "sin": (freqs.sin() * scale)[kept].numpy(),
        "positions": kept,
        "source": f"rotary-embedding-torch {version('rotary-embedding-torch')} "
        "RotaryEmbedding(dim=64, use_xpos=True, xpos_scale_base=512): freqs = rotary(arange(2048)"
        ", seq_len=2048), scale = rotary.get_scale(...); the queries' cache: freqs.cos() * scale, "
        "freqs.sin() * scale (apply_rotary_emb's t * cos * scale + rotate_half(t) * sin * scale)",
    }


def x_transformers_xpos() -> dict:
    from x_transformers.x_transformers import RotaryEmbedding

    rotary = RotaryEmbedding(64, use_xpos=True, scale_base=512)
    freqs, scale = rotary(torch.arange(2048))
    freqs, scale = freqs.reshape(2048, -1), scale.reshape(2048, -1)  # (1, n, d): one batch
    kept = rows(2048)
    return {
        "cos": (freqs.cos() * scale)[kept].numpy(),
        "sin": (freqs.sin() * scale)[kept].numpy(),
        "positions": kept,
        "source": f"x-transformers {version('x-transformers')} RotaryEmbedding(64, use_xpos=True, "
        "scale_base=512)(arange(2048)) -> freqs, scale (interleaved pairs); the queries' cache "
        "freqs.cos() * scale, freqs.sin() * scale (apply_rotary_pos_emb)",
    }


def flash_attn_xpos(rotary_py: Path) -> dict:
    text = rotary_py.read_text()
    tree = ast.parse(text)
    cls = next(n for n in tree.body if getattr(n, "name", None) == "RotaryEmbedding")
    from einops import rearrange

    namespace = {"torch": torch, "rearrange": rearrange, **vars(typing)}
    exec(ast.get_source_segment(text, cls), namespace)
    rotary = namespace["RotaryEmbedding"](64, scale_base=512)
    rotary._update_cos_sin_cache(2048, dtype=torch.float32)
    kept = rows(2048)
    return {
        "cos": rotary._cos_cached[kept].numpy(),
        "sin": rotary._sin_cached[kept].numpy(),
        "positions": kept,
        "source": "flash-attn (Dao-AILab/flash-attention commit "
        "0251105a2fb19d2957484b7f023cd8c115286ced) flash_attn/layers/rotary.py "
        "RotaryEmbedding(64, scale_base=512)._update_cos_sin_cache(2048): _cos_cached, "
        "_sin_cached (one column per pair, the queries' scale)",
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--litgpt-wheel", type=Path, required=True)
    parser.add_argument("--flash-attn-rotary", type=Path, required=True)
    args = parser.parse_args()
    cases = {
        "litgpt_yarn": litgpt_yarn(args.litgpt_wheel),
        "keras_hub_dynamic": keras_hub_dynamic(),
        "phi3_mini_128k": transformers_cache(
            PHI3_MINI_128K, 131_072, "Phi-3-mini-128k-instruct's LongRoPE, long factors"
        ),
        "llama4_scout": transformers_cache(
            LLAMA4_SCOUT, 16_384, "Llama 4 Scout's llama3 scaling (equal factors)"
        ),
        "rotary_embedding_torch_xpos": rotary_embedding_torch_xpos(),
        "x_transformers_xpos": x_transformers_xpos(),
        "flash_attn_xpos": flash_attn_xpos(args.flash_attn_rotary),
    }
    arrays = {}
    for name, case in cases.items():
        for key in ("cos", "sin", "positions"):
            arrays[f"{name}_{key}"] = np.asarray(case.pop(key))
    np.savez_compressed(HERE / "caches.npz", **arrays)
    sources = {
        "torch": torch.__version__,
        "generator": "tests/data/library_rope_caches/generate.py",
    }
    (HERE / "SOURCES.json").write_text(json.dumps({**sources, "cases": cases}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
