"""The spatial calculator: relations between things in a world, one implementation for tasks and suites.

Pure numpy over world-frame states. The task generators decide which candidate an instruction names
with it (from :mod:`bspatial.world.spec` objects, :func:`object_box`), and the suite builders decide
question answers with it (from rendered frame records), so an instruction and its question can never
disagree about a rule:

* size: the longest dimension of the oriented bounding box (Table S1 size template);
* distance: between 3D centres; to the camera along the view ray (Appendix 15 "Camera Distance
  Question Rules"); to a planar reference (a wall) perpendicular to its face;
* direction, camera perspective (Appendix 15 "Spatial Understanding Rules"): left/right from the
  camera's viewpoint (camera x), front/back by depth with the *farther* object "in front",
  above/below by world height; robot-relative: the same words in the robot base frame;
* ranks: '[2nd |3rd ]largest|smallest|closest|farthest|leftmost|rightmost' (:func:`pick_by_rank`);
* locate: containment of the centre in a height band (layers, counted from the bottom) or a grid cell
  (rows counted from the bottom, columns from the left: Appendix 15 "Locate Question Rules");
* ordinal: order along the robot-right axis, leftmost first.

Relations that decide an answer must clear the paper's margins (Appendix 11,
:mod:`bspatial.catalog.thresholds`): distance >= 15% relative separation, size >= 10%.

Example:
    >>> pick_by_rank({"a": 1.0, "b": 0.8, "c": 0.5}, "largest")
    ('a', 0.19999999999999996)
    >>> rank_index("2nd largest", 4), rank_index("smallest", 4)
    (1, 3)
    >>> camera_direction([0.3, 0, 2], [0, 0, 2], np.eye(4))
    'right'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from bspatial.catalog.thresholds import DIRECTION_DISTRACTOR_RATIO, DIRECTION_DOMINANCE, QUADRANT_AXIS_MARGIN_DEG
from bspatial.world.spec import ObjectSpec

DIRECTIONS = ("left", "right", "front", "back", "above", "below")
"""Single-frame direction answer space (Table S1)."""

_RANK = re.compile(r"(?:(2nd|3rd) )?(largest|smallest|closest|farthest|leftmost|rightmost)")
_ORDINALS = {"": 0, "2nd": 1, "3rd": 2}
_WORDS = {"2nd": "second", "3rd": "third"}

# ----------------------------------------------------------------------------- boxes


def quat_to_matrix(quat) -> np.ndarray:
    """(w, x, y, z) unit quaternion -> 3x3 rotation matrix."""
    w, x, y, z = np.asarray(quat, float) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


@dataclass(frozen=True)
class Box3:
    """An object's oriented bounding box at its spec pose: centre (3,), extents (3,) along ``rotation``'s columns."""

    center: np.ndarray
    extents: np.ndarray
    rotation: np.ndarray

    @property
    def longest(self) -> float:
        return longest_dimension(self.extents)

    def aabb(self) -> tuple[np.ndarray, np.ndarray]:
        reach = np.abs(self.rotation) @ (self.extents / 2)
        return self.center - reach, self.center + reach


def object_box(obj: ObjectSpec) -> Box3:
    """The box enclosing all of ``obj``'s parts, in the object frame, posed in the world."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    pts = []
    for part in obj.parts:
        R = quat_to_matrix(part.pose.quat)
        pts.append((signs * part.local_half_extents()) @ R.T + np.asarray(part.pose.position))
    pts = np.concatenate(pts)
    lo, hi = pts.min(0), pts.max(0)
    R_obj = quat_to_matrix(obj.pose.quat)
    center = np.asarray(obj.pose.position) + R_obj @ ((lo + hi) / 2)
    return Box3(center=center, extents=hi - lo, rotation=R_obj)


def longest_dimension(extents) -> float:
    """The longest bounding-box dimension (m): the size that size relations compare."""
    return float(np.max(np.asarray(extents, float)))


# ----------------------------------------------------------------------------- ranks and margins


def relative_gap(a: float, b: float) -> float:
    """|a - b| relative to the larger magnitude (0 when both are 0)."""
    big = max(abs(a), abs(b))
    return 0.0 if big == 0 else abs(a - b) / big


