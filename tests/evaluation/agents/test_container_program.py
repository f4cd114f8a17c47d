"""The scripted writer's container-placement program (evaluation/agents/programs/container.py).

Its perception helpers are pure functions of points and rays, tested on hand-built shelves with expected
values worked out here; its point cloud is checked against the API's own pixel_to_point on a real scene;
and the program itself runs through the real sandbox with the oracle pointer on held-out episodes where
the reference program places the object (a front approach to a high layer, a side-on one to a low layer).
"""

from __future__ import annotations

import numpy as np
import pytest

from bspatial.evaluation.agents.programs import container
from bspatial.evaluation.agents.writers import FAMILY_PROGRAMS, reference_program

pytestmark = [pytest.mark.sim]


def _shelf_points(floors, face_x=1.0, depth=0.2, top=None):
    """Points a camera could see of an open shelf: each floor's top (a grid from the face inwards) and
    the boards' front faces (vertical, at the face)."""
    xs, ys = np.meshgrid(np.linspace(face_x, face_x + depth, 12), np.linspace(-0.05, 0.05, 6))
    parts = [np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, z)]) for z in floors]
    for z in floors:                                  # the board's front, 3 cm tall, edge-on to a floor search
        zs, ys2 = np.meshgrid(np.linspace(z - 0.03, z, 8), np.linspace(-0.05, 0.05, 6))
        parts.append(np.column_stack([np.full(zs.size, face_x), ys2.ravel(), zs.ravel()]))
    return np.vstack(parts)


def test_shelf_floors_are_the_flat_surfaces_whose_fronts_line_up():
    floors = [0.10, 0.37, 0.64]
    points = _shelf_points(floors)
    # A flat surface elsewhere (a counter 0.5 m nearer) is not one of the container's floors.
    xs, ys = np.meshgrid(np.linspace(0.55, 0.75, 12), np.linspace(-0.05, 0.05, 6))
    counter = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, 0.9)])
    room_floor = np.column_stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)])
    heights, fronts = container.shelf_floors(np.vstack([points, counter, room_floor, [[np.nan] * 3]]))
    assert heights == pytest.approx(floors, abs=1e-9)
    assert fronts == pytest.approx([1.0, 1.0, 1.0], abs=1e-9)
    assert container.shelf_floors(np.empty((0, 3))) == ([], [])


def test_layer_height_counts_evenly_spaced_floors_from_the_bottom():
    # Fridge: floors 0.10 + k * 0.27; the head sees only 0.37..0.91 (a hand hides the base, layer 6 is
    # above the camera). Layer 1 is 0.37 - 0.27 = 0.10 (one more pitch down would be below the room floor).
    assert container.layer_height([0.37, 0.64, 0.91], 1) == pytest.approx((0.10, 0.27))
    assert container.layer_height([0.37, 0.64, 0.91], 6) == pytest.approx((0.10 + 5 * 0.27, 0.27))
    # Cabinet: base 0.05, pitch 0.166, and its top 0.02 above the next pitch (0.88 + 0.02 = 0.90).
    cabinet = [0.05, 0.216, 0.382, 0.548, 0.714, 0.90]
    assert container.layer_height(cabinet, 2) == pytest.approx((0.216, 0.166))
    assert container.layer_height(cabinet, 5) == pytest.approx((0.714, 0.166))
    # A hidden middle floor leaves a double gap: still one pitch of 0.27, layer 2 computed as 0.10 + 0.27.
    assert container.layer_height([0.10, 0.64, 0.91], 2) == pytest.approx((0.37, 0.27))
    with pytest.raises(ValueError, match="two shelf floors"):
        container.layer_height([0.5], 1)


def test_ray_at_height():
    ray = {"origin": [0.0, 0.0, 1.5], "direction": [0.6, 0.0, -0.8]}
    assert container.ray_at_height(ray, 0.7) == pytest.approx([0.6, 0.0, 0.7])    # t = 0.8 / 0.8 = 1
    assert container.ray_at_height(ray, 1.9) is None                             # behind the camera
    assert container.ray_at_height({"origin": [0, 0, 1], "direction": [1, 0, 0]}, 0.5) is None


