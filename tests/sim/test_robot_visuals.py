"""The R1Pro-like visual shell (issue 15 item 3): visual only, physics unchanged, visible in the head view."""

import mujoco
import numpy as np
import pytest

from bspatial.catalog.schema import ACTION_SLICES, ARMS
from bspatial.sim import robot as robot_mod
from bspatial.world.spec import RobotSpawn, SceneSpec, box_object, table_object


from bspatial.sim.mujoco_backend import MujocoBackend  # noqa: E402

pytestmark = [pytest.mark.sim]


def _robot_geoms(model: mujoco.MjModel) -> list[int]:
    bodies = {b for b in range(model.nbody) if model.body(b).name.startswith(robot_mod.PREFIX)}
    return [g for g in range(model.ngeom) if model.geom_bodyid[g] in bodies]


class BareRobotBackend(MujocoBackend):
    """The real backend with the robot's visual shell deleted from the spec before compiling."""

    def _build_spec(self, scene: SceneSpec) -> mujoco.MjSpec:
        spec = super()._build_spec(scene)
        for geom in [g for g in spec.geoms if g.group == robot_mod.VISUAL_GROUP]:
            spec.delete(geom)
        return spec


SCENE = SceneSpec("visuals", objects=(
    table_object("table_0", "breakfast_table", (0.8, 1.2), 0.75, (0.9, 0.0)),
    box_object("cereal_0", "box_of_cereal", (0.06, 0.18, 0.26), (0.75, -0.3, 0.88), mass=0.3)), robot=RobotSpawn())


def _trajectory(backend_cls) -> tuple[np.ndarray, int]:
    """A scripted motion: drive, swing torso and arms, press the right hand into the table and close it."""
    sim = backend_cls()
    sim.load(SCENE)
    action = sim.hold_action()
    out, contacts = [], 0
    for step in range(60):
        action[ACTION_SLICES["base"]] = (0.15, 0.05, 0.2) if step < 20 else (0.0, 0.0, 0.0)
        action[ACTION_SLICES["torso"]] = (0.15 * np.sin(step / 8), 0.0, 0.0, 0.3 * np.sin(step / 12))
        action[ACTION_SLICES["left_arm"]] = np.add(robot_mod.HOME_ARM, 0.3 * np.sin(step / 6))
        action[ACTION_SLICES["right_arm"]] = np.add(robot_mod.HOME_ARM, (-0.5, 0, 0, 0.9, 0, 0, 0))
        action[ACTION_SLICES["right_gripper"]] = -1.0 if step > 30 else 1.0
        assert sim.step(action).status == "ok"
        contacts += len(sim.contacts())
        out.append(sim.data.qpos.copy())
    sim.close()
    return np.array(out), contacts


def test_visual_geoms_have_no_contacts_and_no_mass():
    dressed, bare = MujocoBackend(), BareRobotBackend()
    dressed.load(SCENE)
    bare.load(SCENE)
    model = dressed.model
    visual = [g for g in _robot_geoms(model) if model.geom_group[g] == robot_mod.VISUAL_GROUP]
    owners = {model.body(model.geom_bodyid[g]).name.removeprefix(robot_mod.PREFIX) for g in visual}
    # Every part of R1Pro is dressed: base, the four torso links, all 7 links of both arms, hands, fingers, head.
    expected = {"base", "head", *(f"torso_{i}" for i in range(1, 5)),
                *(f"{s}_arm_link_{i}" for s in ARMS for i in range(1, 8)),
                *(f"{s}_hand" for s in ARMS), *(f"{s}_finger_{x}" for s in ARMS for x in "ab")}
    assert expected <= owners, sorted(expected - owners)
    assert all(model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0 for g in visual)
    assert model.nbody == bare.model.nbody and np.array_equal(model.body_mass, bare.model.body_mass)
    assert np.array_equal(model.body_inertia, bare.model.body_inertia)
    assert len(visual) == model.ngeom - bare.model.ngeom
    dressed.close()
    bare.close()


def test_physics_with_visuals_equals_physics_without():
    dressed, contacts = _trajectory(MujocoBackend)
    bare, bare_contacts = _trajectory(BareRobotBackend)
    assert contacts > 0 and contacts == bare_contacts   # the motion touches the block and the floor
    assert np.abs(dressed[-1] - dressed[0]).max() > 0.1  # and it moves
    np.testing.assert_allclose(dressed, bare, rtol=0, atol=1e-9)


@pytest.fixture(scope="module")
def head_frame():
    sim = MujocoBackend()
    sim.load(SceneSpec("head", objects=(table_object("table_0", "breakfast_table", (0.8, 1.2), 0.75, (1.0, 0.0)),),
                       robot=RobotSpawn()))
    frame = sim.render("head", width=224, height=224)
    wrist = sim.render("left_wrist", width=224, height=224)
    sim.close()
    return frame, wrist


def _robot_mask(frame) -> np.ndarray:
    ids = [i for i, name in frame.id_to_name.items() if name == "robot"]
    return np.isin(frame.segmentation, ids)


def test_head_camera_sees_both_arms_low_in_the_frame(head_frame):
    frame, _ = head_frame
    mask = _robot_mask(frame)
    h, w = mask.shape
    # At home the arms hang in front of the shoulders: robot pixels in the lower half, on both the left and the
    # right third of the image, and none in the upper third (the shell does not block the view ahead).
    lower = mask[h // 2:]
    assert lower[:, : w // 3].mean() > 0.02 and lower[:, 2 * w // 3:].mean() > 0.02
    assert mask[: h // 3].sum() == 0
    assert mask.mean() < 0.25


def test_wrist_camera_sees_its_fingers_and_the_scene(head_frame):
    _, wrist = head_frame
    mask = _robot_mask(wrist)
    assert 0.01 < mask.mean() < 0.5           # the fingers are in view, and the view is not blocked by a shell
