"""Every library named beside a convention or a 2-D layout, checked against that library's output.

``data/library_tables.npz`` holds tables computed once with the libraries installed (Python 3.11:
transformers 5.24.0, diffusers 0.42.1, timm 1.0.31, keras 3.15.1 with keras-hub 0.32.0 on the
torch and tensorflow backends, positional-encodings 6.0.3, torch 2.14.1, CPU);
``data/library_tables.json`` names each table's call and arguments under ``sources``, and
``data/generate_library_tables.py`` is the script that wrote both. The ``TestInstalled`` tests
call the libraries themselves where they are installed (none is a dependency of pe_core: they
are skipped here with the reason, and run where they install).

Tolerances: the libraries compute in float32 at positions below 64, so a table is within
``FLOAT32_TABLE`` = 1e-6 of the exact encoding (the angle's float32 error, 64 * 6e-8, plus the
rounding of sin and cos); the keras-hub tables in float16 and bfloat16 are compared bit for bit.
"""

from __future__ import annotations

import ast
import json

import numpy as np
import pytest

from pe_core import (
    CONVENTIONS,
    GRID3D_LAYOUTS,
    GRID_LAYOUTS,
    PRECISIONS,
    Precision,
    PrecisionKind,
    diagnose_encoding,
    grid3d_encoding,
    grid_encoding,
    identify_encoding,
    identify_grid,
    identify_grid3d,
    sinusoidal_encoding,
    textbook_encoding,
)
from pe_core._numerics.formats import round_to_precision
from tests import DATA, ROOT

SOURCES = json.loads((DATA / "library_tables.json").read_text())
ARRAYS = np.load(DATA / "library_tables.npz")
FLOAT32_TABLE = 1e-6


def _cases(key):
    return SOURCES[key]


def _table(case, field="table"):
    return ARRAYS[case[field]]


class TestViTMAE:
    """transformers 5.24 builds [sin row | cos row | sin column | cos column] and then swaps the
    halves "to match the pretrained layout": MAE's layout, column first."""

    @pytest.mark.parametrize("case", _cases("vitmae"), ids=lambda c: f"d{c['hidden_size']}")
    @pytest.mark.parametrize("part", ["encoder", "decoder"])
    def test_mae_layout(self, case, part):
        table = _table(case, part)
        d_model = case["hidden_size"] if part == "encoder" else case["decoder_hidden_size"]
        grid = case["grid"]
        found = identify_grid(table)
        assert found.matches, found.summary()
        assert (found.layout, found.height, found.width) == ("mae", grid, grid)
        assert (found.base, found.extra_tokens) == (10_000.0, 1)
        ours = grid_encoding(grid, grid, d_model, layout="mae", extra_tokens=1)
        np.testing.assert_allclose(table, ours, rtol=0, atol=FLOAT32_TABLE)
        # ...and not the moco layout the issue thought it was: rows and columns swapped.
        moco = grid_encoding(grid, grid, d_model, layout="moco", extra_tokens=1)
        assert np.max(np.abs(table - moco)) > 0.5


class TestTimm:
    @pytest.mark.parametrize(
        "case",
        _cases("timm"),
        ids=lambda c: f"{c['feat_shape']}-d{c['dim']}-interleave{c['interleave_sin_cos']}",
    )
    def test_layout(self, case):
        layout = "moco" if case["interleave_sin_cos"] else "timm"
        height, width = case["feat_shape"]
        found = identify_grid(_table(case))
        assert found.matches and found.layout == layout, found.summary()
        assert (found.height, found.width, found.base) == (height, width, 10_000.0)
        ours = grid_encoding(height, width, case["dim"], layout=layout)
        np.testing.assert_allclose(_table(case), ours, rtol=0, atol=FLOAT32_TABLE)


