"""The 49 BEHAVIOR activities behind general VQA, and their seeded household scenes.

Section 3.3: "General VQA spans 49 activities". Each activity's object list comes from the ``bddl``
package (``activity_definitions/<name>/problem0.bddl``: the ``:objects`` synsets and the ``inroom``
room type). The paper rendered BEHAVIOR-1K scenes in OmniGibson; we render the activity's small
objects with category-appropriate primitive shapes (:data:`RENDERABLE`) in a procedurally laid out
apartment (:func:`activity_scene`).

**Which 49.** An activity is *eligible* when its ``problem0`` takes place in an indoor home room
(:data:`HOME_ROOMS`) and names at least :data:`MIN_RENDERABLE` distinct object categories that we
can render. The 49 are the eligible activities taken in ``crc32(name)`` order: a fixed
pseudo-random sample (not the alphabet's first 49, which would be mostly "adding_..." and
"assembling_..."), pinned as :data:`GENERAL_ACTIVITIES` so a bddl upgrade cannot silently change the
benchmark; ``tests/construction/questions/test_general.py`` re-derives the list from bddl.

**Scene.** A seeded, furnished apartment of six rooms (:func:`bspatial.world.apartments.apartment`: two
bands of three rooms whose walls do not line up, areas 12% apart or more, doorways between neighbours,
each room furnished by type with its own floor and wall finish and a ceiling light); the activity's
room (bddl room type) is the middle room of the first band (index :data:`HOME_INDEX`), where the robot
stands; the other five kinds are a seeded draw. The per-room floor objects ``floor_<room>`` double as
room-visibility masks for multi-frame questions. Against the activity room's back wall (x = 0) stand a
work surface (countertop / table / desk by room kind) with the activity's objects on it and a storage unit
(a grid bookcase or a layered shelf, free-standing a seeded 0-0.4 m off the wall) holding more of them, plus
two floor-standing objects on the storage unit's side, each a seeded draw between just in front of the
furniture and against the wall beyond the storage unit (:func:`_floor_spot`); the room's own furniture keeps
to its far side (:func:`_work_area`). The depths are drawn so that which kind of object is nearest the
camera is not told by its category (floor kinds stand only on the floor, large kinds only on the work
surface): measured on the paper build with the storage unit against the wall and the floor objects always
in front, a text-only guesser answered 58.7% of "closest to the camera" items from the option names. Its openings are wide so that rotation views see
into the neighbouring rooms.

Example:
    >>> activity = load_activity(GENERAL_ACTIVITIES[0])
    >>> activity.room in HOME_ROOMS, len(activity.categories) >= MIN_RENDERABLE
    (True, True)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass
from importlib import resources

import numpy as np

from bspatial.common.seeds import derive_seed
from bspatial.world.apartments import COLUMNS, ROWS, apartment
from bspatial.world.floorplans import RoomRegion
from bspatial.world.household import RENDERABLE, ObjectKind, make_object
from bspatial.world.furniture import TOP_CAMERA, Support, bookcase, countertop, rect_polygon, shelving, table
from bspatial.world.spec import CameraSpec, ObjectSpec, Pose, RobotSpawn, SceneSpec, Surface
from bspatial.world.textures import tile_texture, wood_texture

N_GENERAL_ACTIVITIES = 49
"""Section 3.3: "General VQA spans 49 activities"."""
MIN_RENDERABLE = 3
"""Implementation choice: an eligible activity names at least 3 object categories we can render."""
HOME_ROOMS = ("kitchen", "living_room", "bedroom", "bathroom", "dining_room", "utility_room", "childs_room",
              "private_office", "garage")
"""bddl room types we can lay out as rooms of an apartment (gardens, stores, offices buildings are not)."""
ROOM_NAMES = {"kitchen": "kitchen", "living_room": "living room", "bedroom": "bedroom", "bathroom": "bathroom",
              "dining_room": "dining room", "utility_room": "utility room", "childs_room": "child's room",
              "private_office": "office", "garage": "garage"}
"""How questions name a room kind."""

GRID_ROWS, GRID_COLUMNS = ROWS, COLUMNS
"""Rooms are listed row-major over 2 bands x 3 rooms (bspatial.world.apartments): index neighbours are
doorway neighbours, though the rooms are not grid cells."""
HOME_INDEX = GRID_COLUMNS // 2
"""The activity room: the middle room of the work-wall band."""
STORAGE_CATEGORIES = ("bookcase", "shelf")
"""The storage unit's categories: locate questions name "the bookcase" / "the shelf", so the activity room's
own furniture has none."""
WORK_GAP_M = (0.15, 0.4)
"""Gaps between the walls, the storage unit and the work surface along the work wall (m)."""
VIEW_ZONE_M = 2.75
"""The activity room's furniture keeps this far from the work wall: the work surface (0.62 m deep) and the
single-frame views (the robot 1.1-1.5 m in front of it, 0.4 m footprint radius) are there."""
N_SUPPORT_OBJECTS = 5
"""Objects on the work surface: enough candidates for four-option distance / size questions."""
N_STORAGE_OBJECTS = 4
"""Objects in the storage unit's cells / layers: the subjects of locate questions."""
N_FLOOR_OBJECTS = 2
"""Floor-standing objects (buckets, baskets, bins) in front of the furniture."""
FLOOR_OBJECT_REACH_M = 0.7
"""Floor-standing objects end at most this far in front of the work surface (single-frame views stand >= 1.1 m
from it; the robot's base reaches 0.39 m from its centre)."""
FLOOR_FRONT_GAP_M = (0.0, 0.3)
"""A floor object standing in front starts this far in front of the work surface's front (seeded): from there
its centre is about as far from the head camera as the objects on the work surface."""
STORAGE_PULL_M = (0.0, 0.4)
"""The storage unit stands this far off the work wall (seeded), its front at most 0.15 m beyond the work
surface's (views and reaching stances keep clear; floor objects in front start >= 0.3 m further)."""
BESIDE_SHARE = 0.5
"""The chance that a floor object stands against the wall beyond the storage unit (when the room has space)
rather than in front of the furniture."""
REACH_CLEAR_M = 0.74
"""Floor-standing objects keep this far (plus their half length) from the work surface's centre line along the
wall: reaching views stand up to 0.3 m to its side with the base's 0.39 m radius (general.reaching_robot)."""
STORAGE_WIDTH_M = 1.0
"""The storage unit's width along the wall (both kinds)."""
MAX_STORAGE_LENGTH_M = 0.26
"""Objects in the storage unit fit a cell (bookcase cells are ~0.3 m tall and deep)."""

