"""The reach expert (Table S4 "contact" and "base proximity"): drive up, then push the closed hand onto the target.

Pick the arm on the target's side, drive the base (yaw fixed) until the target's contact point is
``REACH_STANDOFF_M`` ahead of the base, without the base footprint touching any object, then move the
hand to a pre-contact point and push slowly through the contact point until the fingers touch.
Table-top objects are approached from above with the hand pointing down; books standing in a bookcase
cell from the front. Floor objects need the torso: every IK call solves torso + arm together.
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from bspatial.catalog.schema import CONTROL_HZ
from bspatial.sim import robot as robot_mod
from bspatial.tasks.experts.motion import (
    BASE_TOL_M,
    FRONT,
    FRONT_APPROACH_TASKS,
    NEAR_EDGE_INSET_M,
    NEAR_SIDE_FRACTION,
    PRE_CONTACT_M,
    PUSH_DEPTH_FRACTION,
    PUSH_DEPTH_MIN_M,
    PUSH_SPEED_M_S,
    REACH_STANDOFF_M,
    PAUSE_AFTER_MOVE_STEPS,
    TOP_DOWN,
    TRACK_SPEED_M_S,
    TRANSIT_SPEED_M_S,
    ScriptedExpert,
)


class ReachExpert(ScriptedExpert):
    """Touch the instructed candidate (Table S4 "contact"; soda also satisfies base proximity)."""

    def contact_geometry(self, reach_excess: float = 0.0) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
        """(contact point on the box face, unit approach direction, box depth along it, hand quaternion at yaw 0).

        The contact point is the centre of the box face the hand meets; a composite shape (a teddy bear)
        may not reach that face there, so the push goes on into the box until something is touched.
        ``reach_excess`` (m): how much farther than :data:`REACH_STANDOFF_M` the target lies ahead of
        the base (the base was blocked); a top-down contact point then moves that much towards the
        robot, at most to :data:`NEAR_EDGE_INSET_M` inside the face's near edge.
        """
        box = self.sim.object_bbox(self.instance.target)
        depth = box.aabb_max - box.aabb_min
        if self.instance.task in FRONT_APPROACH_TASKS:
            return (np.array([box.aabb_min[0], box.center[1], box.center[2]]), np.array([1.0, 0.0, 0.0]),
                    float(depth[0]), FRONT)
        # Wide flat targets (plates) reach far back: touch the half of the top face nearer the robot.
        near_x = box.center[0] - NEAR_SIDE_FRACTION * depth[0] / 2
        if reach_excess > 0.0:
            near_x = max(near_x - reach_excess, min(near_x, box.aabb_min[0] + NEAR_EDGE_INSET_M))
        return (np.array([near_x, box.center[1], box.aabb_max[2]]), np.array([0.0, 0.0, -1.0]),
                float(depth[2]), TOP_DOWN)

    def _target_center(self) -> np.ndarray:
        return self.sim.object_bbox(self.instance.target).center.copy()

    def script(self) -> Iterator[np.ndarray]:
        self.begin(gripper=-1.0)
        point, direction, depth, quat = self.contact_geometry()
        base = self.sim.robot_state().base_pose
        side = "left" if point[1] >= base[1] else "right"
        yield from self.tuck("right" if side == "left" else "left")
        goal = self.base_goal(point, side)
        if np.linalg.norm(goal - base[:2]) > BASE_TOL_M:
            yield from self.drive_to(goal, yaw=base[2])
        base = self.sim.robot_state().base_pose
        quat = robot_mod.base_to_world_quat(quat, base[2])
        # Re-read the target after the drive (a round object may have rolled meanwhile); where the base
        # stopped short of the standoff (blocked by the furniture), aim at the nearer part of the face.
        point, direction, depth, _ = self.contact_geometry()
        point, direction, depth, _ = self.contact_geometry(reach_excess=float(point[0] - base[0] - REACH_STANDOFF_M))
        pre = point - PRE_CONTACT_M * direction
        eef = self.sim.robot_state().eef_pos[side]
        if direction[2] < 0:   # from above: rise, cross at a safe height, come down onto the pre-contact point
            z = max(self.safe_height([eef, pre]), pre[2], eef[2])
            waypoints = [np.array([*eef[:2], z]), np.array([*pre[:2], z]), pre]
        else:                  # from the front (shelf cells): straight to the pre-contact point
            waypoints = [pre]
        offset = point - self._target_center()
        for a, b in zip([eef] + waypoints[:-1], waypoints):
            yield from self.line_eef(side, a, b, quat, TRANSIT_SPEED_M_S)
        yield from self.wait(PAUSE_AFTER_MOVE_STEPS)
        push = max(PUSH_DEPTH_MIN_M, PUSH_DEPTH_FRACTION * depth)
        yield from self.tracked_push(side, pre, offset, direction, push, quat)
        yield from self.wait(30)

    def tracked_push(self, side: str, start, offset, direction, push: float, quat) -> Iterator[np.ndarray]:
        """Push from ``start`` along ``direction`` through the contact point to ``push`` past it, at
        :data:`PUSH_SPEED_M_S`, re-aimed every step at the target's current contact point (its box
        centre + ``offset``): a target that moves (a rolling pin rolling on the counter) is followed,
        the correction across the approach limited to :data:`TRACK_SPEED_M_S`."""
        cmd = np.asarray(start, float).copy()
        s = -PRE_CONTACT_M
        step_along, step_across = PUSH_SPEED_M_S / CONTROL_HZ, TRACK_SPEED_M_S / CONTROL_HZ
        max_steps = int(math.ceil((PRE_CONTACT_M + push) / step_along)) + int(CONTROL_HZ)
        for _ in range(max_steps):
            s = min(push, s + step_along)
            err = self._target_center() + offset + s * direction - cmd
            along = float(err @ direction) * direction
            across = err - along
            norm = float(np.linalg.norm(across))
            if norm > step_across:
                across *= step_across / norm
            cmd = cmd + along + across
            self._command(side, self.ik(side, cmd, quat).qpos)
            yield self._target.copy()
            if s >= push and norm <= step_across:
                break
