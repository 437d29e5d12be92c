"""2-D encodings of image patches: grid_encoding against each library's formula, identify_grid.

Each reference below is the library's function transcribed in NumPy float64 (the library and
function named), not pe_core; pe_core's values agree with them to 1e-12 (NumPy's ``**`` and
``exp`` against pe_core's correctly rounded frequencies: an ulp of w times positions below 100).
The diffusers table in ``data/convention_reference.json`` was computed once with diffusers' own
code (float32), so it agrees to float32's arithmetic, 1e-6 at these positions.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pe_core
from pe_core import (
    GRID_LAYOUTS,
    Precision,
    PrecisionKind,
    grid_encoding,
    identify_grid,
)
from tests import DATA

REFERENCE = json.loads((DATA / "convention_reference.json").read_text())


def _mae_1d(embed_dim, pos):
    """MAE util/pos_embed.py get_1d_sincos_pos_embed_from_grid."""
    omega = np.arange(embed_dim // 2, dtype=np.float64)
    omega /= embed_dim / 2.0
    omega = 1.0 / 10000**omega
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def mae_2d(embed_dim, grid_size, cls_token=False):
    """MAE util/pos_embed.py get_2d_sincos_pos_embed (grid_size an int, as MAE has it)."""
    grid_h = np.arange(grid_size, dtype=np.float32)
    grid_w = np.arange(grid_size, dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    grid = np.stack(grid, axis=0).reshape([2, 1, grid_size, grid_size])
    emb_h = _mae_1d(embed_dim // 2, grid[0])
    emb_w = _mae_1d(embed_dim // 2, grid[1])
    pos_embed = np.concatenate([emb_h, emb_w], axis=1)
    if cls_token:
        pos_embed = np.concatenate([np.zeros([1, embed_dim]), pos_embed], axis=0)
    return pos_embed


def moco_v3_2d(h, w, embed_dim, temperature=10000.0):
    """MoCo v3 vits.py VisionTransformerMoCo.build_2d_sincos_position_embedding (torch there)."""
    grid_w, grid_h = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h), indexing="ij")
    pos_dim = embed_dim // 4
    omega = np.arange(pos_dim, dtype=np.float64) / pos_dim
    omega = 1.0 / (temperature**omega)
    out_w = np.einsum("m,d->md", grid_w.flatten(), omega)
    out_h = np.einsum("m,d->md", grid_h.flatten(), omega)
    return np.concatenate([np.sin(out_w), np.cos(out_w), np.sin(out_h), np.cos(out_h)], axis=1)


def timm_2d(feat_shape, dim, temperature=10000.0, reverse_coord=False, interleave_sin_cos=False):
    """timm layers/pos_embed_sincos.py build_sincos2d_pos_embed (torch there)."""
    pos_dim = dim // 4
    bands = 1.0 / (temperature ** (np.arange(0, pos_dim, 1, dtype=np.float64) / pos_dim))
    if reverse_coord:
        feat_shape = feat_shape[::-1]
    grid = np.stack(
        np.meshgrid(*[np.arange(s, dtype=np.float64) for s in feat_shape], indexing="ij")
    )
    grid = grid.reshape(2, -1).T
    pos2 = grid[:, :, None] * bands[None, None, :]
    stack_dim = 2 if interleave_sin_cos else 1
    return np.stack([np.sin(pos2), np.cos(pos2)], axis=stack_dim).reshape(grid.shape[0], -1)


def positional_encodings_2d(x, y, channels, interleave=True):
    """positional-encodings (tatp22) PositionalEncoding2D.forward on a (1, x, y, channels)
    input (torch there): get_emb interleaves sin and cos since 5.1 (torch.stack(...,
    dim=-1).flatten(-2, -1)); up to 5.0 it concatenated them (torch.cat)."""
    half = int(np.ceil(channels / 4) * 2)
    inv_freq = 1.0 / (10000 ** (np.arange(0, half, 2, dtype=np.float64) / half))

    def get_emb(sin_inp):
        if interleave:
            return np.stack((np.sin(sin_inp), np.cos(sin_inp)), axis=-1).reshape(
                *sin_inp.shape[:-1], -1
            )
        return np.concatenate((np.sin(sin_inp), np.cos(sin_inp)), axis=-1)

    emb_x = get_emb(np.einsum("i,j->ij", np.arange(x, dtype=np.float64), inv_freq))[:, None]
    emb_y = get_emb(np.einsum("i,j->ij", np.arange(y, dtype=np.float64), inv_freq))
    emb = np.zeros((x, y, half * 2))
    emb[:, :, :half] = emb_x
    emb[:, :, half : 2 * half] = emb_y
    return emb[:, :, :channels].reshape(x * y, channels)


class TestAgainstLibraries:
    @pytest.mark.parametrize("grid_size", [2, 5, 14])
    @pytest.mark.parametrize("cls_token", [False, True])
    def test_mae(self, grid_size, cls_token):
        ours = grid_encoding(grid_size, grid_size, 32, layout="mae", extra_tokens=int(cls_token))
        np.testing.assert_allclose(ours, mae_2d(32, grid_size, cls_token), rtol=0, atol=1e-12)

    @pytest.mark.parametrize(("h", "w"), [(3, 5), (7, 2), (8, 8)])
    def test_moco_v3(self, h, w):
        # MoCo's token order is w-major: its grid is w rows (the outer index) of h columns.
        ours = grid_encoding(w, h, 16, layout="moco")
        np.testing.assert_allclose(ours, moco_v3_2d(h, w, 16), rtol=0, atol=1e-12)

    @pytest.mark.parametrize(("h", "w"), [(3, 5), (7, 2), (6, 6)])
    @pytest.mark.parametrize("interleave", [False, True])
    def test_timm(self, h, w, interleave):
        layout = "moco" if interleave else "timm"
        ours = grid_encoding(h, w, 24, layout=layout, base=100.0)
        theirs = timm_2d([h, w], 24, temperature=100.0, interleave_sin_cos=interleave)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
        # reverse_coord=True stacks W, H: the same layout on the transposed grid.
        reversed_grid = grid_encoding(w, h, 24, layout=layout, base=100.0)
        theirs = timm_2d([h, w], 24, 100.0, reverse_coord=True, interleave_sin_cos=interleave)
        np.testing.assert_allclose(reversed_grid, theirs, rtol=0, atol=1e-12)

    def test_diffusers_literal_table(self):
        case = REFERENCE["diffusers_2d"]
        table = np.array(case["table"])
        ours = grid_encoding(
            case["grid_size"], case["grid_size"], case["embed_dim"], extra_tokens=1
        )
        np.testing.assert_allclose(ours, table, rtol=0, atol=1e-6)
        found = identify_grid(table.astype(np.float32))
        assert found.matches and found.layout == "mae", found.summary()
        assert (found.height, found.width, found.extra_tokens) == (5, 5, 1)

    @pytest.mark.parametrize(("x", "y"), [(3, 5), (7, 2), (6, 6)])
    @pytest.mark.parametrize(
        ("interleave", "layout"), [(True, "positional_encodings"), (False, "moco")]
    )
    def test_positional_encodings_package(self, x, y, interleave, layout):
        # Its first axis x is the slow one of the flattened grid: the row.
        ours = grid_encoding(x, y, 32, layout=layout)
        theirs = positional_encodings_2d(x, y, 32, interleave=interleave)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)

    @pytest.mark.parametrize(
        ("version", "layout"), [("6.0.3", "positional_encodings"), ("4.0.0", "moco")]
    )
    def test_positional_encodings_literal_tables(self, version, layout):
        case = REFERENCE["positional_encodings_2d"][version]
        table = np.array(case["table"])
        ours = grid_encoding(case["x"], case["y"], case["channels"], layout=layout)
        np.testing.assert_allclose(ours, table, rtol=0, atol=1e-6)  # float32 arithmetic
        found = identify_grid(table.astype(np.float32))
        assert found.matches and found.layout == layout, found.summary()
        assert (found.height, found.width, found.extra_tokens) == (3, 5, 0)


def _same_columns(layout: str, d_model: int) -> list[str]:
    """The layouts that put each axis's sines and cosines in the same columns as ``layout``."""
    return [
        name
        for name, other in GRID_LAYOUTS.items()
        if all(
            np.array_equal(
                other.columns(d_model, axis), GRID_LAYOUTS[layout].columns(d_model, axis)
            )
            for axis in ("row", "column")
        )
    ]


