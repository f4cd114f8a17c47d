"""The asset gallery (`bspatial sim gallery --out DIR`): a picture of every object category and room type.

One PNG per object category (three instances across the category's size range: a near camera close on
the middle one, a far camera on the row, on a neutral grey floor under one light rig), one per room type (a room furnished
by type, from the two head-height viewpoints that best show its defining furniture), a contact sheet of all of them, and ``categories.md``: which categories wear a procedural
mesh (:mod:`bspatial.world.assets`) and which are still primitives. Everything is deterministic in
``seed`` (same seed, same PNG bytes) and every file is written atomically.

Room types come from :func:`room_types`: by default one room per type furnished by
:func:`bspatial.world.rooms.furnish` and nothing else (:func:`furnished_room`), because an activity's room is
taken by the activity's work surface, storage and objects and no longer reads as its type. Point its
``source`` at another ``() -> {room type: (scene, bounds)}`` function to picture other rooms.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bspatial.common.files import atomic_write_bytes, atomic_write_text
from bspatial.common.seeds import derive_seed
from bspatial.world import objects as shapes
from bspatial.world.assets import family_of, meshed_categories
from bspatial.world.spec import CameraSpec, LightSpec, ObjectSpec, SceneSpec

logger = logging.getLogger(__name__)

VIEW_SIZE = 320                       # px, square, per view
INSTANCES = 3                         # instances per category, smallest to largest of its size range
LABEL_HEIGHT = 28                     # px of caption under each picture
THUMB_WIDTH = 320                     # px width of one contact-sheet cell
SHEET_COLUMNS = 8
NEAR_DISTANCE = 2.0                   # near camera: this many times the middle instance's longest side away
FAR_DISTANCE = 1.2                    # far camera: this many times the row's extent away (the whole row in view)
BACKGROUND_RGBA = (0.62, 0.62, 0.6, 1.0)   # neutral grey floor
LIGHT_RIG = (LightSpec(position=(-1.0, -1.5, 3.0), direction=(0.4, 0.5, -1.0), cast_shadow=True, diffuse=0.65),
             LightSpec(position=(1.5, 1.5, 3.0), direction=(-0.4, -0.4, -1.0), cast_shadow=False, diffuse=0.3))
"""One key light with shadows and one fill, for every category picture."""

ObjectBuilder = Callable[[str, float, tuple[float, float, float], np.random.Generator], ObjectSpec]
RoomSource = Callable[[], dict[str, Callable[[], tuple[SceneSpec, tuple[float, float, float, float]]]]]


# ----------------------------------------------------------------------------- the categories


def _fixed(builder: Callable[..., ObjectSpec]) -> tuple[tuple[float, float], ObjectBuilder]:
    """A builder of one fixed size (its length argument is ignored)."""
    return (0.0, 0.0), lambda name, length, pos, rng: builder(name, pos)


def object_categories() -> dict[str, tuple[tuple[float, float], ObjectBuilder]]:
    """Every movable object category of the tasks (objects.py) and activities: (length range, builder)."""
    from bspatial.world.household import RENDERABLE, make_object

    out: dict[str, tuple[tuple[float, float], ObjectBuilder]] = {}
    for category, (lengths, _) in shapes.FOOD_ITEMS.items():
        out[category] = lengths, lambda n, l, p, r, c=category: shapes.food_item(n, c, l, p)
    for category, (lengths, _, _) in shapes.PACKAGED_FOOD.items():
        out[category] = lengths, lambda n, l, p, r, c=category: shapes.packaged_food(n, c, l, p)
    for category, lengths in shapes.TOYS.items():
        out[category] = lengths, lambda n, l, p, r, c=category: shapes.toy(n, c, l, p, r)
    for category in shapes.TOOLS:
        out[category] = (0.0, 0.0), lambda n, l, p, r, c=category: shapes.tool(n, c, p)
    out["plate"] = (0.22, 0.3), lambda n, l, p, r: shapes.plate(n, l, p)
    out["dice"] = (0.015, 0.03), lambda n, l, p, r: shapes.dice(n, l, p)
    out["storage_box"] = (0.0, 0.0), lambda n, l, p, r: shapes.storage_box(n, (0.3, 0.4, 0.25), p)
    out["hardback"] = (0.22, 0.26), lambda n, l, p, r: shapes.hardback(n, p, r, height=l, thickness=0.04)
    for category in ("board_game", "paperback_book"):
        out[category] = (0.0, 0.0), lambda n, l, p, r, c=category: getattr(shapes, c)(n, p, r)
    for category in ("saucer", "bowl", "tupperware", "carving_knife", "folder", "pencil_case", "can_of_soda"):
        out[category] = _fixed(getattr(shapes, category))
    for kind in RENDERABLE.values():
        if kind.category not in out:
            out[kind.category] = kind.length, lambda n, l, p, r, k=kind: make_object(k, n, l, p, 0.0, r)
    return dict(sorted(out.items()))


def category_scene(category: str, seed: int = 0) -> SceneSpec:
    """Three instances of ``category`` in a row along y on a grey floor, a near and a far camera."""
    categories = object_categories()
    if category not in categories:
        raise ValueError(f"category must be one of {sorted(categories)}, got {category!r}")
    (low, high), build = categories[category]
    rng = np.random.default_rng(derive_seed("gallery", category, seed))
    objects, spacing = [], 0.0
    lengths = np.linspace(low, high, INSTANCES)
    for i, length in enumerate(lengths):
        objects.append(build(f"{category}_{i}", float(length), (0.0, 0.0, 0.0), rng))
    from bspatial.world.relations import object_box

    widths = [float(max(object_box(o).extents[:2])) for o in objects]
    spacing = 1.25 * max(widths)
    placed = []
    for i, obj in enumerate(objects):
        y = (i - (INSTANCES - 1) / 2) * spacing
        placed.append(dataclasses.replace(obj, pose=dataclasses.replace(obj.pose, position=(0.0, y, 0.0))))
    extent = max(spacing * INSTANCES, max(float(object_box(o).extents[2]) for o in objects))
    height = max(float(object_box(o).extents[2]) for o in objects)
    # Near: a close look down at the middle instance (about 2x its longest side away, 48 degrees up, so a
    # pen, a knife or a folded newspaper shows its top and its parts); far: the whole row.
    middle = object_box(placed[INSTANCES // 2])
    near_d = NEAR_DISTANCE * float(middle.longest)
    look = np.array([-1.0, -0.25, 1.15]) / np.linalg.norm([-1.0, -0.25, 1.15])
    near_target = tuple(float(v) for v in middle.center)
    cameras = (CameraSpec("near", tuple(float(v) for v in np.asarray(near_target) + near_d * look), near_target, fovy_deg=40.0),
               CameraSpec("far", (-FAR_DISTANCE * extent, -0.25 * FAR_DISTANCE * extent,
                                  height / 2 + 0.8 * FAR_DISTANCE * extent), (0.0, 0.0, height / 2), fovy_deg=40.0))
    # The objects are re-dressed at their gallery poses, so each picture shows the look a scene would.
    return SceneSpec(name=f"gallery-{category}", objects=tuple(_redress(o, seed) for o in placed), cameras=cameras,
                     lights=LIGHT_RIG, robot=None, floor_size=(20.0, 20.0), floor_rgba=BACKGROUND_RGBA)


def _redress(obj: ObjectSpec, seed: int) -> ObjectSpec:
    from bspatial.world.assets import dress, undressed

    return dress(undressed(obj), salt=f"gallery/{seed}")


# ----------------------------------------------------------------------------- the rooms


ROOM_SIZES_M = {"bathroom": (3.2, 3.0), "kitchen": (5.6, 4.0), "garage": (7.0, 5.2), "dining_room": (4.6, 4.2)}
"""Inner (x, y) extents of a pictured room; other types are :data:`DEFAULT_ROOM_SIZE_M`. Household sizes that
hold the type's furniture with a walk around it (the garage: a car beside a workbench), chosen so both
views see every defining piece at seed 0 (a 4.8 x 4.0 kitchen put its counter out of the views)."""
DEFAULT_ROOM_SIZE_M = (4.8, 4.0)
ROOM_SEED = 0
"""The furnishing seed of every room picture (the rooms do not change with the category seed)."""
HEAD_HEIGHT_M = 1.6
"""Room cameras stand at a person's eye height."""
LOOK_DOWN_DEG = 15.0
"""...and look towards the room's middle, this much below the horizontal: the floor in front and the far
walls' furniture both in view."""
CAMERA_RINGS_M = (0.35, 1.0)
"""Candidate viewpoints stand on rings this far in from the inner wall faces (a person in a doorway or a
corner, or a step into the room)."""
CAMERA_STEP_M = 0.6
CAMERA_CLEARANCE_M = 0.8
"""...and this far from any furniture footprint, so no piece fills the view from up close."""
ROOM_FOVY_DEG = 75.0
DEFINING_MIN_PIXELS = 600
"""A defining piece counts as seen when at least 600 of a view's 320 x 320 pixels show it (about 25 x 25 px:
a nightstand across a bedroom)."""
WELL_SEEN_PIXELS = 2500
"""A defining piece of at least 2500 pixels (50 x 50) is seen well; views beyond that are ranked by how far they
stand from the nearest furniture (a nightstand looming in the foreground reads worse than the room around it)."""
MAX_PIECE_SHARE = 0.25
"""A view where one piece covers over a quarter of the frame is crowded (a car or a shower stall seen from up
close): ranked below the uncrowded views that see as many defining groups."""
VIEWS_APART_M = 1.5
"""The two views stand at least this far apart, so they show the room from two sides."""


