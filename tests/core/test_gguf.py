"""GGUF files checked against their config.json: the reader, llama.cpp's per-layer rotation, the
comparison over the corpus of llama.cpp's own conversions (tests/data/gguf/, built by
benchmarks/gguf_corpus.py), the command line and bad input."""

from __future__ import annotations

import functools
import json
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pe_core
from pe_core.rotary.gguf.check import check_gguf
from pe_core.rotary.gguf.file import parse_gguf_dump, read_gguf, read_gguf_bytes
from pe_core.rotary.gguf.models import LLAMA_CPP_ARCHS, NON_ROTARY_ARCHS, RopeMode
from pe_core.rotary.gguf.rope import llama_cpp_angles, llama_cpp_layers
from pe_core.testing import assert_gguf_matches
from tests.cli import run_cli

ROOT = Path(__file__).parents[2]
CORPUS = ROOT / "tests" / "data" / "gguf"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
#: Faithful conversions that llama.cpp does not run as the config says, by what the converter
#: writes: the key it should have written.
CONVERTER_GAPS = {"qwen2.5-7b-yarn-attention-factor.gguf": "qwen2.rope.scaling.attn_factor"}
FAITHFUL = sorted(
    n for n, e in MANIFEST["files"].items() if e["mistake"] is None and n not in CONVERTER_GAPS
)
MISTAKES = sorted(n for n, e in MANIFEST["files"].items() if e["mistake"] is not None)

#: The key or tensor each injected mistake must be named by.
NAMED = {
    "qwen2.5-7b-no-freq-base.gguf": "qwen2.rope.freq_base",
    "mistral-7b-v0.3-no-freq-base.gguf": "llama.rope.freq_base",
    "llama3.1-8b-no-rope-freqs.gguf": "rope_freqs.weight",
    "qwen2.5-7b-yarn-ext-factor.gguf": "qwen2.rope.scaling.yarn_ext_factor",
    "qwen2.5-7b-yarn-no-orig-ctx.gguf": "qwen2.rope.scaling.original_context_length",
    "phi3.5-longrope-no-orig-ctx.gguf": "phi3.rope.scaling.original_context_length",
    "gemma3-4b-swapped-bases.gguf": "gemma3.rope.freq_base_swa",
    "gemma3-4b-no-scaling-factor.gguf": "gemma3.rope.scaling.factor",
    "phi-1-full-rotary.gguf": "phi2.rope.dimension_count",
}


def config_of(name: str) -> str:
    return (CORPUS / MANIFEST["files"][name]["config"]).read_text()


@functools.cache
def checked(name: str):
    """check_gguf of a corpus file against the config it was converted from (immutable: shared
    by the tests that read it)."""
    return check_gguf(read_gguf(CORPUS / name), config_of(name), with_transformers_error=False)


def cli(*args: str, in_child: bool = False) -> subprocess.CompletedProcess:
    return run_cli("check-gguf", *args, in_child=in_child)


class TestReader:
    def test_matches_gguf_py_reading_of_the_full_file(self):
        # the manifest holds what gguf-py 0.19.0 read from each converter output
        for name, entry in MANIFEST["files"].items():
            meta = read_gguf(CORPUS / name)
            reading = entry["gguf_py_reading"]
            for key, value in reading["keys"].items():
                got = meta.metadata[key]
                if isinstance(value, list):
                    assert list(got) == value, (name, key)
                elif isinstance(value, float):
                    assert np.float32(got) == np.float32(value), (name, key)
                else:
                    assert got == value, (name, key)
            assert len(meta.tensors) == reading["n_tensors"], name
            for tensor, values in reading["rope_tensors"].items():
                np.testing.assert_array_equal(meta.tensors[tensor].values, values)

    def test_stored_files_are_cut_after_the_rope_tensors(self):
        for name, entry in MANIFEST["files"].items():
            assert (CORPUS / name).stat().st_size == entry["stored_bytes"] < entry["full_bytes"]
        total = sum(p.stat().st_size for p in CORPUS.iterdir())
        assert total < 3 * 1024 * 1024

    def test_bytes_and_file_agree(self):
        data = (CORPUS / "phi3.5-longrope.gguf").read_bytes()
        a, b = read_gguf(CORPUS / "phi3.5-longrope.gguf"), read_gguf_bytes(data)
        assert a.metadata == b.metadata
        np.testing.assert_array_equal(
            a.tensors["rope_factors_long.weight"].values,
            b.tensors["rope_factors_long.weight"].values,
        )

    def test_cut_inside_a_rope_tensor_is_missing_not_an_error(self):
        data = (CORPUS / "llama3.1-8b.gguf").read_bytes()
        meta = read_gguf_bytes(data[:-8])
        assert meta.truncated and meta.tensors["rope_freqs.weight"].values is None
        assert "rope_freqs.weight" in meta.missing[0]

    def test_dump_reads_the_keys_and_says_what_is_missing(self):
        meta = parse_gguf_dump((CORPUS / "llama3.1-8b.dump.txt").read_text())
        binary = read_gguf(CORPUS / "llama3.1-8b.gguf")
        for key, value in binary.metadata.items():
            if key.startswith("llama."):
                assert np.float32(meta.metadata[key]) == np.float32(value), key
        assert meta.missing == (
            "the values of rope_freqs.weight (a dump lists tensors, not their values)",
        )

    def test_loader_log_lines(self):
        text = (
            "llama_model_loader: - kv   0: general.architecture str = qwen2\n"
            "llama_model_loader: - kv   1: qwen2.block_count u32 = 2\n"
            "llama_model_loader: - kv   2: qwen2.context_length u32 = 32768\n"
            "llama_model_loader: - kv   3: qwen2.embedding_length u32 = 256\n"
            "llama_model_loader: - kv   4: qwen2.attention.head_count u32 = 2\n"
            "llama_model_loader: - kv   5: qwen2.rope.freq_base f32 = 1000000.000000\n"
        )
        meta = parse_gguf_dump(text)
        assert meta.metadata["qwen2.rope.freq_base"] == 1e6
        assert not meta.has_tensor_list
        found = check_gguf(meta, config_of("qwen2.5-7b.gguf"))
        assert found.matches


