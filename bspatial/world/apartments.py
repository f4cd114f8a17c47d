"""Seeded apartment floor plans for the activity scenes: rooms of different shapes and sizes, doors, furniture.

Method (a two-level rectangle subdivision, deterministic in the rng). The apartment is a rectangle cut
across x into two bands ("rows": the work-wall band at x in [0, D0] and the back band behind it), each band
cut along y into three rooms, the back band's walls shifted from the front band's (:func:`_draw_layouts`), so
the interior walls of the two bands do not line up (no grid) and rooms differ in width, depth and aspect.
Draws are kept only when

* every room is at least :data:`MIN_ROOM_SIDE_M` on each side (the activity room wider: its work wall
  holds a work surface and a storage unit),
* the six areas differ pairwise by the ratio :data:`MIN_AREA_RATIO` (multi-frame VQA asks "which room has
  the largest area?" with a 10% margin, Appendix 11; the earlier equal grid differed by 12%),
* every pair of rooms that are neighbours in row-major order (left / right in a band, and the room
  behind) shares a wall long enough for a doorway on the straight line between their centres, and
* every room can be furnished with its defining furniture (:func:`bspatial.world.rooms.furnish`).

**Which room gets which rectangle.** The activity room's type is fixed to its rectangle (index ``home``: its
wide openings and work wall are laid out there); the other five types are given to the other five
rectangles by their areas, from the realistic range of each type (:data:`bspatial.world.rooms.AREA_RANGE_M2`:
bathrooms and utility rooms small, bedrooms, offices and child's rooms medium, kitchens, dining and living rooms
and garages large). A room whose area is ``d`` m^2 outside its type's range fits it by ``exp(-d /``
:data:`AREA_SLACK_M2` ``)`` (1 inside). A drawn layout is kept with probability (the activity room's fit) x
(the best assignment's fit, the product over the five rooms), and then one of the 120 assignments is drawn in
proportion to its fit: among the assignments that put every room in its range, uniformly. So types follow
areas (six areas 12% apart from 9 m^2 up put the largest at 15.9 m^2 or more, which fits a bathroom by 0.02 at
most) while the large types, whose ranges overlap as in real homes, take the largest rectangles in any order:
the room largest by typical area (a garage, else a living room) is the largest room in about half of the
apartments (44% of 100), so size questions can be balanced against a blind baseline that knows typical areas
(``benchmarks/apartments.py`` measures both). Drawing the areas first and building
rectangles around them would have meant a new layout generator; weighing assignments keeps this one and its
rules, and costs only more layout draws, which are drawn in vectorised batches (:data:`DRAW_BATCH`).

Rooms are listed row-major (band 0 from -y to +y, then band 1), so index arithmetic on a 2 x 3 layout
still names neighbours (the general-VQA navigation walk relies on it) while the geometry is not a grid.
Every neighbour pair is joined by an opening centred on the line between the room centres: wide
doorways (:data:`WIDE_OPENING_M`) around the activity room, whose rotation views look through them into
the other rooms, and doors (:data:`DOOR_OPENING_M`, with an opened door leaf) between the others. Walls are
built per room (half the wall thickness on each side of a shared wall), so each room shows its own wall
finish; door casings frame every opening.

Every room has a ceiling with its light's fixture (:func:`bspatial.world.rooms.room_ceilings`, ``Apartment.ceilings``).

Example:
    >>> import numpy as np
    >>> apt = apartment(["kitchen", "bedroom", "garage", "bathroom", "living_room", "private_office"],
    ...                 np.random.default_rng(0), home=1)
    >>> len(apt.rooms), len(apt.doorways), len(apt.ceilings), apt.rooms[1].kind
    (6, 7, 6, 'bedroom')
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from bspatial.world import fixtures as fx
from bspatial.world.floorplans import LINTEL_BOTTOM_M, Doorway, FloorPlan, OccupancyGrid, RoomRegion
from bspatial.world.furniture import WALL_HEIGHT, WALL_THICKNESS
from bspatial.world.rooms import (FurnishingError, Rect, WallMaterial, area_range, footprint, furnish, moved,
                                  room_ceilings, room_floor, room_lights, room_materials, wall_texture)
from bspatial.world.spec import Ceiling, LightSpec, ObjectSpec, Part, Pose, SceneSpec
from bspatial.world.textures import rgba

ROWS, COLUMNS = 2, 3
"""Two bands of three rooms: the four candidate rooms of a multi-frame question exist, and more."""
DEPTH_RANGE_M = ((3.0, 4.4), (3.0, 5.6))
"""Band depths along x (work-wall band, back band), household room sizes."""
WIDTH_RANGE_M = (10.0, 14.0)
"""Apartment width along y, cut into three rooms per band."""
SHIFT_RANGE_M = (0.4, 1.2)
"""How much narrower the back band's end rooms are than the front band's (the back middle room is wider by
twice it): the bands' interior walls are this far apart."""
MIN_ROOM_SIDE_M = 3.0
MIN_HOME_WIDTH_M = 3.2
"""The activity room's work wall holds a 1.0 m storage unit and a 1.2-1.4 m work surface with gaps."""
MIN_AREA_RATIO = 1.12
"""Any two rooms' areas differ by at least 12% (above the 10% size margin of Appendix 11)."""
WIDE_OPENING_M = 1.9
"""Openings of the activity room: wide, so its rotation views see the neighbouring rooms (BEHAVIOR houses
have open doorways too)."""
DOOR_OPENING_M = 1.2
"""Doors between the other rooms (floorplans.DOOR_WIDTH_M: 0.4 m of free corridor for the robot)."""
JAMB_MARGIN_M = 0.2
"""An opening keeps this far from the corners of the wall it is cut in (wall ends and casings)."""
CASING_M = 0.07
AREA_SLACK_M2 = 1.0
"""How soft the ends of a room type's area range are: a room ``d`` m^2 outside its type's range fits it by
``exp(-d / 1.0)`` (2 m^2 out: 0.14). Softer (2 m^2), and a bathroom of 24 m^2 happens; harder, and more layouts
are redrawn (an activity apartment takes 0.08 s at the median, furnishing included)."""
DRAW_BATCH = 2048
"""Layouts drawn at once (vectorised): about one in 1,500 passes the geometric rules."""
MAX_DRAWS = 1_000_000
"""Layout draws before giving up (a draw is rejected by the rules of the module docstring). The 98 activity
apartments of layout seeds 1000-1097 took 6,000 draws at the median and 164,000 at most (0.3 s, furnishing
included)."""
_SLOT_ORDERS = np.array(list(itertools.permutations(range(ROWS * COLUMNS - 1))))
"""The 120 ways to give the five other room types to the five other rectangles (row ``p``: type ``t`` takes
rectangle ``p[t]``)."""


