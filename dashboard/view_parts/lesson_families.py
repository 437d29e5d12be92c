"""The Lesson's step on extrapolation: the sinusoid, a learned table, RoPE and ALiBi against
the distance between query and key, up to twice the training length, each score from its
family in :data:`pe_core.FAMILIES`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard.config import Config
from dashboard.figures import charts
from dashboard.view_parts.lesson_step import Step

#: The families compared, by their key in pe_core.FAMILIES, and the name the step gives each.
COMPARED = {
    "added": "the sinusoid",
    "learned": "a learned table",  # drawn as models initialise it: its values are noise
    "rope": "RoPE",
    "alibi": "ALiBi",
}
#: RoPE's query and key: a random pair (with all-ones ones its curve is the sinusoid's, doubled,
#: and would hide it).
ROPE_VECTORS = "random"
#: The step's encoding: twice the training length in positions, d_model (and RoPE's head_dim).
BEYOND = Config(256, 64, 10_000.0, "vaswani")


def training_length(config: Config) -> int:
    """The training length of the step: half the positions drawn."""
    return config.n_positions // 2


@dataclass(frozen=True)
class Beyond:
    """Each family's score against the distance 0 .. n - 1 (the query at n - 1), divided by its
    largest size over those distances; NaN where the family has no value (a learned table
    has no row past the training length)."""

    distances: np.ndarray
    curves: dict[str, np.ndarray]
    train_length: int

    def missing(self) -> tuple[str, ...]:
        """The families with no value at any distance from the training length on."""
        return tuple(
            key for key, curve in self.curves.items() if np.isnan(curve[self.train_length :]).all()
        )


def beyond_training(config: Config) -> Beyond:
    """The four families at ``config``, a learned table of the training length's rows."""
    n, length = config.n_positions, training_length(config)
    curves = {}
    for key in COMPARED:
        family = pe_core.FAMILIES[key]
        options = {"vectors": ROPE_VECTORS} if key == "rope" else {}
        rows = length if family.holds_table else n  # a table holds its rows, no more
        score = family.score(rows, config.bank, base=config.base, **options)
        curve = np.full(n, np.nan)
        curve[:rows] = score / np.max(np.abs(score))
        curves[key] = curve
    return Beyond(np.arange(n), curves, length)


def _options(config: Config) -> tuple[str, ...]:
    return tuple(name[0].upper() + name[1:] for name in COMPARED.values())


def _answer(config: Config) -> int:
    missing = beyond_training(config).missing()
    return list(COMPARED).index(missing[0]) if len(missing) == 1 else 0


def _explanation(config: Config) -> str:
    found = beyond_training(config)
    length = found.train_length
    omega = pe_core.frequencies(config.d_model, base=config.base)
    unturned = int(np.sum(length * omega < 2 * np.pi))
    slope = float(pe_core.FAMILIES["alibi"].defaults["slope"])
    return (
        f"{_options(config)[_answer(config)]}: the table holds one trained vector per "
        f"position, {length:,} rows here "
        f"(GPT-2 has 1,024): a position from {length:,} on has no row, so no query or key "
        f"stands there and no two positions are {length:,} or more apart; its curve stops at "
        "the dashed line, and a longer text does not fit. The others are computed "
        "and have a value at every distance, but not all of them are values the model has "
        f"seen: of the {omega.size} pairs of the sinusoid and of RoPE (d_model {config.d_model}, "
        f"base {config.base_text}), {unturned} turn less than once within {length:,} "
        "positions, so past the dashed line they reach angles no training sequence showed "
        "(the RoPE lab's scaling variants stretch them back). ALiBi adds the same straight "
        f"line at every length, −m·d (m = {slope:.3g} here): a key twice as far is penalised "
        "twice as much and nothing new appears, which is why it was designed to train short "
        "and test long. Each curve is divided by its largest size, so the four share an axis."
    )


def _figure(config: Config):
    found = beyond_training(config)
    return charts.curves(
        found.distances,
        {name: found.curves[key] for key, name in COMPARED.items()},
        title="Each encoding's score against distance, before and past the training length",
        subtitle="query and key d positions apart; each curve divided by its largest size; "
        "the learned table as drawn before training",
        x_title="distance d between query and key (positions)",
        y_title="score (scaled)",
        marks={f"training length {training_length(config):,}": training_length(config)},
    )


EXTRAPOLATION = Step(
    "What happens beyond the training length?",
    "Four ways to give attention the positions: the sinusoid (steps 2 to 5), a learned table "
    "(one trained vector per position, as in GPT-2 and BERT), RoPE (step 6), and ALiBi, which "
    "adds no vector: it subtracts m·d from the score of a key d positions back (Press et al. "
    f"2022). A model was trained on sequences of {training_length(BEYOND):,} positions.",
    "Which of these has no value at all past the training length?",
    _options,
    _answer,
    _explanation,
    _figure,
    "distance",
    BEYOND,
    {
        "dist_fam": [pe_core.FAMILIES[key].name for key in COMPARED],
        "dist_qk": ROPE_VECTORS,
    },
)
