"""The placement experts (Table S4 "directional" and "container" placement): grasp, carry, place, release.

The arm on the goal's side takes the manipulated object with the assisted grasp (closed gripper moved
onto a grasp face until both fingers touch it), lifts it, carries it to ``instance.placement.goal_point``,
lowers it until its bottom is ``RELEASE_HEIGHT_M`` above the goal surface, opens and backs the hand
away. Countertop objects are taken from above and carried above every object near the path; container
objects are taken from the front with the hand horizontal and slid in at the instructed layer's height.
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from bspatial.sim import robot as robot_mod
from bspatial.tasks.experts.motion import (
    ARM_LATERAL_M,
    BASE_TOL_M,
    FRONT,
    PRE_CONTACT_M,
    PUSH_SPEED_M_S,
    REACH_STANDOFF_M,
    PAUSE_AFTER_MOVE_STEPS,
    TOP_DOWN,
    TRANSIT_SPEED_M_S,
    ScriptedExpert,
)

GRASP_SPEED_M_S = 0.08          # approach speed onto the grasp face until the assisted grasp engages
GRASP_PUSH_M = 0.04             # the grasp approach aims this far past the grasp face (stops at the weld)
FRONT_GRASP_STANDOFF_M = 0.50   # front grasp: grasp face this far ahead of the base centre (x), if the base fits
FRONT_GRASP_TOP_MARGIN_M = 0.013  # front grasp: hand axis this far below the object's top (the pads reach 0.015 above it)
LIFT_M = 0.06                   # lift after the grasp, before any carrying
CARRY_CLEARANCE_M = 0.06        # held object's bottom this far above every obstacle near the carry path
RELEASE_HEIGHT_M = 0.012        # the object is released with its bottom this far above the goal surface
ENTRY_CLEARANCE_M = 0.03        # container entry: object bottom this far above the layer floor
FACE_GAP_M = 0.04               # container entry: object front edge this far in front of the container face
CONTAINER_STANDOFF_M = 0.66     # base centre this far in front of the container face (x)
CARRY_REACH_M = 0.35            # container carry: hand pulled in to this far ahead of the base centre before the base moves
RETREAT_M = 0.12                # hand retreat after the release
RELEASE_STEPS = 15


class PlacementExpert(ScriptedExpert):
    """Shared grasp / carry / release script of the two placement families (see the module docstring).

    Subclasses choose the grasp (``grasp_geometry``) and the carry-and-place motion (``place``).
    """

    def choose_side(self) -> str:
        """The arm on the goal's side of the robot (the base follows the arm, so any object is reachable)."""
        return "left" if self.instance.placement.goal_point[1] >= self.sim.robot_state().base_pose[1] else "right"

    def grasp_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(grasp point on the object's face, unit approach direction, hand quaternion in the base frame)."""
        raise NotImplementedError

    def held(self, side: str) -> bool:
        return self.sim.robot_state().grasped[side] == self.instance.manipulated

    def grasp(self, side: str) -> Iterator[np.ndarray]:
        """Drive to the object, approach the grasp face with the closed gripper until the assisted grasp
        engages (both fingers touching), then lift. Sets ``self.quat``, the hand orientation kept while
        the object is held (so the object's offset from the hand stays fixed in the world frame)."""
        point, direction, quat = self.grasp_geometry()
        base = self.sim.robot_state().base_pose
        # A horizontal hand needs the base closer: with the arm stretched the forearm dips onto the support.
        goal = self.base_goal(point, side, REACH_STANDOFF_M if direction[2] < 0 else FRONT_GRASP_STANDOFF_M)
        if np.linalg.norm(goal - base[:2]) > BASE_TOL_M:
            yield from self.drive_to(goal, yaw=base[2])
        quat = robot_mod.base_to_world_quat(quat, self.sim.robot_state().base_pose[2])
        pre = point - PRE_CONTACT_M * direction
        eef = self.sim.robot_state().eef_pos[side]
        z = max(self.safe_height([eef, pre]), pre[2], eef[2]) if direction[2] < 0 else max(pre[2], eef[2])
        waypoints = [np.array([*eef[:2], z]), np.array([*pre[:2], z]), pre]
        for a, b in zip([eef] + waypoints[:-1], waypoints):
            yield from self.line_eef(side, a, b, quat, TRANSIT_SPEED_M_S)
        yield from self.wait(PAUSE_AFTER_MOVE_STEPS)
        end = point + GRASP_PUSH_M * direction
        for action in self.line_eef(side, pre, end, quat, GRASP_SPEED_M_S):
            yield action
            if self.held(side):
                break
        yield from self.wait(3)
        self.quat = quat
        if self.held(side):
            eef = self.sim.robot_state().eef_pos[side]
            yield from self.line_eef(side, eef, eef + [0.0, 0.0, LIFT_M], quat, TRANSIT_SPEED_M_S)

    def hang(self, side: str) -> np.ndarray:
        """Held object's frame origin (bottom-face centre) relative to the end-effector, world axes."""
        return self.sim.object_pose(self.instance.manipulated).position - self.sim.robot_state().eef_pos[side]

    def release(self, side: str) -> Iterator[np.ndarray]:
        yield from self.set_gripper(side, 1.0, RELEASE_STEPS)

    def script(self) -> Iterator[np.ndarray]:
        self.begin(gripper=-1.0)
        side = self.choose_side()
        yield from self.tuck("right" if side == "left" else "left")
        yield from self.grasp(side)
        if not self.held(side):
            return
        yield from self.place(side)

    def place(self, side: str) -> Iterator[np.ndarray]:
        raise NotImplementedError


class DirectionalPlacementExpert(PlacementExpert):
    """Countertop placement (Table S4 "directional placement"): top-down grasp (the knife and the saucer
    lie flat), carry above every obstacle, lower onto ``goal_point``, open, retreat upwards."""

    def grasp_geometry(self):
        name = self.instance.manipulated
        box = self.sim.object_bbox(name)
        w, x, y, z = self.sim.object_pose(name).quat
        yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        # Site x along the object's x: both closed pads land across a knife blade (3.2 cm wide).
        quat = robot_mod.base_to_world_quat(TOP_DOWN, yaw - self.sim.robot_state().base_pose[2])
        return np.array([*box.center[:2], box.aabb_max[2]]), np.array([0.0, 0.0, -1.0]), quat

    def carry_height(self, xy_points, hang_z: float) -> float:
        """Eef height that keeps the held object CARRY_CLEARANCE_M above every object near the path."""
        top = self.instance.placement.goal_point[2]
        for name in self.sim.object_names():
            if name in (self.instance.manipulated, self.instance.placement.surface.split("/")[0]):
                continue
            box = self.sim.object_bbox(name)
            lo, hi = box.aabb_min[:2] - 0.15, box.aabb_max[:2] + 0.15
            for p in xy_points:
                if np.all(np.asarray(p)[:2] >= lo) and np.all(np.asarray(p)[:2] <= hi):
                    top = max(top, float(box.aabb_max[2]))
        return top + CARRY_CLEARANCE_M - hang_z

    def place(self, side: str) -> Iterator[np.ndarray]:
        goal = np.asarray(self.instance.placement.goal_point, float)
        hang = self.hang(side)
        eef = self.sim.robot_state().eef_pos[side]
        target_xy = goal[:2] - hang[:2]
        path = [eef[:2] + (target_xy - eef[:2]) * f for f in np.linspace(0, 1, 11)]
        z = max(self.carry_height(path, hang[2]), eef[2])
        up = np.array([*eef[:2], z])
        yield from self.line_eef(side, eef, up, self.quat, TRANSIT_SPEED_M_S)
        # Put the goal ahead of the arm: slide the base sideways (and forward if it can).
        base = self.sim.robot_state().base_pose
        bgoal = self.base_goal(np.array([*target_xy, goal[2]]), side)
        if np.linalg.norm(bgoal - base[:2]) > BASE_TOL_M:
            yield from self.drive_to(bgoal, yaw=base[2])
        eef = self.sim.robot_state().eef_pos[side]
        above = np.array([*target_xy, z])
        yield from self.line_eef(side, eef, above, self.quat, TRANSIT_SPEED_M_S)
        down = np.array([*target_xy, goal[2] + RELEASE_HEIGHT_M - hang[2]])
        yield from self.line_eef(side, above, down, self.quat, PUSH_SPEED_M_S)
        yield from self.wait(PAUSE_AFTER_MOVE_STEPS)
        yield from self.release(side)
        yield from self.line_eef(side, down, down + [0.0, 0.0, RETREAT_M], self.quat, PUSH_SPEED_M_S)
        yield from self.wait(30)


class ContainerPlacementExpert(PlacementExpert):
    """Shelf-layer placement (Table S4 "container placement"): the layer above leaves no room for a
    hand over the object, so the object is taken from the front (hand horizontal), carried to the
    container face at the instructed layer's height, slid in through the open front, lowered onto the
    layer floor and released; the hand then backs out."""

    def grasp_geometry(self):
        box = self.sim.object_bbox(self.instance.manipulated)
        # As high as the pads allow: the wrist and forearm sit at the grasp height over the support's edge.
        z = box.aabb_max[2] - FRONT_GRASP_TOP_MARGIN_M
        return np.array([box.aabb_min[0], box.center[1], z]), np.array([1.0, 0.0, 0.0]), FRONT

    def place(self, side: str) -> Iterator[np.ndarray]:
        goal = np.asarray(self.instance.placement.goal_point, float)
        # The open front: the footprint's near edge (the container's bounding box also holds an opened door).
        face_x = float(np.min(self.instance.container.footprint[:, 0]))
        hang = self.hang(side)
        box = self.sim.object_bbox(self.instance.manipulated)
        front_ahead = float(box.aabb_max[0] - self.sim.robot_state().eef_pos[side][0])
        # Pull the object back towards the body before the base moves.
        base = self.sim.robot_state().base_pose
        eef = self.sim.robot_state().eef_pos[side]
        back = np.array([base[0] + CARRY_REACH_M, eef[1], eef[2]])
        yield from self.line_eef(side, eef, back, self.quat, TRANSIT_SPEED_M_S)
        lateral = ARM_LATERAL_M if side == "left" else -ARM_LATERAL_M
        target_xy = goal[:2] - hang[:2]
        bgoal = np.array([face_x - CONTAINER_STANDOFF_M, target_xy[1] - lateral])
        yield from self.drive_to(np.array([base[0], bgoal[1]]), yaw=base[2])
        yield from self.drive_to(bgoal, yaw=base[2])
        eef = self.sim.robot_state().eef_pos[side]
        entry_z = goal[2] + ENTRY_CLEARANCE_M - hang[2]
        face = np.array([face_x - FACE_GAP_M - front_ahead, target_xy[1], eef[2]])
        waypoints = [face, np.array([*face[:2], entry_z]), np.array([*target_xy, entry_z]),
                     np.array([*target_xy, goal[2] + RELEASE_HEIGHT_M - hang[2]])]
        for a, b in zip([eef] + waypoints[:-1], waypoints):
            yield from self.line_eef(side, a, b, self.quat, TRANSIT_SPEED_M_S)
        yield from self.wait(PAUSE_AFTER_MOVE_STEPS)
        yield from self.release(side)
        end = waypoints[-1]
        yield from self.line_eef(side, end, end - [RETREAT_M + 0.1, 0.0, 0.0], self.quat, PUSH_SPEED_M_S)
        yield from self.wait(30)
