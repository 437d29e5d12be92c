"""The sinusoid charts of the Sinusoids view, also drawn by the Lesson."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard import claims
from dashboard.caching import cached, digest
from dashboard.config import Config
from dashboard.data import column_info, rows_at
from dashboard.figures import sinusoidal

#: Points of a smooth curve.
SMOOTH_POINTS = 2000


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
    smooth_values = pe_core.encoding_columns(smooth, config.bank, list(dims))
    if last - first + 1 <= SMOOTH_POINTS // 2:
        integers = np.arange(first, last + 1)
        integer_values = pe_core.encoding_columns(integers, config.bank, list(dims))
    else:
        integers, integer_values = np.zeros(0), np.zeros((0, len(dims)))
    return SinusoidData(smooth, smooth_values, integers, integer_values)


def _labels(config: Config, dims: tuple[int, ...]) -> list[str]:
    """Each chosen column's name in the legend: its role and wavelength."""
    info = column_info(config)
    return [
        f"dim {j} ({info.role[j]}, λ={claims.positions_text(info.wavelength[j])})"
        if info.role[j] != "zero"
        else f"dim {j} (zero)"
        for j in dims
    ]


def position_key(
    config: Config, dims: tuple[int, ...], first: int, span: int, frame_ms: int | None = None
) -> str:
    """What :func:`position_figure` draws for these arguments, as a key: the curves' names, a
    digest of their numbers, the positions and the Play speed; the figure is built from these
    alone. Parameters that leave the curves as they are give the same key: a base changes
    nothing in dimensions 0 and 1 (their frequency is base^0 = 1), the Sinusoids view's
    default at d_model 64, so its chart is not built again for them (issue 51)."""
    data = sinusoid_data(config, dims, first, span)
    return digest(
        _labels(config, dims),
        first,
        span,
        frame_ms,
        data.smooth_positions,
        data.smooth_values,
        data.integer_positions,
        data.integer_values,
    )


def position_figure(
    config: Config, dims: tuple[int, ...], first: int, span: int, frame_ms: int | None = None
):
    data = sinusoid_data(config, dims, first, span)
    labels = _labels(config, dims)
    last = int(data.smooth_positions[-1])
    subtitle = (
        f"positions {first:,}–{last:,}; markers at the integer positions"
        if data.integer_positions.size
        else f"positions {first:,}–{last:,}: too many integer positions to mark "
        f"({last - first + 1:,}); "
        "narrow the range to see the samples"
    )
    return sinusoidal.sinusoid_lines(
        data.smooth_positions,
        data.smooth_values,
        data.integer_positions,
        data.integer_values,
        labels=labels,
        title="Value against position, one curve per dimension",
        subtitle=subtitle,
        frame_ms=frame_ms,
    )


def dimension_figure(config: Config, at: tuple[int, ...], chosen: int | None = None):
    info = column_info(config)
    rows = np.asarray(rows_at(config, at))
    sin_columns = np.flatnonzero(info.role == "sin")  # in pair order, in every layout
    cos_columns = np.flatnonzero(info.role == "cos")
    each_pair = sin_columns if sin_columns.size >= cos_columns.size else cos_columns
    return sinusoidal.dimension_lines(
        rows[:, sin_columns],
        rows[:, cos_columns],
        positions=list(at),
        sin_columns=sin_columns,
        cos_columns=cos_columns,
        frequency=info.frequency[each_pair],
        wavelength=info.wavelength[each_pair],
        chosen=chosen,
        # "every position is its own wave" only where some column turns (tensor2tensor at
        # d_model 1 has one zero column: every position's "wave" is the same point)
        title=None
        if (info.frequency > 0).any()
        else "Value against pair index: no column turns, every position is the same",
    )