@dataclass(frozen=True, eq=False)
class Apartment:
    """A furnished apartment: rooms (row-major), doorways, every object (walls, floors, doors, furniture),
    lights, and the rooms' ceilings (a scene built from it passes ``ceilings=apt.ceilings``).

    ``plan`` is the same apartment as a :class:`~bspatial.world.floorplans.FloorPlan` (no destinations), so
    its occupancy grid is rasterised by the navigation suite's code from the colliding geometry.
    """

    rooms: tuple[RoomRegion, ...]
    doorways: tuple[Doorway, ...]
    objects: tuple[ObjectSpec, ...]
    lights: tuple[LightSpec, ...]
    plan: FloorPlan
    ceilings: tuple[Ceiling, ...] = ()

    def occupancy(self) -> OccupancyGrid:
        return self.plan.occupancy()

    def neighbours(self, i: int) -> list[int]:
        """Rooms joined to room ``i`` by a doorway."""
        names = {r.name: k for k, r in enumerate(self.rooms)}
        out = {names[b] for d in self.doorways for a, b in (d.rooms, d.rooms[::-1]) if names[a] == i}
        return sorted(out)


# ----------------------------------------------------------------------------- layout


def grid_neighbours(i: int) -> list[int]:
    """Row-major neighbours of room ``i`` on the 2 x 3 index layout (left, right, the other band)."""
    r, c = divmod(i, COLUMNS)
    return sorted((r + dr) * COLUMNS + (c + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
                  if 0 <= r + dr < ROWS and 0 <= c + dc < COLUMNS)


def _draw_layouts(rng: np.random.Generator, home: int, n: int) -> np.ndarray:
    """The six room rectangles of each of ``n`` seeded draws that pass the geometric rules, in draw order:
    (m, 6, 4) of (x0, x1, y0, y1).

    The front band is cut at seeded proportions; the back band's two end rooms are narrower than the front
    ones by a seeded shift and its middle room wider by twice it, so the interior walls do not line up while
    the back middle room stays centred behind the activity room: a walk from the activity room through a
    neighbour and on to the next never turns back by more than 90 degrees (the navigation tours face along
    their walk). Band depths are drawn independently, so either band may hold the larger rooms.
    """
    d0 = rng.uniform(*DEPTH_RANGE_M[0], n)
    d1 = rng.uniform(*DEPTH_RANGE_M[1], n)
    width = rng.uniform(*WIDTH_RANGE_M, n)
    weights = rng.uniform(0.5, 1.5, (n, COLUMNS))
    front = width[:, None] * weights / weights.sum(axis=1, keepdims=True)
    shift = rng.uniform(*SHIFT_RANGE_M, n)
    back = front + shift[:, None] * np.array([-1.0, 2.0, -1.0])
    widths = np.stack([front, back], axis=1)                                        # (n, band, column)
    ys = np.concatenate([np.zeros((n, ROWS, 1)), np.cumsum(widths, axis=2)], axis=2) - width[:, None, None] / 2
    xs = np.stack([np.zeros(n), d0, d0 + d1], axis=1)
    bounds = np.empty((n, ROWS, COLUMNS, 4))
    bounds[..., 0], bounds[..., 1] = xs[:, :ROWS, None], xs[:, 1:, None]
    bounds[..., 2], bounds[..., 3] = ys[..., :-1], ys[..., 1:]
    bounds = bounds.reshape(n, ROWS * COLUMNS, 4)
    dx, dy = bounds[..., 1] - bounds[..., 0], bounds[..., 3] - bounds[..., 2]
    areas = np.sort(dx * dy, axis=1)
    keep = ((np.minimum(dx, dy).min(axis=1) >= MIN_ROOM_SIDE_M) & (dy[:, home] >= MIN_HOME_WIDTH_M)
            & np.all(areas[:, 1:] >= areas[:, :-1] * MIN_AREA_RATIO, axis=1))
    return bounds[keep]


def area_fit(kind: str, area: float) -> float:
    """How well a room of ``area`` m^2 fits room type ``kind``: 1 within its range
    (:data:`bspatial.world.rooms.AREA_RANGE_M2`), ``exp(-d / AREA_SLACK_M2)`` when ``d`` m^2 outside it.

    Example:
        >>> area_fit("bathroom", 10.0), round(area_fit("bathroom", 14.0), 3)
        (1.0, 0.135)
    """
    low, high = area_range(kind)
    return math.exp(-(max(0.0, low - area) + max(0.0, area - high)) / AREA_SLACK_M2)


def _assign_kinds(kinds: Sequence[str], areas: Sequence[float], home: int,
                  rng: np.random.Generator) -> list[str] | None:
    """The room type of each rectangle (``kinds[home]`` stays at ``home``), or None when the draw is not kept
    (see "Which room gets which rectangle" in the module docstring)."""
    others = [k for i, k in enumerate(kinds) if i != home]
    slots = [i for i in range(len(kinds)) if i != home]
    fit = np.array([[area_fit(kind, areas[slot]) for slot in slots] for kind in others])   # type x rectangle
    weights = fit[np.arange(len(others)), _SLOT_ORDERS].prod(axis=1)
    if rng.uniform() >= area_fit(kinds[home], areas[home]) * weights.max():
        return None
    order = _SLOT_ORDERS[rng.choice(len(weights), p=weights / weights.sum())]
    assigned = list(kinds)
    for kind, slot in zip(others, order):
        assigned[slots[slot]] = kind
    return assigned


def _center(b: Rect) -> np.ndarray:
    return np.array([(b[0] + b[1]) / 2, (b[2] + b[3]) / 2])


def _doorway(names: Sequence[str], bounds: Sequence[Rect], i: int, j: int, width: float) -> Doorway | None:
    """The opening between rooms ``i`` and ``j`` where the line between their centres crosses their shared
    wall, or None when it does not leave :data:`JAMB_MARGIN_M` to the wall's ends."""
    a, b = bounds[i], bounds[j]
    ca, cb = _center(a), _center(b)
    if abs(a[1] - b[0]) < 1e-9 or abs(b[1] - a[0]) < 1e-9:       # shared wall along y at x = const
        x = a[1] if abs(a[1] - b[0]) < 1e-9 else a[0]
        lo, hi = max(a[2], b[2]), min(a[3], b[3])
        y = ca[1] + (cb[1] - ca[1]) * (x - ca[0]) / (cb[0] - ca[0])
        if not lo + width / 2 + JAMB_MARGIN_M <= y <= hi - width / 2 - JAMB_MARGIN_M:
            return None
        return Doorway((names[i], names[j]), (float(x), float(y)), width, "y")
    y = a[3] if abs(a[3] - b[2]) < 1e-9 else a[2]                # shared wall along x at y = const
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    x = ca[0] + (cb[0] - ca[0]) * (y - ca[1]) / (cb[1] - ca[1])
    if not lo + width / 2 + JAMB_MARGIN_M <= x <= hi - width / 2 - JAMB_MARGIN_M:
        return None
    return Doorway((names[i], names[j]), (float(x), float(y)), width, "x")


def _doorways(names: Sequence[str], bounds: Sequence[Rect], home: int) -> list[Doorway] | None:
    out = []
    for i in range(len(bounds)):
        for j in grid_neighbours(i):
            if j > i:
                d = _doorway(names, bounds, i, j, WIDE_OPENING_M if home in (i, j) else DOOR_OPENING_M)
                if d is None:
                    return None
                out.append(d)
    return out


# ----------------------------------------------------------------------------- walls and doors


def _sides(b: Rect) -> dict[str, tuple[str, float, float, float]]:
    """side -> (axis the wall runs along, fixed coordinate, start, end)."""
    x0, x1, y0, y1 = b
    return {"x0": ("y", x0, y0, y1), "x1": ("y", x1, y0, y1), "y0": ("x", y0, x0, x1), "y1": ("x", y1, x0, x1)}


def _exterior(b: Rect, outer: Rect) -> list[str]:
    return [s for s, (_, fixed, _, _) in _sides(b).items()
            if abs(fixed - outer[{"x0": 0, "x1": 1, "y0": 2, "y1": 3}[s]]) < 1e-9]


def room_walls(room: RoomRegion, material: WallMaterial, doorways: Sequence[Doorway], exterior: Sequence[str]) -> ObjectSpec:
    """The walls of one room (category ``walls``, named ``wall_<room>``) in the room's own finish.

    Shared walls: the half of the wall thickness on this room's side; outer walls: the full thickness
    outside the room. Each doorway on a side leaves a gap with a lintel and a door casing.
    """
    t = WALL_THICKNESS
    tex = wall_texture(f"wall_{room.name}", material)
    white, casing = rgba((255, 255, 255)), rgba((245, 243, 238))
    parts = []
    for side, (along, fixed, lo, hi) in _sides(room.bounds).items():
        inward = 1.0 if side in ("x0", "y0") else -1.0
        outer = side in exterior
        thick = t if outer else t / 2
        mid_line = fixed - inward * t / 2 if outer else fixed + inward * t / 4
        gaps = sorted((d.center[0] if along == "x" else d.center[1], d.width) for d in doorways
                      if d.along == along and abs((d.center[1] if along == "x" else d.center[0]) - fixed) < 1e-6
                      and lo < (d.center[0] if along == "x" else d.center[1]) < hi)
        ext = t if outer else 0.0             # outer walls run past the corners
        edges = [lo - ext]
        for c, w in gaps:
            edges += [c - w / 2, c + w / 2]
        edges.append(hi + ext)

        def box(a, b, z0, z1, offset=0.0, depth=thick, rgba_=white, texture=tex, collide=True):
            m, length = (a + b) / 2, b - a
            line = mid_line + offset
            size = (length, depth, z1 - z0) if along == "x" else (depth, length, z1 - z0)
            pos = (m, line, (z0 + z1) / 2) if along == "x" else (line, m, (z0 + z1) / 2)
            parts.append(Part("box", size, Pose(pos), rgba=rgba_, texture=texture, collide=collide))

        for a, b in zip(edges[0::2], edges[1::2]):
            if b - a > 1e-6:
                box(a, b, 0.0, WALL_HEIGHT)
        face = fixed + inward * ((0.0 if outer else t / 2) + 0.006)   # casings on this room's face of the wall
        for c, w in gaps:
            box(c - w / 2, c + w / 2, LINTEL_BOTTOM_M, WALL_HEIGHT)
            for a, b in ((c - w / 2 - CASING_M, c - w / 2), (c + w / 2, c + w / 2 + CASING_M)):
                box(a, b, 0.0, LINTEL_BOTTOM_M + CASING_M, offset=face - mid_line, depth=0.012, rgba_=casing,
                    texture=None, collide=False)
            box(c - w / 2 - CASING_M, c + w / 2 + CASING_M, LINTEL_BOTTOM_M, LINTEL_BOTTOM_M + CASING_M,
                offset=face - mid_line, depth=0.012, rgba_=casing, texture=None, collide=False)
    return ObjectSpec(name=f"wall_{room.name}", category="walls", parts=tuple(parts), static=True)


def _door_leaf(d: Doorway, rooms: dict[str, RoomRegion], rng: np.random.Generator) -> ObjectSpec:
    """An opened door leaf hinged at one jamb, swung 90 degrees into one of the two rooms."""
    into = rooms[d.rooms[int(rng.integers(2))]]
    hinge_side = 1.0 if rng.integers(2) else -1.0
    width = d.width - 0.06
    cx, cy = d.center
    t = WALL_THICKNESS / 2
    if d.along == "x":       # wall along x at y = cy: the leaf stands along y from the hinge
        sign = 1.0 if into.center[1] > cy else -1.0
        hx = cx + hinge_side * (d.width / 2 - 0.03)
        pose = (hx, cy + sign * (t + width / 2), math.pi / 2)
    else:
        sign = 1.0 if into.center[0] > cx else -1.0
        hy = cy + hinge_side * (d.width / 2 - 0.03)
        pose = (cx + sign * (t + width / 2), hy, 0.0)
    leaf = fx.door_leaf(f"door_{d.rooms[0]}_{d.rooms[1]}", width=width,
                        rgb=((235, 230, 220), (160, 115, 75), (250, 250, 248))[int(rng.integers(3))])
    return moved(leaf, *pose)


# ----------------------------------------------------------------------------- the apartment


def apartment(kinds: Sequence[str], rng: np.random.Generator, *, home: int = 1,
              home_keep_out: Callable[[Rect], Sequence[Rect]] = lambda bounds: (),
              home_exclude: Sequence[str] = ()) -> Apartment:
    """A seeded, furnished apartment of ``len(kinds) == 6`` rooms (row-major, see the module docstring).

    Args:
        kinds: the bddl room types of the rooms (room names are the kinds, so kinds must be distinct);
            ``kinds[home]`` is the activity room's, the others go to the other rectangles by area (the order
            they are given in does not matter; ``Apartment.rooms`` says where each went).
        rng: seeded generator.
        home: index of the activity room (its openings are wide; its furniture is best-effort).
        home_keep_out: the activity room's bounds -> rectangles of it to leave empty (the caller's work area:
            the work wall's furniture and where views stand).
        home_exclude: categories the activity room must not get (the storage unit's, named by questions).

    Raises:
        ValueError: ``kinds`` has the wrong length or repeats, or no draw in :data:`MAX_DRAWS` passes the rules.
    """
    kinds = list(kinds)
    if len(kinds) != ROWS * COLUMNS or len(set(kinds)) != len(kinds):
        raise ValueError(f"kinds must be {ROWS * COLUMNS} distinct room kinds, got {kinds!r}")
    for kind in kinds:
        area_range(kind)   # unknown kinds raise naming the known ones
    for _ in range(MAX_DRAWS // DRAW_BATCH):
        for rects in _draw_layouts(rng, home, DRAW_BATCH):
            bounds = [tuple(float(v) for v in r) for r in rects]
            if _doorways(kinds, bounds, home) is None:
                continue
            assigned = _assign_kinds(kinds, [(b[1] - b[0]) * (b[3] - b[2]) for b in bounds], home, rng)
            if assigned is None:
                continue
            doorways = _doorways(assigned, bounds, home)   # the same openings, named by the assigned rooms
            try:
                return _build(assigned, bounds, doorways, rng, home, home_keep_out, home_exclude)
            except FurnishingError:
                continue
    raise ValueError(f"no apartment layout for kinds {kinds!r} passed the rules in {MAX_DRAWS} draws")


def _build(kinds, bounds, doorways, rng, home, home_keep_out, home_exclude) -> Apartment:
    rooms = tuple(RoomRegion(k, k, tuple(float(v) for v in b)) for k, b in zip(kinds, bounds))
    by_name = {r.name: r for r in rooms}
    outer = (min(b[0] for b in bounds), max(b[1] for b in bounds), min(b[2] for b in bounds), max(b[3] for b in bounds))
    leaves = [_door_leaf(d, by_name, rng) for d in doorways if home not in [kinds.index(n) for n in d.rooms]]
    leaf_boxes = footprint(leaves)
    picks = {k: int(rng.integers(64)) for k in kinds}
    seen: dict[str, int] = {}
    walls, floors, furniture = [], [], []
    for i, room in enumerate(rooms):
        floor_m, wall_m = room_materials(room.kind, seen.get(room.kind, 0), picks[room.kind])
        seen[room.kind] = seen.get(room.kind, 0) + 1
        exterior = _exterior(room.bounds, outer)
        mine = [d for d in doorways if room.name in d.rooms]
        walls.append(room_walls(room, wall_m, mine, exterior))
        floors.append(room_floor(room, floor_m))
        keep = list(home_keep_out(room.bounds)) if i == home else []
        furniture += furnish(room, rng, exterior=exterior, doors=[(d.center, d.width, d.along) for d in mine],
                             keep_out=keep, taken=leaf_boxes, required=i != home,
                             exclude=home_exclude if i == home else ())
    objects = tuple(walls) + tuple(floors) + tuple(leaves) + tuple(furniture)
    lights, ceilings = room_lights(rooms), room_ceilings(rooms)
    scene = SceneSpec("apartment", objects=objects, lights=lights, robot=None, ceilings=ceilings)
    plan = FloorPlan("apartment", "activity apartment", scene, rooms, tuple(doorways), {}, ())
    return Apartment(rooms, tuple(doorways), objects, lights, plan, ceilings)
