"""The RoPE lab, driven by AppTest: presets, the sidebar's sinusoid as RoPE, pasted configs."""

import json
import warnings
from urllib.parse import quote

import numpy as np
import pytest

import pe_core
from dashboard.views import rope as rope_view
from dashboard.views.rope import code as rope_code
from dashboard.views.rope import layers as rope_layers
from dashboard.views.rope import layouts as rope_layouts
from dashboard.views.rope import precision as rope_precision
from tests import DATA
from tests.apptest_helpers import decode, figures, new_app, no_errors

pytestmark = pytest.mark.timeout(600)


def _metrics(at) -> dict:
    return {metric.label: metric.value for metric in at.metric}


def _pair_chart(at) -> dict:
    return next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Wavelength"))


@pytest.mark.parametrize("preset", list(rope_view.PRESETS))
def test_each_preset_shows_its_exact_frequencies(preset):
    at = new_app(view="rope", rope_model=preset)
    at.run()
    no_errors(at)
    rope = pe_core.rope_from_config(rope_view.PRESETS[preset])
    metrics = _metrics(at)
    assert metrics["rope_type"] == rope.rope_type
    assert metrics["Attention factor"] == f"{rope.attention_factor:.6g}"
    assert metrics["Rotary columns"] == f"{rope.rotary_dim} of {rope.head_dim}"
    chart = _pair_chart(at)
    shown = np.full(rope.n_pairs, np.nan)
    for trace in chart["data"]:
        if trace["name"].startswith("after"):
            shown[decode(trace["x"]).astype(int)] = decode(trace["y"])
    np.testing.assert_allclose(shown, rope.wavelengths, rtol=1e-15)
    lines = {a["text"].split(":")[0] for a in chart["layout"]["annotations"]}
    assert "training length" in lines
    assert len(figures(at)) == 5  # pairs, score, bound, layouts, precision


def test_the_sidebar_sinusoid_as_rope():
    at = new_app(view="rope", d=7, L=300, base=500)
    at.run()
    no_errors(at)
    assert _metrics(at)["Rotary columns"] == "6 of 6"
    caption = " ".join(c.value for c in at.caption)
    assert "rounded down to an even width" in caption
    # Nothing is scaled: one line per chart, named so.
    scores = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("q·κ"))
    assert [t["name"] for t in scores["data"]] == ["no scaling"]


def test_a_pasted_config_and_a_broken_one():
    at = new_app(view="rope", rope_model=rope_view.PASTE)
    at.run()
    no_errors(at)
    assert any("Paste a model's config.json" in i.value for i in at.info)
    config = {"head_dim": 64, "rope_theta": 10000, "rope_scaling": {"type": "linear", "factor": 2}}
    at.text_area(key="rope_json").input(json.dumps(config)).run()
    no_errors(at)
    assert _metrics(at)["rope_type"] == "linear"
    at.text_area(key="rope_json").input('{"head_dim": 64, "rope_scaling": {"type": "linear"').run()
    no_errors(at)
    assert any("config is not valid JSON" in w.value for w in at.warning)
    bad = {"head_dim": 64, "rope_scaling": {"type": "linear", "factor": 0.5}}
    at.text_area(key="rope_json").input(json.dumps(bad)).run()
    no_errors(at)
    assert any("factor'] must be a number >= 1, got 0.5" in w.value for w in at.warning)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_precision_draws_transformers_own_float32_and_the_model_dtype(dtype):
    """The section's numbers are those of pe_core.transformers_angle_errors and
    inv_freq_float32_ulps for the preset on screen (Llama 3.1 8B), not fixed text."""
    preset = "Llama 3.1 8B (llama3 scaling)"
    at = new_app(view="rope", rope_model=preset, rope_prec=dtype)
    at.run()
    no_errors(at)
    rope = pe_core.rope_from_config(rope_view.PRESETS[preset])
    positions = rope_precision.POSITIONS
    float32 = pe_core.transformers_angle_errors(positions, rope)
    text = " ".join(m.value for m in at.markdown)
    ulps = pe_core.inv_freq_float32_ulps(rope).max()
    assert f"here up to {ulps:.2g} float32 units from the exact frequencies" in text
    assert np.any(float32 > 1e-3)
    first = pe_core.first_angle_error_above(rope, 1e-3).high  # position by position
    rounded = pe_core.first_angle_error_above(rope, 1e-3, frequencies="rounded").high
    assert (first, rounded) == (12_559, 20_120)  # the sampled curve said 16,982 and 21,203
    assert (
        f"Its float32 angles position·inv_freq first pass 0.001 rad at position {first:,} "
        f"(with correctly rounded frequencies they would first pass 0.001 rad at position "
        f"{rounded:,})."
    ) in text
    chart = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Angle error"))
    names = [trace["name"] for trace in chart["data"]]
    if dtype == "float32":
        assert names == ["transformers, float32 angles"]
        assert "casts cos and sin" not in text
    else:
        assert names == [
            "transformers, float32 angles",
            "bfloat16 model: cos/sin cast to bfloat16",
            "everything in bfloat16, position ids too",
        ]
        model = pe_core.transformers_angle_errors(positions, rope, "bfloat16")
        worst = model[positions <= rope_precision.FIRST].max()
        assert f"off by up to {worst:.1e} rad within the first 100 positions" in text
        np.testing.assert_allclose(decode(chart["data"][1]["y"]), np.maximum(model, 1e-17))