def rank_index(relation: str, n: int) -> int:
    """Position in a descending order named by a rank relation ('2nd smallest' of 4 -> 2).

    Descending words (largest, farthest, leftmost) count from the top; their opposites from the bottom.
    For 'leftmost', rank values that grow to the left (e.g. minus the robot-right projection).
    """
    match = _RANK.fullmatch(relation)
    if match is None:
        raise ValueError(f"relation must look like '[2nd |3rd ]largest|smallest|closest|farthest|leftmost|rightmost', "
                         f"got {relation!r}")
    k = _ORDINALS[match.group(1) or ""]
    if k >= n:
        raise ValueError(f"relation {relation!r} needs more than {n} values")
    return k if match.group(2) in ("largest", "farthest", "leftmost") else n - 1 - k


def pick_by_rank(values: dict[str, float], relation: str) -> tuple[str, float]:
    """The name a rank relation picks among ``values``, and its smallest relative gap to its neighbours
    in the order (the margin the filters compare)."""
    order = sorted(values, key=lambda n: -values[n])
    i = rank_index(relation, len(order))
    gaps = [relative_gap(values[order[i]], values[order[j]]) for j in (i - 1, i + 1) if 0 <= j < len(order)]
    return order[i], min(gaps, default=math.inf)


def min_adjacent_gap(values) -> float:
    """Smallest relative gap between neighbours of the sorted values (every rank well separated)."""
    ordered = sorted(values, reverse=True)
    return min((relative_gap(a, b) for a, b in zip(ordered, ordered[1:])), default=math.inf)


def spoken(relation: str) -> str:
    """Instruction wording of a relation: '2nd largest' -> 'second largest' (Table S2 example text)."""
    first, _, rest = relation.partition(" ")
    return f"{_WORDS[first]} {rest}" if first in _WORDS else relation


# ----------------------------------------------------------------------------- distances


SUPPORT_GAP_M = 0.03
"""An object rests on another when its bottom lies within this of the other's top (settled objects sit at 0-1 cm)."""


def world_half_extents(extents, rotation) -> np.ndarray:
    """Half-sizes along the world axes of the box ``extents`` (its own axes) turned by ``rotation``."""
    return np.abs(np.asarray(rotation, float)) @ (np.asarray(extents, float) / 2.0)


def rests_on(upper_center, upper_extents, upper_rotation, lower_center, lower_extents, lower_rotation,
             gap: float = SUPPORT_GAP_M) -> bool:
    """Whether the upper box stands on the lower one: its bottom within ``gap`` of the lower's top and its centre
    over the lower's footprint (world-axis boxes of both).

    Example:
        >>> import numpy as np
        >>> eye = np.eye(3)
        >>> rests_on([0.1, 0, 0.85], [0.1, 0.1, 0.1], eye, [0, 0, 0.4], [1.0, 0.6, 0.8], eye)   # a mug on a table
        True
        >>> rests_on([1.0, 0, 0.85], [0.1, 0.1, 0.1], eye, [0, 0, 0.4], [1.0, 0.6, 0.8], eye)   # beside it
        False
    """
    upper_half = world_half_extents(upper_extents, upper_rotation)
    lower_half = world_half_extents(lower_extents, lower_rotation)
    upper, lower = np.asarray(upper_center, float), np.asarray(lower_center, float)
    bottom, top = upper[2] - upper_half[2], lower[2] + lower_half[2]
    over = bool(np.all(np.abs(upper[:2] - lower[:2]) <= lower_half[:2]))
    return over and bool(-gap <= bottom - top <= gap)


def center_distance(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a, float) - np.asarray(b, float)))


def camera_distance(point, T_world_cam) -> float:
    """Distance from the camera centre to ``point`` along the view ray through it."""
    return center_distance(point, np.asarray(T_world_cam, float)[:3, 3])


def box_distance(point, center, extents, rotation) -> float:
    """Distance from ``point`` to an oriented box (0 inside): the perpendicular distance to a wall slab's face."""
    local = np.asarray(rotation, float).T @ (np.asarray(point, float) - np.asarray(center, float))
    outside = np.maximum(np.abs(local) - np.asarray(extents, float) / 2, 0.0)
    return float(np.linalg.norm(outside))


