"""The Lesson's steps inside attention: why attention needs positions (against an RNN and a
convolution), RoPE's rotated query and key, positions in one head's scores on the student's
own sentence, and whether the position survives to upper layers. The numbers come from the
small random layers of :mod:`dashboard.view_parts.attention`."""

from __future__ import annotations

import numpy as np

from dashboard import params
from dashboard.config import Config
from dashboard.figures import charts, matrices
from dashboard.view_parts import attention
from dashboard.view_parts.lesson_step import SMALL, Step

# --- Why attention needs positions -----------------------------------------------------------


def _order_options(config: Config) -> tuple[str, ...]:
    return (*(name[0].upper() + name[1:] for name in attention.LAYERS), "None of them")


def _order_answer(config: Config) -> int:
    unchanged = attention.reversal_changes().unchanged
    if len(unchanged) != 1:
        return len(attention.LAYERS)  # "None of them" (or, were it two, no single answer)
    return attention.LAYERS.index(unchanged[0])


def _order_explanation(config: Config) -> str:
    found = attention.reversal_changes().changes
    rnn, convolution, plain = attention.LAYERS
    sentence = " ".join(attention.SENTENCE)
    reversed_ = " ".join(attention.SENTENCE[i] for i in attention.SHUFFLE)
    return (
        f"{_order_options(config)[_order_answer(config)]}. Each layer, with random weights "
        f"(seed 0), ran on “{sentence}” and "
        f"on “{reversed_}”; the chart shows how much a word's output changed (the largest "
        "change over the words, as a share of the output's length). The RNN reads the words "
        "one after another, so its state after a word holds what came before: "
        f"{found[rnn]:.0%}. The convolution sees each word with its neighbours, left from "
        f"right: {found[convolution]:.0%}. Self-attention compares every word with every other "
        f"and sums the results, whatever their order: {found[plain]:.0%} (they differ by "
        f"{found[plain]:.0e}, rounding). It sees a bag of words.\n\n"
        "So a transformer gives each position k a vector PE(k), of the same width as the "
        "word vectors, and adds it to the word at that position. The same attention layer "
        f"with PE(k) added: {found[attention.WITH_POSITIONS]:.0%}. The order now reaches it."
    )


def _order_figure(config: Config):
    found = attention.reversal_changes().changes
    return charts.labelled_bars(
        {name: 100 * change for name, change in found.items()},
        title="How much reversing the sentence changes a word's output",
        subtitle="the largest change over the words, in % of the output's length; random weights",
        x_title="change (%)",
        text_format="{:.0f}%",
    )


ORDER = Step(
    "Why does attention need positions at all?",
    "A recurrent network (RNN) reads a sentence one word after another; a convolution looks "
    "at each word with a window of its neighbours; self-attention, the transformer's layer, "
    "compares all the words at once.",
    "Reverse the words of a sentence. Which layer gives each word exactly the same output as "
    "before?",
    _order_options,
    _order_answer,
    _order_explanation,
    _order_figure,
    "sinusoids",
    SMALL,
    {"at": "0, 1, 10, 50"},
)

# --- RoPE ------------------------------------------------------------------------------------


def _rope_explanation(config: Config) -> str:
    found = attention.rotated_scores(config.d_model, config.base)
    starts = ", ".join(f"{n:,}" for n in attention.ROPE_STARTS)
    return (
        "Rotary encodings (RoPE) add nothing to the word vector: each attention head rotates "
        "each pair of its query and of its key by k·ω_i at position k, the sinusoid's angles. "
        f"The chart rotates one query and one key (head_dim {config.d_model}, base "
        f"{config.base_text}) with the key at positions {starts} and the query δ after it: the "
        f"three curves of q·k are one (they differ by {found.spread:.1e}, rounding), because a "
        "rotation by the query's angle and one by the key's leave only their difference. The "
        "score depends on the offset δ alone."
    )


def _rope_figure(config: Config):
    found = attention.rotated_scores(config.d_model, config.base)
    return charts.curves(
        found.offsets,
        found.scores,
        title="q·k after RoPE, the key at three positions",
        subtitle="one random query and key; the query δ positions after the key",
        x_title="offset δ (positions)",
        y_title="score q·k",
    )


ROPE = Step(
    "Then RoPE",
    "Most language models today do not add a position vector at all.",
    "In a rotary encoding (RoPE), what happens to the word vector?",
    (
        "A position vector is added to it",
        "Its queries and keys are rotated by angles k·ω_i",
        "The position is concatenated to it",
    ),
    1,
    _rope_explanation,
    _rope_figure,
    "rope",
    Config(2048, 128, 10_000.0, "vaswani"),
    {},
)

# --- Your own sentence -----------------------------------------------------------------------


def _check_sentence(text: str, config=None) -> None:
    attention.words_of(text)


SENTENCE = params.Text(
    "lesson_text",
    f"Your sentence (words split at spaces; the first {attention.MAX_WORDS} are used)",
    "the cat sat on the mat",
    max_chars=120,
    rule=_check_sentence,
    help="Type a word twice to see what the head makes of its two copies.",
)
#: The head's encoding: its width, at the paper's base.
HEAD = Config(attention.MAX_WORDS, attention.HEAD_WIDTH, 10_000.0, "vaswani")


