"""Clutter: the household objects that stand on a task scene's furniture besides the candidates.

Real counters, desks and beds carry mugs, bottles, towels and pillows; a scene that holds only the candidates
is easier to read than any home (a frontier VLM answered 97.5% of the task-grounded manipulation items of the
clean scenes). :func:`add_clutter` adds :data:`CLUTTER_PER_SCENE` such objects to a sampled layout, on the
furniture tops its generator declared as surfaces, while every task rule still holds:

* **a unique target**: clutter categories come from a per-furniture list (:data:`CLUTTER_KINDS`) that holds
  nothing an instruction of Table S2 names or could be read to name (no food, toys, dice, books, plates,
  tools, knives, bowls, kettles, cans, boxes); tasks whose instruction names every object of a surface
  ("the largest *item* from the countertop") get none there (:data:`NO_CLUTTER_TASKS`);
* **visible, reachable candidates**: nothing stands between the robot and a candidate, the manipulated
  object, the reference or the placement goal (a corridor as wide as both objects plus
  :data:`CORRIDOR_GAP_M` from the robot to each), and every clutter object keeps :data:`CLEARANCE_M` from
  every other object on its surface, so it neither hides them from the head camera nor meets the hand;
* **placement goals stay free and say nothing**: clutter keeps out of a disc around the reference that
  holds the goal regions of *both* sides (a one-sided gap would give the instructed side away), and never
  goes into a container's layers (they are the answer space);
* **the same seed, the same bytes, the same layouts**: the clutter's generator is seeded from the layout
  (its scene name and its objects' poses), not drawn from the task's generator, so the candidates of every
  seed are what they were without clutter.

Candidates' step budgets and the experts' success are re-measured with clutter (``bspatial tasks check``).
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from bspatial.world.household import ObjectKind, kind_of, make_object
from bspatial.world.relations import object_box
from bspatial.world.spec import ObjectSpec, SceneSpec, Surface

CLUTTER_PER_SCENE = (3, 5)
"""Clutter objects per scene (inclusive range; fewer when the free space holds fewer)."""
CLEARANCE_M = 0.08
"""Free gap between a clutter object's footprint and any other object on its surface."""
CORRIDOR_GAP_M = 0.04
"""Extra half width of the robot-to-object corridors clutter keeps out of (beyond both footprints)."""
FLOOR_CORRIDOR_GAP_M = 0.3
"""On the floor the robot drives to the candidate: the corridor's extra half width is the base's (0.27 m, the
R1Pro shell's half width) plus a margin (measured: with :data:`CORRIDOR_GAP_M` a backpack 0.33 m off the line
to a soda can stopped the expert's base, 1 of 120 episodes)."""
EDGE_MARGIN_M = 0.03
"""A clutter object's footprint stays this far inside its surface's edge."""
GOAL_KEEP_OUT_M = 0.15
"""Directional placement: clutter keeps this far (plus its radius) outside the disc around the reference
that reaches the goal point, on both sides."""
VIEW_HALF_WIDTH_M = 0.6
"""Clutter stands within this lateral distance of the robot's heading line, where the head camera sees it
(at the counters' 0.7-1.2 m it spans about +-0.55 m); clutter out of view would change nothing a viewer sees."""
FLOOR_VIEW_SLOPE = 0.6
"""On the floor, the head camera's view widens with the distance: clutter there stands within this many metres
of the heading line per metre ahead (or :data:`VIEW_HALF_WIDTH_M`, whichever is wider)."""
PLACEMENT_TRIES = 80
"""(Category, size, position) draws per clutter object before it is left out."""

_KITCHEN = ("mug", "water_glass", "salt_shaker", "pitcher", "olive_oil_bottle", "vinegar_bottle", "paper_towel",
            "sponge", "dishtowel", "milk_carton", "water_bottle", "liquid_soap_bottle", "vase", "wine_bottle")
_TABLE = ("mug", "water_glass", "salt_shaker", "pitcher", "wine_bottle", "vase", "wineglass")
_DESK = ("mug", "water_glass", "vase", "water_bottle", "laptop")
_BED = ("pillow", "sock", "hand_towel", "newspaper", "laptop")
# Low things a living-room floor holds (at most ~0.5 m tall, so no furniture a question names hides behind
# one from the head camera); no can, bin or box: the floor tasks' instructions name cans of soda and boxes.
_FLOOR = ("bucket", "wicker_basket", "backpack", "pot_plant", "pillow", "sock", "newspaper")
FLOOR = "floor"
"""The key of :data:`CLUTTER_KINDS` for a floor surface (owner ``""``): a generator whose candidates stand on
the floor declares the floor area around them as a surface, and clutter stands there too."""
CLUTTER_KINDS: dict[str, tuple[str, ...]] = {
    "countertop": _KITCHEN, "breakfast_table": _TABLE, "desk": _DESK, "bed": _BED, FLOOR: _FLOOR}
