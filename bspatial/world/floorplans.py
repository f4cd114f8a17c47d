"""The five multi-room floor plans of the navigation suite (Table S2 / S11 scenes), and their occupancy grids.

Each plan is a backend-neutral :class:`~bspatial.world.spec.SceneSpec` (walls with door gaps, textured room
floors, furniture named by BEHAVIOR categories) plus the navigation metadata the tasks need: the rooms
as axis-aligned rectangles, the doorways, the ten destinations (a room to enter or an object to come
close to) and the waypoints of the curated context traversal (paper Appendix 12: "a traversal covering
relevant navigable regions and doorways"). The occupancy grid is rasterised from the very same part
geometry the simulator collides with, so the planner and the physics agree.

Plans (names are ``FLOORPLANS`` keys):

* ``two_floor_house_main_floor``: living room (stairs up, sofa), kitchen (fridge, counter, kitchen
  table), entryway, garage (car, garage door) -- destinations garage, fridge, table in the kitchen.
* ``single_floor_house_toy_room``: toy room (bookcase, toy box, teddy bear) and hallway -- bookcase.
* ``single_floor_house_bedroom``: bedroom, bathroom (toilet, bathtub, sink), hallway -- bathroom.
* ``single_floor_house_open_living_area``: open living/dining area and entry hall -- table near the sofa
  (the coffee table; the dining table is the distractor).
* ``restaurant_diner``: dining hall (corner booth, two wall booths, tables, bar with stools) and kitchen
  (commercial sink, ovens, prep island) -- corner booth, bar, kitchen sink, oven.

Every plan has ceilings (:func:`plan_ceilings`) with a light fixture over each room's middle; the top camera,
above them, does not see them.

Example:
    >>> plan = get_floorplan("restaurant_diner")
    >>> sorted(plan.destinations)
    ['bar', 'corner booth', 'kitchen sink', 'oven']
    >>> grid = plan.occupancy()
    >>> grid.is_free(plan.room("dining_hall").center), grid.is_free((-20.0, 0.0))
    (True, False)
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Literal, Mapping

import numpy as np

from bspatial.catalog.robot import BASE_RADIUS_M
from bspatial.common.registry import lookup
from bspatial.world.furniture import (DEFAULT_LIGHTS, TOP_CAMERA, WALL_HEIGHT, WALL_THICKNESS, bed, bookcase, coffee_table,
                                 countertop, fridge, room_ceiling, sofa, straight_chair, table)
from bspatial.world.spec import CameraSpec, Ceiling, ObjectSpec, Part, Pose, RobotSpawn, SceneSpec, Texture
from bspatial.world.textures import fabric_texture, plank_floor_texture, rgba, tile_texture, wood_texture

GRID_RESOLUTION_M = 0.10
"""Occupancy cell size (m): a tenth of the narrowest doorway, fine enough for 0.4 m of free corridor."""
ROBOT_RADIUS_M = BASE_RADIUS_M
"""Obstacle inflation (m): the robot's planning radius (:data:`bspatial.catalog.robot.BASE_RADIUS_M`)."""
DOOR_WIDTH_M = 1.20
"""Doorway gap (m): leaves a 0.4 m free corridor after inflating both jambs by ROBOT_RADIUS_M."""
LINTEL_BOTTOM_M = 2.05
"""Door lintel underside (m): above the robot's head (~1.6 m), so doorways read as doors in frames."""
OBSTACLE_MAX_Z_M = 1.9
"""Parts whose bottom is above this (lintels) do not block the base in the occupancy grid."""

DestinationKind = Literal["region", "object"]


# ----------------------------------------------------------------------------- plan metadata


@dataclass(frozen=True)
class RoomRegion:
    """A room as an axis-aligned rectangle ``(x0, x1, y0, y1)`` (inner wall faces); ``kind`` is a bddl room type."""

    name: str
    kind: str
    bounds: tuple[float, float, float, float]

    @property
    def center(self) -> tuple[float, float]:
        x0, x1, y0, y1 = self.bounds
        return ((x0 + x1) / 2, (y0 + y1) / 2)

    def contains(self, xy, margin: float = 0.0) -> bool:
        """Whether ``xy`` lies inside the rectangle shrunk by ``margin`` on every side."""
        x0, x1, y0, y1 = self.bounds
        return x0 + margin <= xy[0] <= x1 - margin and y0 + margin <= xy[1] <= y1 - margin


@dataclass(frozen=True)
class Doorway:
    """A gap in a wall between two rooms: centre on the wall line, gap width, wall orientation."""

    rooms: tuple[str, str]
    center: tuple[float, float]
    width: float
    along: Literal["x", "y"]      # direction of the wall the gap is cut in


@dataclass(frozen=True)
class Destination:
    """A navigation destination: a room to enter ("region") or an object to come close to ("object")."""

    name: str
    kind: DestinationKind
    target: str                   # room name (region) or object name (object)


@dataclass(frozen=True, eq=False)
class FloorPlan:
    """A navigation scene and its metadata (see the module docstring)."""

    name: str
    title: str                    # Table S11 scene wording
    scene: SceneSpec
    rooms: tuple[RoomRegion, ...]
    doorways: tuple[Doorway, ...]
    destinations: Mapping[str, Destination]
    tour: tuple[tuple[float, float], ...]

    def room(self, name: str) -> RoomRegion:
        for r in self.rooms:
            if r.name == name:
                return r
        raise ValueError(f"floor plan {self.name!r} has no room {name!r}; rooms: {[r.name for r in self.rooms]}")

    def room_at(self, xy) -> str | None:
        """Name of the room containing ``xy``, or None (inside a wall or outside the plan)."""
        for r in self.rooms:
            if r.contains(xy):
                return r.name
        return None

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        b = np.array([r.bounds for r in self.rooms])
        return (float(b[:, 0].min()), float(b[:, 1].max()), float(b[:, 2].min()), float(b[:, 3].max()))

    def occupancy(self, *, resolution: float = GRID_RESOLUTION_M, inflation: float = ROBOT_RADIUS_M) -> "OccupancyGrid":
        """The occupancy grid of this plan (cached per resolution / inflation)."""
        return _occupancy(self, float(resolution), float(inflation))