def test_precision_says_where_neighbours_merge():
    at = new_app(view="rope", rope_prec="float16")
    at.run()
    no_errors(at)
    text = " ".join(m.value for m in at.markdown)
    assert "positions **2,048** and **2,049** are the same number" in text


@pytest.mark.library
@pytest.mark.parametrize("preset", list(rope_view.PRESETS))
def test_snippets_reproduce_the_numbers(preset):
    config = rope_view.PRESETS[preset]
    rope = pe_core.rope_from_config(config)
    pe_core_code, torch_code = rope_code.snippets(config, rope)
    namespace: dict = {}
    exec(pe_core_code, namespace)  # the app's own snippet
    np.testing.assert_array_equal(namespace["inv_freq"], rope.inv_freq)
    assert namespace["attention_factor"] == rope.attention_factor
    assert namespace["cos"].shape == (4096, rope.rotary_dim)
    _run_torch_snippet(torch_code, rope)


def _run_torch_snippet(torch_code: str, rope: pe_core.RotaryEncoding) -> None:
    """The PyTorch snippet runs where PyTorch and transformers >= 5 are installed (Python 3.11
    in CI): a scaled encoding's float32 inv_freq is pe_core's inv_freq_float32 bit for bit on
    torch's AVX2 CPU kernel (the one pe_core.rotary.float32 emulates, SLEEF's powf), within two
    float32 units on another (its power is within one; YaRN's blend can carry it to two); the
    default one's float64 formula pe_core's to 5e-16."""
    pytest.importorskip("torch", reason="PyTorch is installed on Python 3.11 only")
    pytest.importorskip("transformers", minversion="5", reason="transformers >= 5")
    namespace: dict = {}
    exec(torch_code, namespace)
    theirs = namespace["inv_freq"].numpy()
    if theirs.dtype == np.float32:
        apart = np.abs(
            theirs.view(np.int32).astype(np.int64)
            - rope.inv_freq_float32.view(np.int32).astype(np.int64)
        )
        import torch

        assert apart.max() <= (0 if torch.backends.cpu.get_cpu_capability() == "AVX2" else 2)
    else:
        np.testing.assert_allclose(theirs, rope.inv_freq, rtol=5e-16)
    assert namespace["attention_factor"] == pytest.approx(rope.attention_factor, rel=1e-15)


CORPUS = DATA / "hf_configs"


#: The corpus files transformers has a config class for (the others are remote code).
KNOWN = sorted(
    name
    for name, result in json.loads((CORPUS / "reference.json").read_text())["results"].items()
    if "error" not in result
)


