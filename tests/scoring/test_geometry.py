"""Camera rays and intersections, checked against hand-computed values."""

import math

import numpy as np
import pytest

from bspatial.scoring.geometry import (
    intrinsics_from_fovy,
    pixel_rays,
    points_in_polygon,
    project_points,
    ray_box_entries,
    ray_plane_hits,
)

W = H = 720
K = intrinsics_from_fovy(W, H, 90.0)  # fx = fy = 360 / tan(45 deg) = 360, cx = cy = 360


def down_camera(height: float = 2.0) -> np.ndarray:
    """Camera above the origin looking straight down: cam x = world x, cam y (down) = world -y."""
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])
    T[2, 3] = height
    return T


def forward_camera(eye=(0.0, -2.0, 1.0)) -> np.ndarray:
    """Camera looking along world +y: cam x = world x, cam y (down) = world -z, cam z = world y."""
    T = np.eye(4)
    T[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    T[:3, 3] = eye
    return T


def test_intrinsics_formula():
    K2 = intrinsics_from_fovy(640, 480, 60.0)
    f = 240 / math.tan(math.radians(30))
    np.testing.assert_allclose(K2, [[f, 0, 320], [0, f, 240], [0, 0, 1]])


def test_image_centre_is_the_optical_axis():
    origins, dirs = pixel_rays(np.array([[360.0, 360.0]]), K, down_camera())
    np.testing.assert_allclose(origins, [[0, 0, 2]])
    np.testing.assert_allclose(dirs, [[0, 0, -1]], atol=1e-15)


def test_down_camera_hits_plane_where_computed_by_hand():
    # Pixel (u, v) -> camera direction ((u-360)/360, (v-360)/360, 1) -> world (x, -y, -1).
    # From z = 2 to z = 0.9 the ray travels 1.1 along -z, so the hit is 1.1 * (x, -y).
    pixels = np.array([[540.0, 360.0], [360.0, 180.0], [0.0, 0.0], [720.0, 720.0], [0.5, 0.5]])
    expected = np.array(
        [
            [0.55, 0.0, 0.9],  # half way to the right edge: x = 0.5 * 1.1
            [0.0, 0.55, 0.9],  # up in the image is world +y (camera y is world -y)
            [-1.1, 1.1, 0.9],  # top-left image corner (90 deg fov: corner ray at 45 deg per axis)
            [1.1, -1.1, 0.9],
            [-1.1 * 359.5 / 360, 1.1 * 359.5 / 360, 0.9],  # centre of pixel (0, 0)
        ]
    )
    origins, dirs = pixel_rays(pixels, K, down_camera())
    np.testing.assert_allclose(np.linalg.norm(dirs, axis=1), 1.0)
    np.testing.assert_allclose(ray_plane_hits(origins, dirs, (0, 0, 0.9), (0, 0, 1)), expected, atol=1e-12)


def test_plane_parallel_and_pointing_away_give_nan():
    origins, dirs = pixel_rays(np.array([[360.0, 360.0], [360.0, 100.0], [360.0, 600.0]]), K, forward_camera())
    hits = ray_plane_hits(origins, dirs, (0, 0, 0.9), (0, 0, 1))
    assert np.isnan(hits[0]).all()  # centre ray is horizontal: parallel to the countertop
    assert np.isnan(hits[1]).all()  # above the horizon: points up, away from z = 0.9 below the camera
    # below the horizon: direction (0, 1, -(600-360)/360); drops 0.1 m after 0.15 m forward
    np.testing.assert_allclose(hits[2], [0.0, -2.0 + 0.1 * 360 / 240, 0.9])
    # a plane behind the camera (t < 0) is not hit
    assert np.isnan(ray_plane_hits(np.zeros((1, 3)), np.array([[0, 0, 1.0]]), (0, 0, -1), (0, 0, 1))).all()


def test_plane_normal_orientation_does_not_matter():
    o, d = np.array([[0, 0, 2.0]]), np.array([[0.6, 0, -0.8]])
    a = ray_plane_hits(o, d, (0, 0, 0.9), (0, 0, 1))
    b = ray_plane_hits(o, d, (5, 5, 0.9), (0, 0, -3))
    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(a, [[0.825, 0, 0.9]])


def test_project_points_inverts_pixel_rays():
    rng = np.random.default_rng(0)
    T = forward_camera((0.3, -1.5, 1.2))
    pixels = rng.uniform(0, 720, size=(50, 2))
    origins, dirs = pixel_rays(pixels, K, T)
    depth = rng.uniform(0.5, 3.0, size=(50, 1))
    world = origins + depth * dirs
    uv, z = project_points(world, K, T)
    np.testing.assert_allclose(uv, pixels, atol=1e-9)
    assert (z > 0).all()


def test_box_entry_top_face_from_above():
    # Looking down at a box spanning z in [0.5, 1.5]: the entry is on the top face, z = 1.5.
    origins, dirs = pixel_rays(np.array([[360.0, 360.0], [540.0, 360.0]]), K, down_camera(2.0))
    entries = ray_box_entries(origins, dirs, (0, 0, 1.0), (1.0, 1.0, 0.5), np.eye(3))
    np.testing.assert_allclose(entries, [[0, 0, 1.5], [0.25, 0, 1.5]], atol=1e-12)


def test_box_entry_front_face_height_from_pixel_row():
    # Forward camera at (0, -2, 1); box front face y = -0.5 is 1.5 m ahead. Pixel row v gives
    # direction (0, 1, -(v - 360)/360), so the entry height is 1 - 1.5 (v - 360) / 360.
    origins, dirs = pixel_rays(np.array([[360.0, 288.0], [360.0, 504.0], [360.0, 0.0]]), K, forward_camera())
    entries = ray_box_entries(origins, dirs, (0, 0, 1.0), (0.5, 0.5, 0.5), np.eye(3))
    np.testing.assert_allclose(entries[0], [0, -0.5, 1.3], atol=1e-12)
    # v = 504 would reach z = 0.4 at the front plane, below the box (z >= 0.5): it misses.
    assert np.isnan(entries[1]).all()
    # v = 0 climbs 1.5 m: above the box top, a miss as well.
    assert np.isnan(entries[2]).all()


def test_box_entry_rotated_box():
    # A 2 x 1 x 1 box turned 90 deg about z spans x in [-0.5, 0.5], y in [-1, 1].
    c, s = 0.0, 1.0
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    o = np.array([[5.0, 0.0, 0.0], [0.0, -5.0, 0.0], [5.0, 0.8, 0.0]])
    d = np.array([[-1.0, 0, 0], [0, 1.0, 0], [-1.0, 0, 0]])
    entries = ray_box_entries(o, d, (0, 0, 0), (1.0, 0.5, 0.5), R)
    np.testing.assert_allclose(entries, [[0.5, 0, 0], [0, -1.0, 0], [0.5, 0.8, 0]], atol=1e-12)
    # a 1 x 1 x 1 cube turned 45 deg about z: its corner on the +x axis is at x = sqrt(0.5)
    a = math.radians(45)
    R45 = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1.0]])
    entry = ray_box_entries(np.array([[5.0, 0, 0]]), np.array([[-1.0, 0, 0]]), (0, 0, 0), (0.5, 0.5, 0.5), R45)
    np.testing.assert_allclose(entry, [[math.sqrt(0.5), 0, 0]], atol=1e-12)


