"""IR region specs (paper Appendix 14): what each query's image region is, validated, and which detail a point gets.

Region specs are the reference format of the ``bspatial_ir`` metric and round-trip through JSON
(``region_from_dict(json.loads(json.dumps(r.to_dict()))) == r``). Three kinds:

* ``reach``: accepted target masks and distractor (non-target candidate) masks.
* ``directional_placement``: camera, countertop (height + polygon), reference centre,
  robot-right axis and instructed side.
* ``container_placement``: camera, container box, compartment height bands, instructed index.

Each region classifies in-image points into a detail of :data:`DETAIL_LABELS` (its geometry: masks,
ray-plane hits, entry heights); :mod:`bspatial.scoring.ir` turns details into labels and scores. The
decisions the paper leaves open are listed in :mod:`bspatial.scoring.ir`.

Example:
    >>> r = region_from_dict({"kind": "reach", "image_size": [3, 2],
    ...                       "targets": [{"size": [2, 3], "counts": [1, 3, 2]}]})
    >>> r.image_size, len(r.targets)
    ((3, 2), 1)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from functools import cached_property
from typing import Any, ClassVar, Literal

import numpy as np

from bspatial.catalog.thresholds import COMPARTMENT_BAND_MARGIN_M, ON_REF_RADIUS_M, TOLERANCE_DIAGONAL_FRACTION
from bspatial.scoring.geometry import pixel_rays, points_in_polygon, ray_box_entries, ray_plane_hits
from bspatial.scoring.masks import Mask
from bspatial.scoring.validation import short_repr


IRLabel = Literal["correct", "wrong", "none"]
RegionKind = Literal["reach", "directional_placement", "container_placement"]


# Every detail string and the label it implies. Tolerant = strict, or detail "near_target".
DETAIL_LABELS: dict[str, IRLabel] = {
    "target": "correct",
    "distractor": "wrong",
    "near_target": "none",  # reach background point within tolerance: tolerant-correct only
    "background": "none",
    "no_point": "none",  # missing or unparseable (NaN) point
    "outside_image": "none",
    "instructed_side": "correct",
    "opposite_side": "wrong",
    "on_ref": "none",
    "on_axis": "none",
    "off_surface": "none",
    "instructed_compartment": "correct",
    "other_compartment": "wrong",
    "outside_bands": "none",
    "missed_container": "none",
}
DETAILS = tuple(DETAIL_LABELS)
DETAIL_CODES = {name: np.int8(i) for i, name in enumerate(DETAILS)}


# Rotation matrices must be orthonormal to this tolerance (float32 sources are fine).
_ROTATION_ATOL = 1e-4


# Reach tolerance is computed in chunks of at most this many point-segment pairs (memory bound).
_PAIR_CHUNK = 1 << 20


def tolerance_px(image_size: tuple[int, int]) -> float:
    """The reach tolerance radius in pixels: 2% of the image diagonal.

    Example:
        >>> round(tolerance_px((720, 720)), 2)
        20.36
    """
    return TOLERANCE_DIAGONAL_FRACTION * math.hypot(image_size[0], image_size[1])


def _fail(owner: str, field_name: str, problem: str, value: Any) -> ValueError:
    return ValueError(f"{owner}: {field_name} {problem}, got {short_repr(value)}")


def _floats(value: Any, shape: tuple[int, ...], owner: str, field_name: str) -> np.ndarray:
    """A finite float array of an exact shape, or a ValueError naming the field and value."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise _fail(owner, field_name, f"must be numbers of shape {shape}", value) from None
    if array.shape != shape:
        raise _fail(owner, field_name, f"must have shape {shape} (found {array.shape})", value)
    if not np.isfinite(array).all():
        raise _fail(owner, field_name, "must be finite", value)
    return array


def _as_tuple(array: np.ndarray) -> tuple:
    return tuple(_as_tuple(row) for row in array) if array.ndim > 1 else tuple(float(x) for x in array)


def _vector(value: Any, lengths: tuple[int, ...], owner: str, field_name: str) -> tuple[float, ...]:
    n = len(value) if isinstance(value, list | tuple | np.ndarray) else -1
    if n not in lengths:
        raise _fail(owner, field_name, f"must be a list of {' or '.join(map(str, lengths))} numbers", value)
    return _as_tuple(_floats(value, (n,), owner, field_name))


