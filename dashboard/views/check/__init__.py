"""Check my encoding: upload or paste a table and get its convention, base, positions and
arithmetic, the mistake that made it if it is a known one, what differs, and the code that
rebuilds it; or a RoPE cache, inv_freq or rotated vectors; or a GGUF file.

A package of its own: the sinusoidal table's check (``table.py``, drawn by ``verdict.py``), the
RoPE check (``rope.py``) and the GGUF check (``gguf.py``); every road reads through
:mod:`pe_core.files` and is judged by :mod:`pe_core.judgement`."""

from __future__ import annotations

import numpy as np
import streamlit as st

import pe_core
from dashboard import formatting, params, ui, uploads
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.views.check import gguf as check_gguf
from dashboard.views.check import rope as check_rope
from dashboard.views.check import verdict as check_verdict
from dashboard.views.check.table import Checked
from dashboard.views.check.table import check_table as _check
from pe_core import files

#: Largest example table built from the sidebar (long enough for float32's angle errors).
EXAMPLE_ROWS = 4096
EXAMPLE_COLUMNS = 512
#: Characters accepted in the paste box (a few hundred rows of a small table). Checked here, not
#: by the box: a box with a limit drops a longer paste in the browser, and the page would only
#: see an empty box.
MAX_PASTE_CHARS = 200_000

#: The examples: a library's arithmetic, and each mistake of the catalogue.
ARITHMETIC_EXAMPLES = {
    "float32 angles": ("float32", "exp", "the textbook formula in float32, as PyTorch computes it"),
    "float16 angles": ("float16", "pow", "keras-hub's formula in float16 (mixed precision)"),
}
BUG_EXAMPLES = {name.replace("_", " "): bug for name, bug in pe_core.BUGS.items()}
EXAMPLE = params.Choice(
    "example",
    "Or try an example",
    "none",
    options=("none", *ARITHMETIC_EXAMPLES, *(k for k in BUG_EXAMPLES if k != "float32 angles")),
    help="A table built from the sidebar's d_model: a library's arithmetic, or one of the usual "
    "mistakes (at base 10,000, where tutorials make them).",
)
KIND = params.Choice(
    "check",
    "What to check",
    "sinusoidal",
    options=("sinusoidal", "RoPE", "GGUF"),
    kind="segmented",
    help="A sinusoidal encoding table, a rotary encoding's cos/sin cache or frequencies "
    "(inv_freq), or a GGUF file's RoPE (llama.cpp) against its config.json.",
)
PARAMS = (KIND, EXAMPLE)


def SHARED(value) -> tuple[str, ...]:
    """The sidebar's parameters: read only to build an example table."""
    table = value(KIND) == "sinusoidal"
    return ("L", "d", "base", "conv") if table and value(EXAMPLE) != "none" else ()


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    if KIND.value(config) == "GGUF":
        return (
            "Does a GGUF file rotate as the config.json it came from says, as llama.cpp runs "
            "it: layer by layer, the key that differs and the command that fixes it."
        )
    if KIND.value(config) == "RoPE":
        return (
            "Name the rotary encoding behind a model's cos/sin cache, its inv_freq, or a query "
            "before and after rotation: base, scaling, arithmetic, bugs, and where it departs "
            "from its config.json."
        )
    return (
        "Name the convention, base, arithmetic and mistake behind an encoding table from your "
        "own code."
    )


def render(config: Config) -> None:
    KIND.widget(config)
    if KIND.value(config) == "GGUF":
        check_gguf.render()
        return
    if KIND.value(config) == "RoPE":
        check_rope.render()
        return
    ui.explain(
        "Upload an encoding table from your own code (positions in rows; .npy, .npz or "
        ".safetensors, or .csv like this app's download), or paste a few rows (as numpy prints "
        "them, or a list). The digits a text was written with count: a float16 table printed "
        "with 4 decimals is named as that. The check finds the convention, base, first "
        "position and direction that explain it, and the arithmetic it was computed in: "
        "rounded once to float32, or computed step by step in float32 or float16 as "
        "libraries do, whose errors grow with the position. If the table is none of these, it "
        f"is compared with {len(pe_core.BUGS)} mistakes people make when they write an "
        "encoding, and the one that made it is named with its fix. A 2-D table of image "
        "patches (MAE, MoCo v3, timm, positional-encodings) is recognised with its grid, a "
        "3-D one (video or volume tokens: positional-encodings, diffusers' CogVideoX) with its "
        "volume.",
    )
    source = _source(config)
    if source is None:
        st.info(
            f"Upload a table ({uploads.ACCEPTED}), paste rows, or pick an example to check. "
            "A larger file is refused by your browser, which marks it in the box above, and "
            "never reaches the page."
        )
        return
    label, checked = source
    if checked is None:
        return
    dims = " × ".join(f"{size:,}" for size in checked.shape)
    written = checked.verdict.written
    how = f", read as {written.words}" if written is not None else ""
    st.caption(f"{label}: {dims} values{how}.")
    check_verdict.render(checked)


