"""The forward pass of a positional-encoding layer: token embeddings plus the encoding."""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import as_real_array, check_real
from pe_core.errors import InputError, InputTypeError

__all__ = ["add_to_embeddings"]


def add_to_embeddings(
    embeddings: ArrayLike,
    encoding: ArrayLike,
    *,
    scale: bool = False,
    dropout: float = 0.0,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Add the positional encoding to token embeddings, as a transformer's input layer does.

    Parameters
    ----------
    embeddings : array_like, shape (batch, seq, d_model) or (seq, d_model)
        Token embeddings.
    encoding : array_like, shape (L, d_model)
        A positional encoding with ``L >= seq`` rows; its first ``seq`` rows are added,
        broadcast over the batch.
    scale : bool, optional
        Multiply the embeddings by ``sqrt(d_model)`` first (the paper, section 3.4).
    dropout : float, optional
        Probability in [0, 1) of zeroing each entry of the sum; the survivors are scaled by
        ``1 / (1 - dropout)`` so the expected value is unchanged (inverted dropout).
    rng : numpy.random.Generator or int, optional
        Source of the dropout mask (a seed makes it reproducible). Unused when
        ``dropout == 0``.

    Returns
    -------
    ndarray of float64, same shape as ``embeddings``

    Raises
    ------
    ValueError
        For shapes that do not fit (with both shapes in the message), NaN or inf, or a dropout
        outside [0, 1).
    TypeError
        For non-numeric arrays, a non-bool ``scale`` or an ``rng`` that is neither a
        Generator, an int nor None.

    Notes
    -----
    ``dropout(E * sqrt(d) + PE[:seq])`` with the scale, ``dropout(E + PE[:seq])`` without, as in
    the PyTorch tutorial's ``PositionalEncoding.forward`` and the Annotated Transformer's
    ``Embeddings``.

    Examples
    --------
    >>> out = add_to_embeddings(np.zeros((2, 3, 4)), np.ones((5, 4)), scale=True)
    >>> out.shape, float(out.sum())
    ((2, 3, 4), 24.0)
    """
    embedded = as_real_array(embeddings, "embeddings")
    table = as_real_array(encoding, "encoding", ndim=2)
    if embedded.ndim not in (2, 3):
        raise InputError(
            f"embeddings must have shape (batch, seq, d_model) or (seq, d_model), got shape "
            f"{embedded.shape}"
        )
    seq, d_model = embedded.shape[-2:]
    if table.shape[1] != d_model:
        raise InputError(
            f"encoding must have d_model={d_model} columns like embeddings {embedded.shape}, "
            f"got encoding of shape {table.shape}"
        )
    if table.shape[0] < seq:
        raise InputError(
            f"encoding must have at least seq={seq} rows for embeddings {embedded.shape}, got "
            f"encoding of shape {table.shape}"
        )
    if not isinstance(scale, (bool, np.bool_)):
        raise InputTypeError(f"scale must be True or False, got {scale!r}")
    dropout = check_real(dropout, "dropout")
    if not 0.0 <= dropout < 1.0:
        raise InputError(f"dropout must be in [0, 1), got {dropout}")
    if rng is not None and not isinstance(rng, np.random.Generator):
        if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, numbers.Integral):
            raise InputTypeError(
                f"rng must be a numpy.random.Generator, an int seed or None, got {rng!r}"
            )
        if rng < 0:
            raise InputError(f"rng as a seed must be >= 0, got {rng}")

    with np.errstate(over="ignore"):
        total = embedded * math.sqrt(d_model) if scale else embedded.copy()
        total += table[:seq]
        if dropout > 0.0:
            generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
            keep = generator.random(total.shape) >= dropout
            total = np.where(keep, total / (1.0 - dropout), 0.0)
    # Checked last: the dropout's rescaling by 1 / (1 - p) can overflow a sum that did not.
    if not np.all(np.isfinite(total)):
        raise InputError(
            "embeddings are too large: the output overflows float64 (values near 1e308, "
            "after the sqrt(d_model) scaling and the dropout's 1 / (1 - dropout) rescaling)"
        )
    return total
