"""The attention temperature some models apply to their queries beside RoPE: a factor that grows
with the position, ``1 + beta * ln(1 + floor((p + shift) / length))``, outside the rotary class
(so not in ``inv_freq``, cos or sin). Llama 4 applies it on its layers without RoPE, Ministral 3
(Devstral 2) on its layers with RoPE; which keys each reads is data in
:mod:`pe_core.rotary.models` (:class:`~pe_core.rotary.models.TemperatureRule`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import as_real_array, check_length, check_real, load_json
from pe_core.errors import InputError
from pe_core.rotary.config import _read_config, _rotating_types

__all__ = ["QueryTemperature", "rope_query_temperature"]


@dataclass(frozen=True)
class QueryTemperature:
    """A position-dependent factor on a model's queries: ``1 + beta * ln(1 + floor((p + shift)
    / length))`` at position ``p`` (1 below ``length - shift``).

    Attributes
    ----------
    beta, length, shift
        The rule's numbers.
    layers : {"rope", "nope"}
        Where the model applies it: its layers with RoPE, or those without.
    keys : tuple of str
        The config keys ``beta`` and ``length`` were read from.
    """

    beta: float
    length: int
    shift: int
    layers: str
    keys: tuple[str, str]

    def scale(self, positions: ArrayLike) -> NDArray[np.float64]:
        """The factor on the queries at each position.

        >>> QueryTemperature(0.1, 8192, 1, "nope", ("attn_scale", "floor_scale")).scale(
        ...     [0, 8190, 8191, 16383])
        array([1.        , 1.        , 1.06931472, 1.10986123])
        """
        p = as_real_array(positions, "positions")
        return 1.0 + self.beta * np.log1p(np.floor((p + self.shift) / self.length))


def rope_query_temperature(config: Mapping | str | bytes) -> QueryTemperature | None:
    """The attention temperature a config.json sets beside its RoPE, as transformers applies it;
    None for a model without one.

    Parameters
    ----------
    config : mapping, or str or bytes of JSON
        As for :func:`pe_core.rope_from_config`.

    Returns
    -------
    QueryTemperature or None

    Raises
    ------
    InputError
        A ``beta`` that is not a finite number, or a ``length`` that is not a positive integer.

    Examples
    --------
    >>> scout = {"model_type": "llama4_text", "head_dim": 128, "num_hidden_layers": 48}
    >>> found = rope_query_temperature(scout)
    >>> found.beta, found.length, found.shift, found.layers
    (0.1, 8192, 1, 'nope')
    """
    if isinstance(config, (str, bytes, bytearray)):
        config = load_json(config, name="config")
    reading = _read_config(config)
    rule = reading.model.temperature
    if rule is None:
        return None
    resolved = reading.config
    if rule.enabled_key is not None and not resolved.get(rule.enabled_key, True):
        return None
    if rule.in_parameters:
        kinds = _rotating_types(reading) or ["full_attention"]
        source = reading.parameters_of(kinds[0])
        where = "rope_parameters"
    else:
        source, where = resolved, "config"
    if source.get(rule.beta_key) is None:
        return None
    beta = check_real(source[rule.beta_key], f"{where}[{rule.beta_key!r}]")
    if not math.isfinite(beta):
        raise InputError(f"{where}[{rule.beta_key!r}] must be finite, got {beta}")
    if source.get(rule.length_key) is None:
        raise InputError(f"{where} has {rule.beta_key!r} but no {rule.length_key!r}")
    length = check_length(source[rule.length_key], f"{where}[{rule.length_key!r}]")
    return QueryTemperature(beta, length, rule.shift, rule.layers, (rule.beta_key, rule.length_key))
