"""Issue 53's cases on the command line, each as the issue gives it: ``python -m pe_core`` run
as a user runs it (its ``main``, in this process: tests/cli.py), its exit status, its text and
its ``--json``. The Check page's side of each case is in
tests/dashboard/test_checker_cases.py."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import pe_core
from pe_core import files
from tests.cli import run_cli


def float16_table() -> np.ndarray:
    """Case 1's table: interleaved, d = 10, base 10,000, positions 1 to 64, in float16."""
    return pe_core.sinusoidal_encoding(np.arange(1, 65), 10).astype(np.float16)


def csv(table: np.ndarray, fmt: str) -> bytes:
    buffer = io.StringIO()
    np.savetxt(buffer, table, fmt=fmt, delimiter=",")
    return buffer.getvalue().encode()


class TestCase1FormatThenPrinting:
    """A float16 table written as text is a float16 table written as text."""

    @pytest.mark.parametrize(
        ("name", "data", "printing"),
        [
            ("t.csv", csv(float16_table(), "%.8g"), "8 significant digits"),
            ("t.csv", csv(float16_table(), "%.4f"), "4 decimals"),
            ("t.txt", str(float16_table()).encode(), "significant digits"),  # numpy's print
            ("t.txt", str(float16_table().tolist()).encode(), None),  # values: float16 numbers
        ],
        ids=["%.8g", "%.4f", "numpy print", "list"],
    )
    def test_named_float16_through_every_printing(self, tmp_path, name, data, printing):
        path = tmp_path / name
        path.write_bytes(data)
        result = run_cli("identify", path, "--json")
        assert result.returncode == 0, result.stdout + result.stderr
        found = json.loads(result.stdout)
        assert (found["convention"], found["base"], found["start"]) == ("vaswani", 10_000.0, 1.0)
        assert found["precision_kind"] == "rounded" and found["format"] == "float16"
        if printing is None:
            assert found["significant_digits"] is None
        else:
            assert printing in found["precision"]
        assert found["input"]["container"] == "decimal"

    def test_the_exact_table_written_with_8_digits_is_not_float32_arithmetic(self, tmp_path):
        path = tmp_path / "t.csv"
        path.write_bytes(csv(pe_core.sinusoidal_encoding(np.arange(1, 65), 10), "%.8g"))
        found = json.loads(run_cli("identify", path, "--json").stdout)
        assert found["precision"] == "written with 8 significant digits"
        assert "float32 arithmetic" not in found["summary"]


class TestCase2Float32InAnyContainer:
    def test_tolist_of_a_float32_inv_freq_is_float32(self, tmp_path):
        inv_freq = pe_core.rope_frequencies(128, base=500_000.0).inv_freq.astype(np.float32)
        path = tmp_path / "inv_freq.txt"
        path.write_text(str(inv_freq.tolist()))
        found = json.loads(run_cli("check-rope", path, "--json").stdout)
        assert found["arithmetic"]["storage"] == "float32"
        assert "float64" not in found["arithmetic"]["words"]

    def test_numpy_print_of_a_float16_inv_freq_shows_float16_and_its_bug(self, tmp_path):
        inv_freq = pe_core.rope_frequencies(64).inv_freq.astype(np.float16)
        path = tmp_path / "inv_freq.txt"
        path.write_text(str(inv_freq))
        result = run_cli("check-rope", path, "--json")
        found = json.loads(result.stdout)
        assert found["arithmetic"]["storage"] == "float16"
        assert "bf16_inv_freq" in [f["name"] for f in found["findings"]]
        assert result.returncode == 1


class TestCase6ParameterNamed:
    def test_factor_4_in_the_data_2_in_the_config(self, tmp_path):
        config = {
            "model_type": "llama",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "rope_theta": 10_000.0,
            "max_position_embeddings": 8192,
            "rope_scaling": {"rope_type": "linear", "factor": 4.0},
        }
        cos, sin = pe_core.rope_cos_sin(2048, pe_core.rope_from_config(config))
        np.savez(tmp_path / "cache.npz", cos=cos.astype(np.float32), sin=sin.astype(np.float32))
        config["rope_scaling"]["factor"] = 2.0
        (tmp_path / "wrong.json").write_text(json.dumps(config))
        text = run_cli("check-rope", tmp_path / "cache.npz", "--config", tmp_path / "wrong.json")
        assert text.returncode == 1
        assert "factor 4 in the data, 2 in the config" in text.stdout
        as_json = run_cli(
            "check-rope", tmp_path / "cache.npz", "--config", tmp_path / "wrong.json", "--json"
        )
        found = json.loads(as_json.stdout)
        assert found["differences"] == [{"parameter": "factor", "data": 4.0, "config": 2.0}]
        (finding,) = found["findings"]
        assert finding["name"] == "factor_differs"
        assert finding["evidence"] == {"parameter": "factor", "data": 4.0, "config": 2.0}


