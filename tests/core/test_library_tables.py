"""The tables real libraries build, reproduced by a convention and recognised by identify.

Literal tables in ``data/convention_reference.json`` were computed once with the libraries' own
code (its ``sources`` key names the versions): transformers' MusicGen ``get_embedding`` and
diffusers' ``get_timestep_embedding`` in every combination of ``flip_sin_to_cos`` and
``downscale_freq_shift``. Both compute in float32, so they differ from the exact encoding by
their arithmetic: at positions below 16 at most 16 * |error of w| + float32's rounding, which
the tolerance 1e-5 bounds. Transcriptions of the other libraries' formulas are in float64 and
agree with pe_core to 1e-12 (NumPy's ``exp`` and ``**`` differ by an ulp of the frequency).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from pe_core import (
    CONVENTIONS,
    Convention,
    Precision,
    PrecisionKind,
    identify_encoding,
    sinusoidal_encoding,
)
from tests import DATA

REFERENCE = json.loads((DATA / "convention_reference.json").read_text())
FLOAT32_ARITHMETIC = 1e-5

#: diffusers' (flip_sin_to_cos, downscale_freq_shift) -> the convention that builds its table.
DIFFUSERS = {
    (False, 1): "tensor2tensor",
    (True, 1): "musicgen",
    (True, 0): "diffusion",
    (False, 0): None,  # [sin | cos] with base^(-i/h): "split" at even d_model, a variant at odd
}


def _library_convention(flip: bool, shift: int) -> Convention:
    name = DIFFUSERS[(flip, shift)]
    if name is not None:
        return CONVENTIONS[name]
    return dataclasses.replace(CONVENTIONS["diffusion"], name="diffusion, sin first", first="sin")


class TestMusicGen:
    @pytest.mark.parametrize("case", REFERENCE["musicgen"], ids=lambda c: f"d{c['d_model']}")
    def test_table_is_the_musicgen_convention(self, case):
        table = np.array(case["table"])
        ours = sinusoidal_encoding(16, case["d_model"], convention="musicgen")
        np.testing.assert_allclose(ours, table, rtol=0, atol=FLOAT32_ARITHMETIC)
        # ...and no other convention: tensor2tensor has the same numbers in other columns.
        other = sinusoidal_encoding(16, case["d_model"], convention="tensor2tensor")
        assert np.max(np.abs(other - table)) > 0.5

    @pytest.mark.parametrize("case", REFERENCE["musicgen"], ids=lambda c: f"d{c['d_model']}")
    def test_identified(self, case):
        found = identify_encoding(np.array(case["table"], dtype=np.float32))
        assert found.matches and found.convention == "musicgen", found.summary()
        assert (found.base, found.start, found.step) == (10_000.0, 0.0, 1)


class TestDiffusersTimestepEmbedding:
    @pytest.mark.parametrize(
        "case",
        REFERENCE["diffusers"],
        ids=lambda c: (
            f"d{c['d_model']}-flip{c['flip_sin_to_cos']}-shift{c['downscale_freq_shift']}"
        ),
    )
    def test_every_flip_and_shift_is_a_convention(self, case):
        convention = _library_convention(case["flip_sin_to_cos"], case["downscale_freq_shift"])
        table = np.array(case["table"])
        ours = sinusoidal_encoding(16, convention.bank(case["d_model"], 10_000.0))
        np.testing.assert_allclose(ours, table, rtol=0, atol=FLOAT32_ARITHMETIC)

    @pytest.mark.parametrize(
        "case",
        [
            c
            for c in REFERENCE["diffusers"]
            if DIFFUSERS[c["flip_sin_to_cos"], c["downscale_freq_shift"]]
        ],
        ids=lambda c: (
            f"d{c['d_model']}-flip{c['flip_sin_to_cos']}-shift{c['downscale_freq_shift']}"
        ),
    )
    def test_identified(self, case):
        name = DIFFUSERS[case["flip_sin_to_cos"], case["downscale_freq_shift"]]
        found = identify_encoding(np.array(case["table"], dtype=np.float32))
        assert found.matches, found.summary()
        assert (found.start, found.step) == (0.0, 1)
        # At even d_model "diffusion" (base^(-i/h)) has the paper's frequencies: the same table
        # may be named by either, and the other is listed as the same table.
        assert found.convention == name or any(name in note for note in found.equivalents)

    def test_sin_first_shift_0_is_split_at_even_d_model(self):
        variant = _library_convention(False, 0)
        for d_model in (6, 16, 512):
            assert variant.bank(d_model, 10_000.0) == dataclasses.replace(
                CONVENTIONS["split"], name="x"
            ).bank(d_model, 10_000.0)

    @pytest.mark.parametrize("shift", [0.0, 0.25, 0.5, 1.0])
    @pytest.mark.parametrize("d_model", [4, 9, 64])
    def test_any_shift_against_the_formula_as_diffusers_writes_it(self, shift, d_model):
        """diffusers models/embeddings.py get_timestep_embedding, transcribed in float64:
        exponent = -log(max_period) * arange(half_dim) / (half_dim - downscale_freq_shift)."""
        half_dim, positions = d_model // 2, np.arange(0.0, 1000.0, 37.0)
        exponent = -math.log(10_000) * np.arange(half_dim) / (half_dim - shift)
        angles = positions[:, None] * np.exp(exponent)[None, :]
        table = np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)
        if d_model % 2 == 1:
            table = np.pad(table, ((0, 0), (0, 1)))
        convention = dataclasses.replace(CONVENTIONS["tensor2tensor"], shift=shift)
        ours = sinusoidal_encoding(positions, convention.bank(d_model, 10_000.0))
        np.testing.assert_allclose(ours, table, rtol=0, atol=1e-12)


def _diffusers_timestep_embedding(timesteps, embedding_dim, flip, shift, scale):
    """diffusers models/embeddings.py get_timestep_embedding, transcribed in float64: the angles
    are ``scale * timesteps[:, None] * exp(exponent)``."""
    half_dim = embedding_dim // 2
    exponent = -math.log(10_000) * np.arange(half_dim) / (half_dim - shift)
    emb = scale * (np.asarray(timesteps, dtype=np.float64)[:, None] * np.exp(exponent)[None, :])
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)
    if flip:
        emb = np.concatenate([emb[:, half_dim:], emb[:, :half_dim]], axis=-1)
    if embedding_dim % 2 == 1:
        emb = np.pad(emb, ((0, 0), (0, 1)))
    return emb


class TestDiffusersScale:
    """Issue 12: diffusers' ``scale`` multiplies the angles, so the rows are positions
    ``scale * t``: identify reads the spacing between rows from the pairs' phases (pair 0 turns
    by ``scale`` radians a row, aliased beyond pi; the slower pairs are not) and reports it."""

    @pytest.mark.parametrize("case", REFERENCE["diffusers_scale"], ids=lambda c: str(c["scale"]))
    def test_literal_tables(self, case):
        table = np.array(case["table"], dtype=np.float32)
        n = table.shape[0]
        spacing = case["scale"] / 15 if "/ 15" in case["timesteps"] else case["scale"]
        found = identify_encoding(table)
        assert found.matches, found.summary()
        assert found.convention == "diffusion" and found.base == 10_000.0
        assert (found.start, found.step) == (0.0, spacing)
        assert found.precision == Precision(PrecisionKind.COMPUTED, format="float32")
        assert f"positions from 0 to {spacing * (n - 1):,.6g}" in found.summary()
        if spacing != 1:
            assert f"in steps of {spacing:.6g}" in found.summary()

    @pytest.mark.parametrize(
        ("timesteps", "scale"),
        [
            (np.arange(64) / 63, 1000.0),  # QwenImage, AuraFlow: Timesteps(..., scale=1000)
            (np.arange(100) / 99, 1.0),  # scale 1 on t in [0, 1]: rows 1/99 apart
            (np.arange(50), 0.25),
            (np.arange(30), 7.0),
            (np.arange(200)[::-1], 3.0),  # decreasing
        ],
    )
    @pytest.mark.parametrize(("flip", "shift"), [(True, 0), (False, 1), (True, 1)])
    @pytest.mark.parametrize("dtype", [np.float64, np.float32])
    def test_transcribed(self, timesteps, scale, flip, shift, dtype):
        table = _diffusers_timestep_embedding(timesteps, 64, flip, shift, scale).astype(dtype)
        found = identify_encoding(table)
        assert found.matches, found.summary()
        assert CONVENTIONS[found.convention] == _library_convention(flip, shift)
        positions = scale * timesteps
        assert found.start == pytest.approx(positions[0], abs=1e-9)
        assert found.step == pytest.approx(positions[1] - positions[0], rel=1e-12)

    def test_consecutive_positions_are_a_step_of_one(self):
        found = identify_encoding(sinusoidal_encoding(np.arange(5, 300), 32))
        assert found.step == 1 and "in steps of" not in found.summary()

    def test_a_repeated_row_is_no_spacing(self):
        # The (1, L, d) buffer sliced on the wrong axis: one position on every row.
        table = np.tile(sinusoidal_encoding([64], 32), (20, 1))
        found = identify_encoding(table)
        assert found.step == 1 and not found.matches


def test_glide_timestep_embedding_is_the_diffusion_convention():
    """OpenAI guided-diffusion / GLIDE nn.py ``timestep_embedding`` (and CompVis ldm's copy),
    transcribed in float64: freqs = exp(-log(max_period) * arange(half) / half),
    cat([cos(args), sin(args)]), a zero column for odd dim."""
    for dim in (7, 8, 320):
        half, timesteps = dim // 2, np.array([0.0, 1.0, 10.0, 999.0, 0.5])
        freqs = np.exp(-math.log(10_000) * np.arange(half) / half)
        args = timesteps[:, None] * freqs[None]
        embedding = np.concatenate([np.cos(args), np.sin(args)], axis=-1)
        if dim % 2:
            embedding = np.concatenate([embedding, np.zeros_like(embedding[:, :1])], axis=-1)
        ours = sinusoidal_encoding(timesteps, dim, convention="diffusion")
        np.testing.assert_allclose(ours, embedding, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"layout": "rows"}, "layout must be"),
        ({"spacing": "endpoints"}, "spacing must be"),
        ({"odd_column": "cos"}, "odd_column must be"),
        ({"first": "tan"}, "first must be"),
        ({"layout": "interleaved"}, "the cos half first needs the halves layout"),
        ({"shift": 1.5}, r"shift must be a number in \[0, 1\]"),
        ({"shift": float("nan")}, r"shift must be a number in \[0, 1\]"),
        ({"shift": "1"}, r"shift must be a number in \[0, 1\]"),
    ],
)
def test_a_convention_names_the_field_it_refuses(changes, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(CONVENTIONS["musicgen"], **changes)


def test_cos_first_is_a_permutation_of_sin_first():
    for d_model in (1, 2, 5, 16):
        cos_first = CONVENTIONS["musicgen"].bank(d_model, 500.0)
        sin_first = CONVENTIONS["tensor2tensor"].bank(d_model, 500.0)
        permutation = cos_first.layout.permutation_from(sin_first.layout)
        np.testing.assert_array_equal(
            sinusoidal_encoding(9, cos_first), sinusoidal_encoding(9, sin_first)[:, permutation]
        )


def _fairseq_get_embedding(num_embeddings, embedding_dim, padding_idx=None):
    """fairseq modules/sinusoidal_positional_embedding.py ``get_embedding`` (and its copies in
    transformers' M2M100, XGLM, NLLB-MoE...), transcribed in float64."""
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = np.exp(np.arange(half_dim) * -emb)
    emb = np.arange(num_embeddings)[:, None] * emb[None, :]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=1).reshape(num_embeddings, -1)
    if embedding_dim % 2 == 1:
        emb = np.concatenate([emb, np.zeros((num_embeddings, 1))], axis=1)
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb


class TestPaddingRows:
    @pytest.mark.parametrize("embedding_dim", [16, 7, 512])
    @pytest.mark.parametrize("padding_idx", [0, 1, 5])
    def test_fairseq_table_with_its_padding_row(self, embedding_dim, padding_idx):
        table = _fairseq_get_embedding(66, embedding_dim, padding_idx)
        found = identify_encoding(table.astype(np.float32))
        assert found.matches and found.convention == "tensor2tensor", found.summary()
        assert (found.base, found.start, found.end) == (10_000.0, 0.0, 65.0)
        assert found.padding_rows == (padding_idx,)
        assert f"row {padding_idx} is all zeros (padding" in found.summary()
        # Every other row is the encoding, to float32's rounding.
        exact = sinusoidal_encoding(66, embedding_dim, convention="tensor2tensor")
        exact[padding_idx] = 0
        np.testing.assert_allclose(table, exact, rtol=0, atol=1e-12)

    @pytest.mark.parametrize("case", REFERENCE["m2m100"], ids=lambda c: f"d{c['d_model']}")
    def test_m2m100_literal_table(self, case):
        """transformers' M2M100SinusoidalPositionalEmbedding.get_embedding, run once."""
        table = np.array(case["table"], dtype=np.float32)
        found = identify_encoding(table)
        assert found.matches and found.convention == "tensor2tensor", found.summary()
        assert found.padding_rows == (case["padding_idx"],) and found.start == 0.0

    def test_an_encoding_has_no_padding_rows(self):
        for name in CONVENTIONS:
            found = identify_encoding(sinusoidal_encoding(np.arange(-5, 30), 12, convention=name))
            assert found.matches and found.padding_rows == (), (name, found.summary())
            assert "zeros" not in found.summary()

    def test_several_padding_rows_in_columns(self):
        table = sinusoidal_encoding(40, 16, convention="split")
        table[[0, 1, 2]] = 0
        found = identify_encoding(table.T)
        assert found.matches and found.transposed and found.convention == "split"
        assert found.padding_rows == (0, 1, 2)
        assert "columns 0, 1, 2 are all zeros" in found.summary()

    def test_a_zero_row_is_not_padding_when_the_rest_is_no_encoding(self):
        rng = np.random.default_rng(0)
        table = rng.standard_normal((30, 8))
        table[3] = 0
        found = identify_encoding(table)
        assert not found.matches and found.padding_rows == ()
