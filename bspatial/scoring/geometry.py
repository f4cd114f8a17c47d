"""Camera rays and ray intersections for placement IR scoring (paper Appendix 14), pure numpy.

Conventions, shared with :mod:`bspatial.scoring.masks`:

* Pixel coordinates ``(u, v)`` are continuous: x right, y down; the image spans ``[0, W] x [0, H]``
  and pixel column ``i`` has its centre at ``u = i + 0.5``. With ``cx = W / 2`` and ``cy = H / 2``
  the optical axis passes through the image centre, so a ray through ``(u, v)`` is
  ``K^-1 [u, v, 1]`` with no half-pixel shift.
* Camera frame is OpenCV: x right, y down, z forward. ``T_world_cam`` is the 4x4 camera-to-world
  transform (``p_world = R p_cam + t``).
* World z is up (MuJoCo and OmniGibson); heights are world z in metres.

Every function takes N rays at once; a ray that hits nothing gives a row of NaN.

Example:
    A camera 2 m above the origin looking straight down (camera y = world -y):

    >>> K = intrinsics_from_fovy(720, 720, 90.0)
    >>> T = np.eye(4); T[:3, :3] = np.diag([1.0, -1.0, -1.0]); T[2, 3] = 2.0
    >>> origins, dirs = pixel_rays(np.array([[540.0, 360.0]]), K, T)
    >>> ray_plane_hits(origins, dirs, (0, 0, 0.9), (0, 0, 1)).round(3).tolist()
    [[0.55, 0.0, 0.9]]
"""

from __future__ import annotations

import math

import numpy as np

# Below this |cos| between a ray and a plane normal the ray counts as parallel (no usable hit).
_PARALLEL_EPS = 1e-12


def intrinsics_from_fovy(width: int, height: int, fovy_deg: float) -> np.ndarray:
    """Pinhole intrinsics with fx = fy = (H/2) / tan(fovy/2), cx = W/2, cy = H/2.

    Example:
        >>> intrinsics_from_fovy(720, 720, 90.0).round(6).tolist()
        [[360.0, 0.0, 360.0], [0.0, 360.0, 360.0], [0.0, 0.0, 1.0]]
    """
    f = (height / 2.0) / math.tan(math.radians(fovy_deg) / 2.0)
    return np.array([[f, 0.0, width / 2.0], [0.0, f, height / 2.0], [0.0, 0.0, 1.0]])


