"""The app's JavaScript and CSS, kept as files so that editors and linters read them as such.

The components and page styles read them once, at import (:func:`text`); they ship with the
package as package data (``[tool.setuptools.package-data]`` in ``pyproject.toml``).
"""

from __future__ import annotations

from importlib.resources import files


def text(name: str) -> str:
    """The contents of the file ``name`` of this folder (``"image.js"``)."""
    return files(__name__).joinpath(name).read_text(encoding="utf-8")
