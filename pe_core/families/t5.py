"""T5's relative position buckets: each offset between query and key falls in one of a few
buckets, one learned scalar bias per bucket and head; exact below ``max_exact``, then
logarithmically wider, the last bucket holding every offset from about ``max_distance`` on.

The arithmetic is that of T5's reference implementations (Mesh TensorFlow's
``_relative_position_bucket`` and Hugging Face's ``T5Attention._relative_position_bucket``),
including their float32 logarithm, so every bucket here is theirs, at the boundaries too.

>>> t5_relative_buckets([-3, -1, 0, 1, 3, 100, 1000])
array([ 3,  1,  0, 17, 19, 31, 31])

As a family of :data:`pe_core.FAMILIES`: a bias learned per bucket of the offset, so no score
before training; its parameters are those of the buckets.

>>> import pe_core
>>> pe_core.FAMILIES["t5"].defaults
{'num_buckets': 32, 'max_distance': 128, 'bidirectional': True}
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import MAX_POSITION, as_integer_array, check_positive_int
from pe_core.errors import InputError, InputTypeError
from pe_core.families.base import Family, FamilyParameter, check_flag, register

__all__ = ["MAX_BUCKETS", "T5", "t5_relative_buckets"]

#: More buckets than any model uses (T5: 32; larger ones are for experiments).
MAX_BUCKETS = 2**20

#: T5's own bucket settings (``relative_attention_num_buckets``,
#: ``relative_attention_max_distance`` of T5Config), the defaults of both the function and the
#: family.
NUM_BUCKETS = 32
MAX_DISTANCE = 128


def t5_relative_buckets(
    relative_positions: ArrayLike,
    *,
    bidirectional: bool = True,
    num_buckets: int = NUM_BUCKETS,
    max_distance: int = MAX_DISTANCE,
) -> NDArray[np.int64]:
    """The bucket of each relative position, as T5 computes it.

    Parameters
    ----------
    relative_positions : array_like of int, 1-D
        Key position minus query position, T5's ``memory_position - context_position``
        (negative: the key is earlier).
    bidirectional : bool, default True
        An encoder's buckets (half of them for keys after the query); False is the decoder's
        (every later key shares bucket 0 with the query itself).
    num_buckets : int, default 32
        Number of buckets (at least 2; at least 4 when bidirectional, so that each direction
        has an exact bucket and a logarithmic one; at most 2**20).
    max_distance : int, default 128
        Offsets from about here on share the last bucket; must exceed ``max_exact``, half of
        the buckets of one direction (and be at most 2**53).

    Returns
    -------
    ndarray of int64, the shape of ``relative_positions``
        Buckets in ``[0, num_buckets)``.

    Raises
    ------
    TypeError, ValueError
        For offsets that are not whole numbers within +-2**53, or bucket parameters that leave
        no logarithmic range.

    Notes
    -----
    With ``n`` the buckets of one direction (``num_buckets``, halved when bidirectional, the
    upper half then for positive offsets) and ``e = n // 2``, a distance ``r < e`` is its own
    bucket and a larger one goes to
    ``min(n - 1, e + floor(log(r / e) / log(max_distance / e) * (n - e)))``, evaluated in
    float32 as the reference implementations do (``r / e``, its logarithm, the division by
    the float32-rounded ``log(max_distance / e)`` and the product each rounded to float32),
    so where float64 would land on the other side of a bucket boundary the result is still
    theirs.

    References
    ----------
    C. Raffel et al., "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
    Transformer", JMLR 2020; ``T5Attention._relative_position_bucket`` in Hugging Face
    transformers' ``modeling_t5.py``.
    """
    offsets = as_integer_array(relative_positions, "relative_positions")
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise InputTypeError(f"bidirectional must be True or False, got {bidirectional!r}")
    num_buckets = check_positive_int(num_buckets, "num_buckets")
    max_distance = check_positive_int(max_distance, "max_distance")
    if num_buckets > MAX_BUCKETS:
        raise InputError(f"num_buckets must be at most 2**20, got {num_buckets}")
    if max_distance > MAX_POSITION:
        raise InputError(f"max_distance must be at most 2**53, got {max_distance}")
    one_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = one_direction // 2
    if max_exact < 1:
        raise InputError(
            f"num_buckets must be at least {4 if bidirectional else 2}"
            f"{' when bidirectional' if bidirectional else ''}, got {num_buckets}"
        )
    if max_distance <= max_exact:
        raise InputError(
            f"max_distance must exceed max_exact = {max_exact} (num_buckets = {num_buckets}: "
            f"half the buckets of one direction), got {max_distance}"
        )
    if bidirectional:
        buckets = np.where(offsets > 0, one_direction, 0)
        distance = np.abs(offsets)
    else:
        buckets = np.zeros_like(offsets)
        distance = -np.minimum(offsets, 0)
    is_small = distance < max_exact
    # float32 throughout, as torch and TensorFlow compute it; max(distance, e) keeps the
    # logarithm of the small distances (whose result is discarded) finite.
    ratio = np.maximum(distance, max_exact).astype(np.float32) / np.float32(max_exact)
    scale = np.float32(math.log(max_distance / max_exact))
    with np.errstate(over="ignore", invalid="ignore"):
        grown = np.log(ratio) / scale * np.float32(one_direction - max_exact)
    large = max_exact + np.minimum(grown, np.float32(one_direction)).astype(np.int64)
    large = np.minimum(large, one_direction - 1)
    return buckets + np.where(is_small, distance, large)


T5 = register(
    Family(
        key="t5",
        name="T5 buckets",
        order=5,
        note="T5's bias is a learned value per bucket, whatever training made it: its buckets "
        "are below.",
        citation='C. Raffel et al., "Exploring the Limits of Transfer Learning with a Unified '
        'Text-to-Text Transformer", JMLR 2020',
        reference="T5Attention._relative_position_bucket in Hugging Face transformers' "
        "modeling_t5.py (pe_core.t5_relative_buckets, float32 like it)",
        parameters=(
            FamilyParameter(
                "num_buckets",
                NUM_BUCKETS,
                "buckets (an encoder's split between keys before and after the query)",
                lambda value: check_positive_int(value, "num_buckets"),
            ),
            FamilyParameter(
                "max_distance",
                MAX_DISTANCE,
                "offsets from about here on share the last bucket",
                lambda value: check_positive_int(value, "max_distance"),
            ),
            FamilyParameter(
                "bidirectional",
                True,
                "an encoder's buckets (True) or a decoder's (False)",
                check_flag("bidirectional"),
            ),
        ),
    )
)
