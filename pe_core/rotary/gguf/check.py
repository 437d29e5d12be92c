"""Does a GGUF file rotate as the config.json it came from says? Layer by layer, llama.cpp's
rotation of the file (:mod:`pe_core.rotary.gguf.rope`, in its own float32 arithmetic) against the
config's exact rotation (:func:`pe_core.rope_layers`, transformers' semantics), each difference
named with the key or tensor that causes it, the first position where the angle is off by more
than 1e-3 rad, and the fix.

:func:`check_gguf` gives a :class:`GgufCheck`; its :meth:`~GgufCheck.summary` is the prose.
"""

from __future__ import annotations

import enum
import functools
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from pe_core._numerics.checks import describe as describe_value
from pe_core._numerics.kernels import two_product, veltkamp_split
from pe_core.errors import InputError, InputTypeError
from pe_core.rotary.config import rope_layers
from pe_core.rotary.encoding import RotaryEncoding
from pe_core.rotary.gguf.file import GgufMetadata
from pe_core.rotary.gguf.models import LLAMA_CPP_VERSION, UNREAD_KEYS
from pe_core.rotary.gguf.rope import LlamaCppLayer, LlamaCppRope, llama_cpp_angles, llama_cpp_layers
from pe_core.rotary.precision import _transformers_angle_errors, transformers_angle_errors

__all__ = ["ANGLE_TOLERANCE", "GgufCheck", "GgufFinding", "LayerCheck", "Origin", "check_gguf"]

#: The angle error (radians) that counts as a different rotation.
ANGLE_TOLERANCE = 1e-3
#: Relative difference of two float32-stored parameters that counts as different.
_RELATIVE = 1e-6
#: Positions x pairs per block of the position-by-position search: a block's float64 temporaries
#: (128 KiB each) stay in the CPU's cache. Against 2**20, a check took half the time or less,
#: both in a fresh process (benchmarks/gguf_check.py) and repeated in one; 2**16 was as slow as
#: 2**20 in a fresh process, 2**12 pays Python's overhead per block (docs/benchmarks.md).
_BLOCK = 1 << 14


class Origin(enum.Enum):
    """Where a difference comes from."""

    FILE = "file"  # a key or tensor of the file holds another value than the config implies
    LLAMA_CPP = "llama.cpp"  # llama.cpp runs a faithful file differently from transformers
    INPUT = "input"  # the input lacks what the check needs (a dump has no tensor values)


@dataclass(frozen=True)
class GgufFinding:
    """One difference between the file (as llama.cpp runs it) and the config.

    ``first_position``: the first position whose angle is off by more than 1e-3 rad in the
    layers concerned (None: not within ``searched`` positions); ``error_at_context``: the error
    at the config's last position (radians, at most pi); ``read_here``: whether this llama.cpp
    reads the key for this architecture (a wrong value in an unread key changes nothing here, but
    does in runtimes that read it).
    """

    origin: Origin
    key: str
    title: str
    file_value: str
    config_value: str
    fix: str
    layers: tuple[int, ...]
    first_position: int | None = None
    error_at_context: float | None = None
    searched: int = 0
    read_here: bool = True

    def sentence(self) -> str:
        layers = _layer_words(self.layers)
        if self.first_position is not None:
            where = (
                f"angle off by more than {ANGLE_TOLERANCE:g} rad from position "
                f"{self.first_position:,}"
            )
        elif self.error_at_context is None and self.read_here:
            where = "the angles are the config's (the difference is their magnitude)"
        else:
            where = f"angle within {ANGLE_TOLERANCE:g} rad over {self.searched:,} positions"
        error = (
            f", {self.error_at_context:.3g} rad at position {self.searched - 1:,} (the last "
            "searched)"
            if self.error_at_context is not None
            else ""
        )
        unread = (
            ""
            if self.read_here
            else f" (not read by {LLAMA_CPP_VERSION.split(' (')[0]} for this "
            f"architecture: inert here, wrong for runtimes that read it)"
        )
        return (
            f"{self.key}: {self.title}{unread}. File: {self.file_value}; config: "
            f"{self.config_value}. {layers}: {where}{error}. Fix: {self.fix}"
        )


@dataclass(frozen=True)
class LayerCheck:
    """One layer: llama.cpp's rotation against the config's.

    ``max_error``: the largest angle error over the searched positions (llama.cpp's float32
    angles against the config's exact ones); ``transformers_error``: transformers' own float32
    angle error over the same positions (the floor any implementation has).
    """

    index: int
    llama_cpp: LlamaCppLayer
    config: RotaryEncoding | None
    same_parameters: bool
    first_position: int | None
    max_error: float
    error_at_context: float
    transformers_error: float | None
    cos_sin_factor: float
    config_factor: float | None


