"""Issue 53, cases 14 to 16: identification names what libraries build, from their own output.

Tables: tests/data/library_tables.npz (transformers' PatchTST and XLNet, keras-hub's mixed
precision; sources in library_tables.json). Caches: tests/data/library_rope_caches/caches.npz,
computed with litgpt 0.5.13, keras-hub 0.32.0, transformers 5.24, rotary-embedding-torch 0.9.1,
x-transformers 2.31.10 and flash-attn's own code (sources in SOURCES.json there, the generator
beside it)."""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pytest

import pe_core
from pe_core import files, judgement
from tests import DATA

TABLES = np.load(DATA / "library_tables.npz")
TABLE_SOURCES = json.loads((DATA / "library_tables.json").read_text())
CACHES = np.load(DATA / "library_rope_caches" / "caches.npz")
CACHE_SOURCES = json.loads((DATA / "library_rope_caches" / "SOURCES.json").read_text())["cases"]


def cache(name: str):
    return CACHES[f"{name}_cos"], CACHES[f"{name}_sin"], CACHES[f"{name}_positions"]


def written(table: np.ndarray, fmt: str) -> np.ndarray:
    buffer = io.StringIO()
    np.savetxt(buffer, table, fmt=fmt, delimiter=",")
    return files.load_arrays(buffer.getvalue().encode(), "t.csv")["array"]


class TestCase14Tables:
    @pytest.mark.parametrize("case", TABLE_SOURCES["patchtst"], ids=lambda c: f"d{c['d_model']}")
    @pytest.mark.parametrize("printing", [None, "%.6g", "%.8g"])
    def test_patchtst_rescaled_table_is_named_through_text_too(self, case, printing):
        table = TABLES[case["table"]]
        values = table if printing is None else written(table, printing)
        found = pe_core.identify_encoding(values)
        assert found.matches and found.rescaled, found.summary()
        assert found.normalization.startswith("transformers' PatchTST")
        assert (found.convention, found.base, found.start) == ("vaswani", 10_000.0, 0.0)

    @pytest.mark.parametrize("case", TABLE_SOURCES["xlnet"], ids=lambda c: f"d{c['d_model']}")
    def test_xlnet_descending_relative_positions_are_its_own_arithmetic(self, case):
        found = judgement.check_table(TABLES[case["table"]])
        diagnosis = found.diagnosis
        identification = diagnosis.identification
        assert (identification.convention, identification.base) == ("split", 10_000.0)
        assert (identification.start, identification.step) == (case["qlen"], -1)
        # Float32 rounding, or float32 arithmetic done on purpose: not a likely mistake.
        assert not diagnosis.likely_mistake
        assert found.matches and "Likely mistake" not in found.summary()
        assert "tensor2tensor" not in found.summary()

    @pytest.mark.library
    def test_the_xlnet_formula_is_transformers_own(self):
        """XLNet's and Funnel's 1 / base ** (n / D), every step in float32, within an ulp of
        their sin and cos (transformers 5.24, torch's CPU float32 kernels)."""
        pytest.importorskip("torch", reason="transformers' XLNet needs PyTorch")
        transformers = pytest.importorskip("transformers", reason="not a dependency")
        import torch
        from transformers.models.funnel.modeling_funnel import FunnelAttentionStructure

        model = transformers.XLNetModel(
            transformers.XLNetConfig(d_model=64, n_layer=1, n_head=2, d_inner=32, vocab_size=10)
        ).eval()
        xlnet = model.relative_positional_encoding(32, 32, bsz=None)[:, 0].detach().numpy()
        funnel_config = transformers.FunnelConfig(
            d_model=64, n_head=2, d_head=32, attention_type="relative_shift"
        )
        funnel = FunnelAttentionStructure(funnel_config).eval()
        relative = funnel.get_position_embeds(32, torch.float32, "cpu")[0][0].detach().numpy()
        ours = pe_core.textbook_encoding(
            np.arange(32, -32, -1), 64, convention="split", formula="inverse_pow"
        )
        for table in (xlnet, relative):
            assert np.max(np.abs(ours - table)) <= 2.0**-24
            found = pe_core.diagnose_encoding(table)
            assert (found.compute_dtype, found.formula) == ("float32", "inverse_pow")
            assert "XLNet" in found.summary() and not found.likely_mistake

    @pytest.mark.parametrize(
        "case",
        [c for c in TABLE_SOURCES["keras_hub"] if c["compute_dtype"] == "float16"],
        ids=lambda c: f"{c['backend']}-d{c['d_model']}",
    )
    def test_keras_mixed_precision_is_float16_arithmetic_not_a_float32_bug(self, case):
        found = pe_core.diagnose_encoding(TABLES[case["table"]].astype(np.float32))
        assert found.compute_dtype == "float16"
        assert found.summary().startswith("Angles k * w computed in float16")
        assert "float32" not in found.summary().split(":")[0]
        assert not found.likely_mistake