def test_object_extent_and_layer_of():
    # A 14 x 14 cm object, top at 0.96, on a counter at 0.90 (the counter seen around it).
    xs, ys = np.meshgrid(np.linspace(0.70, 0.84, 15), np.linspace(0.30, 0.44, 15))
    top = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, 0.96)])
    ring_x, ring_y = np.meshgrid(np.linspace(0.4, 1.2, 41), np.linspace(0.0, 0.8, 41))
    counter = np.column_stack([ring_x.ravel(), ring_y.ravel(), np.full(ring_x.size, 0.90)])
    extent = container.object_extent(np.vstack([top, counter]), [0.77, 0.37, 0.96])
    assert extent == pytest.approx((0.70, 0.84, 0.37, 0.96, 0.90))
    # Points above max_z (a hand resting on the object) are left out.
    hand = top + [0.0, 0.0, 0.10]
    assert container.object_extent(np.vstack([top, hand, counter]), [0.77, 0.37, 0.96], 0.97) == pytest.approx(extent)
    assert container.layer_of("Place the bowl in the layer 3 of the bottom cabinet.") == 3
    assert container.layer_of("Place the bowl in the cabinet.") is None


def test_rotation_matches_a_hand_worked_quaternion():
    half = np.sqrt(0.5)                       # 90 degrees about z: x -> y, y -> -x
    assert container.rotation([half, 0.0, 0.0, half]) @ np.array([1.0, 0.0, 0.0]) == pytest.approx([0, 1, 0])
    assert container.rotation([1.0, 0.0, 0.0, 0.0]) == pytest.approx(np.eye(3))


def test_cloud_agrees_with_pixel_to_point(sim, instance):
    from bspatial.evaluation.agents.api import AgentAPI
    from bspatial.tasks.episode import EpisodeRun

    api = AgentAPI(EpisodeRun(sim, instance, max_steps=30, load=True))
    points = container.cloud(api, "head")
    depth = api.get_depth("head")
    checked = 0
    for v in range(10, depth.shape[0] - 10, 23):
        for u in range(10, depth.shape[1] - 10, 23):
            patch = depth[v - 2:v + 3, u - 2:u + 3].astype(float)
            # Over a plane (a wall, the floor) 1 / depth is affine in the pixel, so the 5x5 patch's median
            # depth is the centre pixel's and pixel_to_point must give the cloud's point; elsewhere it need not.
            rows, cols = np.mgrid[-2:3, -2:3]
            design = np.column_stack([np.ones(25), rows.ravel(), cols.ravel()])
            if patch.min() <= 0:
                continue
            inverse = 1.0 / patch.ravel()
            residual = inverse - design @ np.linalg.lstsq(design, inverse, rcond=None)[0]
            if np.abs(residual).max() > 1e-5:
                continue
            assert points[v, u] == pytest.approx(api.pixel_to_point(u + 0.5, v + 0.5, "head"), abs=1e-4)
            checked += 1
    assert checked >= 5


def test_the_scripted_writer_uses_it_for_container_placement():
    assert FAMILY_PROGRAMS["container_placement"] == "container"
    assert "def run(api):" in reference_program("place_bowl_in_cabinet")
    assert reference_program("place_tupperware_in_fridge") == reference_program("place_bowl_in_cabinet")


@pytest.mark.parametrize("task, index", [("place_tupperware_in_fridge", 0),   # layer 6: front, wrist camera
                                         ("place_bowl_in_cabinet", 0)])       # layer 2: side-on, torso bent
def test_the_program_places_the_object_in_the_instructed_layer(task, index):
    from bspatial.evaluation.agents.records import run_agent, verdict_text
    from bspatial.evaluation.rollout.plan import plan_episodes
    from bspatial.sim.mujoco_backend import MujocoBackend

    episode = plan_episodes("held_out", [task])[index]
    sim = MujocoBackend()
    try:
        record, result, _ = run_agent(sim, episode, reference_program(task), "agent:scripted+oracle",
                                      pointer="oracle", trace_split="held_out")
    finally:
        sim.close()
    text = verdict_text(record)
    assert result is not None and result.program.outcome != "raised", (result.program.traceback if result else text)
    assert record["outcome"] == "correct", text
    assert record["detail"] == "in_instructed_compartment"
