"""The app's views, in order: each one line (slug and label). The pages, the navigation and
the URL are built from this list; the view itself is the module ``dashboard/views/<slug>.py``,
with ``PARAMS`` (the parameters it owns, each declared once as its widget) and
``render(config)``."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType


@dataclass(frozen=True)
class View:
    """One page of the app: its URL path (and module name) and its title in the navigation."""

    slug: str
    label: str

    @cached_property
    def module(self) -> ModuleType:
        return importlib.import_module(f"dashboard.views.{self.slug}")

    @property
    def params(self) -> tuple:
        return tuple(getattr(self.module, "PARAMS", ()))


VIEWS: tuple[View, ...] = (
    View("heatmap", "Heatmap"),
    View("lesson", "Lesson"),
    View("sinusoids", "Sinusoids"),
    View("wavelengths", "Wavelengths"),
    View("similarity", "Similarity"),
    View("uniqueness", "Uniqueness"),
    View("rotation", "Relative position"),
    View("embeddings", "Embeddings"),
    View("conventions", "Conventions"),
    View("example", "Worked example"),
    View("check", "Check my encoding"),
    View("rope", "RoPE lab"),
    View("distance", "Distance"),
)
BY_SLUG = {view.slug: view for view in VIEWS}
DEFAULT = VIEWS[0]