class TestCase15LibraryMistakes:
    def test_litgpt_yarn_ramp_inversion_is_named_with_its_fix(self):
        found = pe_core.identify_rope(*cache("litgpt_yarn")[:2], positions=cache("litgpt_yarn")[2])
        assert found.rope_type == "yarn" and found.parameters["factor"] == 4.0
        assert found.parameters["original_max_position_embeddings"] == 4096
        assert "yarn_ramp_inverted" in found.bugs and not found.matches
        assert "longrope" not in found.summary().lower()
        bug = pe_core.ROPE_BUGS["yarn_ramp_inverted"]
        assert "litgpt 0.5.13" in " ".join(bug.references)
        assert "theta_interpolation * ramp" in bug.fix

    def test_litgpt_yarn_against_its_config_names_the_bug(self):
        config = {
            "model_type": "llama",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "rope_theta": 10_000.0,
            "max_position_embeddings": 16_384,
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 4096,
            },
        }
        cos, sin, positions = cache("litgpt_yarn")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = pe_core.identify_rope(cos, sin, positions=positions, config=config)
        assert found.likely_cause == "yarn_ramp_inverted", found.summary()

    def test_keras_hub_dynamic_is_said_with_where_its_factor_comes_from(self):
        cos, sin, positions = cache("keras_hub_dynamic")
        found = pe_core.identify_rope(cos, sin, positions=positions)
        assert found.rope_type == "linear"
        assert found.parameters["factor"] == pytest.approx(4.0 ** (128 / 126), rel=1e-9)
        assert found.parameters["keras_hub_scaling_factor"] == 4.0
        (finding,) = [f for f in found.findings if f.name == "keras_hub_dynamic"]
        assert finding.evidence["scaling_factor"] == 4.0
        assert "scaling_factor ** (d / (d - 2))" in finding.title


class TestCase16Variants:
    def test_phi3_mini_128k_longrope_is_named_from_its_attention_factor(self):
        cos, sin, positions = cache("phi3_mini_128k")
        found = pe_core.identify_rope(cos, sin, positions=positions)
        assert found.rope_type == "longrope" and found.explained, found.summary()
        assert (
            found.parameters["factor"] == 32
            and found.parameters["original_max_position_embeddings"] == 4096
        )
        assert found.attention_factor == pytest.approx(np.sqrt(1 + np.log(32) / np.log(4096)))
        assert found.base == 10_000.0

    @pytest.mark.parametrize(
        ("name", "layout"),
        [
            ("rotary_embedding_torch_xpos", "interleaved"),
            ("x_transformers_xpos", "interleaved"),
            ("flash_attn_xpos", "per_pair"),
        ],
    )
    def test_xpos_caches_are_named(self, name, layout):
        cos, sin, positions = cache(name)
        found = pe_core.identify_rope(cos, sin, positions=positions)
        assert found.explained and found.matches, found.summary()
        assert found.rope_type == "default" and found.layout == layout
        assert (found.parameters["xpos_scale_base"], found.parameters["xpos_centre"]) == (
            512.0,
            1024.0,
        )
        assert "with xPos (scale_base 512" in found.summary()
        assert "xpos" in [f.name for f in found.findings]

    def test_llama4_scout_equal_factors_are_llama3_not_yarn(self):
        cos, sin, positions = cache("llama4_scout")
        found = pe_core.identify_rope(cos, sin, positions=positions)
        assert found.rope_type == "llama3", found.summary()
        assert (found.parameters["low_freq_factor"], found.parameters["high_freq_factor"]) == (
            1.0,
            1.0,
        )
        assert found.parameters["original_max_position_embeddings"] == 8192
        assert found.parameters["factor"] == 16.0


def test_every_cache_names_its_source():
    for name, source in CACHE_SOURCES.items():
        assert f"{name}_cos" in CACHES.files and source["source"]