class TestLlamaCppSemantics:
    def test_table_covers_llama_cpp_architectures(self):
        assert len(LLAMA_CPP_ARCHS) == 152  # 153 in llama.cpp 0c1e57098, dflash refused
        assert LLAMA_CPP_ARCHS["llama"].mode is RopeMode.NORMAL
        assert LLAMA_CPP_ARCHS["qwen2"].mode is RopeMode.NEOX
        assert LLAMA_CPP_ARCHS["qwen3vl"].mode is RopeMode.IMROPE
        assert {"gpt2", "bloom", "t5", "starcoder", "bert"} <= NON_ROTARY_ARCHS

    def test_gemma3_layers(self):
        rope = llama_cpp_layers(read_gguf(CORPUS / "gemma3-4b.gguf"))
        assert [layer.is_swa for layer in rope.layers] == [True] * 5 + [False]
        assert [layer.freq_base for layer in rope.layers] == [10_000.0] * 5 + [1e6]
        assert [layer.freq_scale for layer in rope.layers] == [1.0] * 5 + [0.125]

    def test_smollm3_every_fourth_layer_has_no_rope(self):
        rope = llama_cpp_layers(read_gguf(CORPUS / "smollm3-3b.gguf"))
        assert [layer.rotates for layer in rope.layers] == [True, True, True, False] * 2

    def test_yarn_context_parameters(self):
        rope = llama_cpp_layers(read_gguf(CORPUS / "qwen2.5-7b-yarn.gguf"))
        layer = rope.layers[0]
        assert (layer.ext_factor, layer.freq_scale, layer.n_ctx_orig) == (1.0, 0.25, 32768)
        # the kernel's mscale cancels llama_context's division: 0.1 ln 4 + 1 in the end
        assert layer.cos_sin_factor == pytest.approx(0.1 * np.log(4) + 1, rel=1e-6)
        assert layer.correction_range() == (23.0, 40.0)

    def test_longrope_factors_chosen_by_context_size(self):
        meta = read_gguf(CORPUS / "phi3.5-longrope.gguf")
        assert llama_cpp_layers(meta).layers[0].factors_tensor == "rope_factors_long.weight"
        short = llama_cpp_layers(meta, n_ctx=4096).layers[0].factors_tensor
        assert short == "rope_factors_short.weight"

    def test_angles_are_the_running_product(self):
        # a plain loop, as ggml_rope_cache_init writes it
        layer = llama_cpp_layers(read_gguf(CORPUS / "qwen2.5-7b.gguf")).layers[0]
        libm = pe_core.rotary.gguf.rope._libm()
        scale = np.float32(libm.powf(1e6, float(np.float32(-2.0) / np.float32(128))))
        for p in (0, 1, 7, 1000, 32767):
            theta, want = np.float32(p), []
            for _ in range(64):
                want.append(theta)
                theta = np.float32(theta * scale)
            np.testing.assert_array_equal(llama_cpp_angles([p], layer)[0], want)


@pytest.mark.parametrize("name", FAITHFUL)
def test_faithful_conversions_rotate_as_the_config_says(name):
    found = checked(name)
    assert found.matches, found.summary()
    assert not found.file_findings