@pytest.mark.library
@pytest.mark.parametrize("name", KNOWN)
def test_torch_snippet_of_each_real_config_reproduces_transformers(name):
    """The snippet for every layer type of the real config.json files (the model's own
    config class through AutoConfig.for_model): runs and gives pe_core's numbers."""
    text = (CORPUS / name).read_text()
    config = json.loads(text)
    # The layer types the page offers (those whose encodings differ), as it passes them.
    kinds = rope_layers.layer_types(rope_layers.layer_map(text))
    for kind in kinds:
        layer_type = kind if len(kinds) > 1 else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # several layer types: the same encoding here
            rope = pe_core.rope_from_config(config, layer_type=layer_type)
        _, torch_code = rope_code.snippets(config, rope, layer_type)
        _run_torch_snippet(torch_code, rope)


def test_layouts_agree_after_the_permutation():
    rope = pe_core.rope_from_config(rope_view.PRESETS["gpt-oss-20b (YaRN x32)"])
    layouts = rope_layouts.layout_comparison(rope)
    assert layouts.difference <= 1e-13
    assert not np.allclose(layouts.halves, layouts.interleaved)  # different pairings
    at = new_app(view="rope", rope_model="gpt-oss-20b (YaRN x32)")
    at.run()
    no_errors(at)
    captions = " ".join(c.value for c in at.caption)
    assert "interleaved(x)[perm] and halves(x[perm]) is" in captions


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # Past MAX_JSON_DEPTH, in the URL: one message at every depth up to the length cap.
        ("[" * 101 + "]" * 101, "more than 100 levels deep"),
        ("[" * 5000 + "]" * 5000, "more than 100 levels deep"),
        ('{"head_dim": 64, "a": ' + "[" * 9_980 + "]" * 9_980 + "}", "more than 100 levels deep"),
        ('{"head_dim": 64, "rope_theta": NaN}', "rope_theta"),
        ('{"head_dim": 64, "rope_scaling": {"type": "su"}}', "rope_type"),
        ("x" * 20_001, "longer than 20000 characters"),
    ],
    ids=["deep-101", "deep-5000", "deep-9981-beside-keys", "nan", "unknown-type", "too-long"],
)
def test_hostile_config_links_keep_the_app_working(text, shown):
    # Issue 16: a hostile config in a shared link is a message, never a traceback.
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text)
    at.run()
    no_errors(at)
    messages = " ".join(w.value for w in at.warning).replace("\\", "")
    assert shown in messages
    assert "using  instead" not in messages  # the empty box is named, not left blank


class TestClickedPair:
    """A pair clicked on the wavelength chart (tests/browser/test_linked.py clicks in a browser;
    here the selection the click leaves is set directly)."""

    @staticmethod
    def _clicked(config: dict, pair: int):
        at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=json.dumps(config))
        at.run()
        at.session_state[rope_view.PAIRS_KEY] = {"selection": {"points": [{"x": pair}]}}
        return at.run()

    @staticmethod
    def _words(at) -> str:
        return next(c.value for c in at.caption if "clicked:" in c.value)

    @staticmethod
    def _shaded(at) -> list[float]:
        layouts = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("One"))
        return [shape["x0"] + 0.5 for shape in layouts["layout"].get("shapes", [])]

    def test_partial_rotary_pairs_columns_across_the_rotated_half(self):
        # head 16, rotary 8: pair 3 rotates columns 3 and 3 + 8/2 = 7 (halves), 6 and 7
        # (interleaved), as pe_core.apply_rope does.
        at = self._clicked({"head_dim": 16, "partial_rotary_factor": 0.5}, 3)
        no_errors(at)
        words = self._words(at)
        assert "Pair 3 (unchanged), clicked: ω 0.001 → 0.001" in words  # 10^4^(-6/8)
        assert "It rotates columns 3 and 7 of the head in the halves layout, 6 and 7" in words
        assert "slowed" not in words and "sped up" not in words
        assert self._shaded(at) == [3, 6, 7]
        table = at.table[0].value
        assert list(table.index) == ["0", "1", "2", "3 (clicked)"]
        x = np.zeros(16)
        x[[3, 7]] = 1.0  # the halves pair: rotated together, the other columns untouched
        rotated = pe_core.apply_rope(
            x[None, :],
            [5],
            pe_core.rope_from_config({"head_dim": 16, "partial_rotary_factor": 0.5}),
            layout="halves",
        )[0]
        assert np.flatnonzero(np.abs(rotated - x) > 1e-12).tolist() == [3, 7]

    def test_a_pair_that_does_not_rotate_says_so(self):
        config = {
            "head_dim": 16,
            "partial_rotary_factor": 0.5,
            "rope_scaling": {"rope_type": "proportional", "factor": 1.0},
        }
        rope = pe_core.rope_from_config(config)
        pair = int(np.flatnonzero(rope.inv_freq == 0)[0])
        words = self._words(self._clicked(config, pair))
        assert f"Pair {pair} (not rotated), clicked" in words
        assert "It does not rotate: its columns" in words and "pass through unchanged" in words
        assert "slowed" not in words

    def test_a_pair_clicked_on_another_configuration_is_forgotten(self):
        at = self._clicked({"head_dim": 16}, 5)
        assert "Pair 5" in self._words(at)
        # Another configuration: the browser drops the chart's selection, but this run still
        # reads the old one; it is not shown for the new chart.
        at.text_area(key="rope_json").input(json.dumps({"head_dim": 32})).run()
        no_errors(at)
        assert not any("clicked:" in c.value for c in at.caption)
        assert self._shaded(at) == []


