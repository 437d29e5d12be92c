"""The Lesson's steps inside attention: why attention needs positions (against an RNN, a
convolution and a decoder's mask), where an added encoding enters one head's scores on the
student's own sentence, whether it survives to upper layers, and RoPE's rotated query and key.
The numbers come from the small random layers of :mod:`dashboard.views.lesson.small_models`."""

from __future__ import annotations

import numpy as np

from dashboard import params
from dashboard.config import Config
from dashboard.figures import charts, matrices
from dashboard.views.lesson import small_models
from dashboard.views.lesson.sinusoids import step_number
from dashboard.views.lesson.step import SMALL, Step

# --- Why attention needs positions -----------------------------------------------------------


def _order_options(config: Config) -> tuple[str, ...]:
    return (*(name[0].upper() + name[1:] for name in small_models.LAYERS), "None of them")


def _order_answer(config: Config) -> int:
    unchanged = small_models.reversal_changes().unchanged
    if len(unchanged) != 1:
        return len(small_models.LAYERS)  # "None of them" (or, were it two, no single answer)
    return small_models.LAYERS.index(unchanged[0])


def _share(value: float) -> str:
    """A change as a percentage; a change of rounding's size says so (it is not 0)."""
    if value == 0 or value >= 0.005:
        return f"{value:.0%}"
    return f"{value:.0%} ({value:.0e}, rounding)" if value < 1e-9 else f"{value:.1%}"


def _order_explanation(config: Config) -> str:
    found = small_models.reversal_changes().changes
    rnn, convolution, plain, causal = small_models.LAYERS
    sentence = " ".join(small_models.SENTENCE)
    reversed_ = " ".join(small_models.SENTENCE[i] for i in small_models.SHUFFLE)
    return (
        f"{_order_options(config)[_order_answer(config)]}. Each layer, with random weights "
        f"(seed 0), ran on “{sentence}” and on “{reversed_}”; the chart shows how much a "
        "word's output changed (the largest change over the words, as a share of the "
        "output's length). The RNN reads the words one after another, so its state after a "
        f"word holds what came before: {_share(found[rnn])}. The convolution sees each word "
        f"with its neighbours, left from right: {_share(found[convolution])}. Self-attention "
        "compares every word with every other and sums the results, whatever their order: "
        f"{_share(found[plain])}. Without a mask (as in an encoder such as BERT) it sees a bag "
        "of words.\n\n"
        "A decoder (GPT and most language models) masks attention so that each word sees only "
        f"itself and the words before it: reversing then changes the outputs "
        f"({_share(found[causal])}), because each word now sees another set of words (the "
        "first one, itself alone; reversed, the whole sentence). Models with no "
        "position code at all learn some order from that mask (Haviv et al. 2022), yet "
        "nearly every model gives positions explicitly: a transformer gives each position k "
        "a vector PE(k), of the same width as the word vectors, and adds it to the word at "
        f"that position. The same attention layer, unmasked, with PE(k) added: "
        f"{_share(found[small_models.WITH_POSITIONS])}. The order now reaches it."
    )


def _order_figure(config: Config):
    found = small_models.reversal_changes().changes
    return charts.labelled_bars(
        {name: 100 * change for name, change in found.items()},
        title="How much reversing the sentence changes a word's output",
        subtitle="the largest change over the words, in % of the output's length; random weights",
        x_title="change (%)",
        text_format="{:.0f}%",
    )


def _order_takeaway(config: Config) -> str:
    found = small_models.reversal_changes().changes
    rnn, _, plain, _ = small_models.LAYERS
    return (
        "Unmasked self-attention treats the words as a set: reversing them changed its outputs "
        f"by {_share(found[plain])}, an RNN's by {_share(found[rnn])}. Adding PE(k) to each "
        f"word brings the order in ({_share(found[small_models.WITH_POSITIONS])})."
    )


