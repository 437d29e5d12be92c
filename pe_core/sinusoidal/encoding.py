"""Sinusoidal positional encodings: frequencies, the exact fast encoding, the loop reference,
closed-form block averages, and which column is which."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from pe_core._numerics.checks import (
    Positions,
    check_columns,
    check_output_dtype,
    check_positions_for,
    check_positive_int,
    check_size,
)
from pe_core._numerics.kernels import dirichlet, encode, phasors
from pe_core.bank import FrequencyBank
from pe_core.errors import InputError
from pe_core.sinusoidal.conventions import check_convention, resolve_bank

__all__ = [
    "MAX_REFERENCE_ELEMENTS",
    "block_mean_encoding",
    "column_roles",
    "encoding_columns",
    "frequencies",
    "reference_encoding",
    "sinusoidal_bank",
    "sinusoidal_encoding",
    "wavelengths",
]


def sinusoidal_bank(
    d_model: int, *, base: float = 10_000.0, convention: str = "vaswani"
) -> FrequencyBank:
    """The frequencies and column layout of a convention, as a :class:`FrequencyBank`.

    Every function below that takes ``d_model, base, convention`` also takes such a bank in place
    of ``d_model`` (a rotary encoding after scaling, an axis of a 2-D encoding, or one of these).

    Examples
    --------
    >>> bank = sinusoidal_bank(4, base=100.0)
    >>> bank.frequencies.tolist(), bank.description
    ([1.0, 0.1], 'vaswani, base 100')
    """
    return resolve_bank(d_model, base, convention)


def frequencies(
    d_model: int | FrequencyBank, *, base: float = 10_000.0, convention: str = "vaswani"
) -> NDArray[np.float64]:
    """Angular frequencies ``w_i`` in radians per position, one per sin/cos pair.

    Parameters
    ----------
    d_model : int or FrequencyBank
        Width of the encoding (number of columns), at least 1; or a bank (then ``base`` and
        ``convention`` stay at their defaults).
    base : float, optional
        The base of the geometric progression, finite and > 0 (10000 in the paper).
    convention : str, optional
        A key of :data:`pe_core.CONVENTIONS`.

    Returns
    -------
    ndarray of float64, shape (n_pairs,)
        ``n_pairs`` is ``ceil(d_model / 2)`` for a convention whose ``odd_column`` is "sin"
        (for odd ``d_model`` the last frequency drives only an unpaired sin column) and
        ``d_model // 2`` for one that appends a zero column (``odd_column`` "zero").

    Raises
    ------
    TypeError, ValueError
        For a ``d_model`` that is not a positive integer, a ``base`` that is not finite and > 0,
        or an unknown ``convention``.

    Notes
    -----
    A convention's ``spacing`` "paper": :math:`w_i = \\mathrm{base}^{-2i/d}`; "shifted" with
    its ``shift`` :math:`s`: :math:`w_i = \\mathrm{base}^{-i/(h-s)}` with
    :math:`h = \\lfloor d/2 \\rfloor`. Each convention's ``formula`` states its own.

    Examples
    --------
    >>> frequencies(4, base=100.0)
    array([1. , 0.1])
    >>> frequencies(4, base=100.0, convention="tensor2tensor")
    array([1.  , 0.01])
    """
    return resolve_bank(d_model, base, convention).frequencies.copy()


def wavelengths(
    d_model: int | FrequencyBank, *, base: float = 10_000.0, convention: str = "vaswani"
) -> NDArray[np.float64]:
    """Wavelengths ``2*pi / w_i`` in positions, one per sin/cos pair.

    They form a geometric progression from ``2*pi`` up to ``2*pi*base**(1 - 2/d_model)``
    (the paper's spacing, and shift 0 at even ``d_model``; the paper rounds the top to
    ``2*pi*base``) or exactly ``2*pi*base`` (shift 1: "tensor2tensor", "musicgen"). Parameters and
    errors as for :func:`frequencies`.

    Examples
    --------
    >>> wavelengths(4, base=100.0) / (2 * np.pi)
    array([ 1., 10.])
    """
    return resolve_bank(d_model, base, convention).wavelengths


def column_roles(
    d_model: int | FrequencyBank, *, convention: str = "vaswani"
) -> tuple[NDArray[np.int64], NDArray[np.str_]]:
    """Pair index and role (``"sin"``, ``"cos"`` or ``"zero"``) of every column.

    Parameters
    ----------
    d_model : int or FrequencyBank
        Number of columns, or a bank.
    convention : str, optional
        A key of :data:`pe_core.CONVENTIONS`.

    Returns
    -------
    pair_index : ndarray of int, shape (d_model,)
        The frequency index ``i`` each column belongs to (``-1`` for a zero column).
    role : ndarray of str, shape (d_model,)
        ``"sin"``, ``"cos"`` or ``"zero"``.

    Examples
    --------
    >>> pair, role = column_roles(5, convention="split")
    >>> pair.tolist(), role.tolist()
    ([0, 1, 2, 0, 1], ['sin', 'sin', 'sin', 'cos', 'cos'])
    """
    return resolve_bank(d_model, 10_000.0, convention).column_roles()


def sinusoidal_encoding(
    positions: int | ArrayLike,
    d_model: int | FrequencyBank,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
    dtype: DTypeLike = np.float64,
) -> NDArray[np.floating]:
    """Sinusoidal positional encoding of ``positions``: float64 within 5e-16 of the exact value,
    a lower precision the nearest value of ``dtype``.

    Parameters
    ----------
    positions : int or array_like of float
        An int ``L`` means positions ``0 .. L-1``; otherwise a 1-D array of real positions
        (offsets, negative and fractional positions allowed), each within ``+/-2**53``.
    d_model : int or FrequencyBank
        Width of the encoding (number of columns), at least 1; or a bank whose frequencies and
        layout to encode with (then ``base`` and ``convention`` stay at their defaults).
    base : float, optional
        The base of the geometric progression of frequencies, finite and > 0.
    convention : str, optional
        A key of :data:`pe_core.CONVENTIONS` ("vaswani", the default, "tensor2tensor", ...).
    dtype : dtype, optional
        float64 (default), float32, float16, or ``ml_dtypes.bfloat16``, in any byte order.

    Returns
    -------
    ndarray, shape (n_positions, d_model)
        Row ``k`` is the encoding of ``positions[k]``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (messages name the argument and the rule), and for a result of
        more than :data:`pe_core.MAX_ELEMENTS` elements (refused before allocation).

    Notes
    -----
    For the "vaswani" convention, with :math:`w_i = \\mathrm{base}^{-2i/d}`:

    .. math:: PE(k, 2i) = \\sin(k w_i), \\qquad PE(k, 2i+1) = \\cos(k w_i).

    The angles are carried with twice the float64 precision, so every float64 entry is within
    5e-16 (absolute) of the exact value for the float64 frequencies, also at ``k = 10**6`` where
    ``np.sin(k * w)`` is off by about 1e-10. A float32, float16 or bfloat16 entry is that value
    rounded once: the nearest value of ``dtype`` to the exact one, except within 5e-16 of a
    rounding midpoint. Integer positions in arithmetic progression (the usual case) are
    computed by angle addition, the relative-position rotation of the encoding:
    ``exp(i(a + b)w) = exp(iaw) exp(ibw)`` from two small exact tables, which writes the result
    at close to memory speed.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5.

    Examples
    --------
    >>> sinusoidal_encoding(4, 4, base=100.0).round(6)
    array([[ 0.      ,  1.      ,  0.      ,  1.      ],
           [ 0.841471,  0.540302,  0.099833,  0.995004],
           [ 0.909297, -0.416147,  0.198669,  0.980067],
           [ 0.14112 , -0.989992,  0.29552 ,  0.955336]])
    >>> sinusoidal_encoding([0.5, -3], 6, convention="split").shape
    (2, 6)
    """
    bank = resolve_bank(d_model, base, convention)
    resolved = check_output_dtype(dtype)
    checked = check_positions_for(bank, positions)
    check_size(checked.n * bank.d_model, f"an encoding of {checked.n} positions x {bank.d_model}")
    return encode(checked, bank, resolved)


#: Most entries the plain-loop :func:`reference_encoding` computes: 2**20, about a second (a
#: million positions x 4 took 22 s).
MAX_REFERENCE_ELEMENTS = 2**20


def reference_encoding(
    positions: int | ArrayLike,
    d_model: int | FrequencyBank,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
) -> NDArray[np.float64]:
    """The encoding computed with plain Python loops, straight from the formula.

    The teaching version and the test oracle for :func:`sinusoidal_encoding`: one ``math.sin``
    or ``math.cos`` per entry, each frequency written out as the convention's formula (for a
    bank: its frequencies). Slow (about a microsecond per entry); use it for small inputs.
    Parameters, return value and errors as for :func:`sinusoidal_encoding` (float64 only).

    Examples
    --------
    >>> reference_encoding(2, 4, base=100.0).round(4).tolist()
    [[0.0, 1.0, 0.0, 1.0], [0.8415, 0.5403, 0.0998, 0.995]]
    """
    bank = resolve_bank(d_model, base, convention)
    checked = check_positions_for(bank, positions)
    n_entries = checked.n * bank.d_model
    if n_entries > MAX_REFERENCE_ELEMENTS:
        raise InputError(
            f"reference_encoding computes one entry at a time and is limited to "
            f"{MAX_REFERENCE_ELEMENTS:,} entries (MAX_REFERENCE_ELEMENTS, 2**20): {checked.n:,} "
            f"positions x d_model {bank.d_model:,} = {n_entries:,} is more; use "
            "sinusoidal_encoding"
        )
    pairs, roles = bank.column_roles()
    if isinstance(d_model, FrequencyBank):
        omegas = bank.frequencies.tolist()
    else:  # the textbook formula, not the bank's numbers: an independent check
        conv, half, base = check_convention(convention), bank.d_model // 2, float(base)
        omegas = [
            base ** (-2 * i / bank.d_model)
            if conv.spacing == "paper"
            else (base ** (-i / max(half - conv.shift, 1)) if i > 0 else 1.0)
            for i in range(bank.n_frequencies)
        ]
    rows = []
    for k in checked.values.tolist():
        row = []
        for i, role in zip(pairs.tolist(), roles.tolist(), strict=True):
            if role == "zero":  # the padding column of odd d_model (tensor2tensor, ...)
                row.append(0.0)
            else:
                row.append(math.sin(k * omegas[i]) if role == "sin" else math.cos(k * omegas[i]))
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(checked.n, bank.d_model)


def block_mean_encoding(
    positions: int | ArrayLike,
    d_model: int | FrequencyBank,
    block_size: int,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
) -> NDArray[np.float64]:
    """Average of the encoding over consecutive blocks of positions, by closed form.

    Shows a long encoding at display size without building it: block ``q`` averages rows
    ``q * block_size .. (q+1) * block_size - 1`` (the last block may be shorter).

    Parameters
    ----------
    positions : int or array_like of int
        An int ``L`` or integer positions in arithmetic progression (``start + step * j``).
    d_model : int or FrequencyBank
        Width of the encoding, or a bank.
    block_size : int
        Positions per block, at least 1.
    base, convention
        As for :func:`sinusoidal_encoding`.

    Returns
    -------
    ndarray of float64, shape (ceil(n_positions / block_size), d_model)

    Notes
    -----
    The mean of :math:`e^{i(c + s j)w}` over :math:`j = -(m-1)/2 .. (m-1)/2` is
    :math:`e^{icw} D_m(sw)` with the Dirichlet kernel
    :math:`D_m(x) = \\sin(mx/2) / (m \\sin(x/2))`, so the block mean is the encoding at the
    block's centre with both columns of pair ``i`` scaled by :math:`D_m(s w_i)`. Fast pairs
    average out to about 0; slow pairs keep their value.

    Examples
    --------
    >>> means = block_mean_encoding(1000, 8, 100)
    >>> means.shape
    (10, 8)
    >>> bool(np.allclose(means, sinusoidal_encoding(1000, 8).reshape(10, 100, 8).mean(axis=1)))
    True
    """
    bank = resolve_bank(d_model, base, convention)
    block_size = check_positive_int(block_size, "block_size")
    checked = check_positions_for(bank, positions)
    if checked.n <= 1:  # the mean of one row is the row
        return encode(checked, bank, np.dtype(np.float64))
    if not checked.is_progression:
        raise InputError(
            "positions must be an int L or integers in arithmetic progression for block means"
        )
    block_size = min(block_size, checked.n)
    start, step = checked.start, checked.step
    n_blocks = -(-checked.n // block_size)
    last_size = checked.n - (n_blocks - 1) * block_size
    # Block centres, in place (a million blocks need no more than one array of them).
    centres = np.arange(n_blocks, dtype=np.float64)
    centres *= block_size
    centres += (block_size - 1) / 2
    centres[-1] += (last_size - block_size) / 2
    centres *= step
    centres += start
    whole = block_size % 2 == 1 and last_size == block_size
    first_centre = start + step * (block_size - 1) // 2
    centre_positions = (
        Positions(centres, first_centre, step * block_size) if whole else Positions(centres)
    )
    means = encode(centre_positions, bank, np.dtype(np.float64))

    # One kernel row per distinct block size (all blocks but the last have the same one).
    half_angle = 0.5 * step * bank.frequencies
    kernel = np.stack([dirichlet(block_size, half_angle), dirichlet(last_size, half_angle)])
    layout = bank.layout
    for rows, row_kernel in (
        (slice(0, n_blocks - 1), kernel[0]),
        (slice(n_blocks - 1, None), kernel[1]),
    ):
        means[rows, layout.sin_columns] *= row_kernel[: layout.n_sin]
        means[rows, layout.cos_columns] *= row_kernel[: layout.n_cos]
    return means


def encoding_columns(
    positions: int | ArrayLike,
    d_model: int | FrequencyBank,
    columns: ArrayLike,
    *,
    base: float = 10_000.0,
    convention: str = "vaswani",
) -> NDArray[np.float64]:
    """A few columns of the encoding, without computing the others.

    Equal to ``sinusoidal_encoding(positions, d_model, ...)[:, columns]`` but costs
    ``n_positions * len(columns)`` instead of ``n_positions * d_model``: for plotting a few
    dimensions as smooth curves over many (fractional) positions.

    Parameters
    ----------
    positions : int or array_like of float
        As for :func:`sinusoidal_encoding`.
    d_model : int or FrequencyBank
        Width of the full encoding, or a bank.
    columns : array_like of int
        Column indices in ``[0, d_model)``.
    base, convention
        As for :func:`sinusoidal_encoding`.

    Returns
    -------
    ndarray of float64, shape (n_positions, len(columns))

    Examples
    --------
    >>> encoding_columns([0.0, 0.5], 512, [0, 1]).round(4)
    array([[0.    , 1.    ],
           [0.4794, 0.8776]])
    """
    bank = resolve_bank(d_model, base, convention)
    wanted = check_columns(columns, bank.d_model)
    checked = check_positions_for(bank, positions)
    check_size(checked.n * max(1, wanted.size), f"{checked.n} positions x {wanted.size} columns")
    pair, role = bank.column_roles()
    pair, role = pair[wanted], role[wanted]
    out = np.zeros((checked.n, wanted.size))
    active = np.flatnonzero(role != "zero")
    is_sin = role[active] == "sin"
    rows = max(1, (1 << 16) // max(1, active.size))  # a few small tables at a time
    for first in range(0, checked.n if active.size else 0, rows):
        table = phasors(checked.values[first : first + rows], bank.frequencies[pair[active]])
        np.clip(table.view(np.float64), -1.0, 1.0, out=table.view(np.float64))
        out[first : first + rows, active] = np.where(is_sin, table.imag, table.real)
    return out
