"""Reference behaviours built from the scripted experts: what the action metrics must tell apart.

Each is the privileged expert pursuing a deliberately chosen goal, scored against the real instruction:

* :func:`wrong_target_instance`: the expert's instance with another candidate as its target (reach), the
  goal mirrored to the opposite side of the reference (directional placement), or another layer
  (container placement). Scored against the instruction it is a wrong-target commitment.
* :func:`memorized_instance`: the goal that the scene's training variant names on this very scene (what a
  policy that ignores the instruction does on a prompt probe or a reversed held-out variant).
* :class:`StopsShort`: the instructed expert, frozen just before it commits: the hand near the target but
  not touching it (reach; soda: the base outside the proximity radius), the object carried over its goal
  but not released (placement). Target-consistent progress without completion: soft credit, no strict.

The episode loop scores the *instructed* instance; only the policy sees the changed one.
"""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np

from bspatial.catalog.schema import ACTION_SLICES
from bspatial.catalog.tasks import get_task
from bspatial.catalog.thresholds import SODA_BASE_PROXIMITY_M
from bspatial.scoring.geometry import points_in_polygon
from bspatial.sim.backend import SimBackend
from bspatial.tasks.base import TaskInstance
from bspatial.tasks.experts.motion import ScriptedExpert
from bspatial.tasks.manipulation.common import split_variant
from bspatial.tasks.registry import sample_instance
from bspatial.world.relations import box_distance, pick_by_rank

STOP_SHORT_SURFACE_M = 0.05
"""Stops-short reach: freeze once an end-effector is this close to the target's box (before the push)."""
STOP_SHORT_BASE_MARGIN_M = 0.10
"""Stops-short soda: freeze once the base is this much outside the 0.70 m proximity radius of any can. Where a
distractor stands near the target's approach, the stop comes before half the way and earns no soft credit."""
STOP_SHORT_GOAL_XY_M = 0.05
"""Stops-short directional placement: freeze (object still held) once it is this close (xy) to the goal."""


def wrong_target_instance(instance: TaskInstance, rng: np.random.Generator) -> TaskInstance:
    """``instance`` with the expert's goal moved to a non-instructed candidate or location (see the module doc).

    Raises:
        ValueError: the family has no wrong target (navigation), or the task has a single candidate.
    """
    if instance.family in ("reach", "reach_base_proximity"):
        others = [c for c in instance.candidates if c != instance.target]
        if not others:
            raise ValueError(f"task {instance.task!r}: no distractor to misdirect the expert to")
        return dataclasses.replace(instance, target=others[int(rng.integers(len(others)))])
    if instance.countertop is not None:
        return mirrored_goal(instance)
    if instance.container is not None:
        layer = int(instance.placement.layer)
        # The nearest other layer the task instructs (its variants are the layers the robot can reach).
        layers = sorted((int(v) for v in get_task(instance.task).variants if int(v) != layer),
                        key=lambda v: (abs(v - layer), v))
        return goal_in_layer(instance, layers[0])
    raise ValueError(f"task {instance.task!r} ({instance.family}) has no wrong-target reference")


def memorized_instance(instance: TaskInstance, training_variant: str) -> TaskInstance:
    """``instance`` with the expert's goal set to what ``training_variant`` names *on this scene*: the target
    (reach) or goal (placement) a policy that ignores the instruction would pursue.

    Computed from the instance's own measurements with the same rules the generators use (size and distance
    ranks, left-to-right order, grid cells), so it holds on a held-out scene as on a prompt probe's training
    scene. A training variant equal to the instruction's returns ``instance`` unchanged.

    A training variant measured against another reference (a prompt probe may change it) is sampled on the
    same seed, whose scene must be this one.

    Raises:
        ValueError: no training variant, or one measured against another reference on a different scene.
    """
    if not training_variant:
        raise ValueError(f"task {instance.task!r} seed {instance.seed}: no training variant to memorize")
    if training_variant == instance.variant:
        return instance
    relation, reference = split_variant(training_variant)
    if reference and reference != split_variant(instance.variant)[1]:
        return _trained_on_same_scene(instance, training_variant)
    m = instance.measurements
    if instance.family in ("reach", "reach_base_proximity"):
        if "cell" in m:
            target = next(name for name, cell in m["cell"].items() if cell == relation)
        elif "projection_on_right_axis" in m:   # "leftness" = minus the robot-right projection
            target, _ = pick_by_rank({n: -p for n, p in m["projection_on_right_axis"].items()}, relation)
        else:
            values = m.get("longest_dimension", m.get("distance_to_reference"))
            target, _ = pick_by_rank(dict(values), relation)
        return dataclasses.replace(instance, target=target)
    if instance.countertop is not None:
        return instance if relation == instance.countertop.instructed_side else mirrored_goal(instance)
    if instance.container is not None:
        return goal_in_layer(instance, int(relation))
    raise ValueError(f"task {instance.task!r} ({instance.family}) has no memorized target")


