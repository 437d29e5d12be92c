"""Check my GGUF on the Check page: a GGUF file's first bytes or gguf-dump's text, with or
without the config.json it came from, answered with llama.cpp's rotation against the config;
every input that cannot be read is answered in one line (issue 50)."""

from __future__ import annotations

from tests import DATA
from tests.apptest_helpers import new_app

CORPUS = DATA / "gguf"


def opened(*, upload: str | None = None, dump: str | None = None, config: str | None = None):
    at = new_app(view="check", check="GGUF")
    at.run()
    if config is not None:
        at.text_area(key="gguf_check_config").input((CORPUS / config).read_text())
    if dump is not None:
        at.text_area(key="gguf_check_dump").input((CORPUS / dump).read_text())
    if upload is not None:
        data = (CORPUS / upload).read_bytes()
        at.file_uploader(key="gguf_check_upload").upload(upload, data, "application/octet-stream")
    at.run()
    assert not at.exception
    return at


def test_the_empty_page_says_what_to_give():
    at = opened()
    assert "first megabytes" in at.info[0].value


def test_a_faithful_file_rotates_as_the_config_says():
    at = opened(upload="qwen2.5-7b.gguf", config="qwen2.5-7b.config.json")
    assert "rotates as the config says" in at.success[0].value
    assert not at.error


def test_a_mistake_is_named_with_the_command_that_fixes_it():
    at = opened(upload="gemma3-4b-swapped-bases.gguf", config="gemma3-4b.config.json")
    assert "does NOT rotate" in at.error[0].value
    commands = [block.value for block in at.code]
    assert any("--override-kv gemma3.rope.freq_base=float:1000000" in c for c in commands)
    assert any("--override-kv gemma3.rope.freq_base_swa=float:10000" in c for c in commands)


def test_a_dump_says_what_it_cannot_check():
    at = opened(dump="llama3.1-8b.dump.txt", config="llama3.1-8b.config.json")
    assert "as far as the input shows" in at.success[0].value
    assert "rope_freqs.weight" in at.warning[0].value.replace("\\", "")


def test_without_a_config_llama3_is_named():
    at = opened(upload="llama3.1-8b.gguf")
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "llama3 scaling: factor 8" in text


def test_not_a_gguf_is_one_line():
    at = new_app(view="check", check="GGUF")
    at.run()
    at.file_uploader(key="gguf_check_upload").upload("x.gguf", b"PK\x03\x04", "application/zip")
    at.run()
    assert not at.exception
    assert "is not a GGUF file" in at.error[0].value
