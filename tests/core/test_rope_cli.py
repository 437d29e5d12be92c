"""The command line: ``python -m pe_core check-rope`` and ``identify``, their exit status (0
matches, 1 does not, 2 unreadable input) and the file formats they read (never unpickling)."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import pe_core
from pe_core.files import load_arrays, read_arrays, rope_inputs
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "rope_caches"


def write_safetensors(path: Path, tensors: dict[str, tuple[str, np.ndarray]]) -> None:
    """A safetensors file written by hand: {name: (dtype, array)}; BF16 arrays are given as
    float32 values and stored as their upper halves."""
    header, blobs, offset = {}, [], 0
    for name, (dtype, array) in tensors.items():
        if dtype == "BF16":
            data = (np.ascontiguousarray(array, dtype="<f4").view("<u4") >> 16).astype("<u2")
        else:
            data = np.ascontiguousarray(array, dtype={"F32": "<f4", "I64": "<i8"}[dtype])
        raw = data.tobytes()
        header[name] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """transformers' Llama 3.1 cache (float32) as .npz, its config, and a bfloat16 .safetensors."""
    folder = tmp_path_factory.mktemp("cli")
    with np.load(DATA / "llama3_1_8b.npz", allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files}
    np.savez(
        folder / "llama.npz",
        cos=arrays["cos_float32"],
        sin=arrays["sin_float32"],
        positions=arrays["positions"],
    )
    bf16 = {
        name: (arrays[f"{name}_bfloat16_bits"].astype(np.uint32) << 16).view(np.float32)
        for name in ("cos", "sin")
    }
    write_safetensors(
        folder / "llama.safetensors",
        {
            "cos": ("BF16", bf16["cos"][None]),
            "sin": ("BF16", bf16["sin"][None]),
            "position_ids": ("I64", arrays["positions"][None]),
        },
    )
    np.save(folder / "inv_freq.npy", arrays["inv_freq"])
    config = folder / "config.json"
    config.write_bytes((DATA / "llama3_1_8b.config.json").read_bytes())
    return folder, arrays, config