class TestLayers:
    """A pasted config with several layer types or layers without RoPE (issue 34): the
    per-layer map, the layer type chosen, the charts of that type."""

    @staticmethod
    def _app(name: str, **query):
        text = (DATA / "hf_configs" / name).read_text()
        at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text, **query)
        return at.run()

    @staticmethod
    def _metrics(at) -> dict:
        return {m.label: m.value for m in at.metric}

    def test_gemma3_full_layers_by_default_and_sliding_on_request(self):
        at = self._app("gemma3-gemma-3-27b-it.json")
        no_errors(at)
        choice = next(g for g in at.get("button_group") if g.label == "Layer type")
        assert choice.options == ["sliding_attention", "full_attention"]
        assert self._metrics(at)["Base (rope_theta)"] == "1,000,000"
        captions = " ".join(c.value for c in at.caption)
        assert "the full_attention layers' encoding (10 of 62 layers)" in captions
        table = _table_with(at, "layers")
        assert table["layers"].tolist() == [52, 10]
        at = self._app("gemma3-gemma-3-27b-it.json", rope_layer="sliding_attention")
        no_errors(at)
        assert self._metrics(at)["Base (rope_theta)"] == "10,000"
        assert self._metrics(at)["rope_type"] == "default"

    def test_exaone4_global_layers_have_no_rope(self):
        at = self._app("exaone4-EXAONE-4.0-32B.json")
        no_errors(at)
        assert not [g for g in at.get("button_group") if g.label == "Layer type"]
        table = _table_with(at, "layer type")
        assert table["layer type"].tolist() == ["sliding_attention", "no RoPE"]
        assert table["layers"].tolist() == [48, 16]
        strip = next(spec for spec in figures(at) if "64 layers" in spec["layout"]["title"]["text"])
        assert [trace["name"] for trace in strip["data"]] == ["sliding_attention", "no RoPE"]

    def test_a_layer_type_the_config_lacks_is_a_warning(self):
        at = self._app("gemma3-gemma-3-27b-it.json", rope_layer="chunked_attention")
        no_errors(at)
        messages = " ".join(w.value for w in at.warning).replace("\\", "")
        assert "rope_layer=chunked_attention" in messages

    def test_a_plain_config_has_no_map(self):
        at = self._app("llama3.1-Llama-3.1-8B-Instruct.json")
        no_errors(at)
        assert not any("layers" in spec["layout"]["title"]["text"] for spec in figures(at))


def test_deepseek_softmax_factor_is_said():
    # The preset's attention factor is 1, but DeepSeek's attention multiplies its softmax
    # scale by mscale**2 (issue 34): said with the number the core computed.
    at = new_app(view="rope", rope_model="DeepSeek-V3 (YaRN x40, mscale)")
    at.run()
    no_errors(at)
    rope = pe_core.rope_from_config(rope_view.PRESETS["DeepSeek-V3 (YaRN x40, mscale)"])
    captions = " ".join(c.value for c in at.caption)
    assert f"multiplies its softmax scale by {rope.softmax_factor:.6g}" in captions
    at = new_app(view="rope", rope_model="Llama 3.1 8B (llama3 scaling)")
    at.run()
    assert "softmax scale" not in " ".join(c.value for c in at.caption)