class TestIdentifyGrid:
    @pytest.mark.parametrize("layout", list(GRID_LAYOUTS))
    @pytest.mark.parametrize(
        ("height", "width", "d_model", "extra"), [(4, 6, 16, 1), (14, 14, 64, 0), (2, 2, 4, 0)]
    )
    @pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
    def test_finds_layout_grid_and_extra_tokens(self, layout, height, width, d_model, extra, dtype):
        table = grid_encoding(
            height, width, d_model, layout=layout, extra_tokens=extra, dtype=dtype
        )
        found = identify_grid(table)
        assert found.matches, found.summary()
        # At d_model 4 an axis has one sin and one cos column: interleaved is [sin | cos].
        assert found.layout in _same_columns(layout, d_model)
        assert (found.height, found.width) == (height, width)
        assert (found.extra_tokens, found.base) == (extra, 10_000.0)
        assert GRID_LAYOUTS[found.layout].describe() in found.summary()

    def test_other_base(self):
        found = identify_grid(grid_encoding(3, 7, 32, layout="timm", base=100.0))
        assert (
            found.matches
            and found.base == 100.0
            and found.precision == Precision(PrecisionKind.EXACT)
        )

    def test_a_one_dimensional_encoding_is_no_grid(self):
        from pe_core import sinusoidal_encoding

        found = identify_grid(sinusoidal_encoding(24, 16, convention="split"))
        assert not found.matches
        assert found.summary().startswith("no 2-D layout explains this table")

    def test_a_wrong_patch_is_no_match(self):
        table = grid_encoding(4, 4, 16)
        table[9, 3] += 0.01
        assert not identify_grid(table).matches


