"""Placement tasks (Table S2): directional placement on a countertop (carving knife, saucer: left /
right of a reference along the robot-right axis, at least ON_REF_RADIUS_M from it) and container
placement (tupperware into fridge layers 4-6, bowl into bottom-cabinet layers 1-5; layers counted
from the bottom). The instructed goal is a region, so the instance carries the scoring geometry
(:class:`CountertopGeometry` / :class:`ContainerGeometry`) and a checked free goal point."""

from __future__ import annotations

import numpy as np

from bspatial.catalog.thresholds import ON_REF_RADIUS_M
from bspatial.catalog.tasks import TaskSpec
from bspatial.scoring.trace import ContainerGeometry, CountertopGeometry
from bspatial.world import furniture
from bspatial.world.furniture import Shelving, countertop, make_scene, rect_polygon
from bspatial.world.spec import Surface
from bspatial.tasks.base import Layout, LayoutRejected, PlacementGoal
from bspatial.world.relations import object_box, robot_right_axis
from bspatial.world import objects
from bspatial.tasks.manipulation.common import DISPLAY_NAMES, SPAWN, split_variant

GOAL_CLEARANCE_M = 0.12
"""Implementation choice: the goal point keeps this much xy clearance from every other object's footprint."""
GOAL_EDGE_MARGIN_M = 0.08
"""... and this much from the countertop's edges."""
LAYER_BAND_SLACK_M = 0.02
"""Band low end sits this far below a layer's floor (contact penetration, settling)."""

_REFERENCE_BUILDERS = {
    "cutting board": ("cutting_board_0", furniture.cutting_board),
    "microwave": ("microwave_0", furniture.microwave),
    "burner": ("burner_0", furniture.burner),
    "frying pan": ("frying_pan_0", furniture.frying_pan),
    "coffee maker": ("coffee_maker_0", furniture.coffee_maker),
    "kettle": ("electric_kettle_0", furniture.electric_kettle),
    "coffee bottle": ("bottle_of_coffee_0", furniture.bottle_of_coffee),
}


def _aabb_xy(obj):
    lo, hi = object_box(obj).aabb()
    return lo[:2], hi[:2]


def _clearance(point, obj) -> float:
    lo, hi = _aabb_xy(obj)
    d = np.maximum(np.maximum(lo - point, point - hi), 0.0)
    return float(np.linalg.norm(d))


def _directional(spec: TaskSpec, variant: str, rng: np.random.Generator, *, moved_name: str, build_moved,
                 phrase: str) -> Layout:
    side, ref_key = split_variant(variant)
    counter = countertop("countertop_0", front_x=0.55, depth=0.7, width=2.6, seed=int(rng.integers(100)))
    h = counter.height
    back_x = float(rng.uniform(0.98, 1.05))
    ref_y = float(rng.uniform(-0.12, 0.12))
    name, builder = _REFERENCE_BUILDERS[ref_key]
    reference = builder(name, (back_x, ref_y), h)
    # Two of the task's other references stand farther out, one on each side (distractors that never
    # touch the goal regions, so the scene does not give the instructed side away).
    others = [k for k in spec.references if k != ref_key]
    rng.shuffle(others)
    statics = [counter.obj, reference]
    for ref2, y in zip(others[:2], (ref_y + 0.9, ref_y - 0.9)):
        n2, b2 = _REFERENCE_BUILDERS[ref2]
        statics.append(b2(n2, (back_x, y), h))
    axis = robot_right_axis(SPAWN.yaw)
    ref_center = object_box(reference).center[:2]
    half = float(np.max(np.abs((_aabb_xy(reference)[1] - _aabb_xy(reference)[0]) @ np.abs(axis)))) / 2
    sign = 1.0 if side == "right" else -1.0
    offset = max(ON_REF_RADIUS_M + 0.1, half + GOAL_CLEARANCE_M + 0.04) + float(rng.uniform(0.0, 0.05))
    goal_xy = ref_center + sign * offset * axis
    goal_xy[0] = min(goal_xy[0], counter.bounds[1] - GOAL_EDGE_MARGIN_M)
    moved = build_moved(moved_name, (float(rng.uniform(0.66, 0.72)), float(rng.uniform(-0.25, 0.25)), h), rng)
    x0, x1, y0, y1 = counter.bounds
    if not (x0 + GOAL_EDGE_MARGIN_M <= goal_xy[0] <= x1 - GOAL_EDGE_MARGIN_M and y0 + GOAL_EDGE_MARGIN_M <= goal_xy[1] <= y1 - GOAL_EDGE_MARGIN_M):
        raise LayoutRejected("goal point off the countertop")
    blockers = [o for o in statics[1:]] + [moved]
    if min(_clearance(goal_xy, o) for o in blockers) < GOAL_CLEARANCE_M:
        raise LayoutRejected("goal region not clear")
    if np.linalg.norm(goal_xy - ref_center) < ON_REF_RADIUS_M + 0.05:
        raise LayoutRejected("goal point too close to the reference")
    geometry = CountertopGeometry(plane_height=h, polygon=counter.surface.polygon, reference_center=ref_center,
                                  right_axis=axis, instructed_side=side)
    goal = PlacementGoal("countertop_side", counter.surface.name, np.array([*goal_xy, h]), side=side)
    scene = make_scene(spec.name, (*statics, moved), surfaces=(counter.surface,), robot=SPAWN, top_center=(0.9, 0.0))
    proj = float(np.dot(object_box(moved).center[:2] - ref_center, axis))
    return Layout(instruction=f"Place the {phrase} on the countertop and to the {side} of the "
                              f"{DISPLAY_NAMES.get(ref_key, ref_key)}.",
                  scene=scene, candidates=(moved_name,), target=moved_name, manipulated=moved_name, reference=name,
                  placement=goal, countertop=geometry, measurements={"goal_offset_m": offset, "start_projection": proj},
                  margin=offset)