def test_a_pasted_config_says_where_each_value_came_from_and_what_it_did_not_read():
    """Issue 34: nothing silently dropped: keys not read are named, each value's source shown."""
    config = {
        "model_type": "gpt_neox",
        "hidden_size": 768,
        "num_attention_heads": 12,
        "rotary_pct": 0.25,
        "rotary_emb_base": 10000,
        "rope_scaling": {"rope_type": "linear", "factor": 2.0, "beta_fast": 32},
    }
    at = new_app(view="rope", rope_model="Paste a config.json", rope_json=json.dumps(config))
    at.run()
    no_errors(at)
    warning = " ".join(w.value for w in at.warning)
    assert "Not read" in warning and "`rope_scaling.beta_fast`" in warning
    table = _table_with(at, "from")
    sources = dict(zip(table["key"], table["from"], strict=True))
    assert sources["rope_theta"] == "config.json: rotary_emb_base"
    assert sources["partial_rotary_factor"] == "config.json: rotary_pct"
    assert sources["rope_scaling.factor"] == "config.json"


def _table_with(at, column: str):
    """The page's table that has ``column`` (the layer table, the sources table...)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_a_pasted_config_can_be_cut_to_the_keys_that_set_rope():
    """The short-link button keeps only rope_config_essentials in the box (and so in the URL):
    the page then shows the same encoding."""
    text = (CORPUS / "llama3.1-Llama-3.1-8B-Instruct.json").read_text()
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text)
    at.run()
    no_errors(at)
    before = _metrics(at)
    button = next(b for b in at.button if b.key == "rope_json_short")
    short = json.dumps(pe_core.rope_config_essentials(text), separators=(",", ":"))
    assert f"a link of {len(quote(short)):,} characters" in button.label
    assert f"instead of {len(quote(text)):,}" in button.label
    button.click().run()
    no_errors(at)
    assert at.text_area(key="rope_json").value == short
    assert at.query_params["rope_json"] == short
    assert _metrics(at) == before
    assert not [b for b in at.button if b.key == "rope_json_short"]  # nothing left to cut


def test_longrope_says_which_factor_list_it_draws():
    text = (CORPUS / "phi3.5-Phi-3.5-vision-instruct-text.json").read_text()
    training = pe_core.rope_from_config(text).training_length
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text)
    at.run()
    no_errors(at)
    captions = " ".join(c.value for c in at.caption)
    assert (
        f"drawn here, the config's `short_factor` list; transformers uses `long_factor` for a "
        f"current sequence length above {training:,} positions" in captions
    )
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text, rope_seq=training + 1)
    at.run()
    no_errors(at)
    captions = " ".join(c.value for c in at.caption)
    assert (
        f"the config's `long_factor` list; transformers uses `short_factor` for one of at "
        f"most {training:,}" in captions
    )
    rope = pe_core.rope_from_config(text, seq_len=training + 1)
    assert rope.parameters["factors_used"] == "long_factor"


@pytest.mark.parametrize(
    ("config", "where"),
    [
        (CORPUS / "mistral3-Devstral-Small-2-24B-Instruct.json", "with RoPE (these charts)"),
        ({"model_type": "llama4_text", "head_dim": 128, "num_hidden_layers": 48}, "without RoPE"),
    ],
    ids=["devstral", "llama4"],
)
def test_the_attention_temperature_is_shown_as_what_it_is(config, where):
    text = config.read_text() if hasattr(config, "read_text") else json.dumps(config)
    found = pe_core.rope_query_temperature(text)
    rope = pe_core.rope_from_config(text)
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text)
    at.run()
    no_errors(at)
    captions = " ".join(c.value for c in at.caption)
    first = found.length - found.shift
    far = max(rope.target_length or 0, 4 * found.length)
    assert f"multiplies its queries on its layers {where}" in captions
    assert f"β = {found.beta:g} (`{found.keys[0]}`)" in captions
    assert f"{found.scale([first])[0]:.4g} from {first:,}" in captions
    assert f"{found.scale([far])[0]:.4g} at {far:,}" in captions


def test_a_head_wider_than_the_sidebar_allows_is_refused_with_the_rule():
    """Issue 40: a pasted head_dim of 65,536 with YaRN took 8 to 23 s to draw; the lab draws heads
    up to the sidebar's widest d_model and says so for wider ones."""
    config = {
        "head_dim": 65_536,
        "max_position_embeddings": 16_384,
        "rope_scaling": {
            "rope_type": "yarn",
            "factor": 4,
            "original_max_position_embeddings": 4096,
        },
    }
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=json.dumps(config))
    at.run()
    no_errors(at)
    assert any(
        "a head of 65,536 columns is wider than the 8,192 this lab draws" in w.value
        for w in at.warning
    )
    assert not figures(at)