def diffusers_2d(embed_dim, grid_size, base_size, interpolation_scale):
    """diffusers models/embeddings.py get_2d_sincos_pos_embed (output_type "pt"), transcribed
    in NumPy: the coordinates arange(n, float32) / (n / base_size) / interpolation_scale in
    float32, the rest in float64 (torch promotes the float32 grid against the float64 omega)."""
    height, width = grid_size
    grid_h = (
        np.arange(height, dtype=np.float32)
        / np.float32(height / base_size)
        / np.float32(interpolation_scale)
    )
    grid_w = (
        np.arange(width, dtype=np.float32)
        / np.float32(width / base_size)
        / np.float32(interpolation_scale)
    )
    column, row = np.meshgrid(grid_w.astype(np.float64), grid_h.astype(np.float64))
    return np.concatenate(
        [_mae_1d(embed_dim // 2, column.ravel()), _mae_1d(embed_dim // 2, row.ravel())], axis=1
    )


SCALED = json.loads((DATA / "library_tables.json").read_text())
SCALED_ARRAYS = np.load(DATA / "library_tables.npz")


class TestCoordinates:
    """Issue 36: diffusers spaces a grid's coordinates by base_size / (n * interpolation_scale)
    (PixArt, Latte, Hunyuan-DiT) and SD3 crops the middle of a larger table: grid_encoding takes
    a start and a step per axis, and identify_grid finds them."""

    def test_literal_start_and_step(self):
        table = grid_encoding(2, 2, 4, base=100.0, start=(1.0, 0.0), step=(2.0, 0.5))
        # [sin c | cos c | sin r | cos r] at one frequency per axis: rows at 1 and 3, columns
        # at 0 and 0.5.
        expected = [
            [np.sin(0.0), np.cos(0.0), np.sin(1.0), np.cos(1.0)],
            [np.sin(0.5), np.cos(0.5), np.sin(1.0), np.cos(1.0)],
            [np.sin(0.0), np.cos(0.0), np.sin(3.0), np.cos(3.0)],
            [np.sin(0.5), np.cos(0.5), np.sin(3.0), np.cos(3.0)],
        ]
        np.testing.assert_allclose(table, expected, rtol=0, atol=1e-15)

    def test_default_is_the_patch_index(self):
        np.testing.assert_array_equal(
            grid_encoding(3, 4, 16, start=0, step=(1, 1)), grid_encoding(3, 4, 16)
        )

    @pytest.mark.parametrize(
        ("grid_size", "base_size", "scale"),
        [((4, 4), 2, 1.0), ((6, 4), 8, 1.0), ((3, 5), 4, 0.5), ((8, 8), 16, 2.0), ((5, 7), 5, 1)],
    )
    def test_against_diffusers_formula(self, grid_size, base_size, scale):
        table = diffusers_2d(32, grid_size, base_size, scale)
        steps = tuple(base_size / (n * scale) for n in grid_size)
        ours = grid_encoding(*grid_size, 32, step=steps)
        # The coordinates are float32 values: up to 6e-8 * 8 radians off, as sin and cos.
        np.testing.assert_allclose(ours, table, rtol=0, atol=1e-6)
        found = identify_grid(table)
        assert found.matches and found.layout == "mae", found.summary()
        assert (found.height, found.width) == grid_size
        assert found.step == pytest.approx(steps, rel=1e-12) and found.start == (0.0, 0.0)

    @pytest.mark.parametrize(
        "case", SCALED["diffusers_2d_scaled"], ids=lambda c: str(c["grid_size"])
    )
    def test_diffusers_literal_tables(self, case):
        table = SCALED_ARRAYS[case["table"]]
        height, width = case["grid_size"]
        steps = tuple(
            case["base_size"] / (n * case["interpolation_scale"]) for n in (height, width)
        )
        found = identify_grid(table)
        assert found.matches and found.layout == "mae", found.summary()
        assert (found.height, found.width, found.base) == (height, width, 10_000.0)
        assert found.step == pytest.approx(steps, rel=1e-12) and found.start == (0.0, 0.0)
        assert "diffusers get_2d_sincos_pos_embed with base_size" in found.summary()
        if len({s * n for s, n in zip(steps, (height, width), strict=True)}) == 1:
            ratio = case["base_size"] / case["interpolation_scale"]
            assert f"base_size / interpolation_scale = {ratio:g})" in found.summary()

    @pytest.mark.parametrize(
        "case", SCALED["diffusers_patch_embed"], ids=lambda c: f"{c['height']}x{c['width']}"
    )
    def test_sd3_crop(self, case):
        table = SCALED_ARRAYS[case["table"]]
        rows, columns = case["height"] // 2, case["width"] // 2
        size = case["pos_embed_max_size"]
        step = case["base_size"] / size
        top, left = (size - rows) // 2, (size - columns) // 2
        found = identify_grid(table)
        assert found.matches and found.layout == "mae", found.summary()
        assert (found.height, found.width) == (rows, columns)
        assert found.step == pytest.approx((step, step), rel=1e-12)
        assert found.start == pytest.approx((top * step, left * step), rel=1e-12)
        assert f"starts at patch ({top}, {left}) of a larger one" in found.summary()
        assert f"(here {size} x {size})" in found.summary()
        ours = grid_encoding(rows, columns, 16, start=found.start, step=found.step)
        np.testing.assert_allclose(table, ours, rtol=0, atol=1e-6)

    def test_patch_indices_say_nothing_of_coordinates(self):
        found = identify_grid(grid_encoding(3, 4, 16))
        assert not found.scaled and "coordinates" not in found.summary()

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            (
                {"start": (0.0, 1.0, 2.0)},
                ValueError,
                r"start must be a number or a \(row, column\)",
            ),
            ({"step": float("inf")}, ValueError, "step must be finite"),
            ({"step": ("a", 1.0)}, TypeError, r"step\[0\] must be a real number"),
            ({"start": None}, TypeError, "start must be a real number"),
            ({"start": 3e38}, ValueError, r"start and step must keep the row coordinates"),
            ({"step": (1.0, 1e17)}, ValueError, r"keep the column coordinates .* step 1e\+17"),
        ],
    )
    def test_bad_coordinates_are_named(self, kwargs, error, message):
        with pytest.raises(error, match=message):
            grid_encoding(2, 3, 8, **kwargs)