"""Clutter categories by the category of the furniture whose top they stand on, or :data:`FLOOR` (other
furniture gets none: shelf and container layers are placement answer spaces)."""
NO_CLUTTER_TASKS = frozenset({"reach_item"})
"""Tasks whose instruction names every object on the surface ("the largest item from the countertop")."""


def clutter_rng(scene: SceneSpec) -> np.random.Generator:
    """The clutter's generator, seeded from the layout itself (scene name, object names and poses)."""
    digest = hashlib.sha256(scene.name.encode())
    for obj in scene.objects:
        digest.update(obj.name.encode())
        digest.update(np.round(np.asarray(obj.pose.position, float), 4).tobytes())
    return np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))


def _footprint(aabb: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, float]:
    lo, hi = aabb
    return (lo[:2] + hi[:2]) / 2, float(np.linalg.norm((hi - lo)[:2]) / 2)


_PLAIN_SHAPES = ("box", "cylinder", "bottle")
"""The shapes clutter kinds may have: :func:`_kind_footprint` knows their footprints without building them."""


def _kind_footprint(kind: ObjectKind, length: float, yaw: float, xy) -> tuple[np.ndarray, float]:
    """:func:`_footprint` of ``make_object(kind, _, length, (*xy, z), yaw, _)``, computed without building it
    (building every try's object took 80% of a cluttered scene's sampling): those shapes' parts are centred
    on the object's origin, and the widest part spans ``proportions[0] x proportions[1]`` of ``length`` for a
    box, a disc of diameter ``proportions[0]`` for a cylinder or bottle (object_box treats a disc as its
    square, so the box turns with the yaw)."""
    px, py = kind.proportions[0] * length, kind.proportions[1] * length
    a, b = (px / 2, py / 2) if kind.shape == "box" else (px / 2, px / 2)
    c, s = abs(float(np.cos(yaw))), abs(float(np.sin(yaw)))
    return np.asarray(xy, float)[:2], float(np.hypot(c * a + s * b, s * a + c * b))


_NOT_PLAIN = sorted(c for cs in CLUTTER_KINDS.values() for c in cs if kind_of(c).shape not in _PLAIN_SHAPES)
if _NOT_PLAIN:
    raise ValueError(f"CLUTTER_KINDS must have shapes {_PLAIN_SHAPES} (see _kind_footprint), got {_NOT_PLAIN}")


def _inside(polygon: np.ndarray, xy: np.ndarray, margin: float) -> bool:
    """``xy`` lies inside the convex counter-clockwise ``polygon``, at least ``margin`` from every edge."""
    for a, b in zip(polygon, np.roll(polygon, -1, axis=0)):
        edge = b - a
        inward = np.array([-edge[1], edge[0]]) / np.linalg.norm(edge)
        if float(np.dot(xy - a, inward)) < margin:
            return False
    return True


def _in_corridor(xy: np.ndarray, radius: float, origin: np.ndarray, end: np.ndarray, end_radius: float,
                 gap: float = CORRIDOR_GAP_M) -> bool:
    """A disc at ``xy`` meets the corridor from ``origin`` to ``end`` (its half width: both radii + ``gap``)."""
    along = end - origin
    length = float(np.linalg.norm(along))
    if length < 1e-9:
        return float(np.linalg.norm(xy - origin)) < radius + end_radius + gap
    t = float(np.clip(np.dot(xy - origin, along) / length ** 2, 0.0, 1.0 + end_radius / length))
    return float(np.linalg.norm(xy - (origin + t * along))) < radius + end_radius + gap


def _stands_at(aabb: tuple[np.ndarray, np.ndarray], height: float) -> bool:
    return abs(float(aabb[0][2]) - height) < 0.03


def _on(surface: Surface, aabb: tuple[np.ndarray, np.ndarray]) -> bool:
    lo, hi = aabb
    return _stands_at(aabb, surface.height) and _inside(surface.polygon, (lo[:2] + hi[:2]) / 2, -0.01)


