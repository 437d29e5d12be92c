"""3-D encodings (positional-encodings PositionalEncoding3D): grid3d_encoding against the
library's formula transcribed in NumPy and its stored tables, and identify_grid3d.

The live test that calls the installed library is ``TestInstalled::test_positional_encodings_3d``
in test_library_outputs.py (skipped, with the reason, where it does not install).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pe_core import (
    GRID3D_LAYOUTS,
    grid3d_encoding,
    grid_encoding,
    identify_grid3d,
    sinusoidal_encoding,
)
from tests import DATA

STORED = json.loads((DATA / "library_tables.json").read_text())
ARRAYS = np.load(DATA / "library_tables.npz")
#: A float32 table's difference from the exact one at indices below 16 (rounding, and the
#: float32 angles' error 16 * 6e-8).
FLOAT32_AT_SMALL_POSITIONS = 1e-6


def positional_encodings_3d(x, y, z, channels):
    """positional-encodings 6.0.3 PositionalEncoding3D.forward on a (1, x, y, z, channels)
    input, transcribed from its torch code in NumPy float64: ``channels = int(np.ceil(channels
    / 6) * 2)`` (then made even), ``inv_freq = 1 / 10000 ** (arange(0, channels, 2) /
    channels)``, ``get_emb`` stacks sin and cos on a last axis and flattens it (interleaved),
    the x, y and z blocks written in that order into a ``3 * channels`` table, cut to the
    original channels."""
    org_channels = channels
    channels = int(np.ceil(channels / 6) * 2)
    if channels % 2:
        channels += 1
    inv_freq = 1.0 / (10000 ** (np.arange(0, channels, 2, dtype=np.float64) / channels))

    def get_emb(sin_inp):
        return np.stack((np.sin(sin_inp), np.cos(sin_inp)), axis=-1).reshape(
            *sin_inp.shape[:-1], -1
        )

    emb_x = get_emb(np.einsum("i,j->ij", np.arange(x, dtype=np.float64), inv_freq))
    emb_y = get_emb(np.einsum("i,j->ij", np.arange(y, dtype=np.float64), inv_freq))
    emb_z = get_emb(np.einsum("i,j->ij", np.arange(z, dtype=np.float64), inv_freq))
    emb = np.zeros((x, y, z, channels * 3))
    emb[:, :, :, :channels] = emb_x[:, None, None]
    emb[:, :, :, channels : 2 * channels] = emb_y[:, None]
    emb[:, :, :, 2 * channels :] = emb_z
    return emb[..., :org_channels].reshape(x * y * z, org_channels)


class TestLiteral:
    def test_six_channels(self):
        # Each axis 2 columns (one pair, w = 1): token (1, 1, 1) is (sin 1, cos 1) three times.
        table = grid3d_encoding((2, 2, 2), 6, base=100.0)
        s, c = np.sin(1.0), np.cos(1.0)
        np.testing.assert_allclose(table[7], [s, c, s, c, s, c], rtol=0, atol=1e-15)
        np.testing.assert_allclose(table[0], [0, 1, 0, 1, 0, 1], rtol=0, atol=0)

    def test_seven_channels_cut_y_and_drop_z(self):
        # 2 * ceil(7 / 6) = 4 columns per axis (w = 1 and 100**(-1/2) = 0.1); 12 cut to 7: x
        # whole, y's sin(w_1) alone, z none. Token (1, 2, 1) is row (1 * 2 + 2) * 2 + 1 = 9...
        table = grid3d_encoding((2, 3, 2), 7, base=100.0)
        i, j = 1.0, 2.0
        expected = [np.sin(i), np.cos(i), np.sin(i / 10), np.cos(i / 10)]
        expected += [np.sin(j), np.cos(j), np.sin(j / 10)]
        np.testing.assert_allclose(table[(1 * 3 + 2) * 2 + 1], expected, rtol=0, atol=1e-15)
        # ...and z, cut away, leaves each pair of rows equal.
        np.testing.assert_array_equal(table[0::2], table[1::2])


class TestAgainstTheLibrary:
    @pytest.mark.parametrize("channels", [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 17, 18, 25, 32])
    @pytest.mark.parametrize("shape", [(2, 3, 4), (1, 5, 2), (3, 1, 1), (4, 4, 4)])
    def test_formula(self, channels, shape):
        ours = grid3d_encoding(shape, channels)
        np.testing.assert_allclose(
            ours, positional_encodings_3d(*shape, channels), rtol=0, atol=1e-12
        )

    @pytest.mark.parametrize(
        "case",
        STORED["positional_encodings_3d"],
        ids=lambda c: f"{c['channels']}ch-{c['x']}x{c['y']}x{c['z']}",
    )
    def test_stored_tables(self, case):
        """positional-encodings 6.0.3's own output (torch, float32), stored."""
        channels, shape = case["channels"], (case["x"], case["y"], case["z"])
        table = ARRAYS[case["table"]].reshape(-1, channels)
        ours = grid3d_encoding(shape, channels)
        np.testing.assert_allclose(table, ours, rtol=0, atol=FLOAT32_AT_SMALL_POSITIONS)
        found = identify_grid3d(table)
        assert found.matches and found.layout == "positional_encodings", found.summary()
        assert (found.shape, found.base, found.d_model) == (shape, 10_000.0, channels)