class TestChannelsCut:
    """positional-encodings rounds its channels up to a multiple of 4 (each axis gets
    ``ceil(C / 4) * 2``) and keeps the first ``C`` columns of the table: the column axis,
    written last, loses what is cut."""

    def test_literal_six_channels(self):
        # Each axis at 4 columns (2 pairs, w = 1 and 1/base**(1/2)); the column axis keeps one
        # pair: [sin r, cos r, sin(r w1), cos(r w1) | sin c, cos c].
        table = grid_encoding(2, 2, 6, layout="positional_encodings", base=100.0)
        r, c = 1.0, 1.0  # the last patch
        expected = [np.sin(r), np.cos(r), np.sin(r / 10), np.cos(r / 10), np.sin(c), np.cos(c)]
        np.testing.assert_allclose(table[3], expected, rtol=0, atol=1e-15)

    @pytest.mark.parametrize("channels", [3, 5, 6, 7, 10, 18, 30])
    def test_against_the_package_formula(self, channels):
        ours = grid_encoding(4, 5, channels, layout="positional_encodings")
        theirs = positional_encodings_2d(4, 5, channels)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
        found = identify_grid(ours.astype(np.float32))
        assert found.matches and found.layout == "positional_encodings", found.summary()
        assert (found.height, found.width, found.base) == (4, 5, 10_000.0)
        assert found.truncated and found.d_model == channels
        assert f"cut to its first {channels} of {4 * -(-channels // 4)} columns" in (
            found.summary()
        )

    @pytest.mark.parametrize(
        "case",
        SCALED["positional_encodings_2d"],
        ids=lambda c: f"{c['channels']}ch-{c['x']}x{c['y']}",
    )
    def test_literal_tables(self, case):
        table = SCALED_ARRAYS[case["table"]]
        ours = grid_encoding(case["x"], case["y"], case["channels"], layout="positional_encodings")
        np.testing.assert_allclose(ours, table, rtol=0, atol=FLOAT32_AT_SMALL_POSITIONS)
        found = identify_grid(table)
        assert found.matches and found.layout == "positional_encodings", found.summary()
        assert (found.height, found.width) == (case["x"], case["y"])

    def test_a_multiple_of_4_is_not_cut(self):
        found = identify_grid(grid_encoding(3, 4, 16, layout="positional_encodings"))
        assert found.matches and not found.truncated and "cut to" not in found.summary()