def _rotation(value: Any, owner: str, field_name: str) -> np.ndarray:
    R = _floats(value, (3, 3), owner, field_name)
    if not np.allclose(R @ R.T, np.eye(3), atol=_ROTATION_ATOL) or np.linalg.det(R) <= 0:
        raise _fail(owner, field_name, "must be a proper rotation (orthonormal, det +1)", value)
    return R


def _image_size(value: Any, owner: str) -> tuple[int, int]:
    ok = (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(s, int | np.integer) and not isinstance(s, bool) and s > 0 for s in value)
    )
    if not ok:
        raise _fail(owner, "image_size", "must be two positive ints [width, height]", value)
    return int(value[0]), int(value[1])


def _task(value: Any, owner: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _fail(owner, "task", "must be a string or null", value)
    return value


def _camera(K: Any, T_world_cam: Any, owner: str) -> tuple[tuple, tuple]:
    K_arr = _floats(K, (3, 3), owner, "K")
    if K_arr[0, 0] <= 0 or K_arr[1, 1] <= 0 or not np.allclose(K_arr[2], (0.0, 0.0, 1.0)):
        raise _fail(owner, "K", "must be intrinsics with fx, fy > 0 and last row [0, 0, 1]", K)
    T = _floats(T_world_cam, (4, 4), owner, "T_world_cam")
    if not np.allclose(T[3], (0.0, 0.0, 0.0, 1.0)):
        raise _fail(owner, "T_world_cam", "must have last row [0, 0, 0, 1]", T_world_cam)
    _rotation(T[:3, :3], owner, "T_world_cam rotation block")
    return _as_tuple(K_arr), _as_tuple(T)


def _masks(value: Any, owner: str, field_name: str, image_size: tuple[int, int]) -> tuple[Mask, ...]:
    if not isinstance(value, list | tuple):
        raise _fail(owner, field_name, "must be a list of masks", value)
    height_width = (image_size[1], image_size[0])
    masks = tuple(Mask.from_json(m, f"{owner}: {field_name}[{i}]") for i, m in enumerate(value))
    for i, mask in enumerate(masks):
        if mask.size != height_width:
            raise _fail(
                owner, f"{field_name}[{i}].size", f"must be [height, width] = {list(height_width)} (image_size)",
                list(mask.size),
            )
    return masks


def _header_json(region: Any) -> dict[str, Any]:
    """The fields every region spec starts with (``to_dict`` of each kind)."""
    return {"kind": region.kind, "task": region.task, "image_size": list(region.image_size)}


def _camera_json(region: Any) -> dict[str, Any]:
    """The camera of a placement region spec (intrinsics and OpenCV camera-to-world)."""
    return {"K": [list(r) for r in region.K], "T_world_cam": [list(r) for r in region.T_world_cam]}


def _set(obj: Any, **values: Any) -> None:
    for name, value in values.items():
        object.__setattr__(obj, name, value)  # frozen dataclasses normalise in __post_init__


@dataclass(frozen=True)
class Countertop:
    """The countertop: the horizontal plane ``z = height`` bounded by a polygon in world xy.

    ``from_json`` also accepts an oriented rectangle ``{"height", "center": [x, y],
    "half_extents": [a, b], "yaw": radians}``, stored as its 4-vertex polygon.
    """

    height: float
    polygon: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        owner = "countertop"
        height = _floats(self.height, (), owner, "height")
        if not isinstance(self.polygon, list | tuple | np.ndarray) or len(self.polygon) < 3:
            raise _fail(owner, "polygon", "must list at least 3 [x, y] vertices (empty countertop)", self.polygon)
        poly = _floats(self.polygon, (len(self.polygon), 2), owner, "polygon")
        x, y = poly[:, 0], poly[:, 1]
        area = 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
        if area <= 1e-12:
            raise _fail(owner, "polygon", "must enclose a non-zero area (empty countertop)", self.polygon)
        _set(self, height=float(height), polygon=_as_tuple(poly))

    @classmethod
    def from_json(cls, value: Any) -> Countertop:
        if isinstance(value, Countertop):
            return value
        if not isinstance(value, Mapping):
            raise _fail("countertop", "value", "must be a dict with 'height' and 'polygon'", value)
        if "polygon" in value:
            _check_keys(value, {"height", "polygon"}, {"height", "polygon"}, "countertop")
            return cls(height=value["height"], polygon=value["polygon"])
        allowed = {"height", "center", "half_extents", "yaw"}
        _check_keys(value, allowed, allowed - {"yaw"}, "countertop")
        return cls(height=value["height"], polygon=_rectangle(value))

    def to_json(self) -> dict[str, Any]:
        return {"height": self.height, "polygon": [list(p) for p in self.polygon]}


def _rectangle(value: Mapping[str, Any]) -> np.ndarray:
    center = _floats(value["center"], (2,), "countertop", "center")
    half = _floats(value["half_extents"], (2,), "countertop", "half_extents")
    yaw = float(_floats(value.get("yaw", 0.0), (), "countertop", "yaw"))
    if (half <= 0).any():
        raise _fail("countertop", "half_extents", "must be > 0 (empty countertop)", value["half_extents"])
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half
    c, s = math.cos(yaw), math.sin(yaw)
    return center + corners @ np.array([[c, s], [-s, c]])


@dataclass(frozen=True)
class OrientedBox:
    """A container volume: ``{center + rotation @ x : |x_i| <= half_extents_i}`` in world metres."""

    center: tuple[float, float, float]
    half_extents: tuple[float, float, float]
    rotation: tuple[tuple[float, ...], ...] = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))

    def __post_init__(self) -> None:
        owner = "container"
        center = _floats(self.center, (3,), owner, "center")
        half = _floats(self.half_extents, (3,), owner, "half_extents")
        if (half <= 0).any():
            raise _fail(owner, "half_extents", "must all be > 0", self.half_extents)
        R = _rotation(self.rotation, owner, "rotation")
        _set(self, center=_as_tuple(center), half_extents=_as_tuple(half), rotation=_as_tuple(R))

    @classmethod
    def from_json(cls, value: Any) -> OrientedBox:
        if isinstance(value, OrientedBox):
            return value
        if not isinstance(value, Mapping):
            raise _fail("container", "value", "must be a dict with 'center', 'half_extents', 'rotation'", value)
        _check_keys(value, {"center", "half_extents", "rotation"}, {"center", "half_extents"}, "container")
        return cls(**value)

    def to_json(self) -> dict[str, Any]:
        return {
            "center": list(self.center),
            "half_extents": list(self.half_extents),
            "rotation": [list(r) for r in self.rotation],
        }