def test_box_entry_edge_cases():
    box = ((0, 0, 0), (1.0, 1.0, 1.0), np.eye(3))
    o = np.array(
        [
            [0.0, 0.0, 0.0],  # starts inside: enters at its origin
            [0.0, 0.0, 5.0],  # box behind the ray
            [0.5, 0.5, 5.0],  # parallel to x and y slabs, inside them
            [2.0, 0.0, 5.0],  # parallel to x slab, outside it
            [1.0, 0.0, 5.0],  # grazes the face x = 1
        ]
    )
    d = np.array([[0, 0, 1.0], [0, 0, 1.0], [0, 0, -1.0], [0, 0, -1.0], [0, 0, -1.0]])
    entries = ray_box_entries(o, d, *box)
    np.testing.assert_allclose(entries[0], [0, 0, 0])
    assert np.isnan(entries[1]).all()
    np.testing.assert_allclose(entries[2], [0.5, 0.5, 1.0])
    assert np.isnan(entries[3]).all()
    np.testing.assert_allclose(entries[4], [1.0, 0, 1.0])


@pytest.mark.parametrize("seed", range(3))
def test_box_entry_lies_on_surface_and_agrees_with_sampling(seed):
    rng = np.random.default_rng(seed)
    center, half = np.array([0.2, -0.1, 1.0]), np.array([0.4, 0.3, 0.6])
    a = rng.uniform(0, 2 * math.pi)
    R = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1.0]])
    o = rng.uniform(-3, 3, size=(200, 3)) + np.array([0, 0, 1.0])
    target = center + rng.uniform(-1, 1, size=(200, 3)) * half * 1.5
    d = target - o
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    entries = ray_box_entries(o, d, center, half, R)
    ts = np.linspace(0, 8, 4001)
    for i in range(200):
        samples = o[i] + ts[:, None] * d[i]
        local = (samples - center) @ R
        inside = (np.abs(local) <= half).all(axis=1)
        if np.isnan(entries[i, 0]):
            # a miss: no sample is clearly inside (shrunk box, robust to grazing rays)
            assert not (np.abs(local) <= half * 0.999).all(axis=1).any()
            continue
        t_entry = np.dot(entries[i] - o[i], d[i])
        first = ts[np.argmax(inside)]
        assert inside.any() and abs(first - t_entry) <= 8 / 4000 + 1e-9


def test_points_in_concave_polygon():
    L = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2.0]])
    pts = np.array([[0.5, 0.5], [1.5, 0.5], [0.5, 1.5], [1.5, 1.5], [-0.1, 0.5], [np.nan, np.nan]])
    assert points_in_polygon(pts, L).tolist() == [True, True, True, False, False, False]
