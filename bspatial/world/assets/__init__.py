"""The procedural asset library: a visual mesh model per object category.

Families, one module each: :mod:`~bspatial.world.assets.revolve` (tableware, cookware, bottles, bins,
round fruit), :mod:`~bspatial.world.assets.tools` (knives, spatulas, hammers, pens...),
:mod:`~bspatial.world.assets.boxes` (cloths, cartons, containers, bags, laptops...) and
:mod:`~bspatial.world.assets.composed` (elongated food, toys), built from the kit in
:mod:`~bspatial.world.assets.geometry`. :func:`dress` puts a model on an object without changing its
physics (the primitives stay as invisible colliders); the object carries a cheap reference to its meshes
(:class:`~bspatial.world.spec.Look`) that :func:`dressed_parts` resolves when a backend builds it.

Example:
    >>> from bspatial.world.objects import bowl
    >>> dressed = dress(bowl("bowl_0", (0.5, 0.0, 0.9)))
    >>> sorted({p.kind for p in dressed_parts(dressed) if p.visible})
    ['mesh']
"""

from bspatial.world.assets.dressing import (appearance_seed, dress, dressed_parts, fit_pieces, local_box, materialised,
                                            undressed, visual_parts)
from bspatial.world.assets.registry import MODELS, family_of


def meshed_categories() -> tuple[str, ...]:
    """Every category with a mesh model, sorted."""
    return tuple(sorted(MODELS))


__all__ = ["MODELS", "appearance_seed", "dress", "dressed_parts", "family_of", "fit_pieces", "local_box", "materialised",
           "meshed_categories", "undressed", "visual_parts"]
