"""The asset gallery (`bspatial sim gallery --out DIR`): a picture of every object category and room type.

One PNG per object category (three instances across the category's size range: a near camera close on
the middle one, a far camera on the row, on a neutral grey floor under one light rig), one per room type (two views across
the room), a contact sheet of all of them, and ``categories.md``: which categories wear a procedural
mesh (:mod:`bspatial.world.assets`) and which are still primitives. Everything is deterministic in
``seed`` (same seed, same PNG bytes) and every file is written atomically.

Room types come from :func:`room_types`, which builds them from the activity apartments today; point
its ``source`` at another ``() -> {room type: (scene, bounds)}`` function (the furnished rooms of
``bspatial.world.rooms``) to picture those instead.
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
    from bspatial.construction.activities import RENDERABLE, make_object

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


def activity_rooms() -> dict[str, Callable[[], tuple[SceneSpec, tuple[float, float, float, float]]]]:
    """Room type -> a function building (scene, room bounds) from the activity apartments: for each type
    the first pinned activity that takes place there (its room has the work surface, storage and
    objects), else the first apartment with a room of that type. Built only when called (an apartment
    takes seconds)."""
    from bspatial.construction.activities import GENERAL_ACTIVITIES, HOME_ROOMS, activity_scene, load_activity

    def build(room_type: str):
        home = next((a for a in GENERAL_ACTIVITIES if load_activity(a).room == room_type), None)
        if home is not None:
            ascene = activity_scene(home, 0)
            return ascene.scene, ascene.rooms[ascene.activity_room].bounds
        for activity in GENERAL_ACTIVITIES:
            ascene = activity_scene(activity, 0)
            room = next((r for r in ascene.rooms if r.kind == room_type), None)
            if room is not None:
                return ascene.scene, room.bounds
        raise ValueError(f"room_type {room_type!r} appears in no apartment of the pinned activities")

    return {room_type: (lambda r=room_type: build(r)) for room_type in HOME_ROOMS}


def room_types(source: RoomSource = activity_rooms) -> dict[str, Callable[[], tuple[SceneSpec, tuple[float, float, float, float]]]]:
    """The room types to picture, each with its (lazy) scene builder: ``source()`` (the activity
    apartments unless told otherwise)."""
    return source()


def room_scene(scene: SceneSpec, bounds) -> SceneSpec:
    """``scene`` without its robot, with two cameras standing in the room's far corners looking across it."""
    x0, x1, y0, y1 = bounds
    cy = (y0 + y1) / 2
    cameras = (CameraSpec("near", (x1 - 0.25, cy, 1.7), (x0, cy, 0.6), fovy_deg=70.0),
               CameraSpec("far", (x1 - 0.25, y0 + 0.25, 1.9), (x0 + 0.3, y1 - 0.3, 0.4), fovy_deg=70.0))
    return dataclasses.replace(scene, cameras=cameras, robot=None)


# ----------------------------------------------------------------------------- pictures


def _render_views(scene: SceneSpec) -> np.ndarray:
    """The scene's near and far views side by side (H x 2W x 3 uint8)."""
    from bspatial.sim.mujoco_backend import MujocoBackend

    with MujocoBackend(camera_size=VIEW_SIZE, max_render_size=VIEW_SIZE) as sim:
        sim.load(scene)
        views = [sim.render(name).rgb for name in ("near", "far")]
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
                  seed: int = 0, room_source: RoomSource = activity_rooms) -> list[Path]:
    """Write the gallery into ``out`` (see the module docstring); returns the files written.

    Args:
        categories: object categories to picture (default: all of :func:`object_categories`).
        rooms: room types to picture (default: all of :func:`room_types`).
        seed: appearance seed of the category pictures.
        room_source: where room types come from (see :func:`room_types`).
    """
    from tqdm.auto import tqdm

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
    for folder, name in tqdm(jobs, desc="gallery", unit="picture"):
        if folder == "objects":
            scene, caption = category_scene(name, seed), f"{name}  [{_status(name)}]  near | far"
        else:
            scene, caption = room_scene(*all_rooms[name]()), f"room: {name}  near | far"
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