@dataclass(frozen=True)
class GgufCheck:
    """The answer for one file (and config)."""

    architecture: str
    rope: LlamaCppRope
    layers: tuple[LayerCheck, ...]
    findings: tuple[GgufFinding, ...]
    missing: tuple[str, ...]
    context_length: int
    has_config: bool
    description: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    version: str = LLAMA_CPP_VERSION

    @property
    def file_findings(self) -> tuple[GgufFinding, ...]:
        return tuple(f for f in self.findings if f.origin is Origin.FILE)

    @property
    def llama_cpp_findings(self) -> tuple[GgufFinding, ...]:
        return tuple(f for f in self.findings if f.origin is Origin.LLAMA_CPP)

    @property
    def matches(self) -> bool:
        """No mistake in the file (llama.cpp's own differences are said, not counted)."""
        return self.has_config and not self.file_findings

    def headline(self) -> str:
        """The verdict in one sentence (the summary's first line)."""
        lines: list[str] = []
        if not self.has_config:
            return f"{self.architecture}: what {self.version} does with this file:"
        partial = any(f.origin is Origin.INPUT for f in self.findings)
        if self.matches and partial:
            lines.append(
                f"{self.architecture}: rotates as the config says as far as the input shows "
                f"(what is not checked is below), as {self.version} runs it with -c "
                f"{self.rope.n_ctx:,}."
            )
        elif self.matches and not any(
            f.first_position is not None for f in self.llama_cpp_findings
        ):
            lines.append(
                f"{self.architecture}: rotates as the config says in every layer "
                f"({_group_words(self)}), as {self.version} runs it with -c "
                f"{self.rope.n_ctx:,}."
            )
        elif self.matches:
            lines.append(
                f"{self.architecture}: the file holds the config's RoPE (no mistake in the "
                f"file), but {self.version} itself rotates differently from transformers "
                f"(below), run with -c {self.rope.n_ctx:,}."
            )
        else:
            lines.append(
                f"{self.architecture}: does NOT rotate as the config says: "
                f"{len(self.file_findings)} mistake(s) in the file, as {self.version} runs it "
                f"with -c {self.rope.n_ctx:,}."
            )
        return lines[0]

    def summary(self) -> str:
        lines = []
        if self.has_config:
            lines.append(self.headline())
            for finding in self.file_findings:
                lines.append("- " + finding.sentence())
            unchecked = [f for f in self.findings if f.origin is Origin.INPUT]
            if unchecked:
                lines.append("Not checked (the input does not hold it):")
                lines.extend(f"- {f.key}: {f.title}" for f in unchecked)
            if self.llama_cpp_findings:
                lines.append("llama.cpp itself (not the file) differs from transformers:")
                for finding in self.llama_cpp_findings:
                    lines.append("- " + finding.sentence())
        else:
            lines.append(self.headline())
            lines.extend("- " + d for d in self.description)
        lines.extend(self.notes)
        if self.missing:
            lines.append("Missing from the input: " + "; ".join(self.missing) + ".")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "matches": self.matches,
            "has_config": self.has_config,
            "architecture": self.architecture,
            "llama_cpp": self.version,
            "n_ctx": self.rope.n_ctx,
            "context_length": self.context_length,
            "summary": self.summary(),
            "findings": [
                {
                    "origin": f.origin.value,
                    "key": f.key,
                    "title": f.title,
                    "file_value": f.file_value,
                    "config_value": f.config_value,
                    "fix": f.fix,
                    "layers": list(f.layers),
                    "first_position": f.first_position,
                    "error_at_context": f.error_at_context,
                    "read_here": f.read_here,
                }
                for f in self.findings
            ],
            "layers": [
                {
                    "index": c.index,
                    "rotates": c.llama_cpp.rotates,
                    "sliding_window": c.llama_cpp.is_swa,
                    "freq_base": c.llama_cpp.freq_base,
                    "n_dims": c.llama_cpp.n_dims,
                    "freq_scale": c.llama_cpp.freq_scale,
                    "ext_factor": c.llama_cpp.ext_factor,
                    "cos_sin_factor": c.cos_sin_factor,
                    "factors_tensor": c.llama_cpp.factors_tensor,
                    "config_rotates": None if not self.has_config else c.config is not None,
                    "same_parameters": c.same_parameters,
                    "first_position": c.first_position,
                    "max_error": c.max_error,
                    "error_at_context": c.error_at_context,
                    "transformers_error": c.transformers_error,
                }
                for c in self.layers
            ],
            "missing": list(self.missing),
            "description": list(self.description),
        }


def _layer_words(layers) -> str:
    """'layer 5' or 'layers 0, 1, 2'."""
    if len(layers) == 1:
        return f"layer {layers[0]}"
    return "layers " + ", ".join(str(i) for i in layers)


def _group_words(check: GgufCheck) -> str:
    rotating = [c for c in check.layers if c.llama_cpp.rotates and c.same_parameters]
    nope = len(check.layers) - len(rotating)
    words = f"{len(rotating)} with RoPE"
    if nope:
        words += f", {nope} without"
    worst = max((c.max_error for c in rotating), default=0.0)
    tf = max((c.transformers_error or 0.0 for c in rotating), default=0.0)
    return (
        f"{words}; llama.cpp's float32 angles within {worst:.2g} rad of the exact ones over "
        f"{check.context_length:,} positions, transformers' within {tf:.2g}"
    )


# --- the angle comparison --------------------------------------------------------------------


def _column_pairs(n_pairs: int, head_dim: int) -> np.ndarray:
    """For each column of a head in Hugging Face's halves layout, its pair (-1: not rotated)."""
    columns = np.arange(head_dim)
    return np.where(columns < 2 * n_pairs, columns % max(n_pairs, 1), -1)


