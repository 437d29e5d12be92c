"""Multimodal rotary position embeddings (M-RoPE, Qwen2-VL and its successors): each token has
three position ids (temporal, height, width) and each rotary pair is driven by one of them.

Text tokens carry the same id on all three axes, one more per token. An image or a video of
``T x H x W`` patches, merged ``s x s`` by the vision tower into ``T x H/s x W/s`` tokens,
gets the ids of its grid (row and column on the height and width axes, frame on the temporal
one), all starting at the id the next text token would have had; the text after it continues
from there plus ``max(H, W) / s``. The semantics are those of Hugging Face transformers 5.23's
``get_rope_index`` (Qwen2-VL, Qwen2.5-VL, Qwen3-VL).

>>> mrope_position_ids([2, (1, 4, 4), 1])
array([[0, 1, 2, 2, 2, 2, 4],
       [0, 1, 2, 2, 3, 3, 4],
       [0, 1, 2, 3, 2, 3, 4]])
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pe_core._numerics.checks import (
    MAX_D_MODEL,
    as_integer_array,
    as_real_array,
    check_base,
    check_positive_int,
    check_real,
    check_size,
    describe,
)
from pe_core.errors import InputError, InputTypeError

__all__ = [
    "AXES",
    "axial_rope_frequencies",
    "mrope_axes",
    "mrope_position_ids",
    "multi_axis_angles",
]

#: The three axes of M-RoPE, in the order of its position ids and of ``mrope_section``.
AXES = ("temporal", "height", "width")


def _segment(segment: object, index: int, merge: int) -> tuple[int, int, int, float] | int:
    name = f"segments[{index}]"
    if isinstance(segment, numbers.Integral) and not isinstance(segment, (bool, np.bool_)):
        return check_positive_int(segment, f"{name} (a number of text tokens)")
    if not isinstance(segment, (tuple, list)) or len(segment) not in (3, 4):
        raise InputTypeError(
            f"{name} must be a number of text tokens or a (T, H, W) or (T, H, W, time_interval) "
            f"grid of patches, got {describe(segment)}"
        )
    t, h, w = (check_positive_int(v, f"{name}[{i}]") for i, v in enumerate(segment[:3]))
    for axis, size in (("H", h), ("W", w)):
        if size % merge:
            raise InputError(
                f"{name}: {axis} = {size} patches must be a multiple of spatial_merge_size = "
                f"{merge} (the vision tower merges {merge} x {merge} patches into one token)"
            )
    interval = 1.0
    if len(segment) == 4:
        interval = check_real(segment[3], f"{name}[3] (time_interval)")
        if interval <= 0:
            raise InputError(f"{name}[3] (time_interval) must be > 0, got {interval}")
    return t, h, w, interval


def mrope_position_ids(
    segments: Sequence[int | tuple], *, spatial_merge_size: int = 2
) -> NDArray[np.int64]:
    """The (temporal, height, width) position ids of a text + image + video sequence.

    Parameters
    ----------
    segments : sequence
        The sequence in order: an int is that many text tokens (Qwen's ``<|vision_start|>``
        and ``<|vision_end|>`` included: they are text); a tuple ``(T, H, W)`` is an image or a
        video of ``T`` frames of ``H x W`` patches (a row of ``image_grid_thw`` or
        ``video_grid_thw``); ``(T, H, W, time_interval)`` spaces the frames' temporal ids by
        ``time_interval`` (Qwen2.5-VL's ``tokens_per_second * second_per_grid_t``).
    spatial_merge_size : int, default 2
        The vision tower merges ``s x s`` patches into one token (Qwen2-VL: 2).

    Returns
    -------
    ndarray of int64, shape (3, n_tokens)
        Row 0 the temporal ids, row 1 the height ids, row 2 the width ids.

    Raises
    ------
    TypeError, ValueError
        For an empty sequence, a segment that is neither a positive count nor a grid, a grid
        whose H or W is not a multiple of ``spatial_merge_size``, or more tokens than the
        memory budget.

    Notes
    -----
    A grid starting at id ``p`` gives the token of frame ``f``, row ``r`` and column ``c`` the
    ids ``(p + floor(f * time_interval), p + r, p + c)`` (the product in float32, as the
    reference computes it); the following text starts at
    ``p + max(H, W) // s``. Releases of transformers before 5 started it at the largest id so
    far plus one instead, which differs for videos with more frames than rows and columns.

    References
    ----------
    P. Wang et al., "Qwen2-VL: Enhancing Vision-Language Model's Perception of the World at Any
    Resolution", 2024; ``get_rope_index`` and ``get_vision_position_ids`` in Hugging Face
    transformers 5.23's ``modeling_qwen2_vl.py`` and ``modeling_qwen2_5_vl.py``.
    """
    merge = check_positive_int(spatial_merge_size, "spatial_merge_size")
    if isinstance(segments, (str, bytes)) or not isinstance(segments, Sequence):
        raise InputTypeError(f"segments must be a sequence (a list), got {describe(segments)}")
    if not segments:
        raise InputError("segments must hold at least one segment, got an empty sequence")
    parsed = [_segment(segment, i, merge) for i, segment in enumerate(segments)]
    n_tokens = sum(
        p if isinstance(p, int) else p[0] * (p[1] // merge) * (p[2] // merge) for p in parsed
    )
    check_size(3 * n_tokens, "the position ids")
    pieces, start = [], 0
    for part in parsed:
        if isinstance(part, int):
            pieces.append(np.broadcast_to(start + np.arange(part), (3, part)))
            start += part
            continue
        t, h, w, interval = part
        # float32, as torch computes it (arange * a float32 interval, then truncated).
        frames = np.floor(np.arange(t, dtype=np.float32) * np.float32(interval)).astype(np.int64)
        grid = np.meshgrid(frames, np.arange(h // merge), np.arange(w // merge), indexing="ij")
        pieces.append(start + np.stack(grid).reshape(3, -1))
        start += max(h, w) // merge
    return np.concatenate(pieces, axis=1).astype(np.int64)


def mrope_axes(
    n_pairs: int, mrope_section: Sequence[int], *, interleaved: bool = False
) -> NDArray[np.int64]:
    """Which axis (0 temporal, 1 height, 2 width) drives each rotary pair.

    Parameters
    ----------
    n_pairs : int
        Rotary pairs per head (``head_dim // 2``; at most 2**19).
    mrope_section : sequence of 3 ints
        Pairs per axis, as in the model's ``rope_parameters`` (Qwen2-VL ``[16, 24, 24]``,
        Qwen3-VL ``[24, 20, 20]``).
    interleaved : bool, default False
        Qwen3-VL's layout (``mrope_interleaved``): height and width take every third pair
        (pairs ``1, 4, 7, ...`` and ``2, 5, 8, ...``, ``mrope_section[1]`` and ``[2]`` of
        them; a count beyond ``n_pairs`` is clipped, as the reference's slice clips it) and
        the temporal axis the rest. Otherwise Qwen2-VL's blocks: the first
        ``mrope_section[0]`` pairs are temporal, the next height, the last width.

    Returns
    -------
    ndarray of int64, shape (n_pairs,)

    Notes
    -----
    Pair ``j`` rotates by ``ids[axis[j]] * inv_freq[j]``; the frequencies are RoPE's. Blocked,
    the temporal axis gets the fastest pairs and width the slowest; interleaved, each axis
    gets pairs from the whole range of frequencies.
    """
    n_pairs = check_positive_int(n_pairs, "n_pairs")
    if n_pairs > MAX_D_MODEL // 2:
        raise InputError(f"n_pairs must be at most 2**19 (half of d_model's 2**20), got {n_pairs}")
    if isinstance(mrope_section, (str, bytes)) or not isinstance(mrope_section, Sequence):
        raise InputTypeError(
            f"mrope_section must be a list of 3 counts, got {describe(mrope_section)}"
        )
    if len(mrope_section) != 3:
        raise InputError(
            f"mrope_section must hold 3 counts (temporal, height, width), got "
            f"{describe(mrope_section)}"
        )
    sections = []
    for i, count in enumerate(mrope_section):
        if isinstance(count, (bool, np.bool_)) or not isinstance(count, numbers.Integral):
            raise InputTypeError(f"mrope_section[{i}] must be an integer, got {describe(count)}")
        if count < 0:
            raise InputError(f"mrope_section[{i}] must be >= 0, got {count}")
        sections.append(int(count))
    if not isinstance(interleaved, (bool, np.bool_)):
        raise InputTypeError(f"interleaved must be True or False, got {describe(interleaved)}")
    if not interleaved:
        if sum(sections) != n_pairs:
            raise InputError(
                f"mrope_section must add up to n_pairs = {n_pairs} (its blocks cover every "
                f"pair), got {sections} (sum {sum(sections)})"
            )
        return np.repeat(np.arange(3), sections)
    axes = np.zeros(n_pairs, dtype=np.int64)
    for axis in (1, 2):
        # A count beyond the pairs is clipped, as the reference's slice clips it.
        axes[axis : 3 * sections[axis] : 3] = axis
    return axes


def axial_rope_frequencies(
    head_dim: int, *, base: float = 10_000.0
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """2-D axial RoPE of a vision encoder: half the pairs turn with the row, half with the
    column, both halves with the same frequencies.

    Parameters
    ----------
    head_dim : int
        Columns of a head, a multiple of 4 (Qwen2-VL's vision encoder: 1280 / 16 = 80).
    base : float, default 10000.0
        ``rope_theta``.

    Returns
    -------
    inv_freq : ndarray of float64, shape (head_dim // 2,)
        The frequency of each pair: ``base**(-2j / (head_dim / 2))`` for ``j < head_dim / 4``,
        the same again for the second half.
    axes : ndarray of int64, shape (head_dim // 2,)
        The axis of each pair, numbered as :data:`AXES` (1 height for the first half, 2 width
        for the second), to use with :func:`multi_axis_angles`.

    Notes
    -----
    Hugging Face transformers 5.23's ``Qwen2VLVisionRotaryEmbedding`` (``rope_type``
    "axial"): a RoPE of dimension ``head_dim / 2`` evaluated at the row and at the column,
    concatenated, in the halves layout (``rotate_half``).
    """
    head_dim = check_positive_int(head_dim, "head_dim")
    if head_dim % 4 or head_dim > MAX_D_MODEL:
        raise InputError(
            f"head_dim must be a multiple of 4 (two axes of pairs) up to 2**20, got {head_dim}"
        )
    base = check_base(base)
    spatial_dim = head_dim // 2
    inv_freq = 1.0 / base ** (np.arange(0, spatial_dim, 2) / spatial_dim)
    return np.tile(inv_freq, 2), np.repeat(np.array([1, 2]), head_dim // 4)


def multi_axis_angles(
    position_ids: ArrayLike, inv_freq: ArrayLike, axes: ArrayLike
) -> NDArray[np.float64]:
    """The rotation angle of every pair at every token: the id on the pair's axis times the
    pair's frequency.

    Parameters
    ----------
    position_ids : array_like of int, shape (n_axes, n_tokens)
        As :func:`mrope_position_ids` gives (rows temporal, height, width).
    inv_freq : array_like, shape (n_pairs,)
        One frequency per pair (``RotaryEncoding.inv_freq``, or :func:`axial_rope_frequencies`).
    axes : array_like of int, shape (n_pairs,)
        The row of ``position_ids`` that drives each pair (:func:`mrope_axes`).

    Returns
    -------
    ndarray of float64, shape (n_tokens, n_pairs)
        ``position_ids[axes[j], t] * inv_freq[j]``; cos and sin of these, each repeated for the
        two halves, are the model's cos/sin caches.
    """
    ids = as_real_array(position_ids, "position_ids", ndim=2)
    freqs = as_real_array(inv_freq, "inv_freq", ndim=1)
    axes = as_integer_array(axes, "axes")
    if axes.size != freqs.size:
        raise InputError(
            f"axes must have one entry per frequency of inv_freq ({freqs.size}), got {axes.size}"
        )
    if axes.size and (axes.min() < 0 or axes.max() >= ids.shape[0]):
        raise InputError(
            f"axes must be rows of position_ids (0 to {ids.shape[0] - 1}), got "
            f"{describe(axes.tolist())}"
        )
    check_size(ids.shape[1] * freqs.size, "the angles")
    with np.errstate(over="ignore"):
        angles = ids[axes].T * freqs
    if not np.all(np.isfinite(angles)):
        raise InputError("position_ids times inv_freq overflow float64: the angles must be finite")
    return angles
