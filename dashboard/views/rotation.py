"""Relative position as a rotation: PE(k + offset) = M(offset) @ PE(k) for every k."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

import pe_core
from dashboard import caching, params, state, ui
from dashboard.caching import cached
from dashboard.config import Config
from dashboard.data import column_info
from dashboard.figures import linked, relative
from dashboard.formatting import counted

CIRCLE_POINTS = 60
#: Largest d_model whose full rotation matrix is built (2048**2 float64 = 32 MB).
MAX_ROTATION_D_MODEL = 2048
#: Pairs in the displayed window of the rotation matrix: 16 blocks of 2x2, big enough to see.
ROTATION_PAIRS = 16
#: Pairs on the unit circles at once.
MAX_CIRCLES = 6
MAX_OFFSET = 1_000_000


def _n_pairs(config: Config) -> int:
    return config.layout.n_cos


OFFSET = params.Number(
    "rot_offset",
    "Offset δ",
    1.0,
    low=-MAX_OFFSET,
    high=MAX_OFFSET,
    integer=False,
    format="%g",
)
POSITION = params.Number(
    "rot_k", "Position k", 5, low=0, high=lambda config: max(0, config.n_positions - 1)
)
FIRST_PAIR = params.Number(
    "rot_first",
    "First pair shown in M",
    0,
    low=0,
    high=lambda config: max(0, _n_pairs(config) - ROTATION_PAIRS),
    step=8,
)
PAIRS = params.Multi(
    "rot_pairs",
    "Pairs to watch on the unit circle",
    lambda config: [i for i in (0, 16, 64, 160) if i < _n_pairs(config)] or [0],
    options=lambda config: range(max(_n_pairs(config), 1)),
    max_selections=MAX_CIRCLES,
    help="Pairs with a small i turn fastest around their circle, pairs with a large i slowest.",
)
SPEED = params.play_speed("rot_speed", "under the circles")
PARAMS = (OFFSET, POSITION, FIRST_PAIR, PAIRS, SPEED)


def subtitle(config: Config) -> str:
    """The page's one-line subtitle."""
    return f"How the encoding of position k + δ relates to that of k: {config.summary}."


def render(config: Config) -> None:
    ui.explain(
        "Why does the paper pair every sin with a cos? Because then shifting a position by an "
        "offset δ is the same linear map for every position: each (sin, cos) pair turns by the "
        "angle δ·ω_i, a 2×2 rotation. So PE(k+δ) = M(δ)·PE(k) with one matrix M(δ) that does not "
        "depend on k, and a model can learn to attend by relative position.\n\n"
        "It also explains the similarity view: M(δ) is orthogonal, so PE(k)·PE(k+δ) = "
        "Σ cos(δ·ω_i) depends only on δ. Cos is even, so offsets +δ and −δ give the same dot "
        "product: the similarity alone does not say which token comes first. The rotation does: "
        "M(−δ) = M(δ)ᵀ turns each pair the other way, so PE(k+δ) ≠ PE(k−δ), and a learned "
        "linear map of the encodings (attention's query and key projections) can tell before "
        "from after.\n\n"
        "M(δ) turns each (sin, cos) point clockwise: the sinusoid writes sin first, and as the "
        "angle grows the point (sin θ, cos θ) runs from the top of the circle to the right. "
        "RoPE (the RoPE lab) rotates a pair written the other way round and its R turns "
        "anticlockwise: swap the two coordinates and M(δ) is R(δ), the same rotation.",
        r"\begin{pmatrix}\sin((k+\delta)\omega_i)\\ \cos((k+\delta)\omega_i)\end{pmatrix} = "
        r"\begin{pmatrix}\cos\delta\omega_i & \sin\delta\omega_i\\ -\sin\delta\omega_i & "
        r"\cos\delta\omega_i\end{pmatrix}"
        r"\begin{pmatrix}\sin k\omega_i\\ \cos k\omega_i\end{pmatrix}",
    )
    if not config.layout.is_paired:
        st.warning(
            f"No such matrix exists for odd d_model = {config.d_model} with the "
            f"{config.convention} "
            "convention. Its last column sin(k·ω) has no cos partner, and sin((k+δ)·ω) = "
            "sin(kω)cos(δω) + cos(kω)sin(δω) needs cos(kω), which the encoding does not hold. "
            "Choose an even d_model, or the tensor2tensor convention (its odd column is zero)."
            + (
                f" Its other {config.d_model - 1:,} columns still form "
                f"{counted(_n_pairs(config), 'sin/cos pair')}, each turning by δ·ω_i: "
                f"{'its circle' if _n_pairs(config) == 1 else 'their circles'} below."
                if _n_pairs(config)
                else ""
            )
        )
        if _n_pairs(config):
            _circles(config, matrix=False)
        return
    if _n_pairs(config) == 0:
        st.info(
            f"With d_model = {config.d_model} the {config.convention} convention has no sin/cos "
            "pair, only a zero column: M is the 1 × 1 identity and there is nothing to rotate."
        )
        return
    offset, k, first_pair = _controls(config)
    _matrix_and_vectors(config, offset, k, first_pair)
    _circles(config)