@dataclass(frozen=True)
class Reference:
    """What a closest / farthest relation measures to: an object's centre, or a wall's inner face.

    Attributes:
        name: the scene object (``wall_back`` for the wall).
        point: (3,) reference point (centre, or a point on the wall face).
        normal: (3,) inward unit normal for a plane reference; None for a point reference.
    """

    name: str
    point: np.ndarray
    normal: np.ndarray | None = None

    def distance(self, p) -> float:
        p = np.asarray(p, float)
        if self.normal is None:
            return float(np.linalg.norm(p - self.point))
        return float(abs(np.dot(p - self.point, self.normal)))


def reference_distance(candidate: ObjectSpec, reference: Reference) -> float:
    """Distance from the candidate's bounding-box centre to the reference (3D, m)."""
    return reference.distance(object_box(candidate).center)


# ----------------------------------------------------------------------------- directions


def camera_direction(a, b, T_world_cam) -> str | None:
    """Where ``a`` is relative to ``b`` from the camera's perspective (Appendix 15 rules), or None if ambiguous.

    Left/right: camera x (image right); front/back: depth along the optical axis, farther = "front";
    above/below: world z. The dominant offset wins when it beats the next by ``DIRECTION_DOMINANCE``.
    """
    offsets = camera_offsets(a, b, T_world_cam)
    return _dominant({k: offsets[k] for k in ("right", "front", "above")},
                     {"right": "left", "front": "back", "above": "below"})


def camera_plane_direction(a, b, T_world_cam) -> str | None:
    """Where ``a`` is relative to ``b`` across the image, depth left out: left / right (camera x) or above / below
    (world z), the dominant one by ``DIRECTION_DOMINANCE``, or None if ambiguous."""
    offsets = camera_offsets(a, b, T_world_cam)
    return _dominant({k: offsets[k] for k in ("right", "above")}, {"right": "left", "above": "below"})


def camera_offsets(a, b, T_world_cam) -> dict[str, float]:
    """Signed offset (m) of ``a`` from ``b`` towards each of :data:`DIRECTIONS`, camera perspective
    (the axes of :func:`camera_direction`; "left" is minus "right"). A direction holds to the extent its
    offset is positive: the direction templates offer only distractors whose offset is small against the
    answer's (:data:`~bspatial.catalog.thresholds.DIRECTION_DISTRACTOR_RATIO`)."""
    T = np.asarray(T_world_cam, float)
    d = np.asarray(a, float) - np.asarray(b, float)
    cam = T[:3, :3].T @ d
    # Front: depth along the optical axis itself (the paper: "farther from the camera, deeper into the scene").
    # Measured on the horizontal offset alone, a head camera looking down saw an object on a lower shelf as
    # "below" and not deeper, while the image shows it both (issue 29: 10.7% of single-frame items).
    right, front, above = float(cam[0]), float(cam[2]), float(d[2])
    return {"left": -right, "right": right, "front": front, "back": -front, "above": above, "below": -above}


def false_directions(offsets: dict[str, float], answer: str) -> list[str]:
    """The directions other than ``answer`` that are false by the distractor margin: their own-axis offset
    is at most :data:`~bspatial.catalog.thresholds.DIRECTION_DISTRACTOR_RATIO` of the answer's (in
    :data:`DIRECTIONS` order; never fewer than three: the opposite and one side of each other axis)."""
    limit = DIRECTION_DISTRACTOR_RATIO * offsets[answer]
    return [d for d in DIRECTIONS if d != answer and offsets[d] <= limit]


