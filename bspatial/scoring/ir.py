"""IR (point grounding) scoring: paper Appendix 14 ("Reach IR Scoring", "Placement IR Scoring") and Table S4.

A model predicts one point per IR query; :func:`score_ir` labels it ``correct``, ``wrong`` or
``none`` against the query's region spec (:mod:`bspatial.scoring.ir_regions`: reach masks, directional
placement and container placement geometry, each classifying a point into a detail).

Decisions the paper leaves open (each also noted where it is implemented):

* Pixel lookup: a point ``(u, v)`` is in pixel ``(floor(v), floor(u))`` (continuous coordinates,
  pixel centres at ``i + 0.5``). The closed rectangle ``[0, W] x [0, H]`` is the image: a point
  on the far border (``u == W``, e.g. coordinate 1000 on the 0-1000 prompt scale) is looked up in
  the last column. Anything beyond, or non-finite, is ``none`` (``outside_image`` / ``no_point``).
* Reach: a pixel in both a target and a distractor mask counts as target. Tolerance is the
  Euclidean distance from the point to the nearest target pixel centre, ``<=`` 2% of the image
  diagonal. A point inside a distractor stays ``wrong`` and is not tolerant-correct even when it
  is within tolerance of the target (it is assigned to another object); a background point within
  tolerance is tolerant-correct even if a distractor is nearer (the paper's rule is "within 2%
  of the target region", with no nearest-object clause).
* Directional placement: the countertop is the horizontal plane ``z = height`` bounded by a
  polygon in world xy. The 0.17 m on-ref radius is measured in that plane (xy distance between
  the hit and the reference centre; the centre's own height is ignored), strictly ``<``, so
  exactly 0.17 m is "at least 0.17 m" (Table S4) and not on-ref. The side is the sign of the
  projection of (hit - reference) onto the robot-right axis; a projection of exactly 0 is
  ``none`` / ``on_axis``. Rays that miss the plane or hit it behind the camera are ``off_surface``.
* Container placement: bands are absolute world z in metres. The entry height is assigned to
  the compartment whose *unwidened* band is nearest (distance 0 inside it), ties going to the
  instructed compartment; it counts only if that distance is ``<=`` 0.05 m. Where widened bands
  do not overlap this is exactly the paper's rule; where they overlap, the compartment the point
  is actually in (or closest to) wins. Entry heights outside every widened band are ``none`` /
  ``outside_bands``; a ray starting inside the box enters at the camera.

Example:
    >>> import numpy as np
    >>> from bspatial.scoring.ir_regions import ReachRegion
    >>> target = np.zeros((10, 10), dtype=bool); target[2:4, 2:4] = True
    >>> region = ReachRegion(image_size=(10, 10), targets=[target])
    >>> s = score_ir(np.array([[2.5, 2.5], [8.0, 8.0], [np.nan, np.nan]]), [region] * 3)
    >>> s.label.tolist(), s.detail.tolist()
    (['correct', 'none', 'none'], ['target', 'background', 'no_point'])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bspatial.scoring.ir_regions import (DETAIL_CODES, DETAIL_LABELS, DETAILS, ContainerPlacementRegion,
                                         DirectionalPlacementRegion, ReachRegion, Region)
from bspatial.scoring.validation import short_repr


_DETAIL_ARRAY = np.array(DETAILS)
_LABEL_ARRAY = np.array([DETAIL_LABELS[d] for d in DETAILS])
_STRICT_ARRAY = _LABEL_ARRAY == "correct"
_TOLERANT_ARRAY = _STRICT_ARRAY | (_DETAIL_ARRAY == "near_target")


# --------------------------------------------------------------------------- validation helpers


# --------------------------------------------------------------------------- region specs


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True, eq=False)
class IRScores:
    """Per-point IR scores.

    Attributes:
        strict: bool [N], label == "correct".
        tolerant: bool [N], strict or (reach only) within tolerance of the target.
        label: str [N] of ``IRLabel`` (the strict assignment).
        detail: str [N], a key of :data:`DETAIL_LABELS`.
    """

    strict: np.ndarray
    tolerant: np.ndarray
    label: np.ndarray
    detail: np.ndarray


def _check_region(region: Any, index: int) -> None:
    if not isinstance(region, ReachRegion | DirectionalPlacementRegion | ContainerPlacementRegion):
        raise TypeError(
            f"regions[{index}]: expected a region object (build it with region_from_dict), "
            f"got {type(region).__name__}"
        )


def _group_codes(points: np.ndarray, region: Region) -> np.ndarray:
    """Detail codes of the points of one region (any points, NaN and out-of-image included)."""
    u, v = points[:, 0], points[:, 1]
    width, height = region.image_size
    finite = np.isfinite(u) & np.isfinite(v)
    inside = finite & (u >= 0) & (u <= width) & (v >= 0) & (v <= height)
    codes = np.where(finite, DETAIL_CODES["outside_image"], DETAIL_CODES["no_point"]).astype(np.int8)
    if inside.any():
        codes[inside] = region._codes(u[inside], v[inside])
    return codes


def score_ir(points_px: np.ndarray, regions: Sequence[Region]) -> IRScores:
    """Score predicted points against their regions, vectorised.

    Points are grouped by region identity (``id``): each distinct region object is prepared once
    (run ends, target segments and camera are cached on it), so pass the same object for points
    on the same query (:func:`regions_from_json` does this for a JSON column).

    Args:
        points_px: float [N, 2] of continuous pixel coordinates ``(u, v)``; a row with a NaN is a
            missing or unparseable point.
        regions: N region objects, one per point.

    Returns:
        :class:`IRScores` of N points.

    Example:
        >>> target = np.ones((4, 4), dtype=bool)
        >>> region = ReachRegion(image_size=(8, 8), targets=[np.pad(target, ((0, 4), (0, 4)))])
        >>> score_ir(np.array([[1.0, 1.0], [9.0, 1.0]]), [region, region]).detail.tolist()
        ['target', 'outside_image']
    """
    points = np.asarray(points_px, dtype=float)
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"points_px: expected shape [N, 2], got {points.shape}")
    if len(regions) != len(points):
        raise ValueError(f"regions: expected one region per point ({len(points)}), got {len(regions)}")
    codes = np.empty(len(points), dtype=np.int8)
    if len(points):
        keys = np.fromiter(map(id, regions), dtype=np.uint64, count=len(points))
        order = np.argsort(keys, kind="stable")
        for group in np.split(order, np.flatnonzero(np.diff(keys[order])) + 1):
            region = regions[group[0]]
            _check_region(region, int(group[0]))
            codes[group] = _group_codes(points[group], region)
    return IRScores(
        strict=_STRICT_ARRAY[codes],
        tolerant=_TOLERANT_ARRAY[codes],
        label=_LABEL_ARRAY[codes],
        detail=_DETAIL_ARRAY[codes],
    )


def score_ir_item(point_px: tuple[float, float] | None, region: Region) -> tuple[bool, bool, str, str]:
    """Score one point, straightforwardly (decodes masks each call): the reference for :func:`score_ir`.

    Returns:
        ``(strict, tolerant, label, detail)``.

    Example:
        >>> region = ReachRegion(image_size=(4, 4), targets=[np.eye(4, dtype=bool)])
        >>> score_ir_item((0.5, 0.5), region), score_ir_item(None, region)
        ((True, True, 'correct', 'target'), (False, False, 'none', 'no_point'))
    """
    _check_region(region, 0)
    detail = _item_detail(point_px, region)
    label = DETAIL_LABELS[detail]
    strict = label == "correct"
    return strict, strict or detail == "near_target", label, detail


def _item_detail(point_px: tuple[float, float] | None, region: Region) -> str:
    if point_px is None:
        return "no_point"
    try:
        u, v = (float(x) for x in point_px)
    except (TypeError, ValueError):
        raise ValueError(f"point_px: expected None or two numbers (u, v), got {short_repr(point_px)}") from None
    if not (math.isfinite(u) and math.isfinite(v)):
        return "no_point"
    width, height = region.image_size
    if not (0 <= u <= width and 0 <= v <= height):
        return "outside_image"
    return region._reference(u, v)