def _source(config: Config) -> tuple[str, Checked | None] | None:
    """The table to check: an upload, pasted rows, or an example (in that order)."""
    upload = st.file_uploader(
        f"Encoding table ({uploads.ACCEPTED})",
        # Any type: the browser would refuse another type with a bare "files are not allowed";
        # uploads.load_matrix names the file and the formats it reads instead.
        type=None,
        key="check_upload",
        max_upload_size=uploads.MAX_UPLOAD_MB,
    )
    pasted = st.text_area(
        "…or paste rows (numbers separated by commas or spaces, one position per line, or "
        "numpy's print of the array, or a list; up to "
        f"{MAX_PASTE_CHARS:,} characters)",
        key="check_paste",
        height=100,
    )
    example = EXAMPLE.widget(config)
    try:
        if upload is not None:
            name = formatting.escape_markdown(upload.name)
            with st.spinner("Checking the table…"):
                return name, checked_upload(upload.getvalue(), upload.name)
        if len(pasted) > MAX_PASTE_CHARS:
            st.error(
                f"The pasted text has {len(pasted):,} characters, more than the "
                f"{MAX_PASTE_CHARS:,} this box takes: upload the table as a file instead "
                f"({uploads.ACCEPTED})."
            )
            return "", None
        if pasted.strip():
            with st.spinner("Checking the rows…"):
                return "The pasted rows", checked_paste(pasted)
    except uploads.UploadError as error:
        what = formatting.escape_markdown(upload.name) if upload is not None else "the pasted rows"
        st.error(f"Cannot read {what}: {formatting.escape_markdown(error)}.")
        return "", None
    except files.WrongFamily as error:  # a rotary cache: the RoPE check reads it
        what = formatting.escape_markdown(upload.name) if upload is not None else "The pasted rows"
        st.warning(f"{what}: {formatting.escape_markdown(error)}.", icon=":material/swap_horiz:")
        return "", None
    except pe_core.InputError as error:  # read, but no encoding can have this shape
        st.error(f"Cannot check this table: {formatting.escape_markdown(error)}.")
        return "", None
    if example == "none":
        return None
    n, d = min(config.n_positions, EXAMPLE_ROWS), min(config.d_model, EXAMPLE_COLUMNS)
    if min(n, d) < 2:
        st.warning(
            f"An example needs at least 2 positions and d_model ≥ 2 (the sidebar has "
            f"{config.n_positions:,} and {config.d_model}): a table to check has a sin/cos pair."
        )
        return "", None
    return _example_words(example, config, n, d), checked_example(
        example, n, d, config.base, config.convention
    )


def _example_words(example: str, config: Config, n: int, d: int) -> str:
    rows = f"positions 0–{n - 1}, d_model {d}"
    if example in ARITHMETIC_EXAMPLES:
        words = ARITHMETIC_EXAMPLES[example][2]
        return f"Example: {words}, {config.convention}, base {config.base_digits}, {rows}"
    return f"Example: the table made by “{BUG_EXAMPLES[example].title}”, base 10,000, {rows}"


@cached
def checked_upload(data: bytes, name: str) -> Checked:
    """Read an uploaded file or pasted rows and check it (cached on the bytes)."""
    return _check(*uploads.read_table(name, data))


@cached
def checked_paste(text: str) -> Checked:
    """Read pasted rows and check them (cached on the text)."""
    return _check(*uploads.read_pasted(text))


@cached
def checked_example(example: str, n: int, d: int, base: float, convention: str) -> Checked:
    """Build an example table and check it."""
    if example in ARITHMETIC_EXAMPLES:
        fmt, formula, _ = ARITHMETIC_EXAMPLES[example]
        table = pe_core.textbook_encoding(
            n, d, compute_dtype=fmt, base=base, convention=convention, formula=formula
        ).astype(fmt)
    else:
        table = BUG_EXAMPLES[example].wrong_table(np.arange(n), d, 10_000.0)
    return _check(table)