def _controls(config: Config) -> tuple[float, int, int]:
    left, right = st.columns(2)
    OFFSET.widget(config, left)
    POSITION.widget(config, right)
    n_pairs = _n_pairs(config)
    clicked = st.session_state.pop(BRING_KEY, None)
    if n_pairs > ROTATION_PAIRS and config.d_model <= MAX_ROTATION_D_MODEL:
        _bring_into_view(config, clicked)
        FIRST_PAIR.widget(config, label=f"First pair shown in M ({ROTATION_PAIRS} of {n_pairs})")
    return float(OFFSET.value(config)), int(POSITION.value(config)), int(FIRST_PAIR.value(config))


#: The unit circles: the point clicked there, with its pair and what the circles showed, is
#: kept under ``CHOSEN_KEY`` (the circles are a fragment; the matrix and the vectors above
#: read it) and its pair, once, under ``BRING_KEY`` (the next run moves the matrix's window
#: to it if it is not shown).
CIRCLES_KEY = "rotation_circles"
CHOSEN_KEY = state.ROTATION_CHOSEN_PAIR
BRING_KEY = state.ROTATION_BRING_PAIR


def _circles_shown(config: Config) -> tuple:
    """What the unit circles are drawn from: the configuration, the pairs, the frame time."""
    pairs = tuple(i for i in PAIRS.value(config) if i < _n_pairs(config))[:MAX_CIRCLES]
    return config, pairs, 1000 // SPEED.value(config)


def _chosen_pair(config: Config) -> int | None:
    """The pair clicked on the unit circles as they are drawn now, or None."""
    chosen = st.session_state.get(CHOSEN_KEY)
    return chosen["pair"] if chosen and chosen["shown"] == _circles_shown(config) else None


def _bring_into_view(config: Config, pair: int | None) -> None:
    """After a point is clicked on the circles, show its pair's block in M (before the
    window's widget is drawn: the user's own choice of window stands until the next click)."""
    first = int(FIRST_PAIR.value(config))
    if pair is None or pair >= _n_pairs(config) or first <= pair < first + ROTATION_PAIRS:
        return
    st.session_state[FIRST_PAIR.key] = min(pair - pair % 8, _n_pairs(config) - ROTATION_PAIRS)


