"""The 10 navigation tasks (Table S2 / S11): goal criteria, seeded spawns, spawn validation, context tours.

A navigation instance places the robot somewhere in its floor plan (:mod:`bspatial.world.floorplans`)
and says "Move to the <destination>." Success (Sec. 5.1, Table S4) is binary: the base satisfies the
destination's criterion at some step within the budget, either **region entry** (the base centre
inside the room, :data:`REGION_MARGIN_M` past its walls) or **object proximity** (the base centre
within the destination's :data:`GOAL_RADIUS_M` of the object's footprint, and inside the object's
room: proximity never counts through a wall).

Spawns (Appendix 13.4: "varying the robot's initial position and orientation within each environment";
"simulator-based spawn validation, including checks for excessive displacement, vertical motion, and
tilt during physics settling") are drawn in two stages:

1. geometric, inside ``Task.sample``: a uniform (room, x, y, yaw) from the task's spawn rooms, kept when
   the occupancy grid says the base fits there, the goal is reachable on the grid and the criterion
   does not already hold (at least :data:`MIN_START_CLEARANCE_M` beyond it);
2. physical, :func:`validate_spawn`: load the scene, hold still :data:`SPAWN_SETTLE_STEPS` steps and
   reject on base displacement, chest vertical motion or chest tilt beyond the named thresholds;
   :func:`sample_validated_instance` redraws until a spawn passes.

Context tours (Appendix 12): :func:`tour_poses` densifies a plan's curated traversal into base poses
every :data:`TOUR_STEP_M` metres and :data:`TOUR_TURN_RAD` of turn; :func:`render_tour` renders the
head frames along it, in order.

Example:
    >>> import numpy as np
    >>> from bspatial.tasks import get_task
    >>> inst = get_task("move_to_garage").sample("", np.random.default_rng(0), seed=0)
    >>> inst.instruction, inst.target
    ('Move to the garage.', 'garage')
    >>> goal_reached(inst, (-2.5, -1.0, 0.0)), goal_reached(inst, (-2.5, 2.0, 0.0))
    (True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

import numpy as np

from bspatial.common.registry import unknown_name
from bspatial.sim.backend import SimBackend
from bspatial.catalog.tasks import TASKS, TaskSpec
from bspatial.world.floorplans import FloorPlan, connected_to, get_floorplan
from bspatial.world.spec import RobotSpawn
from bspatial.tasks.base import Layout, LayoutRejected, Task, TaskInstance
from bspatial.tasks.budgets import step_budget

REGION_MARGIN_M = 0.30
"""Region entry: the base centre must be this far inside the room's walls (the base's half length, so
the whole base has crossed the doorway)."""

GOAL_RADIUS_M: Mapping[str, float] = MappingProxyType({
    # Object proximity: base centre within this distance (m) of the object's xy footprint. Implementation
    # choice (the paper names the criterion, not the radius): about an arm's reach beyond the base's
    # half length, tight enough that neighbouring furniture of another category does not count.
    "fridge": 1.0,
    "table in the kitchen": 1.0,
    "bookcase": 1.0,
    "table near the sofa": 1.0,
    "corner booth": 1.0,
    "bar": 1.0,
    "kitchen sink": 1.0,
    "oven": 0.9,          # the second oven stands 1 m away; 0.9 keeps "near oven_0" distinct
})

MIN_START_CLEARANCE_M = 1.0
"""A spawn must be at least this far (m) outside the goal criterion: no instance starts solved."""

SPAWN_SETTLE_STEPS = 15
"""Spawn validation: hold still this many control steps (0.5 s) before measuring."""
MAX_SPAWN_DISPLACEMENT_M = 0.02
"""... reject when the base moved more than this in xy (it was pushed out of a collision)."""
MAX_SPAWN_VERTICAL_M = 0.01
"""... reject when the chest moved more than this vertically (torso pushed by furniture)."""
MAX_SPAWN_TILT_DEG = 2.0
"""... reject when the chest's z axis tilts more than this from vertical."""
MAX_SPAWN_ATTEMPTS = 20
"""Simulator validations tried before :func:`sample_validated_instance` gives up."""

TOUR_STEP_M = 0.5
"""Context tour: one frame every this many metres of travel (Appendix 12: a dense, ordered sequence)."""
TOUR_TURN_RAD = math.radians(45)
"""... and one every this much turn in place at a corner."""

