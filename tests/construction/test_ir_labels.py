"""Placement IR labels agree with the scene's geometry and with where the expert actually puts the object.

The build keeps a placement query only when the task's goal point scores ``correct`` against the region
(:func:`bspatial.construction.ir_labels._check_goal_visible`), so that alone proves nothing. These tests
check what the selection does not: the mirror image of the goal across the reference scores ``wrong``, a
point on the reference is on-ref, another compartment is ``wrong``, and the object's final pose after the
scripted expert placed it (physics, not the goal point) scores ``correct``.
"""

import numpy as np
import pytest

from bspatial.construction.items.frames import capture
from bspatial.construction.ir_labels import ir_region
from bspatial.scoring.ir import score_ir_item
from bspatial.scoring.ir_regions import region_from_dict
from bspatial.sim.mujoco_backend import MujocoBackend
from bspatial.tasks import sample_instance
from bspatial.tasks.episode import run_episode
from bspatial.tasks.experts import make_expert

pytestmark = [pytest.mark.sim]


@pytest.fixture(scope="module")
def sim():
    backend = MujocoBackend(max_render_size=720)
    yield backend
    backend.close()


def _pixel(record, point):
    uv, z = record.frame.project(np.asarray(point, float)[None])
    assert z[0] > 0, "the point is behind the head camera"
    return float(uv[0, 0]), float(uv[0, 1])


def _labelled(sim, task, variant, seed):
    instance = sample_instance(task, variant, seed)
    record = capture(sim, instance.scene)
    return instance, record, region_from_dict(ir_region(instance, record))


@pytest.mark.parametrize("variant,seed", [("left/cutting board", 0), ("right/microwave", 1)])
def test_directional_mirror_goal_is_wrong_and_the_reference_is_on_ref(sim, variant, seed):
    instance, record, region = _labelled(sim, "place_carving_knife", variant, seed)
    geo = instance.countertop
    goal = np.asarray(instance.placement.goal_point, float)
    # Reflect the goal across the reference along the robot-right axis: same distance, other side.
    axis = np.asarray(geo.right_axis, float)
    offset = float(np.dot(goal[:2] - geo.reference_center, axis))
    mirror = goal.copy()
    mirror[:2] = goal[:2] - 2 * offset * axis
    assert score_ir_item(_pixel(record, goal + [0, 0, 0.002]), region)[2:] == ("correct", "instructed_side")
    assert score_ir_item(_pixel(record, mirror + [0, 0, 0.002]), region)[2:] == ("wrong", "opposite_side")
    on_ref = np.array([*geo.reference_center, geo.plane_height + 0.002]) + 0.05 * np.r_[axis, 0.0]
    assert score_ir_item(_pixel(record, on_ref), region)[2:] == ("none", "on_ref")


@pytest.mark.parametrize("task,variant,seed", [("place_bowl_in_cabinet", "4", 0), ("place_tupperware_in_fridge", "5", 2)])
def test_container_other_compartments_are_wrong(sim, task, variant, seed):
    instance, record, region = _labelled(sim, task, variant, seed)
    box = region.container
    front_x = box.center[0] - box.half_extents[0] + 0.02
    labels = {}
    for index, (low, high) in enumerate(region.compartments):
        point = [front_x, box.center[1], (low + high) / 2]
        uv, z = record.frame.project(np.asarray(point)[None])
        if z[0] > 0 and 0 <= uv[0, 0] < 720 and 0 <= uv[0, 1] < 720:
            labels[index] = score_ir_item((float(uv[0, 0]), float(uv[0, 1])), region)[3]
    instructed = instance.container.instructed_compartment
    assert labels.get(instructed) == "instructed_compartment", labels
    others = [d for i, d in labels.items() if i != instructed]
    assert others and set(others) <= {"other_compartment", "missed_container"} and "other_compartment" in others, labels


@pytest.mark.parametrize("task,variant,seed", [("place_carving_knife", "right/cutting board", 3),
                                               ("place_bowl_in_cabinet", "3", 1)])
def test_where_the_expert_places_the_object_scores_correct(sim, task, variant, seed):
    instance, record, region = _labelled(sim, task, variant, seed)
    sim.load(instance.scene)
    result = run_episode(sim, instance, make_expert(sim, instance))
    assert result.outcome.outcome == "correct", result.outcome
    final = result.trace.object_positions[-1]
    point = final + [0, 0, 0.002]
    if instance.container is not None:
        # A container's label is the ray's entry height at the front face: aim at the front face, at the
        # height the object came to rest at.
        box = region.container
        point = np.array([box.center[0] - box.half_extents[0] + 0.02, final[1], final[2] + 0.01])
    assert score_ir_item(_pixel(record, point), region)[2] == "correct"