class TestCheckRope:
    def test_matching_cache_exits_0(self, llama):
        folder, _, config = llama
        # the real command, in a child process: the entry point itself
        result = run_cli("check-rope", folder / "llama.npz", "--config", config, in_child=True)
        assert result.returncode == 0, result.stderr
        assert "RoPE llama3" in result.stdout and "matches the config" in result.stdout

    def test_bfloat16_safetensors_exits_0(self, llama):
        folder, _, config = llama
        result = run_cli("check-rope", folder / "llama.safetensors", "--config", config, "--json")
        assert result.returncode == 0, result.stderr
        found = json.loads(result.stdout)
        assert found["matches"] and found["arithmetic"]["storage"] == "bfloat16"
        assert found["rope_type"] == "llama3" and found["base"] == 500_000.0

    def test_inv_freq_exits_0(self, llama):
        folder, _, config = llama
        result = run_cli("check-rope", folder / "inv_freq.npy", "--config", config)
        assert result.returncode == 0, result.stdout + result.stderr

    def test_without_config(self, llama):
        folder, _, _ = llama
        result = run_cli("check-rope", folder / "llama.npz", "--json")
        assert result.returncode == 0
        assert json.loads(result.stdout)["config_matches"] is None

    def test_bug_exits_1_and_is_named(self, llama, tmp_path):
        _, arrays, config = llama
        rope = pe_core.rope_from_config(json.loads(config.read_text()), seq_len=131_072)
        cos, sin = pe_core.ROPE_BUGS["bf16_positions"].inject(
            arrays["cos_float32"], arrays["sin_float32"], arrays["positions"], rope
        )
        np.savez(tmp_path / "wrong.npz", cos=cos, sin=sin, positions=arrays["positions"])
        result = run_cli("check-rope", tmp_path / "wrong.npz", "--config", config, "--json")
        assert result.returncode == 1
        found = json.loads(result.stdout)
        assert found["likely_cause"] == "bf16_positions"
        assert found["departure"]["position"] == 257
        text = run_cli("check-rope", tmp_path / "wrong.npz", "--config", config)
        assert text.returncode == 1 and "position 257" in text.stdout

    def test_other_config_exits_1(self, llama, tmp_path):
        folder, _, _ = llama
        other = tmp_path / "qwen.json"
        other.write_bytes((DATA / "qwen3_8b_default.config.json").read_bytes())
        result = run_cli("check-rope", folder / "llama.npz", "--config", other)
        assert result.returncode == 1
        assert "departs from the config" in result.stdout

    @pytest.mark.parametrize(
        ("name", "content"),
        [
            ("garbage.npy", b"not a numpy file"),
            ("garbage.npz", b"PK\x03\x04 truncated"),
            ("garbage.safetensors", b"\x10\x00"),
            ("model.pt", b"\x80\x04pickle"),
        ],
    )
    def test_unreadable_exits_2(self, tmp_path, name, content):
        path = tmp_path / name
        path.write_bytes(content)
        result = run_cli("check-rope", path)
        assert result.returncode == 2
        assert result.stderr.startswith("error:") and "Traceback" not in result.stderr

    def test_pickled_array_is_refused(self, tmp_path):
        path = tmp_path / "objects.npy"
        np.save(path, np.array([{"cos": 1}], dtype=object), allow_pickle=True)
        result = run_cli("check-rope", path)
        assert result.returncode == 2 and "pickle" in result.stderr

    def test_missing_file_exits_2(self, tmp_path):
        assert run_cli("check-rope", tmp_path / "absent.npz").returncode == 2

    def test_unreadable_config_exits_2(self, llama, tmp_path):
        folder, _, _ = llama
        deep = tmp_path / "deep.json"
        deep.write_text("[" * 500 + "]" * 500)
        result = run_cli("check-rope", folder / "llama.npz", "--config", deep)
        assert result.returncode == 2 and "levels deep" in result.stderr
        assert (
            run_cli("check-rope", folder / "llama.npz", "--config", tmp_path / "no.json").returncode
            == 2
        )


class TestIdentify:
    def test_table_exits_0(self, tmp_path):
        path = tmp_path / "table.npy"
        np.save(path, pe_core.sinusoidal_encoding(200, 64).astype(np.float32))
        result = run_cli("identify", path, in_child=True)
        assert result.returncode == 0, result.stderr
        assert "vaswani convention, base 10000" in result.stdout

    def test_mistake_exits_1(self, tmp_path):
        path = tmp_path / "wrong.npz"
        wrong = pe_core.BUGS["inverted_frequency"].wrong_table(np.arange(50), 16, 10_000.0)
        np.savez(path, pe=wrong)
        result = run_cli("identify", path, "--json")
        assert result.returncode == 1
        assert json.loads(result.stdout)["bug"] == "inverted_frequency"

    def test_unreadable_exits_2(self, tmp_path):
        path = tmp_path / "table.npy"
        path.write_bytes(b"nope")
        assert run_cli("identify", path).returncode == 2


class TestReadArrays:
    def test_safetensors_round_trip(self, tmp_path):
        values = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
        write_safetensors(tmp_path / "t.safetensors", {"x": ("F32", values)})
        assert np.array_equal(read_arrays(tmp_path / "t.safetensors")["x"], values)

    def test_bfloat16_is_exact(self, tmp_path):
        values = pe_core.quantize(np.linspace(-1, 1, 10), "bfloat16").astype(np.float32)
        write_safetensors(tmp_path / "t.safetensors", {"x": ("BF16", values)})
        assert np.array_equal(read_arrays(tmp_path / "t.safetensors")["x"], values)

    def test_offsets_outside_the_file(self, tmp_path):
        header = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1_000]}})
        path = tmp_path / "t.safetensors"
        path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + b"\x00" * 16)
        with pytest.raises(pe_core.InputError, match="outside the file"):
            read_arrays(path)

    def test_header_larger_than_the_file(self, tmp_path):
        path = tmp_path / "t.safetensors"
        path.write_bytes(struct.pack("<Q", 10**12) + b"{}")
        with pytest.raises(pe_core.InputError, match="header declares"):
            read_arrays(path)

    def test_unknown_dtype(self, tmp_path):
        header = json.dumps({"x": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}})
        path = tmp_path / "t.safetensors"
        path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + b"\x00")
        with pytest.raises(pe_core.InputError, match="dtype must be one of"):
            read_arrays(path)


