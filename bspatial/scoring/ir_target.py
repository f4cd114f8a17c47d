"""The oracle IR target of Appendix 13.3: where a box's projection puts the policy's IR marker.

Project the 8 corners of the target's 3D box through the head camera, clip the 2D box to the image,
take its integer midpoint, scale to the 224 x 224 policy image and round half up. Demonstrations
(``observation.ir_target``) and rollouts use this rule; ``modeling/ir_rendering.py`` carries a copy
because checkpoints ship it as remote code that may import only numpy / PIL / torch, and
``tests/scoring/test_ir_target.py`` pins the two equal.

Example:
    A 0.2 m cube 2 m in front of a 448 x 448 camera lands at the image center:

    >>> K = [[224.0, 0, 224], [0, 224.0, 224], [0, 0, 1]]
    >>> ir_target_pixel(box_corners([0, 0, 2], [0.1] * 3), K, np.eye(4), (448, 448))
    (112, 112)
"""

from __future__ import annotations

import numpy as np

from bspatial.catalog.schema import POLICY_IMAGE_SIZE
from bspatial.scoring.geometry import project_points

MIN_DEPTH_M = 1e-6
"""Corners at or behind the camera plane do not project."""


def box_corners(center, half_extents, rotation=None) -> np.ndarray:
    """The 8 world-frame corners ``(8, 3)`` of a box given its center, half extents and 3 x 3 rotation."""
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64)
    local = signs * np.asarray(half_extents, dtype=np.float64)
    rot = np.eye(3) if rotation is None else np.asarray(rotation, dtype=np.float64)
    return local @ rot.T + np.asarray(center, dtype=np.float64)


def round_half_up(x: float) -> int:
    """Appendix 13.3's "round to the nearest pixel": half up, not numpy's half-to-even."""
    return int(np.floor(np.float64(x) + 0.5))


def ir_target_pixel(corners_world, K, T_world_cam, image_size: tuple[int, int],
                    out_size: int = POLICY_IMAGE_SIZE) -> tuple[int, int] | None:
    """The IR target ``(x, y)`` on the ``out_size`` grid, or None when the box has no valid projection.

    Corners behind the camera are dropped; no corner in front, or a clipped box outside the image, is
    "no valid projection".

    Args:
        corners_world: ``(8, 3)`` box corners in the world frame (:func:`box_corners`).
        K: ``(3, 3)`` intrinsics of the source image.
        T_world_cam: ``(4, 4)`` camera-to-world pose (OpenCV axes).
        image_size: ``(width, height)`` of the source image in pixels.
        out_size: side of the square policy image.
    """
    width, height = image_size
    uv, depth = project_points(np.asarray(corners_world, dtype=np.float64), K, T_world_cam)
    uv = uv[depth > MIN_DEPTH_M]
    if len(uv) == 0:
        return None
    x0, y0 = uv.min(axis=0)
    x1, y1 = uv.max(axis=0)
    if x1 < 0 or y1 < 0 or x0 > width - 1 or y0 > height - 1:
        return None
    x0, x1 = np.clip([x0, x1], 0, width - 1)
    y0, y1 = np.clip([y0, y1], 0, height - 1)
    mid_x, mid_y = int(np.floor((x0 + x1) / 2)), int(np.floor((y0 + y1) / 2))  # integer midpoint
    x = round_half_up(mid_x * out_size / width)
    y = round_half_up(mid_y * out_size / height)
    return min(max(x, 0), out_size - 1), min(max(y, 0), out_size - 1)