def furnished_room(kind: str, seed: int = ROOM_SEED) -> tuple[SceneSpec, tuple[float, float, float, float]]:
    """One room of ``kind`` on its own, furnished by type (:func:`bspatial.world.rooms.furnish`): its walls and
    floor in the type's first finishes, its ceiling with its light's fixture, the light and the sun; no activity
    objects, no robot.

    Every side is an outer wall (the garage door may take any), and there is no doorway, so the whole
    room is free for the furniture that defines the type.
    """
    from bspatial.world.apartments import room_walls
    from bspatial.world.floorplans import RoomRegion
    from bspatial.world.rooms import furnish, room_ceilings, room_floor, room_lights, room_materials, room_type

    room_type(kind)   # unknown kinds raise naming the known ones
    dx, dy = ROOM_SIZES_M.get(kind, DEFAULT_ROOM_SIZE_M)
    room = RoomRegion(kind, kind, (0.0, dx, 0.0, dy))
    sides = ("x0", "x1", "y0", "y1")
    floor_m, wall_m = room_materials(kind, 0, 0)
    furniture = furnish(room, np.random.default_rng(derive_seed("gallery-room", kind, seed)), exterior=sides)
    objects = (room_walls(room, wall_m, (), sides), room_floor(room, floor_m), *furniture)
    return SceneSpec(name=f"gallery-room-{kind}", objects=objects, lights=room_lights([room]), robot=None,
                     ceilings=room_ceilings([room])), room.bounds