class TestIdentify:
    @pytest.mark.parametrize("channels", [3, 4, 5, 7, 8, 9, 10, 11, 13, 14, 16, 17, 19, 24])
    @pytest.mark.parametrize("shape", [(2, 3, 4), (3, 1, 5), (1, 4, 2)])
    def test_cut_channels(self, channels, shape):
        found = identify_grid3d(grid3d_encoding(shape, channels, dtype=np.float32))
        assert found.matches and found.shape == shape, found.summary()
        width = 2 * -(-channels // 6)
        assert found.widths == (width,) * 3 and found.truncated == (channels % 6 != 0)
        assert found.kept == tuple(max(0, min(width, channels - k * width)) for k in range(3))
        if channels % 6:
            assert f"cut to its first {channels} of {3 * width} columns" in found.summary()
        assert found.base_determined == (width > 2)
        assert found.base == 10_000.0

    @pytest.mark.parametrize("base", [100.0, 500.0, 1e6])
    @pytest.mark.parametrize("channels", [12, 13, 20])
    def test_other_bases(self, base, channels):
        found = identify_grid3d(grid3d_encoding((3, 4, 5), channels, base=base, dtype="float16"))
        assert found.matches and (found.base, found.shape) == (base, (3, 4, 5)), found.summary()
        assert found.precision.words == "float16 rounding"

    def test_a_lone_sine_tells_the_base(self):
        # x is one token and z cut away: only y's sin(j w_1), its pair's cosine cut, holds w_1.
        found = identify_grid3d(grid3d_encoding((1, 4, 2), 7, base=100.0, dtype="float32"))
        assert found.matches and found.base_determined, found.summary()
        assert (found.base, found.shape, found.kept) == (100.0, (1, 4, 2), (4, 3, 0))

    def test_four_dimensional_input_gives_the_shape(self):
        table = grid3d_encoding((2, 3, 4), 12).reshape(2, 3, 4, 12)
        found = identify_grid3d(table)
        assert found.matches and found.shape == (2, 3, 4)
        assert not identify_grid3d(table.reshape(3, 2, 4, 12)).matches
        assert identify_grid3d(table[None]).shape == (2, 3, 4)  # the library's batch of one

    def test_an_axis_cut_away_is_named(self):
        found = identify_grid3d(grid3d_encoding((2, 3, 4), 8))
        assert found.matches and found.kept == (4, 4, 0), found.summary()
        assert "z is cut away" in found.summary()
        assert "the size of z is read from the repeated rows" in found.summary()
        whole = identify_grid3d(grid3d_encoding((2, 3, 4), 12)).summary()
        assert "cut" not in whole and "repeated rows" not in whole

    def test_one_frequency_names_no_base(self):
        found = identify_grid3d(grid3d_encoding((2, 3, 4), 6))
        assert found.matches and not found.base_determined
        assert "any base (only the first frequency, w_0 = 1, varies" in found.summary()
        # 13 channels give each axis 3 frequencies, but only z (1 column of 6 kept) varies.
        found = identify_grid3d(grid3d_encoding((1, 1, 5), 13))
        assert found.matches and not found.base_determined, found.summary()

    @pytest.mark.parametrize(
        "table",
        [
            grid_encoding(3, 4, 16),  # a 2-D table
            sinusoidal_encoding(24, 12),  # a 1-D one
            grid3d_encoding((2, 3, 4), 12) * 0.5,
        ],
        ids=["2-D", "1-D", "halved"],
    )
    def test_other_tables_are_no_match(self, table):
        found = identify_grid3d(table)
        assert not found.matches and found.summary().startswith("no 3-D layout")

    def test_one_wrong_token_is_no_match(self):
        table = grid3d_encoding((2, 3, 4), 12)
        table[13, 9] += 0.01
        assert not identify_grid3d(table).matches


class TestArguments:
    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"shape": (2, 3)}, ValueError, r"shape must be an \(x, y, z\) tuple"),
            ({"shape": 8}, ValueError, r"shape must be an \(x, y, z\) tuple"),
            ({"shape": (2, 0, 3)}, ValueError, r"shape\[1\] must be a positive integer"),
            ({"shape": (2, 3, 1.5)}, TypeError, r"shape\[2\] must be a positive integer"),
            ({"d_model": 0}, ValueError, "d_model must be a positive integer"),
            ({"layout": "mae"}, ValueError, "layout must be one of 'positional_encodings'"),
            ({"base": 0.0}, ValueError, "base"),
            ({"shape": (2**12, 2**12, 2**12)}, ValueError, "memory budget"),
        ],
    )
    def test_bad_arguments_are_named(self, kwargs, error, message):
        arguments = {"shape": (2, 3, 4), "d_model": 12} | kwargs
        with pytest.raises(error, match=message):
            grid3d_encoding(**arguments)

    @pytest.mark.parametrize(
        ("matrix", "message"),
        [
            (np.zeros((4, 4, 4)), "must be 2-D .*, 4-D .* or 5-D with a batch of 1"),
            (np.zeros((2, 2, 2, 2, 4)), "pass one batch element"),
            (np.zeros((8, 2)), "matrix must have at least 3 columns"),
            (np.full((8, 4), np.nan), "matrix must be finite"),
        ],
    )
    def test_identify_refuses_what_cannot_be_a_volume(self, matrix, message):
        with pytest.raises(ValueError, match=message):
            identify_grid3d(matrix)


