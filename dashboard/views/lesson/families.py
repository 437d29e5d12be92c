"""The Lesson's step on extrapolation: what the sinusoid, RoPE, ALiBi and a learned table hand
attention past the training length, each score from its family in :data:`pe_core.FAMILIES`,
each on its own axis, and which pairs reach angles never seen in training."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pe_core
from dashboard.config import Config
from dashboard.figures import charts
from dashboard.formatting import counted
from dashboard.views.lesson.sinusoids import step_number
from dashboard.views.lesson.step import Step

#: The families compared, by their key in pe_core.FAMILIES, and the name the step gives each
#: (the learned table has no score to draw: before training it is noise, after training it is
#: whatever the model learned; the step draws which rows it has).
COMPARED = {
    "added": "the sinusoid",
    "rope": "RoPE",
    "alibi": "ALiBi",
    "learned": "a learned table",
}
#: RoPE's query and key: a random pair (with all-ones ones its curve is the sinusoid's, doubled).
ROPE_VECTORS = "random"
#: The step's encoding: twice the training length in positions, d_model (and RoPE's d_head).
BEYOND = Config(256, 64, 10_000.0, "vaswani")


def training_length(config: Config) -> int:
    """The training length of the step: half the positions drawn."""
    return config.n_positions // 2


def unseen_pairs(config: Config) -> np.ndarray:
    """For each query position k = 0 .. n − 1 (the key at 0), how many pairs stand at an angle
    k·ω_i (mod 2π) that no training position showed: for a pair that turned less than once
    in training (positions 0 .. T − 1), the angles past (T − 1)·ω_i until it comes round."""
    length = training_length(config)
    omega = np.asarray(pe_core.frequencies(config.d_model, base=config.base))
    seen = (length - 1) * omega  # the largest angle of each pair in training
    slow = seen < 2 * np.pi  # the others went all the way round
    angles = np.mod(np.arange(config.n_positions)[:, None] * omega[None, :], 2 * np.pi)
    return np.sum(slow[None, :] & (angles > seen[None, :]), axis=1)


@dataclass(frozen=True)
class Beyond:
    """Each family's score against the distance δ = 0 .. n − 1 between query and key (NaN
    where the family has no value: a learned table has no row past the training length),
    and the pairs at unseen angles."""

    distances: np.ndarray
    curves: dict[str, np.ndarray]
    train_length: int
    unseen: np.ndarray

    def missing(self) -> tuple[str, ...]:
        """The families with no value at any distance from the training length on."""
        return tuple(
            key for key, curve in self.curves.items() if np.isnan(curve[self.train_length :]).all()
        )


def beyond_training(config: Config) -> Beyond:
    """The four families at ``config``; a learned table as the rows it holds (1 where a row
    exists, NaN where none does)."""
    n, length = config.n_positions, training_length(config)
    curves = {}
    for key in COMPARED:
        family = pe_core.FAMILIES[key]
        if family.holds_table:
            curve = np.full(n, np.nan)
            curve[:length] = 1.0  # a row for each trained position, none after
        else:
            options = {"vectors": ROPE_VECTORS} if key == "rope" else {}
            curve = family.score(n, config.bank, base=config.base, **options)
        curves[key] = curve
    return Beyond(np.arange(n), curves, length, unseen_pairs(config))


def asked_position(config: Config) -> int:
    """The position the question asks about: half the training length past it."""
    return 3 * training_length(config) // 2


#: The answers, and how the explanation names each.
ANSWERS = (
    (
        "Only the learned table fails, with no row there; the others are computed, so nothing "
        "is new",
        "Only the learned table fails",
    ),
    (
        "The learned table has no row; the sinusoid and RoPE put slow pairs at angles never "
        "seen in training; ALiBi's bias just continues its line",
        "The learned table has no row, the sinusoid and RoPE reach new angles, ALiBi goes on",
    ),
    (
        "All four fail alike: none has a value past the training length",
        "All four fail alike",
    ),
)


def _options(config: Config) -> tuple[str, ...]:
    return tuple(option for option, _ in ANSWERS)


def _answer(config: Config) -> int:
    found = beyond_training(config)
    missing = found.missing()
    if missing == ("learned",):
        return 1 if found.unseen[asked_position(config)] > 0 else 0
    return 2 if len(missing) == len(COMPARED) else 0


def _alibi_slope() -> float:
    return float(pe_core.FAMILIES["alibi"].defaults["slope"])


def _explanation(config: Config) -> str:
    found = beyond_training(config)
    length = found.train_length
    pairs = config.d_model // 2
    unseen = int(found.unseen.max())
    slope = _alibi_slope()
    return (
        f"{ANSWERS[_answer(config)][1]}. At position {asked_position(config):,}, "
        f"{int(found.unseen[asked_position(config)])} pairs stand at angles never seen. A "
        "learned table "
        f"holds one trained vector per position, {length:,} rows here (GPT-2 has 1,024): from "
        f"position {length:,} on there is no row, and a longer text does not fit. The sinusoid "
        "and RoPE are computed at every position, and their curves run on smoothly, but in the "
        f"shaded region up to {unseen} of their {pairs} pairs (d_model {config.d_model}, "
        f"base {config.base_text}) stand at angles no training position showed: the pairs "
        f"that turned less than once within {length:,} positions (step "
        f"{step_number('wavelengths')}). A model never learned what to make of those. Press, "
        "Smith and Lewis (2022) trained the same language model with each and measured it "
        "on longer texts: with the sinusoid it got worse right past the training length, "
        "with RoPE somewhat later; context-extension methods (the RoPE lab's scaling variants) "
        "stretch the slow pairs back into the range seen. ALiBi adds no vector: it subtracts "
        f"m·δ from the score of a key δ positions back (m = {slope:.3g} here), the same line "
        f"at every length. Its bias at δ = {asked_position(config):,} "
        f"(−{slope * asked_position(config):.2f}) is lower than any in training "
        f"(−{slope * (length - 1):.2f}), but of the same kind: a key twice as far is penalised "
        "twice as much, far keys weigh less as they did, which is why it was designed to "
        "train short and test long. Each panel has its own axis: the quantities differ."
    )


def _figure(config: Config):
    found = beyond_training(config)
    length = found.train_length
    pairs = config.d_model // 2
    unseen = int(found.unseen.max())
    slope = _alibi_slope()
    panels = {
        "sinusoid<br>PE(δ)·PE(0)": found.curves["added"],
        "RoPE<br>q·κ": found.curves["rope"],
        "ALiBi<br>bias −m·δ": found.curves["alibi"],
        "learned table<br>its rows": found.curves["learned"],
    }
    new_angles = f"up to {unseen} of {counted(pairs, 'pair')} at angles never seen"
    return charts.panels_past_a_boundary(
        found.distances,
        panels,
        boundary=length,
        notes={
            "sinusoid<br>PE(δ)·PE(0)": new_angles,
            "RoPE<br>q·κ": new_angles,
            "ALiBi<br>bias −m·δ": f"the same line (m = {slope:.3g})",
            "learned table<br>its rows": f"a row for positions 0 to {length - 1:,}; none from "
            f"{length:,} on",
        },
        title="Past the training length: what each encoding hands attention",
        subtitle=f"query at position δ, key at 0; trained on positions 0 to {length - 1:,}",
        x_title="offset δ between query and key (positions)",
        presence=("learned table<br>its rows",),
        mark=(asked_position(config), f"position {asked_position(config):,}"),
    )


def _takeaway(config: Config) -> str:
    found = beyond_training(config)
    length = found.train_length
    return (
        f"Past the training length ({length:,}) a learned table has no row; the sinusoid and "
        f"RoPE are defined but up to {int(found.unseen.max())} of their "
        f"{config.d_model // 2} pairs reach angles never seen; ALiBi continues its line."
    )


EXTRAPOLATION = Step(
    slug="beyond",
    title="What happens beyond the training length?",
    text="Four ways to give attention the positions: the sinusoid, a learned table (one "
    "trained vector per position, as in GPT-2 and BERT), RoPE, and ALiBi, which adds no "
    "vector: it subtracts m·δ from the score of a key δ positions back (Press et al. 2022). "
    f"This step: a model trained on sequences of T = {training_length(BEYOND):,} positions, "
    f"d_model {BEYOND.d_model}, base {BEYOND.base_text}, meets longer ones.",
    question=f"At position {asked_position(BEYOND):,}, past the training length, what does "
    "each encoding hand attention?",
    options=_options,
    answer=_answer,
    explanation=_explanation,
    chart=_figure,
    formula=r"\begin{gathered}k\,\omega_i \bmod 2\pi \notin [0,\, (T-1)\,\omega_i] "
    r"\text{ for a pair with } \lambda_i > T-1 \\ b_{\mathrm{ALiBi}}(\delta) = -m\,\delta"
    r"\end{gathered}",
    takeaway=_takeaway,
    notes="The tempting answer is the first: 'computed means it extrapolates'. The shaded "
    "region is the point: the curves look smooth, the model has never seen those angles. "
    "Press et al. 2022, figure 1, is the evidence to show (perplexity against inference "
    "length). In the lab: the Distance page and the RoPE lab's scaling variants. About 6 "
    "minutes.",
    view="distance",
    config=BEYOND,
    link={
        "dist_fam": [pe_core.FAMILIES[key].name for key in COMPARED],
        "dist_qk": ROPE_VECTORS,
    },
)
