"""The 23-dim action layout, proprioception layout and DLS IK of the R1Pro-like robot."""

import re

import numpy as np
import pytest

from bspatial.catalog.schema import ACTION_DIM, ACTION_SLICES
from bspatial.world.spec import RobotSpawn, SceneSpec

pytestmark = [pytest.mark.sim]


@pytest.fixture()
def sim():
    from bspatial.sim.mujoco_backend import MujocoBackend

    backend = MujocoBackend()
    backend.load(SceneSpec("empty", robot=RobotSpawn(x=0.5, y=-0.3, yaw=0.3)))
    yield backend
    backend.close()


def _groups(sim) -> dict[str, np.ndarray]:
    r, d = sim.robot, sim.data
    return {"base": d.qpos[r.qpos(r.base_joints)].copy(), "torso": d.qpos[r.qpos(r.torso_joints)].copy(),
            "left_arm": d.qpos[r.qpos(r.arm_joints["left"])].copy(),
            "left_gripper": d.qpos[r.qpos(r.finger_joints["left"])].copy(),
            "right_arm": d.qpos[r.qpos(r.arm_joints["right"])].copy(),
            "right_gripper": d.qpos[r.qpos(r.finger_joints["right"])].copy()}


def test_action_slices_cover_23_dims_in_design_order():
    covered = np.concatenate([np.arange(ACTION_DIM)[s] for s in ACTION_SLICES.values()])
    assert covered.tolist() == list(range(23))
    assert [ACTION_SLICES[k].start for k in ("base", "torso", "left_arm", "left_gripper", "right_arm",
                                             "right_gripper")] == [0, 3, 7, 14, 15, 22]


@pytest.mark.parametrize("block", list(ACTION_SLICES))
def test_each_action_block_moves_only_its_joints(sim, block):
    before = _groups(sim)
    action = sim.hold_action()
    action[ACTION_SLICES[block]] += {"base": 0.3, "left_gripper": -1.5, "right_gripper": -1.5}.get(block, 0.25)
    for _ in range(15):
        assert sim.step(action).status == "ok"
    action[ACTION_SLICES["base"]] = 0.0          # stop the base, let inertial coupling transients settle
    for _ in range(15):
        assert sim.step(action).status == "ok"
    after = _groups(sim)
    for name in before:
        moved = np.max(np.abs(after[name] - before[name]))
        if name == block:
            assert moved > 0.02, (block, moved)
        else:
            assert moved < 2e-3, (block, name, moved)


def test_base_velocity_is_in_robot_frame(sim):
    action = sim.hold_action()
    action[0] = 0.5                       # forward, robot frame; the robot faces yaw = 0.3
    for _ in range(30):
        sim.step(action)
    state = sim.robot_state()
    heading = np.array([np.cos(0.3), np.sin(0.3)])
    displacement = state.base_pose[:2] - [0.5, -0.3]
    assert np.dot(displacement, heading) > 0.3
    assert abs(heading[0] * displacement[1] - heading[1] * displacement[0]) < 0.01
    assert state.base_velocity[0] == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize("side,offset", [("left", (0.08, 0.05, 0.05)), ("right", (0.05, -0.05, -0.1)),
                                         ("left", (-0.1, 0.1, 0.1))])
def test_ik_reaches_reachable_targets_within_mm(sim, side, offset):
    state = sim.robot_state()
    target = state.eef_pos[side] + offset
    result = sim.solve_ik(side, target, state.eef_quat[side])
    assert result.converged
    action = sim.hold_action()
    action[ACTION_SLICES[f"{side}_arm"]] = result.qpos
    for _ in range(45):
        sim.step(action)
    reached = sim.robot_state()
    assert np.linalg.norm(reached.eef_pos[side] - target) < 3e-3
    # orientation held: the angle between the quaternions is small
    dot = abs(float(np.dot(reached.eef_quat[side], state.eef_quat[side])))
    assert 2 * np.arccos(min(1.0, dot)) < 0.02


def test_ik_with_torso_and_bad_side(sim):
    state = sim.robot_state()
    result = sim.solve_ik("right", state.eef_pos["right"] + (0.25, 0.0, -0.3), use_torso=True)
    assert result.converged and result.qpos.shape == (11,)
    with pytest.raises(ValueError, match="side must be one of .*got 'middle'"):
        sim.solve_ik("middle", state.eef_pos["right"])


def test_proprio_docstring_table_matches_layout(sim):
    from bspatial.catalog.schema import PROPRIO_SLICES, STATE_DIM
    from bspatial.sim import robot

    rows = re.findall(r"^(\d+):(\d+)\s+(\w+)", robot.__doc__, flags=re.M)
    assert {name: slice(int(a), int(b)) for a, b, name in rows} == PROPRIO_SLICES
    proprio = sim.robot_state().proprio
    assert proprio.shape == (STATE_DIM,) == (84,)
    P = PROPRIO_SLICES
    np.testing.assert_allclose(proprio[P["base_pose"]], [0.5, -0.3, 0.3], atol=1e-6)
    np.testing.assert_allclose(proprio[P["left_gripper"]], [1.0], atol=1e-6)


@pytest.mark.parametrize("bad", [np.zeros(22), np.zeros((23, 1)), "fast"])
def test_wrong_action_shape_raises_naming_field(sim, bad):
    with pytest.raises(ValueError, match=r"action must"):
        sim.step(bad)
