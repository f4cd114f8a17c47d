"""A fourth visible object of the candidates' category, for three-candidate distance questions.

Task-grounded VQA offers four options that all name something in the frame. Three-candidate distance tasks
(``reach_dice``, ``reach_soda_can``, ``reach_storage_box``, ...) take their fourth option from the frame's
other visible objects when one loses to the answer by the distance margin
(else :class:`~bspatial.construction.questions.templates.NoFourthObject`). Their scenes hold few other objects: a bed and the
board game; a sofa, a coffee table and a bottom cabinet. For "farthest from the coffee table" such an
object has to be nearer the coffee table than the farthest candidate by 15%, for "closest to the board
game" farther than the closest dice by 15% (and the bed, whose centre lies under the board game, is not),
and on the paper preset four variants found none in any draw, so their quota moved to other variants.

Then the question's frame gets the other remedy: a fourth visible object of the
category. :func:`decoy_scene` copies a non-answer candidate (same shape, size and orientation, a look of its
own) to a seeded
free spot on the candidates' support, inside the head camera's view, at a distance from the reference that
loses to the answer by the margin, so the task's answer and its margin are unchanged. The copy appears
only in the VQA frame; the task instance, its episodes and its IR query keep the task's scene.
"""

from __future__ import annotations

import colorsys
import dataclasses
import math

import numpy as np

from bspatial.catalog.thresholds import DISTANCE_MARGIN
from bspatial.catalog.robot import BASE_RADIUS_M
from bspatial.construction.items.frames import FrameRecord
from bspatial.tasks.base import TaskInstance
from bspatial.tasks.manipulation.common import split_variant
from bspatial.world import relations
from bspatial.world.assets import materialised
from bspatial.world.spec import ObjectSpec, Pose, SceneSpec

DECOY_STREAM = 2
"""Second seed word of the decoy's placement generator (its first is the layout's draw seed)."""
DECOY_TRIES = 400
"""Seeded spots tried before the draw is rejected."""
CLEARANCE_M = 0.05
"""Free gap (m) between the copy's footprint and every other object's (walls included)."""
ROBOT_KEEP_OUT_M = round(BASE_RADIUS_M + CLEARANCE_M, 6)
"""The robot base's keep-out radius (m) for floor-standing copies: its planning radius plus the gap (0.45 m)."""
REGION_M = 0.6
"""Spots are drawn within this distance (m) of the candidates' footprints: the copy stands among them."""
EDGE_PX = 40
"""The copy's projected centre keeps this far (px) inside the frame, so its mark and most of it are in view."""
MARGIN_SLACK = 0.02
"""The copy loses by the distance margin plus this (relative), so the question's own check never sits on the edge."""
SUPPORT_DZ_M = 0.01
"""A candidate stands on a surface when its bottom is within this of the surface's height."""


def _footprint(center, extents, rotation):
    """The xy convex hull of an oriented box (shapely polygon)."""
    from shapely.geometry import MultiPoint

    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
    corners = np.asarray(center, float) + (signs * np.asarray(extents, float) / 2) @ np.asarray(rotation, float).T
    return MultiPoint([tuple(c[:2]) for c in corners]).convex_hull


def _support_region(instance: TaskInstance, record: FrameRecord, candidates):
    """Where the copy may stand: the surface the candidates stand on, or (floor-standing candidates) the
    room the walls enclose; None when the candidates share no support."""
    from shapely.geometry import Polygon
    from shapely.ops import unary_union

    specs = {o.name: o for o in instance.scene.objects}
    heights = {round(float(specs[n].pose.position[2]), 3) for n in candidates}   # bottom centres
    if len(heights) != 1:
        return None, None
    height = heights.pop()
    for surface in instance.scene.surfaces:
        if abs(surface.height - height) <= SUPPORT_DZ_M:
            region = Polygon(surface.polygon)
            if all(region.contains(_point(record, n)) for n in candidates):
                return region, surface.owner
    if height > SUPPORT_DZ_M:
        return None, None
    walls = [_footprint(s.center, s.extents, s.rotation) for s in record.objects.values() if s.category == "walls"]
    return (unary_union(walls).convex_hull if walls else None), ""


def _point(record: FrameRecord, name: str):
    from shapely.geometry import Point

    return Point(*record.objects[name].center[:2])


def _in_view(record: FrameRecord, point) -> tuple[float, float] | None:
    uv, z = record.frame.project(np.asarray(point, float)[None])
    w, h = record.image_size
    u, v = float(uv[0, 0]), float(uv[0, 1])
    return (u, v) if z[0] > 0 and EDGE_PX <= u < w - EDGE_PX and EDGE_PX <= v < h - EDGE_PX else None