def pixel_rays(points_px: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World-frame rays through continuous pixel coordinates.

    Args:
        points_px: float [N, 2] of ``(u, v)``.
        K: 3x3 intrinsics.
        T_world_cam: 4x4 camera-to-world transform, OpenCV camera axes.

    Returns:
        ``(origins [N, 3], directions [N, 3])``; directions have unit length.
    """
    points = np.asarray(points_px, dtype=float).reshape(-1, 2)
    T = np.asarray(T_world_cam, dtype=float)
    homogeneous = np.column_stack([points, np.ones(len(points))])
    dirs_cam = homogeneous @ np.linalg.inv(np.asarray(K, dtype=float)).T
    dirs = dirs_cam @ T[:3, :3].T
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    origins = np.broadcast_to(T[:3, 3], dirs.shape).copy()
    return origins, dirs


def ray_plane_hits(
    origins: np.ndarray, directions: np.ndarray, plane_point: np.ndarray, plane_normal: np.ndarray
) -> np.ndarray:
    """Points where rays meet a plane, NaN rows for rays parallel to it or pointing away.

    Only hits strictly in front of the origin (t > 0) count: a ray pointing away from the plane
    never reaches it.

    Example:
        >>> o = np.zeros((3, 3)); d = np.array([[0, 0, 1.0], [0, 0, -1.0], [1.0, 0, 0]])
        >>> ray_plane_hits(o, d, (0, 0, 2.0), (0, 0, 1.0)).tolist()
        [[0.0, 0.0, 2.0], [nan, nan, nan], [nan, nan, nan]]
    """
    origins = np.asarray(origins, dtype=float)
    directions = np.asarray(directions, dtype=float)
    normal = np.asarray(plane_normal, dtype=float)
    normal = normal / np.linalg.norm(normal)
    denom = directions @ normal
    parallel = np.abs(denom) < _PARALLEL_EPS * np.linalg.norm(directions, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = ((np.asarray(plane_point, dtype=float) - origins) @ normal) / np.where(parallel, 1.0, denom)
    ok = ~parallel & (t > 0)
    hits = origins + np.where(ok, t, 0.0)[:, None] * directions
    hits[~ok] = np.nan
    return hits


def ray_box_entries(
    origins: np.ndarray,
    directions: np.ndarray,
    center: np.ndarray,
    half_extents: np.ndarray,
    rotation: np.ndarray,
) -> np.ndarray:
    """Entry points of rays into an oriented box (slab method), NaN rows for misses.

    The box is ``{center + rotation @ x : |x_i| <= half_extents_i}`` (``rotation`` maps box axes
    to world axes). A ray that starts inside the box enters at its origin. A ray that only grazes
    an edge or face (entry == exit) counts as a hit; a box entirely behind the origin is a miss.

    Example:
        >>> o = np.array([[0.0, 0.0, 5.0], [3.0, 0.0, 5.0]]); d = np.array([[0, 0, -1.0], [0, 0, -1.0]])
        >>> ray_box_entries(o, d, (0, 0, 1.0), (1.0, 1.0, 0.5), np.eye(3)).tolist()
        [[0.0, 0.0, 1.5], [nan, nan, nan]]
    """
    origins = np.asarray(origins, dtype=float)
    directions = np.asarray(directions, dtype=float)
    R = np.asarray(rotation, dtype=float)
    half = np.asarray(half_extents, dtype=float)
    o_box = (origins - np.asarray(center, dtype=float)) @ R  # R^T (o - c), row-wise
    d_box = directions @ R
    zero = d_box == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (-half - o_box) / d_box
        t2 = (half - o_box) / d_box
    # A ray parallel to a slab is inside it for all t (origin within the slab) or never.
    inside_slab = np.abs(o_box) <= half
    t_lo = np.where(zero, np.where(inside_slab, -np.inf, np.inf), np.minimum(t1, t2))
    t_hi = np.where(zero, np.where(inside_slab, np.inf, -np.inf), np.maximum(t1, t2))
    t_near = t_lo.max(axis=1)
    t_far = t_hi.min(axis=1)
    hit = (t_near <= t_far) & (t_far >= 0.0)
    t_entry = np.maximum(t_near, 0.0)
    entries = origins + np.where(hit, t_entry, 0.0)[:, None] * directions
    entries[~hit] = np.nan
    return entries


def points_in_polygon(points_xy: np.ndarray, polygon_xy: np.ndarray) -> np.ndarray:
    """Even-odd point-in-polygon test, vectorised over points and edges.

    Points exactly on an edge may fall either way (a measure-zero set for real predictions).
    NaN points are outside.

    Example:
        >>> square = np.array([[0, 0], [1, 0], [1, 1], [0, 1.0]])
        >>> points_in_polygon(np.array([[0.5, 0.5], [1.5, 0.5], [np.nan, 0]]), square).tolist()
        [True, False, False]
    """
    points = np.asarray(points_xy, dtype=float).reshape(-1, 2)
    poly = np.asarray(polygon_xy, dtype=float)
    x, y = points[:, :1], points[:, 1:]
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    straddles = (y0 > y) != (y1 > y)  # edges crossing the horizontal line through the point
    with np.errstate(divide="ignore", invalid="ignore"):
        x_cross = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
    crossings = straddles & (x < x_cross)
    return crossings.sum(axis=1) % 2 == 1


def project_points(points_world: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Project world points to continuous pixel coordinates (the inverse of :func:`pixel_rays`).

    Returns:
        ``(points_px [N, 2], depth [N])``; depth is camera z (metres), <= 0 behind the camera,
        where the pixel coordinates are meaningless.

    Example:
        >>> K = intrinsics_from_fovy(720, 720, 90.0)
        >>> T = np.eye(4); T[:3, :3] = np.diag([1.0, -1.0, -1.0]); T[2, 3] = 2.0
        >>> uv, depth = project_points(np.array([[0.55, 0.0, 0.9]]), K, T)
        >>> uv.round(6).tolist(), depth.round(6).tolist()
        ([[540.0, 360.0]], [1.1])
    """
    T = np.asarray(T_world_cam, dtype=float)
    points = np.asarray(points_world, dtype=float).reshape(-1, 3)
    cam = (points - T[:3, 3]) @ T[:3, :3]  # R^T (p - t), row-wise
    pix = cam @ np.asarray(K, dtype=float).T
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = pix[:, :2] / pix[:, 2:3]
    return uv, cam[:, 2]