# ----------------------------------------------------------------------------- activities from bddl


@dataclass(frozen=True)
class Activity:
    """A bddl activity: its room type and the synsets of its objects we can render (bddl order)."""

    name: str
    room: str
    synsets: tuple[str, ...]

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(RENDERABLE[s].category for s in self.synsets))


_OBJECTS = re.compile(r"\(:objects(.*?)\)", re.S)
_INROOM = re.compile(r"\(inroom \S+ (\w+)\)")


@functools.cache
def load_activity(name: str) -> Activity:
    """Parse ``bddl/activity_definitions/<name>/problem0.bddl`` (room: the first ``inroom`` room type)."""
    path = resources.files("bddl") / "activity_definitions" / name / "problem0.bddl"
    if not path.is_file():
        raise ValueError(f"activity must be a bddl activity with a problem0.bddl, got {name!r}")
    text = path.read_text()
    objects = _OBJECTS.search(text)
    synsets = re.findall(r"- ([\w.]+)", objects.group(1)) if objects else []
    rooms = [r for r in _INROOM.findall(text) if r in HOME_ROOMS]
    renderable = tuple(dict.fromkeys(s for s in synsets if s in RENDERABLE))
    return Activity(name, rooms[0] if rooms else "", renderable)


def eligible_activities() -> list[str]:
    """Activities meeting the rule of the module docstring, in ``crc32(name)`` order."""
    root = resources.files("bddl") / "activity_definitions"
    names = sorted(p.name for p in root.iterdir() if (p / "problem0.bddl").is_file())
    keep = [n for n in names if (a := load_activity(n)).room and len(a.categories) >= MIN_RENDERABLE]
    return sorted(keep, key=lambda n: (derive_seed(n), n))


