"""The RoPE lab's precision section: the rotation transformers' RoPE really applies, against
position, in float32 and in a bfloat16 / float16 model (pe_core.transformers_angle_errors), and
what casting the position ids themselves would add (pe_core.rope_angle_errors)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

import pe_core
from dashboard import caching, claims, params, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.figures import charts
from dashboard.views.rope.pairs import encoding_key

PRECISION = params.Choice(
    "rope_prec",
    "Model dtype",
    "bfloat16",
    options=pe_core.MODEL_DTYPES,
    kind="segmented",
    help="The dtype transformers casts cos and sin to: the model's (float32, or a bfloat16 or "
    "float16 model).",
)
#: Positions drawn: log-spaced whole positions from 1 to a million.
POSITIONS = np.unique(np.round(np.geomspace(1, 1_000_000, 400)))
#: An error worth naming: a thousandth of a radian.
MARK = 1e-3
#: The positions the first crossing of MARK is looked for in: 0 to the curve's last.
STOP = int(POSITIONS[-1]) + 1
#: "The first positions", where a model's cos/sin rounding already shows.
FIRST = 100


@dataclass(frozen=True)
class PrecisionCurves:
    """Angle errors (radians, max over pairs) at :data:`POSITIONS`."""

    float32: np.ndarray  # transformers: float32 inv_freq (its operation order) and angles
    rounded: np.ndarray  # the same with correctly rounded float32 frequencies
    model: np.ndarray | None  # cos/sin cast to the model's dtype (None for float32)
    cast: np.ndarray | None  # position ids, frequencies and angles all in that dtype
    ulps: float  # the largest distance of transformers' inv_freq from the exact, float32 units
    first: (
        pe_core.AngleErrorCrossing
    )  # transformers' float32 angles past MARK, position by position
    first_rounded: pe_core.AngleErrorCrossing  # the same with correctly rounded frequencies


def precision_curves(key: str, dtype: str, _rope: pe_core.RotaryEncoding) -> PrecisionCurves:
    """The angle errors of ``_rope`` in a ``dtype`` model; ``key`` is its
    :func:`~dashboard.views.rope.pairs.encoding_key` (everything they read of it: the sidebar's
    encoding at another L shares them). The float32 curves are cached apart from the model's
    dtype: another dtype computes only its own two."""
    float32, rounded, ulps = _float32_curves(key, _rope)
    low = dtype != "float32"
    model, cast = _dtype_curves(key, dtype, _rope) if low else (None, None)
    first, first_rounded = _crossings(key, _rope)
    return PrecisionCurves(
        float32=float32,
        rounded=rounded,
        model=model,
        cast=cast,
        ulps=ulps,
        first=first,
        first_rounded=first_rounded,
    )


@cached
def _crossings(
    key: str, _rope: pe_core.RotaryEncoding
) -> tuple[pe_core.AngleErrorCrossing, pe_core.AngleErrorCrossing]:
    """The first positions where transformers' float32 angles, and correctly rounded ones, pass
    :data:`MARK`, found position by position (``key``: see :func:`precision_curves`)."""
    return (
        pe_core.first_angle_error_above(_rope, MARK, stop=STOP),
        pe_core.first_angle_error_above(_rope, MARK, frequencies="rounded", stop=STOP),
    )


@cached
def _float32_curves(
    key: str, _rope: pe_core.RotaryEncoding
) -> tuple[np.ndarray, np.ndarray, float]:
    """transformers' float32 angle errors, those with correctly rounded frequencies, and the
    largest distance of its inv_freq from the exact (``key``: see :func:`precision_curves`)."""
    return (
        pe_core.transformers_angle_errors(POSITIONS, _rope),
        pe_core.rope_angle_errors(POSITIONS, _rope, "float32"),
        float(pe_core.inv_freq_float32_ulps(_rope).max(initial=0.0)),
    )


@cached
def _dtype_curves(
    key: str, dtype: str, _rope: pe_core.RotaryEncoding
) -> tuple[np.ndarray, np.ndarray]:
    """The angle errors of a ``dtype`` model, and of everything computed in ``dtype``."""
    return (
        pe_core.transformers_angle_errors(POSITIONS, _rope, dtype),
        pe_core.rope_angle_errors(POSITIONS, _rope, dtype),
    )


def render(config: Config, rope: pe_core.RotaryEncoding) -> None:
    st.subheader("Precision: the rotation a model really applies")
    PRECISION.widget(config)
    dtype = PRECISION.value(config)
    curves = precision_curves(encoding_key(rope), dtype, rope)
    units = f"{curves.ulps:.2g} float32 unit" + ("" if f"{curves.ulps:.2g}" == "1" else "s")
    how_far = (
        "here they are the exact frequencies."
        if curves.ulps == 0
        else f"here up to {units} from the exact frequencies"
        + ("." if curves.ulps <= 0.5 else " (correctly rounded ones would be within 0.5).")
    )
    sentences = [
        "transformers computes inv_freq in float32 (the exponent 2i/d rounded before the "
        f"power): {how_far}",
        "Its float32 angles position·inv_freq "
        f"{claims.first_crossing(curves.first, 'transformers')}"
        + (
            "."
            if curves.first == curves.first_rounded
            else " (with correctly rounded frequencies they would "
            f"{claims.first_crossing(curves.first_rounded, 'rounded')})."
        ),
    ]
    if curves.model is not None:
        first = POSITIONS <= FIRST
        sentences.append(
            f"A {dtype} model casts cos and sin to {dtype}: the rotation it applies is off by up "
            f"to {curves.model[first].max():.1e} rad within the first {FIRST} positions "
            f"(float32: {curves.float32[first].max():.1e})."
        )
    first, second = pe_core.merged_position_ids(dtype)
    sentences.append(
        f"In {dtype}, positions **{first:,}** and **{second:,}** are the same number: a port "
        f"that casts the position ids to {dtype} gives them the same rotation, and beyond, ever "
        "more positions share a value (the spacing doubles at every power of two)"
        + (
            f"; the third curve computes positions, frequencies and angles all in {dtype}."
            if curves.cast is not None
            else "."
        )
    )
    st.markdown(" ".join(sentences))
    lines = {"transformers, float32 angles": curves.float32}
    if curves.model is not None:
        lines[f"{dtype} model: cos/sin cast to {dtype}"] = curves.model
        lines[f"everything in {dtype}, position ids too"] = curves.cast
    drawn = {
        name: np.where(np.isfinite(values), np.maximum(values, 1e-17), np.nan)
        for name, values in lines.items()
    }
    ui.chart(
        caching.figure_of(
            charts.curves,
            POSITIONS,
            drawn,
            title=f"Angle error against position ({dtype} model)",
            subtitle="max over pairs of |angle applied − exact k·ω| (radians; 1e-17 drawn for an "
            "exact angle)",
            x_title="position",
            y_title="radians",
            log_x=True,
            log_y=True,
        ),
        "rope_precision",
    )
    if curves.cast is not None and not np.isfinite(curves.cast).all():
        beyond = POSITIONS[~np.isfinite(curves.cast)][0]
        st.caption(
            f"Beyond position {beyond:,.0f} a position id overflows {dtype} (inf): the last "
            "curve stops there."
        )
