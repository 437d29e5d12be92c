"""The app's views, in order: each one line (slug, label, module). The pages, the navigation
and the URL are built from this list; a view module has ``PARAMS`` (the parameters it owns,
each declared once as its widget) and ``render(config)``."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from dashboard.views import (
    conventions,
    embeddings,
    example,
    heatmap,
    rotation,
    similarity,
    sinusoids,
    uniqueness,
    wavelengths,
)


@dataclass(frozen=True)
class View:
    """One page of the app: its URL path, its title in the navigation, and its module."""

    slug: str
    label: str
    module: ModuleType

    @property
    def params(self) -> tuple:
        return tuple(getattr(self.module, "PARAMS", ()))


VIEWS: tuple[View, ...] = (
    View("heatmap", "Heatmap", heatmap),
    View("sinusoids", "Sinusoids", sinusoids),
    View("wavelengths", "Wavelengths", wavelengths),
    View("similarity", "Similarity", similarity),
    View("uniqueness", "Uniqueness", uniqueness),
    View("rotation", "Relative position", rotation),
    View("embeddings", "Embeddings", embeddings),
    View("conventions", "Conventions", conventions),
    View("example", "Worked example", example),
)
BY_SLUG = {view.slug: view for view in VIEWS}
DEFAULT = VIEWS[0]