# Pinned output of eligible_activities()[:49] under bddl 3.7 (see the module docstring).
GENERAL_ACTIVITIES: tuple[str, ...] = (
    'getting_organized_for_work', 'make_fried_rice', 'cleaning_tools_and_equipment', 'cook_oysters',
    'wash_a_wool_coat', 'make_soup', 'cook_zucchini', 'serving_food_on_the_table', 'laying_out_a_feast',
    'clean_oysters', 'emptying_trash_cans', 'make_mustard_herb_and_spice_seasoning', 'make_brownies',
    'wash_goalkeeper_gloves', 'prepare_a_boat_for_fishing', 'getting_a_drink', 'shampooing_carpet',
    'clean_whiskey_stones', 'make_macaroni_and_cheese', 'make_dessert_watermelons', 'clean_couch_pillows',
    'remove_hard_water_spots', 'make_edible_chocolate_chip_cookie_dough', 'wash_your_rings', 'cleaning_garage',
    'prepare_a_filling_breakfast', 'clean_wine_glasses', 'clean_rubber_bathmats',
    'baking_cookies_for_the_PTA_bake_sale', 'make_lemon_pepper_wings', 'cleaning_oven', 'cook_green_beans',
    'cleaning_bathrooms', 'washing_pots_and_pans', 'make_muffins', 'set_a_fancy_table', 'cook_peppers',
    'clean_a_baking_stone', 'making_a_drink', 'make_homemade_bird_food', 'make_pizza', 'make_hot_cocoa',
    'cleaning_kitchen_knives', 'cook_fish', 'cook_potatoes', 'cook_bok_choy', 'sorting_bottles_cans_and_paper',
    'cook_red_peppers', 'clean_vases',
)


# ----------------------------------------------------------------------------- the apartment


@dataclass(frozen=True)
class StorageUnit:
    """The activity room's storage: ``kind`` "grid" (bookcase, cells "RxC") or "layers" (shelf, "layer k")."""

    name: str
    kind: str
    cells: dict[str, tuple[float, float, float, float, float, float]]  # label -> (x0, x1, y0, y1, z0, z1)


@dataclass(frozen=True, eq=False)
class ActivityScene:
    """One seeded apartment for an activity (see the module docstring).

    Attributes:
        scene: the scene without the robot's viewpoint decided (``robot`` is replaced per view).
        rooms: the apartment's rooms; ``rooms[activity_room]`` is where the robot stands.
        storage: the storage unit and its cells.
        work_bounds: (x0, x1, y0, y1) of the activity room's free floor, where rotation views stand.
        support_front_x: x of the furniture fronts (the robot faces -x towards them).
    """

    activity: str
    seed: int
    scene: SceneSpec
    rooms: tuple[RoomRegion, ...]
    activity_room: int
    storage: StorageUnit
    work_bounds: tuple[float, float, float, float]
    support_front_x: float
    support_y: float
    storage_y: float
    object_names: tuple[str, ...]

    def room_name(self, room: RoomRegion) -> str:
        return ROOM_NAMES[room.kind]


_SUPPORTS = {"kitchen": ("countertop", 0.9), "bathroom": ("countertop", 0.9), "utility_room": ("countertop", 0.9),
             "garage": ("countertop", 0.9), "living_room": ("coffee_table", 0.5), "dining_room": ("breakfast_table", 0.75),
             "bedroom": ("desk", 0.75), "childs_room": ("desk", 0.7), "private_office": ("desk", 0.75)}
"""The work surface of the activity room by room type, and its height (m)."""