# ----------------------------------------------------------------------------- occupancy grid


@dataclass(frozen=True, eq=False)
class OccupancyGrid:
    """Boolean grids over the plan: ``obstacle`` (raw part footprints and space outside every room) and
    ``blocked`` (obstacles inflated by the robot radius: where the base centre may not go).

    Cell ``(i, j)`` covers x in ``origin[0] + [i, i+1) * resolution``, y likewise with ``j``.
    """

    origin: tuple[float, float]
    resolution: float
    obstacle: np.ndarray
    blocked: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.blocked.shape

    def cell(self, xy) -> tuple[int, int]:
        return (int(math.floor((xy[0] - self.origin[0]) / self.resolution)),
                int(math.floor((xy[1] - self.origin[1]) / self.resolution)))

    def center(self, cell) -> np.ndarray:
        return np.array([self.origin[0] + (cell[0] + 0.5) * self.resolution,
                         self.origin[1] + (cell[1] + 0.5) * self.resolution])

    def in_bounds(self, cell) -> bool:
        return 0 <= cell[0] < self.shape[0] and 0 <= cell[1] < self.shape[1]

    def is_free(self, xy) -> bool:
        """Whether the base centre may stand at ``xy``."""
        c = self.cell(xy)
        return self.in_bounds(c) and not bool(self.blocked[c])

    def centers(self) -> tuple[np.ndarray, np.ndarray]:
        """(nx, ny) arrays of the cell-centre x and y coordinates."""
        xs = self.origin[0] + (np.arange(self.shape[0]) + 0.5) * self.resolution
        ys = self.origin[1] + (np.arange(self.shape[1]) + 0.5) * self.resolution
        return np.meshgrid(xs, ys, indexing="ij")


