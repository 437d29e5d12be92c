"""T5's relative buckets (Raffel et al. 2020) as a family: a bias learned per bucket of the
offset, so no score before training; its parameters are those of the buckets.

>>> import pe_core
>>> pe_core.FAMILIES["t5"].defaults
{'num_buckets': 32, 'max_distance': 128, 'bidirectional': True}
"""

from __future__ import annotations

from pe_core._validation import check_positive_int
from pe_core.families.base import Family, FamilyParameter, check_flag, register

__all__ = ["T5"]

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
                32,
                "buckets (an encoder's split between keys before and after the query)",
                lambda value: check_positive_int(value, "num_buckets"),
            ),
            FamilyParameter(
                "max_distance",
                128,
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
