"""The lecture's order: its steps, the recap after them, and the numbers links had before the
steps were put in teaching order (issue 52), so that an old link opens the step it named."""

from __future__ import annotations

from dashboard.views.lesson import attention, families, sinusoids
from dashboard.views.lesson.step import Step

#: The lecture, in the order a lecturer gives it: the problem (attention ignores order), the
#: sinusoid, why several frequencies and then their wavelengths, relative position, where an
#: added encoding enters attention and whether it survives the layers (the motivation for
#: RoPE), then RoPE, and what happens past the training length.
STEPS: tuple[Step, ...] = (
    attention.ORDER,
    sinusoids.SINUSOIDS,
    sinusoids.SEVERAL,
    sinusoids.WAVELENGTHS,
    sinusoids.RELATIVE,
    attention.SENTENCE_STEP,
    attention.LAYERS,
    attention.ROPE,
    families.EXTRAPOLATION,
)

#: The last stop after the steps: what the lecture showed, the misconceptions, questions.
RECAP = len(STEPS) + 1

#: The steps in the order links numbered them before (``/lesson?step=N``, steps 1 to 9).
STEPS_BEFORE_52: tuple[Step, ...] = (
    attention.ORDER,
    sinusoids.SINUSOIDS,
    sinusoids.WAVELENGTHS,
    sinusoids.SEVERAL,
    sinusoids.RELATIVE,
    attention.ROPE,
    attention.SENTENCE_STEP,
    attention.LAYERS,
    families.EXTRAPOLATION,
)

BY_SLUG = {step.slug: step for step in STEPS}


def number_of(slug: str) -> int:
    """The number of the step named ``slug`` (1 for the first)."""
    return STEPS.index(BY_SLUG[slug]) + 1


def number_before_52(old: int) -> int:
    """The number now of the step an old link numbered ``old`` (the recap stays the recap)."""
    if old == len(STEPS_BEFORE_52) + 1:
        return RECAP
    return STEPS.index(STEPS_BEFORE_52[old - 1]) + 1
