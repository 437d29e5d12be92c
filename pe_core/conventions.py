"""The column layouts and frequency spacings that real libraries use for sinusoidal encodings.

A convention fixes three things: where the sin and cos columns go (interleaved or two halves),
how the frequencies are spaced, and what happens to the odd column when ``d_model`` is odd.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from pe_core._validation import check_choice, check_d_model

__all__ = ["CONVENTIONS", "ColumnLayout", "Convention", "column_roles"]


@dataclass(frozen=True)
class ColumnLayout:
    """Where each frequency's sin and cos land in a row of ``d_model`` columns.

    ``sin_columns`` holds ``sin(k * w_i)`` for ``i = 0 .. n_sin - 1`` in order, ``cos_columns``
    holds ``cos(k * w_i)`` for ``i = 0 .. n_cos - 1``; the ``zero_columns`` are always 0.
    """

    d_model: int
    n_frequencies: int
    sin_columns: slice
    cos_columns: slice
    n_sin: int
    n_cos: int
    zero_columns: tuple[int, ...] = ()

    @property
    def is_paired(self) -> bool:
        """True when every sin column has its cos partner (no unpaired sin column)."""
        return self.n_sin == self.n_cos


@dataclass(frozen=True)
class Convention:
    """One named convention: its layout, frequency spacing and odd-``d_model`` rule.

    Attributes
    ----------
    name : str
        Key in :data:`CONVENTIONS`.
    layout : {"interleaved", "halves"}
        ``interleaved``: columns ``sin_0, cos_0, sin_1, cos_1, ...``;
        ``halves``: ``[sin_0 .. sin_(h-1) | cos_0 .. cos_(h-1)]``.
    spacing : {"paper", "endpoints"}
        ``paper``: ``w_i = base**(-2i/d_model)``; ``endpoints``: ``w_i = base**(-i/(h-1))`` with
        ``h = d_model // 2``, so the slowest pair has wavelength exactly ``2*pi*base``.
    formula : str
        The frequency formula as text.
    odd_rule : str
        What an odd ``d_model`` does to the last column.
    description : str
        One line for a person choosing between conventions.
    libraries : tuple of str
        Code bases that use it.
    """

    name: str
    layout: Literal["interleaved", "halves"]
    spacing: Literal["paper", "endpoints"]
    formula: str
    odd_rule: str
    description: str
    libraries: tuple[str, ...]

    def column_layout(self, d_model: int) -> ColumnLayout:
        """The :class:`ColumnLayout` of this convention for ``d_model`` columns."""
        half_up = (d_model + 1) // 2
        half_down = d_model // 2
        if self.spacing == "endpoints":  # tensor2tensor: h pairs, a zero column if odd
            zeros = (d_model - 1,) if d_model % 2 else ()
            return ColumnLayout(
                d_model,
                half_down,
                slice(0, half_down),
                slice(half_down, 2 * half_down),
                half_down,
                half_down,
                zeros,
            )
        if self.layout == "interleaved":
            sin_columns, cos_columns = slice(0, d_model, 2), slice(1, d_model, 2)
        else:
            sin_columns, cos_columns = slice(0, half_up), slice(half_up, d_model)
        return ColumnLayout(d_model, half_up, sin_columns, cos_columns, half_up, half_down)

    def frequencies(self, d_model: int, base: float) -> NDArray[np.float64]:
        """Angular frequencies ``w_i`` (radians per position), one per sin/cos pair.

        Each is the float64 value of ``base ** exponent`` as Python (the C library's ``pow``,
        correctly rounded in practice) computes it, bit for bit the value of the textbook
        formula. NumPy's vectorized ``np.power`` is up to 1 ulp off for about 5% of exponents,
        which moves ``sin(k * w)`` by 1e-11 at ``k = 10**5``.
        """
        n = self.column_layout(d_model).n_frequencies
        if self.spacing == "paper":
            exponents = [-2 * i / d_model for i in range(n)]
        else:
            exponents = [-i / (n - 1) if n > 1 else 0.0 for i in range(n)]
        return np.array([math.pow(base, e) for e in exponents], dtype=np.float64).reshape(n)


CONVENTIONS: MappingProxyType[str, Convention] = MappingProxyType(
    {
        "vaswani": Convention(
            name="vaswani",
            layout="interleaved",
            spacing="paper",
            formula="w_i = base^(-2i/d_model)",
            odd_rule="last column is sin(k * w_(d-1)/2), an unpaired sin",
            description="Interleaved sin/cos, the paper's frequencies (Vaswani et al. 2017).",
            libraries=(
                "Attention Is All You Need",
                "PyTorch tutorial",
                "The Annotated Transformer",
                "d2l.ai",
                "HF DistilBERT (odd d_model)",
                "keras-hub SinePositionEncoding",
            ),
        ),
        "tensor2tensor": Convention(
            name="tensor2tensor",
            layout="halves",
            spacing="endpoints",
            formula="w_i = base^(-i/(h-1)), h = d_model // 2",
            odd_rule="a zero column is appended",
            description="Halves [sin | cos], frequencies from 1 down to exactly 1/base.",
            libraries=(
                "tensor2tensor get_timing_signal_1d",
                "fairseq SinusoidalPositionalEmbedding",
                "OpenAI Whisper",
            ),
        ),
        "split": Convention(
            name="split",
            layout="halves",
            spacing="paper",
            formula="w_i = base^(-2i/d_model)",
            odd_rule="the sin half gets the extra column",
            description="Halves [sin | cos] with the paper's frequencies.",
            libraries=("MAE get_1d_sincos_pos_embed", "HF Marian"),
        ),
    }
)


def get_convention(convention: object) -> Convention:
    """Look up a convention by name, raising a message that lists the valid names."""
    return CONVENTIONS[check_choice(convention, "convention", tuple(CONVENTIONS))]


def column_roles(
    d_model: int, *, convention: str = "vaswani"
) -> tuple[NDArray[np.int64], NDArray[np.str_]]:
    """Pair index and role (``"sin"``, ``"cos"`` or ``"zero"``) of every column.

    Parameters
    ----------
    d_model : int
        Number of columns.
    convention : str, optional
        A key of :data:`CONVENTIONS`.

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
    d_model = check_d_model(d_model)
    layout = get_convention(convention).column_layout(d_model)
    pair = np.full(d_model, -1, dtype=np.int64)
    role = np.full(d_model, "zero", dtype="<U4")
    pair[layout.sin_columns] = np.arange(layout.n_sin)
    role[layout.sin_columns] = "sin"
    pair[layout.cos_columns] = np.arange(layout.n_cos)
    role[layout.cos_columns] = "cos"
    return pair, role
