"""Same-category size views for general single-frame size questions (Appendix 11.1).

The paper: "Size concerns comparisons of physical size among objects of the same category". An activity
apartment holds one object per category (options name objects by category), so its ordinary views can only
compare a pillow with a mug, which a text-only model answers from typical sizes alone. A *size view* is the
apartment with the activity's small objects taken off and :data:`SIZE_SET` objects of one category put on the
work surface, their longest dimensions drawn so that the longest beats every other by the size margin. The
frame carries numbered marks (numbers in seeded order) and the options name them ("mug 1".."mug 4"), so the
options are distinct and only the image tells them apart.

Lengths are drawn from the category's length range widened by :data:`LENGTH_SPREAD` on each side: one
category's objects vary beyond its typical range (a small and a large mug), and within the narrow typical
ranges of :data:`~bspatial.world.household.RENDERABLE` a 10% margin over three rivals is rarely met.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from bspatial.catalog.thresholds import SIZE_MARGIN
from bspatial.construction.questions.activities import ActivityScene, load_activity
from bspatial.world.household import RENDERABLE, ObjectKind, make_object
from bspatial.world.spec import RobotSpawn, SceneSpec

SIZE_SET = 4
"""Objects of the one category in a size view: the four options of its question."""
LENGTH_SPREAD = (0.75, 1.3)
"""A size set's lengths are drawn from (0.75 x low, 1.3 x high) of the category's typical range."""
SIZED_SHAPES = ("box", "cylinder", "sphere", "bottle", "pan", "builder:food", "builder:plate", "builder:toy")
"""Shapes whose rendered longest dimension is the drawn length (the other builders have fixed sizes)."""
LENGTH_DRAWS = 60
"""Draws of a set's lengths (and footprints) before the view is given up."""
VIEW_DISTANCE_M = (1.0, 1.4)
"""The robot stands this far in front of the work surface, facing it."""


def size_kinds(activity: str, rng: np.random.Generator) -> list[ObjectKind]:
    """Candidate categories for a size set: the activity's own sized, table-top kinds (bddl order), then the
    other sized kinds in seeded order."""
    own = [RENDERABLE[s] for s in load_activity(activity).synsets]
    pool = sorted({k.category: k for k in RENDERABLE.values()}.values(), key=lambda k: k.category)
    fill = [pool[i] for i in rng.permutation(len(pool))]
    out, seen = [], set()
    for kind in own + fill:
        if kind.shape in SIZED_SHAPES and not kind.floor and kind.category not in seen:
            seen.add(kind.category)
            out.append(kind)
    return out


def _lengths(kind: ObjectKind, max_length: float, rng: np.random.Generator) -> list[float] | None:
    lo, hi = kind.length[0] * LENGTH_SPREAD[0], min(kind.length[1] * LENGTH_SPREAD[1], max_length)
    if hi <= lo:
        return None
    lengths = sorted((float(v) for v in rng.uniform(lo, hi, SIZE_SET)), reverse=True)
    # The longest must beat the runner-up by the size margin (then it beats every other option too).
    return lengths if (lengths[0] - lengths[1]) / lengths[0] >= SIZE_MARGIN else None


def size_view(ascene: ActivityScene, rng: np.random.Generator) -> tuple[SceneSpec, tuple[str, ...]] | None:
    """The apartment with a seeded same-category set on its work surface and the robot facing it, and the
    set's object names; None when no kind fits the surface within :data:`LENGTH_DRAWS` draws."""
    surface = next(s for s in ascene.scene.surfaces if s.owner == "support_0")
    x0, x1 = float(surface.polygon[:, 0].min()), float(surface.polygon[:, 0].max())
    y0, y1 = float(surface.polygon[:, 1].min()), float(surface.polygon[:, 1].max())
    kinds = size_kinds(ascene.activity, rng)
    for _ in range(LENGTH_DRAWS):
        kind = kinds[int(rng.integers(min(len(kinds), 3)))]   # mostly the activity's own categories
        lengths = _lengths(kind, (x1 - x0) - 0.16, rng)
        if lengths is None:
            continue
        order = rng.permutation(SIZE_SET)   # which name gets which length: the names do not rank
        placed: list[tuple[float, float, float]] = []
        for length in lengths:
            r = length / 2 + 0.03
            for _ in range(40):   # non-overlapping footprints on the top, as the activity objects are placed
                xy = (float(rng.uniform(x0 + r, x1 - r)), float(rng.uniform(y0 + r, y1 - r)))
                if all(math.hypot(xy[0] - p[0], xy[1] - p[1]) > r + p[2] for p in placed):
                    placed.append((*xy, r))
                    break
            else:
                break
        if len(placed) < SIZE_SET:
            continue
        objects = [make_object(kind, f"{kind.category}_{int(order[i])}", lengths[i],
                               (placed[i][0], placed[i][1], surface.height), float(rng.uniform(-0.6, 0.6)) + math.pi / 2,
                               rng) for i in range(SIZE_SET)]
        keep = tuple(o for o in ascene.scene.objects if o.name not in set(ascene.object_names))
        x = ascene.support_front_x + float(rng.uniform(*VIEW_DISTANCE_M))
        y = ascene.support_y + float(rng.uniform(-0.3, 0.3))
        robot = RobotSpawn(x, y, math.atan2(ascene.support_y - y, ascene.support_front_x - 0.3 - x))
        scene = dataclasses.replace(ascene.scene, objects=keep + tuple(objects), robot=robot)
        return scene, tuple(sorted(o.name for o in objects))
    return None
