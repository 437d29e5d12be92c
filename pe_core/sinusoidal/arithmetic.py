"""The table a library really computes: the textbook formula evaluated in a floating-point format.

:func:`pe_core.sinusoidal_encoding` gives the exact encoding, rounded once to the output dtype.
A library instead evaluates a formula step by step in its compute dtype: float32 for most
PyTorch code, float16 or bfloat16 under mixed precision (Keras' ``mixed_float16`` policy).
Every step rounds, the frequencies come out a few units in the last place off, and the angle
``k * w`` inherits that error multiplied by ``k``: at position 10,000 a float16 table is off by
tenths. :func:`textbook_encoding` reproduces such a table, each operation rounded to nearest as
the format's arithmetic does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from pe_core._numerics.checks import (
    check_base,
    check_choice,
    check_d_model,
    check_output_dtype,
    check_positions,
    check_precision,
    check_size,
)
from pe_core._numerics.formats import round_to_precision
from pe_core.errors import InputError
from pe_core.sinusoidal.conventions import Convention, check_convention

__all__ = ["FORMULAS", "TextbookFormula", "textbook_encoding"]


@dataclass(frozen=True)
class TextbookFormula:
    """One way libraries write the frequencies ``w_i = base^(-n_i / D)``.

    ``n_i`` is the pair's index in the exponent (``2i`` with ``D = d_model`` for the paper's
    spacing, ``i`` with ``D = h - shift`` for the shifted one); every operation below is
    rounded to the compute format.
    """

    name: str
    expression: str
    libraries: tuple[str, ...]


#: The ways of writing the frequencies in the code people use.
FORMULAS: MappingProxyType[str, TextbookFormula] = MappingProxyType(
    {
        "exp": TextbookFormula(
            "exp",
            "w_i = exp(n_i * (-ln(base) / D))",
            (
                "PyTorch tutorial and The Annotated Transformer (div_term)",
                "fairseq SinusoidalPositionalEmbedding.get_embedding",
                "tensor2tensor get_timing_signal_1d",
            ),
        ),
        "pow": TextbookFormula(
            "pow",
            "w_i = (1 / base) ** (n_i / D)",
            ("keras-hub SinePositionEncoding (compute_dtype of the layer's dtype policy)",),
        ),
        # transformers' modeling_xlnet.py relative_positional_encoding:
        #   inv_freq = 1 / torch.pow(10000, (freq_seq / self.d_model)), freq_seq = arange(0, d, 2)
        # modeling_funnel.py get_position_embeds:
        #   inv_freq = 1 / (10000 ** (freq_seq / (d_model // 2))), freq_seq = arange(0, d // 2)
        "inverse_pow": TextbookFormula(
            "inverse_pow",
            "w_i = 1 / base ** (n_i / D)",
            (
                "XLNet and Transformer-XL relative_positional_encoding (transformers, relative "
                "positions k_len down to -q_len)",
                "Funnel Transformer get_position_embeds (transformers)",
            ),
        ),
    }
)


def _exponent_terms(conv: Convention, d_model: int) -> tuple[NDArray[np.float64], float]:
    """``(n, D)`` with ``w_i = base^(-n_i / D)``, as the libraries write the exponent."""
    n_frequencies = conv.column_layout(d_model).n_frequencies
    index = np.arange(n_frequencies, dtype=np.float64)
    if conv.spacing == "paper":
        return 2.0 * index, float(d_model)
    return index, float(conv.denominator(d_model))


#: Formats whose exp, pow, sin and cos libraries evaluate in float32 and round: PyTorch's CPU
#: kernels (float32 "opmath" for half types), TensorFlow's and XLA's CPU kernels alike.
_VIA_FLOAT32 = ("float16", "bfloat16")


def _frequencies(conv, d_model, base, formula, rounded, function) -> NDArray[np.float64]:
    n, denominator = _exponent_terms(conv, d_model)
    if formula == "exp":
        # The constant is formed in Python's float64, then rounded as the tensor op converts it.
        scale = rounded(np.float64(-math.log(base) / denominator))
        with np.errstate(over="ignore", under="ignore"):
            return function(np.exp(rounded(rounded(n) * scale)))
    exponent = rounded(rounded(n) / rounded(np.float64(denominator)))
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        if formula == "inverse_pow":
            return rounded(1.0 / function(np.power(rounded(np.float64(base)), exponent)))
        return function(np.power(rounded(np.float64(1.0 / base)), exponent))


def textbook_encoding(
    positions: int | ArrayLike,
    d_model: int,
    *,
    compute_dtype: str = "float32",
    base: float = 10_000.0,
    convention: str = "vaswani",
    formula: str = "exp",
    dtype: DTypeLike = np.float64,
) -> NDArray[np.floating]:
    """The encoding as a library computes it: the textbook formula, every step in ``compute_dtype``.

    Parameters
    ----------
    positions : int or array_like of float
        An int ``L`` means positions ``0 .. L-1``; otherwise a 1-D array of real positions.
    d_model : int
        Width of the encoding, at least 1.
    compute_dtype : {"float32", "float16", "bfloat16", "float64"}, optional
        The format every intermediate value is rounded to (a NumPy dtype with one of those
        names is accepted too).
    base, convention : float, str, optional
        As in :func:`pe_core.sinusoidal_encoding`.
    formula : {"exp", "pow", "inverse_pow"}, optional
        How the frequencies are written: a key of :data:`FORMULAS`.
    dtype : dtype, optional
        The output dtype; the values are those of ``compute_dtype``, rounded once more when
        ``dtype`` is narrower.

    Returns
    -------
    ndarray, shape (n_positions, d_model)

    Raises
    ------
    TypeError, ValueError
        For invalid arguments, and for positions, angles or a ``d_model`` (the exponent's terms
        ``n_i`` and, for "pow", ``D``) beyond ``compute_dtype``'s range (float16 ends at 65504:
        a library would write inf and NaN).

    Notes
    -----
    With ``round`` the rounding to ``compute_dtype`` (to nearest, ties to even):

    - positions: ``k' = round(k)`` (float16 holds every integer only up to 2048, bfloat16
      up to 256);
    - "exp": ``w_i = round(exp(round(round(n_i) * c)))`` with ``c = round(-ln(base) / D)``;
      "pow": ``w_i = round(round(1 / base) ** round(round(n_i) / round(D)))``;
      "inverse_pow": ``w_i = round(1 / round(round(base) ** round(round(n_i) / round(D))))``;
    - angles ``a = round(k' * w_i)``, entries ``round(sin a)`` and ``round(cos a)``.

    In float16 and bfloat16, ``exp``, ``**``, ``sin`` and ``cos`` are rounded to float32 first
    and then to the format, as PyTorch's, TensorFlow's and XLA's CPU kernels evaluate them in
    float32: ``round(round32(cos a))``. That double rounding differs from ``round(cos a)`` where
    ``cos a`` lies within a float32 ulp of a tie (keras-hub's ``SinePositionEncoding`` under
    ``mixed_float16`` at d_model 128 has two such entries in 512 positions, 4.9e-4 apart).

    Each operation is correctly rounded here; a library's ``exp``, ``pow``, ``sin`` and ``cos``
    may be one unit in the last place off (that is their own accuracy), which moves an entry by
    up to ``k * ulp(w)``. diffusers' ``get_timestep_embedding`` multiplies by ``-ln(base)``
    before dividing by ``D``: the same formula with the roundings in another order.

    Examples
    --------
    >>> from pe_core import sinusoidal_encoding
    >>> exact = sinusoidal_encoding([10_000], 512)
    >>> half = textbook_encoding([10_000], 512, compute_dtype="float16")
    >>> float(abs(half - exact).max()) > 0.1
    True
    """
    d_model = check_d_model(d_model)
    base = check_base(base)
    conv = check_convention(convention)
    fmt = check_precision(compute_dtype, "compute_dtype")
    formula = check_choice(formula, "formula", tuple(FORMULAS))
    out_dtype = check_output_dtype(dtype)
    checked = check_positions(positions)
    check_size(checked.n * d_model, f"an encoding of {checked.n} positions x {d_model}")

    def rounded(values):
        return round_to_precision(values, fmt.name)

    def function(values):  # the result of exp, pow, sin or cos
        if fmt.name in _VIA_FLOAT32:
            values = round_to_precision(values, "float32")
        return rounded(values)

    with np.errstate(over="ignore"):  # beyond the format's range: inf, refused just below
        k = rounded(checked.values)
    if not np.all(np.isfinite(k)):
        raise InputError(
            f"positions must lie within {fmt.name}'s range (|k| <= {fmt.max_finite:g}) when "
            f"compute_dtype={fmt.name!r}, got a position of magnitude {checked.max_abs:.6g}"
        )
    n, denominator = _exponent_terms(conv, d_model)
    rounded_terms = n if formula == "exp" else np.append(n, denominator)  # "exp" divides in float64
    with np.errstate(over="ignore"):
        terms_fit = np.all(np.isfinite(rounded(rounded_terms)))
    if not terms_fit:
        terms = "the exponents n_i" + ("" if formula == "exp" else " and their divisor D")
        raise InputError(
            f"d_model={d_model} is too large for compute_dtype={fmt.name!r}: {terms} of "
            f"w_i = base^(-n_i / D) exceed {fmt.name}'s largest finite value {fmt.max_finite:g} "
            "(a library would write inf)"
        )
    w = _frequencies(conv, d_model, base, formula, rounded, function)
    with np.errstate(over="ignore", invalid="ignore"):
        angles = rounded(k[:, None] * w[None, :])
    if not np.all(np.isfinite(angles)):
        raise InputError(
            f"angles k * w_i overflow {fmt.name} (largest finite {fmt.max_finite:g}) at base "
            f"{base:g}: use a base >= 1 or positions of smaller magnitude"
        )
    layout = conv.column_layout(d_model)
    table = np.zeros((checked.n, d_model), dtype=np.float64)
    table[:, layout.sin_columns] = function(np.sin(angles[:, : layout.n_sin]))
    table[:, layout.cos_columns] = function(np.cos(angles[:, : layout.n_cos]))
    if out_dtype.name == "float64":
        return table
    return round_to_precision(table, out_dtype.name).astype(out_dtype)