ORDER = Step(
    slug="why-positions",
    title="Why does attention need positions at all?",
    text="A recurrent network (RNN) reads a sentence one word after another; a convolution "
    "looks at each word with a window of its neighbours; self-attention, the transformer's "
    "layer, compares every word with every other at once, and a decoder's causal mask lets "
    f"each word see only the words before it. This step: the {len(small_models.SENTENCE)} words "
    f"of “{' '.join(small_models.SENTENCE)}”, each a random vector of {small_models.WIDTH} "
    "numbers, "
    "each layer with random weights (seed 0).",
    question="Reverse the words of a sentence. Which layer gives each word exactly the same "
    "output as before?",
    options=_order_options,
    answer=_order_answer,
    explanation=_order_explanation,
    chart=_order_figure,
    # No fraction: in one, the subscripts would be drawn at half size (under 18 px when
    # projected).
    formula=r"\begin{gathered}\mathrm{Attn}(X) = \mathrm{softmax}\big(XW_Q\,(XW_K)^\top"
    r" / \sqrt{d_{\mathrm{head}}}\,\big)\, XW_V \\ \mathrm{Attn}(PX) = P\,\mathrm{Attn}(X)"
    r"\end{gathered}",
    takeaway=_order_takeaway,
    notes="Ask for a show of hands before revealing: many expect no layer to keep its outputs. "
    "The formula is the whole argument: reorder the rows of X by a permutation P and the "
    "unmasked layer's output rows are reordered the same way. The causal mask breaks that "
    "symmetry, which is why NoPE decoders work at all; do not spend long on it. About 5 "
    "minutes.",
    view=None,  # no page repeats this experiment
    config=SMALL,
)

# --- Positions inside attention, on the student's own sentence -------------------------------


def _check_sentence(text: str, config=None) -> None:
    small_models.words_of(text)


SENTENCE = params.Text(
    "lesson_text",
    f"Your sentence (words split at spaces; the first {small_models.MAX_WORDS} are used)",
    "the cat sat on the mat",
    max_chars=120,
    rule=_check_sentence,
    help="Type a word twice to see what the head makes of its two copies. A new sentence asks "
    "for a new prediction.",
)
#: The head's encoding: its width, at the paper's base.
HEAD = Config(small_models.MAX_WORDS, small_models.HEAD_WIDTH, 10_000.0, "vaswani")


def _with_a_repeat(words: tuple[str, ...]) -> tuple[str, ...]:
    """The sentence, with its first word again at the end if no word occurs twice."""
    found = small_models.sentence_scores(words)
    return words if found.repeated else (*words, words[0])


def _sentence_answer(config: Config, text: str) -> int:
    found = small_models.sentence_scores(_with_a_repeat(small_models.words_of(text)))
    positions = next(iter(found.repeated.values()))
    return 0 if found.gap(found.without, positions) < 1e-9 else 1


def _sentence_explanation(config: Config, text: str) -> str:
    words = small_models.words_of(text)
    found = small_models.sentence_scores(words)
    term = small_models.position_term(config.n_positions, 1, config.d_model)
    head = (
        f"One attention head (d_head {config.d_model}, random query and key projections, "
        "seed 0) scores each word, on a row as the query, against each word, on a column as "
        f"the key. The word vectors are random too (standard deviation {small_models.WORD_STD:g}, "
        "seed 0, as on the Embeddings page): a trained head's scores mean something, these "
        "show only where the position enters. "
    )
    mixed = (
        "\n\nThe formula shows how: the added PE(k) enters the score in three of four terms, "
        "two of them mixed with the words by W_Q and W_K. Even the term of positions alone, "
        "PE(k + δ) W_Q W_Kᵀ PE(k)ᵀ, is not a function of the offset: with this head, for "
        f"δ = 1 it ranges from {term.min():.2f} to {term.max():.2f} over k = 0 … "
        f"{term.size - 1}. Step {step_number('rope')} puts the positions into the score "
        "another way."
    )
    if not found.repeated:
        return (
            head + "Your sentence repeats no word, so the chart cannot show two copies: type one "
            "word twice (as in “the cat sat on the mat”)." + mixed
        )
    word, positions = next(iter(found.repeated.items()))
    at = ", ".join(str(k) for k in positions[:-1]) + f" and {positions[-1]}"
    return (
        head + f"Without position codes, “{word}” at positions {at} gets the same row and the same "
        f"column of scores (they differ by {found.gap(found.without, positions):.1g}): the head "
        "cannot tell the copies apart, nor say which word came first. With PE(k) added to the "
        f"word at position k, their scores differ by up to "
        f"{found.gap(found.with_positions, positions):.2f}: the same word at another place is "
        "a different query and a different key." + mixed
    )