def test_a_bad_attention_temperature_is_named_and_the_page_goes_on():
    config = {"model_type": "llama4_text", "head_dim": 128, "num_hidden_layers": 8}
    text = json.dumps({**config, "attn_scale": "hot"})
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text)
    at.run()
    no_errors(at)
    assert any(
        "attention temperature cannot be read" in w.value and "attn_scale" in w.value
        for w in at.warning
    )
    assert figures(at)  # the rotary charts are still drawn


@pytest.mark.parametrize("seq_len", [1000, 777_777])
def test_the_wavelength_chart_marks_only_the_configs_lengths_for_yarn(seq_len):
    """Issue 53, case 4: DeepSeek-V3 at rope_seq=777,777 drew "target length: 777,777", and
    at 1,000 a target below the training length; YaRN's frequencies do not follow the
    sequence length, so the lengths drawn are the config's, and the page says so."""
    at = new_app(view="rope", rope_model="DeepSeek-V3 (YaRN x40, mscale)", rope_seq=seq_len)
    at.run()
    no_errors(at)
    marks = {a["text"] for a in _pair_chart(at)["layout"]["annotations"]}
    assert marks == {"training length: 4,096", "target length: 163,840"}
    said = [c for c in at.session_state["_claims"] if c["kind"] == "sequence_length"]
    assert [c["follows"] for c in said] == [False]
    assert any(f"so {seq_len:,} changes nothing here" in c.value for c in at.caption)


def test_dynamic_ntk_marks_the_length_its_base_is_for():
    config = {
        "head_dim": 64,
        "max_position_embeddings": 4096,
        "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
    }
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=json.dumps(config))
    at.query_params["rope_seq"] = "9000"
    at.run()
    no_errors(at)
    marks = {a["text"] for a in _pair_chart(at)["layout"]["annotations"]}
    assert marks == {"training length: 4,096", "target length: 9,000"}
    assert any("computes its base for 9,000 positions" in c.value for c in at.caption)


def test_the_first_crossing_at_the_labs_defaults_is_the_first_position():
    """Issue 53, case 5: at the lab's defaults the page said "pass 0.001 rad by position 16,238
    (with correctly rounded frequencies 19,307)", the first of 400 samples above it; computed
    position by position (as transformers 5.24 on torch 2.13 computes them, tests/core/
    test_rope_precision.py) they are 13,614 and 16,990. The lab then opened on the paper's
    d_model 512 (the app now opens on 64: the link names it)."""
    at = new_app(view="rope", d="512", L="2048")
    at.run()
    no_errors(at)
    text = " ".join(m.value for m in at.markdown)
    assert "first pass 0.001 rad at position 13,614" in text
    assert "they would first pass 0.001 rad at position 16,990" in text
    assert "16,238" not in text and "19,307" not in text