def furnished_rooms() -> dict[str, Callable[[], tuple[SceneSpec, tuple[float, float, float, float]]]]:
    """Room type -> a function building its :func:`furnished_room` (built only when called)."""
    from bspatial.world.rooms import ROOM_TYPES

    return {kind: (lambda k=kind: furnished_room(k)) for kind in ROOM_TYPES}


def room_types(source: RoomSource = furnished_rooms) -> dict[str, Callable[[], tuple[SceneSpec, tuple[float, float, float, float]]]]:
    """The room types to picture, each with its (lazy) scene builder: ``source()`` (rooms furnished by type
    unless told otherwise)."""
    return source()


def candidate_cameras(scene: SceneSpec, bounds, kind: str) -> list[CameraSpec]:
    """Head-height viewpoints on two rings along the walls (:data:`CAMERA_RINGS_M` in from the inner wall
    faces, every :data:`CAMERA_STEP_M`: corners and doorway-like wall middles), each looking towards the middle
    of ``kind``'s defining furniture (the room's middle when it has none); those within
    :data:`CAMERA_CLEARANCE_M` of furniture are left out."""
    from bspatial.world.rooms import footprint, room_type

    x0, x1, y0, y1 = bounds
    furniture = [o for o in scene.objects if o.category not in ("walls", "floors")]
    boxes = [_plan_box(o) for o in furniture]   # every part, not only colliding ones (a lamp's shade)
    defining = {c for group in room_type(kind).defining for c in group}
    # One centre per defining object (not per part: a dining set's eight chairs weigh as eight pieces).
    key = [np.array(footprint([o])) for o in furniture if o.category in defining]
    centre = (np.array([(x0 + x1) / 2, (y0 + y1) / 2]) if not key else
              np.mean([((b[:, 0].min() + b[:, 1].max()) / 2, (b[:, 2].min() + b[:, 3].max()) / 2) for b in key], axis=0))
    clear = CAMERA_CLEARANCE_M
    out = []
    for inset in CAMERA_RINGS_M:
        for x, y in _ring(x0 + inset, x1 - inset, y0 + inset, y1 - inset):
            if any(b[0] - clear < x < b[1] + clear and b[2] - clear < y < b[3] + clear for b in boxes):
                continue
            reach = max(float(np.linalg.norm(centre - (x, y))), 1.0)
            target = (float(centre[0]), float(centre[1]), HEAD_HEIGHT_M - reach * math.tan(math.radians(LOOK_DOWN_DEG)))
            out.append(CameraSpec(f"view_{len(out)}", (x, y, HEAD_HEIGHT_M), target, fovy_deg=ROOM_FOVY_DEG))
    return out


