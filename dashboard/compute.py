"""Cached calls into pe_core, keyed on small parameter tuples, returning display-sized data only.

All caching of the app lives here. Every function takes plain scalars and tuples (cheap to hash)
and returns arrays of at most about a million cells: Streamlit copies what a cache returns, so a
cache of full encodings would cost the copy on every rerun.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import numpy as np
import streamlit as st

import pe_core
from dashboard import budget

#: Largest number of columns of a chart matrix.
MAX_CELLS_SIDE = 1024
#: Largest number of rows: a 560-pixel chart cannot show more than about 500 anyway.
MAX_ROWS = 512
#: Largest number of cells in one heatmap: float32 values, about 1.4 MB of JSON.
MAX_CELLS = 1 << 18
#: Largest side of the (square) similarity heatmap.
MAX_SIMILARITY_SIDE = 512
#: Points of a smooth curve.
SMOOTH_POINTS = 2000
#: Largest matrix offered for download as .npy (float64, 32 MB).
MAX_DOWNLOAD_ELEMENTS = 1 << 22
#: Largest matrix offered as CSV: about 24 bytes a value as text, so at most about 25 MB (a CSV of
#: the largest .npy would be 100 MB and take seconds to write).
MAX_CSV_ELEMENTS = 1 << 20
CSV_BYTES_PER_VALUE = 24

cached = st.cache_data(max_entries=32, max_size="96MB", show_spinner=False)


@dataclass(frozen=True)
class Config:
    """The shared sidebar parameters."""

    n_positions: int
    d_model: int
    base: float
    convention: str

    @property
    def core_kwargs(self) -> dict:
        return {"base": self.base, "convention": self.convention}


def column_layout(config: Config) -> pe_core.ColumnLayout:
    """Where the sin, cos and zero columns are for the current convention and d_model."""
    return pe_core.CONVENTIONS[config.convention].column_layout(config.d_model)


def n_pairs(config: Config) -> int:
    """Number of complete sin/cos pairs (0 for d_model = 1 with tensor2tensor)."""
    return pe_core.CONVENTIONS[config.convention].column_layout(config.d_model).n_cos


def closed_form_holds(config: Config) -> bool:
    """True unless an odd d_model leaves a sin column unpaired (then similarity depends on k)."""
    return pe_core.CONVENTIONS[config.convention].column_layout(config.d_model).is_paired


@dataclass(frozen=True)
class ColumnInfo:
    """Per-column facts for hover text: pair index, role, frequency and wavelength."""

    pair: np.ndarray
    role: np.ndarray
    frequency: np.ndarray
    wavelength: np.ndarray


@cached
def column_info(d_model: int, base: float, convention: str) -> ColumnInfo:
    pair, role = pe_core.column_roles(d_model, convention=convention)
    freqs = pe_core.frequencies(d_model, base=base, convention=convention)
    per_column = np.where(pair >= 0, freqs[np.maximum(pair, 0)] if freqs.size else 0.0, np.nan)
    with np.errstate(divide="ignore"):
        wavelength = 2 * np.pi / per_column
    return ColumnInfo(pair, role, per_column, wavelength)


@dataclass(frozen=True)
class HeatmapData:
    """What the encoding heatmap shows: values, rows and columns, and how they were reduced."""

    values: np.ndarray  # float32, (rows, columns)
    row_first: np.ndarray  # first position of each row
    row_last: np.ndarray  # last position of each row (equal to first unless block means)
    first_column: int
    note: str


def column_window(d_model: int, first_column: int) -> tuple[int, int]:
    """The displayed columns ``[first, stop)``: all of them, or a window of ``MAX_CELLS_SIDE``."""
    first = min(max(0, first_column), max(0, d_model - MAX_CELLS_SIDE))
    return first, min(d_model, first + MAX_CELLS_SIDE)


def row_budget(n_columns: int) -> int:
    """Rows a heatmap of ``n_columns`` columns may show."""
    return min(MAX_ROWS, MAX_CELLS // max(1, n_columns))


@cached
def heatmap_data(config: Config, mode: str, first_position: int, first_column: int) -> HeatmapData:
    """The encoding at display size: every row, block means, or a window of rows."""
    length, d_model = config.n_positions, config.d_model
    col_first, col_stop = column_window(d_model, first_column)
    rows = row_budget(col_stop - col_first)
    notes = []
    if col_stop - col_first < d_model:
        notes.append(f"columns {col_first:,}–{col_stop - 1:,} of {d_model:,}")
    if length <= rows:
        positions = np.arange(length)
        values = _shown_columns(config, positions, col_first, col_stop)
        last = positions
    elif mode == "blocks":
        block = math.ceil(length / rows)
        values = pe_core.block_mean_encoding(length, d_model, block, **config.core_kwargs)
        positions = np.arange(values.shape[0]) * block
        last = np.minimum(positions + block - 1, length - 1)
        notes.append(
            f"each row is the mean of {block:,} consecutive positions (closed form): "
            f"{values.shape[0]:,} rows for {length:,} positions"
        )
    else:
        first = min(max(0, first_position), length - rows)
        positions = first + np.arange(rows)
        values = _shown_columns(config, positions, col_first, col_stop)
        last = positions
        notes.append(f"positions {first:,}–{first + rows - 1:,} of {length:,} at full resolution")
    if values.shape[1] != col_stop - col_first:  # block means come with every column
        values = values[:, col_first:col_stop]
    return HeatmapData(
        np.ascontiguousarray(values, dtype=np.float32), positions, last, col_first, "; ".join(notes)
    )


def _shown_columns(config: Config, positions: np.ndarray, first: int, stop: int) -> np.ndarray:
    """The encoding of ``positions`` in columns ``first .. stop - 1`` only."""
    if stop - first == config.d_model:
        return pe_core.sinusoidal_encoding(positions, config.d_model, **config.core_kwargs)
    columns = np.arange(first, stop)
    return pe_core.encoding_columns(positions, config.d_model, columns, **config.core_kwargs)


def encoding_npy(config: Config) -> bytes:
    """The full float64 encoding as an .npy file (for the download button, made on click)."""
    n_values = config.n_positions * config.d_model
    budget.check_request(2 * 8 * n_values, f"an .npy file of {n_values:,} values")
    values = pe_core.sinusoidal_encoding(config.n_positions, config.d_model, **config.core_kwargs)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(values))
    return header.getvalue() + values.data  # one copy of the values, not two


def encoding_csv(config: Config) -> bytes:
    """The full encoding as CSV, each value in the shortest form that reads back exactly."""
    n_values = config.n_positions * config.d_model
    if n_values > MAX_CSV_ELEMENTS:
        raise ValueError(
            f"a CSV of {n_values:,} values is more than the {MAX_CSV_ELEMENTS:,} offered here; "
            "download the .npy file instead"
        )
    budget.check_request(CSV_BYTES_PER_VALUE * 3 * n_values, f"a CSV file of {n_values:,} values")
    values = pe_core.sinusoidal_encoding(config.n_positions, config.d_model, **config.core_kwargs)
    # repr of a float is its shortest decimal form that reads back as the same float64.
    lines = ["position," + ",".join(f"dim_{j}" for j in range(config.d_model))]
    lines += [f"{k}," + ",".join(map(repr, row)) for k, row in enumerate(values.tolist())]
    lines.append("")
    return "\n".join(lines).encode()


@dataclass(frozen=True)
class SinusoidData:
    smooth_positions: np.ndarray
    smooth_values: np.ndarray  # (points, dims)
    integer_positions: np.ndarray  # empty when there are too many to mark
    integer_values: np.ndarray


@cached
def sinusoid_data(config: Config, dims: tuple[int, ...], first: int, span: int) -> SinusoidData:
    """Chosen columns against position: a smooth curve and the values at integer positions."""
    last = min(first + span - 1, config.n_positions - 1)
    smooth = np.linspace(first, last, SMOOTH_POINTS)
    smooth_values = pe_core.encoding_columns(
        smooth, config.d_model, list(dims), **config.core_kwargs
    )
    if last - first + 1 <= SMOOTH_POINTS // 2:
        integers = np.arange(first, last + 1)
        integer_values = pe_core.encoding_columns(
            integers, config.d_model, list(dims), **config.core_kwargs
        )
    else:
        integers, integer_values = np.zeros(0), np.zeros((0, len(dims)))
    return SinusoidData(smooth, smooth_values, integers, integer_values)


@cached
def rows_at(config: Config, positions: tuple[int, ...]) -> np.ndarray:
    """Full encoding rows of a few positions (value against dimension)."""
    return pe_core.sinusoidal_encoding(list(positions), config.d_model, **config.core_kwargs)


@cached
def wavelengths_by_convention(d_model: int, base: float) -> dict[str, np.ndarray]:
    return {
        name: pe_core.wavelengths(d_model, base=base, convention=name)
        for name in pe_core.CONVENTIONS
    }


@dataclass(frozen=True)
class SimilarityData:
    matrix: np.ndarray  # float32 (n, n)
    positions: np.ndarray
    note: str


def similarity_positions(length: int, mode: str, first: int) -> tuple[np.ndarray, str]:
    """Which positions the similarity heatmap compares (at most ``MAX_SIMILARITY_SIDE``)."""
    if length <= MAX_SIMILARITY_SIDE:
        return np.arange(length), ""
    if mode == "sampled":
        step = math.ceil(length / MAX_SIMILARITY_SIDE)
        positions = np.arange(0, length, step)
        return positions, (
            f"positions 0, {step}, {2 * step}, … of {length:,}: every {step} positions "
            f"({positions.size} rows, exact values)"
        )
    first = min(max(0, first), length - MAX_SIMILARITY_SIDE)
    positions = first + np.arange(MAX_SIMILARITY_SIDE)
    return positions, f"positions {first:,}–{positions[-1]:,} of {length:,}"


@cached
def similarity_data(config: Config, kind: str, mode: str, first: int) -> SimilarityData:
    positions, note = similarity_positions(config.n_positions, mode, first)
    matrix = pe_core.similarity_matrix(positions, config.d_model, kind=kind, **config.core_kwargs)
    return SimilarityData(matrix.astype(np.float32), positions, note)


@dataclass(frozen=True)
class ProfileData:
    offsets: np.ndarray
    values: np.ndarray  # the closed form at ``offsets`` (or the bucket minimum when reduced)
    upper: np.ndarray | None  # bucket maximum when the profile was reduced to an envelope
    checks: dict[int, tuple[np.ndarray, np.ndarray]]  # start k -> (offsets, direct values)
    note: str


PROFILE_POINTS = 2000
CHECK_OFFSETS = 24


@cached
def profile_data(config: Config, kind: str) -> ProfileData:
    """Similarity against offset by closed form, and direct checks from a few starting positions."""
    length = config.n_positions
    n_offsets = max(length, 2)
    closed_form = closed_form_holds(config)
    checks = _direct_checks(config, kind, n_offsets)
    if not closed_form:
        return ProfileData(np.zeros(0), np.zeros(0), None, checks, "")
    profile = pe_core.offset_similarity(
        np.arange(n_offsets), config.d_model, kind=kind, **config.core_kwargs
    )
    if n_offsets <= PROFILE_POINTS * 2:
        return ProfileData(np.arange(n_offsets), profile, None, checks, "")
    bucket, lowest, highest = bucket_extremes(profile, PROFILE_POINTS)
    note = (
        f"envelope: lowest and highest value in each run of {bucket} offsets "
        f"(all {n_offsets:,} computed)"
    )
    return ProfileData(np.arange(lowest.size) * bucket, lowest, highest, checks, note)


def bucket_extremes(values: np.ndarray, n_buckets: int) -> tuple[int, np.ndarray, np.ndarray]:
    """Split ``values`` into at most ``n_buckets`` runs of equal length (the last may be
    shorter); return the run length and each run's minimum and maximum."""
    bucket = math.ceil(values.size / n_buckets)
    count = math.ceil(values.size / bucket)
    padded = np.pad(values, (0, count * bucket - values.size), mode="edge").reshape(count, bucket)
    return bucket, padded.min(axis=1), padded.max(axis=1)


