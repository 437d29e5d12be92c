"""torch's float32 ``pow`` on an x86 CPU, emulated in NumPy (pe_core.rotary.float32).

Reference values: tests/data/torch_pow_2_13.json, computed once with torch 2.13.0+cpu on an AVX2
machine by benchmarks/torch_pow.py (SLEEF's Sleef_powf8_u10 on float32 tensors, and
transformers 5.24's dynamic NTK ``inv_freq`` after a forward pass). Where torch is installed
(CI on Python 3.11) and its CPU kernel is the AVX2 one, the live tests ask torch itself.
Where a length is not a multiple of 16 the last elements are the C library's ``powf`` (glibc's
in these values), which the emulation calls itself.
"""

from __future__ import annotations

import json
import platform
from fractions import Fraction

import numpy as np
import pytest

import pe_core
from pe_core.rotary import float32 as f32
from tests import DATA

F32 = np.float32
REFERENCE = json.loads((DATA / "torch_pow_2_13.json").read_text())


def _bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int32).view(F32)


def _same(a, b) -> np.ndarray:
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return (a.view(np.int32) == b.view(np.int32)) | (np.isnan(a) & np.isnan(b))


def _exact_fma(a, b, c) -> np.float32:
    """a*b + c rounded once to float32 (ties to even), in rational arithmetic."""
    value = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    guess = F32(float(value))
    candidates = [np.nextafter(guess, F32(-np.inf)), guess, np.nextafter(guess, F32(np.inf))]
    return min(
        candidates,
        key=lambda x: (abs(Fraction(float(x)) - value), int(np.asarray(x).view(np.int32)) & 1),
    )


class TestFma:
    # a*b + c lands (in float64) exactly halfway between two float32 values although the
    # exact sum does not: rounding through float64 would round the wrong way.
    HARD = (
        # 2**-24 (1 + 2**-15) (1 - 2**-15) + (1 + 2**-23) = 1 + 2**-23 + 2**-24 - 2**-54
        (2.0**-24 * (1 + 2.0**-15), 1 - 2.0**-15, 1 + 2.0**-23),
        # 1025 * 1047553 = 2**30 + 1: 1 + 2**-24 + 2**-54
        (1025 * 2.0**-34, 1047553 * 2.0**-20, 1.0),
    )

    @pytest.mark.parametrize("a, b, c", HARD)
    @pytest.mark.parametrize("sign", [1.0, -1.0])
    def test_a_sum_that_float64_rounds_to_a_float32_midpoint(self, a, b, c, sign):
        a, b, c = F32(sign * a), F32(b), F32(sign * c)
        through_float64 = F32(np.float64(a) * np.float64(b) + np.float64(c))
        assert through_float64 != _exact_fma(a, b, c)  # the case is a hard one
        assert f32.fma(np.array([a]), np.array([b]), np.array([c]))[0] == _exact_fma(a, b, c)

    def test_random_operands_against_rational_arithmetic(self):
        rng = np.random.default_rng(5)
        a = rng.standard_normal(400).astype(F32)
        b = rng.standard_normal(400).astype(F32)
        # c near -a*b: the cancellations SLEEF's error terms are made of
        c = (-(a.astype(np.float64) * b) * (1 + rng.standard_normal(400) * 1e-6)).astype(F32)
        ours = f32.fma(a, b, c)
        assert all(ours[i] == _exact_fma(a[i], b[i], c[i]) for i in range(400))


class TestSleefPowf:
    def test_literal_values_from_torch(self):
        """140 RoPE-range pairs (half of them where SLEEF is not correctly rounded) and a
        grid of 368 special values (0, -0, 1, inf, NaN, subnormals, odd and huge integer
        exponents...), bit for bit."""
        for part in ("random", "special"):
            data = REFERENCE[part]
            ours = f32.sleef_powf(_bits(data["base"]), _bits(data["exponent"]))
            assert np.all(_same(ours, _bits(data["pow"]))), part

    def test_it_is_not_the_correctly_rounded_power(self):
        data = REFERENCE["random"]
        base, exponent = _bits(data["base"]), _bits(data["exponent"])
        rounded = (base.astype(np.float64) ** exponent.astype(np.float64)).astype(F32)
        assert np.mean(rounded != _bits(data["pow"])) >= 0.4

    def test_broadcasts_and_keeps_shape(self):
        out = f32.sleef_powf(F32(10_000.0), np.zeros((2, 3), F32))
        assert out.shape == (2, 3) and out.dtype == F32 and np.all(out == 1)


