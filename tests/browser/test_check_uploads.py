"""The Check view in a real browser: one upload of each kind of table, and pasted rows.

Each file is written the way its users make it (a float32 or float16 table saved with
``np.save``, this app's CSV download, a 2-D grid with a class token, fairseq's table with its
padding row, diffusers' scaled timesteps, a table with a known mistake, a pickle), uploaded
through the page's file input, and the verdict the page shows is checked; with
``PE_SCREENSHOTS=1`` screenshots of each land in artifacts/screenshots/.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

import pe_core
from benchmarks.harness import SCREENSHOTS, AppPage
from dashboard.config import Config
from dashboard.exports import encoding_csv
from tests import DATA
from tests.payloads import zip_bomb

pytestmark = pytest.mark.timeout(300)  # and `browser`, from the folder (tests/conftest.py)

REFERENCE = json.loads((DATA / "convention_reference.json").read_text())


def _fairseq_table() -> np.ndarray:
    """fairseq SinusoidalPositionalEmbedding.get_embedding(40, 16, padding_idx=1), in float32:
    the tensor2tensor spacing, positions from 0 in row 0, a zero row at padding_idx."""
    table = pe_core.sinusoidal_encoding(40, 16, convention="tensor2tensor").astype(np.float32)
    table[1] = 0.0
    return table


def _npz_bytes() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, a=np.zeros((4, 4)), b=np.ones((4, 4)))
    return buffer.getvalue()


def _rope_npz_bytes() -> bytes:
    """A rotary cache given to the table check: the RoPE check reads it (issue 53, case 7)."""
    cos, sin = pe_core.rope_cos_sin(64, pe_core.rope_frequencies(32))
    buffer = io.BytesIO()
    np.savez(buffer, cos=cos, sin=sin)
    return buffer.getvalue()


#: name -> (what the file holds, text the page must show). Built lazily: pe_core at call time.
KINDS = {
    "float32.npy": (
        lambda: pe_core.sinusoidal_encoding(300, 64).astype(np.float32),
        "Identified: vaswani convention, base 10000, positions from 0 to 299",
    ),
    "download.csv": (
        lambda: encoding_csv(Config(120, 24, 10_000.0, "split")),
        "Identified: split convention, base 10000, positions from 0 to 119",
    ),
    "keras_float16.npy": (
        lambda: pe_core.textbook_encoding(2000, 64, compute_dtype="float16", formula="pow").astype(
            np.float16
        ),
        "computed in float16 with the pow formula",
    ),
    "mae_grid.npy": (
        lambda: pe_core.grid_encoding(6, 8, 32, layout="mae", extra_tokens=1).astype(np.float32),
        "Identified a 2-D encoding",
    ),
    "fairseq_padding.npy": (_fairseq_table, "is all zeros (padding"),
    "diffusers_scale_1000.npy": (
        lambda: np.array(REFERENCE["diffusers_scale"][0]["table"], dtype=np.float32),
        "in steps of 66.6667",
    ),
    "inverted_frequency.npy": (
        lambda: pe_core.BUGS["inverted_frequency"].wrong_table(np.arange(200), 32, 10_000.0),
        "Likely mistake",
    ),
    "pickle.npy": (
        lambda: np.array([{"a": 1}, None], dtype=object),
        "pickles are never loaded",
    ),
    # Issue 40: the browser refused it with a bare "files are not allowed"; issue 53: the page
    # reads what the command line reads (an archive of one table too), and names the arrays
    # of one that holds several.
    "archive.npz": (_npz_bytes, "save the one table with np.save"),
    "rope_cache.npz": (_rope_npz_bytes, "a rotary (RoPE) encoding, not a sinusoidal table"),
}


def _write(tmp_path: Path, name: str) -> Path:
    build, _ = KINDS[name]
    content = build()
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        np.save(path, content, allow_pickle=content.dtype == object)
    return path


def _open_check(app: AppPage) -> None:
    app.open("check")
    app.page.get_by_text("paste rows, or pick an example to check").wait_for()


def _unexpected(app: AppPage, expected: str) -> list[str]:
    """The page's problems, but for the error box that says ``expected`` (a refused file)."""
    return [p for p in app.problems() if not (p.startswith("error alert:") and expected in p)]


def test_upload_each_kind(app: AppPage, tmp_path: Path):
    """Each kind uploaded in turn into one page, as a person checks one file after another:
    each verdict replaces the last (a page load per kind cost ten loads of the app)."""
    _open_check(app)
    main = app.page.locator('[data-testid="stMain"]')
    found = []
    for name, (_, expected) in KINDS.items():
        before, since = app.page_signature(), app.now()
        app.page.locator('input[type="file"]').set_input_files(_write(tmp_path, name))
        app.wait_settled(since, before)
        app.page.get_by_text(expected).first.wait_for()
        app.wait_quiet(800)
        text = main.inner_text()
        if name not in text:
            found.append(f"{name}: the page does not name the file")
        found += [f"{name}: {problem}" for problem in _unexpected(app, expected)]
        if "Traceback" in text:
            found.append(f"{name}: a traceback on the page")
        app.screenshot(SCREENSHOTS / f"check_upload_{name.replace('.', '_')}.png")
    assert found == []


