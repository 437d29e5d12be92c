"""The sinusoidal wing: the encoding of "Attention Is All You Need" and the conventions real
libraries use, its analyses (wavelengths, similarity, the relative-position rotation,
uniqueness, distances, the embedding's forward pass, the textbook arithmetic of a library),
2-D and 3-D grids, and the identification of a table with its bug catalogue.

One module a topic; this front lists the wing's public names (all of them are also in
:mod:`pe_core`). Other wings import this front, never the modules behind it.
"""

from pe_core.sinusoidal.arithmetic import FORMULAS, TextbookFormula, textbook_encoding
from pe_core.sinusoidal.bugs import BUGS, Bug, Diagnosis, diagnose_encoding
from pe_core.sinusoidal.conventions import CONVENTIONS, Convention, resolve_bank
from pe_core.sinusoidal.distances import encoding_distances
from pe_core.sinusoidal.embedding import add_to_embeddings
from pe_core.sinusoidal.encoding import (
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
from pe_core.sinusoidal.grid import (
    GRID_LAYOUTS,
    GridIdentification,
    GridLayout,
    grid_encoding,
    identify_grid,
)
from pe_core.sinusoidal.grid3d import (
    GRID3D_LAYOUTS,
    Grid3DIdentification,
    Grid3DLayout,
    grid3d_encoding,
    identify_grid3d,
)
from pe_core.sinusoidal.identify import Identification, Precision, PrecisionKind, identify_encoding
from pe_core.sinusoidal.rotation import MAX_ROTATION_D_MODEL, relative_rotation
from pe_core.sinusoidal.similarity import cosine_similarity, offset_similarity, similarity_matrix
from pe_core.sinusoidal.uniqueness import (
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
    "FORMULAS",
    "GRID3D_LAYOUTS",
    "GRID_LAYOUTS",
    "MAX_REFERENCE_ELEMENTS",
    "MAX_ROTATION_D_MODEL",
    "PAIRWISE_LIMIT",
    "Bug",
    "Convention",
    "Diagnosis",
    "Grid3DIdentification",
    "Grid3DLayout",
    "GridIdentification",
    "GridLayout",
    "Identification",
    "Precision",
    "PrecisionKind",
    "TextbookFormula",
    "UniquenessReport",
    "add_to_embeddings",
    "block_mean_encoding",
    "column_roles",
    "cosine_similarity",
    "diagnose_encoding",
    "encoding_columns",
    "encoding_distances",
    "frequencies",
    "grid3d_encoding",
    "grid_encoding",
    "identify_encoding",
    "identify_grid",
    "identify_grid3d",
    "nearest_neighbor_distances",
    "offset_similarity",
    "pairwise_limit",
    "reference_encoding",
    "relative_rotation",
    "resolve_bank",
    "similarity_matrix",
    "sinusoidal_bank",
    "sinusoidal_encoding",
    "textbook_encoding",
    "uniqueness_report",
    "wavelengths",
]
