"""Identify an encoding table: which convention, base, first position and direction produced it,
and in which arithmetic (exact, rounded once to a smaller format, or computed in one)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from pe_core._numerics.checks import as_array, as_real_array, check_size
from pe_core.errors import InputError
from pe_core.sinusoidal.identify._difference import _Storage, _storage
from pe_core.sinusoidal.identify._fit import MAX_START as MAX_START
from pe_core.sinusoidal.identify._rescale import _rescaled
from pe_core.sinusoidal.identify._search import USUAL_BASES as USUAL_BASES
from pe_core.sinusoidal.identify._search import _identify_values
from pe_core.sinusoidal.identify.results import Candidate as Candidate
from pe_core.sinusoidal.identify.results import Identification, Precision, PrecisionKind

__all__ = ["Identification", "Precision", "PrecisionKind", "identify_encoding"]


def _squeezed(values: np.ndarray) -> tuple[np.ndarray, tuple[int, ...] | None]:
    if values.ndim == 2:
        return values, None
    kept = [axis for axis, size in enumerate(values.shape) if size != 1]
    if values.ndim > 2 and len(kept) == 2:
        return values.reshape([values.shape[axis] for axis in kept]), values.shape
    raise InputError(
        f"matrix must be 2-D (positions x d_model), or have only singleton axes beside those two "
        f"like a (1, L, d_model) buffer, got an array of shape {values.shape}"
    )


def identify_encoding(matrix: ArrayLike) -> Identification:
    """Find the convention, base, positions and arithmetic that explain an encoding matrix.

    Parameters
    ----------
    matrix : array_like, shape (n_positions, d_model)
        An encoding with positions in rows (a transposed matrix is detected and reported), at
        least 2 rows and 2 columns, consecutive positions in increasing or decreasing order
        from any start. Singleton axes are dropped first, so the (1, L, d_model) buffer of the
        PyTorch tutorial is accepted. Its dtype counts: a float32 array is known to hold
        float32 values.

    Returns
    -------
    Identification
        The best candidate, its largest absolute error and what that error is (exact, rounding,
        or arithmetic in a smaller format), with the other explanations that fit as well.

    Raises
    ------
    ValueError
        For a matrix with more than two non-singleton axes, fewer than 2 rows and columns,
        NaN or inf, or beyond the memory budget. TypeError for a non-numeric matrix.

    Notes
    -----
    Each pair's phase ``atan2(sin, cos)`` advances by ``w_i`` per row (``-w_i`` for decreasing
    positions); a least-squares fit of ``log w_i`` against ``i`` gives the base (an unpaired sin
    column adds its frequency, from ``s_(k-1) + s_(k+1) = 2 cos(w) s_k``), the phases of the first
    row give the first position (unwrapped from the slowest pair to the fastest, which resolves
    the ``2*pi`` ambiguity). Candidates are ranked on a sample of rows, and the best are compared
    entry by entry. The difference is then named by what the values themselves show: values that
    are all float16 numbers and differ by at most float16's rounding are "float16 rounding";
    differences that grow with the position like the rounding of the angle ``k * w`` are that
    format's arithmetic. Among explanations that all fit this way, the simplest is reported (a
    whole first position, a round base) and the others are listed as equivalents.

    Examples
    --------
    >>> import numpy as np
    >>> from pe_core import sinusoidal_encoding
    >>> matrix = sinusoidal_encoding(2 + np.arange(50), 16, convention="tensor2tensor")
    >>> found = identify_encoding(matrix)
    >>> found.convention, found.base, found.start, found.matches
    ('tensor2tensor', 10000.0, 2.0, True)
    """
    return _identify(matrix)[0]


def _identify(matrix: ArrayLike) -> tuple[Identification, np.ndarray, _Storage]:
    """:func:`identify_encoding`, with the checked 2-D values and what they show of how they
    were stored and written (what :func:`pe_core.diagnose_encoding` judges next)."""
    given = as_array(matrix, "matrix")
    dtype = given.dtype
    values = as_real_array(given, "matrix")
    values, squeezed_from = _squeezed(values)
    check_size(values.size * 4, "identifying this matrix")
    if min(values.shape) < 2:
        raise InputError(
            f"matrix must have at least 2 rows (positions) and 2 columns, got shape {values.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        storage = _storage(values, dtype)
    found = _identify_values(values, dtype, squeezed_from, storage=storage)
    if found.matches:
        return found, values, storage
    rescaled = _rescaled(values, dtype, squeezed_from)
    return (rescaled if rescaled is not None else found), values, storage