class TestOneDimensional:
    """transformers' 1-D tables: each named by the convention and base its code writes."""

    @pytest.mark.parametrize("case", _cases("marian"), ids=lambda c: f"d{c['d_model']}")
    def test_marian_is_split(self, case):
        found = identify_encoding(_table(case))
        assert (found.convention, found.base, found.start) == ("split", 10_000.0, 0.0)
        assert found.matches, found.summary()

    @pytest.mark.parametrize("case", _cases("whisper"), ids=lambda c: f"d{c['channels']}")
    def test_whisper_is_tensor2tensor(self, case):
        found = identify_encoding(_table(case))
        assert (found.convention, found.base, found.start) == ("tensor2tensor", 10_000.0, 0.0)
        assert found.matches, found.summary()

    @pytest.mark.parametrize(
        "case", _cases("pegasus_x"), ids=lambda c: f"d{c['d_model']}-cache{c['cache_length']}"
    )
    def test_pegasus_x_is_tensor2tensor(self, case):
        # At d_model 6 tensor2tensor with base 10,000 is split with base 1,000,000, and at 10
        # split with 100,000: the same table. The more usual base names it.
        found = identify_encoding(_table(case))
        assert found.matches, found.summary()
        assert (found.convention, found.base) == ("tensor2tensor", 10_000.0)
        assert found.start == case["cache_length"] and found.step == 1
        if case["d_model"] in (6, 10):
            other = "1e+06" if case["d_model"] == 6 else "100000"
            assert any(f"split with base {other} is the same table" in n for n in found.equivalents)

    @pytest.mark.parametrize("case", _cases("xlnet"), ids=lambda c: f"d{c['d_model']}")
    def test_xlnet_relative_positions_descending(self, case):
        found = identify_encoding(_table(case))
        assert found.matches, found.summary()
        assert (found.convention, found.base, found.step) == ("split", 10_000.0, -1)
        assert (found.start, found.end) == (case["qlen"], 1 - case["qlen"])

    @pytest.mark.parametrize("case", _cases("funnel"), ids=lambda c: f"d{c['d_model']}")
    def test_funnel_factorized_psi(self, case):
        # psi = [cos | sin] with the paper's frequencies: "diffusion" (base^(-i/h)) at even
        # d_model. Funnel is not named beside it: the table is one of four it builds.
        found = identify_encoding(_table(case, "psi"))
        assert found.matches, found.summary()
        assert (found.convention, found.base, found.start) == ("diffusion", 10_000.0, 0.0)


class TestPatchTST:
    """transformers' PatchTST normalizes its sincos table over the whole table:
    ``(PE - PE.mean()) / (PE.std() * 10)``; identify undoes the rescaling and names it."""

    @pytest.mark.parametrize("case", _cases("patchtst"), ids=lambda c: f"d{c['d_model']}")
    def test_normalized_table(self, case):
        table = _table(case)
        found = identify_encoding(table)
        assert found.matches, found.summary()
        assert (found.convention, found.base, found.start) == ("vaswani", 10_000.0, 0.0)
        assert found.end == case["num_patches"] - 1
        exact = sinusoidal_encoding(case["num_patches"], case["d_model"])
        assert found.scale == pytest.approx(10 * np.std(exact, ddof=1), rel=1e-12)
        assert found.offset == pytest.approx(np.mean(exact), rel=1e-12)
        assert found.normalization.startswith("transformers' PatchTST")
        assert "rescaled: the table is (encoding - " in found.summary()
        # In the encoding's units: float32's rounding of the table times the scale (about 6).
        np.testing.assert_allclose(
            found.scale * table.astype(np.float64) + found.offset, exact, rtol=0, atol=1e-6
        )
        assert diagnose_encoding(table).bug is None


def _float16_ties(values: np.ndarray, fmt: str) -> np.ndarray:
    """Entries within a float32 ulp of a rounding tie of ``fmt`` (where float32 arithmetic
    that is an ulp off rounds the other way)."""
    rounded = round_to_precision(values, fmt)
    binade = 2.0 ** np.floor(np.log2(np.maximum(np.abs(values), 2.0**-14)))
    ulp = 2.0 * PRECISIONS[fmt].unit_roundoff * binade
    tie_distance = np.abs(np.abs(values - rounded) - ulp / 2)
    return tie_distance <= 2.0**-23 * np.maximum(np.abs(values), 2.0**-14)


