"""Perturbation axes: condition names, per-episode draws within the stated ranges, and scene changes that touch
only what their axis names (no simulator here; the rendering side is in tests/sim/test_perturbed_rendering.py)."""

import dataclasses
import math

import numpy as np
import pytest

from bspatial.sim.backend import CameraFrame
from bspatial.tasks.perturbations import (AXES, NoisyCameras, draw_perturbation, perturb_instance, perturbation_rng,
                                          split_condition)
from bspatial.tasks.registry import sample_instance


@pytest.mark.parametrize("condition, message", [
    ("camera+lights", "unknown condition 'lights' (did you mean 'light'?)"),
    ("direct+paraphrase", "combines language conditions ['direct', 'paraphrase']; at most one"),
    ("noise+noise", "names a part twice"),
])
def test_bad_conditions_are_refused_naming_the_part(condition, message):
    with pytest.raises(ValueError) as error:
        split_condition(condition)
    assert message in str(error.value)


def test_an_axis_draws_the_same_values_whatever_it_is_combined_with():
    alone = draw_perturbation(("camera",), perturbation_rng(0, 17))
    combined = draw_perturbation(("camera", "light", "noise"), perturbation_rng(0, 17))
    assert alone.camera_offsets == combined.camera_offsets and alone.camera_offsets
    assert draw_perturbation(("camera",), perturbation_rng(1, 17)).camera_offsets != alone.camera_offsets  # --seed
    assert draw_perturbation(("camera",), perturbation_rng(0, 18)).camera_offsets != alone.camera_offsets  # scene


def test_draws_stay_within_the_stated_ranges():
    # The ranges of the module docstring, written out here: 3 cm head (forward only), 1 cm wrist, 5 deg turns;
    # light x0.5-1.5, channels 0.75-1 with the largest 1, tilt <= 30 deg; noise sigma 2-8; base 5 cm / 5 deg,
    # arm joints 0.1 rad, torso 0.05 rad.
    for seed in range(200):
        p = draw_perturbation(AXES, perturbation_rng(0, seed))
        offsets = {o.camera: o for o in p.camera_offsets}
        head = offsets["head"].position
        assert 0.0 <= head[0] <= 0.03 and max(abs(v) for v in head[1:]) <= 0.03
        assert all(max(abs(v) for v in offsets[c].position) <= 0.01 for c in ("left_wrist", "right_wrist"))
        assert all(max(abs(v) for v in o.rotation) <= math.radians(5.0) + 1e-12 for o in p.camera_offsets)
        assert 0.5 <= p.light["intensity"] <= 1.5 and max(p.light["colour"]) == 1.0
        assert min(p.light["colour"]) >= 0.75 and 0.0 <= p.light["tilt_deg"] <= 30.0
        assert 2.0 <= p.noise_sigma <= 8.0
        r = p.robot
        assert max(map(abs, r["base_shift_m"])) <= 0.05 and abs(r["base_turn_deg"]) <= 5.0
        assert max(map(abs, r["left_arm_rad"] + r["right_arm_rad"])) <= 0.1 and max(map(abs, r["torso_rad"])) <= 0.05


def _colours(scene):
    return [(p.rgba, o.look.rgb if o.look else None) for o in scene.objects for p in o.parts]


def _poses(scene):
    return [(o.name, o.pose.position, o.pose.quat) for o in scene.objects]


@pytest.fixture(scope="module")
def instance():
    return sample_instance("reach_plate", "largest", 3)


@pytest.mark.parametrize("axis", AXES)
def test_each_axis_changes_only_its_part_of_the_scene(instance, axis):
    perturbed = perturb_instance(instance, draw_perturbation((axis,), perturbation_rng(0, 3)))
    before, after = instance.scene, perturbed.scene
    # The task is untouched: the same instruction, target, candidates and object poses.
    assert (perturbed.instruction, perturbed.target, perturbed.candidates) == (instance.instruction, instance.target,
                                                                              instance.candidates)
    assert _poses(after) == _poses(before)
    assert (after.lights != before.lights) == (axis == "light")
    assert (_colours(after) != _colours(before)) == (axis == "appearance")
    assert (after.floor_rgba != before.floor_rgba) == (axis == "appearance")
    assert (after.robot.camera_offsets != ()) == (axis == "camera")
    moved = (after.robot.x, after.robot.y, after.robot.yaw) != (before.robot.x, before.robot.y, before.robot.yaw)
    assert moved == (axis == "robot_state")
    if axis == "noise":   # noise is the cameras' (NoisyCameras), not the scene's
        assert perturbed is instance


def test_light_keeps_its_kind_and_turns_by_the_drawn_tilt(instance):
    p = draw_perturbation(("light",), perturbation_rng(0, 3))
    lights, originals = perturb_instance(instance, p).scene.lights, instance.scene.lights
    assert len(lights) == len(originals) >= 1
    for light, original in zip(lights, originals):
        cos = np.dot(light.direction, original.direction) / np.linalg.norm(original.direction)
        assert math.degrees(math.acos(min(1.0, cos))) == pytest.approx(p.light["tilt_deg"], abs=1e-6)
        assert light.diffuse == pytest.approx(original.diffuse * p.light["intensity"])
        assert light.colour == p.light["colour"] and original.colour == (1.0, 1.0, 1.0)
        assert (light.directional, light.cast_shadow, light.position) == (original.directional, original.cast_shadow,
                                                                          original.position)


class _FlatBackend:
    """A stand-in simulator whose camera sees a uniform grey (level 128): any spread is the noise."""

    def render(self, camera, **kwargs):
        return CameraFrame(camera=camera, rgb=np.full((224, 224, 3), 128, np.uint8), depth=None, segmentation=None,
                           id_to_name={}, K=np.eye(3), T_world_cam=np.eye(4))

    def hold_action(self):
        return "the backend's"


def test_noisy_cameras_add_noise_of_the_drawn_sigma_and_pass_the_rest_through():
    cameras = NoisyCameras(_FlatBackend(), sigma=6.0, seed=1)
    first, second = cameras.render("head").rgb, cameras.render("head").rgb
    assert first.dtype == np.uint8 and first.std() == pytest.approx(6.0, rel=0.03)
    assert abs(first.astype(float).mean() - 128) < 0.2
    assert not np.array_equal(first, second)   # fresh each frame
    assert np.array_equal(NoisyCameras(_FlatBackend(), 6.0, seed=1).render("head").rgb, first)   # seeded
    assert cameras.hold_action() == "the backend's"


def test_a_spawn_override_is_perturbed_from_itself_not_from_home(instance):
    arm = (-0.3, 0.2, 0.1, -1.0, 0.0, 1.5, 0.0)
    custom = dataclasses.replace(instance, scene=dataclasses.replace(
        instance.scene, robot=dataclasses.replace(instance.scene.robot, left_arm=arm)))
    p = draw_perturbation(("robot_state",), perturbation_rng(0, 3))
    moved = perturb_instance(custom, p).scene.robot.left_arm
    np.testing.assert_allclose(np.subtract(moved, arm), p.robot["left_arm_rad"], atol=1e-12)