def decoy_scene(instance: TaskInstance, record: FrameRecord, rng: np.random.Generator) -> tuple[SceneSpec, str] | None:
    """The task's scene with a copy of one non-answer candidate added, and the copy's name; None when no
    free spot within :data:`DECOY_TRIES` tries qualifies.

    Args:
        instance: a distance task's instance (candidates, reference, variant "closest/<ref>" or "farthest/<ref>").
        record: its head frame as captured (object boxes, camera).
        rng: the placement's generator.
    """
    from shapely import affinity
    from shapely.geometry import Point
    from shapely.ops import unary_union

    from bspatial.construction.questions.templates import FOURTH_MARK_CLEARANCE_PX, reference_distance

    measure = reference_distance(record, instance.reference)
    relation, _ = split_variant(instance.variant)
    names = list(instance.candidates)
    dist = {n: measure(record.objects[n].center) for n in names}
    answer, _ = relations.pick_by_rank(dist, relation)
    best = dist[answer]
    region, owner = _support_region(instance, record, names)
    if region is None:
        return None
    others = [n for n in names if n != answer]
    source = others[int(rng.integers(len(others)))]
    state = record.objects[source]
    shape = _footprint(state.center, state.extents, state.rotation)
    obstacles = [_footprint(s.center, s.extents, s.rotation) for n, s in record.objects.items()
                 if n != owner and s.category not in ("floor", "robot") and not n.startswith("floor")]
    if owner == "" and record.base_pose is not None:   # floor-standing: keep off the robot's base
        obstacles.append(Point(*record.base_pose[:2]).buffer(ROBOT_KEEP_OUT_M))
    blocked = unary_union(obstacles).buffer(CLEARANCE_M)
    near = unary_union([_footprint(record.objects[n].center, record.objects[n].extents, record.objects[n].rotation)
                        for n in names]).buffer(REGION_M)
    allowed = region.intersection(near)
    if allowed.is_empty:
        return None
    marks = [record.objects[n].center_px for n in names if record.objects[n].center_px is not None]
    x0, y0, x1, y1 = allowed.bounds
    for _ in range(DECOY_TRIES):
        x, y = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
        dx, dy = x - float(state.center[0]), y - float(state.center[1])
        moved = affinity.translate(shape, dx, dy)
        if not allowed.contains(moved) or moved.intersects(blocked):
            continue
        center = np.array([x, y, float(state.center[2])])
        d = measure(center)
        loses = d > best if relation == "closest" else d < best
        if not loses or relations.relative_gap(d, best) < DISTANCE_MARGIN + MARGIN_SLACK:
            continue
        uv = _in_view(record, center)
        if uv is None or any(math.hypot(uv[0] - a, uv[1] - b) < FOURTH_MARK_CLEARANCE_PX for a, b in marks):
            continue
        specs = {o.name: o for o in instance.scene.objects}
        look = specs[names[int(rng.integers(len(names)))]]
        copy = _restyled(specs[source], look, float(rng.uniform(0.0, 1.0)))
        return _with_copy(instance.scene, copy, dx, dy)
    return None


def _restyled(spec: ObjectSpec, look: ObjectSpec, hue_turn: float) -> ObjectSpec:
    """``spec``'s geometry with a look of its own. A plain twin of a non-answer candidate would tell a viewer
    that neither twin is the answer. Untextured colours are turned by ``hue_turn`` (a fraction of the colour
    wheel; the storage boxes' colours are drawn at random, so a turned colour is as likely as any); textured
    parts (the soda cans' labels come from a small palette) take the look of ``look``, a candidate drawn at
    random, the answer included. Greys (the dice, handles) stay as they are."""
    spec, look = materialised(spec), materialised(look)   # recolour the meshes with the primitives
    parts = []
    for part, other in zip(spec.parts, look.parts if len(look.parts) == len(spec.parts) else spec.parts):
        if part.texture is not None:
            parts.append(dataclasses.replace(part, texture=other.texture, rgba=other.rgba))
            continue
        h, sat, v = colorsys.rgb_to_hsv(*part.rgba[:3])
        rgb = colorsys.hsv_to_rgb((h + hue_turn) % 1.0, sat, v)
        parts.append(dataclasses.replace(part, rgba=(*rgb, part.rgba[3])))
    return dataclasses.replace(spec, parts=tuple(parts))


def _with_copy(scene: SceneSpec, spec: ObjectSpec, dx: float, dy: float) -> tuple[SceneSpec, str]:
    taken = {o.name for o in scene.objects}
    name = next(f"{spec.category}_{k}" for k in range(len(taken) + 1) if f"{spec.category}_{k}" not in taken)
    x, y, z = spec.pose.position
    copy = dataclasses.replace(spec, name=name, pose=Pose((x + dx, y + dy, z), spec.pose.quat))
    return dataclasses.replace(scene, objects=scene.objects + (copy,)), name
