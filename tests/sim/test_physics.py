"""Contacts, assisted grasping and the sim_error status."""

import numpy as np
import pytest

from bspatial.catalog.schema import ACTION_SLICES
from bspatial.world.spec import SceneSpec, box_object

pytestmark = [pytest.mark.sim]


def test_resting_objects_report_positive_normal_force(table_sim):
    contacts = [c for c in table_sim.contacts() if {c.body_a, c.body_b} == {"cereal_0", "table_0"}]
    assert contacts
    assert all(c.normal_force > 0 for c in contacts)
    total = sum(c.normal_force for c in contacts)
    assert total == pytest.approx(0.3 * 9.81, rel=0.05)    # supports the box's weight


def test_object_pose_and_bbox(table_sim):
    box = table_sim.object_bbox("cereal_1")
    assert np.allclose(sorted(box.extents), sorted((0.06, 0.18, 0.26)), atol=1e-6)
    assert box.aabb_min[2] == pytest.approx(0.75, abs=2e-3)
    pose = table_sim.object_pose("cereal_1")
    assert np.allclose(pose.position, box.center)
    with pytest.raises(ValueError, match="object name must be one of .*got 'ghost'"):
        table_sim.object_pose("ghost")


@pytest.fixture()
def grasp_sim():
    """A 5 cm cube on a stand, centred between the open left fingers of the home pose."""
    from bspatial.sim.mujoco_backend import MujocoBackend

    probe = MujocoBackend()
    probe.load(SceneSpec("probe"))
    eef = probe.robot_state().eef_pos["left"]
    probe.close()
    s = 0.05
    stand_h = eef[2] - s / 2
    scene = SceneSpec("grasp", objects=(
        box_object("stand", "shelf", (0.1, 0.1, stand_h), (eef[0], eef[1], stand_h / 2), static=True),
        box_object("cube", "box_of_cereal", (s, s, s), eef)))
    sim = MujocoBackend()
    sim.load(scene)
    yield sim
    sim.close()


def test_assisted_grasp_welds_follows_and_releases(grasp_sim):
    sim = grasp_sim
    action = sim.hold_action()
    action[ACTION_SLICES["left_gripper"]] = -1.0
    for _ in range(20):
        assert sim.step(action).status == "ok"
    assert sim.robot_state().grasped == {"left": "cube", "right": None}
    assert sim.robot_state().proprio[80] == 1.0
    offset = sim.object_pose("cube").position - sim.robot_state().eef_pos["left"]
    action[ACTION_SLICES["left_arm"].start] -= 0.6           # lift the arm at the shoulder
    for _ in range(30):
        sim.step(action)
    lifted = sim.object_pose("cube").position
    assert lifted[2] > 1.0
    assert np.linalg.norm(lifted - sim.robot_state().eef_pos["left"] - offset) < 5e-3
    action[ACTION_SLICES["left_gripper"]] = 1.0
    for _ in range(30):
        sim.step(action)
    assert sim.robot_state().grasped["left"] is None
    assert sim.object_pose("cube").position[2] < 0.1            # fell to the floor


def test_closed_gripper_without_contact_grasps_nothing(table_sim):
    action = table_sim.hold_action()
    action[ACTION_SLICES["right_gripper"]] = -1.0
    for _ in range(10):
        table_sim.step(action)
    assert table_sim.robot_state().grasped["right"] is None
    action[ACTION_SLICES["right_gripper"]] = 1.0
    for _ in range(10):
        table_sim.step(action)


def test_nan_action_gives_sim_error_not_exception(grasp_sim):
    action = grasp_sim.hold_action()
    action[3] = np.nan
    result = grasp_sim.step(action)
    assert result.status == "sim_error" and "indices [3]" in result.message
    assert grasp_sim.step(grasp_sim.hold_action()).status == "sim_error"     # frozen until reset
    grasp_sim.reset()
    assert grasp_sim.step(grasp_sim.hold_action()).status == "ok"


def test_nan_state_and_explosion_give_sim_error(grasp_sim):
    grasp_sim.data.qvel[-1] = np.nan
    assert grasp_sim.step(grasp_sim.hold_action()).status == "sim_error"
    grasp_sim.reset()
    grasp_sim.data.qvel[-4] = 1e4                   # the cube spinning absurdly fast
    result = grasp_sim.step(grasp_sim.hold_action())
    assert result.status == "sim_error"


def test_backend_satisfies_protocol_and_lazy_exports():
    import bspatial.sim as sim_pkg
    from bspatial.sim.backend import SimBackend

    backend = sim_pkg.MujocoBackend()
    assert isinstance(backend, SimBackend)
    with pytest.raises(RuntimeError, match="no scene loaded"):
        backend.step(np.zeros(23))
    with pytest.raises(ValueError, match="scene must be a SceneSpec, got dict"):
        backend.load({})