def connected_to(free: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Free cells 4-connected to a free seed cell (the robot's base moves between neighbouring grid cells).

    Example:
        >>> free = np.array([[1, 1, 0, 1]], bool)
        >>> connected_to(free, np.array([[1, 0, 0, 0]], bool)).astype(int).tolist()
        [[1, 1, 0, 0]]
    """
    from scipy import ndimage

    labels, _ = ndimage.label(free)          # the default 2D structure is the 4-neighbourhood cross
    hit = np.unique(labels[seeds & free])
    return np.isin(labels, hit[hit > 0])


def part_footprints(scene: SceneSpec, *, max_z: float = OBSTACLE_MAX_Z_M) -> list[tuple[float, float, float, float]]:
    """World xy AABBs ``(x0, x1, y0, y1)`` of every colliding part whose bottom is below ``max_z``."""
    boxes = []
    for obj in scene.objects:
        r_obj = _quat_mat(obj.pose.quat)
        for part in obj.parts:
            if not part.collide:
                continue
            half = part.local_half_extents()
            corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
            local = corners @ _quat_mat(part.pose.quat).T + np.asarray(part.pose.position)
            world = local @ r_obj.T + np.asarray(obj.pose.position)
            if world[:, 2].min() > max_z:
                continue
            boxes.append((world[:, 0].min(), world[:, 0].max(), world[:, 1].min(), world[:, 1].max()))
    return boxes


def _quat_mat(q) -> np.ndarray:
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


@functools.lru_cache(maxsize=32)
def _occupancy(plan: FloorPlan, resolution: float, inflation: float) -> OccupancyGrid:
    x0, x1, y0, y1 = plan.bounds
    pad = 0.5
    origin = (x0 - pad, y0 - pad)
    nx, ny = int(math.ceil((x1 - x0 + 2 * pad) / resolution)), int(math.ceil((y1 - y0 + 2 * pad) / resolution))
    grid = OccupancyGrid(origin, resolution, np.zeros((nx, ny), bool), np.zeros((nx, ny), bool))
    xs, ys = grid.centers()
    inside = np.zeros((nx, ny), bool)
    for room in plan.rooms:
        rx0, rx1, ry0, ry1 = room.bounds
        inside |= (xs >= rx0) & (xs <= rx1) & (ys >= ry0) & (ys <= ry1)
    for d in plan.doorways:      # the wall thickness inside a doorway is floor too
        hx, hy = ((d.width / 2, WALL_THICKNESS) if d.along == "x" else (WALL_THICKNESS, d.width / 2))
        inside |= (np.abs(xs - d.center[0]) <= hx) & (np.abs(ys - d.center[1]) <= hy)
    obstacle = ~inside
    for bx0, bx1, by0, by1 in part_footprints(plan.scene):
        obstacle |= (xs >= bx0) & (xs <= bx1) & (ys >= by0) & (ys <= by1)
    # Inflate: a cell is blocked when an obstacle cell centre lies within `inflation` (+ half a cell for
    # the obstacle's own cell extent) of it. Disc of shifted copies; no scipy needed.
    blocked = obstacle.copy()
    k = int(math.ceil(inflation / resolution))
    for di in range(-k, k + 1):
        for dj in range(-k, k + 1):
            if (di * di + dj * dj) * resolution ** 2 > (inflation + resolution / 2) ** 2 or (di == dj == 0):
                continue
            shifted = np.zeros_like(obstacle)
            shifted[max(di, 0):nx + min(di, 0), max(dj, 0):ny + min(dj, 0)] = \
                obstacle[max(-di, 0):nx + min(-di, 0), max(-dj, 0):ny + min(-dj, 0)]
            blocked |= shifted
    return OccupancyGrid(origin, resolution, obstacle, blocked)


# ----------------------------------------------------------------------------- walls and floors


def _wall_texture() -> Texture:
    rgb = (222, 216, 202)
    return tile_texture("wall_paint", base=rgb, grout=tuple(int(c * 0.93) for c in rgb), repeat=(6.0, 3.0))


def walls(name: str, start, end, doors: tuple[float, ...] = (), *, door_width: float = DOOR_WIDTH_M) -> ObjectSpec:
    """An axis-aligned wall (category ``walls``) from ``start`` to ``end`` with door gaps.

    ``doors`` are the gap centres as a coordinate along the wall (x for a wall along x, y otherwise);
    each gap gets a lintel above :data:`LINTEL_BOTTOM_M` so it reads as a doorway.
    """
    (xa, ya), (xb, yb) = start, end
    along_x = abs(yb - ya) < 1e-9
    lo, hi = (min(xa, xb), max(xa, xb)) if along_x else (min(ya, yb), max(ya, yb))
    fixed = ya if along_x else xa
    t, h = WALL_THICKNESS, WALL_HEIGHT
    tex = _wall_texture()
    white = rgba((255, 255, 255))
    edges = [lo - t / 2]
    for c in sorted(doors):
        edges += [c - door_width / 2, c + door_width / 2]
    edges.append(hi + t / 2)
    parts = []

    def box(a, b, z0, z1, collide=True):
        mid, length = (a + b) / 2, b - a
        size = (length, t, z1 - z0) if along_x else (t, length, z1 - z0)
        pos = (mid, fixed, (z0 + z1) / 2) if along_x else (fixed, mid, (z0 + z1) / 2)
        parts.append(Part("box", size, Pose(pos), rgba=white, texture=tex, collide=collide))

    for a, b in zip(edges[0::2], edges[1::2]):
        if b - a > 1e-6:
            box(a, b, 0.0, h)
    for a, b in zip(edges[1:-1:2], edges[2:-1:2]):      # the gaps
        box(a, b, LINTEL_BOTTOM_M, h)
    return ObjectSpec(name=name, category="walls", parts=tuple(parts), static=True)


_FLOOR_TEXTURES: Mapping[str, Callable[[str], Texture]] = {
    "planks": lambda n: plank_floor_texture(n),
    "tiles": lambda n: tile_texture(n, base=(225, 225, 220), grout=(160, 160, 155), repeat=(10.0, 10.0)),
    "checker": lambda n: tile_texture(n, base=(235, 235, 235), grout=(40, 40, 40), repeat=(12.0, 12.0)),
    "concrete": lambda n: tile_texture(n, base=(150, 150, 148), grout=(125, 125, 122), repeat=(3.0, 3.0)),
    "carpet": lambda n: fabric_texture(n, (150, 120, 110), repeat=(12.0, 12.0)),
}


def room_floor(room: RoomRegion, style: str) -> ObjectSpec:
    """A visual floor covering (category ``floors``) over one room: how rooms differ in the head frames."""
    x0, x1, y0, y1 = room.bounds
    part = Part("box", (x1 - x0, y1 - y0, 0.004), Pose((0, 0, 0.002)), rgba=rgba((255, 255, 255)),
                texture=_FLOOR_TEXTURES[style](f"floor_{room.name}"), collide=False)
    return ObjectSpec(name=f"floor_{room.name}", category="floors", parts=(part,), static=True,
                      pose=Pose((room.center[0], room.center[1], 0.0)))


# ----------------------------------------------------------------------------- destination furniture


def _obj(name: str, category: str, parts, xy, yaw: float = 0.0) -> ObjectSpec:
    return ObjectSpec(name=name, category=category, parts=tuple(parts), static=True,
                      pose=Pose.from_xy_yaw(xy[0], xy[1], 0.0, yaw))


def placed(obj: ObjectSpec, xy, yaw: float) -> ObjectSpec:
    """``obj`` with its frame moved to ``xy`` and turned by ``yaw`` (rad) about z."""
    return dataclasses.replace(obj, pose=Pose.from_xy_yaw(xy[0], xy[1], obj.pose.position[2], yaw))


def car(name: str, xy, yaw: float = 0.0, rgb=(170, 30, 35)) -> ObjectSpec:
    """A car: body, cabin with dark windows, four wheels (long axis along local x)."""
    c = rgba(rgb)
    parts = [Part("box", (4.2, 1.8, 0.7), Pose((0, 0, 0.65)), rgba=c),
             Part("box", (2.2, 1.6, 0.55), Pose((-0.2, 0, 1.27)), rgba=c),
             Part("box", (2.25, 1.5, 0.4), Pose((-0.2, 0, 1.25)), rgba=rgba((35, 45, 60)), collide=False),
             Part("box", (0.05, 1.4, 0.15), Pose((2.1, 0, 0.75)), rgba=rgba((230, 230, 200)), collide=False)]
    for sx in (-1.35, 1.35):
        for sy in (-0.85, 0.85):
            parts.append(Part("cylinder", (0.33, 0.22), Pose((sx, sy, 0.33), (math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0)),
                              rgba=rgba((20, 20, 20))))
    return _obj(name, "car", parts, xy, yaw)


def garage_door(name: str, xy, yaw: float = 0.0, width: float = 2.6) -> ObjectSpec:
    """A sectional garage door panel flat against a wall (local +x is into the room)."""
    parts = [Part("box", (0.04, width, 2.2), Pose((0, 0, 1.1)), rgba=rgba((235, 235, 235)))]
    for k in range(1, 5):
        parts.append(Part("box", (0.05, width, 0.02), Pose((0.005, 0, 0.44 * k)), rgba=rgba((170, 170, 170)), collide=False))
    return _obj(name, "garage_door", parts, xy, yaw)


def stairs(name: str, xy, yaw: float = 0.0, *, n_steps: int = 10, width: float = 1.0) -> ObjectSpec:
    """A straight staircase rising along local +x (0.18 m risers, 0.28 m treads) with a handrail."""
    wood = wood_texture(f"{name}_wood", (140, 95, 60), seed=4)
    parts = []
    for k in range(n_steps):
        h = 0.18 * (k + 1)
        parts.append(Part("box", (0.28, width, h), Pose((0.14 + 0.28 * k, 0, h / 2)), rgba=rgba((255, 255, 255)), texture=wood))
    run = 0.28 * n_steps
    parts.append(Part("box", (run, 0.04, 0.04), Pose((run / 2, -width / 2, 0.18 * n_steps / 2 + 0.9),
                                                     (math.cos(-0.28), 0, math.sin(-0.28), 0)),
                      rgba=rgba((60, 40, 25)), collide=False))
    return _obj(name, "stairs", parts, xy, yaw)


def toilet(name: str, xy, yaw: float = 0.0) -> ObjectSpec:
    """A toilet: bowl, seat and tank; the tank is on local +x (against the wall)."""
    w = rgba((245, 245, 245))
    return _obj(name, "toilet", (Part("cylinder", (0.2, 0.4), Pose((0, 0, 0.2)), rgba=w),
                                 Part("cylinder", (0.21, 0.03), Pose((0, 0, 0.415)), rgba=rgba((225, 225, 230))),
                                 Part("box", (0.2, 0.45, 0.4), Pose((0.25, 0, 0.55)), rgba=w)), xy, yaw)


def bathtub(name: str, xy, yaw: float = 0.0, size=(1.6, 0.75)) -> ObjectSpec:
    """A bathtub: white rim walls around a pale-blue basin."""
    lx, ly = size
    w, t = rgba((248, 248, 248)), 0.08
    return _obj(name, "bathtub", (
        Part("box", (lx, ly, 0.1), Pose((0, 0, 0.05)), rgba=w),
        Part("box", (lx - 2 * t, ly - 2 * t, 0.01), Pose((0, 0, 0.105)), rgba=rgba((170, 210, 230)), collide=False),
        Part("box", (lx, t, 0.55), Pose((0, ly / 2 - t / 2, 0.275)), rgba=w),
        Part("box", (lx, t, 0.55), Pose((0, -ly / 2 + t / 2, 0.275)), rgba=w),
        Part("box", (t, ly, 0.55), Pose((lx / 2 - t / 2, 0, 0.275)), rgba=w),
        Part("box", (t, ly, 0.55), Pose((-lx / 2 + t / 2, 0, 0.275)), rgba=w)), xy, yaw)


def pedestal_sink(name: str, xy, yaw: float = 0.0) -> ObjectSpec:
    """A bathroom pedestal sink with a tap and a mirror above (on local +x, the wall side)."""
    w = rgba((245, 245, 245))
    return _obj(name, "pedestal_sink", (
        Part("cylinder", (0.09, 0.75), Pose((0.05, 0, 0.375)), rgba=w),
        Part("box", (0.45, 0.55, 0.15), Pose((0, 0, 0.82)), rgba=w),
        Part("box", (0.3, 0.4, 0.01), Pose((-0.02, 0, 0.9)), rgba=rgba((200, 215, 225)), collide=False),
        Part("cylinder", (0.02, 0.15), Pose((0.17, 0, 0.97)), rgba=rgba((180, 180, 185)), collide=False),
        Part("box", (0.02, 0.5, 0.7), Pose((0.23, 0, 1.45)), rgba=rgba((200, 220, 235)), collide=False)), xy, yaw)


def toy_box(name: str, xy, yaw: float = 0.0) -> ObjectSpec:
    """A bright toy chest with a coloured lid and painted stars."""
    return _obj(name, "toy_box", (
        Part("box", (0.5, 0.8, 0.45), Pose((0, 0, 0.225)), rgba=rgba((60, 140, 220))),
        Part("box", (0.52, 0.82, 0.05), Pose((0, 0, 0.475)), rgba=rgba((235, 70, 60))),
        Part("box", (0.01, 0.15, 0.15), Pose((-0.255, -0.2, 0.22)), rgba=rgba((250, 220, 40)), collide=False),
        Part("box", (0.01, 0.15, 0.15), Pose((-0.255, 0.2, 0.22)), rgba=rgba((90, 200, 90)), collide=False)), xy, yaw)


def teddy_bear(name: str, xy, yaw: float = 0.0) -> ObjectSpec:
    """A sitting teddy bear: body, head, ears, snout."""
    b = rgba((160, 110, 60))
    return _obj(name, "teddy_bear", (
        Part("sphere", (0.15,), Pose((0, 0, 0.15)), rgba=b),
        Part("sphere", (0.1,), Pose((0, 0, 0.37)), rgba=b),
        Part("sphere", (0.04,), Pose((0, 0.08, 0.45)), rgba=b),
        Part("sphere", (0.04,), Pose((0, -0.08, 0.45)), rgba=b),
        Part("sphere", (0.04,), Pose((-0.09, 0, 0.35)), rgba=rgba((225, 195, 150)), collide=False)), xy, yaw)


def booth(name: str, xy, yaw: float = 0.0, *, length: float = 1.6, corner: bool = False, rgb=(165, 35, 40)) -> ObjectSpec:
    """A diner booth (category ``booth``): padded bench(es) with high backrests around a table.

    Straight booth: one bench along local y with its back on local +x, the table on local -x.
    Corner booth: an L of two benches (backs on local +x and local +y) wrapping a square table.
    """
    vinyl = rgba(rgb)
    wood = wood_texture(f"{name}_wood", (120, 80, 50), seed=9)
    parts = [Part("box", (0.55, length, 0.45), Pose((0, 0, 0.225)), rgba=vinyl),
             Part("box", (0.15, length, 0.75), Pose((0.2, 0, 0.8)), rgba=vinyl)]
    if corner:
        parts += [Part("box", (length, 0.55, 0.45), Pose((-length / 2 + 0.275, length / 2 - 0.275, 0.225)), rgba=vinyl),
                  Part("box", (length, 0.15, 0.75), Pose((-length / 2 + 0.275, length / 2 - 0.075, 0.8)), rgba=vinyl)]
    table_x = -0.7
    table_y = -0.3 if corner else 0.0
    parts += [Part("box", (0.75, 1.0, 0.04), Pose((table_x, table_y, 0.74)), rgba=rgba((255, 255, 255)), texture=wood),
              Part("cylinder", (0.05, 0.72), Pose((table_x, table_y, 0.36)), rgba=rgba((70, 70, 75)))]
    return _obj(name, "booth", parts, xy, yaw)


def bar(name: str, xy, yaw: float = 0.0, *, length: float = 3.0) -> ObjectSpec:
    """A bar counter along local y (guests on local -x) with a back shelf of bottles on local +x."""
    wood = wood_texture(f"{name}_wood", (95, 55, 35), seed=8)
    parts = [Part("box", (0.6, length, 1.05), Pose((0, 0, 0.525)), rgba=rgba((255, 255, 255)), texture=wood),
             Part("box", (0.7, length + 0.05, 0.05), Pose((-0.05, 0, 1.075)), rgba=rgba((40, 40, 45))),
             Part("box", (0.01, length, 0.05), Pose((-0.305, 0, 0.2)), rgba=rgba((190, 160, 60)), collide=False),
             Part("box", (0.3, length, 1.6), Pose((0.9, 0, 0.8)), rgba=rgba((255, 255, 255)), texture=wood)]
    colours = ((40, 120, 60), (150, 90, 30), (200, 200, 210), (120, 30, 40))
    for k in range(int(length / 0.25)):
        y = -length / 2 + 0.125 + 0.25 * k
        parts.append(Part("cylinder", (0.04, 0.3), Pose((0.8, y, 1.75)), rgba=rgba(colours[k % 4]), collide=False))
    return _obj(name, "bar", parts, xy, yaw)


def bar_stool(name: str, xy) -> ObjectSpec:
    """A chrome bar stool with a red seat."""
    return _obj(name, "bar_stool", (Part("cylinder", (0.04, 0.7), Pose((0, 0, 0.35)), rgba=rgba((190, 190, 195))),
                                    Part("cylinder", (0.2, 0.03), Pose((0, 0, 0.015)), rgba=rgba((190, 190, 195))),
                                    Part("cylinder", (0.19, 0.08), Pose((0, 0, 0.74)), rgba=rgba((180, 30, 35)))), xy)


def commercial_kitchen_sink(name: str, xy, yaw: float = 0.0, *, length: float = 1.6) -> ObjectSpec:
    """A stainless two-basin commercial sink on legs, with a tall faucet on local +x (wall side)."""
    steel, dark = rgba((200, 202, 206)), rgba((120, 122, 126))
    parts = [Part("box", (0.7, length, 0.05), Pose((0, 0, 0.9)), rgba=steel),
             Part("box", (0.7, length, 0.3), Pose((0, 0, 0.72)), rgba=steel),
             Part("box", (0.05, length, 0.3), Pose((0.33, 0, 1.07)), rgba=steel)]
    for y in (-length / 4, length / 4):
        parts.append(Part("box", (0.5, length / 2 - 0.12, 0.01), Pose((0, y, 0.93)), rgba=dark, collide=False))
        parts.append(Part("capsule", (0.02, 0.3), Pose((0.25, y, 1.15)), rgba=steel, collide=False))
    for sx in (-0.3, 0.3):
        for sy in (-length / 2 + 0.05, length / 2 - 0.05):
            parts.append(Part("box", (0.04, 0.04, 0.57), Pose((sx, sy, 0.285)), rgba=steel))
    return _obj(name, "commercial_kitchen_sink", parts, xy, yaw)


def oven(name: str, xy, yaw: float = 0.0) -> ObjectSpec:
    """A range oven: steel body, dark glass door with a handle on local -x, black cooktop, knobs."""
    steel = rgba((185, 187, 192))
    parts = [Part("box", (0.7, 0.9, 0.9), Pose((0, 0, 0.45)), rgba=steel),
             Part("box", (0.01, 0.7, 0.45), Pose((-0.355, 0, 0.4)), rgba=rgba((25, 25, 30)), collide=False),
             Part("box", (0.04, 0.6, 0.03), Pose((-0.375, 0, 0.7)), rgba=rgba((60, 60, 65)), collide=False),
             Part("box", (0.7, 0.9, 0.02), Pose((0, 0, 0.91)), rgba=rgba((20, 20, 22))),
             Part("box", (0.08, 0.9, 0.25), Pose((0.31, 0, 1.04)), rgba=steel)]
    for k in range(4):
        parts.append(Part("cylinder", (0.025, 0.02), Pose((-0.36, -0.3 + 0.2 * k, 0.8), (math.cos(math.pi / 4), 0, math.sin(-math.pi / 4), 0)),
                          rgba=rgba((30, 30, 30)), collide=False))
    return _obj(name, "oven", parts, xy, yaw)


def shelf(name: str, xy, yaw: float = 0.0, *, width: float = 1.2) -> ObjectSpec:
    """A grey metal utility shelf with boxes (garage / storage); back on local +x."""
    grey = rgba((110, 112, 118))
    parts = [Part("box", (0.45, width, 0.03), Pose((0, 0, z)), rgba=grey) for z in (0.1, 0.6, 1.1, 1.6)]
    for sx in (-0.2, 0.2):
        for sy in (-width / 2 + 0.02, width / 2 - 0.02):
            parts.append(Part("box", (0.03, 0.03, 1.7), Pose((sx, sy, 0.85)), rgba=grey))
    parts.append(Part("box", (0.35, 0.4, 0.3), Pose((0, -0.3, 0.77)), rgba=rgba((190, 150, 100)), collide=False))
    return _obj(name, "shelf", parts, xy, yaw)


def kitchen_table(name: str, xy, size=(1.2, 0.8), *, rgb=(160, 115, 70), seed: int = 0) -> list[ObjectSpec]:
    """A breakfast table with a chair on each long side."""
    t = table(name, "breakfast_table", center_xy=xy, size_xy=size, height=0.75, rgb=rgb, seed=seed).obj
    dy = size[1] / 2 + 0.3
    return [t, straight_chair(f"{name}_chair_0", (xy[0], xy[1] + dy), yaw=math.pi / 2),
            straight_chair(f"{name}_chair_1", (xy[0], xy[1] - dy), yaw=-math.pi / 2)]


def plan_ceilings(rooms) -> tuple[Ceiling, ...]:
    """A ceiling over every room with a light fixture over its middle, and a plain one over each part of the plan's
    outer rectangle that no room covers (the outer walls enclose it, so a camera looking in sees under it).

    Example:
        >>> rooms = (RoomRegion("a", "living_room", (-4.0, 4.0, -3.0, 3.0)),
        ...          RoomRegion("b", "corridor", (-4.0, 0.0, -5.0, -3.0)))
        >>> [(c.bounds, c.lights) for c in plan_ceilings(rooms)][2]
        ((-0.05, 4.05, -5.05, -2.95), ())
    """
    out = [room_ceiling(r.bounds, lights=(r.center,)) for r in rooms]
    xs = sorted({v for r in rooms for v in r.bounds[:2]})
    ys = sorted({v for r in rooms for v in r.bounds[2:]})
    for x0, x1 in zip(xs, xs[1:]):
        for y0, y1 in zip(ys, ys[1:]):
            if not any(r.contains(((x0 + x1) / 2, (y0 + y1) / 2)) for r in rooms):
                out.append(room_ceiling((x0, x1, y0, y1)))
    return tuple(out)


# ----------------------------------------------------------------------------- the five plans


def _scene(name: str, rooms, floor_styles, wall_objects, furniture) -> SceneSpec:
    b = np.array([r.bounds for r in rooms])
    x0, x1, y0, y1 = b[:, 0].min(), b[:, 1].max(), b[:, 2].min(), b[:, 3].max()
    t = WALL_THICKNESS
    outer = (walls("wall_outer_s", (x0, y0 - t / 2), (x1, y0 - t / 2)), walls("wall_outer_n", (x0, y1 + t / 2), (x1, y1 + t / 2)),
             walls("wall_outer_w", (x0 - t / 2, y0), (x0 - t / 2, y1)), walls("wall_outer_e", (x1 + t / 2, y0), (x1 + t / 2, y1)))
    floors = tuple(room_floor(r, floor_styles[r.name]) for r in rooms)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    height = max(x1 - x0, y1 - y0) * 0.95 + 2.0      # fovy 60: the top view covers the whole plan
    span = 2 * max(abs(x0), abs(x1), abs(y0), abs(y1)) + 2.0
    return SceneSpec(name=name, objects=outer + tuple(wall_objects) + floors + tuple(furniture), lights=DEFAULT_LIGHTS,
                     cameras=(CameraSpec(TOP_CAMERA, (cx, cy, height), (cx, cy + 1e-3, 0.0)),),
                     robot=RobotSpawn(*rooms[0].center), floor_size=(span, span),
                     floor_texture=tile_texture("floor_outside", base=(120, 130, 110), grout=(110, 120, 100)),
                     ceilings=plan_ceilings(rooms))


def _plan(name, title, rooms, styles, doorways, wall_objects, furniture, destinations, tour) -> FloorPlan:
    scene = _scene(name, rooms, styles, wall_objects, furniture)
    dests = MappingProxyType({d.name: d for d in destinations})
    names = {o.name for o in scene.objects}
    for d in destinations:
        if d.kind == "object" and d.target not in names:
            raise ValueError(f"plan {name!r}: destination {d.name!r} targets missing object {d.target!r}")
    return FloorPlan(name, title, scene, tuple(rooms), tuple(doorways), dests, tuple(tour))


def two_floor_house_main_floor() -> FloorPlan:
    """Living room (NW), kitchen (NE), garage (SW), entryway (SE)."""
    rooms = (RoomRegion("living_room", "living_room", (-5.0, 0.0, 0.0, 4.5)),
             RoomRegion("kitchen", "kitchen", (0.0, 5.0, 0.0, 4.5)),
             RoomRegion("garage", "garage", (-5.0, 1.0, -4.5, 0.0)),
             RoomRegion("entryway", "corridor", (1.0, 5.0, -4.5, 0.0)))
    styles = {"living_room": "planks", "kitchen": "tiles", "garage": "concrete", "entryway": "carpet"}
    doorways = (Doorway(("living_room", "kitchen"), (0.0, 1.5), DOOR_WIDTH_M, "y"),
                Doorway(("living_room", "garage"), (-2.5, 0.0), DOOR_WIDTH_M, "x"),
                Doorway(("kitchen", "entryway"), (3.0, 0.0), DOOR_WIDTH_M, "x"),
                Doorway(("garage", "entryway"), (1.0, -1.0), DOOR_WIDTH_M, "y"))
    wall_objs = (walls("wall_living_kitchen", (0.0, 0.0), (0.0, 4.5), (1.5,)),
                 walls("wall_north_south", (-5.0, 0.0), (5.0, 0.0), (-2.5, 3.0)),
                 walls("wall_garage_entry", (1.0, -4.5), (1.0, 0.0), (-1.0,)))
    counter = countertop("countertop_0", front_x=4.35, depth=0.6, width=2.0, y_center=1.4, seed=1).obj
    furniture = [
        sofa("sofa_0", (-2.2, 4.0), yaw=math.pi / 2, rgb=(70, 95, 130)),
        coffee_table("coffee_table_0", (-2.2, 2.9), size=(1.0, 0.55)),
        stairs("stairs_0", (-4.4, 0.6), yaw=math.pi / 2),
        placed(fridge("fridge_0", front_x=0.0).obj, (4.3, 3.6), 0.0),
        counter,
        *kitchen_table("breakfast_table_0", (2.0, 3.0)),
        car("car_0", (-2.6, -2.7)),
        garage_door("garage_door_0", (-2.6, -4.47), yaw=math.pi / 2),
        shelf("shelf_0", (0.65, -3.6), yaw=0.0),
        table("console_table_0", "console_table", center_xy=(4.7, -3.0), size_xy=(0.4, 1.2), height=0.8, seed=2).obj,
    ]
    dests = (Destination("garage", "region", "garage"), Destination("fridge", "object", "fridge_0"),
             Destination("table in the kitchen", "object", "breakfast_table_0"))
    tour = ((-3.0, 1.5), (-1.0, 1.5), (1.2, 1.5), (3.0, 1.0), (3.0, -1.0), (3.0, -2.0), (2.0, -1.0), (-0.2, -1.0),
            (-2.5, -0.8), (-2.5, 1.5))
    return _plan("two_floor_house_main_floor", "two-floor house, main floor", rooms, styles, doorways, wall_objs,
                 furniture, dests, tour)


def single_floor_house_toy_room() -> FloorPlan:
    """Toy room (north) over a hallway (south)."""
    rooms = (RoomRegion("toy_room", "playroom", (-3.0, 3.0, 0.0, 4.0)),
             RoomRegion("hallway", "corridor", (-3.0, 3.0, -2.0, 0.0)))
    doorways = (Doorway(("toy_room", "hallway"), (-1.5, 0.0), DOOR_WIDTH_M, "x"),)
    wall_objs = (walls("wall_toy_hall", (-3.0, 0.0), (3.0, 0.0), (-1.5,)),)
    furniture = [placed(bookcase("bookcase_0", front_x=0.0).obj, (1.5, 3.6), math.pi / 2),
                 toy_box("toy_box_0", (-2.45, 3.2)),
                 teddy_bear("teddy_bear_0", (-1.2, 3.5)),
                 ObjectSpec("armchair_0", "armchair", sofa("armchair_0", (0, 0), length=0.9, rgb=(180, 140, 60)).parts,
                            pose=Pose.from_xy_yaw(2.45, 1.0, 0.0, 0.0), static=True),
                 shelf("shelf_0", (2.7, -1.0), yaw=0.0, width=1.0)]
    tour = ((2.0, -1.0), (-1.5, -1.0), (-1.5, 1.2), (0.0, 2.0), (1.5, 2.2))
    return _plan("single_floor_house_toy_room", "single-floor house, toy room", rooms,
                 {"toy_room": "carpet", "hallway": "planks"}, doorways, wall_objs, furniture,
                 (Destination("bookcase", "object", "bookcase_0"),), tour)


def single_floor_house_bedroom() -> FloorPlan:
    """Bedroom (west), bathroom (SE), hallway (NE)."""
    rooms = (RoomRegion("bedroom", "bedroom", (-3.0, 2.0, -2.5, 2.5)),
             RoomRegion("bathroom", "bathroom", (2.0, 5.0, -2.5, 0.5)),
             RoomRegion("hallway", "corridor", (2.0, 5.0, 0.5, 2.5)))
    doorways = (Doorway(("bedroom", "bathroom"), (2.0, -1.2), DOOR_WIDTH_M, "y"),
                Doorway(("bedroom", "hallway"), (2.0, 1.5), DOOR_WIDTH_M, "y"))
    wall_objs = (walls("wall_bed_east", (2.0, -2.5), (2.0, 2.5), (-1.2, 1.5)),
                 walls("wall_bath_hall", (2.0, 0.5), (5.0, 0.5)))
    the_bed = bed("bed_0", center_xy=(0.0, 0.0), size_xy=(2.0, 1.5)).obj
    furniture = [placed(the_bed, (-1.95, 0.3), math.pi),
                 toilet("toilet_0", (4.6, -2.0), yaw=0.0),
                 bathtub("bathtub_0", (3.4, 0.0)),
                 pedestal_sink("pedestal_sink_0", (4.7, -0.9)),
                 shelf("wardrobe_shelf_0", (-0.5, -2.2), yaw=-math.pi / 2, width=1.0)]
    tour = ((0.5, 1.5), (2.8, 1.5), (4.0, 1.5), (2.8, 1.5), (1.2, 1.5), (1.0, -1.2), (3.2, -1.2))
    return _plan("single_floor_house_bedroom", "single-floor house, bedroom", rooms,
                 {"bedroom": "carpet", "bathroom": "tiles", "hallway": "planks"}, doorways, wall_objs, furniture,
                 (Destination("bathroom", "region", "bathroom"),), tour)


def single_floor_house_open_living_area() -> FloorPlan:
    """An open living + dining area (north) and an entry hall (south-west)."""
    rooms = (RoomRegion("living_area", "living_room", (-4.0, 4.0, -3.0, 3.0)),
             RoomRegion("entry_hall", "corridor", (-4.0, 0.0, -5.0, -3.0)))
    doorways = (Doorway(("living_area", "entry_hall"), (-1.5, -3.0), DOOR_WIDTH_M, "x"),)
    wall_objs = (walls("wall_living_entry", (-4.0, -3.0), (4.0, -3.0), (-1.5,)),)
    furniture = [sofa("sofa_0", (-3.5, 0.5), yaw=math.pi, rgb=(120, 80, 70)),
                 coffee_table("coffee_table_0", (-2.35, 0.5), size=(0.55, 1.0)),
                 ObjectSpec("armchair_0", "armchair", sofa("armchair_0", (0, 0), length=0.9, rgb=(90, 110, 80)).parts,
                            pose=Pose.from_xy_yaw(-2.4, 2.4, 0.0, math.pi / 2), static=True),
                 *kitchen_table("breakfast_table_0", (2.4, 0.0), size=(1.4, 0.9), rgb=(190, 150, 100), seed=6),
                 countertop("countertop_0", front_x=3.35, depth=0.6, width=2.0, y_center=2.0, seed=2).obj,
                 shelf("shelf_0", (-3.7, -4.2), yaw=math.pi, width=1.0)]
    tour = ((-2.8, -4.0), (-1.5, -4.0), (-1.5, -2.0), (-1.0, 0.5), (1.0, 0.5), (1.0, -1.8), (-1.0, -1.8))
    return _plan("single_floor_house_open_living_area", "single-floor house, open living area", rooms,
                 {"living_area": "planks", "entry_hall": "tiles"}, doorways, wall_objs, furniture,
                 (Destination("table near the sofa", "object", "coffee_table_0"),), tour)


def restaurant_diner() -> FloorPlan:
    """Dining hall (west) with booths and the bar; kitchen (east) with the sink and ovens."""
    rooms = (RoomRegion("dining_hall", "dining_room", (-6.0, 2.0, -4.0, 4.0)),
             RoomRegion("kitchen", "kitchen", (2.0, 6.0, -4.0, 4.0)))
    doorways = (Doorway(("dining_hall", "kitchen"), (2.0, -2.4), DOOR_WIDTH_M, "y"),)
    wall_objs = (walls("wall_hall_kitchen", (2.0, -4.0), (2.0, 4.0), (-2.4,)),)
    # Corner booth: yaw pi/2 puts its backrests on the north (local +x) and west (local +y) walls.
    furniture = [booth("booth_corner", (-5.1, 3.72), yaw=math.pi / 2, corner=True, length=1.8),
                 booth("booth_0", (-3.6, -3.72), yaw=-math.pi / 2, length=1.4, rgb=(40, 90, 150)),
                 booth("booth_1", (-1.2, -3.72), yaw=-math.pi / 2, length=1.4, rgb=(40, 90, 150)),
                 bar("bar_0", (0.9, 1.8), yaw=0.0, length=3.0),
                 *[bar_stool(f"bar_stool_{k}", (0.35, 0.7 + 0.75 * k)) for k in range(4)],
                 *kitchen_table("breakfast_table_0", (-3.0, 0.5), size=(1.0, 0.8), rgb=(120, 80, 50), seed=3),
                 commercial_kitchen_sink("commercial_kitchen_sink_0", (5.6, 2.6)),
                 oven("oven_0", (5.6, -1.2)),
                 oven("oven_1", (5.6, -2.2)),
                 countertop("countertop_0", front_x=3.3, depth=0.8, width=1.6, y_center=0.6, seed=4).obj]
    tour = ((-4.0, -1.5), (-4.0, 2.0), (-1.0, 2.5), (-0.6, -0.5), (0.5, -2.4), (3.0, -2.4), (4.7, -1.6), (4.7, 2.5))
    return _plan("restaurant_diner", "restaurant diner", rooms, {"dining_hall": "checker", "kitchen": "tiles"},
                 doorways, wall_objs, furniture,
                 (Destination("corner booth", "object", "booth_corner"), Destination("bar", "object", "bar_0"),
                  Destination("kitchen sink", "object", "commercial_kitchen_sink_0"),
                  Destination("oven", "object", "oven_0")), tour)


_BUILDERS: Mapping[str, Callable[[], FloorPlan]] = MappingProxyType({
    "two_floor_house_main_floor": two_floor_house_main_floor,
    "single_floor_house_toy_room": single_floor_house_toy_room,
    "single_floor_house_bedroom": single_floor_house_bedroom,
    "single_floor_house_open_living_area": single_floor_house_open_living_area,
    "restaurant_diner": restaurant_diner,
})
FLOORPLANS: tuple[str, ...] = tuple(_BUILDERS)
"""The five navigation floor plans (Table S11 scenes)."""


@functools.lru_cache(maxsize=None)
def get_floorplan(name: str) -> FloorPlan:
    """Build (once) the floor plan ``name``; unknown names raise listing the known ones."""
    return lookup(_BUILDERS, name, "floor plan")()
