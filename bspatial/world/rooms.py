"""Room types and furnished rooms: what makes a bathroom read as a bathroom.

Each of the nine home room types the 49 activities use (bddl ``inroom`` types, the same list as
:data:`bspatial.construction.questions.activities.HOME_ROOMS`) has

* the furniture that defines it (:data:`ROOM_TYPES`, ``defining``: groups of BEHAVIOR categories, one of
  each group must be in the room: a bathroom has a toilet, a sink and a bathtub *or* a shower);
* floor and wall materials of its own (:func:`room_materials`): tiles in bathrooms and kitchens, carpet in
  bedrooms, bright carpet and paint in a child's room, concrete in a garage...; two rooms of one type in
  one apartment get different entries of the type's palette;
* a realistic floor-area range (:data:`AREA_RANGE_M2`: bathrooms small, bedrooms medium, living rooms large),
  by which the apartments give their rectangles to room types (:mod:`bspatial.world.apartments`);
* a ceiling light (:func:`room_lights`: one downward spot per room plus the shadow-casting sun) under a ceiling
  with the light's fixture (:func:`room_ceilings`).

:func:`furnish` places a room's pieces against its walls (backs to the wall) or free-standing, by seeded
rejection sampling that keeps clear of doorways, of the walk lines between doors and the room centre
(the navigation tours' camera paths) and of caller-given keep-out zones (the activity room's work area).

Example:
    >>> import numpy as np
    >>> from bspatial.world.floorplans import RoomRegion
    >>> room = RoomRegion("bathroom", "bathroom", (0.0, 3.2, 0.0, 3.0))
    >>> objs = furnish(room, np.random.default_rng(0))
    >>> has_defining(room.kind, [o.category for o in objs])
    True
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

import numpy as np

from bspatial.world import fixtures as fx
from bspatial.world.floorplans import (ROBOT_RADIUS_M, RoomRegion, bathtub, car, connected_to, garage_door, oven, part_footprints,
                                      pedestal_sink, shelf, toilet, toy_box)
from bspatial.world.furniture import WALL_HEIGHT, WALL_THICKNESS, bookcase, coffee_table, countertop, room_ceiling, sofa
from bspatial.world.objects import closed_fridge
from bspatial.world.spec import Ceiling, LightSpec, ObjectSpec, Part, Pose, SceneSpec, Texture
from bspatial.world.textures import RGB, fabric_texture, plank_floor_texture, rgba, tile_texture

Rect = tuple[float, float, float, float]
"""(x0, x1, y0, y1) in world metres."""

PASSAGE_CELL_M = 0.1
"""Grid cell of the passage check: after each piece, the robot (floorplans.ROBOT_RADIUS_M) must still get from
every doorway of the room to every other (floorplans.GRID_RESOLUTION_M, the navigation grid's cell)."""
TALL_M = 1.2
"""Pieces whose top is above 1.2 m would cut into a head-height (1.5 m) camera looking 10 degrees down."""
CAMERA_CLEARANCE_M = 0.3
"""Tall pieces keep this far from the camera paths (a camera is a point; 0.3 m keeps its near view readable)."""
DOOR_CLEARANCE_M = 1.0
"""Nothing stands within 1.0 m in front of a doorway (a robot passing through needs its 0.8 m diameter)."""
FURNITURE_GAP_M = 0.08
"""Free space between two placed pieces."""
PLACEMENT_TRIES = 40
"""Rejection-sampling draws per piece and wall side."""


# ----------------------------------------------------------------------------- room types


@dataclass(frozen=True)
class FloorMaterial:
    """A floor finish: ``style`` "tiles" / "planks" / "carpet" / "concrete", a base colour and a joint colour."""

    style: str
    base: RGB
    joint: RGB = (0, 0, 0)
    repeat: float = 8.0


@dataclass(frozen=True)
class WallMaterial:
    """A wall finish: paint (``tiled`` False) or tiles / blocks (``tiled`` True, joints in ``joint``)."""

    base: RGB
    tiled: bool = False
    joint: RGB = (0, 0, 0)


@dataclass(frozen=True)
class RoomType:
    """A home room type: its question wording, defining furniture and material palettes.

    Attributes:
        kind: bddl room type (``private_office``...).
        label: how questions name it ("office").
        defining: groups of BEHAVIOR categories; a furnished room holds at least one category of every group.
        floors / walls: palettes; rooms of this type draw from them.
    """

    kind: str
    label: str
    defining: tuple[tuple[str, ...], ...]
    floors: tuple[FloorMaterial, ...]
    walls: tuple[WallMaterial, ...]


def _t(kind, label, defining, floors, walls) -> RoomType:
    return RoomType(kind, label, tuple(tuple(g) for g in defining), tuple(floors), tuple(walls))


F, W = FloorMaterial, WallMaterial
ROOM_TYPES: Mapping[str, RoomType] = MappingProxyType({t.kind: t for t in (
    _t("bathroom", "bathroom", [["toilet"], ["pedestal_sink"], ["bathtub", "shower_stall"]],
       [F("tiles", (236, 238, 240), (140, 160, 170), 16.0), F("tiles", (160, 190, 205), (110, 135, 150), 14.0)],
       [W((225, 240, 242), True, (170, 195, 200)), W((245, 245, 240), True, (190, 190, 185))]),
    _t("kitchen", "kitchen", [["countertop"], ["drop_in_sink"], ["fridge"], ["oven"]],
       [F("tiles", (190, 110, 80), (140, 85, 65), 9.0), F("tiles", (205, 205, 198), (120, 120, 115), 10.0),
        F("tiles", (60, 62, 68), (110, 110, 115), 10.0)],
       [W((248, 240, 220)), W((215, 232, 215))]),
    _t("bedroom", "bedroom", [["bed"], ["wardrobe"], ["nightstand"]],
       [F("carpet", (195, 180, 155)), F("carpet", (120, 130, 150)), F("planks", (200, 165, 120))],
       [W((175, 195, 215)), W((200, 215, 190)), W((225, 200, 200))]),
    _t("childs_room", "child's room", [["bed"], ["toy_box", "toy_train", "toy_car", "toy_figure"]],
       [F("carpet", (135, 205, 175)), F("carpet", (150, 185, 235)), F("carpet", (200, 170, 220))],
       [W((250, 225, 110)), W((165, 225, 200)), W((255, 190, 160))]),
    _t("private_office", "office", [["desk"], ["swivel_chair"], ["monitor", "desktop_computer"], ["bookcase", "shelf"]],
       [F("planks", (105, 72, 50)), F("carpet", (85, 88, 95))],
       [W((150, 165, 180)), W((200, 200, 195))]),
    _t("living_room", "living room", [["sofa"], ["standing_tv"], ["coffee_table"]],
       [F("planks", (175, 128, 85)), F("planks", (195, 150, 100))],
       [W((232, 222, 200)), W((210, 200, 185)), W((190, 205, 200))]),
    _t("dining_room", "dining room", [["breakfast_table"], ["straight_chair"]],
       [F("planks", (150, 88, 62)), F("tiles", (228, 222, 210), (190, 185, 175), 5.0)],
       [W((195, 120, 95)), W((160, 165, 120)), W((235, 225, 205))]),
    _t("garage", "garage", [["car", "toolbox"], ["shelf"], ["garage_door"]],
       [F("concrete", (140, 140, 138), (120, 120, 118), 2.0), F("concrete", (118, 120, 124), (100, 102, 105), 2.0)],
       [W((165, 165, 160), True, (130, 130, 126)), W((185, 180, 170), True, (150, 146, 138))]),
    _t("utility_room", "utility room", [["washer"], ["clothes_dryer", "furniture_sink"], ["shelf"]],
       [F("tiles", (200, 210, 220), (160, 170, 180), 6.0), F("tiles", (170, 185, 175), (140, 150, 142), 6.0)],
       [W((238, 240, 242)), W((220, 228, 235))]),
)})
"""The nine home room types (the activities' bddl ``inroom`` types)."""
del F, W

AREA_RANGE_M2: Mapping[str, tuple[float, float]] = MappingProxyType({
    "bathroom": (4.0, 12.0), "utility_room": (4.0, 12.0), "private_office": (8.0, 16.0), "childs_room": (9.0, 16.0),
    "bedroom": (10.0, 20.0), "kitchen": (12.0, 30.0), "dining_room": (12.0, 30.0), "living_room": (14.0, 35.0),
    "garage": (14.0, 40.0)})
"""Floor area (m^2, low to high) a room of each type has in a home; estimates from common North-American and
European figures (1 sq ft = 0.0929 m^2), consistent with the typical areas the data-quality report's blind
baseline knows (``construction.quality.priors.TYPICAL_ROOM_AREA_M2``: bathroom 5, utility room 6, office 10,
child's room 11, bedroom 14, kitchen and dining room 15, living room 28, garage 37):

=================  =========  ======================================================================================
type               m^2        reason
=================  =========  ======================================================================================
bathroom           4 - 12     a 5 x 8 ft full bathroom (3.7) to a 3 x 4 m primary bathroom
utility_room       4 - 12     a 2 x 2 m laundry to a 3 x 4 m laundry and mud room
private_office     8 - 16     a 9 x 10 ft spare room (8.4) to a 4 x 4 m study
childs_room        9 - 16     a 10 x 10 ft secondary bedroom (9.3) to 12 x 14 ft (15.6)
bedroom            10 - 20    a secondary bedroom, 11 x 12 ft (12.3), to a 14 x 16 ft primary bedroom (20.8)
kitchen            12 - 30    a galley or L kitchen (about 130 sq ft) to an open eat-in kitchen (about 320 sq ft)
dining_room        12 - 30    12 x 12 ft (13.4) for four to 14 x 20 ft (26) for a large table, or open plan
living_room        14 - 35    a 12 x 12 ft flat's living room (13.4) to an 18 x 20 ft great room (33)
garage             14 - 40    a European single garage, 2.5 x 5.5 m (13.8), to a 20 x 22 ft two-car garage (41)
=================  =========  ======================================================================================

The large types (kitchen, dining room, living room, garage) overlap on purpose, as homes do: which of them is an
apartment's largest room is not decided by type, so a size question is not answered by typical areas alone
(multi-frame "which room has the largest area?", Appendix 11). The apartments' rooms are at least 3 m on a side
(``apartments.MIN_ROOM_SIDE_M``), so no room there is below 9 m^2: their bathrooms are the roomier ones."""


def area_range(kind: str) -> tuple[float, float]:
    """:data:`AREA_RANGE_M2` of ``kind``; unknown kinds raise listing the known ones."""
    if kind not in AREA_RANGE_M2:
        raise ValueError(f"room kind must be one of {sorted(AREA_RANGE_M2)}, got {kind!r}")
    return AREA_RANGE_M2[kind]


def room_type(kind: str) -> RoomType:
    """The :class:`RoomType` of ``kind``; unknown kinds raise listing the known ones."""
    if kind not in ROOM_TYPES:
        raise ValueError(f"room kind must be one of {sorted(ROOM_TYPES)}, got {kind!r}")
    return ROOM_TYPES[kind]


def has_defining(kind: str, categories: Sequence[str]) -> bool:
    """Whether ``categories`` hold one category of every defining group of ``kind``."""
    present = set(categories)
    return all(present & set(group) for group in room_type(kind).defining)


# ----------------------------------------------------------------------------- materials


def room_materials(kind: str, occurrence: int, pick: int) -> tuple[FloorMaterial, WallMaterial]:
    """The floor and wall finish of the ``occurrence``-th room of ``kind`` in an apartment.

    ``pick`` is the apartment's seeded choice for the type; later rooms of the same type step through the
    palettes, so two bedrooms of one apartment never share both floor and walls.
    """
    t = room_type(kind)
    return t.floors[(pick + occurrence) % len(t.floors)], t.walls[(pick + occurrence) % len(t.walls)]


def floor_texture(name: str, material: FloorMaterial) -> Texture:
    """The texture of a floor finish."""
    m = material
    if m.style == "planks":
        return plank_floor_texture(name, base=m.base)
    if m.style == "carpet":
        return fabric_texture(name, m.base, repeat=(12.0, 12.0))
    if m.style in ("tiles", "concrete"):
        return tile_texture(name, base=m.base, grout=m.joint, repeat=(m.repeat, m.repeat))
    raise ValueError(f"floor material style must be tiles/planks/carpet/concrete, got {m.style!r}")


def wall_texture(name: str, material: WallMaterial) -> Texture:
    """The texture of a wall finish: painted plaster (a faint panel grid) or tiles / blocks."""
    m = material
    if m.tiled:
        return tile_texture(name, base=m.base, grout=m.joint, repeat=(10.0, 8.0))
    return tile_texture(name, base=m.base, grout=tuple(int(c * 0.95) for c in m.base), repeat=(4.0, 2.0))


def room_floor(room: RoomRegion, material: FloorMaterial) -> ObjectSpec:
    """A visual floor covering (category ``floors``) named ``floor_<room>``: the room-visibility mask."""
    x0, x1, y0, y1 = room.bounds
    part = Part("box", (x1 - x0, y1 - y0, 0.004), Pose((0, 0, 0.002)), rgba=rgba((255, 255, 255)),
                texture=floor_texture(f"floor_{room.name}", material), collide=False)
    return ObjectSpec(name=f"floor_{room.name}", category="floors", parts=(part,), static=True,
                      pose=Pose((room.center[0], room.center[1], 0.0)))


# ----------------------------------------------------------------------------- lighting

SUN = LightSpec(position=(2.0, 1.5, 6.0), direction=(0.2, -0.15, -1.0), cast_shadow=True, diffuse=0.45)
"""The one shadow-casting light of the CPU render profile (which allows at most one)."""
CEILING_LIGHT_DIFFUSE = 0.32
MAX_ROOM_LIGHTS = 6
"""OpenGL's fixed pipeline lights eight lights: the headlight, the sun and up to six room lights."""


def room_lights(rooms: Sequence[RoomRegion]) -> tuple[LightSpec, ...]:
    """The sun plus one downward ceiling spot over the centre of each room (the first six)."""
    spots = tuple(LightSpec(position=(r.center[0], r.center[1], WALL_HEIGHT - 0.05), direction=(0.0, 0.0, -1.0),
                            directional=False, cast_shadow=False, diffuse=CEILING_LIGHT_DIFFUSE)
                  for r in rooms[:MAX_ROOM_LIGHTS])
    return (SUN,) + spots


def room_ceilings(rooms: Sequence[RoomRegion]) -> tuple[Ceiling, ...]:
    """A ceiling over every room, with the fixture of its ceiling light where :func:`room_lights` hangs it (over
    the centre of each of the first six rooms; the spot hangs 5 cm below the ceiling, 2 cm under the fixture's
    disc, so the disc never stands between it and the room). The sun is above the ceilings, which cast no shadow
    (:class:`~bspatial.world.spec.Ceiling`)."""
    return tuple(room_ceiling(r.bounds, lights=(r.center,) if i < MAX_ROOM_LIGHTS else ())
                 for i, r in enumerate(rooms))


# ----------------------------------------------------------------------------- placement


def _yaw(obj: ObjectSpec) -> float:
    w, _, _, z = obj.pose.quat
    return 2.0 * math.atan2(z, w)


def moved(obj: ObjectSpec, x: float, y: float, yaw: float) -> ObjectSpec:
    """``obj`` carried by a frame at ``(x, y, yaw)``: its own pose is taken as relative to that frame."""
    px, py, pz = obj.pose.position
    c, s = math.cos(yaw), math.sin(yaw)
    return dataclasses.replace(obj, pose=Pose.from_xy_yaw(x + c * px - s * py, y + s * px + c * py, pz, yaw + _yaw(obj)))


def footprint(objects: Sequence[ObjectSpec]) -> list[Rect]:
    """World xy boxes of the pieces' colliding parts (what the robot bumps into)."""
    return part_footprints(SceneSpec("footprint", objects=tuple(objects), robot=None), max_z=math.inf)


def top(objects: Sequence[ObjectSpec]) -> float:
    """Height (m) of the highest point of the objects' parts (a tilted part counts with its largest half extent)."""
    def part_top(o: ObjectSpec, p: Part) -> float:
        upright = p.pose.quat == (1.0, 0.0, 0.0, 0.0)
        half = p.local_half_extents()
        return o.pose.position[2] + p.pose.position[2] + float(half[2] if upright else half.max())
    return max(part_top(o, p) for o in objects for p in o.parts)


def _extent(objects: Sequence[ObjectSpec]) -> Rect:
    boxes = np.array(footprint(objects) or [(0.0, 0.0, 0.0, 0.0)])
    return float(boxes[:, 0].min()), float(boxes[:, 1].max()), float(boxes[:, 2].min()), float(boxes[:, 3].max())


def against_wall(obj: ObjectSpec, y: float = 0.0, gap: float = 0.02, yaw: float = 0.0) -> ObjectSpec:
    """``obj`` turned by ``yaw`` and shifted so its footprint's +x side is ``gap`` in front of a wall at x = 0."""
    turned = moved(dataclasses.replace(obj, pose=Pose()), 0.0, 0.0, yaw)
    x0, x1, y0, y1 = _extent([turned])
    return moved(turned, -gap - x1, y - (y0 + y1) / 2, 0.0)


def group_against_wall(objects: Sequence[ObjectSpec], gap: float = 0.02) -> tuple[ObjectSpec, ...]:
    """Objects built in one frame, shifted together so the group's +x side is ``gap`` in front of x = 0."""
    x0, x1, y0, y1 = _extent(objects)
    return tuple(moved(o, -gap - x1, -(y0 + y1) / 2, 0.0) for o in objects)


@dataclass(frozen=True)
class Piece:
    """A group of objects placed as one: built in a frame whose wall is the line x = 0 (the room at x < 0).

    ``where`` is "wall" (the frame's +x side against a wall), "exterior" (against an outer wall only) or
    "free" (anywhere in the room, turned by 0 or 90 degrees).
    """

    objects: tuple[ObjectSpec, ...]
    where: str = "wall"

    def boxes(self, x: float, y: float, yaw: float) -> list[Rect]:
        """The footprint with the frame at ``(x, y, yaw)``, ``yaw`` a multiple of 90 degrees (rotated boxes)."""
        if "_local" not in self.__dict__:
            object.__setattr__(self, "_local", footprint(self.objects))
        quarter = int(round(yaw / (math.pi / 2))) % 4
        out = []
        for x0, x1, y0, y1 in self.__dict__["_local"]:
            if quarter == 0:
                r = (x0, x1, y0, y1)
            elif quarter == 1:
                r = (-y1, -y0, x0, x1)
            elif quarter == 2:
                r = (-x1, -x0, -y1, -y0)
            else:
                r = (y0, y1, -x1, -x0)
            out.append((r[0] + x, r[1] + x, r[2] + y, r[3] + y))
        return out


def _point_segment_distance(p, a, b) -> float:
    # Plain floats: called for every corner of every candidate box (numpy scalars were 10x slower).
    abx, aby = b[0] - a[0], b[1] - a[1]
    t = min(1.0, max(0.0, ((p[0] - a[0]) * abx + (p[1] - a[1]) * aby) / max(abx * abx + aby * aby, 1e-12)))
    return math.hypot(p[0] - a[0] - t * abx, p[1] - a[1] - t * aby)


def _segments_cross(a, b, c, d) -> bool:
    def orient(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return orient(a, b, c) * orient(a, b, d) < 0 and orient(c, d, a) * orient(c, d, b) < 0


def _rect_hits_segment(r: Rect, a, b, radius: float) -> bool:
    """Whether rectangle ``r`` comes within ``radius`` of segment ``ab``."""
    def outside(p) -> float:
        return math.hypot(max(r[0] - p[0], 0.0, p[0] - r[1]), max(r[2] - p[1], 0.0, p[1] - r[3]))
    if outside(a) < radius or outside(b) < radius:
        return True
    corners = ((r[0], r[2]), (r[1], r[2]), (r[1], r[3]), (r[0], r[3]))
    if any(_segments_cross(a, b, corners[i], corners[(i + 1) % 4]) for i in range(4)):
        return True
    return min(_point_segment_distance(c, a, b) for c in corners) < radius


def _overlaps(a: Rect, b: Rect, gap: float = 0.0) -> bool:
    return a[0] < b[1] + gap and b[0] < a[1] + gap and a[2] < b[3] + gap and b[2] < a[3] + gap


@dataclass
class Layout:
    """A room being furnished: its inner rectangle, what is taken, where nothing may stand."""

    room: RoomRegion
    exterior: frozenset[str]            # wall sides ("x0", "x1", "y0", "y1") that are outer walls
    taken: list[Rect]
    keep_out: list[Rect]
    door_points: list[tuple[float, float]]                              # just inside each doorway
    camera_walks: list[tuple[tuple[float, float], tuple[float, float]]]  # camera paths: tall pieces keep clear

    @property
    def inner(self) -> Rect:
        x0, x1, y0, y1 = self.room.bounds
        h = WALL_THICKNESS / 2
        return x0 + h, x1 - h, y0 + h, y1 - h

    def fits(self, boxes: Sequence[Rect], tall: bool) -> bool:
        ix0, ix1, iy0, iy1 = self.inner
        for r in boxes:
            if r[0] < ix0 - 1e-6 or r[1] > ix1 + 1e-6 or r[2] < iy0 - 1e-6 or r[3] > iy1 + 1e-6:
                return False
            if any(_overlaps(r, t, FURNITURE_GAP_M) for t in self.taken) or any(_overlaps(r, k) for k in self.keep_out):
                return False
            if tall and any(_rect_hits_segment(r, a, b, CAMERA_CLEARANCE_M) for a, b in self.camera_walks):
                return False
        return True

    def passable(self, boxes: Sequence[Rect]) -> bool:
        """Whether the robot's base centre can go between all doorways with ``boxes`` taken (flood fill)."""
        if len(self.door_points) < 2:
            return True
        ix0, ix1, iy0, iy1 = self.inner
        res = PASSAGE_CELL_M
        xs = ix0 + (np.arange(int((ix1 - ix0) / res)) + 0.5) * res
        ys = iy0 + (np.arange(int((iy1 - iy0) / res)) + 0.5) * res
        gx, gy = np.meshgrid(xs, ys, indexing="ij")
        free = np.ones(gx.shape, bool)
        r = ROBOT_RADIUS_M
        for x0, x1, y0, y1 in boxes:     # inflated footprints (rounded corners ignored: conservative)
            free &= ~((gx > x0 - r) & (gx < x1 + r) & (gy > y0 - r) & (gy < y1 + r))
        cells = []
        for px, py in self.door_points:  # the door points sit 0.5 m inside the room, clear of the walls
            i, j = int(np.clip((px - ix0) / res, 0, len(xs) - 1)), int(np.clip((py - iy0) / res, 0, len(ys) - 1))
            if not free[i, j]:
                return False
            cells.append((i, j))
        start = np.zeros_like(free)
        start[cells[0]] = True
        reach = connected_to(free, start)
        return all(reach[c] for c in cells)

    def place(self, piece: Piece, rng: np.random.Generator) -> tuple[ObjectSpec, ...] | None:
        """The piece's objects placed in the room, or None when no seeded draw fits."""
        ix0, ix1, iy0, iy1 = self.inner
        tall = top(piece.objects) > TALL_M
        if piece.where == "free":
            options = [("free", yaw) for yaw in (0.0, math.pi / 2)]
        else:
            sides = [s for s in ("x0", "x1", "y0", "y1") if piece.where == "wall" or s in self.exterior]
            options = [(s, 0.0) for s in sides]
        for i in rng.permutation(len(options)):
            side, yaw = options[i]
            for _ in range(PLACEMENT_TRIES):
                if side == "free":
                    frame = (float(rng.uniform(ix0, ix1)), float(rng.uniform(iy0, iy1)), yaw)
                else:
                    u = float(rng.uniform(0.0, 1.0))
                    frame = {"x0": (ix0, iy0 + u * (iy1 - iy0), math.pi), "x1": (ix1, iy0 + u * (iy1 - iy0), 0.0),
                             "y0": (ix0 + u * (ix1 - ix0), iy0, -math.pi / 2),
                             "y1": (ix0 + u * (ix1 - ix0), iy1, math.pi / 2)}[side]
                boxes = piece.boxes(*frame)
                if self.fits(boxes, tall) and self.passable(self.taken + boxes):
                    self.taken += boxes
                    return tuple(moved(o, *frame) for o in piece.objects)
        return None


# ----------------------------------------------------------------------------- what each room holds


Recipe = Callable[[str, RoomRegion, np.random.Generator], list[list[Piece]]]
"""name prefix, room, rng -> the room's pieces: a list of alternatives per slot (the first that fits is used)."""


def _colour(rng: np.random.Generator, palette: Sequence[RGB]) -> RGB:
    return palette[int(rng.integers(len(palette)))]


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(1000))


def _bathroom(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    tub, shower = Piece((against_wall(bathtub(f"{p}bathtub", (0, 0)), yaw=math.pi / 2),)), \
        Piece((against_wall(fx.shower_stall(f"{p}shower")),))
    return [[tub, shower] if rng.integers(2) else [shower, tub],
            [Piece((against_wall(toilet(f"{p}toilet", (0, 0))),))],
            [Piece((against_wall(pedestal_sink(f"{p}sink", (0, 0))),))],
            [Piece((against_wall(fx.towel_rack(f"{p}towel_rack", towel_rgb=_colour(rng, ((90, 150, 200), (220, 120, 120),
                                                                                             (240, 240, 235))))),))]]


def _kitchen(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    run = min(1.8, max(room.bounds[1] - room.bounds[0], room.bounds[3] - room.bounds[2]) - 2.2)
    counters = [Piece((against_wall(countertop(f"{p}counter", front_x=0.0, depth=0.6, width=w, seed=_seed(rng)).obj),))
                for w in (max(run, 0.8), 0.8)]
    return [[Piece((against_wall(closed_fridge(f"{p}fridge", (0, 0))),))],
            [Piece((against_wall(fx.sink_counter(f"{p}sink", width=1.2, seed=_seed(rng))),)),
             Piece((against_wall(fx.sink_counter(f"{p}sink", width=0.8, seed=_seed(rng))),))],
            [Piece((against_wall(oven(f"{p}oven", (0, 0))),))],
            counters,
            [Piece((against_wall(fx.dishwasher(f"{p}dishwasher")),))]]


def _bed_group(p: str, bed: ObjectSpec, rng, stand: bool = True) -> Piece:
    """The bed's headboard (its local +x) against the wall, a nightstand beside the head on a seeded side."""
    placed = against_wall(bed)
    x0, x1, y0, y1 = _extent([placed])
    objs = [placed]
    if stand:
        side = 1 if rng.integers(2) else -1
        ns = fx.nightstand(f"{p}nightstand", rgb=_colour(rng, ((140, 100, 65), (230, 225, 215), (90, 70, 55))), seed=_seed(rng))
        objs.append(against_wall(ns, y=(y1 + 0.3) if side > 0 else (y0 - 0.3)))
    return Piece(tuple(objs))


def _bedroom(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    blanket = _colour(rng, ((70, 110, 170), (170, 60, 60), (200, 190, 150), (80, 130, 90)))
    wood = _colour(rng, ((150, 110, 75), (235, 232, 225), (95, 70, 50)))
    return [[_bed_group(p, fx.double_bed(f"{p}bed", blanket_rgb=blanket), rng),
             _bed_group(p, fx.double_bed(f"{p}bed", size=(1.95, 1.4), blanket_rgb=blanket), rng)],
            [Piece((against_wall(fx.wardrobe(f"{p}wardrobe", width=w, rgb=wood, seed=_seed(rng))),)) for w in (1.2, 0.8)],
            [Piece((against_wall(fx.picture(f"{p}picture")),))],
            [Piece((fx.floor_lamp(f"{p}floor_lamp"),))]]


def _childs_room(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    blanket = _colour(rng, ((240, 120, 160), (90, 170, 230), (250, 200, 60)))
    return [[_bed_group(p, fx.child_bed(f"{p}bed", blanket_rgb=blanket), rng, stand=False)],
            [Piece((against_wall(toy_box(f"{p}toy_box", (0, 0)), yaw=math.pi / 2),))],
            [Piece((fx.toy_train(f"{p}toy_train"),), "free"), Piece((against_wall(fx.toy_train(f"{p}toy_train")),))],
            [Piece((fx.toy_car(f"{p}toy_car", rgb=_colour(rng, ((40, 170, 90), (230, 60, 60), (250, 200, 40)))),), "free")],
            [Piece((against_wall(fx.toy_figure(f"{p}toy_figure", rgb=_colour(rng, ((250, 150, 40), (240, 120, 200)))),),))],
            [Piece((fx.play_rug(f"{p}play_rug"),), "free")]]


def _office(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    desk = group_against_wall(fx.computer_desk(f"{p}desk", rgb=_colour(rng, ((120, 85, 55), (230, 228, 220))),
                                               seed=_seed(rng)))
    x0, x1, y0, y1 = _extent(desk[:1])
    chair = moved(fx.swivel_chair(f"{p}chair"), x0 - 0.15, (y0 + y1) / 2 - 0.1, math.pi)
    store = [Piece((against_wall(bookcase(f"{p}bookcase", front_x=0.0).obj),)),
             Piece((against_wall(shelf(f"{p}shelf", (0, 0), width=1.0)),)),
             Piece((against_wall(shelf(f"{p}shelf", (0, 0), width=0.7)),))]
    return [[Piece(desk + (chair,))], store if rng.integers(2) else store[::-1],
            [Piece((against_wall(fx.picture(f"{p}picture", colours=((200, 80, 60), (240, 230, 210)))),))]]


def _living_room(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    fabric = _colour(rng, ((90, 100, 120), (120, 80, 70), (70, 110, 90), (170, 160, 140)))
    pieces = []
    for length in (2.0, 1.6, 1.3):
        s = against_wall(sofa(f"{p}sofa", (0, 0), rgb=fabric, length=length))
        x0 = _extent([s])[0]
        table = coffee_table(f"{p}coffee_table", (x0 - 0.6, 0.0), size=(0.55, min(1.1, length - 0.4)))
        rug = fx.area_rug(f"{p}rug", size=(1.4, length + 0.2), rgb=_colour(rng, ((150, 60, 55), (60, 80, 130), (190, 170, 120))))
        pieces.append(Piece((s, table, moved(rug, x0 - 0.6, 0.0, 0.0))))
    return [pieces,
            [Piece((against_wall(fx.tv_stand(f"{p}tv", width=w, seed=_seed(rng))),)) for w in (1.5, 1.1, 0.8)],
            [Piece((fx.floor_lamp(f"{p}floor_lamp"),))],
            [Piece((against_wall(fx.picture(f"{p}picture")),))]]


def _dining_room(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    wood = _colour(rng, ((150, 105, 65), (95, 65, 45), (200, 170, 130)))
    chair = _colour(rng, ((60, 40, 30), (30, 30, 30), (230, 225, 215)))
    sets = [Piece(fx.dining_set(f"{p}table", size=size, rgb=wood, chair_rgb=chair, seed=_seed(rng), ends=ends), "free")
            for size, ends in (((1.6, 0.9), True), ((1.2, 0.8), False))]
    wall_set = Piece(group_against_wall(fx.dining_set(f"{p}table", size=(1.2, 0.8), rgb=wood, chair_rgb=chair,
                                                      seed=_seed(rng), ends=False, wall_side=True)))
    return [sets + [wall_set],
            [Piece((against_wall(fx.sideboard(f"{p}sideboard", seed=_seed(rng))),))],
            [Piece((against_wall(fx.picture(f"{p}picture", colours=((90, 130, 80), (220, 200, 150)))),))]]


def _garage(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    paint = _colour(rng, ((170, 30, 35), (40, 70, 140), (200, 200, 205), (30, 30, 32)))
    the_car = Piece((car(f"{p}car", (0.0, 0.0), yaw=math.pi / 2, rgb=paint),), "free")
    # The workbench carries its wall shelf (bench and shelf share one wall, as in most garages).
    benches = [Piece((against_wall(fx.workbench(f"{p}workbench", width=w, seed=_seed(rng))),
                      against_wall(fx.wall_shelf(f"{p}wall_shelf", width=w)))) for w in (1.6, 1.1)]
    doors = [Piece((against_wall(garage_door(f"{p}garage_door", (0, 0), yaw=math.pi, width=w)),), "exterior")
             for w in (2.4, 2.1)]
    shelves = [Piece((against_wall(shelf(f"{p}shelf", (0, 0), width=w)),)) for w in (1.2, 0.8)]
    shelves += [Piece((against_wall(fx.wall_shelf(f"{p}shelf", width=w)),)) for w in (1.2, 0.8)]
    return [doors, [the_car, *benches], shelves, [Piece((against_wall(fx.bicycle(f"{p}bicycle")),))]]


def _utility_room(p: str, room: RoomRegion, rng) -> list[list[Piece]]:
    w, d = fx.washer(f"{p}washer"), fx.washer(f"{p}dryer", dryer=True)
    above = against_wall(fx.wall_shelf(f"{p}shelf", width=1.25, rgb=(235, 235, 235)))   # over the machines
    pair = Piece((against_wall(w, y=-0.32), against_wall(d, y=0.32), above))
    return [[pair, Piece((against_wall(w), against_wall(fx.wall_shelf(f"{p}shelf", width=0.7))))],
            [Piece((against_wall(fx.laundry_sink(f"{p}laundry_sink")),)), Piece((against_wall(d),))],
            [Piece((against_wall(shelf(f"{p}storage_shelf", (0, 0), width=w)),)) for w in (1.0, 0.7)]]


RECIPES: Mapping[str, Recipe] = MappingProxyType({
    "bathroom": _bathroom, "kitchen": _kitchen, "bedroom": _bedroom, "childs_room": _childs_room,
    "private_office": _office, "living_room": _living_room, "dining_room": _dining_room, "garage": _garage,
    "utility_room": _utility_room})
"""Room kind -> its pieces, in placement order (the defining ones first)."""


class FurnishingError(ValueError):
    """A room's defining furniture does not fit (the caller draws another floor plan)."""


def furnish(room: RoomRegion, rng: np.random.Generator, *, exterior: Sequence[str] = ("x0", "x1", "y0", "y1"),
            doors: Sequence[tuple[tuple[float, float], float, str]] = (), keep_out: Sequence[Rect] = (),
            taken: Sequence[Rect] = (), required: bool = True, exclude: Sequence[str] = ()) -> list[ObjectSpec]:
    """The furniture of ``room`` (by its kind), placed by seeded rejection sampling.

    Args:
        room: the room; its kind picks the recipe.
        rng: seeded generator (the same draws give the same room).
        exterior: which wall sides are outer walls (garage doors go only there).
        doors: ``(centre, width, along)`` of the room's doorways (``along`` is the wall's direction, "x" or "y"):
            nothing stands in front of them and walk lines run from each to the room centre.
        keep_out: extra rectangles to leave empty (the activity room's work area).
        taken: footprints already there (door leaves).
        required: raise :class:`FurnishingError` when a defining piece does not fit; else skip it.
        exclude: categories not to place (the activity room leaves out storage the questions name).

    Example:
        >>> from bspatial.world.floorplans import RoomRegion
        >>> room = RoomRegion("garage", "garage", (0.0, 6.0, 0.0, 4.2))
        >>> sorted({o.category for o in furnish(room, np.random.default_rng(1))})
        ['bicycle', 'car', 'garage_door', 'shelf']
    """
    kind = room_type(room.kind).kind
    center = room.center
    clear, to_center, inside = [], [], []
    for (cx, cy), width, along in doors:
        half = width / 2 + 0.2
        if along == "x":   # a wall along x: the door opens towards +-y
            clear.append((cx - half, cx + half, cy - DOOR_CLEARANCE_M, cy + DOOR_CLEARANCE_M))
            inside.append((cx, cy + (0.5 if center[1] > cy else -0.5)))
        else:
            clear.append((cx - DOOR_CLEARANCE_M, cx + DOOR_CLEARANCE_M, cy - half, cy + half))
            inside.append((cx + (0.5 if center[0] > cx else -0.5), cy))
        to_center.append(((cx, cy), center))
    layout = Layout(room, frozenset(exterior), list(taken), clear + list(keep_out), inside, to_center)
    prefix = f"{room.name}_"
    out: list[ObjectSpec] = []
    missed: list[str] = []
    for slot in RECIPES[kind](prefix, room, rng):
        slot = [p for p in slot if not any(o.category in exclude for o in p.objects)]
        if not slot:
            continue
        placed = next((objs for objs in (layout.place(p, rng) for p in slot) if objs is not None), None)
        if placed is None:
            missed.append(slot[0].objects[0].name)
            continue
        out += placed
    if required and not has_defining(kind, [o.category for o in out]):
        raise FurnishingError(f"room {room.name!r} ({kind}, bounds {room.bounds}): no place for the defining "
                              f"furniture among {missed}")
    return out
