"""The conformance checks every :class:`~bspatial.sim.backend.SimBackend` must pass.

Tasks, experts, suite builders and rollouts call a backend only through the protocol, so a backend
that passes these checks can run them: the MuJoCo default does (``tests/sim/test_conformance.py``),
and an OmniGibson backend would run the same list against its own factory::

    from bspatial.sim.conformance import CHECKS, run_checks
    run_checks(lambda: MyBackend())          # raises AssertionError naming the first failed check

Each check takes a backend that has just loaded :func:`conformance_scene` and asserts one part of the
contract (shapes, units, camera conventions, kinematic queries, errors for bad input). The checks
use only the protocol and the scene's own numbers, never a backend's internals.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from bspatial.catalog.schema import ACTION_DIM, ACTION_SLICES, ARMS, CAMERAS, STATE_DIM
from bspatial.sim.backend import ROBOT_LINKS, BoundingBox, CameraFrame, Contact, ObjectPose, SimBackend
from bspatial.world.spec import CameraSpec, RobotSpawn, SceneSpec, box_object, table_object

TABLE_HEIGHT = 0.75
SPAWN = RobotSpawn(x=0.2, y=-0.1, yaw=0.3)
FREE_BOX = "cereal_0"
STATIC_BOX = "block_0"
TOP_CAMERA = "top"
HOLD_STEPS = 30   # steps of holding still before each conformance measurement, so free bodies come to rest


def conformance_scene() -> SceneSpec:
    """A table in front of the robot, a static block and a free box on it, and a top-down scene camera."""
    return SceneSpec(
        name="conformance",
        objects=(
            table_object("table_0", "breakfast_table", (0.8, 1.2), TABLE_HEIGHT, (1.1, 0.0)),
            box_object(STATIC_BOX, "shelf", (0.3, 0.2, 0.2), (1.2, -0.3, TABLE_HEIGHT + 0.1), static=True,
                       rgba=(0.2, 0.4, 0.8, 1)),
            box_object(FREE_BOX, "box_of_cereal", (0.06, 0.18, 0.26), (0.95, 0.25, TABLE_HEIGHT + 0.13),
                       rgba=(0.9, 0.7, 0.1, 1), mass=0.3),
        ),
        cameras=(CameraSpec(TOP_CAMERA, (1.1, 0.0, 3.0), (1.1, 0.0, 0.0)),),
        robot=SPAWN,
    )


def _close(a, b, tol: float, what: str) -> None:
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape and np.allclose(a, b, atol=tol), f"{what}: {a.round(4).tolist()} != {b.round(4).tolist()}"


def _refuses(call: Callable, *args, naming: str) -> None:
    """``call(*args)`` must raise ValueError with ``naming`` (the bad field or value) in its message."""
    try:
        call(*args)
    except ValueError as error:
        assert naming in str(error), error
    else:
        raise AssertionError(f"{getattr(call, '__name__', call)}{args!r} must raise ValueError naming {naming!r}")


def check_protocol(backend: SimBackend) -> None:
    assert isinstance(backend, SimBackend), f"{type(backend).__name__} lacks SimBackend methods"
    assert tuple(backend.cameras[:len(CAMERAS)]) == CAMERAS, f"robot cameras first: {backend.cameras}"
    assert TOP_CAMERA in backend.cameras, f"scene cameras follow the robot's: {backend.cameras}"


def check_object_lists(backend: SimBackend) -> None:
    assert backend.object_names() == ("table_0", STATIC_BOX, FREE_BOX), backend.object_names()
    assert backend.movable_objects() == (FREE_BOX,), backend.movable_objects()


def check_spawn_and_state(backend: SimBackend) -> None:
    state = backend.robot_state()
    _close(state.base_pose, (SPAWN.x, SPAWN.y, SPAWN.yaw), 1e-6, "base pose at spawn")
    assert state.proprio.shape == (STATE_DIM,) and state.proprio.dtype == np.float32, state.proprio.shape
    assert state.torso_qpos.shape == (4,) and state.left_arm_qpos.shape == (7,) == state.right_arm_qpos.shape
    for side in ARMS:
        assert -1.0 <= state.gripper[side] <= 1.0 and state.grasped[side] is None
        assert state.eef_pos[side].shape == (3,) and state.eef_quat[side].shape == (4,)


def check_hold_keeps_still(backend: SimBackend) -> None:
    hold = backend.hold_action()
    assert hold.shape == (ACTION_DIM,), hold.shape
    assert np.all(hold[ACTION_SLICES["base"]] == 0), "holding commands zero base velocity"
    start = backend.robot_state()
    for _ in range(HOLD_STEPS):
        result = backend.step(hold)
        assert result.status == "ok", result.message
    end = backend.robot_state()
    _close(end.base_pose, start.base_pose, 0.01, "base after holding")
    _close(end.left_arm_qpos, start.left_arm_qpos, 0.02, "left arm after holding")


def check_bad_actions(backend: SimBackend) -> None:
    for bad in (np.zeros(ACTION_DIM - 1), np.zeros((2, ACTION_DIM)), "stop"):
        _refuses(backend.step, bad, naming="action")
    nan = backend.hold_action()
    nan[0] = np.nan
    assert backend.step(nan).status == "sim_error", "a NaN action must yield status sim_error"
    backend.reset()
    assert backend.step(backend.hold_action()).status == "ok", "reset clears sim_error"


def check_reset_restores_the_spawn(backend: SimBackend) -> None:
    box0 = backend.object_pose(FREE_BOX).position
    drive = backend.hold_action()
    drive[ACTION_SLICES["base"]] = (0.3, 0.0, 0.2)
    for _ in range(HOLD_STEPS):
        backend.step(drive)
    moved = backend.robot_state().base_pose
    assert np.linalg.norm(moved[:2] - (SPAWN.x, SPAWN.y)) > 0.05, f"the base did not move: {moved}"
    backend.reset()
    _close(backend.robot_state().base_pose, (SPAWN.x, SPAWN.y, SPAWN.yaw), 1e-6, "base after reset")
    _close(backend.object_pose(FREE_BOX).position, box0, 1e-6, "free box after reset")


def check_poses_and_boxes(backend: SimBackend) -> None:
    pose = backend.object_pose(STATIC_BOX)
    assert isinstance(pose, ObjectPose)
    _close(pose.position, (1.2, -0.3, TABLE_HEIGHT + 0.1), 1e-6, "static box position")
    _close(pose.rotation @ pose.rotation.T, np.eye(3), 1e-9, "rotation is orthonormal")
    box = backend.object_bbox(STATIC_BOX)
    assert isinstance(box, BoundingBox)
    _close(box.half_extents * 2, (0.3, 0.2, 0.2), 1e-6, "static box extents")
    assert np.all(box.aabb_min <= box.center) and np.all(box.center <= box.aabb_max)
    for query in (backend.object_pose, backend.object_bbox):
        _refuses(query, "unicorn_0", naming="unicorn_0")


def check_camera_conventions(backend: SimBackend) -> None:
    # The top camera looks straight down at the table: the static block's top face centre must project,
    # through K and T_world_cam (OpenCV axes), onto a pixel segmented as the block, at the face's depth.
    frame = backend.render(TOP_CAMERA, width=96, height=64)
    assert isinstance(frame, CameraFrame)
    assert frame.rgb.shape == (64, 96, 3) and frame.rgb.dtype == np.uint8, frame.rgb.shape
    assert frame.depth.shape == (64, 96) and frame.segmentation.shape == (64, 96)
    K = np.asarray(frame.K, float)
    assert K[0, 0] == K[1, 1] and (K[0, 2], K[1, 2]) == (48.0, 32.0), K.tolist()
    T = np.asarray(frame.T_world_cam, float)
    _close(T[:3, :3] @ T[:3, :3].T, np.eye(3), 1e-9, "camera rotation is orthonormal")
    _close(T[:3, 3], (1.1, 0.0, 3.0), 1e-6, "camera position")
    top = np.array([1.2, -0.3, TABLE_HEIGHT + 0.2])
    cam = T[:3, :3].T @ (top - T[:3, 3])
    u, v = (K @ cam)[:2] / cam[2]
    row, col = int(v), int(u)
    assert frame.id_to_name.get(int(frame.segmentation[row, col])) == STATIC_BOX, (row, col, frame.id_to_name)
    assert abs(float(frame.depth[row, col]) - cam[2]) < 0.01, f"depth {frame.depth[row, col]} != z {cam[2]}"
    for camera in CAMERAS:
        image = backend.render(camera)
        assert image.rgb.ndim == 3 and image.rgb.shape[:2] == image.depth.shape == image.segmentation.shape


def check_set_base_pose(backend: SimBackend) -> None:
    before = backend.render("head").T_world_cam
    backend.set_base_pose(-0.5, 0.4, -1.0)
    _close(backend.robot_state().base_pose, (-0.5, 0.4, -1.0), 1e-9, "base after set_base_pose")
    after = np.asarray(backend.render("head").T_world_cam, float)
    yaw = math.atan2(after[1, 2], after[0, 2])  # the optical axis's heading
    assert abs(math.remainder(yaw + 1.0, math.tau)) < 0.05, f"head camera heading {yaw:.3f} != base yaw -1.0"
    assert not np.allclose(before, after)


def check_robot_links(backend: SimBackend) -> None:
    for link in ROBOT_LINKS:
        pose = backend.robot_link_pose(link)
        _close(pose.rotation @ pose.rotation.T, np.eye(3), 1e-9, f"{link} rotation is orthonormal")
    base = backend.robot_link_pose("base").position
    _close(base[:2], (SPAWN.x, SPAWN.y), 0.05, "base link under the spawn")
    assert backend.robot_link_pose("torso_4").position[2] > base[2], "the chest is above the base"
    _refuses(backend.robot_link_pose, "tail", naming="tail")


def check_inverse_kinematics(backend: SimBackend) -> None:
    state = backend.robot_state()
    target = state.eef_pos["right"] + (0.05, 0.0, -0.05)
    arm = backend.solve_ik("right", target)
    assert arm.qpos.shape == (7,) and arm.converged, arm
    both = backend.solve_ik("right", target, use_torso=True, seed_action=backend.hold_action())
    assert both.qpos.shape == (11,) and both.converged, both
    _close(backend.robot_state().right_arm_qpos, state.right_arm_qpos, 0.0, "IK must not move the robot")
    _refuses(backend.solve_ik, "middle", target, naming="middle")


def check_contacts(backend: SimBackend) -> None:
    hold = backend.hold_action()
    for _ in range(HOLD_STEPS):
        backend.step(hold)
    contacts = backend.contacts()
    assert all(isinstance(c, Contact) and c.normal_force >= 0 for c in contacts)
    pairs = {frozenset((c.body_a, c.body_b)) for c in contacts}
    assert frozenset((FREE_BOX, "table_0")) in pairs, f"the resting box touches the table: {sorted(map(sorted, pairs))}"


CHECKS: tuple[Callable[[SimBackend], None], ...] = (
    check_protocol, check_object_lists, check_spawn_and_state, check_hold_keeps_still, check_bad_actions,
    check_reset_restores_the_spawn, check_poses_and_boxes, check_camera_conventions, check_set_base_pose,
    check_robot_links, check_inverse_kinematics, check_contacts,
)
"""Every check, each run on a backend that has just loaded :func:`conformance_scene`."""


def run_checks(make_backend: Callable[[], SimBackend]) -> None:
    """Run :data:`CHECKS` on fresh backends from ``make_backend``; ``close`` must be safe to call twice."""
    for check in CHECKS:
        backend = make_backend()
        try:
            backend.load(conformance_scene())
            check(backend)
        except AssertionError as error:
            raise AssertionError(f"{check.__name__}: {error}") from error
        finally:
            backend.close()
            backend.close()