#: A float32 table's difference from the exact one at positions below 16 (rounding, and the
#: float32 angles' error 16 * 6e-8).
FLOAT32_AT_SMALL_POSITIONS = 1e-6


class TestArguments:
    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"d_model": 6}, ValueError, "d_model must be a multiple of 4"),
            ({"d_model": 6, "layout": "timm"}, ValueError, "'positional_encodings' rounds it up"),
            ({"d_model": 0}, ValueError, "d_model must be a positive integer"),
            ({"height": 0}, ValueError, "height must be a positive integer"),
            ({"width": 2.0}, TypeError, "width must be a positive integer"),
            ({"layout": "vit"}, ValueError, "layout must be one of 'mae', 'moco', 'timm'"),
            ({"base": -1.0}, ValueError, "base"),
            ({"extra_tokens": -1}, ValueError, "extra_tokens must be an integer >= 0"),
            ({"extra_tokens": True}, ValueError, "extra_tokens must be an integer >= 0"),
            ({"height": 2**15, "width": 2**15}, ValueError, "memory budget"),
        ],
    )
    def test_bad_arguments_are_named(self, kwargs, error, message):
        arguments = {"height": 2, "width": 3, "d_model": 8} | kwargs
        with pytest.raises(error, match=message):
            grid_encoding(**arguments)

    @pytest.mark.parametrize(
        ("matrix", "message"),
        [
            (np.zeros((4, 4, 4)), "must be 2-D"),
            (np.zeros((8, 2)), "matrix must have a multiple of 4 columns"),
            (np.full((8, 4), np.nan), "matrix must be finite"),
            ("abc", "matrix must be"),
        ],
    )
    def test_identify_refuses_what_cannot_be_a_grid(self, matrix, message):
        with pytest.raises(ValueError, match=message):
            identify_grid(matrix)


def test_an_axis_of_one_frequency_names_no_base():
    # Found by the core fuzz on Python 3.13 (fresh-clone CI): a 6-column table whose axis
    # block read as tensor2tensor with one frequency (w_0 = 1 at every base) raised IndexError.
    table = pe_core.quantize(
        pe_core.sinusoidal_encoding(22, 6, base=1e6, convention="vaswani"), "float16"
    )
    found = pe_core.identify_grid(table)
    assert isinstance(found, pe_core.GridIdentification)