class TestCase7WrongFamily:
    @pytest.mark.parametrize("name", ["table.npy", "table.csv"])
    def test_a_sinusoidal_table_is_no_rotary_cache(self, tmp_path, name):
        table = pe_core.sinusoidal_encoding(512, 64)
        path = tmp_path / name
        if name.endswith(".npy"):
            np.save(path, table)
        else:
            path.write_bytes(csv(table, "%.8g"))
        result = run_cli("check-rope", path)
        assert result.returncode == 2 and not result.stdout
        (line,) = result.stderr.strip().splitlines()
        assert "sinusoidal encoding table, not a rotary cache" in line
        assert "vaswani convention, base 10000" in line
        assert "python -m pe_core identify FILE" in line
        assert "longrope" not in line.lower()

    def test_a_rotary_cache_given_to_identify_is_sent_to_check_rope(self, tmp_path):
        cos, sin = pe_core.rope_cos_sin(64, pe_core.rope_frequencies(32))
        np.savez(tmp_path / "cache.npz", cos=cos, sin=sin)
        result = run_cli("identify", tmp_path / "cache.npz")
        assert result.returncode == 2
        assert "a rotary (RoPE) encoding, not a sinusoidal table" in result.stderr
        assert "check-rope" in result.stderr


class TestCase8IdentifyReadsText:
    def test_identify_table_csv(self, tmp_path):
        path = tmp_path / "table.csv"
        path.write_bytes(csv(pe_core.sinusoidal_encoding(100, 32).astype(np.float32), "%.9g"))
        result = run_cli("identify", path)
        assert result.returncode == 0, result.stderr
        assert "vaswani convention, base 10000, positions from 0 to 99" in result.stdout
        assert "float32 rounding" in result.stdout

    def test_this_app_s_csv_download_reads_back(self, tmp_path):
        from dashboard.config import Config
        from dashboard.exports import encoding_csv

        path = tmp_path / "download.csv"
        path.write_bytes(encoding_csv(Config(300, 10, 321.5, "tensor2tensor")))
        found = json.loads(run_cli("identify", path, "--json").stdout)
        assert (found["convention"], found["base"]) == ("tensor2tensor", 321.5)
        assert found["precision"] == "exact in float64"


class TestCase9OnPurpose:
    def test_positions_from_1_are_said_as_fairseq_does_them(self, tmp_path):
        path = tmp_path / "t.npy"
        np.save(path, pe_core.sinusoidal_encoding(np.arange(1, 65), 16))
        result = run_cli("identify", path, "--json")
        assert result.returncode == 0  # a table fairseq makes on purpose is no mistake
        found = json.loads(result.stdout)
        assert found["bug"] == "start_at_one" and not found["likely_mistake"]
        assert any("fairseq" in library for library in found["on_purpose_in"])
        assert "Likely mistake" not in found["summary"]
        assert "a mistake only if your code meant otherwise" in found["summary"]

    def test_the_pasted_copy_says_the_same(self, tmp_path):
        path = tmp_path / "t.txt"
        with np.printoptions(threshold=sys.maxsize):
            path.write_text(str(pe_core.sinusoidal_encoding(np.arange(1, 65), 16)))
        found = json.loads(run_cli("identify", path, "--json").stdout)
        assert found["bug"] == "start_at_one" and not found["likely_mistake"]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
class TestCase17Bounded:
    """Every file the command line reads is a regular file within a limit, or one line and
    exit 2, before anything is read."""

    @pytest.fixture
    def cache(self, tmp_path):
        cos, sin = pe_core.rope_cos_sin(64, pe_core.rope_frequencies(32))
        np.savez(tmp_path / "cache.npz", cos=cos, sin=sin)
        return tmp_path / "cache.npz"

    def one_line_exit_2(self, result, words):
        assert result.returncode == 2
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("error:") and words in line, line

    def test_dev_zero_as_config(self, cache):
        self.one_line_exit_2(
            run_cli("check-rope", cache, "--config", "/dev/zero", timeout=30), "device"
        )

    def test_dev_zero_as_table_and_cache(self, tmp_path):
        link = tmp_path / "zero.npy"
        link.symlink_to("/dev/zero")
        self.one_line_exit_2(run_cli("identify", link, timeout=30), "is a device")
        self.one_line_exit_2(run_cli("check-rope", link, timeout=30), "is a device")

    def test_a_fifo_is_not_waited_on(self, cache, tmp_path):
        fifo = tmp_path / "config.json"
        os.mkfifo(fifo)
        self.one_line_exit_2(run_cli("check-rope", cache, "--config", fifo, timeout=30), "a FIFO")

    def test_a_directory(self, cache, tmp_path):
        folder = tmp_path / "config.json"
        folder.mkdir()
        self.one_line_exit_2(
            run_cli("check-rope", cache, "--config", folder, timeout=30), "a directory"
        )

    def test_a_file_over_the_limit_is_refused_by_its_size(self, cache, tmp_path):
        big = tmp_path / "config.json"
        with open(big, "wb") as handle:  # sparse: no disk used
            handle.truncate(files.MAX_CONFIG_BYTES + 1)
        self.one_line_exit_2(
            run_cli("check-rope", cache, "--config", big, timeout=30), "more than the 4,194,304"
        )