def _plan_box(obj: ObjectSpec) -> tuple[float, float, float, float]:
    """World (x0, x1, y0, y1) around all of ``obj``'s parts."""
    from bspatial.world.relations import object_box

    box = object_box(obj)
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    corners = box.center + (signs * box.extents / 2) @ box.rotation.T
    return float(corners[:, 0].min()), float(corners[:, 0].max()), float(corners[:, 1].min()), float(corners[:, 1].max())


def _ring(x0: float, x1: float, y0: float, y1: float) -> list[tuple[float, float]]:
    """Points every :data:`CAMERA_STEP_M` (or closer, evenly) around a rectangle, corners included."""
    points = []
    for (ax, ay), (bx, by) in (((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)), ((x0, y1), (x0, y0))):
        n = max(1, math.ceil(math.hypot(bx - ax, by - ay) / CAMERA_STEP_M))
        points += [(ax + (bx - ax) * k / n, ay + (by - ay) * k / n) for k in range(n)]
    return points


def defining_pixels(frame, scene: SceneSpec, kind: str) -> dict[tuple[str, ...], int]:
    """Pixels of ``frame`` (a rendered CameraFrame) showing each defining furniture group of ``kind``."""
    from bspatial.world.rooms import room_type

    category = {o.name: o.category for o in scene.objects}
    ids, counts = np.unique(frame.segmentation, return_counts=True)
    per_category: dict[str, int] = {}
    for i, n in zip(ids.tolist(), counts.tolist()):
        c = category.get(frame.id_to_name.get(i, ""), "")
        per_category[c] = per_category.get(c, 0) + n
    return {group: sum(per_category.get(c, 0) for c in group) for group in room_type(kind).defining}


