"""The agent API's geometry against MuJoCo's own camera data (an independent projection) and scene geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bspatial.evaluation.agents.api import AgentAPI
from bspatial.tasks.episode import EpisodeRun

from .conftest import mujoco_project

pytestmark = [pytest.mark.sim]


def _to_base(world, base_pose):
    x, y, yaw = base_pose
    d = np.asarray(world, float) - (x, y, 0.0)
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1], d[2]])


@pytest.fixture()
def api(sim, instance):
    run = EpisodeRun(sim, instance, max_steps=30)
    # A base away from the world origin and turned, so the base frame differs from the world frame.
    sim.set_base_pose(0.05, -0.04, 0.15)
    return AgentAPI(run)


def test_pixel_to_point_finds_the_plate_top(sim, instance, api):
    """The top-centre of each plate, projected with MuJoCo's camera, comes back from pixel_to_point."""
    base = sim.robot_state().base_pose
    for name in instance.candidates:
        box = sim.object_bbox(name)
        top = np.array([box.center[0], box.center[1], box.aabb_max[2]])
        u, v, _, _, _ = mujoco_project(sim, "head", top, 224, 224)
        point = api.pixel_to_point(u, v, "head")
        assert point is not None
        # The camera sees the plate's visual mesh, whose well lies below its rim (the bbox top), so along the
        # ray the seen point sits a little beyond the rim's plane; it must lie on the plate: inside its box
        # (5 mm slack for the 5x5 median) and near the rim's top point.
        lo, hi = _to_base(box.aabb_min, base), _to_base(box.aabb_max, base)
        lo, hi = np.minimum(lo, hi) - 0.005, np.maximum(lo, hi) + 0.005
        assert np.all(lo <= point) and np.all(np.array(point) <= hi), (name, point, lo, hi)
        assert np.linalg.norm(np.array(point) - _to_base(top, base)) < 0.03, name


def test_round_trip_and_independent_projection(sim, api):
    base = sim.robot_state().base_pose
    for u, v in [(112.0, 150.0), (40.5, 180.25), (200.0, 120.0)]:
        point = api.pixel_to_point(u, v, "head")
        assert point is not None
        back = api.point_to_pixel(point, "head")
        assert np.allclose(back, (u, v), atol=1e-6)
        # the same point in world coordinates, projected by MuJoCo's camera
        x, y, yaw = base
        c, s = math.cos(yaw), math.sin(yaw)
        world = (x + c * point[0] - s * point[1], y + s * point[0] + c * point[1], point[2])
        mu, mv, depth, _, _ = mujoco_project(sim, "head", world, 224, 224)
        assert np.allclose((mu, mv), (u, v), atol=1e-6)
        assert depth > 0


def test_point_behind_the_camera_has_no_pixel(sim, api):
    _, _, _, pos, mat = mujoco_project(sim, "head", (1.0, 0.0, 1.0), 224, 224)
    behind = pos + 0.5 * mat[:, 2]            # MuJoCo's camera +z points backwards
    assert api.point_to_pixel(_to_base(behind, sim.robot_state().base_pose), "head") is None
    ahead = pos - 0.5 * mat[:, 2]
    assert np.allclose(api.point_to_pixel(_to_base(ahead, sim.robot_state().base_pose), "head"), (112, 112), atol=1e-6)


def test_pixel_to_ray_passes_through_the_seen_point(sim, api):
    base = sim.robot_state().base_pose
    _, _, _, pos, _ = mujoco_project(sim, "head", (1.0, 0.0, 1.0), 224, 224)
    ray = api.pixel_to_ray(60.0, 170.0, "head")
    origin, direction = np.array(ray["origin"]), np.array(ray["direction"])
    assert np.allclose(origin, _to_base(pos, base), atol=1e-9)
    assert np.isclose(np.linalg.norm(direction), 1.0)
    point = np.array(api.pixel_to_point(60.0, 170.0, "head"))
    offset = point - origin
    assert np.linalg.norm(np.cross(offset / np.linalg.norm(offset), direction)) < 1e-9


def test_depth_is_along_the_optical_axis(sim, instance, api):
    box = sim.object_bbox(instance.target)
    top = np.array([box.center[0], box.center[1], box.aabb_max[2]])
    u, v, depth, _, _ = mujoco_project(sim, "head", top, 224, 224)
    image_depth = api.get_depth("head")
    assert image_depth.shape == api.get_image("head").shape[:2]
    assert abs(float(image_depth[int(v), int(u)]) - depth) < 0.015


@pytest.mark.parametrize("u, v", [(-1.0, 10.0), (224.0, 10.0), (10.0, float("nan"))])
def test_pixels_outside_the_image_are_refused(api, u, v):
    with pytest.raises(ValueError, match=r"u|v"):
        api.pixel_to_point(u, v, "head")


def test_unknown_camera_is_refused(api):
    with pytest.raises(ValueError, match="camera must be one of .*'tripod'"):
        api.get_image("tripod")