def check_starts(length: int) -> tuple[int, ...]:
    """A few different starting positions k for the direct checks."""
    return tuple(sorted({0, length // 3, (2 * length) // 3}))


def _direct_checks(
    config: Config, kind: str, n_offsets: int
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    offsets = np.unique(np.linspace(0, n_offsets - 1, CHECK_OFFSETS).round().astype(int))
    checks = {}
    for start in check_starts(config.n_positions):
        rows = pe_core.sinusoidal_encoding(
            np.concatenate(([start], start + offsets)), config.d_model, **config.core_kwargs
        )
        anchor, shifted = rows[0], rows[1:]
        if kind == "dot":
            values = shifted @ anchor
        elif kind == "distance":
            values = np.linalg.norm(shifted - anchor, axis=1)
        else:
            values = pe_core.cosine_similarity(anchor[None, :], shifted)[0]
        checks[start] = (offsets, values)
    return checks


def representable_positions(n_positions: int, precision: str, cast: str) -> int:
    """How many of the positions 0 .. n-1 a model can hold when rounding at ``cast``: with the
    position ids or the angles in ``precision``, those from its overflow threshold on become
    inf (float16: from 65,520). With the stored encoding rounded, all of them."""
    if cast == "outputs":
        return n_positions
    threshold = pe_core.PRECISIONS[precision].overflow_threshold
    return int(min(n_positions, math.ceil(threshold)))


@cached
def uniqueness(config: Config, precision: str, cast: str) -> pe_core.UniquenessReport:
    n = representable_positions(config.n_positions, precision, cast)
    return pe_core.uniqueness_report(
        n, config.d_model, precision=precision, cast=cast, **config.core_kwargs
    )


#: Largest number of rounded values (rows x d_model) computed for the neighbour chart when
#: rounding happens at the angles or the stored encoding; beyond it, positions are sampled.
NEIGHBOUR_VALUES = 1 << 22


@dataclass(frozen=True)
class NeighbourData:
    """Distances between the encodings of neighbouring positions, as stored and exactly."""

    positions: np.ndarray  # k (or the first k of each run) of the exact series
    exact_next: np.ndarray  # |PE(k+1) - PE(k)| in exact arithmetic (float64)
    exact_nearest: np.ndarray | None  # float64 distance to the nearest of all other positions
    stored_positions: np.ndarray  # k of the stored series (all, run starts, or a sample)
    stored: np.ndarray | None  # |E(k+1) - E(k)| as stored at the precision (None: float64)
    note: str


@cached
def neighbour_distances(config: Config, precision: str, cast: str) -> NeighbourData:
    """Distance from each position's encoding to the next position's, as a model stores it at
    ``precision`` (collisions are zeros), with the exact values for comparison. Long sequences
    are shown as the lowest value in each run of positions; when the rounded rows would be too
    many to compute, a sample of positions stands for the rest (the note says so)."""
    n = representable_positions(config.n_positions, precision, cast)
    kwargs = {"d_model": config.d_model, **config.core_kwargs}
    k = np.arange(max(n - 1, 0), dtype=np.float64)
    exact_next = pe_core.encoding_distances(k, k + 1, **kwargs)
    exact_nearest = None
    if column_layout(config).is_paired or n <= pe_core.PAIRWISE_LIMIT:
        exact_nearest = pe_core.nearest_neighbor_distances(n, **kwargs)[:-1]
    notes = []
    stored, sampled = None, k
    if precision != "float64":
        if cast != "positions" and 2 * k.size * config.d_model > NEIGHBOUR_VALUES:
            count = max(2, NEIGHBOUR_VALUES // (2 * config.d_model))
            sampled = np.unique(np.linspace(0, k.size - 1, count).round())
            notes.append(f"at {precision}: {sampled.size:,} positions sampled evenly")
        stored = pe_core.encoding_distances(
            sampled, sampled + 1, precision=precision, cast=cast, **kwargs
        )
    if k.size <= PROFILE_POINTS * 2:
        return NeighbourData(k, exact_next, exact_nearest, sampled, stored, "; ".join(notes))
    bucket, lowest_next, _ = bucket_extremes(exact_next, PROFILE_POINTS)
    starts = np.arange(lowest_next.size) * bucket
    if exact_nearest is not None:
        exact_nearest = bucket_extremes(exact_nearest, PROFILE_POINTS)[1]
    if stored is not None and sampled.size == k.size:  # every position: lowest per run too
        stored = bucket_extremes(stored, PROFILE_POINTS)[1]
        sampled = starts
    notes.insert(0, f"lowest value in each run of {bucket:,} positions")
    return NeighbourData(starts, lowest_next, exact_nearest, sampled, stored, "; ".join(notes))


@cached
def pair_distances(
    config: Config, earlier: tuple[int, ...], later: tuple[int, ...], precision: str, cast: str
) -> tuple[np.ndarray, np.ndarray]:
    """Distance between the encodings of ``earlier[j]`` and ``later[j]``: exact, and as stored
    at ``precision`` with the rounding at ``cast``."""
    kwargs = {"d_model": config.d_model, **config.core_kwargs}
    exact = pe_core.encoding_distances(earlier, later, **kwargs)
    stored = pe_core.encoding_distances(earlier, later, precision=precision, cast=cast, **kwargs)
    return exact, stored


# --- Relative position (rotation) -------------------------------------------------------------

#: Largest d_model whose full rotation matrix is built (2048**2 float64 = 32 MB).
MAX_ROTATION_D_MODEL = 2048
#: Pairs in the displayed window of the rotation matrix: 16 blocks of 2x2, big enough to see.
ROTATION_PAIRS = 16


@dataclass(frozen=True)
class RotationData:
    window: np.ndarray | None  # float32 rows/columns ``indices`` of M, or None when M is not built
    indices: np.ndarray  # the columns of the pairs shown (contiguous only when interleaved)
    angles: np.ndarray  # offset * w_i, one per pair
    shifted: np.ndarray | None  # PE(k + offset)
    rotated: np.ndarray | None  # M @ PE(k)
    residual: float | None


@cached
def rotation_data(config: Config, offset: float, k: int, first_pair: int) -> RotationData:
    """M(offset) for the pairs ``first_pair ..`` (16 of them), and PE(k + offset) = M @ PE(k)."""
    freqs = pe_core.frequencies(config.d_model, **config.core_kwargs)
    layout = pe_core.CONVENTIONS[config.convention].column_layout(config.d_model)
    angles = offset * freqs[: layout.n_cos]
    if config.d_model > MAX_ROTATION_D_MODEL:
        return RotationData(None, np.zeros(0, dtype=int), angles, None, None, None)
    matrix = pe_core.relative_rotation(offset, config.d_model, **config.core_kwargs)
    rows = pe_core.sinusoidal_encoding([k, k + offset], config.d_model, **config.core_kwargs)
    rotated = matrix @ rows[0]
    residual = float(np.max(np.abs(rotated - rows[1])))
    pair, role = pe_core.column_roles(config.d_model, convention=config.convention)
    first = min(max(0, first_pair), max(0, layout.n_cos - ROTATION_PAIRS))
    indices = np.flatnonzero((pair >= first) & (pair < first + ROTATION_PAIRS) & (role != "zero"))
    window = matrix[np.ix_(indices, indices)]
    return RotationData(window.astype(np.float32), indices, angles, rows[1], rotated, residual)


@cached
def circle_points(config: Config, pairs: tuple[int, ...], n_points: int) -> np.ndarray:
    """(sin, cos) of k * w_i for k = 0 .. n_points-1 and each pair: shape (n_points, pairs, 2)."""
    pair_of, role = pe_core.column_roles(config.d_model, convention=config.convention)
    columns = []
    for i in pairs:
        columns.append(int(np.flatnonzero((pair_of == i) & (role == "sin"))[0]))
        columns.append(int(np.flatnonzero((pair_of == i) & (role == "cos"))[0]))
    values = pe_core.encoding_columns(n_points, config.d_model, columns, **config.core_kwargs)
    return values.reshape(n_points, len(pairs), 2)


# --- Embeddings + encoding ----------------------------------------------------------------------

PAD = "<pad>"
#: The token of every position in random mode (each gets its own random vector).
RANDOM_TOKEN = "(random)"
#: Columns of the embeddings view's heatmaps (and of what its cache keeps).
MAX_EMBEDDING_COLUMNS = 256


@dataclass(frozen=True)
class EmbeddingData:
    tokens: list[list[str]]  # per sequence, padded
    embeddings: np.ndarray  # float32 (batch, seq, <= 256 columns): as added (scaled if asked)
    encoding: np.ndarray  # float32 (seq, <= 256 columns)
    total: np.ndarray  # float32 (batch, seq, <= 256 columns): the layer's output
    norms: dict[str, np.ndarray]  # per position (mean over the batch)


def tokenize(text: str, max_sequences: int = 16, max_tokens: int = 64) -> list[list[str]]:
    """Whitespace tokens of each non-empty line (at most ``max_sequences`` x ``max_tokens``)."""
    lines = [line.split()[:max_tokens] for line in text.splitlines() if line.split()]
    return lines[:max_sequences]


#: Values (rows x d_model) of embeddings computed at once: the forward pass runs a block of
#: token rows at a time, so its memory does not grow with the batch.
EMBEDDING_BLOCK_VALUES = 1 << 19


def embedding_request_bytes(batch: int, length: int, d_model: int, n_words: int = 0) -> int:
    """What :func:`embedding_data` allocates, at most: the encoding of the sequence, the word
    vectors, the shown columns of three (batch, seq) arrays, and the temporaries of one block
    of rows."""
    shown = min(d_model, MAX_EMBEDDING_COLUMNS)
    block_rows = max(1, min(length, EMBEDDING_BLOCK_VALUES // d_model))
    arrays = (length + n_words) * d_model + 3 * batch * length * shown
    return 8 * (arrays + 8 * block_rows * d_model)


@cached
def embedding_data(
    config: Config,
    sentences: tuple[tuple[str, ...], ...] | None,
    shape: tuple[int, int],
    seed: int,
    std: float,
    scale: bool,
    dropout: float,
    dropout_seed: int,
) -> EmbeddingData:
    """Embed sentences (or random tokens of ``shape``), add the encoding, as the layer does.

    Only the first :data:`MAX_EMBEDDING_COLUMNS` columns are kept for display; the norms use
    every column. The rows are drawn and added a block at a time from the same generators, so
    the numbers are those of one call on the whole batch (a generator's stream does not depend
    on how it is split), at a bounded cost in memory.
    """
    d_model = config.d_model
    if sentences is not None:
        batch, length = len(sentences), max(len(s) for s in sentences)
    else:
        batch, length = shape
    vocabulary = sorted({t for s in sentences for t in s}) if sentences is not None else []
    budget.check_request(
        embedding_request_bytes(batch, length, d_model, len(vocabulary)),
        f"the forward pass of {batch} x {length} tokens at d_model {d_model}",
    )
    if sentences is not None:
        tokens = [list(s) + [PAD] * (length - len(s)) for s in sentences]
    else:
        tokens = [[RANDOM_TOKEN] * length for _ in range(batch)]
    rng = np.random.default_rng(seed)
    dropout_rng = np.random.default_rng(dropout_seed)
    if sentences is not None:
        table = {word: rng.normal(0.0, std, d_model) for word in vocabulary}
        table[PAD] = np.zeros(d_model)  # padding embeds to zero, as with padding_idx
    encoding = pe_core.sinusoidal_encoding(length, d_model, **config.core_kwargs)
    shown = min(d_model, MAX_EMBEDDING_COLUMNS)
    # For display only (the charts send float32): half the memory of float64 in the cache.
    embeddings = np.empty((batch, length, shown), dtype=np.float32)
    total = np.empty((batch, length, shown), dtype=np.float32)
    embedding_norms = np.empty((batch, length))
    total_norms = np.empty((batch, length))
    rows = max(1, EMBEDDING_BLOCK_VALUES // d_model)
    for b in range(batch):
        for first in range(0, length, rows):
            block = slice(first, min(first + rows, length))
            if sentences is None:
                vectors = rng.normal(0.0, std, (block.stop - block.start, d_model))
            else:
                vectors = np.array([table[t] for t in tokens[b][block]])
            output = pe_core.add_to_embeddings(
                vectors, encoding[block], scale=scale, dropout=dropout, rng=dropout_rng
            )
            if scale:
                vectors *= np.sqrt(d_model)
            embeddings[b, block] = vectors[:, :shown]
            total[b, block] = output[:, :shown]
            embedding_norms[b, block] = np.linalg.norm(vectors, axis=1)
            total_norms[b, block] = np.linalg.norm(output, axis=1)
    # Mean over the sequences that have a real token at each position (padding excluded).
    real = np.array([[t != PAD for t in row] for row in tokens], dtype=float)
    count = np.maximum(real.sum(axis=0), 1.0)
    norms = {
        "embedding" + (" × √d_model" if scale else ""): (embedding_norms * real).sum(0) / count,
        "encoding": np.linalg.norm(encoding, axis=1),
        "sum (layer output)": (total_norms * real).sum(0) / count,
    }
    return EmbeddingData(tokens, embeddings, encoding[:, :shown].astype(np.float32), total, norms)


# --- Conventions lab -----------------------------------------------------------------------------


@cached
def convention_profiles(config: Config, n_offsets: int) -> dict[str, np.ndarray]:
    """Cosine similarity against offset for every convention whose closed form holds."""
    profiles = {}
    for name in pe_core.CONVENTIONS:
        variant = Config(config.n_positions, config.d_model, config.base, name)
        if (
            closed_form_holds(variant)
            and pe_core.frequencies(config.d_model, base=config.base, convention=name).size
        ):
            profiles[name] = pe_core.offset_similarity(
                np.arange(n_offsets), config.d_model, base=config.base, convention=name
            )
    return profiles


@cached
def layout_permutation_error(config: Config) -> float:
    """max |split - vaswani[:, permutation]|: the two layouts hold the same numbers."""
    rows = min(config.n_positions, 256)
    vaswani = pe_core.sinusoidal_encoding(rows, config.d_model, base=config.base)
    split = pe_core.sinusoidal_encoding(rows, config.d_model, base=config.base, convention="split")
    permutation = np.concatenate([np.arange(0, config.d_model, 2), np.arange(1, config.d_model, 2)])
    return float(np.max(np.abs(split - vaswani[:, permutation]), initial=0.0))


@cached
def identify(data: bytes, name: str):
    """Parse an uploaded file and identify it (cached on the file's bytes)."""
    from dashboard.uploads import load_matrix

    matrix = load_matrix(name, data)
    return matrix.shape, pe_core.identify_encoding(matrix)


# --- Figures ------------------------------------------------------------------------------------


def figure(builder, *args):
    """``builder(*args)``, a Plotly figure, built once per distinct ``args`` and then shared.

    Building a figure is mostly Plotly validating its arrays, tens of milliseconds for a large
    heatmap; a rerun with nothing changed should not pay that again. The figures are kept as
    objects (``st.cache_resource``: pickling one would validate it again) and never modified
    after they are built. ``args`` are the small parameters the figure is made from.
    """
    return _cached_figure(f"{builder.__module__}.{builder.__qualname__}", builder, args)


@st.cache_resource(max_entries=64, show_spinner=False)
def _cached_figure(name: str, _builder, args: tuple):
    return _builder(*args)
