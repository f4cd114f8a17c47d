"""Layout helpers shared by the manipulation scene generators: spawn, instruction text, placement."""

from __future__ import annotations

import numpy as np

from bspatial.catalog.tasks import VARIANT_SEPARATOR
from bspatial.world.spec import ObjectSpec, RobotSpawn
from bspatial.tasks.base import LayoutRejected
from bspatial.world.relations import object_box

SPAWN = RobotSpawn(x=0.0, y=0.0, yaw=0.0)
"""Manipulation scenes are laid out around a robot at the origin facing +x (left = +y)."""

# Visible band of the head camera at tabletop heights (head 1.45 m up, 35 deg down, 60 deg fov):
# object centres within |y| <= this at x ~0.7-1.2 m land well inside the 224x224 frame.
VISIBLE_HALF_WIDTH = 0.42

DISPLAY_NAMES = {"kettle": "electric kettle"}
"""Reference names whose instruction wording differs from the variant id (Table S2 example text)."""


def split_variant(variant: str) -> tuple[str, str]:
    """'closest/sofa' -> ('closest', 'sofa')."""
    relation, _, reference = variant.partition(VARIANT_SEPARATOR)
    return relation, reference


def relation_phrase(relation: str, reference: str) -> str:
    """'closest' + 'sofa' -> 'closest to the sofa'; 'farthest' -> 'farthest from the ...'."""
    preposition = {"closest": "to", "farthest": "from"}[relation]
    return f"{relation} {preposition} the {DISPLAY_NAMES.get(reference, reference)}"


def footprint_radius(obj: ObjectSpec) -> float:
    """Radius of the circle enclosing the object's xy footprint (for non-overlap checks)."""
    lo, hi = object_box(obj).aabb()
    return float(np.linalg.norm((hi - lo)[:2]) / 2)


def scatter(rng: np.random.Generator, radii, bounds, *, gap: float = 0.02, avoid=(), tries: int = 60) -> list[np.ndarray]:
    """Draw non-overlapping xy centres for circles of ``radii`` inside ``bounds`` (x0, x1, y0, y1).

    ``avoid`` holds (xy, radius) circles already occupied. Raises LayoutRejected when it cannot.
    """
    placed: list[tuple[np.ndarray, float]] = [(np.asarray(c, float), float(r)) for c, r in avoid]
    out = []
    x0, x1, y0, y1 = bounds
    for r in radii:
        for _ in range(tries):
            if x1 - x0 < 2 * r or y1 - y0 < 2 * r:
                raise LayoutRejected("surface too small for the objects")
            c = np.array([rng.uniform(x0 + r, x1 - r), rng.uniform(y0 + r, y1 - r)])
            if all(np.linalg.norm(c - p) >= r + q + gap for p, q in placed):
                placed.append((c, r))
                out.append(c)
                break
        else:
            raise LayoutRejected("could not scatter objects without overlap")
    return out


def slots(rng: np.random.Generator, n: int, half_width: float = VISIBLE_HALF_WIDTH) -> np.ndarray:
    """``n`` y positions spread across [-half_width, half_width] with jitter, for upright objects in a
    row (no object hides behind another from the head camera)."""
    edges = np.linspace(-half_width, half_width, n + 1)
    pitch = edges[1] - edges[0]
    return (edges[:-1] + edges[1:]) / 2 + rng.uniform(-0.15, 0.15, n) * pitch