_CHEST_LINK = "torso_4"


@dataclass(frozen=True)
class NavTaskDef:
    """Where a navigation task lives: its floor plan, destination and the rooms spawns are drawn in."""

    plan: str
    destination: str
    spawn_rooms: tuple[str, ...]


NAV_TASKS: Mapping[str, NavTaskDef] = MappingProxyType({
    "move_to_garage": NavTaskDef("two_floor_house_main_floor", "garage", ("living_room", "kitchen", "entryway")),
    "move_to_fridge": NavTaskDef("two_floor_house_main_floor", "fridge", ("living_room", "entryway", "garage")),
    "move_to_table_in_kitchen": NavTaskDef("two_floor_house_main_floor", "table in the kitchen",
                                           ("living_room", "entryway", "garage")),
    "move_to_bookcase": NavTaskDef("single_floor_house_toy_room", "bookcase", ("toy_room", "hallway")),
    "move_to_bathroom": NavTaskDef("single_floor_house_bedroom", "bathroom", ("bedroom", "hallway")),
    "move_to_table_near_sofa": NavTaskDef("single_floor_house_open_living_area", "table near the sofa",
                                          ("living_area", "entry_hall")),
    "move_to_corner_booth": NavTaskDef("restaurant_diner", "corner booth", ("dining_hall", "kitchen")),
    "move_to_bar": NavTaskDef("restaurant_diner", "bar", ("dining_hall", "kitchen")),
    "move_to_kitchen_sink": NavTaskDef("restaurant_diner", "kitchen sink", ("dining_hall",)),
    "move_to_oven": NavTaskDef("restaurant_diner", "oven", ("dining_hall",)),
})
"""Table S11: each task's scene (the five plans) and destination."""


# ----------------------------------------------------------------------------- goal criteria


def _footprint(plan: FloorPlan, obj_name: str) -> tuple[float, float, float, float]:
    from bspatial.world.floorplans import part_footprints
    from bspatial.world.spec import SceneSpec

    obj = plan.scene.object(obj_name)
    boxes = np.array(part_footprints(SceneSpec(name="one", objects=(obj,), robot=None), max_z=np.inf))
    return (float(boxes[:, 0].min()), float(boxes[:, 1].max()), float(boxes[:, 2].min()), float(boxes[:, 3].max()))


def _box_distance(box, x, y):
    x0, x1, y0, y1 = box
    dx = np.maximum(np.maximum(x0 - x, 0.0), x - x1)
    dy = np.maximum(np.maximum(y0 - y, 0.0), y - y1)
    return np.hypot(dx, dy)


def goal_distance(task: str, x, y):
    """Signed slack of the goal criterion at base xy (vectorised): <= 0 means satisfied.

    Region entry: -(distance inside the margin-shrunk room), positive outside. Object proximity:
    distance to the footprint minus the destination's radius.
    """
    d = NAV_TASKS[task]
    plan = get_floorplan(d.plan)
    dest = plan.destinations[d.destination]
    if dest.kind == "region":
        x0, x1, y0, y1 = plan.room(dest.target).bounds
        m = REGION_MARGIN_M
        inside = np.minimum(np.minimum(np.asarray(x) - (x0 + m), (x1 - m) - np.asarray(x)),
                            np.minimum(np.asarray(y) - (y0 + m), (y1 - m) - np.asarray(y)))
        return -inside
    box = _footprint(plan, dest.target)
    room = plan.room_at(((box[0] + box[1]) / 2, (box[2] + box[3]) / 2))
    rx0, rx1, ry0, ry1 = plan.room(room).bounds
    # Proximity counts only from inside the object's own room: never through a wall.
    in_room = np.minimum(np.minimum(np.asarray(x) - rx0, rx1 - np.asarray(x)),
                         np.minimum(np.asarray(y) - ry0, ry1 - np.asarray(y)))
    return np.maximum(_box_distance(box, x, y) - GOAL_RADIUS_M[d.destination], -in_room)


def goal_reached(instance: TaskInstance, base_pose) -> bool:
    """The navigation goal criterion of ``instance`` at one base pose (x, y, yaw)."""
    return bool(goal_distance(instance.task, base_pose[0], base_pose[1]) <= 0.0)