def _largest_piece_share(frame, scene: SceneSpec) -> float:
    """The largest fraction of ``frame`` that one piece of furniture (not a wall or floor) covers."""
    category = {o.name: o.category for o in scene.objects}
    ids, counts = np.unique(frame.segmentation, return_counts=True)
    furniture = [n for i, n in zip(ids.tolist(), counts.tolist())
                 if category.get(frame.id_to_name.get(i, ""), "walls") not in ("walls", "floors")]
    return max(furniture, default=0) / frame.segmentation.size


def room_scene(scene: SceneSpec, bounds, kind: str) -> SceneSpec:
    """``scene`` without its robot, with the two views of :func:`candidate_cameras` that best show ``kind``'s
    defining furniture: first the one seeing most defining groups (at least :data:`DEFINING_MIN_PIXELS` each;
    ties to a view no piece crowds (:data:`MAX_PIECE_SHARE`), then to the larger smallest group up to
    :data:`WELL_SEEN_PIXELS`, then to the one standing farthest from any piece), then the best one standing :data:`VIEWS_APART_M` away from it."""
    from bspatial.sim.mujoco_backend import MujocoBackend

    candidates = candidate_cameras(scene, bounds, kind)
    if len(candidates) < 2:
        raise ValueError(f"room {kind!r} (bounds {bounds}): only {len(candidates)} candidate viewpoints are clear of "
                         f"its furniture, need 2")
    probe = dataclasses.replace(scene, cameras=tuple(candidates), robot=None)
    pixels, crowded = [], []
    with MujocoBackend(camera_size=VIEW_SIZE, max_render_size=VIEW_SIZE) as sim:
        sim.load(probe)
        for camera in candidates:
            frame = sim.render(camera.name)
            pixels.append(defining_pixels(frame, probe, kind))
            crowded.append(_largest_piece_share(frame, probe) > MAX_PIECE_SHARE)

    boxes = [_plan_box(o) for o in scene.objects if o.category not in ("walls", "floors")]

    def clearance(i: int) -> float:
        x, y = candidates[i].position[:2]
        return min((math.hypot(max(b[0] - x, 0.0, x - b[1]), max(b[2] - y, 0.0, y - b[3])) for b in boxes), default=math.inf)

    def score(i: int) -> tuple[int, bool, int, float]:
        # Past WELL_SEEN_PIXELS a larger smallest group is no better: the view standing farthest from any piece
        # (nothing looming in its foreground) wins.
        values = pixels[i].values()
        return (sum(n >= DEFINING_MIN_PIXELS for n in values), not crowded[i], min(min(values), WELL_SEEN_PIXELS),
                clearance(i))

    first = max(range(len(candidates)), key=score)
    apart = [i for i in range(len(candidates)) if i != first and math.dist(candidates[i].position[:2],
                                                                           candidates[first].position[:2]) >= VIEWS_APART_M]
    if not apart:
        raise ValueError(f"room {kind!r} (bounds {bounds}): no clear viewpoint stands {VIEWS_APART_M} m from "
                         f"{candidates[first].position}")
    second = max(apart, key=score)
    logger.debug("room %s: views %s %s, defining pixels %s %s", kind, candidates[first].name, candidates[second].name,
                 pixels[first], pixels[second])
    return dataclasses.replace(scene, cameras=(candidates[first], candidates[second]), robot=None)


# ----------------------------------------------------------------------------- pictures


def _render_views(scene: SceneSpec) -> np.ndarray:
    """The scene's camera views side by side (H x 2W x 3 uint8 for its two cameras)."""
    from bspatial.sim.mujoco_backend import MujocoBackend

    with MujocoBackend(camera_size=VIEW_SIZE, max_render_size=VIEW_SIZE) as sim:
        sim.load(scene)
        views = [sim.render(camera.name).rgb for camera in scene.cameras]
    return np.concatenate(views, axis=1)