class TestKerasHubMixedPrecision:
    """keras-hub ``SinePositionEncoding`` under ``mixed_float16`` / ``mixed_bfloat16``: the
    textbook formula ("pow": ``(1/base) ** (2i/d)``) evaluated in the compute dtype, sin and cos
    through float32."""

    @pytest.mark.parametrize(
        "case",
        [c for c in _cases("keras_hub") if c["backend"] == "tensorflow"],
        ids=lambda c: f"{c['compute_dtype']}-d{c['d_model']}",
    )
    def test_tensorflow_backend_bit_for_bit(self, case):
        ours = textbook_encoding(
            case["length"], case["d_model"], compute_dtype=case["compute_dtype"], formula="pow"
        )
        np.testing.assert_array_equal(ours, _table(case))

    @pytest.mark.parametrize(
        "case",
        [c for c in _cases("keras_hub") if c["backend"] == "torch"],
        ids=lambda c: f"{c['compute_dtype']}-d{c['d_model']}",
    )
    def test_torch_backend_differs_only_at_ties(self, case):
        # torch's float32 sin is not correctly rounded: at sin(300) = -0.99975584, 2e-8 from the
        # float16 tie between -1 and -0.99951, it rounds the other way. Only such entries differ,
        # by one unit in the last place of the format.
        fmt = case["compute_dtype"]
        ours = textbook_encoding(case["length"], case["d_model"], compute_dtype=fmt, formula="pow")
        table = _table(case).astype(np.float64)
        differ = ours != table
        assert np.count_nonzero(differ) <= 4
        ulp = 2.0 * PRECISIONS[fmt].unit_roundoff
        assert np.all(np.abs(ours - table)[differ] <= ulp)
        unrounded = _unrounded_entries(case["length"], case["d_model"], fmt)
        assert np.all(_float16_ties(unrounded, fmt)[differ])

    @pytest.mark.parametrize(
        "case",
        _cases("keras_hub"),
        ids=lambda c: f"{c['backend']}-{c['compute_dtype']}-d{c['d_model']}",
    )
    def test_diagnosis_names_base_10000_in_the_format(self, case):
        found = diagnose_encoding(_table(case).astype(np.float32))
        assert (found.base, found.start, found.convention) == (10_000.0, 0.0, "vaswani")
        assert (found.compute_dtype, found.formula) == (case["compute_dtype"], "pow")
        last = case["length"] - 1
        assert (
            f"base 10000, positions from 0 to {last}, computed in {case['compute_dtype']}"
            in found.summary()
        )
        assert "keras-hub SinePositionEncoding" in found.summary()
        # Issue 53, case 14: keras' mixed precision is done on purpose, and named in its format.
        assert not found.likely_mistake and "Likely mistake" not in found.summary()
        assert found.summary().startswith(f"Angles k * w computed in {case['compute_dtype']}")