def _errors(layer: LlamaCppLayer, config: RotaryEncoding | None, positions: np.ndarray):
    """Per position, the largest angle error over columns of llama.cpp against the config."""
    p = positions.astype(np.float64)
    if layer.rotates:
        ours = llama_cpp_angles(positions, layer).astype(np.float64)
    else:
        ours = np.zeros((positions.size, 0))
    if config is not None:
        hi, lo = two_product(p[:, None], config.inv_freq[None, :])
        n_config = config.inv_freq.size
    else:
        hi = lo = np.zeros((positions.size, 0))
        n_config = 0
    n_ours = ours.shape[1]
    if n_ours == n_config:
        diff = (ours - hi) - lo
    else:
        head = max(layer.head_dim, 2 * n_config, 2 * n_ours)
        a, b = _column_pairs(n_ours, head), _column_pairs(n_config, head)
        left = np.where(a[None, :] >= 0, ours[:, np.maximum(a, 0)] if n_ours else 0.0, 0.0)
        right_hi = np.where(b[None, :] >= 0, hi[:, np.maximum(b, 0)] if n_config else 0.0, 0.0)
        right_lo = np.where(b[None, :] >= 0, lo[:, np.maximum(b, 0)] if n_config else 0.0, 0.0)
        diff = (left - right_hi) - right_lo
    return np.max(_turn_size(diff), axis=1, initial=0.0)


class _SameWidthErrors:
    """:func:`_errors` for a layer that rotates as many pairs as the config has frequencies (the
    usual case), with the same arithmetic in buffers made once per scan: allocating a block's
    float64 temporaries anew at every block had the system fault their pages in each time."""

    def __init__(self, layer: LlamaCppLayer, config: RotaryEncoding, rows: int, *, with_hf: bool):
        self.layer, self.config, self.with_hf = layer, config, with_hf
        self.hf_errors = None  # transformers' own errors at the last call's positions
        self.freqs = config.inv_freq[None, :]
        self.high, self.low = veltkamp_split(self.freqs)
        shape = (rows, self.freqs.shape[1])
        self.buffers = np.empty(shape), np.empty(shape), np.empty(shape)

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        ours = llama_cpp_angles(positions, self.layer)
        exact, error, term = (buffer[: positions.size] for buffer in self.buffers)
        # two_product(p, w) for whole positions below 2**24 (26 bits: p is its own high part):
        # exact = fl(p w), error = (p w_high - exact) + p w_low, exact + error == p w.
        p = positions.astype(np.float64)[:, None]
        np.multiply(p, self.freqs, out=exact)
        np.multiply(p, self.high, out=error)
        error -= exact
        np.multiply(p, self.low, out=term)
        error += term
        if self.with_hf:  # transformers_angle_errors, from the same exact angles
            self.hf_errors = _transformers_angle_errors(
                p[:, 0], self.config, "float32", exact, error
            )
        np.subtract(ours, exact, out=exact)  # float32 angles widen exactly
        np.subtract(exact, error, out=error)  # (ours - hi) - lo, as _errors
        return np.max(_turn_size(error), axis=1, initial=0.0)


def _turn_size(diff: np.ndarray) -> np.ndarray:
    """|diff| less its nearest whole number of turns: exact where |diff| <= pi (adding pi first,
    as ``(diff + pi) % (2 pi) - pi`` does, rounds away a small difference's last bits, and the
    remainder takes five times as long)."""
    size = np.abs(diff)
    if size.max(initial=0.0) <= np.pi:  # no whole turn to take away (the usual case)
        return size
    turns = np.rint(diff / (2 * np.pi))
    return np.abs(diff - (2 * np.pi) * turns)