def test_llama_cpp_own_differences_are_said_apart():
    found = checked("qwen2.5-7b-yarn-untruncated.gguf")
    assert found.matches
    (finding,) = found.llama_cpp_findings
    assert finding.key == "(YaRN truncate: false)" and finding.first_position is not None
    found = checked("phi3.5-longrope.gguf")
    assert [f.key for f in found.llama_cpp_findings] == ["rope_factors_long.weight"]


def overridden(meta, fix: str):
    """The metadata after llama.cpp's ``--override-kv KEY=TYPE:VALUE`` (as the fix says)."""
    import dataclasses
    import re

    match = re.search(r"--override-kv (\S+)=(int|float|str|bool):(\S+)", fix)
    key, kind, value = match.groups()
    parsed = {"int": int, "float": float, "str": str, "bool": lambda v: v == "true"}[kind](value)
    return dataclasses.replace(meta, metadata={**meta.metadata, key: parsed})


@pytest.mark.parametrize("name", [*MISTAKES, *CONVERTER_GAPS])
def test_the_fix_makes_it_rotate_as_the_config_says(name):
    meta = read_gguf(CORPUS / name)
    found = checked(name)
    for finding in found.file_findings:
        if "llama-cli ... --override-kv" not in finding.fix or not finding.read_here:
            continue
        meta = overridden(meta, finding.fix)
    after = check_gguf(meta, config_of(name), with_transformers_error=False)
    fixable = all(
        "llama-cli ... --override-kv" in f.fix for f in found.file_findings if f.read_here
    )
    if fixable:
        assert [f.key for f in after.file_findings if f.read_here] == [], after.summary()


def test_the_converter_drops_yarn_attention_factor():
    name = "qwen2.5-7b-yarn-attention-factor.gguf"
    found = checked(name)
    (finding,) = found.file_findings
    assert finding.key == CONVERTER_GAPS[name] and finding.first_position is None
    assert "yarn_attn_factor" in finding.title


@pytest.mark.parametrize("name", MISTAKES)
def test_each_injected_mistake_is_named_with_its_fix(name):
    found = checked(name)
    assert not found.matches
    keys = [f.key for f in found.file_findings]
    assert NAMED[name] in keys, found.summary()
    finding = found.file_findings[keys.index(NAMED[name])]
    assert finding.fix
    if finding.read_here:
        assert finding.first_position is not None and finding.first_position <= 2
        assert finding.error_at_context > 1.0
    if name == "gemma3-4b-swapped-bases.gguf":
        assert set(keys) == {"gemma3.rope.freq_base", "gemma3.rope.freq_base_swa"}
        assert "--override-kv gemma3.rope.freq_base=float:1000000" in found.summary()


def test_first_position_is_exact():
    # freq_base 10000 against 1e6: pair 1's angle p * (1e4**-1/64 - 1e6**-1/64); the first
    # position past 1e-3 rad, by hand
    found = checked("qwen2.5-7b-no-freq-base.gguf")
    pairs = np.arange(64)
    gap = np.abs(1e4 ** (-pairs / 64) - 1e6 ** (-pairs / 64)).max()
    assert found.file_findings[0].first_position == int(np.floor(1e-3 / gap)) + 1


def test_without_config_the_variants_are_named():
    found = check_gguf(read_gguf(CORPUS / "llama3.1-8b.gguf"))
    assert "llama3 scaling: factor 8, low_freq_factor 1, high_freq_factor 4" in found.summary()
    found = check_gguf(read_gguf(CORPUS / "llama3.2-1b.gguf"))
    assert "factor 32" in found.summary()


def test_assert_gguf_matches():
    assert_gguf_matches(CORPUS / "qwen3-8b.gguf", config_of("qwen3-8b.gguf"))
    with pytest.raises(AssertionError, match=r"qwen2\.rope\.freq_base.*override-kv"):
        assert_gguf_matches(
            (CORPUS / "qwen2.5-7b-no-freq-base.gguf").read_bytes(),
            config_of("qwen2.5-7b-no-freq-base.gguf"),
        )


class TestCommandLine:
    def test_exit_codes(self):
        ok = cli(  # the real command, in a child process: the entry point itself
            "tests/data/gguf/qwen2.5-7b.gguf",
            "--config",
            "tests/data/gguf/qwen2.5-7b.config.json",
            in_child=True,
        )
        assert ok.returncode == 0 and "rotates as the config says" in ok.stdout
        bad = cli(
            "tests/data/gguf/gemma3-4b-swapped-bases.gguf",
            "--config",
            "tests/data/gguf/gemma3-4b.config.json",
            "--json",
        )
        assert bad.returncode == 1
        result = json.loads(bad.stdout)
        assert {f["key"] for f in result["findings"] if f["origin"] == "file"} == {
            "gemma3.rope.freq_base",
            "gemma3.rope.freq_base_swa",
        }

    @pytest.mark.parametrize(
        "content, words",
        [
            (b"not a model", "not a GGUF file"),
            (b"GGUF\x03\x00\x00\x00" + struct.pack("<QQ", 0, 1) + b"\x05", "truncated"),
            (b"GGUF\x09\x00\x00\x00" + bytes(16), "version 9"),
        ],
    )
    def test_unreadable_is_one_line(self, tmp_path, content, words):
        path = tmp_path / "model.gguf"
        path.write_bytes(content)
        result = cli(str(path))
        assert result.returncode == 2
        assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr

    def test_a_directory_is_refused(self, tmp_path):
        result = cli(str(tmp_path))
        assert result.returncode == 2 and "regular file" in result.stderr