def test_the_layouts_name_their_libraries():
    layout = GRID3D_LAYOUTS["positional_encodings"]
    assert layout.describe().count("interleaved") == 3
    assert any("PositionalEncoding3D" in library for library in layout.libraries)
    layout = GRID3D_LAYOUTS["diffusers"]
    assert layout.describe() == "[sin x | cos x | sin z | cos z | sin y | cos y]"
    assert any("get_3d_sincos_pos_embed" in library for library in layout.libraries)


def diffusers_3d(embed_dim, spatial_size, temporal_size, spatial_scale=1.0, temporal_scale=1.0):
    """diffusers 0.42 ``get_3d_sincos_pos_embed`` transcribed in NumPy float64 (its torch code
    forms the coordinates in float32, ``arange(n, dtype=float32) / scale``, and the rest in
    float64): a quarter of the columns encodes the frame (``get_1d_sincos_pos_embed_from_grid``,
    ``[sin | cos]``, ``omega = 1 / 10000**(arange(D/2) / (D/2))``), the other three quarters
    ``get_2d_sincos_pos_embed_from_grid`` of ``meshgrid(grid_w, grid_h, indexing="xy")``: the
    column's block, then the row's. Returns the ``[T, H*W, D]`` table flattened."""
    width, height = spatial_size

    def one_d(dim, pos):
        omega = 1.0 / 10000 ** (np.arange(dim // 2, dtype=np.float64) / (dim / 2.0))
        out = np.outer(pos.astype(np.float64), omega)
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)

    grid_h = np.arange(height, dtype=np.float32) / np.float32(spatial_scale)
    grid_w = np.arange(width, dtype=np.float32) / np.float32(spatial_scale)
    grid = np.stack(np.meshgrid(grid_w, grid_h, indexing="xy")).reshape(2, -1)
    spatial_dim = 3 * embed_dim // 4
    spatial = np.concatenate(
        [one_d(spatial_dim // 2, grid[0]), one_d(spatial_dim // 2, grid[1])], axis=1
    )
    grid_t = np.arange(temporal_size, dtype=np.float32) / np.float32(temporal_scale)
    temporal = one_d(embed_dim // 4, grid_t)
    table = np.concatenate(
        [
            np.repeat(temporal[:, None], height * width, axis=1),
            np.repeat(spatial[None], temporal_size, axis=0),
        ],
        axis=-1,
    )
    return table.reshape(-1, embed_dim)


class TestDiffusers:
    """diffusers ``get_3d_sincos_pos_embed`` (CogVideoX): frames x, rows y, columns z."""

    @pytest.mark.parametrize(
        ("embed_dim", "spatial", "frames", "spatial_scale", "temporal_scale"),
        [(16, (4, 3), 5, 1.0, 1.0), (32, (6, 4), 3, 1.875, 1.0), (64, (5, 5), 4, 2.0, 0.5)],
    )
    def test_transcribed_formula(self, embed_dim, spatial, frames, spatial_scale, temporal_scale):
        width, height = spatial
        theirs = diffusers_3d(embed_dim, spatial, frames, spatial_scale, temporal_scale)
        step = (1 / temporal_scale, 1 / spatial_scale, 1 / spatial_scale)
        ours = grid3d_encoding((frames, height, width), embed_dim, layout="diffusers", step=step)
        np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-6)  # float32 coordinates
        found = identify_grid3d(theirs)
        assert found.matches and found.layout == "diffusers", found.summary()
        assert found.shape == (frames, height, width)
        assert found.step == pytest.approx(step, rel=1e-12)
        if spatial_scale != 1 or temporal_scale != 1:
            scales = (temporal_scale, spatial_scale, spatial_scale)
            assert "here ({:g}, {:g}, {:g})".format(*scales) in found.summary()

    def test_literal_row(self):
        # D = 16: frame 4 columns (w = 1, 1/100), column 6 and row 6 (w = 1, 10000**(-1/3),
        # 10000**(-2/3)). Token (frame 1, row 2, column 3):
        table = grid3d_encoding((2, 3, 4), 16, layout="diffusers")
        w = 10_000.0 ** (-np.arange(3) / 3)
        expected = np.concatenate(
            [
                [np.sin(1.0), np.sin(0.01), np.cos(1.0), np.cos(0.01)],
                np.sin(3 * w),
                np.cos(3 * w),
                np.sin(2 * w),
                np.cos(2 * w),
            ]
        )
        np.testing.assert_allclose(table[(1 * 3 + 2) * 4 + 3], expected, rtol=0, atol=1e-15)

    def test_embed_dim_must_be_a_multiple_of_16(self):
        with pytest.raises(ValueError, match=r"d_model must be a multiple of 16 .* 'diffusers'"):
            grid3d_encoding((2, 3, 4), 24, layout="diffusers")
        # 24 columns cannot be diffusers' table: positional-encodings' is the one found.
        found = identify_grid3d(grid3d_encoding((2, 3, 4), 24))
        assert found.layout == "positional_encodings"
