"""The app's views, in order: each one line (slug, label and section). The pages, the
navigation and the URL are built from this list; the view itself is the module
``dashboard/views/<slug>.py``, with ``PARAMS`` (the parameters it owns, each declared once as
its widget), ``render(config)`` and, if it does not read all of the sidebar's parameters,
``SHARED`` (the URL keys of those it reads: the sidebar shows only these)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import Any

#: The sidebar's parameters, by URL key: positions, d_model, base, convention.
SHARED = ("L", "d", "base", "conv")

LEARN = "Learn"
SINUSOIDAL = "Sinusoidal encodings"
FAMILIES = "RoPE and other families"
CHECK = "Check"


@dataclass(frozen=True)
class View:
    """One page of the app: its URL path (and module name), its title and its section in the
    navigation."""

    slug: str
    label: str
    section: str

    @cached_property
    def module(self) -> ModuleType:
        return importlib.import_module(f"dashboard.views.{self.slug}")

    @property
    def params(self) -> tuple:
        return tuple(getattr(self.module, "PARAMS", ()))

    @property
    def renamed(self) -> tuple:
        """The URL keys its parameters had in older links (``params.Renamed``)."""
        return tuple(getattr(self.module, "RENAMED", ()))

    def shared(self, value: Callable[[Any], Any] | None = None) -> tuple[str, ...]:
        """The sidebar's parameters this view reads (a view may read them in one mode only:
        the RoPE lab, when its source is the sidebar). ``value`` gives a parameter's value
        (by default its current one; a link's, to write a link)."""
        declared = getattr(self.module, "SHARED", SHARED)
        if callable(declared):
            declared = declared(value or (lambda param: param.value()))
        return tuple(declared)


VIEWS: tuple[View, ...] = (
    View("heatmap", "Heatmap", SINUSOIDAL),
    View("lesson", "Lesson", LEARN),
    View("sinusoids", "Sinusoids", SINUSOIDAL),
    View("wavelengths", "Wavelengths", SINUSOIDAL),
    View("similarity", "Similarity", SINUSOIDAL),
    View("uniqueness", "Uniqueness", SINUSOIDAL),
    View("rotation", "Relative position", SINUSOIDAL),
    View("embeddings", "Embeddings", SINUSOIDAL),
    View("conventions", "Conventions", SINUSOIDAL),
    View("example", "Worked example", SINUSOIDAL),
    View("check", "Check my encoding", CHECK),
    View("rope", "RoPE lab", FAMILIES),
    View("distance", "Distance", FAMILIES),
)
BY_SLUG = {view.slug: view for view in VIEWS}
DEFAULT = VIEWS[0]
#: The navigation's sections, in the order a first visit reads them.
SECTIONS = (LEARN, SINUSOIDAL, FAMILIES, CHECK)