def test_pasted_rows(app: AppPage):
    _open_check(app)
    rows = pe_core.sinusoidal_encoding(np.arange(3, 11), 8).round(6)
    text = "\n".join(",".join(f"{v:.6f}" for v in row) for row in rows)
    box = app.page.get_by_label("…or paste rows", exact=False)
    box.fill(text)
    box.press("Control+Enter")  # a text area sends its value on Ctrl+Enter or on blur
    app.page.get_by_text("positions from 3 to 10").first.wait_for()
    app.wait_quiet(800)
    assert app.problems() == []
    box.fill("0,1\n\u22121,1")
    box.press("Control+Enter")
    message = "(the character '\u2212' (MINUS SIGN))"
    app.page.get_by_text(message).first.wait_for()
    assert _unexpected(app, message) == []
    app.screenshot(SCREENSHOTS / "check_paste_error.png")


def test_a_float16_table_pasted_as_numpy_prints_it(app: AppPage):
    """Issue 53, case 1: numpy's print of a float16 table (brackets, rows wrapped over two
    lines) is read and named float16, and its positions from 1 said as fairseq's."""
    _open_check(app)
    table = pe_core.sinusoidal_encoding(np.arange(1, 65), 10).astype(np.float16)
    box = app.page.get_by_label("…or paste rows", exact=False)
    box.fill(str(table))
    box.press("Control+Enter")
    app.page.get_by_text("float16 rounding, written with").first.wait_for()
    app.page.get_by_text("done on purpose by fairseq", exact=False).first.wait_for()
    app.wait_quiet(800)
    assert app.problems() == []
    app.screenshot(SCREENSHOTS / "check_paste_float16_numpy_print.png")


def test_a_paste_over_the_cap_and_a_file_over_the_limit_say_so(app: AppPage, tmp_path: Path):
    # Issue 40: both were answered with the empty prompt. The paste now reaches the page (the box
    # has no limit of its own); the file is refused by the browser, which says so in the box.
    _open_check(app)
    box = app.page.get_by_label("…or paste rows", exact=False)
    box.fill("0," * 100_250)
    box.press("Control+Enter")
    app.page.get_by_text("The pasted text has 200,500 characters").first.wait_for()
    box.fill("")
    box.press("Control+Enter")
    big = tmp_path / "big.csv"
    big.write_bytes(b"1" * 20_000_001)
    app.page.locator('input[type="file"]').set_input_files(big)
    app.page.get_by_text("or smaller").first.wait_for()
    app.screenshot(SCREENSHOTS / "check_upload_too_large.png")


def _rope_cache_npz(tmp_path: Path) -> Path:
    """Llama 3.1's cos/sin cache at positions 0..599 (float32), as np.savez writes it."""
    config = json.loads((DATA / "hf_configs" / "llama3.1-Llama-3.1-8B-Instruct.json").read_text())
    cos, sin = pe_core.rope_cos_sin(600, pe_core.rope_from_config(config))
    path = tmp_path / "cache.npz"
    np.savez(path, cos=cos, sin=sin)
    return path


def _rotated_vectors_npz(tmp_path: Path) -> Path:
    """Two heads of a query at positions 0..599 before and after Llama 3.1's rotation, in
    float32, named as transformers' apply_rotary_pos_emb names them (q, q_embed)."""
    config = json.loads((DATA / "hf_configs" / "llama3.1-Llama-3.1-8B-Instruct.json").read_text())
    q = np.random.default_rng(0).standard_normal((1, 2, 600, 128)).astype(np.float32)
    q_embed = pe_core.apply_rope(q, 600, pe_core.rope_from_config(config)).astype(np.float32)
    path = tmp_path / "vectors.npz"
    np.savez(path, q=q, q_embed=q_embed)
    return path


def _zip_bomb_npz(tmp_path: Path) -> Path:
    """An archive named .npz whose one member unpacks to 1 GiB of zeros."""
    path = tmp_path / "bomb.npz"
    path.write_bytes(zip_bomb("cos.npy"))
    return path


def test_rope_uploads(app: AppPage, tmp_path: Path):
    """Check my RoPE: a cache, and vectors before and after rotation, are named verdict first
    with their error against position; a zip bomb named .npz is refused with a message naming
    it."""
    app.open("check?check=RoPE")
    app.page.get_by_text("Upload a cos/sin cache, an inv_freq or vectors").first.wait_for()
    files = app.page.locator('input[type="file"]')
    files.set_input_files(_rope_cache_npz(tmp_path))
    app.page.get_by_text("is RoPE llama3, base 500,000, 128 rotary columns").first.wait_for()
    app.page.get_by_text("Each row's largest difference from the exact RoPE llama3").wait_for()
    app.wait_quiet(800)
    assert app.problems() == []
    app.screenshot(SCREENSHOTS / "check_rope_upload_cache.png")
    files.set_input_files(_rotated_vectors_npz(tmp_path))
    app.page.get_by_text(
        "vectors.npz (vectors before and after rotation (q and q_embed), 1 × 2 × 600 × 128 each) "
        "is RoPE llama3, base 500,000"
    ).first.wait_for()
    app.page.get_by_text("cos and sin rebuilt from the vectors (rotating in float32").wait_for()
    app.wait_quiet(800)
    assert app.problems() == []
    app.screenshot(SCREENSHOTS / "check_rope_upload_vectors.png")
    files.set_input_files(_zip_bomb_npz(tmp_path))
    message = "Cannot read bomb.npz: the file declares 1,073,741,824 bytes once unpacked"
    app.page.get_by_text(message).first.wait_for()
    assert _unexpected(app, "once unpacked") == []
    app.screenshot(SCREENSHOTS / "check_rope_upload_bomb.png")