#: The most words written under the columns of the chart (more: their positions).
WORDS_UNDER = 8


def _sentence_figures(config: Config, text: str):
    found = small_models.sentence_scores(small_models.words_of(text))
    labels = [f"{k} {word}" for k, word in enumerate(found.words)]
    limit = float(max(np.abs(found.without).max(), np.abs(found.with_positions).max()))
    # Two charts, not two panels of one: side by side on a wide screen, one under the other on
    # a phone (two panels of one chart were 90 px wide there).
    return tuple(
        matrices.matrix_panels(
            {name: scores},
            title=f"{name[0].upper()}{name[1:]}<br><sup>one head's scores q·κ/√d_head</sup>",
            symmetric_range=limit,
            row_title="query word",
            # A long sentence's words would overlap under a narrow panel: positions there, the
            # rows name their words.
            column_title="key word" if len(labels) <= WORDS_UNDER else "key word (its position)",
            row_labels=labels,
            column_labels=labels if len(labels) <= WORDS_UNDER else None,
            height=max(380, 200 + 28 * len(labels)),
        )
        for name, scores in (
            ("without position codes", found.without),
            ("with PE(k) added", found.with_positions),
        )
    )


def _sentence_link(text: str) -> dict[str, object]:
    return {"emb_text": text, "emb_std": small_models.WORD_STD, "emb_scale": False}


def _sentence_takeaway(config: Config, text: str) -> str:
    return (
        "Without positions, two copies of a word get the same scores; an added PE(k) enters "
        "the score mixed with the words by W_Q and W_K, and not as a function of the offset "
        "alone."
    )


SENTENCE_STEP = Step(
    slug="inside-attention",
    title="Where an added encoding enters attention",
    text="Attention scores each pair of words: the query q = x W_Q of one word against the key "
    "κ = y W_K of another, q·κ/√d_head. With an added encoding, the words' vectors x and y "
    "are their embeddings plus PE at their positions. This step: one head, d_head "
    f"{HEAD.d_model}, random word vectors and projections (seed 0), on your sentence.",
    question="Without position codes, do two copies of the same word get the same scores?",
    options=(
        "Yes: the same row and column of scores, wherever each copy stands",
        "No: each copy gets scores of its own",
    ),
    answer=_sentence_answer,
    explanation=_sentence_explanation,
    chart=_sentence_figures,
    formula=r"\begin{aligned}q\cdot\kappa &= \big(x + \mathit{PE}(k{+}\delta)\big)\,W\,"
    r"\big(y + \mathit{PE}(k)\big)^\top, \quad W = W_Q W_K^\top \\ &= x W y^\top + "
    r"x W \mathit{PE}(k)^\top \\ &\quad + \mathit{PE}(k{+}\delta) W y^\top + "
    r"\mathit{PE}(k{+}\delta) W \mathit{PE}(k)^\top\end{aligned}",
    takeaway=_sentence_takeaway,
    notes="Let a student type a sentence with a repeated word. The formula (W = W_Q W_Kᵀ) is the "
    "motivation for RoPE: an added code reaches the score only mixed with the words, and even "
    "its positions-only term depends on k, not on δ alone. About 7 minutes.",
    view="embeddings",
    config=HEAD,
    link=_sentence_link,
    inputs=(SENTENCE,),
)

# --- Upper layers ----------------------------------------------------------------------------


#: The answers of the step on upper layers, in order.
LAYERS_OPTIONS = (
    "No: after a few layers the copies are the same vector in any transformer",
    "Yes, because each layer adds its output to its input (the residual connection)",
    "Yes, in any stack of layers, whatever their connections",
)


