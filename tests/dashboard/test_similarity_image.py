"""The similarity image's payload: the matrix to the float32 digit, the colour scale, the
hover's positions, the ticks and the clicked offset's diagonals, decoded as the browser reads
them (the drawing itself is checked in Chromium, tests/browser)."""

from io import BytesIO

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from PIL import Image

import pe_core
from dashboard import encoding_image, similarity_image


def _payload(matrix, positions, kind="cosine"):
    return similarity_image.payload(matrix, positions=positions, kind=kind, subtitle="s")


@pytest.mark.parametrize("kind", ["cosine", "dot", "distance"])
def test_the_matrix_arrives_as_its_float32_values(kind):
    positions = np.arange(0, 2048, 4)
    matrix = pe_core.similarity_matrix(positions, 512, kind=kind).astype(np.float32)
    data = _payload(matrix, positions, kind)
    header, values = similarity_image.decode(data)
    assert_array_equal(values, matrix)  # exactly: the hover reads these values
    assert header["positions"] == positions.tolist()
    assert header["title"] == similarity_image.TITLES[kind] + " between positions"
    # Constant along its diagonals, the default matrix compresses to a few kilobytes (the
    # Plotly heatmap it replaces sent 1.48 MB).
    assert len(data) < 40_000


def test_an_unpaired_matrix_is_sent_whole():
    positions = np.arange(300)
    matrix = pe_core.similarity_matrix(positions, 7).astype(np.float32)  # not Toeplitz
    assert_array_equal(similarity_image.decode(_payload(matrix, positions))[1], matrix)


def test_cosine_spans_minus_one_to_one_and_other_measures_their_data():
    matrix = np.array([[3.0, 0.5], [0.5, 3.0]], dtype=np.float32)
    cosine, _ = similarity_image.decode(_payload(matrix / 3, np.arange(2)))
    assert (cosine["low"], cosine["high"]) == (-1.0, 1.0)
    assert cosine["palette"] == encoding_image.PALETTE.ravel().tolist()
    assert cosine["paletteDark"] == encoding_image.PALETTE_DARK.ravel().tolist()
    distance, _ = similarity_image.decode(_payload(matrix, np.arange(2), "distance"))
    assert (distance["low"], distance["high"]) == (0.5, 3.0)
    assert (
        distance["palette"] == distance["paletteDark"] == similarity_image.VIRIDIS.ravel().tolist()
    )
    assert [text for _, text in distance["valueTicks"]] == ["0.5", "1", "1.5", "2", "2.5", "3"]
    assert distance["valueTicks"][0][0] == 0.0 and distance["valueTicks"][-1][0] == 1.0
    assert "from 0.5 (dark purple) to 3 (yellow)" in distance["description"]


def test_levels_put_minus_one_zero_and_one_where_the_heatmap_does():
    # Cosine shares the encoding heatmap's scale: -1, 0 and 1 at levels 0, 127 and 254.
    levels = similarity_image.levels(np.array([[-1.0, 0.0, 1.0]]), "cosine")
    assert levels.tolist() == encoding_image.gray_levels(np.array([[-1.0, 0.0, 1.0]])).tolist()
    # Another measure: its lowest value at 0, its highest at 254; one value: the middle.
    assert similarity_image.levels(np.array([[2.0, 4.0, 3.0]]), "dot").tolist() == [[0, 254, 127]]
    assert similarity_image.levels(np.zeros((1, 1)), "distance").tolist() == [[127]]


def test_the_png_download_is_the_drawn_colours():
    matrix = np.array([[0.0, 1.0], [1.0, 0.0]])
    image = Image.open(BytesIO(similarity_image.png(matrix, "distance"))).convert("RGB")
    assert [list(image.getpixel((x, 0))) for x in range(2)] == [
        similarity_image.VIRIDIS[0].tolist(),
        similarity_image.VIRIDIS[254].tolist(),
    ]


def test_one_position_has_one_tick_and_a_point_range():
    header, values = similarity_image.decode(_payload(np.zeros((1, 1)), np.arange(1), "distance"))
    assert values.shape == (1, 1)
    assert header["ticks"] == [[0.5, "0"]]
    assert header["valueTicks"] == [[0.5, "0"]]


def test_ticks_at_round_positions_at_their_cells():
    positions = np.arange(0, 2048, 4)  # sampled: every 4th position
    # Position 500 is cell 125 (positions 500 .. 503), drawn at its centre.
    assert similarity_image.position_ticks(positions) == [
        (0.5, "0"),
        (125.5, "500"),
        (250.5, "1,000"),
        (375.5, "1,500"),
        (500.5, "2,000"),
    ]


def test_the_clicked_offset_is_two_diagonals_over_the_shown_span():
    positions = np.arange(100, 200, 4)  # a window of sampled positions: 100 .. 196
    lines = similarity_image.offset_diagonals(positions, 30)
    # y = x - 30 and y = x + 30 from the first position shown to the last, in cells
    # (position p at cell (p - 100) / 4 + 0.5).
    cell = lambda p: (p - 100) / 4 + 0.5  # noqa: E731
    assert lines == [
        [cell(130), cell(100), cell(196), cell(166)],
        [cell(100), cell(130), cell(166), cell(196)],
    ]
    assert similarity_image.offset_diagonals(positions, 0) == [[0.5, 0.5, 24.5, 24.5]]
    # Nothing clicked, or farther apart than the shown positions: no line.
    assert similarity_image.offset_diagonals(positions, None) == []
    assert similarity_image.offset_diagonals(positions, 97) == []


def test_marking_an_offset_changes_the_header_only():
    positions = np.arange(50)
    data = _payload(pe_core.similarity_matrix(positions, 16).astype(np.float32), positions)
    marked = similarity_image.mark_offset(data, 10)
    header, values = similarity_image.decode(marked)
    assert header["diagonals"] == similarity_image.offset_diagonals(positions, 10)
    assert len(header["diagonals"]) == 2
    assert_array_equal(values, similarity_image.decode(data)[1])
    assert (
        similarity_image.decode(similarity_image.mark_offset(marked, None))[0]
        == (similarity_image.decode(data)[0])
    )
