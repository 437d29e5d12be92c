"""Assertions for other projects' tests: check a rotary cache against the config it implements."""

from __future__ import annotations

from collections.abc import Mapping

from numpy.typing import ArrayLike

from pe_core.rotary import ROPE_BUGS, RopeIdentification, identify_rope

__all__ = ["assert_rope_matches"]


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