class TestIssue53ConfigReading:
    """Issue 53, cases 3 and 13, as the lab shows them."""

    @staticmethod
    def _pasted(config) -> object:
        text = config if isinstance(config, str) else json.dumps(config)
        at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text)
        at.run()
        no_errors(at)
        return at

    def test_absent_lengths_take_the_class_default(self):
        at = self._pasted(
            {
                "model_type": "llama",
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "rope_scaling": {"rope_type": "yarn", "factor": 1.0001},
            }
        )
        assert not any("cannot be used" in w.value for w in at.warning)
        assert _metrics(at)["rope_type"] == "yarn"
        marks = {a["text"] for a in _pair_chart(at)["layout"]["annotations"]}
        assert "training length: 2,048" in marks
        sources = _table_with(at, "from")
        row = sources[sources["key"] == "max_position_embeddings"].iloc[0]
        assert row["value"] == "2048" and row["from"] == "default of llama"

    def test_a_key_the_rope_type_does_not_take_is_said_in_transformers_words(self):
        at = self._pasted(
            {
                "model_type": "llama",
                "head_dim": 128,
                "max_position_embeddings": 4096,
                "rope_scaling": {"rope_type": "linear", "factor": 2.0, "beta_fast": 32},
            }
        )
        captions = " ".join(c.value.replace("\\", "") for c in at.caption)
        assert (
            "transformers would warn: Unrecognized keys in `rope_parameters` for "
            "'rope_type'='linear': {'beta_fast'}"
        ) in captions

    def test_lfm2_12bs_attention_layers_from_full_attn_idxs(self):
        at = self._pasted((DATA / "hf_configs" / "lfm2-LFM2-1.2B.json").read_text())
        strip = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("16 layers"))
        assert strip["layout"]["title"]["text"] == "16 layers: 6 with RoPE, 10 without"

    def test_a_model_with_no_rope_is_refused_by_name(self):
        at = self._pasted({"model_type": "gpt2", "n_embd": 768, "n_head": 12})
        assert any("has no rotary position embedding" in w.value for w in at.warning)


class TestIssue53TheLinkKeepsTheConfig:
    """Issue 53, case 11: a broken config stays in the link as typed, its error beside the box;
    the box's counter and its label name one limit."""

    BROKEN = '{"head_dim": 64, "rope_scaling": {"type": "linear"'

    def test_a_broken_config_in_a_link_is_kept_and_its_error_shown(self):
        at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=self.BROKEN)
        at.run()
        no_errors(at)
        messages = " ".join(w.value for w in at.warning).replace("\\", "")
        assert "Ignored URL parameter" not in messages
        assert "config is not valid JSON" in messages
        assert at.text_area(key="rope_json").value == self.BROKEN
        assert at.query_params["rope_json"] == self.BROKEN
        at.run()  # a rerun (a reload of the link) keeps it too
        assert at.text_area(key="rope_json").value == self.BROKEN

    def test_a_broken_config_typed_stays_in_the_link(self):
        at = new_app(view="rope", rope_model=rope_view.PASTE)
        at.run()
        at.text_area(key="rope_json").input(self.BROKEN).run()
        no_errors(at)
        assert any("config is not valid JSON" in w.value for w in at.warning)
        # The link it makes opens on the same text, with the same message.
        again = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=self.BROKEN)
        again.run()
        assert again.text_area(key="rope_json").value == self.BROKEN

    def test_the_counter_and_the_label_name_one_limit(self):
        at = new_app(view="rope", rope_model=rope_view.PASTE)
        at.run()
        box = at.text_area(key="rope_json")
        assert box.max_chars == rope_view.MAX_CONFIG_CHARS == 20_000
        assert f"at most {box.max_chars:,} characters" in box.label


def test_a_rerun_draws_the_same_charts_without_building_them():
    """Issue 51: the score, bound, layouts and precision charts were built anew on every run of
    the lab (plotly.py's validation, then the copy for the browser: about a third of a cached
    switch's script); now each is keyed by what it draws (``caching.figure_of``), so a run
    that shows the same curves reuses every chart object, and Streamlit sends the same
    elements. Another model dtype still draws another precision chart."""
    from dashboard import state

    keys = ("rope_pairs", "rope_scores", "rope_bound", "rope_layouts", "rope_precision")
    at = new_app(view="rope")
    at.run()
    no_errors(at)
    shown = lambda: [at.session_state[state.LAST_CHART + key] for key in keys]  # noqa: E731
    ids = lambda: [element.proto.id for element in at.get("plotly_chart")]  # noqa: E731
    before, before_ids = shown(), ids()
    at.run()
    no_errors(at)
    assert [a is b for a, b in zip(shown(), before, strict=True)] == [True] * len(keys)
    assert ids() == before_ids
    at.button_group(key="rope_prec").set_value("float16").run()
    no_errors(at)
    after = shown()
    assert after[-1] is not before[-1]
    assert [a is b for a, b in zip(after[:-1], before[:-1], strict=True)] == [True] * 4