def _trained_on_same_scene(instance: TaskInstance, training_variant: str) -> TaskInstance:
    """A training variant measured against another reference: its own instance on the same seed, which must be
    this very scene (prompt probes reuse training scenes byte for byte), gives the target and goal."""
    trained = sample_instance(instance.task, training_variant, instance.seed)
    if pickle.dumps(trained.scene) != pickle.dumps(instance.scene):
        raise ValueError(f"task {instance.task!r} seed {instance.seed}: training variant {training_variant!r} measures "
                         f"against another reference than {instance.variant!r} and its scene differs; its target "
                         "cannot be measured on this scene")
    return dataclasses.replace(instance, target=trained.target, placement=trained.placement)


def mirrored_goal(instance: TaskInstance) -> TaskInstance:
    """The instance with its goal point (not the scoring geometry) mirrored through the reference along the
    robot-right axis: the expert then puts the object on the non-instructed side."""
    geo = instance.countertop
    goal = np.asarray(instance.placement.goal_point, float)
    offset = float(np.dot(goal[:2] - geo.reference_center, geo.right_axis))
    mirrored = goal.copy()
    mirrored[:2] -= 2 * offset * np.asarray(geo.right_axis, float)
    return dataclasses.replace(instance, placement=dataclasses.replace(instance.placement, goal_point=mirrored))


def goal_in_layer(instance: TaskInstance, layer: int) -> TaskInstance:
    """The instance with the expert's goal point (not the scoring geometry) on ``layer``'s floor."""
    goal = np.asarray(instance.placement.goal_point, float).copy()
    goal[2] = instance.measurements["layer_tops"][layer - 1]
    return dataclasses.replace(instance, placement=dataclasses.replace(instance.placement, goal_point=goal, layer=layer))


class StopsShort:
    """The instructed expert, frozen (its last command held) at the last moment before it would commit."""

    def __init__(self, backend: SimBackend, instance: TaskInstance, expert: ScriptedExpert) -> None:
        self.backend, self.instance, self.expert = backend, instance, expert
        self.frozen: np.ndarray | None = None

    def __call__(self, observation) -> np.ndarray:
        if self.frozen is None and self._about_to_commit(observation):
            last = self.expert.last_action
            self.frozen = self.backend.hold_action() if last is None else last
            self.frozen[ACTION_SLICES["base"]] = 0.0   # stand still where the approach got to
        return self.frozen.copy() if self.frozen is not None else self.expert(observation)

    def _about_to_commit(self, observation) -> bool:
        instance, state = self.instance, observation.state
        if instance.family in ("reach", "reach_base_proximity"):
            box = self.backend.object_bbox(instance.target)
            near = min(box_distance(state.eef_pos[side], box.center, 2 * box.half_extents, box.rotation)
                       for side in state.eef_pos)
            if near <= STOP_SHORT_SURFACE_M:
                return True
            if instance.family == "reach_base_proximity":
                # The soda rule commits on the can nearest the final base within 0.70 m, whichever it is:
                # stop before the base gets that near any can.
                cans = [self.backend.object_pose(c).position[:2] for c in instance.candidates]
                nearest = min(float(np.linalg.norm(state.base_pose[:2] - can)) for can in cans)
                return nearest <= SODA_BASE_PROXIMITY_M + STOP_SHORT_BASE_MARGIN_M
            return False
        held = any(name == instance.manipulated for name in state.grasped.values())
        if not held:
            return False
        position = self.backend.object_pose(instance.manipulated).position
        if instance.countertop is not None:
            goal = np.asarray(instance.placement.goal_point, float)
            return float(np.linalg.norm(position[:2] - goal[:2])) <= STOP_SHORT_GOAL_XY_M
        return bool(points_in_polygon(position[:2], instance.container.footprint)[0])
