"""The column layouts and frequency spacings that real libraries use for sinusoidal encodings.

A convention fixes four things: where the sin and cos columns go (interleaved or two halves),
which half comes first, how the frequencies are spaced, and what happens to the odd column when
``d_model`` is odd.
Everything else a convention knows lives here too (its formulas as text, its code, its colour in
charts), so no other module needs to branch on a convention's name.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from pe_core._numerics.checks import check_base, check_choice, check_d_model
from pe_core.bank import ColumnLayout, FrequencyBank
from pe_core.errors import InputError

__all__ = ["CONVENTIONS", "Convention", "check_convention", "resolve_bank"]


@dataclass(frozen=True)
class Convention:
    """One named convention: its layout, frequency spacing and odd-``d_model`` rule.

    A convention is data: a variant (the cos half first, another shift) is
    ``dataclasses.replace(CONVENTIONS[name], ...)``, whose :meth:`bank` every function of
    :mod:`pe_core` takes in place of ``d_model``.

    Attributes
    ----------
    name : str
        Key in :data:`CONVENTIONS`.
    layout : {"interleaved", "halves"}
        ``interleaved``: columns ``sin_0, cos_0, sin_1, cos_1, ...``;
        ``halves``: ``[sin_0 .. sin_(h-1) | cos_0 .. cos_(h-1)]``.
    spacing : {"paper", "shifted"}
        ``paper``: ``w_i = base**(-2i/d_model)``; ``shifted``: ``w_i = base**(-i/(h - shift))``
        with ``h = d_model // 2``, diffusers' ``get_timestep_embedding`` spacing with
        ``downscale_freq_shift = shift``: shift 1 (tensor2tensor, fairseq) makes the slowest
        pair's wavelength exactly ``2*pi*base``; shift 0 is the paper's spacing at even
        ``d_model``.
    odd_column : {"sin", "zero"}
        What an odd ``d_model``'s last column holds: one more (unpaired) sin, or zeros.
    formula : str
        The frequency formula as text.
    odd_rule : str
        What an odd ``d_model`` does to the last column, in words.
    description : str
        One line for a person choosing between conventions.
    libraries : tuple of str
        Code bases that use it.
    layout_text : str
        Where the sin and cos columns are, in words.
    colour_index : int
        Its colour in charts (an index into the app's palette).
    first : {"sin", "cos"}
        For halves, which half comes first: ``[sin | cos]`` or ``[cos | sin]``.
    shift : float
        The ``shift`` of the ``shifted`` spacing, in [0, 1] (unused by ``paper``).
    """

    name: str
    layout: Literal["interleaved", "halves"]
    spacing: Literal["paper", "shifted"]
    odd_column: Literal["sin", "zero"]
    formula: str
    odd_rule: str
    description: str
    libraries: tuple[str, ...]
    layout_text: str
    colour_index: int
    first: Literal["sin", "cos"] = "sin"
    shift: float = 1.0

    def __post_init__(self) -> None:
        if self.layout not in ("interleaved", "halves"):
            raise InputError(f"layout must be 'interleaved' or 'halves', got {self.layout!r}")
        if self.spacing not in ("paper", "shifted"):
            raise InputError(f"spacing must be 'paper' or 'shifted', got {self.spacing!r}")
        if self.odd_column not in ("sin", "zero"):
            raise InputError(f"odd_column must be 'sin' or 'zero', got {self.odd_column!r}")
        if self.first not in ("sin", "cos") or (self.first == "cos" and self.layout != "halves"):
            raise InputError(
                f"first must be 'sin' or 'cos' (the cos half first needs the halves layout), "
                f"got first={self.first!r} with layout={self.layout!r}"
            )
        if not (isinstance(self.shift, int | float) and 0.0 <= self.shift <= 1.0):
            raise InputError(f"shift must be a number in [0, 1], got {self.shift!r}")

    def column_layout(self, d_model: int) -> ColumnLayout:
        """The :class:`ColumnLayout` of this convention for ``d_model`` columns."""
        if self.layout == "interleaved":
            return ColumnLayout.interleaved(d_model)
        return ColumnLayout.halves(d_model, odd=self.odd_column, first=self.first)

    def frequencies(self, d_model: int, base: float) -> NDArray[np.float64]:
        """Angular frequencies ``w_i`` (radians per position), one per sin/cos pair.

        Each is the float64 value of ``base ** exponent`` as Python (the C library's ``pow``,
        correctly rounded in practice) computes it, bit for bit the value of the textbook
        formula. NumPy's vectorized ``np.power`` is up to 1 ulp off for about 5% of exponents,
        which moves ``sin(k * w)`` by 1e-11 at ``k = 10**5``.
        """
        exponents = self.exponents(d_model)
        return np.fromiter(
            map(math.pow, itertools.repeat(base, exponents.size), exponents.tolist()),
            np.float64,
            exponents.size,
        )

    def exponents(self, d_model: int) -> NDArray[np.float64]:
        """The exponent of ``base`` for each pair ``i``: ``-2i/d_model`` or ``-i/(h - shift)``
        (0 for pair 0), each a whole number divided once, rounded as Python rounds it."""
        pairs = np.arange(self.column_layout(d_model).n_frequencies, dtype=np.float64)
        if self.spacing == "paper":
            return -2 * pairs / d_model
        exponents = -pairs / self.denominator(d_model)
        exponents[:1] = 0.0
        return exponents

    def denominator(self, d_model: int) -> float:
        """``D`` in the exponent ``-i/D`` of pair ``i``: ``d_model/2`` or ``h - shift`` (at
        least 1, as tensor2tensor guards it: only pair 0 exists below that)."""
        if self.spacing == "paper":
            return d_model / 2
        return max(d_model // 2 - self.shift, 1.0)

    def exponent_latex(self, i: int, d_model: int) -> str:
        """The exponent of pair ``i`` as LaTeX, without its sign: ``2 \\cdot 3/512``."""
        if self.spacing == "paper":
            return rf"2 \cdot {i}/{d_model}"
        return rf"{i}/{self.denominator(d_model):g}"

    def bank(self, d_model: int, base: float) -> FrequencyBank:
        """The frequencies and layout of this convention at ``d_model`` and ``base``."""
        return FrequencyBank(
            self.frequencies(d_model, base),
            self.column_layout(d_model),
            f"{self.name}, base {base:g}",
        )

    # --- Code that builds the same matrix (the worked example shows it) ----------------------

    def numpy_code(self, n_positions: int, d_model: int, base: float) -> str:
        """Plain NumPy code that builds the same matrix as ``pe_core.sinusoidal_encoding``."""
        return self._code("numpy", n_positions, d_model, base)

    def torch_code(self, n_positions: int, d_model: int, base: float) -> str:
        """PyTorch code for the same matrix, in float64 (the PyTorch tutorial's formula)."""
        return self._code("torch", n_positions, d_model, base)

    def _code(self, library: str, n_positions: int, d_model: int, base: float) -> str:
        np_, float64 = ("np", "") if library == "numpy" else ("torch", ", dtype=torch.float64")
        lines = [
            f"import {'numpy as np' if library == 'numpy' else 'torch'}",
            "",
            f"L, d_model, base = {n_positions}, {d_model}, {base!r}",
            f"k = {np_}.arange(L{float64})[:, None]{' ' * 20}# positions, as a column",
        ]
        if self.spacing == "paper":
            lines.append(f"i = {np_}.arange((d_model + 1) // 2{float64})  # one frequency per pair")
            lines.append("w = base ** (-2 * i / d_model)")
        else:
            # The comment is true at this d_model: with one pair, there is one frequency, 1.
            ends = ""
            if self.shift == 1:
                pairs = d_model // 2
                ends = "  # " + (
                    "from 1 down to exactly 1/base"
                    if pairs >= 2
                    else ("one pair: w = [1]" if pairs == 1 else "no pair: w is empty")
                )
            shifted = f"h - {self.shift:g}" if self.shift else "h"
            lines.append("h = d_model // 2")
            lines.append(f"w = base ** (-{np_}.arange(h{float64}) / max({shifted}, 1)){ends}")
        if self.layout == "interleaved":
            lines += [
                f"pe = {np_}.zeros((L, d_model){float64})",
                f"pe[:, 0::2] = {np_}.sin(k * w){' ' * 22}# even columns: sin",
                f"pe[:, 1::2] = {np_}.cos(k * w[: d_model // 2])  # odd columns: cos",
            ]
            return "\n".join(lines) + "\n"
        join = "np.concatenate" if library == "numpy" else "torch.cat"
        axis = "axis" if library == "numpy" else "dim"
        sin, cos = f"{np_}.sin(k * w)", f"{np_}.cos(k * w)"
        if self.odd_column == "sin":
            cos = f"{np_}.cos(k * w[: d_model // 2])"
        halves = f"{cos}, {sin}" if self.first == "cos" else f"{sin}, {cos}"
        if self.odd_column == "sin":
            lines.append(f"pe = {join}([{halves}], {axis}=1)  # the sin half gets the odd column")
        else:
            lines.append(f"pe = {join}([{halves}], {axis}=1)")
            lines.append(
                f"pe = {join}([pe, {np_}.zeros((L, d_model % 2){float64})], {axis}=1)"
                "  # odd d_model: a zero column"
            )
        return "\n".join(lines) + "\n"


CONVENTIONS: MappingProxyType[str, Convention] = MappingProxyType(
    {
        "vaswani": Convention(
            name="vaswani",
            layout="interleaved",
            spacing="paper",
            odd_column="sin",
            formula="ω_i = base^(-2i/d_model)",
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
            layout_text="sin in even columns, cos in odd ones",
            colour_index=0,
        ),
        "tensor2tensor": Convention(
            name="tensor2tensor",
            layout="halves",
            spacing="shifted",
            odd_column="zero",
            formula="ω_i = base^(-i/(h-1)), h = d_model // 2",
            odd_rule="a zero column is appended",
            description="Halves [sin | cos], frequencies from 1 down to exactly 1/base (one "
            "frequency, 1, at d_model 2 and 3; none at 1).",
            libraries=(
                "tensor2tensor get_timing_signal_1d",
                "fairseq SinusoidalPositionalEmbedding",
                "OpenAI Whisper (and HF Whisper's sinusoids)",
                "HF PegasusX",
                "diffusers get_timestep_embedding (defaults)",
            ),
            layout_text="sin half then cos half",
            colour_index=1,
        ),
        "split": Convention(
            name="split",
            layout="halves",
            spacing="paper",
            odd_column="sin",
            formula="ω_i = base^(-2i/d_model)",
            odd_rule="the sin half gets the extra column",
            description="Halves [sin | cos] with the paper's frequencies.",
            libraries=(
                "MAE get_1d_sincos_pos_embed",
                "HF Marian",
                "HF XLNet relative_positional_encoding (rows in decreasing order)",
            ),
            layout_text="sin half then cos half",
            colour_index=2,
        ),
        "musicgen": Convention(
            name="musicgen",
            layout="halves",
            spacing="shifted",
            odd_column="zero",
            formula="ω_i = base^(-i/(h-1)), h = d_model // 2",
            odd_rule="a zero column is appended",
            description="Halves [cos | sin], tensor2tensor's frequencies.",
            libraries=(
                "HF MusicGen and MusicGen Melody get_embedding",
                "diffusers get_timestep_embedding(flip_sin_to_cos=True)",
            ),
            layout_text="cos half then sin half",
            colour_index=3,
            first="cos",
        ),
        "diffusion": Convention(
            name="diffusion",
            layout="halves",
            spacing="shifted",
            odd_column="zero",
            formula="ω_i = base^(-i/h), h = d_model // 2",
            odd_rule="a zero column is appended",
            description="Halves [cos | sin], base^(-i/h): diffusion models' timestep embedding.",
            libraries=(
                "OpenAI improved-diffusion, guided-diffusion and GLIDE timestep_embedding",
                "Stable Diffusion (CompVis ldm) timestep_embedding",
                "diffusers Timesteps(flip_sin_to_cos=True, downscale_freq_shift=0)",
            ),
            layout_text="cos half then sin half",
            colour_index=4,
            first="cos",
            shift=0.0,
        ),
    }
)


def check_convention(convention: object) -> Convention:
    """Look up a convention by name, raising a message that lists the valid names."""
    return CONVENTIONS[check_choice(convention, "convention", tuple(CONVENTIONS))]


_DEFAULT_BASE = 10_000.0


def resolve_bank(d_model: object, base: object, convention: object) -> FrequencyBank:
    """The bank a public function works on: ``d_model`` itself when it is a
    :class:`FrequencyBank` (then ``base`` and ``convention`` must be left at their defaults:
    the bank fixes its frequencies and layout), else the convention's bank."""
    if isinstance(d_model, FrequencyBank):
        default_base = isinstance(base, numbers.Real) and float(base) == _DEFAULT_BASE
        if not default_base or not (isinstance(convention, str) and convention == "vaswani"):
            raise InputError(
                f"base and convention describe how a convention's bank is built; a "
                f"FrequencyBank fixes its own frequencies and layout, so pass it as d_model "
                f"alone (got base={base!r}, convention={convention!r})"
            )
        return d_model
    d_model = check_d_model(d_model)
    base = check_base(base)
    return check_convention(convention).bank(d_model, base)