def robot_direction(a, b, base_yaw: float) -> str | None:
    """Where ``a`` is relative to ``b`` in the robot base frame (front = robot forward, left = robot left)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    forward, left = robot_frame_offset(d[:2], base_yaw)
    return _dominant({"front": forward, "left": left, "above": d[2]}, {"front": "back", "left": "right", "above": "below"})


def _dominant(offsets: dict[str, float], opposite: dict[str, str]) -> str | None:
    ranked = sorted(offsets, key=lambda k: -abs(offsets[k]))
    first, second = abs(offsets[ranked[0]]), abs(offsets[ranked[1]])
    if first == 0 or first < DIRECTION_DOMINANCE * second:
        return None
    key = ranked[0]
    return key if offsets[key] > 0 else opposite[key]


# ----------------------------------------------------------------------------- axes, cells, bands


def robot_frame_offset(offset_xy, base_yaw: float) -> tuple[float, float]:
    """(forward, left) of a world-xy offset in the frame of a robot heading ``base_yaw`` (0 = +x, left = +y)."""
    c, s = math.cos(base_yaw), math.sin(base_yaw)
    return c * offset_xy[0] + s * offset_xy[1], -s * offset_xy[0] + c * offset_xy[1]


def quadrant(offset_xy, base_yaw: float) -> str:
    """front-left / front-right / back-left / back-right of a world-xy offset in the robot's frame (a zero part
    counts as back / right)."""
    forward, left = robot_frame_offset(offset_xy, base_yaw)
    return f"{'front' if forward > 0 else 'back'}-{'left' if left > 0 else 'right'}"


def axis_margin_deg(offset_xy, base_yaw: float) -> float:
    """Degrees between a world-xy offset's bearing and the nearest robot axis (0 on an axis, 45 on a diagonal)."""
    bearing = math.degrees(math.atan2(offset_xy[1], offset_xy[0]) - base_yaw) % 90.0
    return min(bearing, 90.0 - bearing)


def clear_quadrant(offset_xy, base_yaw: float) -> str | None:
    """The offset's quadrant, or None within :data:`~bspatial.catalog.thresholds.QUADRANT_AXIS_MARGIN_DEG` of an
    axis (where two quadrants are defensible)."""
    if axis_margin_deg(offset_xy, base_yaw) < QUADRANT_AXIS_MARGIN_DEG:
        return None
    return quadrant(offset_xy, base_yaw)


def robot_right_axis(base_yaw: float) -> np.ndarray:
    """World-xy unit vector to the robot's right for base heading ``base_yaw`` (0 = +x, left = +y)."""
    return np.array([math.sin(base_yaw), -math.cos(base_yaw)])


def order_left_to_right(points: dict[str, np.ndarray], right_axis) -> list[str]:
    """Names from leftmost to rightmost: ascending projection of xy on the robot-right axis."""
    axis = np.asarray(right_axis, float)[:2]
    return sorted(points, key=lambda n: float(np.dot(np.asarray(points[n], float)[:2], axis)))


def locate_band(z: float, bands) -> int | None:
    """0-based index of the (low, high) band containing ``z`` (layers counted from the bottom), or None."""
    for i, (low, high) in enumerate(bands):
        if low <= z <= high:
            return i
    return None


def locate_cell(point, cells: dict[str, tuple[float, ...]]) -> str | None:
    """Name of the (x0, x1, y0, y1, z0, z1) cell box containing ``point``."""
    x, y, z = (float(v) for v in point)
    for name, (x0, x1, y0, y1, z0, z1) in cells.items():
        if x0 <= x <= x1 and y0 <= y <= y1 and z0 <= z <= z1:
            return name
    return None


def grid_cells_bottom_up(row_bands, column_edges_left_to_right, x_range) -> dict[str, tuple[float, ...]]:
    """'RxC' cell boxes with rows counted from the bottom and columns from the robot's left (Appendix 15).

    Args:
        row_bands: (low, high) heights of each row, bottom first.
        column_edges_left_to_right: world-y edges from the robot's left (+y) to its right.
        x_range: (x0, x1) depth of the cells.
    """
    cells = {}
    for r, (z0, z1) in enumerate(row_bands, start=1):
        for c in range(1, len(column_edges_left_to_right)):
            y_hi, y_lo = column_edges_left_to_right[c - 1], column_edges_left_to_right[c]
            cells[f"{r}x{c}"] = (x_range[0], x_range[1], min(y_lo, y_hi), max(y_lo, y_hi), z0, z1)
    return cells