def zip_bomb(declared: int = 2**28) -> bytes:
    """A zip of one member that unpacks to ``declared`` zero bytes (about declared / 1000)."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("cos.npy", "w", force_zip64=True) as member,
    ):
        block = bytes(1 << 20)
        for _ in range(declared // len(block)):
            member.write(block)
    return buffer.getvalue()


class TestLoadArrays:
    """The bytes of an upload: read without unpickling, sizes checked before reading."""

    def test_a_zip_bomb_is_refused_from_its_declared_size(self):
        data = zip_bomb()
        assert len(data) < 1_000_000
        with pytest.raises(pe_core.InputError, match="declares 268,435,456 bytes once unpacked"):
            load_arrays(data, "bomb.npz", max_unpacked_bytes=20_000_000)

    def test_a_pickled_member_is_refused(self):
        buffer = io.BytesIO()
        np.savez(buffer, cos=np.array([{"a": 1}], dtype=object))
        with pytest.raises(pe_core.InputError, match="pickles are never loaded"):
            load_arrays(buffer.getvalue(), "objects.npz")

    def test_a_header_promising_more_than_the_file_holds(self):
        buffer = io.BytesIO()
        np.save(buffer, np.ones((4, 4)))
        with pytest.raises(pe_core.InputError, match="promises"):
            load_arrays(buffer.getvalue()[:-8], "short.npy")

    def test_compressed_and_big_endian_arrays_read_as_saved(self):
        cos = np.linspace(-1, 1, 12, dtype=">f4").reshape(3, 4)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, cos=cos, sin=-cos)
        arrays = load_arrays(buffer.getvalue(), "c.npz")
        assert np.array_equal(arrays["sin"], -cos) and arrays["cos"].dtype == np.float32

    def test_another_format_is_named(self):
        with pytest.raises(pe_core.InputError, match=r"'model\.pt' is a PyTorch file \(pickled\)"):
            load_arrays(b"\x80\x04", "model.pt")


class TestRopeInputs:
    ROPE = pe_core.rope_frequencies(8)

    def test_a_stacked_cache_is_cos_and_sin(self):
        cos, sin = pe_core.rope_cos_sin(16, self.ROPE)
        found = rope_inputs({"array": np.stack([cos, sin])})
        assert np.array_equal(found["cos"], cos) and np.array_equal(found["sin"], sin)

    @pytest.mark.parametrize("layout", ["halves", "interleaved"])
    def test_a_cos_cache_alone_is_refused(self, layout):
        cos, _ = pe_core.rope_cos_sin(16, self.ROPE, layout=layout)
        with pytest.raises(pe_core.InputError, match="a cos or a sin cache"):
            rope_inputs({"array": cos})

    def test_vllm_cos_sin_cache_is_split(self):
        cos, sin = pe_core.rope_cos_sin(16, self.ROPE)
        half = cos.shape[1] // 2
        found = rope_inputs({"array": np.concatenate([cos[:, :half], sin[:, :half]], axis=1)})
        assert np.array_equal(found["sin"], sin[:, :half])


def bf16(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to bfloat16 (as float32)."""
    return pe_core.quantize(values, "bfloat16").astype(np.float32)