class TestTorchPower:
    def test_the_vectorized_head_is_sleef_and_the_tail_the_c_library(self):
        exponent = f32.exponents(40, 40)  # 20 elements: 16 through SLEEF, 4 in the tail
        ours = f32.power(10_000.0, exponent)
        np.testing.assert_array_equal(ours[:16], f32.sleef_powf(F32(10_000.0), exponent[:16]))
        np.testing.assert_array_equal(ours[16:], f32.c_powf(F32(10_000.0), exponent[16:]))

    def test_literal_tail_where_the_c_library_is_not_correctly_rounded(self):
        """``1e6 ** (torch.arange(0, 14, 2).float() / 14)`` with torch 2.13.0+cpu (AVX2, glibc
        2.36): 7 elements, all in the scalar tail; the third, 1e6 ** 0.2857143, is 51.794758
        where the correctly rounded power is 51.794754."""
        if platform.libc_ver()[0] != "glibc":
            pytest.skip("the tail is the C library's powf: these values are glibc's")
        torch_bits = [1065353216, 1088834728, 1112485333, 1136288052, 1160227622]
        torch_bits += [1184290295, 1208463716]
        ours = f32.power(1_000_000.0, f32.exponents(14, 14))
        np.testing.assert_array_equal(ours, _bits(torch_bits))
        exponent = np.float64(f32.exponents(14, 14)[2])
        assert F32(np.float64(F32(1e6)) ** exponent).view(np.int32) == torch_bits[2] - 1

    @pytest.mark.parametrize("exponent", [0.0, 1.0, -1.0, 2.0, 3.0, -2.0])
    def test_the_exponents_torch_takes_apart(self, exponent):
        values = np.array([1.5, 3.0, 1e9], F32)
        with np.errstate(over="ignore"):
            expected = {
                0.0: np.ones(3, F32),
                1.0: values,
                -1.0: F32(1) / values,
                2.0: values * values,
                3.0: values * values * values,
                -2.0: F32(1) / (values * values),
            }[exponent]
        np.testing.assert_array_equal(f32.power_of(values, exponent), expected)

    def test_a_square_root_exponent_is_refused(self):
        with pytest.raises(ValueError, match="square-root"):
            f32.power_of(np.ones(2, F32), 0.5)


class TestDynamicNtkForward:
    @pytest.mark.parametrize("case", REFERENCE["dynamic"]["cases"], ids=lambda c: str(c["seq_len"]))
    def test_literal_inv_freq_after_a_forward_pass(self, case):
        rope = pe_core.rope_frequencies(
            case["head_dim"],
            base=case["rope_theta"],
            scaling={"rope_type": "dynamic", "factor": case["factor"]},
            max_position_embeddings=case["max_position_embeddings"],
            seq_len=case["seq_len"],
        )
        np.testing.assert_array_equal(rope.inv_freq_float32, _bits(case["inv_freq"]))

    def test_the_float32_base_is_not_the_rounded_float64_one(self):
        """At seq_len 100,003 (factor 4, base 500,000, L 4,096) the base transformers computes
        in float32 differs from the float64 base rounded to float32."""
        case = next(c for c in REFERENCE["dynamic"]["cases"] if c["seq_len"] == 100_003)
        rope = pe_core.rope_frequencies(
            case["head_dim"],
            base=case["rope_theta"],
            scaling={"rope_type": "dynamic", "factor": case["factor"]},
            max_position_embeddings=case["max_position_embeddings"],
            seq_len=case["seq_len"],
        )
        from_float64 = f32.inverse_powers(rope.effective_base, case["head_dim"], case["head_dim"])
        assert not np.array_equal(from_float64, _bits(case["inv_freq"]))