def place_carving_knife(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    return _directional(spec, variant, rng, moved_name="carving_knife_0", phrase="carving knife",
                        build_moved=lambda n, p, r: objects.carving_knife(n, p, yaw=float(r.uniform(-0.3, 0.3))))


def place_saucer(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    return _directional(spec, variant, rng, moved_name="saucer_0", phrase="saucer",
                        build_moved=lambda n, p, r: objects.saucer(n, p))


def layer_bands(shelf: Shelving, object_height: float) -> np.ndarray:
    """(low, high) heights of the object's frame (its bottom centre) resting in each layer, bottom first."""
    return np.array([(top - LAYER_BAND_SLACK_M, ceiling - object_height)
                     for top, ceiling in zip(shelf.layer_tops, shelf.layer_ceilings)])


def _container(spec: TaskSpec, variant: str, rng: np.random.Generator, *, shelf: Shelving, moved, noun: str) -> Layout:
    layer = int(variant)
    counter = countertop("countertop_0", front_x=0.55, depth=0.6, width=0.8, y_center=0.55, seed=int(rng.integers(100)))
    box = object_box(moved)
    height = float(box.extents[2])
    bands = layer_bands(shelf, height)
    if np.any(bands[:, 1] <= bands[:, 0]):
        raise LayoutRejected(f"{noun} does not fit a layer")
    x0, x1, y0, y1 = shelf.interior
    footprint = rect_polygon(x0, x1, y0, y1)
    index = layer - 1
    surfaces = tuple(Surface(f"{shelf.obj.name}/layer_{k + 1}", shelf.obj.name, top, footprint)
                     for k, top in enumerate(shelf.layer_tops)) + (counter.surface,)
    goal = PlacementGoal("container_compartment", surfaces[index].name,
                         np.array([(x0 + x1) / 2 - 0.05, (y0 + y1) / 2, shelf.layer_tops[index]]),
                         layer=layer, band=tuple(float(v) for v in bands[index]))
    geometry = ContainerGeometry(footprint=footprint, compartment_bands=bands, instructed_compartment=index)
    scene = make_scene(spec.name, (shelf.obj, counter.obj, moved), surfaces=surfaces, robot=SPAWN, top_center=(0.9, 0.0))
    owner = "fridge" if shelf.obj.category == "fridge" else "bottom cabinet"
    return Layout(instruction=f"Place the {noun} in the layer {layer} of the {owner}.", scene=scene,
                  candidates=(moved.name,), target=moved.name, manipulated=moved.name, reference=shelf.obj.name,
                  placement=goal, container=geometry,
                  measurements={"layer_tops": list(shelf.layer_tops), "bands": bands.tolist()})


def place_tupperware_in_fridge(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    shelf = furniture.fridge("fridge_0", front_x=float(rng.uniform(0.95, 1.05)), y_center=float(rng.uniform(-0.38, -0.3)))
    moved = objects.tupperware("tupperware_0", (float(rng.uniform(0.72, 0.8)), float(rng.uniform(0.3, 0.42)), furniture.COUNTERTOP_HEIGHT),
                               lid_rgb=tuple(int(c) for c in rng.integers(30, 220, 3)))
    return _container(spec, variant, rng, shelf=shelf, moved=moved, noun="tupperware")


def place_bowl_in_cabinet(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    shelf = furniture.bottom_cabinet("bottom_cabinet_0", front_x=float(rng.uniform(0.75, 0.85)),
                                  y_center=float(rng.uniform(-0.4, -0.32)))
    # x up to 0.77 m: farther out, the expert's horizontal forearm rests on the counter edge before
    # both fingers reach the bowl (seed 4 failed every layer at x = 0.80).
    moved = objects.bowl("bowl_0", (float(rng.uniform(0.72, 0.77)), float(rng.uniform(0.3, 0.42)), furniture.COUNTERTOP_HEIGHT),
                         rgb=tuple(int(c) for c in rng.integers(30, 220, 3)))
    return _container(spec, variant, rng, shelf=shelf, moved=moved, noun="bowl")
