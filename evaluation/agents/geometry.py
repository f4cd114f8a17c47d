"""The agent API's geometry (Appendix 16.5): the robot base frame and a camera's pixels, rays and depth.

The base frame is x forward, y left, z up, with its origin on the floor under the robot; it moves with
the robot (``base_pose`` is the world (x, y, yaw) of the base when the frame is taken). Pixels follow the
backend's convention (:mod:`bspatial.sim.backend`): ``(u, v)`` continuous, u along columns, v along rows,
pixel centres at integer + 0.5, so pixel ``(u, v)`` lies in row ``floor(v)``, column ``floor(u)``.

Every function reads only what a program may see: the frame's intrinsics ``K``, its pose ``T_world_cam``
and its depth image (never its segmentation or object names).

Example:
    >>> import numpy as np
    >>> pose = np.array([1.0, 2.0, np.pi / 2])      # at (1, 2), facing world +y
    >>> np.round(base_to_world([[1.0, 0.0, 0.5]], pose), 6).tolist()
    [[1.0, 3.0, 0.5]]
    >>> np.round(world_to_base([[1.0, 3.0, 0.5]], pose), 6).tolist()
    [[1.0, 0.0, 0.5]]
"""

from __future__ import annotations

import math

import numpy as np

from bspatial.sim.backend import CameraFrame

DEPTH_PATCH = 5
"""Appendix 16.5: ``pixel_to_point`` takes the median depth of a 5 x 5 patch around the pixel."""


def _yaw_rotation(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def base_to_world(points, base_pose) -> np.ndarray:
    """(N, 3) base-frame points in world coordinates, for the base at world ``(x, y, yaw)``."""
    x, y, yaw = (float(v) for v in base_pose)
    return np.atleast_2d(np.asarray(points, float)) @ _yaw_rotation(yaw).T + (x, y, 0.0)


def world_to_base(points, base_pose) -> np.ndarray:
    """(N, 3) world points in the base frame of the base at world ``(x, y, yaw)``."""
    x, y, yaw = (float(v) for v in base_pose)
    return (np.atleast_2d(np.asarray(points, float)) - (x, y, 0.0)) @ _yaw_rotation(yaw)


def world_to_base_rotation(rotation: np.ndarray, base_pose) -> np.ndarray:
    """A world-frame rotation matrix expressed in the base frame."""
    return _yaw_rotation(float(base_pose[2])).T @ np.asarray(rotation, float)


def check_pixel(frame: CameraFrame, u: float, v: float) -> tuple[float, float]:
    """``(u, v)`` as floats, or a ValueError naming the value when it lies outside the image."""
    u, v = float(u), float(v)
    if not (0.0 <= u < frame.width and 0.0 <= v < frame.height):
        raise ValueError(f"pixel (u, v) must lie in the {frame.camera} image (0 <= u < {frame.width}, "
                         f"0 <= v < {frame.height}), got ({u}, {v})")
    return u, v


def _camera_direction(frame: CameraFrame, u: float, v: float) -> np.ndarray:
    """The camera-frame direction (OpenCV axes) through pixel (u, v), with z = 1."""
    K = frame.K
    return np.array([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], 1.0])


def patch_depth(depth: np.ndarray, u: float, v: float, size: int = DEPTH_PATCH) -> float | None:
    """Median z-depth of the ``size`` x ``size`` patch around pixel (u, v), over pixels that hit something
    (depth > 0; the patch is cut at the image border); None when none did."""
    row, col, half = int(math.floor(v)), int(math.floor(u)), size // 2
    patch = depth[max(0, row - half):row + half + 1, max(0, col - half):col + half + 1]
    hit = patch[patch > 0]
    return float(np.median(hit)) if hit.size else None


def pixel_to_point(frame: CameraFrame, u: float, v: float, base_pose) -> np.ndarray | None:
    """The base-frame 3-D point seen at pixel (u, v): the ray through (u, v) at the patch's median depth
    (:func:`patch_depth`); None when nothing is seen there."""
    u, v = check_pixel(frame, u, v)
    z = patch_depth(frame.depth, u, v)
    if z is None:
        return None
    cam = _camera_direction(frame, u, v) * z
    world = frame.T_world_cam[:3, :3] @ cam + frame.T_world_cam[:3, 3]
    return world_to_base(world, base_pose)[0]


def point_to_pixel(frame: CameraFrame, point, base_pose) -> tuple[float, float] | None:
    """The pixel (u, v) at which base-frame ``point`` appears, or None when it is not in front of the
    camera (z <= 0). A point in front but outside the field of view gets coordinates outside the image."""
    world = base_to_world(point, base_pose)
    uv, z = frame.project(world)
    if not z[0] > 0:
        return None
    return float(uv[0, 0]), float(uv[0, 1])


def pixel_to_ray(frame: CameraFrame, u: float, v: float, base_pose) -> tuple[np.ndarray, np.ndarray]:
    """The ray through pixel (u, v) in the base frame: (origin = the camera centre, unit direction)."""
    u, v = check_pixel(frame, u, v)
    R, t = frame.T_world_cam[:3, :3], frame.T_world_cam[:3, 3]
    direction = world_to_base_rotation(R, base_pose) @ _camera_direction(frame, u, v)
    return world_to_base(t, base_pose)[0], direction / np.linalg.norm(direction)