def _box_distance(xy: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """Distance from ``xy`` to the axis-aligned box [lo, hi] (0 inside)."""
    return float(np.linalg.norm(np.maximum(np.maximum(lo - xy, xy - hi), 0.0)))


def add_clutter(task: str, scene: SceneSpec, protected: tuple[str, ...], goals=(),
                keep_out: tuple[np.ndarray, float] | None = None) -> SceneSpec:
    """``scene`` with clutter on its surfaces (module docstring); deterministic in ``scene``.

    Args:
        task: the task's name (:data:`NO_CLUTTER_TASKS` get none).
        scene: the layout's scene.
        protected: names of the objects a corridor from the robot must keep clear (candidates, the
            manipulated object); every object standing on a top clutter may use is protected too.
        goals: placement goal points (xy), kept clear like protected objects.
        keep_out: an extra (centre xy, radius) disc clutter stays out of.
    """
    if task in NO_CLUTTER_TASKS:
        return scene
    by_name = {o.name: o for o in scene.objects}
    owners = {s.owner: by_name[s.owner].category if s.owner else FLOOR for s in scene.surfaces
              if s.owner in by_name or not s.owner}
    surfaces = [s for s in scene.surfaces if owners.get(s.owner) in CLUTTER_KINDS]
    if not surfaces:
        return scene
    rng = clutter_rng(scene)
    # Every object's world box, once (object_box recomputed per check was a fifth of a draw's sampling).
    aabb = {o.name: object_box(o).aabb() for o in scene.objects}
    origin = np.array([scene.robot.x, scene.robot.y], float)
    heading = np.array([np.cos(scene.robot.yaw), np.sin(scene.robot.yaw)])
    side = np.array([-heading[1], heading[0]])   # the robot's left
    # What stands on a furniture top gets a corridor (a reference, a plate, a book); on the floor that would be
    # the furniture itself, whose corridors (a sofa's is over 2 m wide) would leave no floor free.
    resting = [o.name for o in scene.objects for s in surfaces
               if s.owner and o.name != s.owner and _on(s, aabb[o.name])]
    corridors = [_footprint(aabb[n]) for n in dict.fromkeys((*protected, *resting)) if n in by_name]
    corridors += [(np.asarray(g, float)[:2], 0.06) for g in goals]
    used = {o.category for o in scene.objects}
    added: list[ObjectSpec] = []
    for i in range(int(rng.integers(CLUTTER_PER_SCENE[0], CLUTTER_PER_SCENE[1] + 1))):
        surface = surfaces[int(rng.integers(len(surfaces)))]
        on_floor = not surface.owner
        occupied = [_footprint(aabb[o.name]) for o in (*scene.objects, *added)
                    if o.name != surface.owner and _on(surface, aabb[o.name])]
        # On the floor, furniture whose centre lies outside the area still reaches into it (a sofa behind it):
        # everything standing on the floor keeps the gap, measured to its box.
        floor_boxes = [(aabb[o.name][0][:2], aabb[o.name][1][:2]) for o in (*scene.objects, *added)
                       if _stands_at(aabb[o.name], surface.height)] if on_floor else []
        lo, hi = surface.polygon.min(0), surface.polygon.max(0)
        for _ in range(PLACEMENT_TRIES):   # a fresh category, size and spot per try: small things fit more often
            choices = [c for c in CLUTTER_KINDS[owners[surface.owner]] if c not in used]
            if not choices:
                break
            kind = kind_of(choices[int(rng.integers(len(choices)))])
            length, yaw, xy = float(rng.uniform(*kind.length)), float(rng.uniform(-np.pi, np.pi)), rng.uniform(lo, hi)
            centre, radius = _kind_footprint(kind, length, yaw, xy)
            if not _inside(surface.polygon, centre, radius + EDGE_MARGIN_M):
                continue
            ahead = float(np.dot(centre - origin, heading))
            view = max(VIEW_HALF_WIDTH_M, FLOOR_VIEW_SLOPE * ahead) if on_floor else VIEW_HALF_WIDTH_M
            if abs(float(np.dot(centre - origin, side))) > view:
                continue
            if any(np.linalg.norm(centre - c) < radius + r + CLEARANCE_M for c, r in occupied):
                continue
            if any(_box_distance(centre, lo_, hi_) < radius + CLEARANCE_M for lo_, hi_ in floor_boxes):
                continue
            gap = FLOOR_CORRIDOR_GAP_M if on_floor else CORRIDOR_GAP_M
            if any(_in_corridor(centre, radius, origin, c, r, gap) for c, r in corridors):
                continue
            if keep_out is not None and np.linalg.norm(centre - keep_out[0]) < keep_out[1] + radius:
                continue
            # make_object draws nothing from rng for these shapes: building only the accepted object leaves
            # the generator's stream (and so every later draw) as it was when each try built its object.
            added.append(make_object(kind, f"{kind.category}_clutter_{i}", length,
                                     (float(xy[0]), float(xy[1]), surface.height), yaw, rng))
            aabb[added[-1].name] = object_box(added[-1]).aabb()
            used.add(kind.category)
            break
    return dataclasses.replace(scene, objects=scene.objects + tuple(added)) if added else scene

