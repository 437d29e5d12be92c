"""The relative-position rotation: the fixed linear map that takes PE(k) to PE(k + offset)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.checks import MAX_POSITION, check_positions_for, check_real, check_size
from pe_core._numerics.kernels import phasors
from pe_core.bank import FrequencyBank
from pe_core.errors import InputError
from pe_core.sinusoidal.conventions import resolve_bank

__all__ = ["MAX_ROTATION_D_MODEL", "relative_rotation"]

#: Widest encoding whose rotation matrix is built: a dense 4096 x 4096 float64 matrix is 128 MiB
#: (the matrix is quadratic in d_model where every other result of the core is linear in it;
#: at 16,384 it was 2 GiB and 15 s).
MAX_ROTATION_D_MODEL = 4096


def relative_rotation(
    offset: float,
    d_model: int | FrequencyBank,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
) -> NDArray[np.float64]:
    """The matrix ``M`` with ``PE(k + offset) = M @ PE(k)`` for every position ``k``.

    Parameters
    ----------
    offset : float
        The shift between positions (any real number within ``+/-2**53``).
    d_model : int or FrequencyBank
        Width of the encoding, or a bank. For "vaswani" and "split" it must be even (see
        Raises).
    base, convention
        As for :func:`pe_core.sinusoidal_encoding`.

    Returns
    -------
    ndarray of float64, shape (d_model, d_model)
        Orthogonal. For the interleaved layout block-diagonal with one 2x2 rotation per pair;
        for the halves layouts the same blocks with rows and columns permuted. A zero column
        ("tensor2tensor", odd ``d_model``) maps to itself.

    Raises
    ------
    ValueError
        For odd ``d_model`` with an unpaired sin column ("vaswani", "split"): ``sin(k*w + t)``
        needs ``cos(k*w)``, which the encoding does not hold, so no matrix can produce it from
        ``PE(k)`` for every ``k``. Also for invalid arguments or ``d_model`` above
        :data:`MAX_ROTATION_D_MODEL` (4096), refused before anything is allocated.

    Notes
    -----
    By the angle-addition formulas, with :math:`t = \\delta w_i`:

    .. math::

        \\begin{pmatrix} \\sin((k+\\delta) w_i) \\\\ \\cos((k+\\delta) w_i) \\end{pmatrix}
        = \\begin{pmatrix} \\cos t & \\sin t \\\\ -\\sin t & \\cos t \\end{pmatrix}
          \\begin{pmatrix} \\sin(k w_i) \\\\ \\cos(k w_i) \\end{pmatrix}.

    The matrix does not depend on ``k``: this is why the paper pairs sin with cos, so that
    "PE(pos+k) can be represented as a linear function of PE(pos)".

    Examples
    --------
    >>> M = relative_rotation(1, 2)
    >>> M.round(4)
    array([[ 0.5403,  0.8415],
           [-0.8415,  0.5403]])
    """
    offset = check_real(offset, "offset")
    bank = resolve_bank(d_model, base, convention)
    if abs(offset) > MAX_POSITION:
        raise InputError(f"offset must lie within +/-2**53, got {offset:.6g}")
    layout, d_model = bank.layout, bank.d_model
    if not layout.is_paired:
        raise InputError(
            f"no matrix maps PE(k) to PE(k + offset) for odd d_model={d_model} "
            f"({bank.description or 'this bank'}): its last column sin(k * w) has no cos "
            f"partner, and sin(k * w + offset * w) needs cos(k * w); use an even d_model or "
            f"'tensor2tensor'"
        )
    if d_model > MAX_ROTATION_D_MODEL:
        raise InputError(
            f"d_model must be at most {MAX_ROTATION_D_MODEL:,} (MAX_ROTATION_D_MODEL) for the "
            f"dense rotation matrix, got {d_model:,} ({d_model * d_model * 8 / 2**20:,.0f} MiB); "
            "its only nonzero entries are one 2x2 block per pair, [[cos t, sin t], "
            "[-sin t, cos t]] with t = offset * frequencies(d_model)"
        )
    check_size(d_model * d_model, f"a {d_model} x {d_model} rotation matrix")
    freqs = bank.frequencies
    check_positions_for(bank, [offset], "offset")
    rotor = phasors(np.array([offset]), freqs)[0]
    cos_t, sin_t = rotor.real, rotor.imag
    sin_columns = np.arange(d_model)[layout.sin_columns]
    cos_columns = np.arange(d_model)[layout.cos_columns]
    matrix = np.zeros((d_model, d_model))
    matrix[sin_columns, sin_columns] = cos_t
    matrix[sin_columns, cos_columns] = sin_t
    matrix[cos_columns, sin_columns] = -sin_t
    matrix[cos_columns, cos_columns] = cos_t
    for column in layout.zero_columns:
        matrix[column, column] = 1.0
    return matrix