def _matrix_and_vectors(config: Config, offset: float, k: int, first_pair: int) -> None:
    data = rotation_data(config, offset, k, first_pair)
    chosen = _chosen_pair(config)
    columns = config.layout.pair_columns(chosen) if chosen is not None else ()
    if data.window is None:
        st.info(
            f"M is a {config.d_model:,} × {config.d_model:,} matrix; it is built here for d_model "
            f"up to {MAX_ROTATION_D_MODEL:,}. Its blocks rotate pair i by δ·ω_i: "
            f"{data.angles[0]:.4g} rad for the fastest pair, {data.angles[-1]:.4g} rad for the "
            "slowest."
        )
        if chosen is not None:
            st.caption(_chosen_words(data, chosen, columns, where=""))
        return
    outline = linked.block_outline(data.indices.tolist(), columns)
    n_drawn = min(config.d_model, relative.VECTOR_COLUMNS)
    shaded = sorted(column for column in columns if column < n_drawn)
    left, right = st.columns([1, 1])
    with left:
        ui.chart(
            caching.figure(_matrix_figure, config, offset, k, first_pair),
            "rotation_matrix",
            shapes=outline,
        )
    with right:
        st.metric(
            "Largest |PE(k + δ) − M(δ) @ PE(k)|",
            f"{data.residual:.1e}",
            help="Zero up to floating-point rounding: the same vector, two ways.",
        )
        ui.chart(
            caching.figure(_vector_figure, config, offset, k, first_pair),
            "rotation_vectors",
            shapes=linked.column_bands(shaded, n_drawn),
        )
    if chosen is not None:
        marks = ["outlined in M"] if outline else []
        if shaded:
            named = " and ".join(map(str, shaded))
            marks.append(f"column{'s' * (len(shaded) > 1)} {named} shaded in the vector chart")
        st.caption(_chosen_words(data, chosen, columns, where=" and ".join(marks)))


def _chosen_words(data: RotationData, pair: int, columns: tuple[int, int], *, where: str) -> str:
    """What the block of the pair clicked on the circles does, in numbers, and ``where`` it is
    marked."""
    sin, cos = columns
    words = (
        f"Pair {pair} (sin column {sin}, cos column {cos}), clicked on the circles below: its "
        f"block of M turns it by δ·ω_{pair} = {_angle(data.angles[pair])} rad"
    )
    if data.original is not None:
        words += (
            f", from (sin, cos) = ({data.original[sin]:.6f}, {data.original[cos]:.6f}) in PE(k) "
            f"to ({data.shifted[sin]:.6f}, {data.shifted[cos]:.6f}) in PE(k + δ)"
        )
    if where:
        words += f" ({where})"
    return words + ". Double-click an empty spot of the circles to clear."


@dataclass(frozen=True)
class RotationData:
    window: np.ndarray | None  # float32 rows/columns ``indices`` of M, or None when M is not built
    indices: np.ndarray  # the columns of the pairs shown (contiguous only when interleaved)
    angles: np.ndarray  # offset * w_i, one per pair
    original: np.ndarray | None  # PE(k)
    shifted: np.ndarray | None  # PE(k + offset)
    rotated: np.ndarray | None  # M @ PE(k)
    residual: float | None


@cached
def rotation_data(config: Config, offset: float, k: int, first_pair: int) -> RotationData:
    """M(offset) for the pairs ``first_pair ..`` (16 of them), and PE(k + offset) = M @ PE(k)."""
    bank = config.bank
    angles = offset * bank.frequencies[: bank.layout.n_cos]
    if config.d_model > MAX_ROTATION_D_MODEL:
        return RotationData(None, np.zeros(0, dtype=int), angles, None, None, None, None)
    matrix = pe_core.relative_rotation(offset, bank)
    rows = pe_core.sinusoidal_encoding([k, k + offset], bank)
    rotated = matrix @ rows[0]
    residual = float(np.max(np.abs(rotated - rows[1])))
    pair, role = bank.column_roles()
    first = min(max(0, first_pair), max(0, bank.layout.n_cos - ROTATION_PAIRS))
    indices = np.flatnonzero((pair >= first) & (pair < first + ROTATION_PAIRS) & (role != "zero"))
    window = matrix[np.ix_(indices, indices)]
    return RotationData(
        window.astype(np.float32), indices, angles, rows[0], rows[1], rotated, residual
    )