def activity_scene(activity: str, seed: int) -> ActivityScene:
    """The seeded apartment of ``activity`` (deterministic in ``(activity, seed)``)."""
    act = load_activity(activity)
    if not act.room:
        raise ValueError(f"activity {activity!r} takes place in no home room {HOME_ROOMS}")
    rng = np.random.default_rng(derive_seed(activity, seed))
    others = [k for k in HOME_ROOMS if k != act.room]
    kinds = [others[i] for i in rng.permutation(len(others))[: GRID_ROWS * GRID_COLUMNS - 1]]
    kinds.insert(HOME_INDEX, act.room)
    apt = apartment(kinds, rng, home=HOME_INDEX, home_keep_out=_work_area, home_exclude=STORAGE_CATEGORIES)
    rooms, home = apt.rooms, HOME_INDEX
    room = rooms[home]
    # The work wall: x = 0 (the apartment's outer wall behind the activity room).
    x0, x1, y0, y1 = room.bounds
    support_kind, height = _SUPPORTS[act.room]
    left_storage = bool(rng.integers(2))
    storage_w, support_w = STORAGE_WIDTH_M, float(rng.uniform(1.2, 1.4))
    # The pair keeps the gaps of the old 2.9-4.6 m wide activity rooms (so a single-frame view still holds
    # both), wherever it stands along a wider work wall.
    gap = min((y1 - y0 - storage_w - support_w) / 3, float(rng.uniform(*WORK_GAP_M)))
    slack = y1 - y0 - storage_w - support_w - 3 * gap
    lo = y0 + float(rng.uniform(0.0, slack))
    storage_y = (lo + 2 * gap + support_w + storage_w / 2) if left_storage else (lo + gap + storage_w / 2)
    support_y = (lo + gap + support_w / 2) if left_storage else (lo + 2 * gap + storage_w + support_w / 2)
    depth = 0.6
    if support_kind == "countertop":
        support = countertop("support_0", front_x=0.0, depth=depth, width=support_w, height=height,
                             seed=int(rng.integers(100)))
        bounds = (x0 + 0.02, x0 + 0.02 + depth, support_y - support_w / 2, support_y + support_w / 2)
        support = Support(_facing_robot(support.obj, x0 + 0.02, depth, support_y),
                          Surface("support_0/top", "support_0", height, rect_polygon(*bounds)), bounds)
    else:
        support = table("support_0", support_kind, center_xy=(x0 + 0.02 + depth / 2, support_y),
                        size_xy=(depth, support_w), height=height, seed=int(rng.integers(100)))
    storage = _storage(x0 + float(rng.uniform(*STORAGE_PULL_M)), storage_y, rng)
    objects, names = _activity_objects(act, support, storage, (y0, y1), rng)
    front = x0 + 0.02 + depth
    scene = SceneSpec(
        name=f"{activity}-{seed}", objects=apt.objects + (support.obj, storage[0]) + tuple(objects),
        surfaces=(support.surface,), lights=apt.lights, ceilings=apt.ceilings,
        cameras=(CameraSpec(TOP_CAMERA, (room.center[0], room.center[1], 8.0), (room.center[0], room.center[1] + 1e-3, 0.0)),),
        robot=RobotSpawn(front + 1.0, support_y, math.pi), floor_size=(40.0, 40.0),
        floor_texture=tile_texture("floor_outside", base=(120, 130, 110), grout=(110, 120, 100)))
    work = (front + 0.9, x1 - 0.9, y0 + 0.9, y1 - 0.9)
    return ActivityScene(activity, seed, scene, tuple(rooms), home, storage[1], work, front, support_y, storage_y, names)


def _work_area(bounds: tuple[float, float, float, float]) -> list[tuple[float, float, float, float]]:
    """Where the activity room's own furniture may not stand: the work wall's side of the room (furniture and
    single-frame views) and the rotation views' standing area (``work_bounds`` below, 0.2 m wider)."""
    x0, x1, y0, y1 = bounds
    return [(x0, x0 + VIEW_ZONE_M, y0, y1), (x0 + 0.62 + 0.9 - 0.2, x1 - 0.9 + 0.2, y0 + 0.9 - 0.2, y1 - 0.9 + 0.2)]


def _facing_robot(obj: ObjectSpec, back_x: float, depth: float, y: float) -> ObjectSpec:
    """``obj`` built facing -x at the origin (the task scenes' convention), turned to face +x with its
    back against the wall at ``back_x``: the activity room's robot looks at it from +x."""
    return dataclasses.replace(obj, pose=Pose.from_xy_yaw(back_x + depth, y, 0.0, math.pi))