def _stack(config: Config) -> small_models.Stack:
    return small_models.residual_stack(config.d_model, copies=config.n_positions, base=config.base)


def _layers_answer(config: Config) -> int:
    found = _stack(config)
    kept = found.with_residual[-1] > 1e-3, found.without_residual[-1] > 1e-3
    return {(True, False): 1, (True, True): 2}.get(kept, 0)


def _layers_explanation(config: Config) -> str:
    found = _stack(config)
    top = found.layers[-1]
    collapsed = int(np.argmax(found.without_residual < 1e-12))
    return (
        f"One word vector at positions 0 to {found.copies - 1}, plus PE(k): the copies differ "
        f"by their positions alone, by {found.with_residual[0]:.0%} of their length at the "
        f"input. Through {top} layers with random weights (seed 0; d_model {found.width}; "
        "attention then an MLP, each after a layer norm), each layer adding its output to its "
        f"input, x + f(x): after layer {top} they still differ by "
        f"{found.with_residual[-1]:.0%}. The residual connection carries x, and with it "
        "PE(k), from layer to layer; what the layers add grows the vectors, so the share "
        "shrinks. The same layers replacing their input, f(x): "
        + (
            f"after layer {collapsed} the copies are one vector (to rounding), as attention "
            "averages the words (Dong, Cordonnier and Loukas 2021: pure attention loses rank "
            "with depth). "
            if found.without_residual[-1] < 1e-12
            else f"after layer {top} they differ by {found.without_residual[-1]:.1%}. "
        )
        + "This is an illustration with random weights: a trained model writes into the "
        "stream what it learned, but in every transformer the residual stream carries PE(k) "
        f"up. RoPE (step {step_number('rope')}) needs no carrying: it rotates q and κ inside "
        "every layer."
    )


def _layers_figure(config: Config):
    found = _stack(config)
    return charts.curves(
        found.layers,
        {
            "with residual connections, x + f(x)": 100 * found.with_residual,
            "without, f(x)": 100 * found.without_residual,
        },
        title="How far apart the copies of one word at different positions stay",
        subtitle=f"{found.copies} copies, {found.layers[-1]} random layers; 0: they are one vector",
        x_title="layer ℓ (0: the input, word + PE(k))",
        y_title="spread (% of length)",
    )


def _layers_takeaway(config: Config) -> str:
    found = _stack(config)
    return (
        f"The residual connection x + f(x) carries PE(k) up: after {found.layers[-1]} random "
        f"layers the copies of a word still differed by {found.with_residual[-1]:.0%}, and "
        + (
            "without it they became one vector."
            if found.without_residual[-1] < 1e-12
            else f"without it by {found.without_residual[-1]:.1%}."
        )
    )


LAYERS = Step(
    slug="upper-layers",
    title="Does position information survive to upper layers?",
    text="The encoding is added once, below the first layer. Feed a stack of layers one word "
    f"repeated {small_models.STACK_COPIES} times: the copies differ only by their PE(k). This "
    f"step: d_model {small_models.STACK_WIDTH}, {small_models.STACK_LAYERS} layers with random "
    "weights (seed 0).",
    question=f"{small_models.STACK_LAYERS} layers up, do the copies still differ: is the position "
    "still there?",
    options=LAYERS_OPTIONS,
    answer=_layers_answer,
    explanation=_layers_explanation,
    chart=_layers_figure,
    formula=r"x^{(\ell+1)} = x^{(\ell)} + f_\ell\big(x^{(\ell)}\big), \qquad "
    r"x^{(0)} = \mathrm{word} + \mathit{PE}(k)",
    takeaway=_layers_takeaway,
    notes="A question students ask after the first steps: the code is added once, so why is "
    "it not washed out? The residual stream is the answer; the collapse without it is the "
    "rank collapse of pure small_models. Random weights: say so. About 4 minutes.",
    view="embeddings",
    config=Config(small_models.STACK_COPIES, small_models.STACK_WIDTH, 10_000.0, "vaswani"),
    link={
        "emb_text": " ".join(["the"] * small_models.STACK_COPIES),
        "emb_std": 1.0,
        "emb_scale": False,
    },
)