def plan_of(instance: TaskInstance) -> FloorPlan:
    return get_floorplan(NAV_TASKS[instance.task].plan)


def goal_mask(instance: TaskInstance, *, margin: float = 0.0) -> np.ndarray:
    """Grid cells whose centre satisfies the criterion with ``margin`` to spare (free or not)."""
    grid = plan_of(instance).occupancy()
    xs, ys = grid.centers()
    return goal_distance(instance.task, xs, ys) <= -margin


def destination_point(instance: TaskInstance) -> np.ndarray:
    """A point to face on arrival: the object's footprint centre, or the room's centre."""
    return destination_xy(instance.task)


def destination_xy(task: str) -> np.ndarray:
    """The destination point of navigation task ``task`` (what :func:`destination_point` faces; maps mark it)."""
    d = NAV_TASKS[task]
    plan = get_floorplan(d.plan)
    dest = plan.destinations[d.destination]
    if dest.kind == "region":
        return np.array(plan.room(dest.target).center)
    x0, x1, y0, y1 = _footprint(plan, dest.target)
    return np.array([(x0 + x1) / 2, (y0 + y1) / 2])


def destination_area(task: str) -> tuple[float, float, float, float]:
    """The xy box ``(x0, x1, y0, y1)`` of task ``task``'s destination: the room (region entry) or the
    object's footprint (object proximity)."""
    d = NAV_TASKS[task]
    plan = get_floorplan(d.plan)
    dest = plan.destinations[d.destination]
    return plan.room(dest.target).bounds if dest.kind == "region" else _footprint(plan, dest.target)


# ----------------------------------------------------------------------------- spawns


def _reachable_from_goal(task: str) -> np.ndarray:
    """Free cells connected (4-neighbourhood) to a free goal cell: spawns there can reach the goal."""
    cache = _REACHABLE
    if task not in cache:
        d = NAV_TASKS[task]
        grid = get_floorplan(d.plan).occupancy()
        xs, ys = grid.centers()
        free = ~grid.blocked
        reach = connected_to(free, goal_distance(task, xs, ys) <= 0)
        cache[task] = reach
    return cache[task]


_REACHABLE: dict[str, np.ndarray] = {}