@dataclass(frozen=True, kw_only=True)
class ReachRegion:
    """Reach IR query: accepted target masks and non-target candidate (distractor) masks.

    Args:
        image_size: ``(width, height)`` of the frame the point refers to.
        targets: accepted target masks (at least one; none may be empty).
        distractors: masks of the other candidate objects (may be empty).
        task: optional task name (per-task means: :func:`bspatial.scoring.aggregate.task_mean`).
    """

    kind: ClassVar[RegionKind] = "reach"
    image_size: tuple[int, int]
    targets: tuple[Mask, ...]
    distractors: tuple[Mask, ...] = ()
    task: str | None = None

    def __post_init__(self) -> None:
        owner = f"{self.kind} region"
        size = _image_size(self.image_size, owner)
        targets = _masks(self.targets, owner, "targets", size)
        if not targets:
            raise _fail(owner, "targets", "must hold at least one accepted target mask", self.targets)
        for i, mask in enumerate(targets):
            if not mask.row_segments()[0].size:
                raise _fail(owner, f"targets[{i}]", "must not be an empty mask", mask.to_json())
        distractors = _masks(self.distractors, owner, "distractors", size)
        _set(self, image_size=size, targets=targets, distractors=distractors, task=_task(self.task, owner))

    def to_dict(self) -> dict[str, Any]:
        return {
            **_header_json(self),
            "targets": [m.to_json() for m in self.targets],
            "distractors": [m.to_json() for m in self.distractors],
        }

    @cached_property
    def _target_segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts = [m.row_segments() for m in self.targets]
        rows, first, last = (np.concatenate([p[k] for p in parts]) for k in range(3))
        return rows + 0.5, first.astype(float), last.astype(float)

    def _codes(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        rows, cols = _pixels(u, v, self.image_size)
        in_target = _any_contains(self.targets, rows, cols)
        in_distractor = _any_contains(self.distractors, rows, cols)
        # Target wins where masks overlap; only background points may earn tolerance, so a point
        # inside a distractor stays wrong however close it is to the target.
        codes = np.where(in_target, DETAIL_CODES["target"], np.where(in_distractor, DETAIL_CODES["distractor"], DETAIL_CODES["background"]))
        candidates = np.flatnonzero(codes == DETAIL_CODES["background"])
        if candidates.size:
            near = self._near_target(u[candidates], v[candidates])
            codes[candidates[near]] = DETAIL_CODES["near_target"]
        return codes

    def _near_target(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Whether some target pixel centre lies within the tolerance radius of each point.

        Per target row segment the nearest pixel centre to ``u`` is column
        ``clip(floor(u), first, last)``; the minimum over segments is the exact distance.
        """
        seg_row, seg_first, seg_last = self._target_segments
        r = tolerance_px(self.image_size)
        near = np.zeros(u.size, dtype=bool)
        # Only points within r of the targets' bounding box of pixel centres can be near.
        maybe = np.flatnonzero(
            (u >= seg_first.min() + 0.5 - r)
            & (u <= seg_last.max() + 0.5 + r)
            & (v >= seg_row.min() - r)
            & (v <= seg_row.max() + r)
        )
        step = max(1, _PAIR_CHUNK // seg_row.size)
        for start in range(0, maybe.size, step):
            chunk = maybe[start : start + step]
            uu, vv = u[chunk, None], v[chunk, None]
            dy = seg_row - vv
            dx = (np.clip(np.floor(uu), seg_first, seg_last) + 0.5) - uu
            near[chunk] = ((dx * dx + dy * dy) <= r * r).any(axis=1)
        return near

    def _reference(self, u: float, v: float) -> str:
        row, col = _pixel(u, v, self.image_size)
        target_arrays = [m.to_array() for m in self.targets]
        if any(t[row, col] for t in target_arrays):
            return "target"
        if any(m.to_array()[row, col] for m in self.distractors):
            return "distractor"
        ys, xs = np.nonzero(np.logical_or.reduce(target_arrays))
        d2 = (xs + 0.5 - u) ** 2 + (ys + 0.5 - v) ** 2
        r = tolerance_px(self.image_size)
        return "near_target" if d2.min() <= r * r else "background"


@dataclass(frozen=True, kw_only=True)
class DirectionalPlacementRegion:
    """Directional placement IR query (carving knife / saucer tasks; Table S4).

    Args:
        image_size: ``(width, height)``.
        K: 3x3 intrinsics. T_world_cam: 4x4 camera-to-world (OpenCV camera axes).
        countertop: :class:`Countertop` (or its JSON form).
        reference_center: ``[x, y]`` or ``[x, y, z]`` world position of the reference object; only
            xy is used (the on-ref radius is measured in the countertop plane).
        robot_right: ``[x, y]`` or ``[x, y, z]`` world direction of the robot's right; only xy is used.
        side: instructed side, ``"left"`` (negative robot-right) or ``"right"``.
        task: optional task name.
    """

    kind: ClassVar[RegionKind] = "directional_placement"
    image_size: tuple[int, int]
    K: tuple[tuple[float, ...], ...]
    T_world_cam: tuple[tuple[float, ...], ...]
    countertop: Countertop
    reference_center: tuple[float, ...]
    robot_right: tuple[float, ...]
    side: Literal["left", "right"]
    task: str | None = None

    def __post_init__(self) -> None:
        owner = f"{self.kind} region"
        K, T = _camera(self.K, self.T_world_cam, owner)
        right = _vector(self.robot_right, (2, 3), owner, "robot_right")
        if math.hypot(right[0], right[1]) < 1e-9:
            raise _fail(owner, "robot_right", "must have a non-zero horizontal (xy) part", self.robot_right)
        if self.side not in ("left", "right"):
            raise _fail(owner, "side", "must be 'left' or 'right'", self.side)
        _set(
            self,
            image_size=_image_size(self.image_size, owner),
            K=K,
            T_world_cam=T,
            countertop=Countertop.from_json(self.countertop),
            reference_center=_vector(self.reference_center, (2, 3), owner, "reference_center"),
            robot_right=right,
            task=_task(self.task, owner),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **_header_json(self),
            **_camera_json(self),
            "countertop": self.countertop.to_json(),
            "reference_center": list(self.reference_center),
            "robot_right": list(self.robot_right),
            "side": self.side,
        }

    @cached_property
    def _right_xy(self) -> tuple[float, float]:
        norm = math.hypot(self.robot_right[0], self.robot_right[1])
        return self.robot_right[0] / norm, self.robot_right[1] / norm

    def _hits(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        origins, dirs = pixel_rays(np.column_stack([u, v]), self.K, self.T_world_cam)
        hits = ray_plane_hits(origins, dirs, (0.0, 0.0, self.countertop.height), (0.0, 0.0, 1.0))
        on_surface = np.isfinite(hits[:, 0]) & points_in_polygon(hits[:, :2], self.countertop.polygon)
        return hits, on_surface

    def _codes(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        hits, on_surface = self._hits(u, v)
        dx = hits[:, 0] - self.reference_center[0]
        dy = hits[:, 1] - self.reference_center[1]
        rx, ry = self._right_xy
        lateral = dx * rx + dy * ry  # signed offset along robot-right: > 0 is the robot's right
        instructed = lateral > 0 if self.side == "right" else lateral < 0
        # Order matters: off the countertop, then on-ref (xy distance strictly < 0.17 m: exactly
        # 0.17 m is "at least 0.17 m", Table S4), then the side by the sign of `lateral`.
        codes = np.select(
            [~on_surface, dx * dx + dy * dy < ON_REF_RADIUS_M**2, lateral == 0, instructed],
            [DETAIL_CODES["off_surface"], DETAIL_CODES["on_ref"], DETAIL_CODES["on_axis"], DETAIL_CODES["instructed_side"]],
            default=DETAIL_CODES["opposite_side"],
        )
        return codes.astype(np.int8)

    def _reference(self, u: float, v: float) -> str:
        hits, on_surface = self._hits(np.array([u]), np.array([v]))
        if not on_surface[0]:
            return "off_surface"
        dx = float(hits[0, 0]) - self.reference_center[0]
        dy = float(hits[0, 1]) - self.reference_center[1]
        if dx * dx + dy * dy < ON_REF_RADIUS_M**2:
            return "on_ref"
        lateral = dx * self._right_xy[0] + dy * self._right_xy[1]
        if lateral == 0:
            return "on_axis"
        return "instructed_side" if (lateral > 0) == (self.side == "right") else "opposite_side"


@dataclass(frozen=True, kw_only=True)
class ContainerPlacementRegion:
    """Container placement IR query (tupperware in fridge / bowl in cabinet; Table S4).

    Args:
        image_size: ``(width, height)``.
        K: 3x3 intrinsics. T_world_cam: 4x4 camera-to-world (OpenCV camera axes).
        container: :class:`OrientedBox` of the container volume (or its JSON form).
        compartments: ``[[low, high], ...]`` compartment height bands, world z in metres.
        instructed_compartment: index into ``compartments``.
        task: optional task name.
    """

    kind: ClassVar[RegionKind] = "container_placement"
    image_size: tuple[int, int]
    K: tuple[tuple[float, ...], ...]
    T_world_cam: tuple[tuple[float, ...], ...]
    container: OrientedBox
    compartments: tuple[tuple[float, float], ...]
    instructed_compartment: int
    task: str | None = None

    def __post_init__(self) -> None:
        owner = f"{self.kind} region"
        K, T = _camera(self.K, self.T_world_cam, owner)
        n = len(self.compartments) if isinstance(self.compartments, list | tuple | np.ndarray) else 0
        if n == 0:
            raise _fail(owner, "compartments", "must list at least one [low, high] band", self.compartments)
        bands = _floats(self.compartments, (n, 2), owner, "compartments")
        for i, (low, high) in enumerate(bands):
            if low > high:
                raise _fail(owner, f"compartments[{i}]", "must have low <= high", list(self.compartments[i]))
        index = self.instructed_compartment
        if not isinstance(index, int | np.integer) or isinstance(index, bool) or not 0 <= index < n:
            raise _fail(owner, "instructed_compartment", f"must be an int index in [0, {n})", index)
        _set(
            self,
            image_size=_image_size(self.image_size, owner),
            K=K,
            T_world_cam=T,
            container=OrientedBox.from_json(self.container),
            compartments=_as_tuple(bands),
            instructed_compartment=int(index),
            task=_task(self.task, owner),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **_header_json(self),
            **_camera_json(self),
            "container": self.container.to_json(),
            "compartments": [list(b) for b in self.compartments],
            "instructed_compartment": self.instructed_compartment,
        }

    def _entry_heights(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        origins, dirs = pixel_rays(np.column_stack([u, v]), self.K, self.T_world_cam)
        box = self.container
        return ray_box_entries(origins, dirs, box.center, box.half_extents, box.rotation)[:, 2]

    def _codes(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        z = self._entry_heights(u, v)
        bands = np.asarray(self.compartments)
        # Distance of each entry height to each unwidened band (0 inside it): [n_points, n_bands].
        dist = np.maximum(np.maximum(bands[:, 0] - z[:, None], z[:, None] - bands[:, 1]), 0.0)
        instructed = self.instructed_compartment
        nearest = dist.min(axis=1)
        to_instructed = dist[:, instructed] <= nearest  # ties go to the instructed compartment
        codes = np.select(
            [np.isnan(z), nearest > COMPARTMENT_BAND_MARGIN_M, to_instructed],
            [DETAIL_CODES["missed_container"], DETAIL_CODES["outside_bands"], DETAIL_CODES["instructed_compartment"]],
            default=DETAIL_CODES["other_compartment"],
        )
        return codes.astype(np.int8)

    def _reference(self, u: float, v: float) -> str:
        z = float(self._entry_heights(np.array([u]), np.array([v]))[0])
        if math.isnan(z):
            return "missed_container"
        dists = [max(low - z, z - high, 0.0) for low, high in self.compartments]
        best = min(range(len(dists)), key=lambda i: (dists[i], i != self.instructed_compartment))
        if dists[best] > COMPARTMENT_BAND_MARGIN_M:
            return "outside_bands"
        return "instructed_compartment" if best == self.instructed_compartment else "other_compartment"


Region = ReachRegion | DirectionalPlacementRegion | ContainerPlacementRegion
_REGION_CLASSES: dict[str, type] = {
    c.kind: c for c in (ReachRegion, DirectionalPlacementRegion, ContainerPlacementRegion)
}


def _check_keys(d: Mapping[str, Any], allowed: set[str], required: set[str], owner: str) -> None:
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise ValueError(f"{owner}: unknown keys {unknown}; allowed keys are {sorted(allowed)}")
    missing = sorted(required - set(d))
    if missing:
        raise ValueError(f"{owner}: missing keys {missing}, got keys {sorted(d)}")


def region_from_dict(d: Mapping[str, Any] | str | bytes) -> Region:
    """Build and validate a region from its dict (or JSON string) form.

    Raises:
        ValueError: naming the field and the value, for any malformed spec.

    Example:
        >>> r = region_from_dict({"kind": "reach", "image_size": [3, 2],
        ...                       "targets": [{"size": [2, 3], "counts": [1, 3, 2]}]})
        >>> region_from_dict(json.dumps(r.to_dict())) == r
        True
    """
    if isinstance(d, str | bytes):
        try:
            d = json.loads(d)
        except json.JSONDecodeError as error:
            raise ValueError(f"region: not valid JSON ({error}), got {short_repr(d)}") from None
    if not isinstance(d, Mapping):
        raise ValueError(f"region: expected a dict, got {type(d).__name__} {short_repr(d)}")
    kind = d.get("kind")
    if kind not in _REGION_CLASSES:
        raise ValueError(f"region: kind must be one of {sorted(_REGION_CLASSES)}, got {kind!r}")
    cls = _REGION_CLASSES[kind]
    names = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
    _check_keys(d, names | {"kind"}, required, f"{kind} region")
    return cls(**{k: v for k, v in d.items() if k != "kind"})


def regions_from_json(values: Sequence[Mapping[str, Any] | str | Region]) -> list[Region]:
    """Parse a column of region specs, reusing one object per distinct JSON string.

    Identical strings (e.g. the ~80 predictions made on one query) map to the same region object,
    so :func:`score_ir` prepares each distinct region once.
    """
    by_string: dict[str, Region] = {}
    out: list[Region] = []
    for value in values:
        if isinstance(value, ReachRegion | DirectionalPlacementRegion | ContainerPlacementRegion):
            out.append(value)
        elif isinstance(value, str):
            if value not in by_string:
                by_string[value] = region_from_dict(value)
            out.append(by_string[value])
        else:
            out.append(region_from_dict(value))
    return out


def _pixels(u: np.ndarray, v: np.ndarray, image_size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    # Points on the far border (u == W) belong to the last column; callers pass in-image points.
    cols = np.minimum(np.floor(u).astype(np.int64), image_size[0] - 1)
    rows = np.minimum(np.floor(v).astype(np.int64), image_size[1] - 1)
    return rows, cols


def _pixel(u: float, v: float, image_size: tuple[int, int]) -> tuple[int, int]:
    return min(math.floor(v), image_size[1] - 1), min(math.floor(u), image_size[0] - 1)


def _any_contains(masks: tuple[Mask, ...], rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    out = np.zeros(rows.shape, dtype=bool)
    for mask in masks:
        out |= mask.contains(rows, cols)
    return out
