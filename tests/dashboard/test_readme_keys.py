"""The README lists every key a link can carry (issue 53: it listed none), written from the
parameters themselves (dashboard/links.py url_key_rows): a key added to a page and not to the
README, or a key in the README that no page reads, fails here."""

from __future__ import annotations

import re

from dashboard import links, registry, sidebar
from tests import ROOT


def _readme_rows() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- url-keys:.*?-->\n(.*?)<!-- /url-keys -->", text, re.DOTALL)
    assert block, "README.md has no url-keys block"
    return [line for line in block.group(1).splitlines() if line.startswith("| `")]


def test_the_readme_lists_every_link_key_as_the_pages_read_them():
    expected = links.url_key_rows()
    assert _readme_rows() == expected, "README.md url-keys block:\n" + "\n".join(expected)


def test_every_parameter_of_every_page_is_a_row():
    keys = {p.key for p in sidebar.LINK_PARAMS} | {p.key for v in registry.VIEWS for p in v.params}
    listed = {re.match(r"\| `([^`]+)`", row).group(1) for row in _readme_rows()}
    assert listed == keys
    assert {"sin_from", "check", "rope_model", "rope_json"} <= listed  # the examples
