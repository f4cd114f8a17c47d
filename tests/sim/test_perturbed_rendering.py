"""What the perturbation axes ask of the simulator: robot cameras moved from their mountings by a
:class:`CameraOffset`, and tinted lights (``LightSpec.colour``)."""

import dataclasses
import math

import numpy as np
import pytest

from bspatial.sim.mujoco_backend import MujocoBackend
from bspatial.world.spec import CameraOffset, LightSpec

from .conftest import make_table_scene

pytestmark = [pytest.mark.sim]


def _render(scene, camera="head"):
    with MujocoBackend() as sim:
        sim.load(scene)
        return sim.render(camera, rgb_only=True)


def _with_robot(scene, **changes):
    return dataclasses.replace(scene, robot=dataclasses.replace(scene.robot, **changes))


@pytest.mark.parametrize("camera", ["head", "left_wrist"])
def test_a_camera_offset_moves_and_turns_the_camera_by_its_values(camera):
    scene = make_table_scene()
    shift, turn = (0.02, 0.01, -0.01), 0.05   # turned about the camera's own y axis only
    base = _render(scene, camera).T_world_cam
    moved = _render(_with_robot(scene, camera_offsets=(CameraOffset(camera, shift, (0.0, turn, 0.0)),)),
                    camera).T_world_cam
    # A shift in the mounting body's frame: its length survives the body's rotation.
    assert np.linalg.norm(moved[:3, 3] - base[:3, 3]) == pytest.approx(np.linalg.norm(shift), abs=1e-9)
    # A turn about the camera's y axis turns its optical axis (OpenCV z) by the angle, about that same y axis.
    cos = float(np.clip(base[:3, 2] @ moved[:3, 2], -1, 1))
    assert math.acos(cos) == pytest.approx(turn, abs=1e-9)
    assert abs(base[:3, 1] @ moved[:3, 1]) == pytest.approx(1.0, abs=1e-9)


def test_an_offset_for_a_camera_the_robot_lacks_is_refused_by_name():
    scene = _with_robot(make_table_scene(), camera_offsets=(CameraOffset("chest", (0.01, 0, 0)),))
    with MujocoBackend() as sim, pytest.raises(ValueError) as error:
        sim.load(scene)
    assert "camera must be one of ['head', 'left_wrist', 'right_wrist'], got 'chest'" in str(error.value)


def test_a_tinted_light_shifts_the_image_towards_its_colour():
    scene = make_table_scene()
    white = _render(scene, "top").rgb.reshape(-1, 3).astype(float).mean(axis=0)
    tinted_lights = tuple(dataclasses.replace(light, colour=(1.0, 1.0, 0.5)) for light in scene.lights)
    tinted = _render(dataclasses.replace(scene, lights=tinted_lights), "top").rgb.reshape(-1, 3).astype(float).mean(axis=0)
    assert tinted[2] < white[2] - 5           # less blue
    assert abs(tinted[0] - white[0]) < 1.0   # red as before (the headlight and red unchanged)


def test_light_colour_is_checked():
    with pytest.raises(ValueError) as error:
        LightSpec(colour=(1.0, 1.2, 0.5))
    assert "light.colour must be in [0, 1] per channel, got (1.0, 1.2, 0.5)" in str(error.value)
