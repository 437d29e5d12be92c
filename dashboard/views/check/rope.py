"""Check my RoPE, on the Check page: upload a cos/sin cache, an ``inv_freq`` or vectors before
and after rotation (.npy, .npz, .safetensors) or paste an ``inv_freq``, optionally with the
config.json it should implement, and get the rotary encoding behind it, its findings, and where
it departs from the config (pe_core.identify_rope)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import streamlit as st

import pe_core
from dashboard import budget, formatting, ui, uploads
from dashboard.caching import cached
from dashboard.figures import charts
from pe_core import files, judgement
from pe_core.rotary.identify import ROTATION_ULPS

#: Characters accepted in each box: an inv_freq of 4,096 pairs, a whole config.json.
MAX_CHARS = 100_000

DUMP_CODE = (
    "# transformers: the cache at positions 0..L-1 (and the frequencies), in two lines\n"
    "cos, sin = model.model.rotary_emb(x, torch.arange(L)[None])\n"
    'numpy.savez("cache.npz", cos=cos[0].float().numpy(), sin=sin[0].float().numpy())\n'
    "print(model.model.rotary_emb.inv_freq.tolist())  # or paste this below\n"
    "# or a query before and after your rotation (any framework), here with transformers':\n"
    "q_embed, _ = apply_rotary_pos_emb(q, q, cos, sin)  # q: (batch, heads, L, head_dim)\n"
    'numpy.savez("vectors.npz", q=q.float().numpy(), q_embed=q_embed.float().numpy())'
)
#: What an upload may be, said once on the page (the browser refuses a larger file).
ACCEPTED = (
    f"{', '.join(files.FORMATS)}; at most {uploads.MAX_UPLOAD_MB} MB, and an .npz at most "
    f"{uploads.MAX_UPLOAD_MB} MB once unpacked"
)
#: Bytes identify_rope allocates per value of a cache (about 11 measured for a float32
#: cache, the float64 copies and the fit), rounded up: the check against the request budget.
BYTES_PER_CACHE_VALUE = 16
#: The same for vectors before and after rotation (per value of both): about 25 measured
#: with one head (the cache rebuilt from them, position by column), 5 with eight.
BYTES_PER_VECTOR_VALUE = 28
#: Identifications kept between reruns (shared by sessions: the result is read-only) and
#: for how long: an upload checked again with the same config is not identified again.
IDENTIFIED_ENTRIES = 4
IDENTIFIED_SECONDS = 15 * 60
#: Most frequencies read (pairs: a head of 131,072 columns).
MAX_PAIRS = 65_536
#: Points of the error-by-position curve (a row's error is the largest in its block).
SHOWN_POSITIONS = 2000


def parse_numbers(text: str) -> files.ArrayFile:
    """The pasted frequencies, read as every road reads text (:func:`pe_core.files.parse_text`:
    numbers separated by commas, spaces or semicolons, a list, numpy's or torch's print); one
    array, "array", of at most :data:`MAX_PAIRS` values. Raises :class:`pe_core.InputError`
    naming what is not a number."""
    arrays = files.parse_text(text, what="the pasted inv_freq", max_values=MAX_PAIRS)
    values = np.asarray(arrays["array"])
    kept = [n for n in values.shape if n != 1]
    if len(kept) > 1:
        raise pe_core.InputError(
            f"the pasted inv_freq has shape {values.shape}: one frequency per pair is one row "
            "of numbers"
        )
    flat = values.reshape(-1)
    return files.ArrayFile({"inv_freq": flat}, {"inv_freq": arrays.written["array"]}, "pasted")


@dataclass(frozen=True)
class Upload:
    """What identify_rope is given from an uploaded file: its arrays, as the file holds them."""

    inputs: dict
    #: Which arrays were read, in words ("cos and sin", "inv_freq", ...).
    words: str
    #: A hash of the file's bytes (what the identification is cached by).
    key: str = ""
    #: The file's arrays as read (what every road's judgement is given).
    arrays: files.ArrayFile | None = None


@cached
def read_upload(data: bytes, name: str) -> Upload:
    """The identify_rope inputs in an uploaded file (cached on its bytes); raises
    :class:`pe_core.InputError` naming the rule it breaks."""
    if len(data) > uploads.MAX_BYTES:
        raise pe_core.InputError(
            f"the file has {len(data):,} bytes, more than the limit of {uploads.MAX_BYTES:,} "
            f"({uploads.MAX_UPLOAD_MB} MB)"
        )
    arrays = files.load_arrays(data, name, max_unpacked_bytes=uploads.MAX_BYTES, label="the file")
    try:
        inputs = files.rope_inputs(arrays)
    except pe_core.InputError:
        # Not readable as RoPE: the judgement says what it is (a sinusoidal table, perhaps).
        judgement.check_rope(arrays)
        raise
    values = sum(np.size(array) for array in inputs.values() if array is not None)
    per_value = BYTES_PER_VECTOR_VALUE if "before" in inputs else BYTES_PER_CACHE_VALUE
    budget.check_request(values * per_value, "checking its values")
    if "before" in inputs:
        found = files.find_vectors(arrays, None, None)
        names = " and ".join(f"{formatting.escape_markdown(n)}" for n in found[2]) if found else ""
        shape = " × ".join(f"{n:,}" for n in np.shape(inputs["before"]))
        words = f"vectors before and after rotation ({names}), {shape} each"
        if inputs["positions"] is not None:
            words += ", with their positions"
    elif "inv_freq" in inputs:
        count = formatting.counted(np.size(inputs["inv_freq"]), "frequency", "frequencies")
        words = f"inv_freq ({count})"
    else:
        shape = " × ".join(f"{n:,}" for n in np.shape(inputs["cos"]))
        words = f"cos and sin, {shape} each"
        if inputs["positions"] is not None:
            words += ", with their positions"
    key = hashlib.blake2b(data, digest_size=16).hexdigest()
    return Upload(inputs=inputs, words=words, key=key, arrays=arrays)


@st.cache_resource(max_entries=IDENTIFIED_ENTRIES, ttl=IDENTIFIED_SECONDS, show_spinner=False)
def identified(key: str, config: str | None, _arrays: files.ArrayFile):
    """``pe_core.judgement.check_rope(arrays, config=config)`` (what the command line asks too)
    once per upload (``key``: a hash of its bytes, or the pasted text) and config, or the
    InputError it raised; kept as objects (the result is frozen, its arrays read-only, so
    sessions can share it)."""
    try:
        return judgement.check_rope(_arrays, config=config)
    except pe_core.InputError as error:
        return error


def render() -> None:
    st.markdown(
        "Upload a model's cos/sin cache, its `inv_freq`, or a query before and after your "
        "rotation, or paste the `inv_freq` (one "
        "frequency per pair, radians per position); add the config.json it should implement "
        "if you want it compared. The same check runs in CI: `python -m pe_core check-rope "
        "cache.npz --config config.json`."
    )
    st.code(DUMP_CODE, language="python")
    upload = st.file_uploader(
        f"cos/sin cache, inv_freq, or vectors before and after rotation ({ACCEPTED})",
        # Any type: the page names the file and the formats it reads instead of the browser's
        # bare "files are not allowed".
        type=None,
        key="rope_check_upload",
        max_upload_size=uploads.MAX_UPLOAD_MB,
    )
    vector_names = ", ".join(f"`{a}` and `{b}`" for a, b in files.VECTOR_NAMES)
    st.caption(
        f"Arrays are found by name: vectors before and after rotation ({vector_names}; shape "
        "(…, positions, head_dim), any number of heads), else `cos` and `sin` (or names "
        "holding them, as `cos_cached`), else `inv_freq`; `positions` or `position_ids` if "
        "the rows are not positions 0, 1, 2 and so on. A file of one array (a .npy) is read "
        "by its shape: "
        f"{files.SINGLE_ARRAY_RULE}. Pickles (.pt, .bin) are never opened. A link to this page "
        "cannot carry an upload or pasted text: share the file."
    )
    # No max_chars on the boxes: the browser would drop a longer paste without a word; the
    # page refuses it by name instead.
    inv_freq_text = st.text_area(
        f"inv_freq (numbers separated by commas or spaces, a list, or numpy's or torch's print; "
        f"up to {MAX_CHARS:,} characters)",
        key="rope_check_inv_freq",
        height=100,
    )
    config_text = st.text_area(
        f"config.json it should implement (optional; up to {MAX_CHARS:,} characters)",
        key="rope_check_config",
        height=100,
    )
    for what, text, instead in (
        ("inv_freq", inv_freq_text, ": upload the frequencies as a .npy file instead."),
        ("config.json", config_text, "."),
    ):
        if len(text) > MAX_CHARS:
            st.error(
                f"The pasted {what} has {len(text):,} characters, more than the "
                f"{MAX_CHARS:,} this box takes{instead}"
            )
            return
    config = config_text if config_text.strip() else None
    if upload is not None:
        name = formatting.escape_markdown(upload.name)
        if inv_freq_text.strip():
            st.caption("The pasted inv_freq is set aside while a file is uploaded.")
        try:
            with st.spinner(f"Reading {name}…"):
                read = read_upload(upload.getvalue(), upload.name)
        except files.WrongFamily as error:
            _wrong_family(name, error)
            return
        except pe_core.InputError as error:
            st.error(f"Cannot read {name}: {formatting.escape_markdown(error)}.")
            return
        what, inputs, key = f"{name} ({read.words})", read.inputs, f"file {read.key}"
        arrays = read.arrays
    elif not inv_freq_text.strip():
        st.info(
            f"Upload a cos/sin cache, an inv_freq or vectors before and after rotation "
            f"({ACCEPTED}), or paste an inv_freq."
        )
        return
    else:
        try:
            arrays = parse_numbers(inv_freq_text)
        except pe_core.InputError as error:
            st.error(f"Cannot read the frequencies: {formatting.escape_markdown(error)}.")
            return
        written = arrays.written["inv_freq"]
        what = f"The pasted inv_freq (read as {written.words})"
        inputs = {"inv_freq": arrays["inv_freq"]}
        key = "text " + hashlib.blake2b(inv_freq_text.encode(), digest_size=16).hexdigest()
    with st.spinner("Checking…"):
        found = identified(key, config, arrays)
    if isinstance(found, files.WrongFamily):
        _wrong_family(what, found)
        return
    if isinstance(found, pe_core.InputError):
        st.error(f"Cannot check {what}: {formatting.escape_markdown(found)}.")
        return
    _verdict(found, what)
    _findings(found)
    if found.source == "cache":
        _error_by_position(found, error_by_position(found, inputs))
    elif found.source == "vectors":
        _error_by_position(found, vector_errors(key, config, found, inputs))
    _ratio_chart(found)


@st.cache_resource(max_entries=IDENTIFIED_ENTRIES, ttl=IDENTIFIED_SECONDS, show_spinner=False)
def vector_errors(key: str, config: str | None, _found, _inputs: dict):
    """:func:`error_by_position` of the cache rebuilt from vectors before and after rotation
    (what identify_rope read them as), once per upload and config: one error per position,
    the rebuilt cache itself not kept."""
    cos, sin, positions = pe_core.rope_cache_from_vectors(
        _inputs["before"], _inputs["after"], positions=_inputs.get("positions")
    )
    return error_by_position(_found, {"cos": cos, "sin": sin, "positions": positions})


def _wrong_family(what: str, error: files.WrongFamily) -> None:
    """An upload of the other family: what it is, and which check reads it."""
    st.warning(
        f"{what}: {formatting.escape_markdown(error)}.",
        icon=":material/swap_horiz:",
    )


def _verdict(found: pe_core.RopeIdentification, what: str) -> None:
    """The verdict in one sentence (from the result's fields), then the core's paragraph."""
    text = f"**{headline(found, what)}**"
    if found.matches:
        st.success(text, icon=":material/check_circle:")
    else:
        st.warning(text, icon=":material/bug_report:")
    st.markdown(formatting.escape_markdown(found.summary()))


def headline(found: pe_core.RopeIdentification, what: str) -> str:
    """One sentence: whether the data is its config's encoding (where it departs and why), or
    which encoding it is and whether a known bug shows. ``what`` is already escaped."""
    variant = found.rope_type or "of no known scaling variant"
    encoding = (
        f"RoPE {variant}, base {found.base:,.6g}, "
        f"{formatting.counted(found.rotary_dim, 'rotary column')}"
    )
    if found.config_matches is True:
        return f"{what} matches the config within its precision: {encoding}."
    if found.config_matches is False:
        departure = found.departure
        if departure is None:
            where = ""
        elif departure.position is None:
            where = f" at pair {departure.column}"
        else:
            where = f" at position {departure.position:,.6g}, column {departure.column}"
        text = f"{what} departs from the config{where}"
        if found.likely_cause in pe_core.ROPE_BUGS:
            cause = pe_core.ROPE_BUGS[found.likely_cause].title
            text += f"; likely cause: {formatting.escape_markdown(cause)}"
        elif found.likely_cause == "parameters":
            listed = "; ".join(f.title for f in found.differences)
            text += "; likely cause: different parameters" + (
                f": {formatting.escape_markdown(listed)}" if listed else ""
            )
        return text + "."
    bugs = [f.title for f in found.findings if f.bug is not None]
    if bugs:
        return (
            f"{what} is {encoding}, with a known bug: "
            + formatting.escape_markdown("; ".join(bugs))
            + "."
        )
    if found.matches:
        return f"{what} is {encoding}, with no known bug."
    return f"{what} is closest to {encoding}, but no known variant and arithmetic explain it."


def _findings(found: pe_core.RopeIdentification) -> None:
    for finding in found.findings:
        with st.container(border=True):
            st.markdown(f"**{formatting.escape_markdown(finding.title)}**")
            if finding.evidence:
                st.markdown(
                    "\n".join(
                        f"- {formatting.escape_markdown(key)}: "
                        f"{formatting.escape_markdown(_plain(value))}"
                        for key, value in finding.evidence.items()
                    )
                )
            if finding.bug is not None:
                st.code(
                    f"# wrong:\n{finding.bug.wrong_code}\n# fix: {finding.bug.fix}",
                    language="python",
                )
            if finding.references:
                st.caption("Reported in: " + ", ".join(finding.references))


def _plain(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (tuple, list)):
        return ", ".join(_plain(v) for v in value)
    return str(value)


def _ratio_chart(found: pe_core.RopeIdentification) -> None:
    """How much slower each pair turns than plain RoPE with the base found: 1 where unscaled."""
    scale = np.asarray(found.scale, dtype=np.float64)
    if scale.size < 2 or not np.all(np.isfinite(scale)) or scale.min() <= 0:
        return
    curves = {"measured": scale}
    rebuilt, words = _rebuilt_inv_freq(found)
    if rebuilt is not found.inv_freq and np.size(rebuilt) == scale.size:
        # The variant identified beside the measurement: where they part (the slowest pairs
        # of a short or noisy upload), the measurement is imprecise, not another variant.
        exponent = np.arange(scale.size) * 2 / found.rotary_dim
        curves[words.removeprefix("the exact ")] = found.base**-exponent / rebuilt
    ui.chart(
        charts.curves(
            np.arange(scale.size),
            curves,
            title="Each pair against plain RoPE with the base found",
            subtitle=f"base {found.base:,.6g}, {found.rotary_dim} rotary columns: 1 where a "
            "pair is not scaled",
            x_title="pair i",
            y_title="base^(−2i/d) / inv_freq",
            log_y=bool(scale.max() / scale.min() > 10),
        ),
        "check_rope_ratio",
    )


def error_by_position(
    found: pe_core.RopeIdentification, inputs: dict
) -> tuple[np.ndarray, np.ndarray, str] | None:
    """Per row of the cache, the largest difference of its rotary values from the exact
    encoding: the config's when a config was given, else the variant identified rebuilt with
    its parameters (or, when it cannot be, the frequencies measured), at the amplitude found.
    Returns positions, errors and what they were compared with; None when the two do not
    have the same pairs."""
    factor = found.attention_factor
    if found.expected is not None:
        inv_freq, against = found.expected.inv_freq, "the config's exact encoding"
        factor = found.expected.attention_factor
    else:
        inv_freq, against = _rebuilt_inv_freq(found)
    n_pairs = found.rotary_dim // 2
    if found.layout is None or np.size(inv_freq) != n_pairs or factor is None:
        return None
    first = found.rotary_columns[0]
    step = 2 if found.layout == "interleaved" else 1
    columns = first + step * np.arange(n_pairs)
    cos = np.asarray(inputs["cos"]).reshape(-1, np.shape(inputs["cos"])[-1])
    sin = np.asarray(inputs["sin"]).reshape(cos.shape)
    positions = inputs.get("positions")
    positions = (
        np.arange(cos.shape[0], dtype=np.float64)
        if positions is None or np.size(positions) != cos.shape[0]
        else np.asarray(positions, dtype=np.float64)
    )
    angles = positions[:, None] * np.asarray(inv_freq, dtype=np.float64)[None, :]
    error = np.maximum(
        np.abs(cos[:, columns] - factor * np.cos(angles)).max(axis=1),
        np.abs(sin[:, columns] - factor * np.sin(angles)).max(axis=1),
    )
    return positions, error, against


def _rebuilt_inv_freq(found: pe_core.RopeIdentification) -> tuple[np.ndarray, str]:
    """The exact frequencies of the variant identified, and their name in words; the measured
    ones when no variant was named or its parameters do not rebuild it."""
    if found.rope_type is not None:
        scaling = None if found.rope_type == "default" else {"rope_type": found.rope_type}
        if scaling is not None:
            scaling.update(found.parameters)
        try:
            rebuilt = pe_core.rope_frequencies(
                found.rotary_dim,
                base=found.base,
                scaling=scaling,
                seq_len=int(found.positions[-1]) + 1 if found.positions else None,
            )
        except pe_core.InputError:
            pass
        else:
            return rebuilt.inv_freq, f"the exact RoPE {found.rope_type} identified"
    return found.inv_freq, "the frequencies measured"


def _error_by_position(found: pe_core.RopeIdentification, measured) -> None:
    if measured is None:
        st.caption(
            "No error by position: the config's pairs are not the upload's "
            f"({found.rotary_dim // 2} pairs found)."
        )
        return
    positions, error, against = measured
    blocks = -(-positions.size // SHOWN_POSITIONS)  # rows per point, the largest kept
    if blocks > 1:
        cut = positions.size // blocks * blocks
        shown_positions = positions[:cut:blocks]
        shown = error[:cut].reshape(-1, blocks).max(axis=1)
    else:
        shown_positions, shown = positions, error
    worst = int(np.argmax(error))
    values = "cos and sin"
    rotated = found.arithmetic.rotated
    if rotated is not None:
        bound = (
            ROTATION_ULPS
            * pe_core.PRECISIONS[rotated].unit_roundoff
            * abs(found.attention_factor or 1.0)
        )
        values = (
            f"cos and sin rebuilt from the vectors (rotating in {rotated} alone moves them "
            f"by up to {bound:.2g})"
        )
    mismatch = next((f.evidence for f in found.findings if "rotated_pairs" in f.evidence), None)
    st.caption(
        f"Each row's largest difference from {against} (exact angles, no rounding) over its "
        f"{found.rotary_dim // 2} pairs' {values}: at most {error[worst]:.2g}, at position "
        f"{positions[worst]:,.6g}"
        + (f"; each point the largest of {blocks} rows." if blocks > 1 else ".")
        + (
            f" This is the cache the vectors were rotated with ({mismatch['cache_layout']} "
            f"layout); the rotation paired its columns {mismatch['rotated_pairs']}, the "
            "mistake named above."
            if mismatch
            else ""
        )
    )
    ui.chart(
        charts.curves(
            shown_positions,
            {"largest |difference|": shown},
            title=f"Error against position, from {against}",
            subtitle=f"positions {positions[0]:,.6g} to {positions[-1]:,.6g}, "
            f"{formatting.counted(found.rotary_dim, 'rotary column')}, "
            f"{found.layout} layout",
            x_title="position",
            y_title="largest |difference| in the row",
            log_y=bool(shown.min() > 0 and shown.max() / shown.min() > 10),
        ),
        "check_rope_error",
    )