@pytest.fixture(scope="module")
def rotated(llama, tmp_path_factory):
    """Vectors before and after rotation: transformers' Llama 3.1 cache (bfloat16) applied
    to bfloat16 queries as apply_rotary_pos_emb does, every operation rounded to bfloat16."""
    _, arrays, config = llama
    cos, sin = (bf16(arrays[f"{n}_float32"]).astype(np.float64) for n in ("cos", "sin"))
    q = bf16(np.random.default_rng(0).standard_normal((1, 4, cos.shape[0], 128)))
    half = 64
    turned = np.concatenate([-q[..., half:], q[..., :half]], axis=-1)
    q_embed = bf16(bf16(q * cos) + bf16(turned * sin))
    folder = tmp_path_factory.mktemp("vectors")
    write_safetensors(
        folder / "q.safetensors",
        {
            "q": ("BF16", q),
            "q_embed": ("BF16", q_embed),
            "position_ids": ("I64", arrays["positions"][None]),
        },
    )
    return folder, q, q_embed, arrays["positions"], config


class TestVectors:
    """check-rope on vectors before and after rotation."""

    def test_q_and_q_embed_exit_0(self, rotated):
        folder, _, _, _, config = rotated
        result = run_cli("check-rope", folder / "q.safetensors", "--config", config, "--json")
        assert result.returncode == 0, result.stdout + result.stderr
        found = json.loads(result.stdout)
        assert (found["source"], found["rope_type"], found["base"]) == (
            "vectors",
            "llama3",
            500_000.0,
        )
        assert found["arithmetic"]["rotated"] == "bfloat16"
        assert found["arithmetic"]["angles"] == "unresolved"

    def test_named_arrays_and_a_base_off_by_100x_exit_1(self, rotated, tmp_path):
        _, q, _, positions, config = rotated
        rope = pe_core.rope_frequencies(128, base=5_000.0)  # plain, at 1/100 of the base
        after = pe_core.apply_rope(q, positions, rope).astype(np.float32)
        np.savez(tmp_path / "x.npz", x_in=q, x_out=after, positions=positions)
        result = run_cli(
            "check-rope", tmp_path / "x.npz", "--before", "x_in", "--after", "x_out",
            "--config", config,
        )  # fmt: skip
        assert result.returncode == 1, result.stdout + result.stderr
        assert "base 5,000" in result.stdout and "departs from the config" in result.stdout

    def test_half_a_pair_exits_2(self, rotated, tmp_path):
        _, q, _, _, _ = rotated
        np.savez(tmp_path / "half.npz", q=q)
        result = run_cli("check-rope", tmp_path / "half.npz")
        assert result.returncode == 2 and "'q' without 'q_embed'" in result.stderr


class TestVectorInputs:
    X = np.random.default_rng(1).standard_normal((2, 16, 8))

    def test_before_and_after_by_name(self):
        found = rope_inputs({"Before": self.X, "after": -self.X, "positions": np.arange(16)})
        assert set(found) == {"before", "after", "positions"}
        assert np.array_equal(found["after"], -self.X)

    def test_q_and_k_pairs_are_one_batch(self):
        k = self.X[:1]
        arrays = {"q": self.X, "q_embed": self.X + 1, "k": k, "k_embed": k + 1}
        found = rope_inputs(arrays)
        assert found["before"].shape == (3, 16, 8)
        assert np.array_equal(found["before"][2], k[0])
        assert np.array_equal(found["after"][2], k[0] + 1)

    def test_pairs_of_other_shapes_are_refused(self):
        with pytest.raises(pe_core.InputError, match="'q' and 'q_embed' must have the same shape"):
            rope_inputs({"q": self.X, "q_embed": self.X[:, :4]})
        with pytest.raises(pe_core.InputError, match="same last two axes"):
            rope_inputs(
                {"q": self.X, "q_embed": self.X, "k": self.X[:, :4], "k_embed": self.X[:, :4]}
            )

    def test_a_cache_beside_a_lone_q_is_still_read(self):
        cos, sin = pe_core.rope_cos_sin(16, pe_core.rope_frequencies(8))
        found = rope_inputs({"cos": cos, "sin": sin, "q": self.X})
        assert set(found) == {"cos", "sin", "positions"}

    def test_names_given_must_exist(self):
        with pytest.raises(pe_core.InputError, match="no array named 'x'"):
            rope_inputs({"q": self.X}, before="x", after="q")
        with pytest.raises(pe_core.InputError, match="name both arrays"):
            rope_inputs({"q": self.X}, before="q")