def _storage(x0: float, y: float, rng) -> tuple[ObjectSpec, StorageUnit]:
    """A 3 x 2 grid bookcase or a 4-layer shelf with its back at ``x0 + 0.02`` (answer spaces of >= 4 regions)."""
    if rng.integers(2):
        unit, kind, depth = bookcase("storage_0", front_x=0.0, y_center=0.0, rows=3, columns=2), "grid", 0.32
    else:
        unit, kind, depth = shelving("storage_0", "shelf", front_x=0.0, y_center=0.0, width=STORAGE_WIDTH_M, depth=0.35, height=1.25,
                                     n_layers=4, texture=wood_texture("storage_0_wood", (180, 150, 110), seed=7)), "layers", 0.35
    back = x0 + 0.02
    # Turned by pi: local (lx, ly) -> world (back + depth - lx, y - ly).
    ix0, ix1, iy0, iy1 = unit.interior
    wx = (back + depth - ix1, back + depth - ix0)
    cells = {}
    for r, (low, high) in enumerate(zip(unit.layer_tops, unit.layer_ceilings), start=1):
        if kind == "layers":
            cells[f"layer {r}"] = (*wx, y - iy1, y - iy0, low, high)
            continue
        # Columns counted from the left as the robot (facing -x) sees them: its left is -y in world.
        edges = sorted(y - e for e in unit.column_edges)
        for c in range(1, len(edges)):
            cells[f"{r}x{c}"] = (*wx, edges[c - 1], edges[c], low, high)
    return _facing_robot(unit.obj, back, depth, y), StorageUnit("storage_0", kind, cells)


def _pick_kinds(act: Activity, rng) -> tuple[list[ObjectKind], list[ObjectKind], list[ObjectKind]]:
    """The activity's renderable objects first, then seeded fill-ins, all of distinct categories
    (options name objects by category, so a category appears once per scene)."""
    own = [RENDERABLE[s] for s in act.synsets]
    pool = sorted({k.category: k for k in RENDERABLE.values()}.values(), key=lambda k: k.category)
    fill = [pool[i] for i in rng.permutation(len(pool))]
    seen: set[str] = set()
    support: list[ObjectKind] = []
    storage: list[ObjectKind] = []
    floor: list[ObjectKind] = []
    for kind in own + fill:
        if kind.category in seen:
            continue
        if kind.floor:
            if len(floor) < N_FLOOR_OBJECTS:
                floor.append(kind)
                seen.add(kind.category)
        elif kind.length[1] <= MAX_STORAGE_LENGTH_M and len(storage) < N_STORAGE_OBJECTS and len(storage) <= len(support):
            storage.append(kind)
            seen.add(kind.category)
        elif len(support) < N_SUPPORT_OBJECTS:
            support.append(kind)
            seen.add(kind.category)
        if len(support) == N_SUPPORT_OBJECTS and len(storage) == N_STORAGE_OBJECTS and len(floor) == N_FLOOR_OBJECTS:
            break
    return support, storage, floor


