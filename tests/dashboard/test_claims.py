"""Every claim a page shows holds at the parameters on screen (issue 37).

Each page is rendered over a grid of edge parameters (d_model 1, 2, 3, 4, 7 and 512; L 1, 2, 3
and 1,000,000; base 1.01, 2 and 1e9; every convention). Every sentence that states a property of
the parameters is made by ``dashboard.claims``, which records it with the facts it rests on; here
each recorded claim is checked against the core, computed another way (the wavelengths from
``pe_core.wavelengths``, the diagonals from dot products of encodings at positions up to 10**7),
and the page's words are checked for what fixed text got wrong ("1 positions", the API's words).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import pe_core
from dashboard import claims, registry
from dashboard.view_parts.heatmap import column_window, row_budget
from dashboard.views.rope import precision as rope_precision
from tests.apptest_helpers import new_app, no_errors

pytestmark = pytest.mark.timeout(900)

CONVENTIONS = tuple(pe_core.CONVENTIONS)


def _grid() -> list[dict]:
    """Edge parameters: every convention at the smallest widths, and the extremes of L and base
    (at an even and an odd d_model)."""
    cases = [
        {"d": d, "conv": conv, "L": 3, "base": 10000.0}
        for d in (1, 2, 3, 7)
        for conv in CONVENTIONS
    ]
    cases += [
        {"d": d, "conv": "vaswani", "L": L, "base": base}
        for d, L, base in (
            (4, 1, 1.01),
            (4, 2, 2.0),
            (3, 2, 1e9),
            (4, 1_000_000, 1.01),
            (512, 1_000_000, 1e9),
            (3, 1_000_000, 2.0),
            (512, 2048, 1.01),
        )
    ]
    return cases


#: The pages that read the sidebar's parameters (the RoPE lab when its source is the sidebar,
#: Check with an example built from them), each with what it needs to read them.
PAGES = {
    view.slug: {"rope": {}, "check": {"example": "float32 angles"}}.get(view.slug, {})
    for view in registry.VIEWS
    if view.slug != "lesson"
}

_PLURAL_AFTER_ONE = re.compile(
    r"(?<![\d.,])1 (positions|pairs|rows|columns|layers|values|zero columns)\b"
)
#: Words of the API, not of the page: a message on screen says what to change in the page.
_API_WORDS = ("pass fewer", "an int L", "got ", "Traceback", "ValueError")


def _texts(at) -> list[str]:
    parts = [
        e.value
        for kind in ("markdown", "caption", "info", "warning", "success")
        for e in getattr(at, kind)
    ]
    parts += [t.value for t in at.title]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    parts += [e.label for e in at.expander]
    return [p.replace("\\", "") for p in parts if isinstance(p, str)]


def _wavelengths(case) -> np.ndarray:
    return pe_core.wavelengths(case["d"], base=case["base"], convention=case["conv"])


def _check_pace(claim, case, n_positions):
    lengths = _wavelengths(case)
    lengths = lengths[np.isfinite(lengths)]
    if lengths.size == 0:
        assert claim["fastest"] is None and "No pair turns" in claim["text"]
        return
    assert claim["fastest"] == pytest.approx(lengths.min(), rel=1e-12)
    assert claim["slowest"] == pytest.approx(lengths.max(), rel=1e-12)
    turned = 2 * math.pi / lengths.max() * max(n_positions - 1, 0)  # radians, the slowest pair
    assert claim["barely"] == (turned < claims.BARELY)
    assert ("barely changes" in claim["text"]) == claim["barely"]


def _check_rows(claim, case):
    first, stop = column_window(case["d"], 0)
    budget = row_budget(stop - first)
    widest = math.ceil(case["L"] / budget) if case["L"] > budget else 1
    assert claim["widest"] == widest
    assert ("Each row is one position" in claim["text"]) == (widest == 1)
    assert (f"mean of {widest:,} consecutive positions" in claim["text"]) == (widest > 1)


def _check_diagonals(claim, case):
    # Dot products at positions near 0 and near 10**7, shifted: an unpaired slow column shows
    # far out, where its angle has grown.
    starts = np.array([0.0, 1.0, 2.0, 5.0, 1e7, 1e7 + 3.0])
    table = pe_core.sinusoidal_encoding(
        np.concatenate([starts, starts + 17.0]),
        case["d"],
        base=case["base"],
        convention=case["conv"],
    )
    gram = table @ table.T
    n = starts.size
    departure = np.abs(gram[:n, :n] - gram[n:, n:]).max()
    assert claim["holds"] == bool(departure < 1e-9), departure
    assert ("is not constant" in claim["text"]) == (not claim["holds"])


def _check_ratio(claim, case):
    lengths = _wavelengths(case)
    ratio = lengths[1] / lengths[0]
    assert claim["ratio"] == pytest.approx(ratio, rel=1e-12)
    shown = float(claim["text"])
    assert shown == pytest.approx(ratio, rel=1e-3)
    assert (shown == 1.0) == (ratio == 1.0), "a factor that is not 1 is not written as 1"


def _check_head_width(claim, case):
    head_dim = max(2, case["d"] - case["d"] % 2)
    assert claim["head_dim"] == head_dim
    assert ("rounded down" in claim["text"]) == (head_dim < case["d"])
    assert ("raised" in claim["text"]) == (head_dim > case["d"])


def _table(case, positions) -> np.ndarray:
    return pe_core.sinusoidal_encoding(
        np.asarray(positions, dtype=float), case["d"], base=case["base"], convention=case["conv"]
    )


def _check_norm(claim, case):
    # Near 0 and near 10**7, where a slow lone column has turned.
    positions = np.concatenate([np.arange(200.0), 1e7 + np.arange(200.0)])
    norms = np.linalg.norm(_table(case, positions), axis=1)
    assert norms.min() >= claim["low"] - 1e-12 and norms.max() <= claim["high"] + 1e-12
    if "at every position" in claim["text"]:
        assert np.ptp(norms) < 1e-12
    else:
        assert np.ptp(norms) > 1e-6  # it does vary with the position


def _check_exact_collisions(claim, case):
    table = _table(case, np.arange(200.0))
    distinct_rows = np.unique(table, axis=0).shape[0]
    if claim["distinct"] is True:
        assert distinct_rows == 200
    elif claim["distinct"] is False:
        assert distinct_rows == 1


def _check_columns(claim, case):
    # Which columns hold sin(k·ω_i), cos(k·ω_i) and 0, read off the encoding itself.
    k = np.arange(7.0)
    table = _table(case, k)
    omega = pe_core.frequencies(case["d"], base=case["base"], convention=case["conv"])
    for i, column in enumerate(claim["sin"]):
        np.testing.assert_allclose(table[:, column], np.sin(k * omega[i]), atol=1e-12)
    for i, column in enumerate(claim["cos"]):
        np.testing.assert_allclose(table[:, column], np.cos(k * omega[i]), atol=1e-12)
    for column in claim["zeros"]:
        assert not table[:, column].any()
    assert sorted([*claim["sin"], *claim["cos"], *claim["zeros"]]) == list(range(case["d"]))
    assert ("2i+1 holds cos" in claim["text"]) == (
        len(claim["sin"]) > 1 and claim["sin"][1] - claim["sin"][0] == 2
    ) or case["d"] == 2


def _check_sequence_length(claim):
    # Whether the frequencies follow the sequence length, asked of the core another way: the
    # encoding at this length against the one without.
    config = {"head_dim": 64, "max_position_embeddings": 4096}
    scaling = {
        "linear": {"rope_type": "linear", "factor": 2.0},
        "dynamic": {"rope_type": "dynamic", "factor": 2.0},
    }.get(claim["rope_type"])
    if scaling is not None:
        at = pe_core.rope_from_config({**config, "rope_scaling": scaling}, seq_len=claim["seq_len"])
        plain = pe_core.rope_from_config({**config, "rope_scaling": scaling})
        assert claim["follows"] == (at.signature != plain.signature or claim["seq_len"] <= 4096)
    assert ("changes nothing" in claim["text"]) == (not claim["follows"])
    if claim["follows"] and claim["rope_type"] == "dynamic":
        assert f"for {claim['target']:,} positions" in claim["text"]


def _check_first_crossing(claim, case):
    # The sidebar's head as RoPE; the claimed first position checked against the public curve
    # at it and at the 4,096 positions before it (and at the curve's samples below it).
    rope = pe_core.rope_frequencies(max(2, case["d"] - case["d"] % 2), base=case["base"])

    def errors(positions):
        if claim["frequencies"] == "transformers":
            return pe_core.transformers_angle_errors(positions, rope)
        return pe_core.rope_angle_errors(positions, rope, "float32")

    before = np.arange(max(0, claim["low"] - 4096), min(claim["low"], claim["stop"]))
    assert not np.any(errors(before) > claim["threshold"])
    samples = [p for p in rope_precision.POSITIONS if p < claim["low"]]
    assert not np.any(errors(samples) > claim["threshold"])
    if claim["high"] is not None:
        assert errors([claim["high"]])[0] > claim["threshold"]
        assert (f"at position {claim['high']:,}" in claim["text"]) == claim["exact"]
    else:
        assert "stay within" in claim["text"]


def _check_wavelength_title(claim, case):
    lengths = _wavelengths(case)
    lengths = lengths[np.isfinite(lengths)]
    assert claim["n_pairs"] == lengths.size
    ratios = lengths[1:] / lengths[:-1]
    geometric = lengths.size > 1 and np.ptp(ratios) <= 1e-9 * ratios.max()
    assert claim["geometric"] == geometric
    assert ("geometric progression" in claim["text"]) == geometric
    assert ("One frequency" in claim["text"]) == (lengths.size == 1)


def _check_wavelength_mark(claim, case):
    # What each line marks, from pe_core.wavelengths; 2π only where it is; the paper's constant
    # only at the paper's base; "not reached" only where the slowest wavelength falls short.
    lengths = _wavelengths(case)
    paper = 2 * math.pi * case["base"]
    expected = {
        "length": case["L"],
        "fastest": lengths[0] if lengths.size else None,
        "slowest": lengths[-1] if lengths.size else None,
        "two_pi_base": paper,
    }[claim["mark"]]
    assert claim["value"] == pytest.approx(expected, rel=1e-12)
    text = claim["text"]
    assert ("(2π)" in text) == (
        claim["mark"] == "fastest" and math.isclose(claim["value"], 2 * math.pi, rel_tol=1e-12)
    )
    assert ("the paper's" in text) == (
        case["base"] == 10_000.0
        and claim["mark"] in ("two_pi_base", "slowest")
        and math.isclose(lengths[-1] if claim["mark"] == "slowest" else paper, paper, rel_tol=1e-12)
    )
    if claim["mark"] == "two_pi_base":
        reached = lengths.size and math.isclose(lengths[-1], paper, rel_tol=1e-12)
        assert ("not reached" in text) == (not reached)
    if claim["mark"] == "length":
        assert f"L = {case['L']:,} position" in text


def _check_pair_count(claim, case):
    # Pairs read off the encoding: a cos column is 1 at position 0, a sin column 0 there and
    # not 0 at position 1 (every frequency here is above 0).
    table = _table(case, np.arange(3.0))
    cos_columns = int(np.sum(table[0] == 1.0))
    sin_columns = int(np.sum((table[0] == 0.0) & (table[1] != 0.0)))
    assert (claim["pairs"], claim["lone"]) == (cos_columns, sin_columns - cos_columns)
    assert ("lone sin" in claim["text"]) == (claim["lone"] > 0)


def _check_offsets_drawn(claim, case):
    # A sequence of L positions has the offsets 0 to L - 1; a check from k stays within it.
    assert claim["n_positions"] == case["L"]
    if claim["largest"] is not None:
        assert claim["largest"] <= case["L"] - 1
    for start, largest in claim["checks"].items():
        assert 0 <= start <= case["L"] - 1
        assert largest is None or start + largest <= case["L"] - 1


def _check(claim, case):
    kind = claim["kind"]
    checks = {
        "offsets_drawn": _check_offsets_drawn,
        "wavelength_title": _check_wavelength_title,
        "wavelength_mark": _check_wavelength_mark,
        "pair_count": _check_pair_count,
    }
    if kind in checks:
        checks[kind](claim, case)
        return
    if kind == "first_crossing":
        _check_first_crossing(claim, case)
        return
    if kind == "sequence_length":
        _check_sequence_length(claim)
        return
    if kind == "pace":
        _check_pace(claim, case, case["L"])
    elif kind == "rows":
        _check_rows(claim, case)
    elif kind == "diagonals":
        _check_diagonals(claim, case)
    elif kind == "ratio":
        _check_ratio(claim, case)
    elif kind == "head_width":
        _check_head_width(claim, case)
    elif kind == "norm":
        _check_norm(claim, case)
    elif kind == "exact_collisions":
        _check_exact_collisions(claim, case)
    elif kind == "columns":
        _check_columns(claim, case)
    else:
        raise AssertionError(f"no check for the claim kind {kind!r}: add one here")


@pytest.mark.slow
@pytest.mark.parametrize("slug", list(PAGES))
def test_every_claim_holds_over_the_edge_grid(slug):
    shown_kinds = set()
    for case in _grid():
        at = new_app({**case, **PAGES[slug]}, view=slug)
        at.run()
        no_errors(at)
        for claim in at.session_state["_claims"]:
            _check(claim, case)
            shown_kinds.add(claim["kind"])
        for text in _texts(at):
            assert not _PLURAL_AFTER_ONE.search(text), (case, text)
            for words in _API_WORDS:
                assert words not in text, (case, words, text)
    expected = {
        "heatmap": {"rows", "pace"},
        "similarity": {"diagonals", "offsets_drawn"},
        "wavelengths": {"ratio", "wavelength_title", "wavelength_mark", "pair_count"},
        "rope": {"head_width", "first_crossing"},
    }
    assert expected.get(slug, set()) <= shown_kinds


def test_the_listed_urls_say_true_things():
    """The URLs issue 37 named, each with the sentence that was false."""
    at = new_app(view="wavelengths", d=1, conv="diffusion")
    at.run()
    assert any("the diffusion convention has no sin/cos pair" in t for t in _texts(at))
    assert not any("tensor2tensor" in t for t in at.info)

    at = new_app(view="heatmap", base=1.01)
    at.run()
    words = " ".join(_texts(at))
    assert "barely" not in words and "every 6.2" in words  # 2π/ω: 6.28 and 6.35 positions

    at = new_app(view="sinusoids", conv="split", d=8)  # the layout said as it is
    at.run()
    words = " ".join(_texts(at))
    assert "Column 2i holds" not in words and "Columns 0 to 3 hold sin" in words

    at = new_app(view="heatmap", L=1_000_000)
    at.run()
    words = " ".join(_texts(at))
    assert "Each row is one position" not in words and "mean of 489 consecutive" in words

    for d in (1, 3):
        at = new_app(view="similarity", d=d)
        at.run()
        words = " ".join(_texts(at))
        assert "constant along every diagonal" not in words and "is not constant" in words
        assert not at.latex  # the closed forms in the offset do not hold there

    at = new_app(view="rope", d=1)
    at.run()
    words = " ".join(_texts(at))
    assert "rounded down" not in words and "raised to the smallest head" in words
    assert "the same frequencies as the other views" not in words

    at = new_app(view="wavelengths", base=1.01)
    at.run()
    assert not any("turns 1 times" in t for t in _texts(at))

    at = new_app(view="example", d=3, conv="tensor2tensor")
    at.run()
    code = " ".join(c.value for c in at.code)
    assert "down to exactly 1/base" not in code and "one pair: w = [1]" in code

    at = new_app(view="sinusoids", L=10, d=4, base=100)  # the Tutorial preset
    at.run()
    assert not at.warning
    assert at.text_input(key="at").value == "0, 1, 9"
