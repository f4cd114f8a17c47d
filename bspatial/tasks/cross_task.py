"""Spa-Bench's cross-task-object condition on our reach tasks: the same concept, objects of another task.

Spa-Bench (Sec. III.D) tests whether a familiar spatial concept and a familiar motion transfer to
objects normally associated with another task ("reach the second smallest *saucer*" where training
reached plates), and leaves out of its strict aggregate the tasks where no other-task object fits.
Here the instance's scene is kept and every candidate is replaced by an object of the task named in
:data:`CROSS_TASK_OBJECTS`, built by that task's own object builder, then

* scaled uniformly so that its longest bounding-box dimension equals the replaced candidate's (so a
  size rank and its margin carry over exactly), and
* placed with its bounding-box centre over the replaced candidate's (x, y), resting on the same
  surface (same bottom height) with the same yaw;

the instruction names the new category instead of the old one. The instance is then checked again by
the rule that decided its target (its ``measurements``): size rank and the 10% margin, distance rank
and the 15% margin (3D centres move with the new height), the ordinal order and its non-overlap along
the robot-right axis, the bookcase cell of every book; and no replacement's bounding box may overlap
another free object's (or that one's replacement's) more than the replaced candidate's did. When any check fails the
instance raises :class:`~bspatial.tasks.base.NotApplicable` with the reason (the rollout records it
as ``not_applicable``; the condition's table counts them).

Which tasks admit it, and why (the decision is written here so the tables can cite it):

* all eleven reach tasks: their concept (size rank, distance rank, ordinal position, grid cell)
  measures geometry that any rigid object has, so another task's object can carry it;
* no placement task: its concept is a relation of the one manipulated object, whose grasp, carry
  height and goal region (a point checked clear for that object's footprint, the compartment band of
  that object) are calibrated per object; a swapped object would change the motion, not only the
  object, so the condition would not isolate object-task association. The placement tasks raise
  NotApplicable and are outside the condition's aggregate, as Spa-Bench leaves Object State out.

Example:
    >>> from bspatial.tasks.registry import sample_instance
    >>> inst = cross_task_instance(sample_instance("reach_plate", "largest", 3))
    >>> inst.instruction
    'Reach the largest saucer from the countertop.'
    >>> sorted({inst.scene.object(n).category for n in inst.candidates})
    ['saucer']
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from bspatial.catalog.thresholds import DISTANCE_MARGIN, ORDINAL_GAP_M, SIZE_MARGIN
from bspatial.tasks.base import NotApplicable, TaskInstance
from bspatial.world import objects
from bspatial.world.assets import materialised
from bspatial.world.relations import min_adjacent_gap, object_box, pick_by_rank
from bspatial.world.spec import ObjectSpec, Pose

CLEARANCE_M = 0.005
"""Tolerance of the overlap test (an overlap volume below CLEARANCE_M**3 is none)."""

Builder = Callable[[str, int, np.random.Generator], ObjectSpec]


@dataclass(frozen=True)
class CrossTaskObjects:
    """What replaces a reach task's candidates.

    Attributes:
        source_task: the Table S2 task the replacement objects belong to.
        noun: the candidates' noun in the instruction (replaced once, as a whole phrase).
        replacement: the new noun.
        build: ``(name, index, rng) -> ObjectSpec`` at the origin (the source task's own builder).
    """

    source_task: str
    noun: str
    replacement: str
    build: Builder


def _toy(name: str, index: int, rng: np.random.Generator) -> ObjectSpec:
    category = sorted(objects.TOYS)[index % len(objects.TOYS)]
    return objects.toy(name, category, float(np.mean(objects.TOYS[category])), (0, 0, 0), rng)


def _food(name: str, index: int, rng: np.random.Generator) -> ObjectSpec:
    category = sorted(objects.FOOD_ITEMS)[index % len(objects.FOOD_ITEMS)]
    return objects.food_item(name, category, float(np.mean(objects.FOOD_ITEMS[category][0])), (0, 0, 0))


CROSS_TASK_OBJECTS: dict[str, CrossTaskObjects] = {
    # Size rank: the replacements are scaled to the replaced candidates' longest dimension.
    "reach_plate": CrossTaskObjects("place_saucer", "plate", "saucer", lambda n, i, r: objects.saucer(n, (0, 0, 0))),
    "reach_food_item": CrossTaskObjects("reach_toys", "food item", "toy", _toy),
    "reach_item": CrossTaskObjects("reach_toys", "food item", "toy", _toy),
    "reach_toys": CrossTaskObjects("reach_food_item", "toy", "food item", _food),
    # Distance rank to a reference.
    "reach_dice": CrossTaskObjects("reach_food_item", "dice", "apple",
                                   lambda n, i, r: objects.food_item(n, "apple", 0.08, (0, 0, 0))),
    "reach_paperback_book": CrossTaskObjects("reach_dice", "paperback book", "board game",
                                             lambda n, i, r: objects.board_game(n, (0, 0, 0), r)),
    "reach_pizza_plate": CrossTaskObjects("place_saucer", "pizza plate", "saucer",
                                          lambda n, i, r: objects.saucer(n, (0, 0, 0))),
    "reach_soda_can": CrossTaskObjects("reach_storage_box", "can of soda", "storage box",
                                       lambda n, i, r: objects.storage_box(n, (0.3, 0.3, 0.5), (0, 0, 0))),
    "reach_storage_box": CrossTaskObjects("place_tupperware_in_fridge", "storage box", "tupperware",
                                          lambda n, i, r: objects.tupperware(n, (0, 0, 0))),
    # Ordinal position and grid cell.
    "reach_tool": CrossTaskObjects("place_carving_knife", "tool", "carving knife",
                                   lambda n, i, r: objects.carving_knife(n, (0, 0, 0))),
    "reach_hardback": CrossTaskObjects("reach_paperback_book", "hardback book", "paperback book",
                                       lambda n, i, r: objects.paperback_book(n, (0, 0, 0), r)),
}
"""Per admitted task: the other task whose objects replace its candidates (module docstring)."""


def admits_cross_task(task: str) -> bool:
    """Whether ``task`` has a cross-task-object condition (:data:`CROSS_TASK_OBJECTS`)."""
    return task in CROSS_TASK_OBJECTS


def _scaled(obj: ObjectSpec, factor: float) -> ObjectSpec:
    obj = materialised(obj)   # rescale the meshes with the primitives
    parts = tuple(dataclasses.replace(p, size=tuple(factor * v for v in p.size),
                                      pose=Pose(tuple(factor * v for v in p.pose.position), p.pose.quat))
                  for p in obj.parts)
    return dataclasses.replace(obj, parts=parts, mass=obj.mass * factor ** 3)


def _placed(original: ObjectSpec, proto: ObjectSpec, quat) -> ObjectSpec:
    at_origin = dataclasses.replace(proto, pose=Pose((0.0, 0.0, 0.0), quat))
    scaled = _scaled(at_origin, object_box(original).longest / object_box(at_origin).longest)
    (lo, hi), (olo, ohi) = object_box(scaled).aabb(), object_box(original).aabb()
    shift = np.array([(olo[0] + ohi[0]) / 2 - (lo[0] + hi[0]) / 2, (olo[1] + ohi[1]) / 2 - (lo[1] + hi[1]) / 2,
                      olo[2] - lo[2]])
    return dataclasses.replace(scaled, pose=Pose(tuple(shift), quat))


def _overlap(a: ObjectSpec, b: ObjectSpec) -> float:
    (alo, ahi), (blo, bhi) = object_box(a).aabb(), object_box(b).aabb()
    return float(np.prod(np.clip(np.minimum(ahi, bhi) - np.maximum(alo, blo), 0.0, None)))


def _replacement(original: ObjectSpec, proto: ObjectSpec) -> ObjectSpec:
    """``proto`` scaled to ``original``'s longest dimension, centred over it, resting at its bottom, turned by
    0 or 90 degrees of yaw from ``original``'s, whichever overlaps ``original``'s bounding box more (a knife
    replacing a tool lies along the tool)."""
    w, x, y, z = original.pose.quat
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)            # (w, x, y, z) times a quarter turn about z
    turned = (w * c - z * s, x * c + y * s, y * c - x * s, w * s + z * c)
    options = [_placed(original, proto, original.pose.quat), _placed(original, proto, turned)]
    return max(options, key=lambda o: _overlap(o, original))


def _reference_point(instance: TaskInstance, scene) -> np.ndarray | None:
    names = {o.name for o in scene.objects}
    return object_box(scene.object(instance.reference)).center if instance.reference in names else None


def _recheck(instance: TaskInstance, scene, renamed: dict[str, str]) -> str | None:
    """Why the target or its margin did not survive the replacement (None when it did)."""
    m = instance.measurements
    new = {renamed[n]: scene.object(renamed[n]) for n in instance.candidates}
    target = renamed[instance.target]
    if "longest_dimension" in m:
        sizes = {n: object_box(o).longest for n, o in new.items()}
        picked, _ = pick_by_rank(sizes, instance.variant)
        if picked != target or min_adjacent_gap(sizes.values()) < SIZE_MARGIN:
            return "the size rank or its 10% margin changed"
    if "distance_to_reference" in m:
        point = _reference_point(instance, scene)
        if point is not None:   # a wall reference measures along its horizontal normal: (x, y) are kept
            relation = instance.variant.split("/")[0]
            distances = {n: float(np.linalg.norm(object_box(o).center - point)) for n, o in new.items()}
            picked, margin = pick_by_rank(distances, relation)
            if picked != target or margin < DISTANCE_MARGIN:
                return "the distance rank or its 15% margin changed"
    if "projection_on_right_axis" in m:
        axis = np.asarray(m["right_axis"], float)
        spans = {}
        for n, o in new.items():
            lo, hi = object_box(o).aabb()
            corners = np.array([[lo[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]], [hi[0], lo[1]]]) @ axis
            spans[n] = (float(np.dot(object_box(o).center[:2], axis)), corners.min(), corners.max())
        order = [renamed[n] for n in m["left_to_right"]]
        for a, b in zip(order, order[1:]):
            if spans[b][0] - spans[a][0] < ORDINAL_GAP_M or spans[b][1] <= spans[a][2]:
                return "ordinal neighbours overlap along the robot-right axis"
    if "cell" in m:
        cells = {k: tuple(v) for k, v in m["cells"].items()}
        for old, cell in m["cell"].items():
            c = object_box(new[renamed[old]]).center
            inside = [k for k, (x0, x1, y0, y1, z0, z1) in cells.items()
                      if x0 <= c[0] <= x1 and y0 <= c[1] <= y1 and z0 <= c[2] <= z1]
            if inside != [cell]:
                return f"{renamed[old]} left its bookcase cell {cell}"
    return None


def cross_task_instance(instance: TaskInstance) -> TaskInstance:
    """``instance`` with its candidates replaced by another task's objects (module docstring).

    Raises:
        NotApplicable: the task admits no cross-task objects, or the replaced scene breaks a rule.
    """
    spec = CROSS_TASK_OBJECTS.get(instance.task)
    if spec is None:
        raise NotApplicable(f"task {instance.task!r} admits no cross-task objects (a placement concept is a relation "
                            f"of its own object; see bspatial.tasks.cross_task)")
    pattern = re.compile(rf"\b{re.escape(spec.noun)}\b")
    if len(pattern.findall(instance.instruction)) != 1:
        raise NotApplicable(f"task {instance.task!r}: the instruction {instance.instruction!r} does not name "
                            f"{spec.noun!r} exactly once")
    rng = np.random.default_rng([instance.seed or 0, 0xC7])   # the replacements' own draws; the scene's are kept
    renamed: dict[str, str] = {}
    replaced: dict[str, ObjectSpec] = {}
    for i, name in enumerate(instance.candidates):
        proto = spec.build("proto", i, rng)
        renamed[name] = f"{proto.category}_{i}"
        replaced[name] = dataclasses.replace(_replacement(instance.scene.object(name), proto), name=renamed[name])
    kept = [o for o in instance.scene.objects if o.name not in replaced]
    if {o.name for o in kept} & set(renamed.values()):
        raise NotApplicable(f"task {instance.task!r}: a scene object already has a replacement's name")
    # Round objects' boxes overlap at the corners when the objects do not, so the test is relative: no
    # replacement's box may overlap another free object's (or its replacement's) more than the replaced
    # candidate's box overlapped the original (the original scene passed the task's own spacing rules).
    originals = [o for o in instance.scene.objects if not o.static]
    for name, obj in replaced.items():
        for other in originals:
            if other.name == name:
                continue
            now, before = _overlap(obj, replaced.get(other.name, other)), _overlap(instance.scene.object(name), other)
            if now > before + CLEARANCE_M ** 3:
                raise NotApplicable(f"task {instance.task!r} seed {instance.seed}: {obj.name} would touch "
                                    f"{renamed.get(other.name, other.name)}")
    scene = dataclasses.replace(instance.scene, objects=tuple(replaced.get(o.name, o) for o in instance.scene.objects))
    why = _recheck(instance, scene, renamed)
    if why:
        raise NotApplicable(f"task {instance.task!r} seed {instance.seed}: with {spec.replacement}s {why}")
    return dataclasses.replace(instance, scene=scene, instruction=pattern.sub(spec.replacement, instance.instruction),
                               candidates=tuple(renamed[n] for n in instance.candidates),
                               target=renamed[instance.target],
                               measurements=_renamed_measurements(instance.measurements, renamed))


def _renamed_measurements(measurements, renamed: dict[str, str]) -> dict:
    """The instance's measurements under the replacements' names (per-candidate dicts and name lists)."""
    out = {}
    for key, value in measurements.items():
        if isinstance(value, dict) and set(value) <= set(renamed):
            value = {renamed[n]: v for n, v in value.items()}
        elif isinstance(value, list) and value and all(isinstance(v, str) and v in renamed for v in value):
            value = [renamed[n] for n in value]
        out[key] = value
    return out


__all__ = ["CLEARANCE_M", "CROSS_TASK_OBJECTS", "CrossTaskObjects", "admits_cross_task", "cross_task_instance"]
