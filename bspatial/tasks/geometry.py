"""Variant targets computed from scene geometry (never from a lookup table), pure numpy.

A scene generator places objects; the functions here decide which candidate the instruction names:

* size ranks: the longest dimension of each candidate's oriented bounding box (:func:`longest_dimension`);
* closest / farthest: the distance from each candidate's bounding-box centre to the reference (the
  reference's centre, or the inner face plane for a wall; :func:`reference_distance`);
* leftmost / rightmost: position along the robot-right axis (:func:`order_along_axis`);
* grid cells and layers: containment of the centre in a cell box or a height band (:func:`containing`).

They also check the paper's margins (Appendix 11 filters, DESIGN §5): a relation is only used when
the decisive gap is at least :data:`MIN_DISTANCE_MARGIN` (distance) or :data:`MIN_SIZE_MARGIN` (size)
relative to the larger value.

Example:
    >>> rank_index("2nd largest", 4), rank_index("smallest", 4)
    (1, 3)
    >>> relative_gap(1.0, 0.8)
    0.2
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from bspatial.sim.spec import ObjectSpec

MIN_DISTANCE_MARGIN = 0.15
"""Distance comparisons need >= 15% relative separation (paper Appendix 11 filters; DESIGN §5)."""
MIN_SIZE_MARGIN = 0.10
"""Size comparisons need >= 10% relative separation (paper Appendix 11 filters; DESIGN §5)."""
MIN_ORDINAL_GAP_M = 0.08
"""Implementation choice: neighbouring candidates of an ordinal task differ by at least 8 cm along the
robot-right axis (and their footprints do not overlap along it), so left-to-right order is unambiguous."""

_ORDINALS = {"": 0, "2nd": 1, "3rd": 2}
_WORDS = {"2nd": "second", "3rd": "third"}


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
        return float(np.max(self.extents))

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


def longest_dimension(obj: ObjectSpec) -> float:
    """The object's longest bounding-box dimension (m): the size that size ranks compare."""
    return object_box(obj).longest


def relative_gap(a: float, b: float) -> float:
    """|a - b| relative to the larger magnitude (0 when both are 0)."""
    big = max(abs(a), abs(b))
    return 0.0 if big == 0 else round(abs(a - b) / big, 12)


def rank_index(relation: str, n: int) -> int:
    """Position in a descending order named by a size or ordinal relation ('2nd smallest' of 4 -> 2)."""
    match = re.fullmatch(r"(?:(2nd|3rd) )?(largest|smallest|leftmost|rightmost|closest|farthest)", relation)
    if match is None:
        raise ValueError(f"relation must look like '[2nd |3rd ]largest|smallest|leftmost|rightmost', got {relation!r}")
    k = _ORDINALS[match.group(1) or ""]
    if k >= n:
        raise ValueError(f"relation {relation!r} needs more than {n} candidates")
    return k if match.group(2) in ("largest", "leftmost", "farthest") else n - 1 - k


def spoken(relation: str) -> str:
    """Instruction wording of a relation: '2nd largest' -> 'second largest' (Table S2 example text)."""
    first, _, rest = relation.partition(" ")
    return f"{_WORDS[first]} {rest}" if first in _WORDS else relation


def pick_by_rank(values: dict[str, float], relation: str, margin: float) -> tuple[str, float]:
    """The candidate that ``relation`` names among ``values`` (descending = 'largest' first).

    Returns (name, smallest relative gap between the chosen value and its neighbours in the order).
    """
    names = sorted(values, key=lambda n: -values[n])
    i = rank_index(relation, len(names))
    gaps = [relative_gap(values[names[i]], values[names[j]]) for j in (i - 1, i + 1) if 0 <= j < len(names)]
    return names[i], min(gaps) if gaps else math.inf


def min_adjacent_gap(values) -> float:
    """Smallest relative gap between neighbours of the sorted values (every rank well separated)."""
    ordered = sorted(values, reverse=True)
    return min((relative_gap(a, b) for a, b in zip(ordered, ordered[1:])), default=math.inf)


# ----------------------------------------------------------------------------- references


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


# ----------------------------------------------------------------------------- axes, cells, bands


def robot_right_axis(yaw: float) -> np.ndarray:
    """World-xy unit vector pointing to the robot's right for a base heading ``yaw`` (0 = +x)."""
    return np.array([math.sin(yaw), -math.cos(yaw)])


def order_along_axis(positions: dict[str, np.ndarray], axis) -> list[str]:
    """Names sorted from leftmost to rightmost: ascending projection on the robot-right ``axis``."""
    axis = np.asarray(axis, float)
    return sorted(positions, key=lambda n: float(np.dot(np.asarray(positions[n])[:2], axis)))


def containing(value: float, bands) -> int | None:
    """Index of the (low, high) band that contains ``value``, or None."""
    for i, (low, high) in enumerate(bands):
        if low <= value <= high:
            return i
    return None