# --- RoPE ------------------------------------------------------------------------------------


def _rope_answer(config: Config) -> int:
    found = small_models.rotated_scores(config.d_model, config.base)
    size = max(float(np.abs(curve).max()) for curve in found.scores.values())
    return 1 if found.spread <= 1e-9 * size else 2


def _rope_explanation(config: Config) -> str:
    found = small_models.rotated_scores(config.d_model, config.base)
    starts = ", ".join(f"{n:,}" for n in small_models.ROPE_STARTS)
    return (
        f"No: the three curves of q·κ, for the key at positions {starts}, are one (they "
        f"differ by {found.spread:.1e}, rounding), drawn on top of each other. A rotation by "
        "the query's angle and one by the key's leave only their difference: "
        "⟨R(k + δ) q, R(k) κ⟩ = ⟨q, R(−δ) κ⟩. The score depends on the offset δ alone, "
        "in every layer, with nothing added to the word vector, and the words' own q and κ "
        "still decide how large it is.\n\n"
        "R(k) turns each pair (q_2i, q_2i+1) anticlockwise. The relative-position step's "
        "M(δ) turned the (sin, cos) points clockwise only because the sinusoid writes sin "
        "before cos: with the two coordinates swapped, M(δ) is R(δ), the same rotation."
    )


def _rope_figure(config: Config):
    found = small_models.rotated_scores(config.d_model, config.base)
    return charts.curves(
        found.offsets,
        found.scores,
        title="q·κ after RoPE, the key at three positions",
        subtitle="one random query and key; the query δ positions after the key; the three "
        "lines lie on top of one another",
        x_title="offset δ (positions)",
        y_title="score q·κ",
        overlapping=True,
    )


def _rope_takeaway(config: Config) -> str:
    return (
        "RoPE rotates each pair of q and κ by k·ω_i at their position k: the score "
        "⟨R(k + δ) q, R(k) κ⟩ = ⟨q, R(−δ) κ⟩ depends on the offset δ only, in every layer."
    )


ROPE = Step(
    slug="rope",
    title="Then RoPE: rotate the query and the key",
    text=lambda config: (
        "Most language models today add no vector to the word. Rotary "
        "position embeddings (RoPE, Su et al. 2021) rotate each pair (2i, 2i+1) of the query q and "
        "of the key κ, inside every attention head, by the angle k·ω_i of their own position k, "
        f"with the sinusoid's frequencies. This step: one random query and key, d_head "
        f"{config.d_model}, base {config.base_text}; the key at position "
        + ", ".join(f"{n:,}" for n in small_models.ROPE_STARTS[:-1])
        + f" or {small_models.ROPE_STARTS[-1]:,}, the query δ positions after it."
    ),
    question="Move the key (and with it the query) from position 0 to 1,000 or 10,000. Does "
    "the score q·κ change?",
    options=(
        "Yes: far along the sequence the score is weaker",
        "No: it depends on the offset δ only",
        "Yes: it depends on both positions, not on δ alone",
    ),
    answer=_rope_answer,
    explanation=_rope_explanation,
    chart=_rope_figure,
    formula=r"\begin{gathered}R(k) = \mathrm{diag}_i\begin{pmatrix}\cos k\omega_i & "
    r"-\sin k\omega_i\\ \sin k\omega_i & \cos k\omega_i\end{pmatrix} \\ "
    r"\big\langle R(k{+}\delta)\,q,\; R(k)\,\kappa\big\rangle = "
    r"\big\langle q,\; R(-\delta)\,\kappa\big\rangle\end{gathered}",
    takeaway=_rope_takeaway,
    notes="Connect back: the added encoding mixed with the words and had to be carried up; "
    "RoPE is applied in every layer and leaves only δ. The rotation-direction remark answers "
    "the sharp student who compares M(δ) with R. The lab: the RoPE lab's presets show real "
    "models' bases and scaling. About 7 minutes.",
    view="rope",
    config=Config(2048, 128, 10_000.0, "vaswani"),
)
