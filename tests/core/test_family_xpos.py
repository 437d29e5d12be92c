"""xPos: its score against distance equals torchscale's XPOS, transcribed in NumPy."""

import numpy as np
import pytest

import pe_core
from pe_core.families.rotary import query_and_key
from pe_core.families.xpos import decay_rates

XPOS = pe_core.FAMILIES["xpos"]


def torchscale_xpos(x: np.ndarray, *, scale_base: float = 512, downscale: bool = False):
    """``XPOS.forward(x, offset=0, downscale)`` of microsoft/torchscale
    (torchscale/component/xpos_relative_position.py), line by line, in float64, for one
    sequence ``x`` of shape (length, head_dim), pairs interleaved (``rotate_every_two``)."""
    length, head_dim = x.shape
    scale = (np.arange(0, head_dim, 2) + 0.4 * head_dim) / (1.4 * head_dim)
    min_pos = -(length + 0) // 2
    max_pos = length + 0 + min_pos
    scale = scale ** (np.arange(min_pos, max_pos)[:, None] / scale_base)
    seq_len, dim = scale.shape  # fixed_pos_embedding(scale)
    inv_freq = 1.0 / (10000 ** (np.arange(0, dim) / dim))
    sinusoid_inp = np.arange(0, seq_len)[:, None] * inv_freq[None, :]
    sin, cos = np.sin(sinusoid_inp), np.cos(sinusoid_inp)
    if downscale:
        scale = 1 / scale
    sin, cos = (np.repeat(t * scale, 2, axis=1) for t in (sin, cos))  # duplicate_interleave
    rotated = np.stack((-x[:, 1::2], x[:, ::2]), axis=-1).reshape(length, head_dim)
    return x * cos + rotated * sin


@pytest.mark.parametrize("vectors", ["ones", "random", "one pair"])
@pytest.mark.parametrize(("length", "head_dim"), [(1, 2), (40, 8), (700, 64)])
def test_equals_torchscale(vectors, length, head_dim):
    rope = pe_core.rope_frequencies(head_dim)
    q, k = query_and_key(rope, vectors)
    interleaved = np.argsort(pe_core.rope_permutation(head_dim))  # halves -> torchscale's order
    queries = torchscale_xpos(np.tile(q[interleaved], (length, 1)))
    keys = torchscale_xpos(np.tile(k[interleaved], (length, 1)), downscale=True)
    expected = keys[length - 1 - np.arange(length)] @ queries[length - 1]
    got = XPOS.score(length, head_dim, vectors=vectors)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize(("gamma", "scale_base", "base"), [(0.4, 512.0, 1e4), (2.0, 64.0, 500.0)])
def test_closed_form_with_ones(gamma, scale_base, base):
    # The paper's eq. 8 with q = k = ones: 2 * sum_i zeta_i**(d/scale_base) * cos(d * theta_i).
    d = np.arange(300)
    theta = base ** (-np.arange(0, 32, 2) / 32)
    zeta = (np.arange(0, 32, 2) / 32 + gamma) / (1 + gamma)
    expected = 2 * (zeta ** (d[:, None] / scale_base) * np.cos(d[:, None] * theta)).sum(axis=1)
    got = XPOS.score(300, 32, base=base, gamma=gamma, scale_base=scale_base)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_decay_rates_are_torchscales():
    np.testing.assert_array_equal(decay_rates(8, 0.4), (np.arange(0, 8, 2) + 3.2) / 11.2)


def test_no_decay_limit_is_rope():
    # scale_base -> infinity: every zeta**(d / scale_base) -> 1, RoPE's score.
    rope = XPOS.score(200, 16, scale_base=1e300)
    np.testing.assert_allclose(rope, pe_core.FAMILIES["rope"].score(200, 16), atol=1e-12)


def test_decays_where_rope_does_not():
    far = XPOS.score(4096, 128)
    assert abs(far[-1]) < abs(pe_core.FAMILIES["rope"].score(4096, 128)[-1])


@pytest.mark.parametrize(
    ("parameters", "match"),
    [
        ({"gamma": 0.0}, "gamma must be > 0 and at most 1e6, got 0.0"),
        ({"scale_base": -1.0}, "scale_base must be > 0 and at most 1e300, got -1.0"),
        ({"vectors": "twos"}, "vectors must be one of"),
        ({"slope": 1.0}, r"xpos has no parameter slope"),
    ],
)
def test_bad_parameters(parameters, match):
    with pytest.raises(ValueError, match=match):
        XPOS.score(4, 8, **parameters)