def _unrounded_entries(length: int, d_model: int, fmt: str) -> np.ndarray:
    """sin and cos, in float64, of the angles keras-hub forms in ``fmt`` (interleaved)."""

    def rounded(x):
        return round_to_precision(x, fmt)

    exponent = rounded(rounded(2.0 * (np.arange(d_model) // 2)) / rounded(float(d_model)))
    w = rounded(round_to_precision(np.power(rounded(1e-4), exponent), "float32"))
    angles = rounded(rounded(np.arange(length, dtype=np.float64))[:, None] * w[None, :])
    values = np.cos(angles)
    values[:, 0::2] = np.sin(angles[:, 0::2])
    return values


# --- The libraries named beside each convention and layout, and the tests that show it ---------

#: Each library string of ``CONVENTIONS[...].libraries`` and ``GRID_LAYOUTS[...].libraries``,
#: with the test that compares that library's table (its output, stored or live, or its code
#: transcribed where the library does not install here) with the convention or layout.
EVIDENCE = {
    # vaswani
    "Attention Is All You Need": "tests/core/test_encoding.py::TestLiteralValues::test_base_100_d4",
    "PyTorch tutorial": "tests/core/test_arithmetic.py::test_float32_exp_formula_libraries",
    "The Annotated Transformer": "tests/core/test_identify.py::annotated_transformer_buffer",
    "d2l.ai": "tests/core/test_library_outputs.py::test_d2l_positional_encoding",
    "HF DistilBERT (odd d_model)": (
        "tests/core/test_encoding.py::TestLiteralValues::test_distilbert_odd_formula"
    ),
    "keras-hub SinePositionEncoding": (
        "tests/core/test_library_outputs.py::TestKerasHubMixedPrecision::"
        "test_tensorflow_backend_bit_for_bit"
    ),
    # tensor2tensor
    "tensor2tensor get_timing_signal_1d": (
        "tests/core/test_encoding.py::TestLiteralValues::test_tensor2tensor_timing_signal"
    ),
    "fairseq SinusoidalPositionalEmbedding": (
        "tests/core/test_library_tables.py::TestPaddingRows::test_fairseq_table_with_its_padding_row"
    ),
    "OpenAI Whisper (and HF Whisper's sinusoids)": (
        "tests/core/test_library_outputs.py::TestOneDimensional::test_whisper_is_tensor2tensor"
    ),
    "HF PegasusX": (
        "tests/core/test_library_outputs.py::TestOneDimensional::test_pegasus_x_is_tensor2tensor"
    ),
    "diffusers get_timestep_embedding (defaults)": (
        "tests/core/test_library_tables.py::TestDiffusersTimestepEmbedding::"
        "test_every_flip_and_shift_is_a_convention"
    ),
    # split
    "MAE get_1d_sincos_pos_embed": "tests/core/test_grid.py::TestAgainstLibraries::test_mae",
    "HF Marian": "tests/core/test_library_outputs.py::TestOneDimensional::test_marian_is_split",
    "HF XLNet relative_positional_encoding (rows in decreasing order)": (
        "tests/core/test_library_outputs.py::TestOneDimensional::"
        "test_xlnet_relative_positions_descending"
    ),
    # musicgen
    "HF MusicGen and MusicGen Melody get_embedding": (
        "tests/core/test_library_tables.py::TestMusicGen::test_table_is_the_musicgen_convention"
    ),
    "diffusers get_timestep_embedding(flip_sin_to_cos=True)": (
        "tests/core/test_library_tables.py::TestDiffusersTimestepEmbedding::"
        "test_every_flip_and_shift_is_a_convention"
    ),
    # diffusion
    "OpenAI improved-diffusion, guided-diffusion and GLIDE timestep_embedding": (
        "tests/core/test_library_tables.py::test_glide_timestep_embedding_is_the_diffusion_convention"
    ),
    "Stable Diffusion (CompVis ldm) timestep_embedding": (
        "tests/core/test_library_tables.py::test_glide_timestep_embedding_is_the_diffusion_convention"
    ),
    "diffusers Timesteps(flip_sin_to_cos=True, downscale_freq_shift=0)": (
        "tests/core/test_library_tables.py::TestDiffusersTimestepEmbedding::"
        "test_every_flip_and_shift_is_a_convention"
    ),
    # 2-D layouts
    "MAE util/pos_embed.py get_2d_sincos_pos_embed": (
        "tests/core/test_grid.py::TestAgainstLibraries::test_mae"
    ),
    "diffusers get_2d_sincos_pos_embed (SD3, PixArt, ...)": (
        "tests/core/test_grid.py::TestAgainstLibraries::test_diffusers_literal_table"
    ),
    "transformers ViTMAE (5.24 initialize_weights: its [row | column] table with the halves "
    "swapped to MAE's layout)": "tests/core/test_library_outputs.py::TestViTMAE::test_mae_layout",
    "MoCo v3 vits.py build_2d_sincos_position_embedding": (
        "tests/core/test_grid.py::TestAgainstLibraries::test_moco_v3"
    ),
    "timm build_sincos2d_pos_embed(interleave_sin_cos=True)": (
        "tests/core/test_library_outputs.py::TestTimm::test_layout"
    ),
    "timm build_sincos2d_pos_embed (default, interleave_sin_cos=False)": (
        "tests/core/test_library_outputs.py::TestTimm::test_layout"
    ),
    "positional-encodings >= 5.1 PositionalEncoding2D (its torch and tf classes alike)": (
        "tests/core/test_grid.py::TestAgainstLibraries::test_positional_encodings_literal_tables"
    ),
    # 3-D layouts
    "positional-encodings >= 5.1 PositionalEncoding3D (torch)": (
        "tests/core/test_grid3d.py::TestAgainstTheLibrary::test_stored_tables"
    ),
    "diffusers get_3d_sincos_pos_embed (CogVideoX)": (
        "tests/core/test_grid3d.py::TestDiffusers::test_transcribed_formula"
    ),
}


def _named_libraries():
    for registry in (CONVENTIONS, GRID_LAYOUTS, GRID3D_LAYOUTS):
        for entry in registry.values():
            yield from entry.libraries


def _defined_names(path: str) -> set[str]:
    """``Class::method`` and top-level function names defined in a test file."""
    tree = ast.parse((ROOT / path).read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef)
            )
    return names


def test_every_named_library_has_a_test():
    named = set(_named_libraries())
    assert named - set(EVIDENCE) == set(), "named beside a convention without a test"
    assert set(EVIDENCE) - named == set(), "evidence for a library no longer named"


@pytest.mark.parametrize("library", sorted(EVIDENCE))
def test_the_evidence_exists(library):
    path, _, name = EVIDENCE[library].partition("::")
    assert name in _defined_names(path), EVIDENCE[library]


def test_d2l_positional_encoding():
    """d2l.ai chapter 11.6 ``PositionalEncoding``, transcribed in NumPy float64:
    ``X = arange(max_len)[:, None] / pow(10000, arange(0, num_hiddens, 2) / num_hiddens)``,
    ``P[:, 0::2] = sin(X)``, ``P[:, 1::2] = cos(X)``."""
    max_len, num_hiddens = 60, 32
    angles = np.arange(max_len, dtype=np.float64)[:, None] / np.power(
        10000, np.arange(0, num_hiddens, 2, dtype=np.float64) / num_hiddens
    )
    table = np.zeros((max_len, num_hiddens))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    np.testing.assert_allclose(table, sinusoidal_encoding(max_len, num_hiddens), atol=1e-12)
    found = identify_encoding(table)
    assert (found.convention, found.base, found.matches) == ("vaswani", 10_000.0, True)
    assert found.precision == Precision(PrecisionKind.EXACT)


# --- The libraries themselves, where they are installed -------------------------------------


@pytest.mark.library
class TestInstalled:
    """The same checks on tables the installed libraries compute now (skipped where a library
    is not installed: none of them is a dependency of pe_core)."""

    def test_transformers_vitmae(self):  # 0.07 s once transformers is imported (not slow)
        pytest.importorskip("torch", reason="transformers' ViTMAE needs PyTorch")
        transformers = pytest.importorskip(
            "transformers", minversion="5", reason="transformers is not a dependency"
        )
        config = transformers.ViTMAEConfig(
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            image_size=16,
            patch_size=4,
        )
        model = transformers.ViTMAEModel(config)
        embeddings = model.embeddings
        # 5.24's post_init leaves the table zero (its patch projection is initialised first,
        # and initialize_weights returns early): build it as a fresh model would.
        embeddings.patch_embeddings.projection._is_hf_initialized = False
        embeddings.initialize_weights()
        table = embeddings.position_embeddings.detach().numpy()[0]
        found = identify_grid(table)
        assert found.matches and found.layout == "mae", found.summary()
        assert (found.height, found.width, found.extra_tokens) == (4, 4, 1)

    def test_transformers_one_dimensional(self):
        torch = pytest.importorskip("torch", reason="transformers' tables need PyTorch")
        pytest.importorskip(
            "transformers", minversion="5", reason="transformers is not a dependency"
        )
        from transformers.models.pegasus_x.modeling_pegasus_x import (
            PegasusXSinusoidalPositionalEmbedding,
        )
        from transformers.models.whisper.modeling_whisper import sinusoids

        pegasus = PegasusXSinusoidalPositionalEmbedding(6)(torch.zeros(1, 12, 6), cache_length=7)
        found = identify_encoding(pegasus[0].numpy())
        assert (found.convention, found.base, found.start) == ("tensor2tensor", 10_000.0, 7.0)
        found = identify_encoding(sinusoids(30, 16).numpy())
        assert (found.convention, found.base, found.start) == ("tensor2tensor", 10_000.0, 0.0)

    def test_timm(self):
        pytest.importorskip("timm", reason="timm is not a dependency")
        from timm.layers.pos_embed_sincos import build_sincos2d_pos_embed

        for interleave, layout in ((False, "timm"), (True, "moco")):
            table = build_sincos2d_pos_embed([3, 4], dim=16, interleave_sin_cos=interleave)
            found = identify_grid(table.numpy())
            assert (found.layout, found.height, found.width) == (layout, 3, 4), found.summary()

    @pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
    def test_keras_hub(self, policy):
        keras_hub = pytest.importorskip("keras_hub", reason="keras-hub is not a dependency")
        import keras

        layer = keras_hub.layers.SinePositionEncoding(dtype=policy)
        table = layer(keras.ops.zeros((1, 64, 16), dtype=layer.compute_dtype))
        values = keras.ops.convert_to_numpy(keras.ops.cast(table, "float32"))[0]
        found = diagnose_encoding(values)
        assert (found.base, found.formula) == (10_000.0, "pow"), found.summary()
        assert found.compute_dtype == layer.compute_dtype

    def test_diffusers_scaled_and_cropped(self):
        pytest.importorskip("torch", reason="diffusers needs PyTorch")
        pytest.importorskip("diffusers", reason="diffusers is not a dependency")
        from diffusers.models.embeddings import PatchEmbed, get_2d_sincos_pos_embed

        table = get_2d_sincos_pos_embed(16, (6, 4), base_size=8, interpolation_scale=0.5)
        found = identify_grid(table.numpy())
        assert found.matches and found.step == pytest.approx((8 / 3, 4.0)), found.summary()
        embed = PatchEmbed(16, 16, 2, 1, 16, pos_embed_max_size=12, pos_embed_type="sincos")
        found = identify_grid(embed.cropped_pos_embed(12, 20)[0].numpy())
        assert found.matches and (found.height, found.width) == (6, 10), found.summary()
        assert "starts at patch (3, 1) of a larger one" in found.summary()

    def test_positional_encodings_cut_channels(self):
        torch = pytest.importorskip("torch", reason="positional-encodings needs PyTorch")
        pytest.importorskip(
            "positional_encodings", reason="positional-encodings is not a dependency"
        )
        from positional_encodings.torch_encodings import PositionalEncoding2D

        for channels in (6, 7, 10):
            table = PositionalEncoding2D(channels)(torch.zeros(1, 3, 4, channels))[0]
            found = identify_grid(table.reshape(12, channels).numpy())
            assert found.matches and found.layout == "positional_encodings", found.summary()
            assert (found.height, found.width, found.d_model) == (3, 4, channels)

    def test_positional_encodings_3d(self):
        torch = pytest.importorskip("torch", reason="positional-encodings needs PyTorch")
        pytest.importorskip(
            "positional_encodings", reason="positional-encodings is not a dependency"
        )
        from positional_encodings.torch_encodings import PositionalEncoding3D

        for channels in (3, 5, 6, 7, 8, 11, 13, 17, 18, 31):
            for shape in ((2, 3, 4), (3, 1, 5), (1, 4, 2)):
                table = PositionalEncoding3D(channels)(torch.zeros(1, *shape, channels))[0]
                values = table.reshape(-1, channels).numpy()
                ours = grid3d_encoding(shape, channels)
                np.testing.assert_allclose(values, ours, rtol=0, atol=FLOAT32_TABLE)
                found = identify_grid3d(values)
                assert found.matches and found.layout == "positional_encodings", found.summary()
                assert (found.shape, found.base, found.d_model) == (shape, 10_000.0, channels)
                assert identify_grid3d(table.numpy()).shape == shape  # (x, y, z, ch) as given
            whole = PositionalEncoding3D(channels)(torch.zeros(1, 2, 3, 4, channels)).numpy()
            assert identify_grid3d(whole).shape == (2, 3, 4)  # its output as it is

    def test_diffusers_3d(self):
        pytest.importorskip("torch", reason="diffusers needs PyTorch")
        pytest.importorskip("diffusers", reason="diffusers is not a dependency")
        from diffusers.models.embeddings import get_3d_sincos_pos_embed

        # CogVideoX's scales (spatial 1.875, temporal 1) among others; (width, height) order.
        for embed_dim, (width, height), frames, spatial, temporal in (
            (16, (4, 3), 5, 1.0, 1.0),
            (32, (6, 4), 3, 1.875, 1.0),
            (64, (5, 5), 4, 2.0, 0.5),
        ):
            table = get_3d_sincos_pos_embed(embed_dim, (width, height), frames, spatial, temporal)
            values = table.numpy().reshape(-1, embed_dim)
            step = (1 / temporal, 1 / spatial, 1 / spatial)
            shape = (frames, height, width)
            ours = grid3d_encoding(shape, embed_dim, layout="diffusers", step=step)
            np.testing.assert_allclose(values, ours, rtol=0, atol=FLOAT32_TABLE)
            found = identify_grid3d(values)
            assert found.matches and found.layout == "diffusers", found.summary()
            assert (found.shape, found.base) == (shape, 10_000.0)
            assert found.step == pytest.approx(step, rel=1e-12)

    def test_patchtst(self):
        pytest.importorskip("torch", reason="transformers' PatchTST needs PyTorch")
        transformers = pytest.importorskip(
            "transformers", minversion="5", reason="transformers is not a dependency"
        )
        from transformers.models.patchtst.modeling_patchtst import PatchTSTPositionalEncoding

        config = transformers.PatchTSTConfig(d_model=32, positional_encoding_type="sincos")
        table = PatchTSTPositionalEncoding._init_pe(config, 20).detach().numpy()
        found = identify_encoding(table)
        assert found.matches and found.normalization.startswith("transformers' PatchTST")