def _scan(layer: LlamaCppLayer, config: RotaryEncoding | None, limit: int, *, with_hf: bool):
    """Position by position over [0, limit): first crossing, largest error, error at the last
    position, and transformers' own largest float32 error."""
    width = max(layer.n_pairs, 1 if config is None else config.inv_freq.size, 1)
    block = max(1, _BLOCK // width)
    errors_of = functools.partial(_errors, layer, config)
    if layer.rotates and config is not None and layer.n_pairs == config.inv_freq.size:
        errors_of = _SameWidthErrors(layer, config, min(block, limit), with_hf=with_hf)
    first, hf_first, worst, hf_worst, last = None, None, 0.0, 0.0, 0.0
    for start in range(0, limit, block):
        positions = np.arange(start, min(limit, start + block), dtype=np.int64)
        errors = errors_of(positions)
        if first is None:
            over = np.flatnonzero(errors > ANGLE_TOLERANCE)
            if over.size:
                first = int(positions[over[0]])
        worst = max(worst, float(errors.max(initial=0.0)))
        last = float(errors[-1])
        if with_hf and config is not None:
            hf = getattr(errors_of, "hf_errors", None)
            if hf is None:
                hf = transformers_angle_errors(positions, config)
            hf_worst = max(hf_worst, float(hf.max()))
            if hf_first is None:
                over = np.flatnonzero(hf > ANGLE_TOLERANCE)
                if over.size:
                    hf_first = int(positions[over[0]])
    hf_result = (hf_worst, hf_first) if with_hf and config is not None else (None, None)
    return first, worst, last, hf_result


# --- the checks ------------------------------------------------------------------------------


def _fmt(value) -> str:
    if value is None:
        return "absent"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _key_value(meta: GgufMetadata, arch: str, suffix: str, default_words: str) -> str:
    value = meta.metadata.get(f"{arch}.{suffix}")
    if value is None:
        return f"absent (llama.cpp uses {default_words})"
    return _fmt(value)


def _override(arch: str, suffix: str, kind: str, value) -> str:
    if kind == "float":
        value = f"{value:.9g}"
    return f"llama-cli ... --override-kv {arch}.{suffix}={kind}:{value}"


def _differs(a: float, b: float) -> bool:
    return abs(a - b) > _RELATIVE * max(abs(a), abs(b), 1e-30)


def _expected_scale(config: RotaryEncoding) -> float:
    if config.rope_type in ("linear", "yarn"):
        factor = float(config.parameters.get("factor", 1.0))
        return 1.0 / factor if factor else 1.0
    return 1.0


def _expected_factors(config: RotaryEncoding) -> np.ndarray | None:
    """The per-pair divisors llama.cpp needs (rope_freqs / LongRoPE factors) for the config."""
    if config.rope_type in ("llama3", "longrope"):
        return config.original_inv_freq / config.inv_freq
    return None


def _layer_findings(meta, rope: LlamaCppRope, layer: LlamaCppLayer, config, config_json):
    """(origin, key, title, file value, config value, fix, read_here) for one layer."""
    arch = rope.architecture
    out = []
    if (config is not None) != layer.rotates:
        if rope.arch.nope is not None and rope.arch.nope.hard_coded:
            out.append(
                (
                    Origin.LLAMA_CPP,
                    "(layer pattern)",
                    "llama.cpp's code for this architecture decides which layers skip RoPE",
                    "rotates"
                    if layer.rotates
                    else f"no RoPE (every {rope.arch.nope.step}th layer, fixed in llama.cpp)",
                    "RoPE" if config is not None else "no RoPE",
                    "none in the file: llama.cpp's pattern is fixed; the model must follow it",
                    True,
                )
            )
        elif rope.arch.switch_key is not None and not layer.rotates:
            out.append(
                (
                    Origin.FILE,
                    f"{arch}.{rope.arch.switch_key}",
                    "switches RoPE off",
                    _fmt(meta.key(rope.arch.switch_key)),
                    "RoPE",
                    _override(arch, rope.arch.switch_key, "bool", "true"),
                    True,
                )
            )
        else:
            out.append(
                (
                    Origin.FILE,
                    f"{arch}.attention.sliding_window_pattern",
                    "another set of layers rotates",
                    "rotates" if layer.rotates else "no RoPE",
                    "RoPE" if config is not None else "no RoPE",
                    "reconvert with the config's layer types",
                    True,
                )
            )
        return out
    if config is None:
        return out
    suffix = (
        "rope.dimension_count_swa"
        if layer.is_swa and meta.has_key("rope.dimension_count_swa")
        else "rope.dimension_count"
    )
    if layer.n_dims != config.rotary_dim:
        out.append(
            (
                Origin.FILE,
                f"{arch}.{suffix}",
                "rotates another number of columns",
                _key_value(meta, arch, suffix, f"the head width {layer.head_dim}"),
                f"{config.rotary_dim} rotary columns (head {config.head_dim})",
                _override(arch, suffix, "int", config.rotary_dim),
                True,
            )
        )
    base_suffix = (
        "rope.freq_base_swa" if layer.is_swa and rope.arch.swa is not None else "rope.freq_base"
    )
    if _differs(layer.freq_base, float(np.float32(config.base))):
        own = not (layer.is_swa and rope.arch.swa is not None and not rope.arch.swa.own_base)
        default = (
            "10000"
            if base_suffix == "rope.freq_base" or rope.arch.swa.base == "default"
            else f"the full layers' base, {layer.freq_base:g}"
        )
        out.append(
            (
                Origin.FILE if own else Origin.LLAMA_CPP,
                f"{arch}.{base_suffix}",
                "another RoPE base"
                if own
                else "llama.cpp rotates these layers with the global base",
                _key_value(meta, arch, base_suffix, default),
                f"{config.base:g}",
                _override(arch, base_suffix, "float", config.base) if own else "none in the file",
                True,
            )
        )
    scale = _expected_scale(config)
    if (_differs(layer.freq_scale, scale) and not layer.is_swa) or (
        layer.is_swa and _differs(layer.freq_scale, scale)
    ):
        factor_value = meta.key("rope.scaling.factor")
        out.append(
            (
                Origin.FILE,
                f"{arch}.rope.scaling.factor",
                "another position scaling factor",
                f"{_fmt(factor_value)} (type {_fmt(meta.key('rope.scaling.type'))}, used: "
                f"1/{1 / layer.freq_scale:g})",
                f"{config.rope_type} factor {1 / scale:g}",
                _override(arch, "rope.scaling.factor", "float", 1 / scale),
                True,
            )
        )
    if config.rope_type == "yarn" and not layer.is_swa:
        out += _yarn_findings(meta, rope, layer, config)
    expected = _expected_factors(config)
    if expected is not None and not layer.is_swa:
        name = (
            "rope_freqs.weight"
            if config.rope_type == "llama3"
            else (
                "rope_factors_long.weight"
                if "long" in str(config.parameters.get("factors_used"))
                else "rope_factors_short.weight"
            )
        )
        if layer.freq_factors is None:
            present = name in meta.tensors or layer.factors_tensor is not None
            out.append(
                (
                    Origin.FILE if not present else Origin.INPUT,
                    name,
                    "the RoPE factor tensor is missing"
                    if not present
                    else "the factor tensor's values are not in the input: not checked",
                    "absent" if not present else "values not given",
                    f"{config.rope_type} factors from {expected.min():.4g} to {expected.max():.4g}",
                    "reconvert with llama.cpp's convert_hf_to_gguf.py (it writes this "
                    "tensor from the config's rope_scaling); no --override-kv sets a tensor",
                    True,
                )
            )
        elif config.rope_type == "longrope" and layer.factors_tensor != name:
            if layer.n_ctx_orig == config.training_length:  # else the original context explains it
                out.append(
                    (
                        Origin.FILE,
                        layer.factors_tensor,
                        "llama.cpp chooses the other LongRoPE factors",
                        f"{layer.factors_tensor} (chosen for -c {rope.n_ctx:,})",
                        name,
                        "reconvert with llama.cpp's convert_hf_to_gguf.py",
                        True,
                    )
                )
        else:
            got = layer.freq_factors[: expected.size].astype(np.float64)
            if got.size != expected.size or np.any(
                np.abs(got - expected) > 2e-6 * np.abs(expected) + 1e-12
            ):
                out.append(
                    (
                        Origin.FILE,
                        layer.factors_tensor or name,
                        "other factor values",
                        f"{got.min():.6g} .. {got.max():.6g}",
                        f"{expected.min():.6g} .. {expected.max():.6g}",
                        "reconvert with llama.cpp's convert_hf_to_gguf.py",
                        True,
                    )
                )
    if config.rope_type == "longrope" and not layer.is_swa:
        out += _original_context_findings(
            meta, rope, layer, config, "another original context: the long/short choice moves"
        )
    factor = layer.cos_sin_factor
    if (
        layer.rotates
        and _differs(float(np.float32(factor)), float(np.float32(config.attention_factor)))
        and not any(
            key.endswith(("yarn_attn_factor", "rope.scaling.attn_factor")) for _, key, *_ in out
        )
        and abs(factor - config.attention_factor) > 1e-6
    ):
        implied = config.attention_factor / (
            factor / float(np.float32(meta.key("rope.scaling.attn_factor") or 1.0))
        )
        out.append(
            (
                Origin.FILE,
                f"{arch}.rope.scaling.attn_factor",
                "cos and sin scaled by another factor",
                f"{_fmt(meta.key('rope.scaling.attn_factor'))} (cos and sin x {factor:.6g})",
                f"x {config.attention_factor:.6g}",
                _override(arch, "rope.scaling.attn_factor", "float", implied),
                True,
            )
        )
    return out


def _original_context_findings(meta, rope, layer, config, title: str) -> list:
    """The file's original context (llama.cpp's n_ctx_orig_yarn) against the config's, if they
    differ: one finding, ``title`` saying what moves with it."""
    orig = config.training_length
    if orig is None or layer.n_ctx_orig == orig:
        return []
    arch = rope.architecture
    return [
        (
            Origin.FILE,
            f"{arch}.rope.scaling.original_context_length",
            title,
            _key_value(
                meta,
                arch,
                "rope.scaling.original_context_length",
                f"context_length {rope.n_ctx_train:,}",
            ),
            f"{orig:,}",
            _override(arch, "rope.scaling.original_context_length", "int", orig),
            True,
        )
    ]


def _yarn_findings(meta, rope, layer, config):
    arch = rope.architecture
    out = []
    params = config.parameters
    if rope.scaling_type != "yarn":
        out.append(
            (
                Origin.FILE,
                f"{arch}.rope.scaling.type",
                "not YaRN",
                _fmt(meta.key("rope.scaling.type")),
                "yarn",
                _override(arch, "rope.scaling.type", "str", "yarn"),
                True,
            )
        )
    out += _original_context_findings(
        meta,
        rope,
        layer,
        config,
        "another original context (YaRN's ramp and the long/short choice move)",
    )
    ext = meta.key("rope.scaling.yarn_ext_factor")
    if ext is not None and _differs(float(ext), 1.0):
        read = arch in UNREAD_KEYS["rope.scaling.yarn_ext_factor"]
        out.append(
            (
                Origin.FILE,
                f"{arch}.rope.scaling.yarn_ext_factor",
                "YaRN's extrapolation mix is not 1",
                _fmt(ext),
                "1 (transformers' YaRN)",
                _override(arch, "rope.scaling.yarn_ext_factor", "float", 1.0)
                + " (or remove the key with gguf_new_metadata.py --remove-metadata)",
                read,
            )
        )
    for name, default in (("beta_fast", 32.0), ("beta_slow", 1.0)):
        want = float(params.get(name, default))
        if _differs(getattr(layer, name), want):
            key = f"rope.scaling.yarn_{name}"
            read = arch in UNREAD_KEYS[key]
            out.append(
                (
                    Origin.FILE if read else Origin.LLAMA_CPP,
                    f"{arch}.{key}",
                    f"YaRN's {name} differs"
                    + ("" if read else " (llama.cpp does not read it for this architecture)"),
                    f"{_fmt(meta.key(key))} (used: {getattr(layer, name):g})",
                    f"{want:g}",
                    _override(arch, key, "float", want)
                    if read
                    else f"llama-cli ... --yarn-{name.replace('_', '-')} {want:g}",
                    True,
                )
            )
    if params.get("truncate") is False:
        out.append(
            (
                Origin.LLAMA_CPP,
                "(YaRN truncate: false)",
                "ggml always floors and ceils YaRN's correction range; the config asks "
                "for the exact one",
                f"ramp over pairs {layer.correction_range()[0]:g}..{layer.correction_range()[1]:g}",
                "an unrounded ramp",
                "none: llama.cpp has no setting for it",
                True,
            )
        )
    af = meta.key("rope.scaling.yarn_attn_factor")
    if af is not None and "rope.scaling.yarn_attn_factor" not in rope.arch.reads:
        ratio = config.attention_factor / (
            layer.cos_sin_factor / float(np.float32(meta.key("rope.scaling.attn_factor") or 1.0))
        )
        if abs(layer.cos_sin_factor - config.attention_factor) > 1e-6:
            out.append(
                (
                    Origin.FILE,
                    f"{arch}.rope.scaling.attn_factor",
                    "cos and sin scaled by YaRN's default factor: the converter wrote the "
                    "config's attention_factor to rope.scaling.yarn_attn_factor, which "
                    f"llama.cpp does not read for {arch}",
                    f"{_fmt(meta.key('rope.scaling.attn_factor'))}, yarn_attn_factor "
                    f"{_fmt(af)} (cos and sin x {layer.cos_sin_factor:.6g})",
                    f"x {config.attention_factor:.6g}",
                    _override(rope.architecture, "rope.scaling.attn_factor", "float", ratio),
                    True,
                )
            )
    return out


def _config_layers(config, n_ctx: int) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rope_layers(config, seq_len=n_ctx)


def _context_length(config: Mapping | str | bytes) -> int:
    from pe_core.rotary.config import _read_config

    reading = _read_config(config)
    part = reading.config
    value = part.get("max_position_embeddings")
    return int(value) if isinstance(value, int) and value > 0 else 4096


def check_gguf(
    meta: GgufMetadata,
    config: Mapping | str | bytes | None = None,
    *,
    n_ctx: int | None = None,
    with_transformers_error: bool = True,
) -> GgufCheck:
    """Compare a GGUF file's RoPE, as llama.cpp runs it, with its config.json.

    Parameters
    ----------
    meta : GgufMetadata
        :func:`pe_core.read_gguf`'s (or :func:`pe_core.parse_gguf_dump`'s).
    config : mapping, str or bytes, optional
        The config.json the file was converted from. Without it, what llama.cpp will do with the
        file is described, and the known variants named.
    n_ctx : int, optional
        The context size llama.cpp runs with (``-c``); the file's ``context_length`` by default.
    with_transformers_error : bool
        Also measure transformers' own float32 angle error (for the summary's comparison).

    Returns
    -------
    GgufCheck

    Raises
    ------
    InputError
        Unreadable metadata (see :func:`pe_core.llama_cpp_layers`), a bad config, or
        a config with another number of layers than the file.
    """
    if not isinstance(with_transformers_error, bool | np.bool_):
        raise InputTypeError(
            "with_transformers_error must be True or False, got "
            f"{describe_value(with_transformers_error)}"
        )
    rope = llama_cpp_layers(meta, n_ctx=n_ctx)
    arch = rope.architecture
    notes = []
    if rope.layers_reason is not None:
        notes.append(
            f"Note: {arch}'s per-layer RoPE in llama.cpp is not described here "
            f"({rope.layers_reason}): "
            "every layer is taken to rotate with the global settings."
        )
    elif not rope.arch.per_layer_read:
        notes.append(
            f"Note: {arch}'s layers are taken to rotate alike (no per-layer RoPE was found in its "
            "llama.cpp code by search; not read line by line)."
        )
    if config is None:
        return GgufCheck(
            architecture=arch,
            rope=rope,
            layers=tuple(
                LayerCheck(
                    layer.index, layer, None, True, None, 0.0, 0.0, None, layer.cos_sin_factor, None
                )
                for layer in rope.layers
            ),
            findings=(),
            missing=meta.missing,
            context_length=rope.n_ctx_train,
            has_config=False,
            description=tuple(describe(meta, rope)),
            notes=tuple(notes),
        )
    configs = _config_layers(config, rope.n_ctx)
    if len(configs) != len(rope.layers):
        raise InputError(
            f"config has {len(configs)} layers and the file (meta) {len(rope.layers)} "
            f"({arch}.block_count): they are not the same model"
        )
    limit = _context_length(config)
    findings: dict[tuple, dict] = {}
    arithmetic: list[tuple] = []
    layer_checks = []
    scanned: dict[tuple, tuple] = {}
    for layer, config_rope in zip(rope.layers, configs, strict=True):
        key = (
            id(config_rope),
            layer.rotates,
            layer.n_dims,
            layer.freq_base,
            layer.freq_scale,
            layer.ext_factor,
            layer.attn_factor,
            layer.factors_tensor,
            layer.is_swa,
        )
        if key not in scanned:
            scanned[key] = _scan(layer, config_rope, limit, with_hf=with_transformers_error)
        first, worst, last, (hf, hf_first) = scanned[key]
        raw = _layer_findings(meta, rope, layer, config_rope, config)
        same = _same_parameters(layer, config_rope)
        same_angles = _same_parameters(layer, config_rope, angles_only=True)
        unknown = any(item[0] is Origin.INPUT for item in raw)
        if unknown:
            raw = [
                item
                for item in raw
                if item[0] is Origin.INPUT
                or (
                    item[0] is Origin.FILE
                    and item[1].endswith(
                        (
                            "freq_base",
                            "freq_base_swa",
                            "dimension_count",
                            "scaling.factor",
                            "original_context_length",
                        )
                    )
                )
            ]
            same = True  # as far as the input shows; the INPUT finding says what is unchecked
        if same:  # a key that would change the rotation cannot differ; inert ones are kept
            raw = [item for item in raw if not item[6] or item[0] is not Origin.FILE]
        elif not any(item[6] for item in raw):
            raw.append(
                (
                    Origin.FILE,
                    "(rotation)",
                    "the frequencies differ and no key explains it",
                    f"llama.cpp's rotation (base {layer.freq_base:g}, {layer.n_dims} columns)",
                    f"{config_rope.rope_type if config_rope else 'no'} RoPE",
                    "none known",
                    True,
                )
            )
        if layer.rotates and config_rope is not None and not unknown:
            arithmetic.append(
                (
                    layer.index,
                    first if same else None,
                    worst if same else None,
                    hf_first,
                    hf,
                    last if same else None,
                )
            )
        for origin, k, title, file_value, config_value, fix, read in raw:
            entry = findings.setdefault(
                (origin, k, title, file_value, config_value, fix, read),
                {"layers": [], "first": None, "error": None},
            )
            entry["layers"].append(layer.index)
            if not read or same_angles or unknown:
                continue
            if first is not None and (entry["first"] is None or first < entry["first"]):
                entry["first"] = first
            entry["error"] = max(entry["error"] or 0.0, last)
        layer_checks.append(
            LayerCheck(
                layer.index,
                layer,
                config_rope,
                same,
                first,
                worst,
                last,
                hf,
                layer.cos_sin_factor,
                None if config_rope is None else config_rope.attention_factor,
            )
        )
    result = []
    for (origin, k, title, file_value, config_value, fix, read), entry in findings.items():
        result.append(
            GgufFinding(
                origin,
                k,
                title,
                file_value,
                config_value,
                fix,
                tuple(entry["layers"]),
                entry["first"],
                entry["error"],
                limit,
                read,
            )
        )
    result += _longrope_choice(rope, config)
    notes.append(_arithmetic_note(arithmetic, limit))
    if rope.arch.mode.layout == "interleaved":
        notes.append(
            f"Pairs: llama.cpp rotates adjacent columns ({rope.arch.mode.name}) where transformers "
            "rotates halves; the converter permutes the query and key weights to match (weights "
            "are not read here)."
        )
    return GgufCheck(
        architecture=arch,
        rope=rope,
        layers=tuple(layer_checks),
        findings=tuple(result),
        missing=meta.missing,
        context_length=limit,
        has_config=True,
        notes=tuple(notes),
    )


def _llama3_parameters(layer: LlamaCppLayer) -> str | None:
    """The Llama 3 parameters that reproduce a rope_freqs tensor exactly, if any."""
    factors = layer.freq_factors
    if factors is None:
        return None
    factor = float(factors.max())
    n = layer.n_pairs
    freqs = layer.freq_base ** (-np.arange(0, 2 * n, 2, dtype=np.float64) / (2 * n))
    wavelen = 2 * math.pi / freqs
    for orig in (8192, 4096, 16384, 32768, 65536, 131072, 2048):
        for low, high in ((1.0, 4.0), (1.0, 2.0), (1.0, 8.0), (2.0, 8.0)):
            smooth = (orig / wavelen - low) / (high - low)
            want = np.where(
                wavelen < orig / high,
                1.0,
                np.where(wavelen > orig / low, factor, 1 / ((1 - smooth) / factor + smooth)),
            )
            if np.allclose(factors[:n], want, rtol=2e-6, atol=0):
                return (
                    f"llama3 scaling: factor {factor:g}, low_freq_factor {low:g}, "
                    f"high_freq_factor {high:g}, original_max_position_embeddings {orig:,}"
                )
    return None


def describe(meta: GgufMetadata, rope: LlamaCppRope) -> list[str]:
    """What llama.cpp will do with the file, layer group by layer group, in words."""
    lines = []
    groups: dict[tuple, list[int]] = {}
    for layer in rope.layers:
        key = (
            layer.rotates,
            layer.n_dims,
            layer.freq_base,
            layer.freq_scale,
            layer.ext_factor,
            round(layer.cos_sin_factor, 9),
            layer.factors_tensor,
            layer.is_swa,
        )
        groups.setdefault(key, []).append(layer.index)
    for (rotates, n_dims, base, scale, ext, factor, tensor, swa), indices in groups.items():
        layer = rope.layers[indices[0]]
        words = _layer_words(indices)
        if not rotates:
            lines.append(f"{words}: no RoPE")
            continue
        text = (
            f"{words}{' (sliding window)' if swa else ''}: {rope.arch.mode.name} pairs, "
            f"{n_dims} of {layer.head_dim} columns, base {base:g}"
        )
        if ext:
            text += (
                f", YaRN factor {1 / scale:g} over an original {layer.n_ctx_orig:,} "
                f"(ramp over pairs "
                f"{layer.correction_range()[0]:g}..{layer.correction_range()[1]:g})"
            )
        elif scale != 1:
            text += f", linear factor {1 / scale:g}"
        if factor != 1:
            text += f", cos and sin x {factor:.6g}"
        if tensor == "rope_freqs.weight":
            known = _llama3_parameters(layer)
            text += f"; {tensor}: " + (known or "factors of no Llama 3 shape known here")
        elif tensor is not None:
            text += (
                f"; LongRoPE {tensor} (chosen for -c {rope.n_ctx:,} against original "
                f"{layer.n_ctx_orig:,})"
            )
        lines.append(text)
    absent = [s for s in ("rope.freq_base", "rope.dimension_count") if not meta.has_key(s)]
    if absent:
        lines.append(
            "absent keys, llama.cpp's defaults used: "
            + ", ".join(f"{rope.architecture}.{s}" for s in absent)
        )
    return lines


def _same_parameters(
    layer: LlamaCppLayer, config: RotaryEncoding | None, *, angles_only: bool = False
) -> bool:
    """Whether llama.cpp's rotation is the config's in exact arithmetic (float32-stored values
    aside): the same layers, columns, frequencies and (unless ``angles_only``) factor on cos
    and sin."""
    if (config is None) != (not layer.rotates):
        return False
    if config is None:
        return True
    if layer.n_dims != config.rotary_dim:
        return False
    ours = layer.inv_freq()
    if np.any(np.abs(ours - config.inv_freq) > 4e-6 * np.abs(config.inv_freq)):
        return False
    if angles_only:
        return True
    return abs(layer.cos_sin_factor - config.attention_factor) <= 4e-6 * config.attention_factor


def _arithmetic_note(rows: list[tuple], limit: int) -> str:
    """llama.cpp's float32 angles against transformers', over the layers whose parameters
    agree with the config."""
    same = [r for r in rows if r[2] is not None]
    if not same:
        return ""
    first = min((r[1] for r in same if r[1] is not None), default=None)
    hf_first = min((r[3] for r in same if r[3] is not None), default=None)
    worst = max(r[2] for r in same)
    hf_worst = max((r[4] for r in same if r[4] is not None), default=None)

    def where(position):
        return f"from position {position:,}" if position is not None else f"nowhere in {limit:,}"

    text = (
        f"Arithmetic (not a mistake): llama.cpp's float32 angles (theta_scale = powf(base, "
        f"-2/n_dims) multiplied in pair after pair) are off the exact angle by more than "
        f"{ANGLE_TOLERANCE:g} rad {where(first)}, at most {worst:.2g} rad over {limit:,} positions"
    )
    if hf_worst is not None:
        text += (
            f"; transformers' (float32 inv_freq times the position, rounded once) "
            f"{where(hf_first)}, at most {hf_worst:.2g} rad"
        )
    return text + "."


def _longrope_choice(rope: LlamaCppRope, config) -> list[GgufFinding]:
    """LongRoPE: llama.cpp picks long or short factors by -c; transformers by the length of
    each sequence. The difference for sequences of at most the original length."""
    layers = [
        layer
        for layer in rope.layers
        if layer.factors_tensor == "rope_factors_long.weight" and not layer.is_swa
    ]
    if not layers:
        return []
    orig = layers[0].n_ctx_orig
    short = _config_layers(config, orig)
    firsts, lasts = [], []
    for layer in layers:
        encoding = short[layer.index]
        if encoding is None or "short" not in str(encoding.parameters.get("factors_used")):
            return []
        first, _, last, _ = _scan(layer, encoding, orig, with_hf=False)
        firsts.append(first)
        lasts.append(last)
    known = [f for f in firsts if f is not None]
    return [
        GgufFinding(
            Origin.LLAMA_CPP,
            "rope_factors_long.weight",
            "llama.cpp chooses LongRoPE's factors by the context size -c, transformers by each "
            f"sequence's length: for sequences of at most {orig:,} tokens transformers uses "
            "the short factors",
            f"long factors for every sequence (-c {rope.n_ctx:,} > {orig:,})",
            "short factors up to the original length",
            f"start llama.cpp with -c {orig:,} for inputs of at most {orig:,} tokens",
            tuple(layer.index for layer in layers),
            min(known) if known else None,
            max(lasts),
            orig,
        )
    ]