@pytest.mark.parametrize("factor, seq_len, base", [(3e38, 4096, "inf"), (1e40, 1_000_000, "nan")])
def test_a_dynamic_base_beyond_float32_is_refused(factor, seq_len, base):
    """transformers' forward pass gives inv_freq [1, 0, 0, ...] (base inf) and [1, nan, ...]
    (inf - inf) there (torch 2.13, transformers 5.24): refused, where the float64 base
    (1.2e43, 2.3e47) is finite."""
    with pytest.raises(pe_core.InputError, match=rf"float32 dynamic NTK base {base} .*3\.403e\+38"):
        pe_core.rope_frequencies(
            128,
            base=10_000.0,
            scaling={"rope_type": "dynamic", "factor": factor},
            max_position_embeddings=2048,
            seq_len=seq_len,
        )
    rope = pe_core.rope_frequencies(
        128,
        base=10_000.0,
        scaling={"rope_type": "dynamic", "factor": 1e30},
        max_position_embeddings=2048,
        seq_len=4096,
    )
    assert np.all(np.isfinite(rope.inv_freq_float32)) and rope.inv_freq_float32[-1] > 0


def _torch_avx2():
    torch = pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
    capability = torch.backends.cpu.get_cpu_capability()
    if capability != "AVX2":
        pytest.skip(f"the emulated kernel is torch's AVX2 one; this CPU runs {capability}")
    return torch


@pytest.mark.library
def test_live_sleef_powf_on_random_rope_range_pairs():
    torch = _torch_avx2()
    rng = np.random.default_rng(11)
    n = 200_000
    base = np.exp(rng.uniform(np.log(1.0001), np.log(1e9), n)).astype(F32)
    exponent = rng.uniform(-1, 1, n).astype(F32)
    theirs = torch.pow(torch.from_numpy(base), torch.from_numpy(exponent)).numpy()
    assert np.all(_same(f32.sleef_powf(base, exponent), theirs))


@pytest.mark.library
def test_live_rope_powers_of_every_length():
    """``base ** (arange(0, 2n, 2) / 2n)`` for n = 1..200: the SLEEF head and the C library's
    tail, bit for bit."""
    torch = _torch_avx2()
    for base in (10_000.0, 500_000.0, 1_000_000.0):
        for count in range(1, 201):
            exponent = f32.exponents(2 * count, 2 * count)
            theirs = (base ** torch.from_numpy(exponent)).numpy()
            np.testing.assert_array_equal(f32.power(base, exponent), theirs)


@pytest.mark.library
def test_live_tensor_to_a_python_power():
    torch = _torch_avx2()
    rng = np.random.default_rng(12)
    for count in range(1, 41):
        values = np.exp(rng.uniform(np.log(1.0001), np.log(1e9), count)).astype(F32)
        exponent = float(rng.uniform(-1, 2))
        theirs = (torch.from_numpy(values) ** exponent).numpy()
        np.testing.assert_array_equal(f32.power_of(values, exponent), theirs)


@pytest.mark.library
@pytest.mark.parametrize("head_dim", [4, 12, 80, 128])
@pytest.mark.parametrize("seq_len", [2049, 7_777, 1_000_001])
def test_live_dynamic_ntk_forward_against_transformers(head_dim, seq_len):
    torch = _torch_avx2()
    transformers = pytest.importorskip("transformers", minversion="5", reason="transformers 5")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = transformers.LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=2048,
        rope_parameters={"rope_type": "dynamic", "rope_theta": 500_000.0, "factor": 3.0},
    )
    module = LlamaRotaryEmbedding(config)
    with torch.no_grad():
        module(torch.zeros(1), torch.tensor([[seq_len - 1]]))
    rope = pe_core.rope_frequencies(
        head_dim,
        base=500_000.0,
        scaling={"rope_type": "dynamic", "factor": 3.0},
        max_position_embeddings=2048,
        seq_len=seq_len,
    )
    np.testing.assert_array_equal(rope.inv_freq_float32, module.inv_freq.numpy())