def _matrix_figure(config: Config, offset: float, k: int, first_pair: int):
    data = rotation_data(config, offset, k, first_pair)
    hover = _axis_hover(config, data.indices, data.angles)
    return relative.rotation_heatmap(
        data.window, indices=data.indices.tolist(), d_model=config.d_model, hover=hover
    )


def _vector_figure(config: Config, offset: float, k: int, first_pair: int):
    data = rotation_data(config, offset, k, first_pair)
    return relative.vector_comparison(data.shifted, data.rotated, k=k, offset=offset)


def _axis_hover(config: Config, columns: np.ndarray, angles: np.ndarray) -> list[str]:
    info = column_info(config)
    labels = []
    for column in columns.tolist():
        i, role = int(info.pair[column]), str(info.role[column])
        if role == "zero":
            labels.append(f"{column} (zero)")
        else:
            labels.append(f"{column} ({role} i={i}, block angle δ·ω_i = {angles[i]:.4g} rad)")
    return labels


def _angle(radians: float) -> str:
    """An angle to six significant digits, without an exponent up to 10^15 rad."""
    return f"{radians:,.0f}" if 1e6 <= abs(radians) < 1e15 else f"{radians:.6g}"


@ui.fragment
def _circles(config: Config, *, matrix: bool = True) -> None:
    """The unit circles of the chosen pairs; with ``matrix``, a click outlines the pair's block
    in M above (False: there is no M to link to)."""
    displayed = _chosen_pair(config)  # what the matrix above was drawn with
    _, kept, _ = _circles_shown(config)
    if list(kept) != PAIRS.value(config):  # a smaller d_model: keep the pairs that still exist
        st.session_state[PAIRS.key] = list(kept) or PAIRS.default(config)
    PAIRS.widget(config)
    if PAIRS.value(config):
        SPEED.widget(config)
    shown = _circles_shown(config)
    _, pairs, _ = shown
    if pairs:
        ui.chart(caching.figure(_circles_figure, *shown), CIRCLES_KEY, select=matrix)
        st.caption(
            "▶ Play moves position k along the circles in your browser: the red vector of each "
            "pair turns by ω_i for every step of k, the fast pairs most, the slow ones least. "
            "Drag the slider to go to a position."
            + (" Click a point of a circle to see that pair's block in M above." if matrix else "")
        )
    if not matrix:
        return
    clicked = _clicked(shown)
    if clicked == st.session_state.get(CHOSEN_KEY):
        return
    st.session_state[CHOSEN_KEY] = clicked
    pair = clicked["pair"] if clicked else None
    if pair is not None or displayed is not None:
        st.session_state[BRING_KEY] = pair
        st.rerun()  # a click here runs this fragment only: run the matrix above too


def _clicked(shown: tuple) -> dict | None:
    """The point clicked on the unit circles drawn from ``shown``, with its pair, or None."""
    _, pairs, _ = shown
    points = ui.selected_on(CIRCLES_KEY, shown)
    if not pairs or not points or points[0].get("curve_number") is None:
        return None
    curve = int(points[0]["curve_number"])
    circle = relative.circle_of_curve(curve, len(pairs))
    if circle >= len(pairs):
        return None
    return {"shown": shown, "point": (curve, points[0].get("point_index")), "pair": pairs[circle]}


@cached
def circle_points(config: Config, pairs: tuple[int, ...], n_points: int) -> np.ndarray:
    """(sin, cos) of k * w_i for k = 0 .. n_points-1 and each pair: shape (n_points, pairs, 2)."""
    columns = [column for i in pairs for column in config.layout.pair_columns(i)]
    values = pe_core.encoding_columns(n_points, config.bank, columns)
    return values.reshape(n_points, len(pairs), 2)


def _circles_figure(config: Config, pairs: tuple[int, ...], frame_ms: int):
    points = circle_points(config, pairs, min(config.n_positions, CIRCLE_POINTS))
    freqs = config.bank.frequencies
    return relative.unit_circles(
        points, pairs=list(pairs), frequencies=freqs[list(pairs)].tolist(), frame_ms=frame_ms
    )
