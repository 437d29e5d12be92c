"""The image heatmap's payload: values, palette, hover text and ticks, decoded as the browser
reads them (the drawing itself is checked in Chromium, tests/browser)."""

import numpy as np
import pytest

import pe_core
from dashboard import encoding_image, formatting


def _payload(values, first, last, columns):
    pair, role = pe_core.column_roles(8)
    w = pe_core.frequencies(8)
    freq = w[pair]
    return encoding_image.payload(
        values,
        row_first=first,
        row_last=last,
        column_numbers=columns,
        column_labels=formatting.column_labels(columns, pair, role, freq, 2 * np.pi / freq),
        title="t",
        subtitle="s",
        description="d",
    )


@pytest.fixture(scope="module")
def decoded():
    values = pe_core.sinusoidal_encoding(30, 8).astype(np.float32)
    positions = list(range(30))
    return values, *encoding_image.decode(_payload(values, positions, positions, list(range(8))))


def test_values_within_half_a_gray_level(decoded):
    values, _, shown = decoded
    assert shown.shape == values.shape
    # Half a gray level, plus the float32 rounding of the values drawn.
    np.testing.assert_allclose(shown, values, rtol=0, atol=encoding_image.VALUE_STEP / 2 + 1e-7)


def test_extremes_are_exact_levels():
    levels = encoding_image.gray_levels(np.array([[-1.0, 0.0, 1.0, 7.0, -7.0]]))
    assert levels.tolist() == [[0, 127, 254, 254, 0]]  # out of range clipped to the scale
    header_zero = encoding_image.decode(_payload(np.zeros((1, 8)), [0], [0], list(range(8))))
    assert np.all(header_zero[1] == 0.0)  # 0 reads back as exactly 0


def test_palette_is_the_diverging_scale():
    # RdBu reversed, as every [-1, 1] Plotly chart of the app: dark blue -1, dark red +1.
    assert encoding_image.PALETTE.shape == (256, 3)
    assert encoding_image.PALETTE[0].tolist() == [5, 48, 97]
    assert encoding_image.PALETTE[254].tolist() == [103, 0, 31]
    assert encoding_image.PALETTE[127].tolist() == [247, 247, 247]  # RdBu's middle at 0


def test_hover_names_pair_role_frequency_wavelength(decoded):
    _, header, _ = decoded
    assert header["columnLabels"][3] == "column 3: pair i=1, cos, ω=0.1 rad/pos, λ=62.83 pos"
    assert header["rowFirst"] == list(range(30))
    assert header["rowLast"] is None  # one position a row: the same list is not sent twice


def test_ticks_at_round_positions(decoded):
    _, header, _ = decoded
    assert [text for _, text in header["rowTicks"]] == ["0", "5", "10", "15", "20", "25"]
    assert [row for row, _ in header["rowTicks"]] == [0, 5, 10, 15, 20, 25]
    assert header["columnTicks"][0] == [0, "0"]


def test_coloured_png_is_the_palette():
    from io import BytesIO

    from PIL import Image

    levels = np.array([[0, 254]], dtype=np.uint8)
    image = Image.open(BytesIO(encoding_image.png(levels, palette=encoding_image.PALETTE))).convert(
        "RGB"
    )
    assert [list(image.getpixel((x, 0))) for x in range(2)] == [[5, 48, 97], [103, 0, 31]]


def _luminance(rgb) -> float:
    red, green, blue = (float(c) for c in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def test_dark_palette_keeps_the_meaning_on_a_dark_page():
    # Same hues (blue below 0, red above), but 0 is near the dark page (#0e1117) and the colour
    # brightens with |value|: on each side the luminance grows from 0 outwards, level by level.
    dark = encoding_image.PALETTE_DARK
    assert dark.shape == encoding_image.PALETTE.shape
    luminance = np.array([_luminance(colour) for colour in dark[:255]])
    assert luminance[127] < 50  # dark gray: the page is luminance 16
    assert np.all(np.diff(luminance[:128]) <= 0) and np.all(np.diff(luminance[127:]) >= 0)
    assert dark[0, 2] > dark[0, 0] and dark[254, 0] > dark[254, 2]  # -1 blue, +1 red
    header, _ = encoding_image.decode(_payload(np.zeros((1, 8)), [0], [0], list(range(8))))
    assert header["paletteDark"] == dark.ravel().tolist()
    assert header["palette"] == encoding_image.PALETTE.ravel().tolist()
