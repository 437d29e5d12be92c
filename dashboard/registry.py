"""The app's views, in order: each one line (slug, label and section). The pages, the
navigation and the URL are built from this list; the view itself is the module (or package)
``dashboard/views/<slug>``, which keeps the :class:`Page` contract."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

#: The sidebar's parameters, by URL key: positions, d_model, base, convention.
SHARED = ("L", "d", "base", "conv")

LEARN = "Learn"
SINUSOIDAL = "Sinusoidal encodings"
FAMILIES = "RoPE and other families"
CHECK = "Check"


@runtime_checkable
class Page(Protocol):
    """What a page module of ``dashboard/views/`` provides (tests/dashboard/test_views.py checks
    every registered one).

    Attributes
    ----------
    PARAMS : tuple of dashboard.params.Param
        The parameters the page owns, each declared once as its URL-bound widget.
    SHARED : tuple of str, or callable, optional
        The sidebar's parameters the page reads, by URL key (the sidebar shows only these), or
        a function of a parameter getter giving them (a page that reads them in one mode only).
        Absent: all of :data:`SHARED`.
    """

    PARAMS: tuple

    def subtitle(self, config: Any) -> str:
        """The one line under the page's title, from the parameters it reads."""

    def render(self, config: Any) -> None:
        """Draw the page (the app calls it inside its error guard)."""


@dataclass(frozen=True)
class View:
    """One page of the app: its URL path (and module name), its title and its section in the
    navigation."""

    slug: str
    label: str
    section: str

    @cached_property
    def module(self) -> Page:
        return importlib.import_module(f"dashboard.views.{self.slug}")

    @property
    def params(self) -> tuple:
        return tuple(self.module.PARAMS)

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