def _activity_objects(act: Activity, support, storage, room_y: tuple[float, float],
                      rng) -> tuple[list[ObjectSpec], tuple[str, ...]]:
    support_kinds, storage_kinds, floor_kinds = _pick_kinds(act, rng)
    out: list[ObjectSpec] = []
    x0, x1, y0, y1 = support.bounds
    placed: list[tuple[float, float, float]] = []
    for kind in support_kinds:
        # Long objects (pillows, trays) are shortened to fit the 0.6 m deep top with a 5 cm border.
        length = min(float(rng.uniform(*kind.length)), (x1 - x0) - 0.16)
        r = length / 2 + 0.03
        for _ in range(40):  # rejection sampling of non-overlapping footprints on the top
            xy = (float(rng.uniform(x0 + r, x1 - r)), float(rng.uniform(y0 + r, y1 - r)))
            if all(math.hypot(xy[0] - p[0], xy[1] - p[1]) > r + p[2] for p in placed):
                break
        else:
            continue
        placed.append((*xy, r))
        out.append(make_object(kind, f"{kind.category}_0", length, (xy[0], xy[1], support.height),
                               float(rng.uniform(-0.6, 0.6)) + math.pi / 2, rng))
    cells = list(storage[1].cells.items())
    chosen = rng.choice(len(cells), size=min(len(storage_kinds), len(cells)), replace=False)
    for kind, ci in zip(storage_kinds, sorted(chosen)):
        label, (cx0, cx1, cy0, cy1, z0, z1) = cells[ci]
        length = float(rng.uniform(kind.length[0], min(kind.length[1], 0.9 * (z1 - z0), 0.9 * (cy1 - cy0))))
        length = max(length, 0.05)
        y = float(rng.uniform(cy0 + length / 2 + 0.02, cy1 - length / 2 - 0.02)) if cy1 - cy0 > length + 0.04 else (cy0 + cy1) / 2
        out.append(make_object(kind, f"{kind.category}_0", length, ((cx0 + cx1) / 2, y, z0),
                               math.pi / 2 if kind.proportions[1] > kind.proportions[0] and kind.shape == "box" else 0.0, rng))
    # Floor-standing objects: on the storage unit's side of the work surface, where the views aim (between the
    # two), beyond the reaching views' stance (REACH_CLEAR_M from the work surface's centre line), one after
    # the other outwards; each in front of the furniture or against the wall beyond the storage unit.
    storage_y = float(np.mean([(c[2] + c[3]) / 2 for c in storage[1].cells.values()]))
    toward = 1.0 if storage_y > (y0 + y1) / 2 else -1.0
    front_edge = (y0 + y1) / 2 + toward * REACH_CLEAR_M
    wall_edge = storage_y + toward * (STORAGE_WIDTH_M / 2 + 0.05)
    storage_front = max(c[1] for c in storage[1].cells.values())
    for kind in floor_kinds:
        length = float(rng.uniform(*kind.length))
        x, y, front_edge, wall_edge = _floor_spot(length, x1, support.bounds[0], storage_front, toward, front_edge,
                                                  wall_edge, room_y, rng)
        out.append(make_object(kind, f"{kind.category}_0", length, (x, y, 0.0), 0.0, rng))
    return out, tuple(o.name for o in out)


def _floor_spot(length: float, front_x: float, wall_x: float, storage_front_x: float, toward: float,
                front_edge: float, wall_edge: float, room_y: tuple[float, float],
                rng) -> tuple[float, float, float, float]:
    """Where a floor object of ``length`` stands: (x, y) and the updated next free edges along y in front of
    the furniture (``front_edge``) and along the wall beyond the storage unit (``wall_edge``). Against the wall
    with probability :data:`BESIDE_SHARE`, else in front (clear of a pulled storage unit); the other spot when
    the drawn one leaves the room (5 cm clear), the nearest free spot in front when neither fits."""
    beside_first = bool(rng.random() < BESIDE_SHARE)
    y_wall = wall_edge + toward * (0.5 * length + float(rng.uniform(0.0, 0.1)))
    y_front = front_edge + toward * (0.5 * length + float(rng.uniform(0.0, 0.25)))
    x_front = max(front_x + float(rng.uniform(*FLOOR_FRONT_GAP_M)), storage_front_x + 0.05) + 0.5 * length
    x_front = min(x_front, front_x + FLOOR_OBJECT_REACH_M - 0.5 * length)
    x_wall = wall_x + 0.5 * length + float(rng.uniform(0.0, 0.15))

    def inside(y: float) -> bool:
        return room_y[0] + 0.05 <= y - 0.5 * length and y + 0.5 * length <= room_y[1] - 0.05

    def at_wall(y: float) -> tuple[float, float, float, float]:
        return x_wall, y, front_edge, y + toward * (0.5 * length + 0.05)

    def in_front(y: float) -> tuple[float, float, float, float]:
        return x_front, y, y + toward * (0.5 * length + 0.05), wall_edge

    spots = [(y_wall, at_wall), (y_front, in_front)]
    for y, place in (spots if beside_first else spots[::-1]):
        if inside(y):
            return place(y)
    return in_front(front_edge + toward * 0.5 * length)
