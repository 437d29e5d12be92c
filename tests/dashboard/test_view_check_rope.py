"""Check my RoPE with an uploaded file (issue 35 on the Check page): a cos/sin cache or inv_freq
as .npz, .npy or .safetensors is named, compared with a pasted config, and its error drawn
against position; every file that cannot be read is answered with what happened (issue 40)."""

from __future__ import annotations

import io
import json
import struct

import numpy as np
import pytest

import pe_core
from dashboard import uploads
from dashboard.views.check import rope as check_rope
from pe_core import judgement
from tests import DATA, payloads
from tests.apptest_helpers import decode, figures, new_app

CONFIG = json.loads((DATA / "hf_configs" / "llama3.1-Llama-3.1-8B-Instruct.json").read_text())
ROPE = pe_core.rope_from_config(CONFIG)
#: Long enough that bf16 positions (256 and 257 merged) show, short enough to be quick.
LENGTH = 600


def npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=array.dtype == object)
    return buffer.getvalue()


def safetensors(tensors: dict[str, np.ndarray]) -> bytes:
    """A safetensors file written by hand: an 8-byte little-endian header length, the JSON
    header, then each float32 tensor's raw bytes."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def zip_bomb() -> bytes:
    """An archive named .npz whose member unpacks to 1 GiB of zeros (about 1 MB here)."""
    return payloads.zip_bomb("cos.npy")


def checked(name: str, data: bytes, config: dict | None = None):
    """The Check page in RoPE mode after uploading ``data`` as ``name`` (and pasting
    ``config``)."""
    at = new_app(view="check", check="RoPE")
    at.run()
    if config is not None:
        at.text_area(key="rope_check_config").input(json.dumps(config))
    at.file_uploader(key="rope_check_upload").upload(name, data, "application/octet-stream")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def words(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def error_curve(at) -> np.ndarray:
    (figure,) = [f for f in figures(at) if "Error against position" in str(f["layout"]["title"])]
    return decode(figure["data"][0]["y"]).astype(np.float64)


class TestIdentified:
    COS, SIN = pe_core.rope_cos_sin(LENGTH, ROPE)  # float32, as transformers returns them

    def test_an_npz_cache_is_named_verdict_first(self):
        at = checked("cache.npz", npz(cos=self.COS, sin=self.SIN))
        assert not at.error
        (verdict,) = [s.value.replace("\\", "") for s in at.success]
        assert verdict == (
            "**cache.npz (cos and sin, 600 × 128 each) is RoPE llama3, base 500,000, "
            "128 rotary columns, with no known bug.**"
        )
        # against llama3 rebuilt exactly: float32's rounding of values in [0.5, 1] (2**-25)
        error = error_curve(at)
        assert error.size == LENGTH and 0 < error.max() <= 2**-25
        assert "Error against position, from the exact RoPE llama3 identified" in str(figures(at))

    def test_against_its_config_it_matches(self):
        at = checked("cache.npz", npz(cos=self.COS, sin=self.SIN), CONFIG)
        assert "matches the config within its precision" in words(at.success)
        assert "Error against position, from the config's exact encoding" in str(figures(at))
        assert 0 < error_curve(at).max() <= 2**-25

    def test_rounded_to_bfloat16_it_still_matches_and_says_so(self):
        cos, sin = (
            pe_core.quantize(a, "bfloat16").astype(np.float32) for a in (self.COS, self.SIN)
        )
        at = checked("bf16.npz", npz(cos=cos, sin=sin), CONFIG)
        assert "matches the config within its precision" in words(at.success)
        assert "bfloat16" in words(at.markdown)
        # bf16 storage: up to half a bf16 unit of values near 1 (2**-9), at every position
        error = error_curve(at)
        assert 1e-4 < error.max() <= 2**-9 * 1.001

    def test_a_bug_is_named_with_where_it_departs(self):
        positions = np.arange(LENGTH)
        cos, sin = pe_core.ROPE_BUGS["bf16_positions"].inject(self.COS, self.SIN, positions, ROPE)
        at = checked("bug.npz", npz(cos=cos, sin=sin), CONFIG)
        assert not at.success
        verdict = words(at.warning)
        assert "departs from the config at position 257" in verdict
        assert pe_core.ROPE_BUGS["bf16_positions"].title in verdict
        assert error_curve(at).max() > 1e-3

    def test_a_safetensors_file_written_by_hand(self):
        rope = pe_core.rope_frequencies(64, base=10_000.0)
        cos, sin = pe_core.rope_cos_sin(200, rope)
        data = safetensors({"cos_cached": cos[None], "sin_cached": sin[None]})
        at = checked("rope.safetensors", data)
        assert not at.error
        verdict = words(at.success)
        assert "rope.safetensors (cos and sin, 1 × 200 × 64 each)" in verdict
        assert "base 10,000, 64 rotary columns" in verdict

    def test_a_stacked_npy_is_cos_and_sin(self):
        at = checked("stacked.npy", npy(np.stack([self.COS, self.SIN])), CONFIG)
        assert "matches the config" in words(at.success)

    def test_an_inv_freq_npy(self):
        at = checked("inv_freq.npy", npy(ROPE.inv_freq.astype(np.float32)), CONFIG)
        assert "inv_freq.npy (inv_freq (64 frequencies))" in words(at.success)
        assert "Error against position" not in str(figures(at))


class TestRefused:
    @pytest.mark.parametrize(
        ("name", "build", "shown"),
        [
            ("bomb.npz", zip_bomb, "declares 1,073,741,824 bytes once unpacked, more than"),
            # Text is read as every road reads it (a CSV cache too): its errors name the row.
            ("cache.csv", lambda: b"1,2\n3,x\n", "row 2 of the file holds something that is not a"),
            ("garbage.npz", lambda: b"PK\x03\x04 truncated", "is not a .npz file"),
            ("garbage.safetensors", lambda: b"\x10\x00", "too short for a safetensors header"),
            ("objects.npy", lambda: npy(np.array([{"cos": 1}], dtype=object)), "never loaded"),
            ("empty.npy", lambda: b"", "is empty"),
            ("big.npy", lambda: b"\x93NUMPY" + bytes(uploads.MAX_BYTES), "more than the limit of"),
            (
                "cos_only.npy",
                lambda: npy(pe_core.rope_cos_sin(16, ROPE)[0]),
                "repeats each column (as a cos or a sin cache does)",
            ),
        ],
        ids=["zip-bomb", "csv", "bad-zip", "bad-safetensors", "pickle", "empty", "too-big", "cos"],
    )
    def test_each_refusal_names_the_file_and_the_rule(self, name, build, shown):
        at = checked(name, build())
        errors = words(at.error)
        assert f"Cannot read {name}: " in errors and shown in errors
        assert not at.success and not at.warning and not at.info

    def test_the_bomb_limit_is_the_upload_limit(self):
        at = checked("bomb.npz", zip_bomb())
        assert f"the limit of {uploads.MAX_BYTES:,}: it was not unpacked" in words(at.error)


def test_the_empty_page_states_the_formats_the_limits_and_links():
    at = new_app(view="check", check="RoPE")
    at.run()
    assert check_rope.ACCEPTED in at.file_uploader(key="rope_check_upload").label
    (prompt,) = [i.value for i in at.info]
    assert check_rope.ACCEPTED in prompt
    assert f"at most {uploads.MAX_UPLOAD_MB} MB" in check_rope.ACCEPTED
    assert "cannot carry an upload" in words(at.caption)
    # the upload is not in the URL
    assert set(at.query_params) <= {"view", "check"}


class TestVectors:
    """Vectors before and after rotation (transformers' names q and q_embed), rotated by
    pe_core.apply_rope in float32: two heads at positions 0 to LENGTH - 1."""

    BEFORE = np.random.default_rng(0).standard_normal((1, 2, LENGTH, 128)).astype(np.float32)
    AFTER = pe_core.apply_rope(BEFORE, LENGTH, ROPE).astype(np.float32)

    def test_q_and_q_embed_are_named(self):
        at = checked("vectors.npz", npz(q=self.BEFORE, q_embed=self.AFTER), CONFIG)
        assert not at.error
        verdict = words(at.success)
        assert verdict.startswith(
            "**vectors.npz (vectors before and after rotation (q and q_embed), "
            "1 × 2 × 600 × 128 each) matches the config within its precision: RoPE llama3, "
            "base 500,000, 128 rotary columns.**"
        ), verdict
        assert "vectors rotated in float32" in words(at.markdown)
        captions = words(at.caption)
        assert "cos and sin rebuilt from the vectors (rotating in float32 alone" in captions
        # apply_rope rotates exactly, then float32 rounds: within the rotation's bound
        error = error_curve(at)
        assert error.size == LENGTH and 0 < error.max() <= 8 * 2**-24

    def test_before_and_after_with_positions_in_safetensors(self):
        positions = np.arange(LENGTH, dtype=np.float32) + 1000
        after = pe_core.apply_rope(self.BEFORE[0, 0], positions, ROPE).astype(np.float32)
        data = safetensors({"before": self.BEFORE[0, 0], "after": after, "positions": positions})
        at = checked("rotated.safetensors", data)
        verdict = words(at.success)
        assert "(vectors before and after rotation (before and after), 600 × 128 each, with " in (
            verdict
        )
        assert "is RoPE llama3, base 500,000" in verdict

    def test_q_without_q_embed_is_refused_by_name(self):
        at = checked("half.npz", npz(q=self.BEFORE))
        assert "'q' without 'q_embed'" in words(at.error)

    def test_a_rerun_does_not_identify_again(self, monkeypatch):
        calls = []
        identify = pe_core.identify_rope

        def counting(*args, **kwargs):
            calls.append(1)
            return identify(*args, **kwargs)

        monkeypatch.setattr(judgement, "identify_rope", counting)  # what every road asks
        check_rope.identified.clear()
        at = checked("vectors.npz", npz(q=self.BEFORE, q_embed=self.AFTER))
        assert len(calls) == 1 and "is RoPE llama3" in words(at.success)
        at.run()  # a rerun with the same upload and config
        assert len(calls) == 1 and "is RoPE llama3" in words(at.success)
        at.text_area(key="rope_check_config").input(json.dumps(CONFIG)).run()  # a new config
        assert len(calls) == 2 and "matches the config" in words(at.success)
        at.text_area(key="rope_check_config").input("").run()  # the first one again: kept
        assert len(calls) == 2 and "is RoPE llama3" in words(at.success)

    def test_the_ratio_chart_draws_the_variant_beside_the_measurement(self):
        at = checked("vectors.npz", npz(q=self.BEFORE, q_embed=self.AFTER))
        (figure,) = [f for f in figures(at) if "against plain RoPE" in str(f["layout"]["title"])]
        names = [trace["name"] for trace in figure["data"]]
        assert names == ["measured", "RoPE llama3 identified"]
        identified = decode(figure["data"][1]["y"]).astype(np.float64)
        # llama3 factor 8: the fastest pairs unscaled, the slowest divided by 8
        assert identified[0] == pytest.approx(1.0) and identified[-1] == pytest.approx(8.0)

    def test_a_cache_applied_by_the_other_layouts_rotate_is_named(self):
        cos, sin = pe_core.rope_cos_sin(LENGTH, ROPE)  # cat(freqs, freqs) columns
        x = self.BEFORE.astype(np.float64)
        turned = np.empty_like(x)  # GPT-J's rotate_every_two: pairs (2i, 2i+1)
        turned[..., 0::2], turned[..., 1::2] = -x[..., 1::2], x[..., 0::2]
        after = (x * cos + turned * sin).astype(np.float32)
        at = checked("mixed.npz", npz(q=self.BEFORE, q_embed=after), CONFIG)
        verdict = words(at.warning)
        assert "departs from the config at position 1, column 0" in verdict, verdict
        assert pe_core.ROPE_BUGS["wrong_pair_layout"].title in verdict
        assert "cache_layout: halves" in words(at.markdown)
        assert error_curve(at).size == LENGTH
        assert "the rotation paired its columns interleaved, the mistake named" in words(at.caption)


@pytest.mark.parametrize("box", ["rope_check_inv_freq", "rope_check_config"])
def test_a_paste_over_the_cap_says_so(box):
    """Issue 40: a paste longer than a box takes is refused by name (a box's own max_chars
    would drop it and show the empty page's prompt)."""
    at = new_app(view="check", check="RoPE")
    at.run()
    at.text_area(key=box).input("1e-3, " * 20_001)
    at.run()
    assert not at.exception
    errors = words(at.error)
    assert "has 120,006 characters, more than the 100,000 this box takes" in errors
    assert not any("Upload a cos/sin cache" in i.value for i in at.info)