def _gguf(arch: str, keys: dict) -> bytes:
    """A GGUF file of string and uint32 keys, no tensors, written by hand."""
    out = [b"GGUF", struct.pack("<IQQ", 3, 0, len(keys) + 1)]

    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    out.append(string("general.architecture") + struct.pack("<I", 8) + string(arch))
    for key, value in keys.items():
        out.append(string(key) + struct.pack("<II", 4, value))
    return b"".join(out)


class TestBadInput:
    def test_non_rotary_architecture(self):
        meta = read_gguf_bytes(_gguf("bloom", {"bloom.block_count": 2}))
        with pytest.raises(pe_core.InputError, match=r"bloom.*no RoPE"):
            check_gguf(meta)

    def test_unknown_architecture(self):
        meta = read_gguf_bytes(_gguf("newmodel9", {"newmodel9.block_count": 2}))
        with pytest.raises(pe_core.InputError, match="RoPE table is unknown here"):
            check_gguf(meta)

    def test_missing_head_count(self):
        meta = read_gguf_bytes(
            _gguf("llama", {"llama.block_count": 2, "llama.context_length": 4096})
        )
        with pytest.raises(pe_core.InputError, match="head_count"):
            check_gguf(meta)

    def test_config_with_other_layer_count(self):
        config = json.loads(config_of("qwen2.5-7b.gguf"))
        config["num_hidden_layers"] = 3
        with pytest.raises(pe_core.InputError, match="not the same model"):
            check_gguf(read_gguf(CORPUS / "qwen2.5-7b.gguf"), config)

    def test_empty_text(self):
        with pytest.raises(pe_core.InputError, match="no metadata line"):
            parse_gguf_dump("hello")

    @pytest.mark.parametrize("smallest", [1e-45, 1e-38, 1e-31])
    def test_a_factor_that_sends_an_angle_past_float32_is_refused(self, smallest):
        # The fuzz tier's finding: rope_freqs of 1e-45 (a float32 subnormal) passed as "finite
        # and positive", then ggml's float32 division overflowed (NumPy warned). 2**24 / 1e-31 is
        # 1.7e38, within float32; 2**24 / 1e-38 is not.
        import dataclasses

        meta = read_gguf(CORPUS / "llama3.1-8b.gguf")
        tensor = meta.tensors["rope_freqs.weight"]
        values = tensor.values.copy()
        values[3] = np.float32(smallest)
        meta = dataclasses.replace(
            meta,
            tensors={**meta.tensors, tensor.name: dataclasses.replace(tensor, values=values)},
        )
        if smallest == 1e-31:
            config = config_of("llama3.1-8b.gguf")
            found = check_gguf(meta, config, n_ctx=64, with_transformers_error=False)
            assert [f.key for f in found.file_findings] == ["rope_freqs.weight"]
            return
        with pytest.raises(
            pe_core.InputError,
            match=r"^meta: rope_freqs.weight must hold .*"
            r"finite in float32.*pair 3",
        ):
            check_gguf(meta, with_transformers_error=False)


class TestDamagedFiles:
    """Every prefix of a file, and the file with a byte changed, is read or refused with an
    InputError: never another exception."""

    def test_every_cut(self):
        data = (CORPUS / "gemma3-4b.gguf").read_bytes()
        outcomes = {"read": 0, "refused": 0}
        for end in range(len(data) + 1):
            try:
                read_gguf_bytes(data[:end])
                outcomes["read"] += 1
            except pe_core.InputError:
                outcomes["refused"] += 1
        # readable from the end of the tensor list on (the RoPE tensors then go missing)
        assert outcomes["read"] > 0 and outcomes["refused"] > 0

    def test_changed_bytes(self):
        data = bytearray((CORPUS / "phi3.5-longrope.gguf").read_bytes())
        rng = np.random.default_rng(50)
        for _ in range(3000):
            damaged = bytearray(data)
            for at in rng.integers(0, len(data), size=rng.integers(1, 4)):
                damaged[at] = int(rng.integers(0, 256))
            try:
                meta = read_gguf_bytes(bytes(damaged))
                check_gguf(meta, with_transformers_error=False)
            except pe_core.InputError:
                pass
