"""IR (point grounding) labels: one query per task instance in ``bspatial_ir``'s region-spec format.

* Reach tasks: the instructed object's segmentation mask is the accepted target, the other
  candidates' masks are distractors (RLE, :mod:`bspatial.scoring.masks`).
* Directional placement: camera, countertop plane and polygon, reference centre, robot-right axis
  and instructed side, straight from the task's scoring geometry.
* Container placement: camera, the container's interior box and the compartments' physical height
  bands (layer floor to layer ceiling, bottom first).

Section 3.3 ("Evaluation frame selection"): grounding keeps only frames whose answer region is
visible. Reach: the target covers :data:`~bspatial.construction.items.frames.MIN_ANSWER_PIXELS`;
placement: the task's free goal point projects into the image and scores ``correct`` against the
region itself. The reference the instruction names (a landmark, a placement's reference object) must be
findable (:meth:`~bspatial.construction.items.frames.FrameRecord.findable`), as in the VQA items.
"""

from __future__ import annotations

import numpy as np

from bspatial.construction.items.frames import FrameRecord, Rejected
from bspatial.scoring.ir import score_ir_item
from bspatial.scoring.ir_regions import (ContainerPlacementRegion, DirectionalPlacementRegion, ReachRegion,
                                         region_from_dict)
from bspatial.tasks.base import TaskInstance


def ir_region(instance: TaskInstance, record: FrameRecord) -> dict:
    """The region spec (dict, JSON-ready) of ``instance`` on ``record``'s frame; raises Rejected."""
    _check_reference_findable(instance, record)
    if instance.family in ("reach", "reach_base_proximity"):
        region = _reach(instance, record)
        return region.to_dict()
    if instance.countertop is not None:
        region = _directional(instance, record)
    elif instance.container is not None:
        region = _container(instance, record)
    else:
        raise ValueError(f"task {instance.task!r} ({instance.family}) has no IR region")
    _check_goal_visible(instance, record, region)
    return region.to_dict()


def named_reference(instance: TaskInstance) -> str | None:
    """The object the instruction names besides its target (a distance reach's landmark, a directional placement's
    reference), None when there is none. A container task's container is not one: the instructed compartment is
    the region itself, checked in the frame by :func:`_check_goal_visible`."""
    return None if instance.container is not None else instance.reference


def _check_reference_findable(instance, record) -> None:
    # The frontier VLM found the instruction's reference ("the bottom cabinet") outside the frame in 4 of 42
    # sampled IR queries (issue 29): the VQA items' findable rule applies to IR too.
    reference = named_reference(instance)
    if reference is not None:
        record.require_findable([reference], prefix="IR reference ")


def _reach(instance, record) -> ReachRegion:
    target = record.objects[instance.target]
    if not target.visible(answer=True):
        raise Rejected(f"IR target {target.name} covers {target.pixels} px")
    distractors = [record.mask(n) for n in instance.candidates
                   if n != instance.target and record.objects[n].pixels > 0]
    return ReachRegion(image_size=record.image_size, targets=[record.mask(instance.target)],
                       distractors=distractors, task=instance.task)


def _directional(instance, record) -> DirectionalPlacementRegion:
    geo = instance.countertop
    ref = record.objects[instance.reference]
    return DirectionalPlacementRegion(
        image_size=record.image_size, K=record.frame.K.tolist(), T_world_cam=record.frame.T_world_cam.tolist(),
        countertop={"height": geo.plane_height, "polygon": geo.polygon.tolist()},
        reference_center=[*geo.reference_center.tolist(), float(ref.center[2])],
        robot_right=geo.right_axis.tolist(), side=geo.instructed_side, task=instance.task)


def _container(instance, record) -> ContainerPlacementRegion:
    geo = instance.container
    moved = record.objects[instance.manipulated]
    height = float(moved.extents[2])
    # Task bands hold the object's bottom height when resting in a layer (floor - slack .. ceiling -
    # object height); the IR bands are the compartments themselves: floor .. ceiling.
    tops = [float(t) for t in instance.measurements["layer_tops"]]
    ceilings = [float(high) + height for _, high in geo.compartment_bands]
    bands = [[t, c] for t, c in zip(tops, ceilings)]
    fp = np.asarray(geo.footprint)
    lo, hi = np.r_[fp.min(0), tops[0]], np.r_[fp.max(0), ceilings[-1]]
    return ContainerPlacementRegion(
        image_size=record.image_size, K=record.frame.K.tolist(), T_world_cam=record.frame.T_world_cam.tolist(),
        container={"center": ((lo + hi) / 2).tolist(), "half_extents": ((hi - lo) / 2).tolist()},
        compartments=bands, instructed_compartment=geo.instructed_compartment, task=instance.task)


def goal_pixel(instance: TaskInstance, record: FrameRecord, region) -> tuple[float, float] | None:
    """Pixel of a point inside the instructed placement region (the task's goal point; for containers
    the middle of the instructed compartment's front face)."""
    if isinstance(region, ContainerPlacementRegion):
        box = region.container
        low, high = region.compartments[region.instructed_compartment]
        front_x = box.center[0] - box.half_extents[0]
        point = np.array([front_x + 0.02, box.center[1], (low + high) / 2])
    else:
        point = np.asarray(instance.placement.goal_point, float) + np.array([0.0, 0.0, 0.002])
    uv, z = record.frame.project(point[None])
    if z[0] <= 0:
        return None
    return float(uv[0, 0]), float(uv[0, 1])


def _check_goal_visible(instance, record, region) -> None:
    uv = goal_pixel(instance, record, region)
    if uv is None or score_ir_item(uv, region)[2] != "correct":
        raise Rejected(f"{instance.task}: the instructed placement region is not visible in the head frame")


__all__ = ["ir_region", "goal_pixel", "named_reference", "region_from_dict"]
