"""Check my RoPE, on the Check page: paste a model's ``inv_freq`` (and the config.json it should
implement) and get the rotary encoding behind it, its findings, and where it departs from the
config (pe_core.identify_rope). Caches (cos/sin) are checked from files by the command line."""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

import pe_core
from dashboard import ui
from dashboard.figures import charts

#: Characters accepted in each box: an inv_freq of 4,096 pairs, a whole config.json.
MAX_CHARS = 100_000

DUMP_CODE = (
    "# transformers: the first layer's rotary frequencies, one per pair\n"
    "print(model.model.rotary_emb.inv_freq.tolist())"
)


#: Most frequencies read (pairs: a head of 131,072 columns).
MAX_PAIRS = 65_536


def parse_numbers(text: str) -> np.ndarray:
    """Numbers separated by commas, spaces or semicolons, in brackets or not (a printed list,
    a tensor's repr without its name); raises :class:`pe_core.InputError` naming what is not
    a number."""
    tokens = [t for t in re.split(r"[\s,;\[\]()]+", text.strip()) if t]
    if len(tokens) > MAX_PAIRS:
        raise pe_core.InputError(
            f"{len(tokens):,} values, more than the {MAX_PAIRS:,} frequencies read here"
        )
    values = []
    for token in tokens:
        try:
            values.append(float(token))
        except ValueError:
            shown = ui.escape_markdown(token[:30])
            raise pe_core.InputError(f"“{shown}” is not a number") from None
    return np.asarray(values, dtype=np.float64)


def identified(values: np.ndarray, config_text: str) -> pe_core.RopeIdentification:
    """identify_rope on the pasted frequencies (and config): milliseconds for an inv_freq,
    so not cached (its result holds read-only mappings, which st.cache_data cannot pickle)."""
    config = config_text if config_text.strip() else None
    return pe_core.identify_rope(inv_freq=values, config=config)


def render() -> None:
    st.markdown(
        "Paste the `inv_freq` of a model (one frequency per pair, radians per position), and "
        "if you want the config.json it should implement. A cos/sin cache is checked from a "
        "file on the command line: `python -m pe_core check-rope cache.npz --config "
        "config.json`."
    )
    st.code(DUMP_CODE, language="python")
    inv_freq_text = st.text_area(
        "inv_freq (numbers separated by commas or spaces)",
        key="rope_check_inv_freq",
        height=100,
        max_chars=MAX_CHARS,
    )
    config_text = st.text_area(
        "config.json it should implement (optional)",
        key="rope_check_config",
        height=100,
        max_chars=MAX_CHARS,
    )
    if not inv_freq_text.strip():
        st.info("Paste an inv_freq to check.")
        return
    try:
        values = parse_numbers(inv_freq_text)
    except pe_core.InputError as error:
        st.error(f"Cannot read the frequencies: {error}.")
        return
    try:
        found = identified(values, config_text)
    except pe_core.InputError as error:
        st.error(f"Cannot check these frequencies: {ui.escape_markdown(error)}.")
        return
    _verdict(found)
    _findings(found)
    _ratio_chart(found)


def _verdict(found: pe_core.RopeIdentification) -> None:
    text = ui.escape_markdown(found.summary())
    if found.matches:
        st.success(text, icon=":material/check_circle:")
    else:
        st.warning(text, icon=":material/bug_report:")


def _findings(found: pe_core.RopeIdentification) -> None:
    for finding in found.findings:
        with st.container(border=True):
            st.markdown(f"**{ui.escape_markdown(finding.title)}**")
            if finding.evidence:
                st.markdown(
                    "\n".join(
                        f"- {ui.escape_markdown(key)}: {ui.escape_markdown(_plain(value))}"
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
    ui.chart(
        charts.curves(
            np.arange(scale.size),
            {"slower than plain RoPE by": scale},
            title="Each pair against plain RoPE with the base found",
            subtitle=f"base {found.base:,.6g}, {found.rotary_dim} rotary columns: 1 where a "
            "pair is not scaled",
            x_title="pair i",
            y_title="base^(−2i/d) / inv_freq",
            log_y=bool(scale.max() / scale.min() > 10),
        ),
        "check_rope_ratio",
    )
