"""Category -> procedural model, merged from the family modules (one explicit list, no import-time
registration); a category in two families is an error. A model is ``model(rng, extents, rgb)`` and
returns :class:`~bspatial.world.assets.geometry.Piece` s; printed and accented models take one more
argument (the object's texture, its second colour)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import bspatial.world.assets.boxes as boxes
import bspatial.world.assets.composed as composed
import bspatial.world.assets.labelled as labelled
import bspatial.world.assets.revolve as revolve
import bspatial.world.assets.tools as tools
from bspatial.world.assets.geometry import Piece

Model = Callable[[np.random.Generator, np.ndarray, tuple[float, float, float]], list[Piece]]
FAMILIES = {"revolve": {**revolve.MODELS, **revolve.ACCENTED_MODELS}, "tools": tools.MODELS, "composed": composed.MODELS,
            "boxes": {**boxes.MODELS, **boxes.ACCENTED_MODELS}, "labelled": labelled.MODELS}
PRINTED = frozenset(labelled.MODELS)
"""Categories whose model also takes the object's printed texture (``model(rng, extents, rgb, texture)``)."""
ACCENTED = frozenset({**revolve.ACCENTED_MODELS, **boxes.ACCENTED_MODELS})
"""Categories whose model also takes the builder's second colour (``model(rng, extents, rgb, accent)``)."""


def _merge() -> dict[str, Model]:
    merged: dict[str, Model] = {}
    for family, models in FAMILIES.items():
        for category, model in models.items():
            if category in merged:
                raise ValueError(f"category {category!r} has a model in two families (second: {family!r})")
            merged[category] = model
    return merged


MODELS: dict[str, Model] = _merge()
"""Every category with a procedural mesh model."""


def family_of(category: str) -> str:
    """The family module that models ``category``; unknown categories raise listing the known ones."""
    for family, models in FAMILIES.items():
        if category in models:
            return family
    raise ValueError(f"category must be one of {sorted(MODELS)}, got {category!r}")