def _captioned(image: np.ndarray, caption: str):
    from PIL import Image, ImageDraw

    out = Image.new("RGB", (image.shape[1], image.shape[0] + LABEL_HEIGHT), (255, 255, 255))
    out.paste(Image.fromarray(image), (0, 0))
    ImageDraw.Draw(out).text((8, image.shape[0] + 8), caption, fill=(0, 0, 0))
    return out


def _png(image) -> bytes:
    import io

    buffer = io.BytesIO()
    image.save(buffer, format="PNG")   # no timestamps or metadata: the bytes depend on the pixels only
    return buffer.getvalue()


def _status(category: str) -> str:
    return family_of(category) if category in meshed_categories() else "primitive"


def write_gallery(out: str | Path, *, categories: list[str] | None = None, rooms: list[str] | None = None,
                  seed: int = 0, room_source: RoomSource = furnished_rooms) -> list[Path]:
    """Write the gallery into ``out`` (see the module docstring); returns the files written.

    Args:
        categories: object categories to picture (default: all of :func:`object_categories`).
        rooms: room types to picture (default: all of :func:`room_types`).
        seed: appearance seed of the category pictures.
        room_source: where room types come from (see :func:`room_types`).
    """
    from bspatial.common.progress import track

    known = object_categories()
    categories = list(known) if categories is None else list(categories)
    unknown = [c for c in categories if c not in known]
    if unknown:
        raise ValueError(f"categories must be among {sorted(known)}, got unknown {unknown}")
    all_rooms = room_types(room_source)
    rooms = list(all_rooms) if rooms is None else list(rooms)
    unknown = [r for r in rooms if r not in all_rooms]
    if unknown:
        raise ValueError(f"rooms must be among {sorted(all_rooms)}, got unknown {unknown}")
    out = Path(out)
    (out / "objects").mkdir(parents=True, exist_ok=True)
    (out / "rooms").mkdir(parents=True, exist_ok=True)
    written, thumbs = [], []
    jobs = [("objects", c) for c in categories] + [("rooms", r) for r in rooms]
    for folder, name in track(jobs, "gallery", "picture"):
        if folder == "objects":
            scene, caption = category_scene(name, seed), f"{name}  [{_status(name)}]  near | far"
        else:
            scene, caption = room_scene(*all_rooms[name](), name), f"room: {name}  two views"
        picture = _captioned(_render_views(scene), caption)
        written.append(atomic_write_bytes(out / folder / f"{name}.png", _png(picture)))
        thumbs.append(picture)
    written.append(atomic_write_bytes(out / "contact_sheet.png", _png(_contact_sheet(thumbs))))
    written.append(atomic_write_text(out / "categories.md", coverage_table(categories)))
    logger.info("gallery: %d pictures and a contact sheet in %s", len(jobs), out)
    return written


def _contact_sheet(pictures):
    from PIL import Image

    if not pictures:
        return Image.new("RGB", (THUMB_WIDTH, THUMB_WIDTH), (255, 255, 255))
    scale = THUMB_WIDTH / pictures[0].width
    cell = (THUMB_WIDTH, int(round(pictures[0].height * scale)))
    columns = min(SHEET_COLUMNS, len(pictures))
    rows = math.ceil(len(pictures) / columns)
    sheet = Image.new("RGB", (columns * cell[0], rows * cell[1]), (255, 255, 255))
    for i, picture in enumerate(pictures):
        sheet.paste(picture.resize(cell, Image.Resampling.BILINEAR), ((i % columns) * cell[0], (i // columns) * cell[1]))
    return sheet


def coverage_table(categories: list[str] | None = None) -> str:
    """Markdown table: every object category, its mesh family or "primitive", and the count meshed."""
    categories = list(object_categories()) if categories is None else categories
    meshed = [c for c in categories if c in meshed_categories()]
    lines = [f"# Object categories: {len(meshed)} of {len(categories)} wear a procedural mesh", "",
             "| category | mesh family |", "|---|---|"]
    lines += [f"| {c} | {_status(c)} |" for c in categories]
    return "\n".join(lines) + "\n"
