"""Assertions for other projects' tests: check a rotary cache against the config it implements,
or a GGUF file against the config.json it was converted from."""

from __future__ import annotations

import os
from collections.abc import Mapping

from numpy.typing import ArrayLike

from pe_core.rotary import ROPE_BUGS, RopeIdentification, identify_rope

__all__ = ["assert_gguf_matches", "assert_rope_matches"]


def assert_rope_matches(
    cos: ArrayLike,
    sin: ArrayLike,
    config: Mapping | str | bytes,
    *,
    positions: ArrayLike | None = None,
    layer_type: str | None = None,
) -> RopeIdentification:
    """Assert that a cos/sin cache is the config's rotary encoding within its precision.

    Parameters
    ----------
    cos, sin : array_like, shape (n_positions, rotary columns)
        The cache, as :func:`pe_core.identify_rope` takes it.
    config : mapping, or str or bytes of JSON
        The config.json, as :func:`pe_core.rope_from_config` reads it.
    positions : array_like, optional
        The position of each row (0, 1, ... by default).
    layer_type : str, optional

    Returns
    -------
    RopeIdentification
        When the cache matches.

    Raises
    ------
    AssertionError
        When it does not: the message names the first position and column that departs, the
        values, and the likely bug with its fix.

    Examples
    --------
    >>> import pe_core
    >>> config = {"head_dim": 64, "rope_theta": 10000.0, "max_position_embeddings": 2048}
    >>> cos, sin = pe_core.rope_cos_sin(300, pe_core.rope_from_config(config))
    >>> _ = assert_rope_matches(cos, sin, config)
    >>> cos, sin = pe_core.ROPE_BUGS["bf16_positions"].inject(
    ...     cos, sin, range(300), pe_core.rope_from_config(config))
    >>> assert_rope_matches(cos, sin, config)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: RoPE cache departs from the config at position 257 (row 257), column ...
    """
    found = identify_rope(cos, sin, positions=positions, config=config, layer_type=layer_type)
    if found.config_matches:
        return found
    d = found.departure
    message = (
        f"RoPE cache departs from the config at position {d.position:g} (row {d.row}), "
        f"column {d.column}: {d.array} = {d.value:.8g}, config gives {d.expected:.8g} "
        f"(the data's precision explains {d.tolerance:.2g})"
    )
    if found.likely_cause in ROPE_BUGS:
        bug = ROPE_BUGS[found.likely_cause]
        message += f". Likely bug: {bug.name}: {bug.title}. Fix: {bug.fix}"
    else:
        differences = "; ".join(f.title for f in found.findings) or "none named"
        message += f". No bug of the catalogue reproduces it; differences: {differences}"
    raise AssertionError(message)


def assert_gguf_matches(
    gguf: str | os.PathLike | bytes,
    config: Mapping | str | bytes,
    *,
    n_ctx: int | None = None,
):
    """Assert that a GGUF file rotates as its config.json says, as llama.cpp runs it.

    Parameters
    ----------
    gguf : path, or bytes
        The file (only its metadata and RoPE tensors are read, through a memory map), or its
        first bytes up to the end of the metadata.
    config : mapping, or str or bytes of JSON
        The config.json it was converted from.
    n_ctx : int, optional
        llama.cpp's context size ``-c`` (the file's ``context_length`` by default).

    Returns
    -------
    pe_core.GgufCheck
        When no key or tensor of the file departs from the config (llama.cpp's own departures
        from transformers, such as LongRoPE's choice by context size, are in its findings).

    Raises
    ------
    AssertionError
        Naming each key or tensor that departs, what the file holds, what the config implies,
        the first position off by more than 1e-3 rad, and the fix.
    pe_core.InputError
        An unreadable file or config.
    """
    from pe_core.rotary import check_gguf, read_gguf, read_gguf_bytes

    meta = read_gguf_bytes(bytes(gguf)) if isinstance(gguf, bytes | bytearray) else read_gguf(gguf)
    found = check_gguf(meta, config, n_ctx=n_ctx, with_transformers_error=False)
    if found.matches:
        return found
    raise AssertionError(
        "GGUF file does not rotate as the config says: "
        + " | ".join(f.sentence() for f in found.file_findings)
    )
