"""Write library_tables.npz and library_tables.json: tables computed with the libraries' own code.

Run once, in a scratch environment with the libraries installed (none is a dependency of
pe_core)::

    pip install torch transformers==5.24.0 diffusers==0.42.1 timm==1.0.31 keras-hub==0.32.0 \\
        tensorflow positional-encodings==6.0.3
    python tests/data/generate_library_tables.py

The arrays are stored as the libraries return them (float32, or float64 where the library
returns float64), the calls and versions under ``sources`` in the json file. keras-hub is run
once per Keras backend, each in its own process (the backend is chosen at import).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PACKAGES = (
    "transformers",
    "diffusers",
    "timm",
    "keras",
    "keras-hub",
    "positional-encodings",
    "torch",
)


def _keras_tables() -> list[dict]:
    """keras-hub SinePositionEncoding under the mixed policies, on the current backend."""
    import keras
    from keras_hub.layers import SinePositionEncoding

    rows = []
    for policy in ("mixed_float16", "mixed_bfloat16"):
        for d_model, length in ((6, 50), (16, 64), (128, 512)):
            layer = SinePositionEncoding(dtype=policy)
            zeros = keras.ops.zeros((1, length, d_model), dtype=layer.compute_dtype)
            table = keras.ops.convert_to_numpy(keras.ops.cast(layer(zeros), "float32"))[0]
            rows.append(
                {
                    "backend": keras.backend.backend(),
                    "policy": policy,
                    "compute_dtype": layer.compute_dtype,
                    "d_model": d_model,
                    "length": length,
                    "table": np.asarray(table),
                }
            )
    return rows


def _transformers_tables(out: dict, sources: dict, versions: dict) -> None:
    import torch
    from transformers import (
        FunnelConfig,
        PatchTSTConfig,
        ViTMAEConfig,
        ViTMAEForPreTraining,
        XLNetConfig,
        XLNetModel,
    )
    from transformers.models.funnel.modeling_funnel import FunnelAttentionStructure
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding
    from transformers.models.patchtst.modeling_patchtst import PatchTSTPositionalEncoding
    from transformers.models.pegasus_x.modeling_pegasus_x import (
        PegasusXSinusoidalPositionalEmbedding,
    )
    from transformers.models.whisper.modeling_whisper import sinusoids

    tv = f"transformers {versions['transformers']}"
    out["vitmae"] = []
    for hidden, image, decoder in ((16, 12, 8), (32, 20, 12)):
        config = ViTMAEConfig(
            hidden_size=hidden,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            image_size=image,
            patch_size=4,
            decoder_hidden_size=decoder,
            decoder_num_hidden_layers=1,
            decoder_num_attention_heads=2,
            decoder_intermediate_size=16,
        )
        model = ViTMAEForPreTraining(config)
        embeddings = model.vit.embeddings
        embeddings.patch_embeddings.projection._is_hf_initialized = False
        embeddings.initialize_weights()
        model.decoder.initialize_weights(embeddings.patch_embeddings.num_patches)
        out["vitmae"].append(
            {
                "hidden_size": hidden,
                "grid": image // 4,
                "decoder_hidden_size": decoder,
                "encoder": embeddings.position_embeddings.detach()[0].numpy(),
                "decoder": model.decoder.decoder_pos_embed.detach()[0].numpy(),
            }
        )
    sources["vitmae"] = (
        f"{tv} ViTMAEForPreTraining(ViTMAEConfig(hidden_size, image_size, patch_size=4, "
        "decoder_hidden_size)): vit.embeddings.initialize_weights() and "
        "decoder.initialize_weights(num_patches), float32 (in 5.24 post_init leaves both tables "
        "zero, so the _is_hf_initialized flag of the patch projection is cleared first)"
    )
    out["pegasus_x"] = []
    for d_model, cache, length in ((6, 7, 12), (6, 0, 40), (10, 7, 30)):
        embed = PegasusXSinusoidalPositionalEmbedding(d_model)
        table = embed(torch.zeros(1, length, d_model), cache_length=cache)[0]
        out["pegasus_x"].append(
            {"d_model": d_model, "cache_length": cache, "length": length, "table": table.numpy()}
        )
    sources["pegasus_x"] = (
        f"{tv} PegasusXSinusoidalPositionalEmbedding(d_model)(zeros((1, length, d_model)), "
        "cache_length=cache_length)[0], float32"
    )
    out["xlnet"] = []
    for d_model, qlen in ((6, 10), (8, 12)):
        model = XLNetModel(XLNetConfig(d_model=d_model, n_layer=1, n_head=2, d_inner=8))
        table = model.relative_positional_encoding(qlen, qlen, bsz=None)[:, 0, :]
        out["xlnet"].append({"d_model": d_model, "qlen": qlen, "table": table.detach().numpy()})
    sources["xlnet"] = (
        f"{tv} XLNetModel(XLNetConfig(d_model)).relative_positional_encoding(qlen, qlen)[:, 0]: "
        "positions qlen down to -qlen + 1, [sin | cos], float32"
    )
    out["funnel"] = []
    for d_model, length in ((6, 8), (8, 8)):
        config = FunnelConfig(d_model=d_model, n_head=2, d_head=3, attention_type="factorized")
        _, _, psi, omega = FunnelAttentionStructure(config).get_position_embeds(
            length, torch.float32, "cpu"
        )
        out["funnel"].append(
            {"d_model": d_model, "length": length, "psi": psi.numpy(), "omega": omega.numpy()}
        )
    sources["funnel"] = (
        f"{tv} FunnelAttentionStructure(FunnelConfig(d_model, attention_type='factorized'))"
        ".get_position_embeds(length, float32, 'cpu'): psi = [cos | sin], omega = [-sin | cos]"
    )
    out["patchtst"] = []
    for d_model, patches in ((16, 12), (8, 42)):
        config = PatchTSTConfig(d_model=d_model, positional_encoding_type="sincos")
        table = PatchTSTPositionalEncoding._init_pe(config, patches).detach().numpy()
        out["patchtst"].append({"d_model": d_model, "num_patches": patches, "table": table})
    sources["patchtst"] = (
        f"{tv} PatchTSTPositionalEncoding._init_pe(PatchTSTConfig(d_model, "
        "positional_encoding_type='sincos'), num_patches): the vaswani table minus its mean, "
        "over 10 times its standard deviation, float32"
    )
    out["marian"] = []
    for d_model in (8, 7):
        weight = MarianSinusoidalPositionalEmbedding(20, d_model).create_weight()
        out["marian"].append({"d_model": d_model, "table": weight.numpy()})
    sources["marian"] = f"{tv} MarianSinusoidalPositionalEmbedding(20, d_model).create_weight()"
    out["whisper"] = [{"channels": c, "table": sinusoids(20, c).numpy()} for c in (8, 16)]
    sources["whisper"] = (
        f"{tv} models.whisper.modeling_whisper.sinusoids(20, channels) (OpenAI Whisper's "
        "sinusoids), float32"
    )


def _image_tables(out: dict, sources: dict, versions: dict) -> None:
    import torch
    from diffusers.models.embeddings import PatchEmbed, get_2d_sincos_pos_embed
    from positional_encodings.torch_encodings import PositionalEncoding2D, PositionalEncoding3D
    from timm.layers.pos_embed_sincos import build_sincos2d_pos_embed

    dv = f"diffusers {versions['diffusers']}"
    out["diffusers_2d_scaled"] = []
    for d_model, grid, base_size, scale in (
        (16, (4, 4), 2, 1.0),
        (16, (6, 4), 8, 1.0),
        (8, (3, 5), 4, 0.5),
        (16, (4, 4), 4, 2.0),
    ):
        table = get_2d_sincos_pos_embed(
            d_model, grid, base_size=base_size, interpolation_scale=scale, output_type="pt"
        )
        out["diffusers_2d_scaled"].append(
            {
                "embed_dim": d_model,
                "grid_size": list(grid),
                "base_size": base_size,
                "interpolation_scale": scale,
                "table": table.numpy(),
            }
        )
    sources["diffusers_2d_scaled"] = (
        f"{dv} models.embeddings.get_2d_sincos_pos_embed(embed_dim, grid_size, base_size, "
        "interpolation_scale, output_type='pt'): coordinates arange(n, float32) / (n / base_size) "
        "/ interpolation_scale per axis; float64 result"
    )
    out["diffusers_patch_embed"] = []
    for d_model, height, width in ((16, 16, 16), (16, 12, 20)):
        embed = PatchEmbed(
            height=16,
            width=16,
            patch_size=2,
            in_channels=1,
            embed_dim=d_model,
            pos_embed_max_size=12,
            pos_embed_type="sincos",
        )
        table = embed.cropped_pos_embed(height, width)[0].numpy()
        out["diffusers_patch_embed"].append(
            {
                "embed_dim": d_model,
                "height": height,
                "width": width,
                "patch_size": 2,
                "pos_embed_max_size": 12,
                "base_size": 8,
                "table": table,
            }
        )
    sources["diffusers_patch_embed"] = (
        f"{dv} models.embeddings.PatchEmbed(height=16, width=16, patch_size=2, embed_dim, "
        "pos_embed_max_size=12).cropped_pos_embed(height, width)[0]: SD3's center crop of a "
        "12 x 12 "
        "table built with base_size 16 // 2 = 8, float32"
    )
    pv = f"positional-encodings {versions['positional-encodings']}"
    out["positional_encodings_2d"] = []
    for channels, x, y in ((6, 3, 4), (10, 4, 5), (7, 3, 5), (18, 5, 3)):
        table = PositionalEncoding2D(channels)(torch.zeros(1, x, y, channels))[0]
        out["positional_encodings_2d"].append(
            {"channels": channels, "x": x, "y": y, "table": table.reshape(x * y, -1).numpy()}
        )
    out["positional_encodings_3d"] = []
    for channels, x, y, z in ((12, 2, 3, 4), (8, 2, 3, 3), (18, 3, 2, 4)):
        table = PositionalEncoding3D(channels)(torch.zeros(1, x, y, z, channels))[0]
        out["positional_encodings_3d"].append(
            {
                "channels": channels,
                "x": x,
                "y": y,
                "z": z,
                "table": table.reshape(x * y * z, -1).numpy(),
            }
        )
    sources["positional_encodings_2d"] = (
        f"{pv} torch_encodings.PositionalEncoding2D(channels)(zeros((1, x, y, channels)))[0]"
        ".reshape(x * y, channels), float32"
    )
    sources["positional_encodings_3d"] = (
        f"{pv} torch_encodings.PositionalEncoding3D(channels)(zeros((1, x, y, z, channels)))[0]"
        ".reshape(x * y * z, channels), float32"
    )
    out["timm"] = []
    for interleave in (False, True):
        for shape, dim in (((3, 5), 16), ((4, 4), 8)):
            table = build_sincos2d_pos_embed(list(shape), dim=dim, interleave_sin_cos=interleave)
            out["timm"].append(
                {
                    "feat_shape": list(shape),
                    "dim": dim,
                    "interleave_sin_cos": interleave,
                    "table": table.numpy(),
                }
            )
    sources["timm"] = (
        f"timm {versions['timm']} layers.pos_embed_sincos.build_sincos2d_pos_embed(feat_shape, "
        "dim, interleave_sin_cos), float32"
    )


def _store(out: dict, sources: dict) -> None:
    arrays, meta = {}, {"sources": sources}
    for key, cases in out.items():
        meta[key] = []
        for i, case in enumerate(cases):
            entry = {}
            for field, value in case.items():
                if isinstance(value, np.ndarray):
                    name = f"{key}_{i}_{field}"
                    arrays[name] = value
                    entry[field] = name
                else:
                    entry[field] = value
            meta[key].append(entry)
    np.savez_compressed(HERE / "library_tables.npz", **arrays)
    (HERE / "library_tables.json").write_text(json.dumps(meta, indent=1) + "\n")


def main() -> None:
    if sys.argv[1:] == ["--keras"]:  # a child process, one backend
        rows = _keras_tables()
        np.savez(sys.stdout.buffer, rows=np.array(rows, dtype=object), allow_pickle=True)
        return
    versions = {package: version(package) for package in PACKAGES}
    out, sources = {}, {}
    sources["generator"] = (
        "computed once with the libraries installed in a scratch environment (Python "
        f"{sys.version.split()[0]}, "
        + ", ".join(f"{k} {v}" for k, v in versions.items())
        + ", CPU) by tests/data/generate_library_tables.py; arrays as the library returns them"
    )
    _transformers_tables(out, sources, versions)
    _image_tables(out, sources, versions)
    out["keras_hub"] = []
    for backend in ("torch", "tensorflow"):
        child = subprocess.run(
            [sys.executable, __file__, "--keras"],
            env={**os.environ, "KERAS_BACKEND": backend},
            capture_output=True,
            check=True,
        )
        with np.load(io.BytesIO(child.stdout), allow_pickle=True) as loaded:
            out["keras_hub"] += list(loaded["rows"])
    sources["keras_hub"] = (
        f"keras-hub {versions['keras-hub']} layers.SinePositionEncoding(dtype=policy)"
        f"(zeros((1, length, d_model))) with keras {versions['keras']} on the torch backend "
        f"(torch {versions['torch']}) and the tensorflow backend (tensorflow "
        f"{version('tensorflow')}), CPU; cast to float32 (exact) for export"
    )
    _store(out, sources)


if __name__ == "__main__":
    main()
