"""Per-instance frame metadata: the head frame of a sampled task instance and what templates read.

For each sampled instance the pipeline loads the scene, renders the 720x720 head frame (the paper's
construction resolution) and extracts, per object: the 3D oriented box (centre, extents, rotation),
the projected 2D box, and the segmentation pixel count that decides visibility (Section 3.3,
Appendix 11: "visibility checks filter queried and candidate objects by their image pixel counts,
with a stricter threshold for the ground-truth object").

Container placement tasks also get a *container view*: the start scene from a backed-off, crouched pose
(:func:`container_view_scene`), every layer's front in view, for the marked-layer question.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from bspatial.catalog.schema import CONSTRUCTION_FRAME_SIZE, HEAD_CAMERA
from bspatial.scoring.geometry import project_points
from bspatial.sim.backend import CameraFrame, SimBackend
from bspatial.world.spec import SceneSpec
from bspatial.tasks.base import TaskInstance

CONTAINER_VIEW_BACKOFF_M = 0.6
"""Container views: the robot steps back this far (along its heading) from its start ..."""
CONTAINER_VIEW_TORSO = (0.6, -1.2, 0.2, 0.0)
"""... and crouches (torso pitch hinges folded like knees, chest tilted back 0.2 rad). Standing, the head
camera looks down about 35 degrees onto the shelf fronts and the shelves above hide the lower layers
(measured: a bowl in bottom-cabinet layers 1-4 covers 0-28 px of the 720x720 frame); crouched and backed
off, every layer's front is in view for the marked-layer question."""
MIN_VISIBLE_PIXELS = 400
"""Visibility of queried and candidate objects: segmentation pixels in the 720x720 frame. Implementation
choice scaled from the tasks' 40 px at 224x224 (x10.3 in area); Appendix 11 names no number."""
MIN_ANSWER_PIXELS = 800
"""The stricter threshold for the ground-truth (answer) object (Appendix 11: "stricter ... where applicable")."""
MIN_ROOM_PIXELS = 5000
"""A room is observed (and may be named or offered) when its floor covers >= 5000 px over the four 720x720
frames (implementation choice: about a 70 x 70 px patch, a clearly visible stretch of floor; measured:
20.6% of items offering a room under 5,000 px with the earlier 3,000)."""
MAX_LAST_FRAME_WALL_SHARE = 0.7
"""A multi-frame sample is used only when walls cover at most 70% of its last frame (the frame the
questions' egocentric directions refer to): above that the frame is a blank wall (measured: rotation
frames 0.3-0.6, navigation walks that end facing a room's far wall up to 0.77)."""
LANDMARK_IN_FRAME_SHARE = 0.5
"""A named entity (a landmark, a reference, a direction subject) must have at least half of its 3D box inside the
frame (points of a 5 x 5 x 5 grid through the box that project into the image): a fridge or a chair cut by the
frame's edge to a strip is not findable (issue 29: "the fridge is a gray strip at the image edge")."""
LANDMARK_VISIBLE_SHARE = 0.2
"""... and show segmentation pixels at least this share of its projected box's in-frame area (besides the
:data:`MIN_VISIBLE_PIXELS` floor): the floor scales with how big the object should appear, so a sofa hidden
behind a table but for 500 px is not findable where a die of 500 px is."""
_BOX_GRID = np.stack(np.meshgrid(*[np.linspace(-0.5, 0.5, 5)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
MIN_VIEW_CONTENT_SHARE = 0.05
"""A current view shows the scene: at least 5% of its pixels show furniture or objects (anything of the scene but
its walls, floors and ceilings). Measured on 80 candidate views of the ten tasks: 24 showed under 5%, most of them
nothing but a wall corner and a floor (0.0%: "a plain corner with a wood floor and nothing else", issue 29); at 6%
a shelf's edge, at 10% an armchair. Walls must also cover at most the multi-frame last-frame limit
(:data:`MAX_LAST_FRAME_WALL_SHARE`)."""
STRUCTURAL_CATEGORIES = frozenset({"walls", "floor", "robot"})
"""Names that are never question subjects (they may still be references, e.g. the wall)."""


class Rejected(Exception):
    """The instance's frame fails a filter (visibility, margin, ambiguity); the build draws another."""


@dataclass(frozen=True, eq=False)
class ObjectState:
    """One object's 3D state in the world and its footprint in the frame.

    Attributes:
        name, category: scene instance name and BEHAVIOR category.
        center, extents, rotation: oriented 3D box (world, m); ``max(extents)`` is the longest dimension.
        box2d: (u0, v0, u1, v1) pixel box of its visible segmentation (None when not visible).
        center_px: projection (u, v) of the 3D centre (None when behind the camera).
        pixels: segmentation pixels in the frame.
        movable: False for furniture fixed to the world (the scene spec's ``static``), True for household objects.
    """

    name: str
    category: str
    center: np.ndarray
    extents: np.ndarray
    rotation: np.ndarray
    box2d: tuple[int, int, int, int] | None
    center_px: tuple[float, float] | None
    pixels: int
    movable: bool = True

    def visible(self, *, answer: bool = False) -> bool:
        return self.pixels >= (MIN_ANSWER_PIXELS if answer else MIN_VISIBLE_PIXELS)

    def to_dict(self) -> dict:
        """The record's view of the object; ``yaw`` is the box's heading (objects stand upright), for the audit."""
        yaw = float(np.arctan2(self.rotation[1, 0], self.rotation[0, 0]))
        return {"name": self.name, "category": self.category, "center": _r(self.center), "extents": _r(self.extents),
                "yaw": round(yaw, 4), "box2d": None if self.box2d is None else list(self.box2d), "pixels": self.pixels,
                "movable": self.movable}


@dataclass(frozen=True, eq=False)
class FrameRecord:
    """The head frame of one scene state plus per-object states and the robot's frames."""

    frame: CameraFrame
    objects: Mapping[str, ObjectState]
    base_pose: np.ndarray  # (x, y, yaw)
    eef_pos: Mapping[str, np.ndarray]  # "left" / "right" end-effector positions

    def mask(self, name: str) -> np.ndarray:
        return self.frame.mask(name)

    @property
    def image_size(self) -> tuple[int, int]:
        return self.frame.width, self.frame.height

    def box_view(self, name: str) -> tuple[float, float]:
        """(share of the object's 3D box inside the frame, in-frame area in px of its projected box): the box
        sampled on a 5 x 5 x 5 grid, projected; the area is the grid's convex hull in front of the camera,
        clipped to the image."""
        from shapely.geometry import MultiPoint, box

        state = self.objects[name]
        w, h = self.image_size
        uv, front, inside = _box_grid_view(state.center, state.extents, state.rotation, self.frame.K,
                                           self.frame.T_world_cam, w, h)
        if front.sum() < 3:
            return float(inside.mean()), 0.0
        area = MultiPoint([tuple(p) for p in uv[front]]).convex_hull.intersection(box(0, 0, w, h)).area
        return float(inside.mean()), float(area)

    def findable(self, name: str) -> str | None:
        """Why a named entity cannot be found in the frame (None when it can): too little of it in the frame
        (:data:`LANDMARK_IN_FRAME_SHARE`), or too few pixels (:data:`MIN_VISIBLE_PIXELS`, or
        :data:`LANDMARK_VISIBLE_SHARE` of its projected box). Walls (structural): the pixel floor only."""
        state = self.objects[name]
        if state.category in STRUCTURAL_CATEGORIES:   # a wall's box runs past the frame by design: pixels only
            return None if state.visible() else f"{name} covers {state.pixels} px (< {MIN_VISIBLE_PIXELS})"
        share, area = self.box_view(name)
        floor = max(MIN_VISIBLE_PIXELS, LANDMARK_VISIBLE_SHARE * area)
        if share < LANDMARK_IN_FRAME_SHARE:
            return _cut_by_frame(name, share)
        if state.pixels < floor:
            return f"{name} covers {state.pixels} px (< {floor:.0f}: its floor for a projected box of {area:.0f} px)"
        return None

    def require_findable(self, names, prefix: str = "") -> None:
        """Raise :class:`Rejected` ("<prefix>not findable: <why>") for the first of ``names`` that is not
        :meth:`findable`: what VQA questions and IR instructions name must be."""
        for name in names:
            why = self.findable(name)
            if why is not None:
                raise Rejected(f"{prefix}not findable: {why}")

    def camera_dict(self) -> dict:
        return {"K": self.frame.K.tolist(), "T_world_cam": self.frame.T_world_cam.tolist()}


def _box_grid_view(center, extents, rotation, K: np.ndarray, T_world_cam: np.ndarray, width: int, height: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 5 x 5 x 5 grid through an oriented 3D box, projected: (uv (N, 2), in front of the camera (N,), inside the
    image (N,))."""
    points = center + (_BOX_GRID * extents) @ np.asarray(rotation).T
    uv, z = project_points(points, K, T_world_cam)
    front = z > 1e-3
    inside = front & (uv[:, 0] >= 0) & (uv[:, 0] < width) & (uv[:, 1] >= 0) & (uv[:, 1] < height)
    return uv, front, inside


def out_of_view(sim: SimBackend, scene: SceneSpec, names, *, size: int = CONSTRUCTION_FRAME_SIZE) -> str | None:
    """Why one of ``names`` cannot be :meth:`FrameRecord.findable` in the head frame of the world ``sim`` holds now,
    decided before rendering (None: a render must decide): under :data:`LANDMARK_IN_FRAME_SHARE` of its 3D box in
    the frame, by the camera's geometry alone. The build draws until a named landmark is findable, and most draws
    cut a fridge or a chair by the frame's edge: this rejects them without paying for the frame (the same reason
    :meth:`FrameRecord.findable` would give after it)."""
    K, T_world_cam = sim.camera_geometry(HEAD_CAMERA, width=size, height=size)
    category = {o.name: o.category for o in scene.objects}
    for name in names:
        if category[name] in STRUCTURAL_CATEGORIES:
            continue
        bbox = sim.object_bbox(name)
        share = float(_box_grid_view(bbox.center, bbox.extents, bbox.rotation, K, T_world_cam, size, size)[2].mean())
        if share < LANDMARK_IN_FRAME_SHARE:
            return _cut_by_frame(name, share)
    return None


def _cut_by_frame(name: str, share: float) -> str:
    return f"{name}: {100 * share:.0f}% of its box in the frame (< {100 * LANDMARK_IN_FRAME_SHARE:.0f}%)"


def _r(a) -> list[float]:
    return [round(float(x), 6) for x in np.asarray(a).ravel()]


def capture(sim: SimBackend, scene: SceneSpec, *, size: int = CONSTRUCTION_FRAME_SIZE) -> FrameRecord:
    """Load ``scene`` into ``sim`` (a :class:`~bspatial.sim.backend.SimBackend`) and record its head frame."""
    sim.load(scene)
    return record_frame(sim, scene, size=size)


def record_frame(sim: SimBackend, scene: SceneSpec, *, size: int = CONSTRUCTION_FRAME_SIZE) -> FrameRecord:
    """Record the head frame of the world ``sim`` holds now (``scene`` loaded, then stepped or not): e.g. an
    episode's start state after its warm-up (:func:`bspatial.tasks.episode.load_instance`)."""
    frame = sim.render(HEAD_CAMERA, width=size, height=size)
    counts, boxes = _instance_boxes(frame.segmentation)
    ids_by_name: dict[str, list[int]] = {}
    for i, n in frame.id_to_name.items():
        ids_by_name.setdefault(n, []).append(i)
    objects = {}
    for obj in scene.objects:
        bbox = sim.object_bbox(obj.name)
        ids = [i for i in ids_by_name.get(obj.name, []) if i < len(counts) and counts[i]]
        pixels = int(sum(counts[i] for i in ids))
        box2d = _union_box(boxes[ids]) if pixels else None
        uv, z = frame.project(bbox.center[None])
        center_px = (float(uv[0, 0]), float(uv[0, 1])) if z[0] > 0 else None
        objects[obj.name] = ObjectState(obj.name, obj.category, bbox.center.copy(), bbox.extents.copy(),
                                        bbox.rotation.copy(), box2d, center_px, pixels, movable=not obj.static)
    state = sim.robot_state()
    return FrameRecord(frame=frame, objects=objects, base_pose=state.base_pose.copy(),
                       eef_pos={k: v.copy() for k, v in state.eef_pos.items()})


VIEW_STRUCTURE = frozenset({"walls", "floors"})
"""Categories of a floor plan's structure: what a current view may not consist of alone (ceilings are not scene
objects: they segment as background, :mod:`bspatial.sim.render`)."""


def view_shares(frame, scene) -> tuple[float, float]:
    """(walls, furniture and objects) shares of ``frame``'s pixels, by the segmentation of ``scene``'s objects (the
    robot's own body counts as neither): the multi-frame last-frame rule and the navigation current-view rule."""
    category = {o.name: o.category for o in scene.objects}
    counts = np.bincount(frame.segmentation[frame.segmentation >= 0].ravel())
    walls = content = 0
    for i, name in frame.id_to_name.items():
        if i >= len(counts) or name not in category:
            continue
        if category[name] == "walls":
            walls += int(counts[i])
        elif category[name] not in VIEW_STRUCTURE:
            content += int(counts[i])
    return walls / frame.segmentation.size, content / frame.segmentation.size


def _instance_boxes(segmentation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per instance id of ``segmentation`` (-1: background): its pixel count and its pixel box (u0, v0, u1, v1),
    ends exclusive (zeros for an id with no pixel), from two histograms over the image: which ids each row and each
    column holds (a mask per object cost 1.6 ms each, a tenth of a task draw)."""
    h, w = segmentation.shape
    valid = segmentation >= 0
    n = int(segmentation.max()) + 1 if valid.any() else 0
    ids = segmentation[valid]
    rows, cols = np.nonzero(valid)
    counts = np.bincount(ids, minlength=n)
    in_row = np.bincount(rows * n + ids, minlength=h * n).reshape(h, n) > 0
    in_col = np.bincount(cols * n + ids, minlength=w * n).reshape(w, n) > 0
    boxes = np.stack([in_col.argmax(0), in_row.argmax(0), w - in_col[::-1].argmax(0), h - in_row[::-1].argmax(0)],
                     axis=1)
    return counts, np.where(counts[:, None] > 0, boxes, 0)


def _union_box(boxes: np.ndarray) -> tuple[int, int, int, int]:
    """The pixel box around ``boxes`` (K, 4) (u0, v0, u1, v1)."""
    return (int(boxes[:, 0].min()), int(boxes[:, 1].min()), int(boxes[:, 2].max()), int(boxes[:, 3].max()))


def container_view_scene(instance: TaskInstance) -> SceneSpec:
    """The task's start scene seen from a backed-off, crouched pose (:data:`CONTAINER_VIEW_BACKOFF_M`,
    :data:`CONTAINER_VIEW_TORSO`; container tasks): every layer's front in view, the object not yet placed."""
    if instance.container is None:
        raise ValueError(f"task {instance.task!r} has no container")
    return _container_view(instance.scene)


def _container_view(scene: SceneSpec) -> SceneSpec:
    import dataclasses
    import math

    r = scene.robot
    robot = dataclasses.replace(r, x=r.x - CONTAINER_VIEW_BACKOFF_M * math.cos(r.yaw),
                                y=r.y - CONTAINER_VIEW_BACKOFF_M * math.sin(r.yaw), torso=CONTAINER_VIEW_TORSO)
    return dataclasses.replace(scene, robot=robot)


PNG_ZLIB_STRATEGY = zlib.Z_RLE
"""zlib's run-length strategy for the suites' PNGs: rendered frames are long runs of equal bytes after PNG's
filters. Measured on 20 task frames (720 px): 18 ms and 217 kB per frame, against 62 ms and 199 kB with zlib's
default strategy (level 6): encoding was a third of a general-VQA job and the paper build missed its 10 minutes."""


def png_bytes(rgb: np.ndarray) -> bytes:
    """Lossless PNG of an (H, W, 3) uint8 frame (deterministic bytes for identical pixels)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb)).save(buffer, format="PNG", optimize=False,
                                                    compress_type=PNG_ZLIB_STRATEGY)
    return buffer.getvalue()