def _with_a_repeat(words: tuple[str, ...]) -> tuple[str, ...]:
    """The sentence, with its first word again at the end if no word occurs twice."""
    found = attention.sentence_scores(words)
    return words if found.repeated else (*words, words[0])


def _sentence_answer(config: Config, text: str) -> int:
    found = attention.sentence_scores(_with_a_repeat(attention.words_of(text)))
    positions = next(iter(found.repeated.values()))
    return 0 if found.gap(found.without, positions) < 1e-9 else 1


def _sentence_explanation(config: Config, text: str) -> str:
    words = attention.words_of(text)
    found = attention.sentence_scores(words)
    head = (
        f"One attention head (width {config.d_model}, random query and key projections, "
        "seed 0) scores each word, on a row as the query, against each word, on a column as "
        f"the key. The word vectors are random too (standard deviation {attention.WORD_STD:g}, "
        "seed 0, as on the Embeddings page): a trained head's scores mean something, these "
        "show only where the position enters. "
    )
    if not found.repeated:
        return head + (
            "Your sentence repeats no word, so the chart cannot show two copies: type one "
            "word twice (as in “the cat sat on the mat”)."
        )
    word, positions = next(iter(found.repeated.items()))
    at = ", ".join(str(k) for k in positions[:-1]) + f" and {positions[-1]}"
    return head + (
        f"Without position codes, “{word}” at positions {at} gets the same row and the same "
        f"column of scores (they differ by {found.gap(found.without, positions):.1g}): the head "
        "cannot tell the copies apart, nor say which word came first. With PE(k) added to the "
        f"word at position k, their scores differ by up to "
        f"{found.gap(found.with_positions, positions):.2f}: the same word at another place is "
        "a different query and a different key."
    )


#: The most words written under the columns of the chart (more: their positions).
WORDS_UNDER = 8


def _sentence_figure(config: Config, text: str):
    found = attention.sentence_scores(attention.words_of(text))
    labels = [f"{k} {word}" for k, word in enumerate(found.words)]
    limit = float(max(np.abs(found.without).max(), np.abs(found.with_positions).max()))
    return matrices.matrix_panels(
        {"without position codes": found.without, "with PE(k) added": found.with_positions},
        title="One head's scores q·k/√d on your sentence",
        symmetric_range=limit,
        row_title="query word",
        # A long sentence's words would overlap under a narrow panel: positions there, the
        # rows name their words.
        column_title="key word" if len(labels) <= WORDS_UNDER else "key word (its position)",
        row_labels=labels,
        column_labels=labels if len(labels) <= WORDS_UNDER else None,
        height=max(380, 200 + 28 * len(labels)),
    )


def _sentence_link(text: str) -> dict[str, object]:
    return {"emb_text": text, "emb_std": attention.WORD_STD, "emb_scale": False}


SENTENCE_STEP = Step(
    "Positions inside attention, on your own sentence",
    "Attention scores each pair of words: the query q = x·W_Q of one word against the key "
    "k = x·W_K of another, q·k/√d. The position enters through x, the word's vector plus "
    "PE(k).",
    "Without position codes, do two copies of the same word get the same scores?",
    (
        "Yes: the same row and column of scores, wherever each copy stands",
        "No: each copy gets scores of its own",
    ),
    _sentence_answer,
    _sentence_explanation,
    _sentence_figure,
    "embeddings",
    HEAD,
    _sentence_link,
    inputs=(SENTENCE,),
)

# --- Upper layers ----------------------------------------------------------------------------


#: The answers of the step on upper layers, in order.
LAYERS_OPTIONS = (
    "No: after a few layers the copies are the same vector in any transformer",
    "Yes, because each layer adds its output to its input (the residual connection)",
    "Yes, in any stack of layers, whatever their connections",
)


def _stack(config: Config) -> attention.Stack:
    return attention.residual_stack(config.d_model, copies=config.n_positions, base=config.base)


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
        f"input. Through {top} layers with random weights (seed 0; width {found.width}; "
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
        "up. RoPE (step 6) needs no carrying: it rotates q and k inside every layer."
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
        x_title="layer (0: the input, word + PE(k))",
        y_title="spread (% of length)",
    )


LAYERS = Step(
    "Does position information survive to upper layers?",
    "The encoding is added once, below the first layer. Feed a stack of layers one word "
    "repeated: the copies differ only by their PE(k).",
    f"{attention.STACK_LAYERS} layers up, do the copies still differ: is the position still there?",
    LAYERS_OPTIONS,
    _layers_answer,
    _layers_explanation,
    _layers_figure,
    "embeddings",
    Config(attention.STACK_COPIES, attention.STACK_WIDTH, 10_000.0, "vaswani"),
    {"emb_text": " ".join(["the"] * attention.STACK_COPIES), "emb_std": 1.0, "emb_scale": False},
)