def _generate(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    d = NAV_TASKS[spec.name]
    plan = get_floorplan(d.plan)
    grid = plan.occupancy()
    room = plan.room(d.spawn_rooms[int(rng.integers(len(d.spawn_rooms)))])
    x0, x1, y0, y1 = room.bounds
    x, y = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
    yaw = float(rng.uniform(-math.pi, math.pi))
    if not grid.is_free((x, y)):
        raise LayoutRejected("spawn not free in the occupancy grid")
    if not _reachable_from_goal(spec.name)[grid.cell((x, y))]:
        raise LayoutRejected("goal not reachable from the spawn")
    slack = float(goal_distance(spec.name, x, y))
    if slack < MIN_START_CLEARANCE_M:
        raise LayoutRejected("spawn too close to the goal")
    dest = plan.destinations[d.destination]
    scene = _with_spawn(plan, RobotSpawn(x, y, yaw), spec.name)
    return Layout(instruction=spec.example_instruction, scene=scene, candidates=(dest.target,), target=dest.target,
                  measurements={"plan": plan.name, "destination": d.destination, "goal_kind": dest.kind,
                                "start_room": room.name, "start_goal_slack_m": slack})


def _with_spawn(plan: FloorPlan, spawn: RobotSpawn, task: str):
    import dataclasses

    return dataclasses.replace(plan.scene, name=f"{plan.name}/{task}", robot=spawn)


class NavigationTask(Task):
    """A Table S2 navigation row: no instruction variants, so the only variant is ``""`` (as in traces)."""

    @property
    def variants(self) -> tuple[str, ...]:
        return ("",)

    def check_variant(self, variant: str) -> str:
        if variant != "":
            raise ValueError(f"variant of navigation task {self.name!r} must be '' (no variants), got {variant!r}")
        return variant


def build_navigation_task(name: str) -> NavigationTask:
    """The navigation task ``name`` (canonical Table S2 name)."""
    if name not in NAV_TASKS:
        raise unknown_name("navigation task", name, NAV_TASKS)
    return NavigationTask(spec=TASKS[name], generator=_generate, step_budget=step_budget(name))


@dataclass(frozen=True)
class SpawnCheck:
    """What spawn validation measured after settling, and whether every threshold held."""

    displacement_m: float
    vertical_m: float
    tilt_deg: float

    @property
    def ok(self) -> bool:
        return (self.displacement_m <= MAX_SPAWN_DISPLACEMENT_M and self.vertical_m <= MAX_SPAWN_VERTICAL_M
                and self.tilt_deg <= MAX_SPAWN_TILT_DEG)


def validate_spawn(backend: SimBackend, *, steps: int = SPAWN_SETTLE_STEPS) -> SpawnCheck:
    """Reset the loaded scene, hold still ``steps`` steps, measure base drift and chest motion / tilt.

    The backend is left reset to the spawn.
    """
    backend.reset()
    base0 = np.asarray(backend.robot_state().base_pose, float)
    z0 = float(backend.robot_link_pose(_CHEST_LINK).position[2])
    hold = backend.hold_action()
    for _ in range(steps):
        if backend.step(hold).status != "ok":
            return SpawnCheck(math.inf, math.inf, math.inf)
    base1 = np.asarray(backend.robot_state().base_pose, float)
    chest = backend.robot_link_pose(_CHEST_LINK)
    zaxis = chest.rotation[:, 2]
    check = SpawnCheck(float(np.linalg.norm(base1[:2] - base0[:2])), abs(float(chest.position[2]) - z0),
                       math.degrees(math.acos(float(np.clip(zaxis[2], -1.0, 1.0)))))
    backend.reset()
    return check


def sample_validated_instance(backend: SimBackend, name: str, seed: int) -> tuple[TaskInstance, SpawnCheck]:
    """Draw spawns from ``seed`` until one passes :func:`validate_spawn`; the backend holds its scene."""
    task = build_navigation_task(name)
    rng = np.random.default_rng(seed)
    for _ in range(MAX_SPAWN_ATTEMPTS):
        instance = task.sample("", rng, seed=seed)
        backend.load(instance.scene)
        check = validate_spawn(backend)
        if check.ok:
            return instance, check
    raise ValueError(f"task {name!r} seed {seed}: no spawn passed validation in {MAX_SPAWN_ATTEMPTS} attempts")


# ----------------------------------------------------------------------------- context tours


def tour_poses(plan: FloorPlan, *, step: float = TOUR_STEP_M, turn: float = TOUR_TURN_RAD) -> np.ndarray:
    """(N, 3) base poses (x, y, yaw) along the plan's traversal: every ``step`` m, every ``turn`` rad."""
    pts = [np.asarray(p, float) for p in plan.tour]
    poses: list[tuple[float, float, float]] = []
    yaw = None
    for a, b in zip(pts, pts[1:]):
        heading = math.atan2(b[1] - a[1], b[0] - a[0])
        if yaw is not None:        # turn in place at the corner
            delta = (heading - yaw + math.pi) % (2 * math.pi) - math.pi
            n = int(math.ceil(abs(delta) / turn - 1e-9))
            poses += [(a[0], a[1], yaw + delta * k / n) for k in range(1, n)]
        length = float(np.linalg.norm(b - a))
        n = max(1, int(math.ceil(length / step - 1e-9)))
        poses += [(*(a + (b - a) * k / n), heading) for k in range(n)]
        yaw = heading
    poses.append((pts[-1][0], pts[-1][1], yaw))
    return np.array(poses)


def render_tour(backend: SimBackend, plan: FloorPlan, *, camera: str = "head", size: int | None = None,
                indices: Sequence[int] | None = None) -> list:
    """Head frames (:class:`~bspatial.sim.backend.CameraFrame`) along :func:`tour_poses`, in order.

    Loads the plan's scene and teleports the base (kinematically, no physics) to each pose. ``indices``
    renders only those poses of the tour, in the order given: the same pixels as the full tour's frames
    at those positions (a teleport leaves no state behind), for a fraction of the rendering.
    """
    backend.load(plan.scene)
    frames = []
    poses = tour_poses(plan)
    for x, y, yaw in (poses if indices is None else poses[list(indices)]):
        backend.set_base_pose(x, y, yaw)
        frames.append(backend.render(camera, width=size, height=size))
    backend.reset()
    return frames
