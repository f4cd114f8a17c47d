"""Scripted experts: privileged-state policies that solve the manipulation tasks (issue 3, item 5).

An expert reads the simulator directly (object boxes, robot state, IK) and returns 23-dim actions
(DESIGN §4). It proves a task instance is solvable and later records the demonstrations. Each expert is
a script, a Python generator that yields one action per control step, wrapped in a policy callable
that :func:`bspatial.tasks.episode.run_episode` drives; once the script ends it holds still.

Reach (Table S4 "contact"): pick the arm on the target's side, drive the base (yaw fixed) until the
target's contact point is :data:`REACH_STANDOFF_M` ahead of the base, without the base footprint
touching any object, then move the hand with the closed gripper to a pre-contact point and push slowly
through the contact point until the fingers touch. Table-top objects are approached from above with the
hand pointing down; books standing in a bookcase cell are approached from the front (the shelf above
blocks a top-down approach). Floor objects (soda cans, storage boxes) need the torso: every IK call
solves torso + arm together, so the torso bends as far as the target needs.

Placement: the arm on the goal's side of the robot takes the manipulated object with the assisted
grasp (closed gripper moved onto a grasp face until both fingers touch it; the saucer, bowl and
tupperware are wider than the 10 cm opening, so no pinch is attempted), lifts it, carries it to
``instance.placement.goal_point``, lowers it until its bottom is :data:`RELEASE_HEIGHT_M` above the goal
surface, opens and backs the hand away. Countertop objects lie flat and are taken from above and
carried above every object near the path. Shelf layers leave no room for a hand above the object, so
container objects are taken from the front with the hand horizontal, carried (pulled in towards the
body while the base moves) to the open front at the instructed layer's height and slid in.

Example:
    >>> from bspatial.sim.mujoco_backend import MujocoBackend
    >>> from bspatial.tasks import sample_instance
    >>> from bspatial.tasks.episode import run_episode
    >>> sim = MujocoBackend()
    >>> inst = sample_instance("reach_plate", "largest", 0)
    >>> sim.load(inst.scene)
    >>> run_episode(sim, inst, make_expert(sim, inst)).outcome.outcome
    'correct'
    >>> sim.close()
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from bspatial.catalog.schema import ACTION_SLICES, CONTROL_HZ
from bspatial.sim import robot as robot_mod
from bspatial.sim.backend import IKResult, SimBackend
from bspatial.tasks.base import TaskInstance
from bspatial.tasks.nav_expert import NavigationExpert


BASE_SPEED_M_S = 0.4            # cruise speed of the scripted base (BASE_MAX_SPEED is 1.0)
BASE_GAIN = 2.0                 # 1/s, proportional base position gain
BASE_TOL_M = 0.01
BASE_FOOTPRINT_HALF = (0.30, 0.25)  # the base box's half extents (bspatial.sim.robot.build_robot)
BASE_TOP_M = robot_mod.BASE_TOP
IK_MAX_ITERATIONS = 300          # per waypoint: the setting the experts were calibrated with (the backend default is 200)
JOINT_SPEED_RAD_S = 1.2         # max joint speed of scripted joint-space moves
REACH_STANDOFF_M = 0.62         # target contact point this far ahead of the base centre (x, robot frame)
ARM_LATERAL_M = 0.22            # ... and this far towards the chosen arm's side
PRE_CONTACT_M = 0.10            # pre-contact point this far back along the approach direction
TRANSIT_SPEED_M_S = 0.35        # Cartesian speed of the hand between waypoints
PUSH_SPEED_M_S = 0.12           # approach speed through the contact point
PUSH_DEPTH_FRACTION = 0.8       # the push aims this fraction of the target's depth past the contact point
PUSH_DEPTH_MIN_M = 0.03         # ... and at least this far (thin plates, tools): contact happens earlier
SETTLE_STEPS = 6
NEAR_SIDE_FRACTION = 0.4       # top-down contact point: this fraction of the half depth towards the robot
NEAR_EDGE_INSET_M = 0.01        # ... moved at most this close to the near edge when the base stops short
TRACK_SPEED_M_S = 0.12          # push: max correction speed across the approach towards a moving target
SAFE_CLEARANCE_M = 0.08         # transit height of the hand above the tallest object near its path
BASE_CLEARANCE_M = 0.03
# The idle arm folds up against the chest (upper arm slightly back, forearm forward-up, shoulder rolled
# outwards) so that a bending torso never lowers its fingers onto the furniture or a distractor.
TUCKED_ARM = {"left": (0.2, 0.25, 0.0, -2.5, 0.0, 0.0, 0.0), "right": (0.2, -0.25, 0.0, -2.5, 0.0, 0.0, 0.0)}

# Hand orientations (w, x, y, z) of the eef site: the hand approaches along the site's -z axis.
TOP_DOWN = np.array([1.0, 0.0, 0.0, 0.0])                                   # site z = world +z
FRONT = np.array([math.cos(-math.pi / 4), 0.0, math.sin(-math.pi / 4), 0.0])  # site z = world -x: push +x

FRONT_APPROACH_TASKS = frozenset({"reach_hardback"})
"""Targets inside shelf cells: the layer above leaves no room for a top-down approach."""


class ScriptedExpert:
    """A policy callable over a privileged script (see the module docstring).

    Args:
        backend: the backend running ``instance``.
        instance: the task instance.
    """

    def __init__(self, backend: SimBackend, instance: TaskInstance) -> None:
        self.sim, self.instance = backend, instance
        self._script: Iterator[np.ndarray] | None = None
        self._last: np.ndarray | None = None

    def __call__(self, observation) -> np.ndarray:
        if self._script is None or observation.step == 0:
            self._script = self.script()
            self._last = None
        try:
            self._last = next(self._script)
        except StopIteration:
            if self._last is None:
                self._last = self.sim.hold_action()
        return self._last

    def script(self) -> Iterator[np.ndarray]:
        raise NotImplementedError

    # ------------------------------------------------------------------ primitives

    def hold(self, gripper: dict[str, float] | None = None) -> np.ndarray:
        action = self._target.copy()
        for side, g in (gripper or {}).items():
            action[ACTION_SLICES[f"{side}_gripper"]] = g
        return action

    def tuck(self, side: str) -> Iterator[np.ndarray]:
        """Fold ``side``'s arm against the chest (:data:`TUCKED_ARM`)."""
        start = self._target[ACTION_SLICES[f"{side}_arm"]].copy()
        goal = np.array(TUCKED_ARM[side])
        n = max(5, int(math.ceil(np.max(np.abs(goal - start)) / (JOINT_SPEED_RAD_S / CONTROL_HZ))))
        for i in range(1, n + 1):
            self._target[ACTION_SLICES[f"{side}_arm"]] = start + (goal - start) * i / n
            yield self._target.copy()

    def safe_height(self, xy_points, radius: float = 0.25) -> float:
        """Transit height: above every movable object within ``radius`` of the given xy points."""
        top = 0.0
        for name in self.sim.movable_objects():
            box = self.sim.object_bbox(name)
            if min(np.linalg.norm(box.center[:2] - np.asarray(p)[:2]) for p in xy_points) < radius:
                top = max(top, float(box.aabb_max[2]))
        return top + SAFE_CLEARANCE_M

    def begin(self, gripper: float) -> None:
        """Start from the current joints with both grippers commanded to ``gripper``."""
        self._target = self.sim.hold_action()
        self._target[ACTION_SLICES["left_gripper"]] = gripper
        self._target[ACTION_SLICES["right_gripper"]] = gripper

    def wait(self, steps: int) -> Iterator[np.ndarray]:
        for _ in range(steps):
            yield self._target.copy()

    def set_gripper(self, side: str, command: float, steps: int = 12) -> Iterator[np.ndarray]:
        self._target[ACTION_SLICES[f"{side}_gripper"]] = command
        yield from self.wait(steps)

    def drive_to(self, goal_xy, yaw: float | None = None, max_steps: int = 300) -> Iterator[np.ndarray]:
        """Holonomic base motion to ``goal_xy`` (world) holding ``yaw`` (default: the current yaw)."""
        goal = np.asarray(goal_xy, float)
        yaw_goal = self.sim.robot_state().base_pose[2] if yaw is None else yaw
        for _ in range(max_steps):
            x, y, th = self.sim.robot_state().base_pose
            err = goal - (x, y)
            if np.linalg.norm(err) < BASE_TOL_M:
                break
            v = BASE_GAIN * err
            speed = np.linalg.norm(v)
            if speed > BASE_SPEED_M_S:
                v *= BASE_SPEED_M_S / speed
            c, s = math.cos(th), math.sin(th)
            action = self._target.copy()
            action[ACTION_SLICES["base"]] = (c * v[0] + s * v[1], -s * v[0] + c * v[1],
                                             BASE_GAIN * math.remainder(yaw_goal - th, math.tau))
            yield action
        yield from self.wait(SETTLE_STEPS)

    def ik(self, side: str, pos, quat) -> IKResult:
        """Torso + arm IK seeded with the currently commanded joints (the seed of the next waypoint)."""
        return self.sim.solve_ik(side, pos, quat, use_torso=True, seed_action=self._target,
                                 max_iterations=IK_MAX_ITERATIONS)

    def _command(self, side: str, q: np.ndarray) -> None:
        self._target[ACTION_SLICES["torso"]] = q[:4]
        self._target[ACTION_SLICES[f"{side}_arm"]] = q[4:]

    def move_joints(self, side: str, q: np.ndarray, settle: int = SETTLE_STEPS) -> Iterator[np.ndarray]:
        """Linear joint-space move of torso + ``side`` arm to ``q`` at :data:`JOINT_SPEED_RAD_S`."""
        start = np.concatenate([self._target[ACTION_SLICES["torso"]], self._target[ACTION_SLICES[f"{side}_arm"]]])
        n = max(5, int(math.ceil(np.max(np.abs(q - start)) / (JOINT_SPEED_RAD_S / CONTROL_HZ))))
        for i in range(1, n + 1):
            self._command(side, start + (q - start) * i / n)
            yield self._target.copy()
        yield from self.wait(settle)

    def move_eef(self, side: str, pos, quat) -> Iterator[np.ndarray]:
        yield from self.move_joints(side, self.ik(side, pos, quat).qpos)

    def line_eef(self, side: str, start, end, quat, speed: float) -> Iterator[np.ndarray]:
        """Straight Cartesian line of the eef at ``speed``, one IK waypoint per step."""
        start, end = np.asarray(start, float), np.asarray(end, float)
        n = max(1, int(math.ceil(np.linalg.norm(end - start) / (speed / CONTROL_HZ))))
        for i in range(1, n + 1):
            self._command(side, self.ik(side, start + (end - start) * i / n, quat).qpos)
            yield self._target.copy()

    # ------------------------------------------------------------------ base placement

    def _obstacles(self, exclude=()) -> list[tuple[np.ndarray, np.ndarray]]:
        """xy boxes (min, max) of every object low enough to meet the base."""
        out = []
        for name in self.sim.object_names():
            if name in exclude:
                continue
            box = self.sim.object_bbox(name)
            if box.aabb_min[2] < BASE_TOP_M + 0.02:
                out.append((box.aabb_min[:2], box.aabb_max[:2]))
        return out

    def _base_free(self, xy, obstacles) -> bool:
        half = np.array(BASE_FOOTPRINT_HALF) + BASE_CLEARANCE_M
        lo, hi = np.asarray(xy) - half, np.asarray(xy) + half
        return all(np.any(hi <= a) or np.any(lo >= b) for a, b in obstacles)

    def base_goal(self, point: np.ndarray, side: str, standoff: float = REACH_STANDOFF_M) -> np.ndarray:
        """The base position (yaw 0) that puts ``point`` ``standoff`` ahead of ``side``'s shoulder, backed
        off until the straight path there is collision-free."""
        start = self.sim.robot_state().base_pose[:2]
        lateral = ARM_LATERAL_M if side == "left" else -ARM_LATERAL_M
        goal = np.array([point[0] - standoff, point[1] - lateral])
        if goal[0] <= start[0]:
            goal[0] = start[0]
        obstacles = self._obstacles()
        for _ in range(100):
            path = [start + (goal - start) * f for f in np.linspace(0.0, 1.0, 25)]
            if all(self._base_free(p, obstacles) for p in path[1:]):
                return goal
            goal = goal - np.array([0.02, 0.0])
            if goal[0] <= start[0]:
                return np.array([start[0], goal[1]]) if self._base_free((start[0], goal[1]), obstacles) else start
        return start


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
        yield from self.wait(SETTLE_STEPS)
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


# ----------------------------------------------------------------------------- placement

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
        yield from self.wait(SETTLE_STEPS)
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
        yield from self.wait(SETTLE_STEPS)
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
        yield from self.wait(SETTLE_STEPS)
        yield from self.release(side)
        end = waypoints[-1]
        yield from self.line_eef(side, end, end - [RETREAT_M + 0.1, 0.0, 0.0], self.quat, PUSH_SPEED_M_S)
        yield from self.wait(30)


EXPERTS = {"reach": ReachExpert, "reach_base_proximity": ReachExpert,
           "directional_placement": DirectionalPlacementExpert, "container_placement": ContainerPlacementExpert,
           "navigation": NavigationExpert}


def make_expert(backend: SimBackend, instance: TaskInstance) -> ScriptedExpert:
    """The scripted expert for ``instance``'s outcome-rule family."""
    if instance.family not in EXPERTS:
        raise ValueError(f"no scripted expert for family {instance.family!r} (task {instance.task!r}); "
                         f"known families: {sorted(EXPERTS)}")
    return EXPERTS[instance.family](backend, instance)
