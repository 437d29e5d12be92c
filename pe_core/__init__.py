"""Positional Encoding Explorer core: exact, vectorized sinusoidal positional encodings and their
structure (conventions, wavelengths, similarity, relative-position rotation, uniqueness at low
precision, and the embedding + encoding forward pass), and the families around them: rotary
encodings (RoPE) with their context-extension methods and multimodal axes, ALiBi, T5's
relative buckets and learned tables, each also a :class:`Family` in :data:`FAMILIES` (its
parameters, its score against distance, its citation).

Every sinusoidal family is a :class:`FrequencyBank` (frequencies plus a column layout); each
analysis takes a bank wherever it takes ``d_model``. A new family is one module of
:mod:`pe_core.families` that builds its :class:`Family` (from a bank or a function of its own),
plus its name on that package's import line.

:func:`identify_rope` names the rotary encoding behind a dumped cos/sin cache, ``inv_freq`` or
vectors before and after rotation, and the bugs of :data:`ROPE_BUGS` it shows;
``pe_core.testing.assert_rope_matches`` asserts a cache is its config's (a test helper that
raises AssertionError, kept out of the top level as ``numpy.testing`` is), and
``python -m pe_core check-rope FILE`` does it from the command line.

Bad input raises :class:`InputError` (a ``ValueError``; :class:`InputTypeError` for a value of
the wrong kind is also a ``TypeError``); any other exception is a bug.

>>> import pe_core
>>> pe_core.sinusoidal_encoding(2048, 512).shape
(2048, 512)
"""

from pe_core._validation import MAX_ELEMENTS, MAX_JSON_DEPTH, load_json
from pe_core.alibi import alibi_bias, alibi_slopes
from pe_core.arithmetic import FORMULAS, TextbookFormula, textbook_encoding
from pe_core.bank import ColumnLayout, FrequencyBank
from pe_core.buckets import t5_relative_buckets
from pe_core.bugs import BUGS, Bug, Diagnosis, diagnose_encoding
from pe_core.conventions import CONVENTIONS, Convention
from pe_core.distances import encoding_distances
from pe_core.embedding import add_to_embeddings
from pe_core.encoding import (
    MAX_REFERENCE_ELEMENTS,
    block_mean_encoding,
    column_roles,
    encoding_columns,
    frequencies,
    reference_encoding,
    sinusoidal_bank,
    sinusoidal_encoding,
    wavelengths,
)
from pe_core.errors import InputError, InputTypeError
from pe_core.families import FAMILIES, Coincidence, Family, FamilyParameter
from pe_core.grid import GRID_LAYOUTS, GridIdentification, GridLayout, grid_encoding, identify_grid
from pe_core.grid3d import (
    GRID3D_LAYOUTS,
    Grid3DIdentification,
    Grid3DLayout,
    grid3d_encoding,
    identify_grid3d,
)
from pe_core.identify import Identification, Precision, PrecisionKind, identify_encoding
from pe_core.learned import MAX_LEARNED_ELEMENTS, learned_position_table
from pe_core.mrope import (
    axial_rope_frequencies,
    mrope_axes,
    mrope_position_ids,
    multi_axis_angles,
)
from pe_core.precision import PRECISIONS, FloatFormat, quantize
from pe_core.rope import (
    LAYOUTS,
    ROPE_TYPES,
    RotaryEncoding,
    apply_rope,
    rope_cos_sin,
    rope_frequencies,
    rope_permutation,
    yarn_correction_range,
)
from pe_core.rope_bugs import ROPE_BUGS, Finding, RopeBug
from pe_core.rope_config import (
    ConfigSource,
    RopeConfigSources,
    rope_config_essentials,
    rope_config_sources,
    rope_from_config,
    rope_layers,
)
from pe_core.rope_identify import Departure, RopeArithmetic, RopeIdentification, identify_rope
from pe_core.rope_models import MODEL_ROPES, ModelRope
from pe_core.rope_precision import (
    MODEL_DTYPES,
    AngleErrorCrossing,
    first_angle_error_above,
    inv_freq_float32_ulps,
    merged_position_ids,
    rope_angle_errors,
    transformers_angle_errors,
)
from pe_core.rope_scores import rope_decay_bound, rope_scores
from pe_core.rope_temperature import QueryTemperature, rope_query_temperature
from pe_core.rope_variants import ROPE_VARIANTS, RopeVariant
from pe_core.rotation import MAX_ROTATION_D_MODEL, relative_rotation
from pe_core.similarity import cosine_similarity, offset_similarity, similarity_matrix
from pe_core.uniqueness import (
    CASTS,
    PAIRWISE_LIMIT,
    UniquenessReport,
    nearest_neighbor_distances,
    pairwise_limit,
    uniqueness_report,
)

__all__ = [
    "BUGS",
    "CASTS",
    "CONVENTIONS",
    "FAMILIES",
    "FORMULAS",
    "GRID3D_LAYOUTS",
    "GRID_LAYOUTS",
    "LAYOUTS",
    "MAX_ELEMENTS",
    "MAX_JSON_DEPTH",
    "MAX_LEARNED_ELEMENTS",
    "MAX_REFERENCE_ELEMENTS",
    "MAX_ROTATION_D_MODEL",
    "MODEL_DTYPES",
    "MODEL_ROPES",
    "PAIRWISE_LIMIT",
    "PRECISIONS",
    "ROPE_BUGS",
    "ROPE_TYPES",
    "ROPE_VARIANTS",
    "AngleErrorCrossing",
    "Bug",
    "Coincidence",
    "ColumnLayout",
    "ConfigSource",
    "Convention",
    "Departure",
    "Diagnosis",
    "Family",
    "FamilyParameter",
    "Finding",
    "FloatFormat",
    "FrequencyBank",
    "Grid3DIdentification",
    "Grid3DLayout",
    "GridIdentification",
    "GridLayout",
    "Identification",
    "InputError",
    "InputTypeError",
    "ModelRope",
    "Precision",
    "PrecisionKind",
    "QueryTemperature",
    "RopeArithmetic",
    "RopeBug",
    "RopeConfigSources",
    "RopeIdentification",
    "RopeVariant",
    "RotaryEncoding",
    "TextbookFormula",
    "UniquenessReport",
    "add_to_embeddings",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "axial_rope_frequencies",
    "block_mean_encoding",
    "column_roles",
    "cosine_similarity",
    "diagnose_encoding",
    "encoding_columns",
    "encoding_distances",
    "first_angle_error_above",
    "frequencies",
    "grid3d_encoding",
    "grid_encoding",
    "identify_encoding",
    "identify_grid",
    "identify_grid3d",
    "identify_rope",
    "inv_freq_float32_ulps",
    "learned_position_table",
    "load_json",
    "merged_position_ids",
    "mrope_axes",
    "mrope_position_ids",
    "multi_axis_angles",
    "nearest_neighbor_distances",
    "offset_similarity",
    "pairwise_limit",
    "quantize",
    "reference_encoding",
    "relative_rotation",
    "rope_angle_errors",
    "rope_config_essentials",
    "rope_config_sources",
    "rope_cos_sin",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_from_config",
    "rope_layers",
    "rope_permutation",
    "rope_query_temperature",
    "rope_scores",
    "similarity_matrix",
    "sinusoidal_bank",
    "sinusoidal_encoding",
    "t5_relative_buckets",
    "textbook_encoding",
    "transformers_angle_errors",
    "uniqueness_report",
    "wavelengths",
    "yarn_correction_range",
]

__version__ = "0.1.0"
