"""The spatial calculator: relations from 3D object states, following the evaluation prompts' rules.

Every function is pure numpy over world-frame states (:mod:`bspatial.construction.frames`):

* size: the longest dimension of the oriented box (Table S1 size template);
* distance: between 3D centres; to the camera along the view ray (Appendix 15 "Camera Distance
  Question Rules": the distance from the camera to the object's 3D centre); to a robot arm's
  end-effector; perpendicular to a planar reference (a wall) as the distance to its box;
* direction, camera perspective (Appendix 15 "Spatial Understanding Rules"): left/right from the
  camera's viewpoint (camera x), front/back by depth with the *farther* object "in front",
  above/below by world height;
* direction, robot-relative: the same words in the robot base frame (x forward, y left);
* locate: containment of the centre in a height band (layers, counted from the bottom) or a grid cell
  (rows counted from the bottom, columns from the left: Appendix 15 "Locate Question Rules");
* ordinal: order along the robot-right axis, leftmost first.

Relations that decide an answer must clear the paper's margins (Appendix 11): distance >= 15%
relative separation, size >= 10%.

Example:
    >>> name, margin = pick_extreme({"a": 1.0, "b": 0.8, "c": 0.5}, "largest")
    >>> name, round(margin, 3)
    ('a', 0.2)
    >>> camera_direction([0.3, 0, 2], [0, 0, 2], np.eye(4))
    'right'
"""

from __future__ import annotations

import math
import re

import numpy as np

DISTANCE_MARGIN = 0.15
"""Distance comparisons need >= 15% relative separation (Appendix 11; DESIGN §5)."""
SIZE_MARGIN = 0.10
"""Size comparisons need >= 10% relative separation (Appendix 11; DESIGN §5)."""
DIRECTION_DOMINANCE = 1.5
"""Implementation choice: a direction is named only when its axis offset is >= 1.5x the next largest."""
DIRECTIONS = ("left", "right", "front", "back", "above", "below")
"""Single-frame direction answer space (Table S1)."""

_ORDINAL = {"": 0, "2nd": 1, "3rd": 2}


def relative_gap(a: float, b: float) -> float:
    """|a - b| relative to the larger magnitude."""
    big = max(abs(a), abs(b))
    return 0.0 if big == 0 else abs(a - b) / big


def longest_dimension(extents) -> float:
    return float(np.max(np.asarray(extents, float)))


def pick_extreme(values: dict[str, float], relation: str) -> tuple[str, float]:
    """The name a ranked relation picks ('2nd largest', 'closest', 'leftmost'...), and its smallest
    relative gap to its neighbours in the order (the margin the filters compare).

    Descending words (largest, farthest, leftmost) count from the top; their opposites from the bottom.
    For 'leftmost', pass values that grow to the left (e.g. minus the robot-right projection).
    """
    match = re.fullmatch(r"(?:(2nd|3rd) )?(largest|smallest|closest|farthest|leftmost|rightmost)", relation)
    if match is None:
        raise ValueError(f"relation must look like '[2nd |3rd ]largest|smallest|closest|farthest|leftmost|rightmost', "
                         f"got {relation!r}")
    k = _ORDINAL[match.group(1) or ""]
    order = sorted(values, key=lambda n: -values[n])
    if k >= len(order):
        raise ValueError(f"relation {relation!r} needs more than {len(order)} values")
    i = k if match.group(2) in ("largest", "farthest", "leftmost") else len(order) - 1 - k
    gaps = [relative_gap(values[order[i]], values[order[j]]) for j in (i - 1, i + 1) if 0 <= j < len(order)]
    return order[i], min(gaps, default=math.inf)


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


def camera_direction(a, b, T_world_cam) -> str | None:
    """Where ``a`` is relative to ``b`` from the camera's perspective (Appendix 15 rules), or None if ambiguous.

    Left/right: camera x (image right); front/back: depth along the optical axis, farther = "front";
    above/below: world z. The dominant offset wins when it beats the next by :data:`DIRECTION_DOMINANCE`.
    """
    T = np.asarray(T_world_cam, float)
    d = np.asarray(a, float) - np.asarray(b, float)
    cam = T[:3, :3].T @ d
    horizontal = T[:3, :3].T @ np.array([d[0], d[1], 0.0])  # depth from the horizontal offset only
    offsets = {"right": cam[0], "front": horizontal[2], "above": d[2]}
    return _dominant(offsets, {"right": "left", "front": "back", "above": "below"})


def robot_direction(a, b, base_yaw: float) -> str | None:
    """Where ``a`` is relative to ``b`` in the robot base frame (front = robot forward, left = robot left)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    c, s = math.cos(base_yaw), math.sin(base_yaw)
    forward, left = c * d[0] + s * d[1], -s * d[0] + c * d[1]
    return _dominant({"front": forward, "left": left, "above": d[2]}, {"front": "back", "left": "right", "above": "below"})


def _dominant(offsets: dict[str, float], opposite: dict[str, str]) -> str | None:
    ranked = sorted(offsets, key=lambda k: -abs(offsets[k]))
    first, second = abs(offsets[ranked[0]]), abs(offsets[ranked[1]])
    if first == 0 or first < DIRECTION_DOMINANCE * second:
        return None
    key = ranked[0]
    return key if offsets[key] > 0 else opposite[key]


def locate_band(z: float, bands) -> int | None:
    """0-based index of the (low, high) height band containing ``z`` (layers counted from the bottom)."""
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


def order_left_to_right(points: dict[str, np.ndarray], right_axis) -> list[str]:
    """Names from leftmost to rightmost: ascending projection of xy on the robot-right axis."""
    axis = np.asarray(right_axis, float)[:2]
    return sorted(points, key=lambda n: float(np.dot(np.asarray(points[n], float)[:2], axis)))


def robot_right_axis(base_yaw: float) -> np.ndarray:
    """World-xy unit vector to the robot's right for base heading ``base_yaw`` (0 = +x, left = +y)."""
    return np.array([math.sin(base_yaw), -math.cos(base_yaw)])
