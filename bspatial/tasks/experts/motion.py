"""The scripted experts' shared machinery: the action script loop, motion primitives and base placement.

A script is a Python generator that yields one 23-dim action per control step; :class:`ScriptedExpert`
wraps it in the policy callable that :func:`bspatial.tasks.episode.run_episode` drives, passes every action
through the base velocity ramp (:class:`BaseVelocityRamp`, :data:`BASE_MAX_ACCEL_M_S2`) and holds still
once the script ends. The primitives (joint and Cartesian moves through the backend's IK, base drives,
gripper commands) and the collision-free base placement are shared by every manipulation expert.
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from bspatial.catalog.robot import BASE_HALF_EXTENTS_M, BASE_TOP_M
from bspatial.catalog.schema import ACTION_SLICES, CONTROL_HZ
from bspatial.sim import robot as robot_mod
from bspatial.sim.backend import IKResult, SimBackend
from bspatial.tasks.base import TaskInstance

BASE_SPEED_M_S = 0.4            # cruise speed of the scripted base (BASE_MAX_SPEED is 1.0)
BASE_MAX_ACCEL_M_S2 = 1.0
"""Velocity ramp (ours, not the paper's): the commanded planar base velocity (vx, vy as a vector) changes by at
most this much per second, i.e. 1/30 m/s per control step; cruise (0.4 m/s) is reached in 12 steps (0.4 s), the
navigation expert's 0.6 m/s in 18. A typical indoor mobile-base acceleration; the sim's base tracks any command
within a step (robot.BASE_KV), so without it a demonstration jumps from rest to cruise in one frame."""
BASE_MAX_YAW_ACCEL_RAD_S2 = 3.0
"""... and the commanded yaw rate by at most this much per second (0.1 rad/s per step): the sim's yaw-rate clip
(robot.BASE_MAX_YAW_RATE, 1.5 rad/s) is reached in 15 steps (0.5 s)."""
BASE_GAIN = 2.0                 # 1/s, proportional base position gain
BASE_TOL_M = 0.01
IK_MAX_ITERATIONS = 300          # per waypoint: the setting the experts were calibrated with (the backend default is 200)
JOINT_SPEED_RAD_S = 1.2         # max joint speed of scripted joint-space moves
REACH_STANDOFF_M = 0.62         # target contact point this far ahead of the base centre (x, robot frame)
ARM_LATERAL_M = 0.22            # ... and this far towards the chosen arm's side
PRE_CONTACT_M = 0.10            # pre-contact point this far back along the approach direction
TRANSIT_SPEED_M_S = 0.35        # Cartesian speed of the hand between waypoints
PUSH_SPEED_M_S = 0.12           # approach speed through the contact point
PUSH_DEPTH_FRACTION = 0.8       # the push aims this fraction of the target's depth past the contact point
PUSH_DEPTH_MIN_M = 0.03         # ... and at least this far (thin plates, tools): contact happens earlier
PAUSE_AFTER_MOVE_STEPS = 6          # hold steps after each scripted move, before the next one starts
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


class BaseVelocityRamp:
    """Rate limiter on the base command (action 0:3): clips it to what the base executes, then ramps towards it.

    Per step the planar command (vx, vy) moves towards the wanted one by at most ``max_accel / CONTROL_HZ`` (as a
    vector, so the direction of travel is kept) and wz by at most ``max_yaw_accel / CONTROL_HZ``. The wanted command
    is first clipped as the simulator clips it (``|vx|, |vy| <= BASE_MAX_SPEED``, ``|wz| <= BASE_MAX_YAW_RATE``),
    so a recorded action is the velocity the base is driven with. Every other dimension passes unchanged. The
    experts' base drives are closed-loop on the measured pose, so a ramped start only arrives a few steps later.

    Example:
        >>> ramp = BaseVelocityRamp()
        >>> [round(float(ramp(np.array([0.4, 0.0, 0.0]))[0]), 4) for _ in range(3)]
        [0.0333, 0.0667, 0.1]
    """

    def __init__(self, max_accel: float = BASE_MAX_ACCEL_M_S2,
                 max_yaw_accel: float = BASE_MAX_YAW_ACCEL_RAD_S2) -> None:
        if not (max_accel > 0 and max_yaw_accel > 0):
            raise ValueError(f"accelerations must be positive, got max_accel={max_accel!r}, "
                             f"max_yaw_accel={max_yaw_accel!r}")
        self.step_v, self.step_w = max_accel / CONTROL_HZ, max_yaw_accel / CONTROL_HZ
        self.command = np.zeros(3)   # the base starts at rest

    def __call__(self, action: np.ndarray) -> np.ndarray:
        out = np.array(action, copy=True)
        base = ACTION_SLICES["base"]
        vx, vy, wz = np.asarray(out[base], float)
        want_v = np.clip([vx, vy], -robot_mod.BASE_MAX_SPEED, robot_mod.BASE_MAX_SPEED)
        want_w = float(np.clip(wz, -robot_mod.BASE_MAX_YAW_RATE, robot_mod.BASE_MAX_YAW_RATE))
        dv = want_v - self.command[:2]
        norm = float(np.linalg.norm(dv))
        if norm > self.step_v:
            dv *= self.step_v / norm
        dw = float(np.clip(want_w - self.command[2], -self.step_w, self.step_w))
        self.command = np.array([*(self.command[:2] + dv), self.command[2] + dw])
        out[base] = self.command
        return out


class Ramped:
    """A policy whose base commands go through :class:`BaseVelocityRamp` (reset at step 0), for the policies that do
    not ramp themselves: the navigation expert (:func:`bspatial.tasks.experts.make_expert`) and the demos' paperback
    prefix. Attribute access falls through to the wrapped policy."""

    def __init__(self, policy) -> None:
        self.policy = policy
        self.ramp: BaseVelocityRamp | None = None

    def __call__(self, observation) -> np.ndarray:
        if self.ramp is None or observation.step == 0:
            self.ramp = BaseVelocityRamp()
        return self.ramp(np.asarray(self.policy(observation)))

    def __getattr__(self, name: str):
        return getattr(self.__dict__["policy"], name)


class ScriptedExpert:
    """A policy callable over a privileged script (see the module docstring).

    Args:
        backend: the backend running ``instance``.
        instance: the task instance.
    """

    def __init__(self, backend: SimBackend, instance: TaskInstance) -> None:
        self.sim, self.instance = backend, instance
        self._script: Iterator[np.ndarray] | None = None
        self._wanted: np.ndarray | None = None   # the script's latest action, before the base ramp
        self._last: np.ndarray | None = None
        self._ramp = BaseVelocityRamp()

    def __call__(self, observation) -> np.ndarray:
        if self._script is None or observation.step == 0:
            self._script = self.script()
            self._wanted = self._last = None
            self._ramp = BaseVelocityRamp()
        try:
            self._wanted = next(self._script)
        except StopIteration:
            if self._wanted is None:
                self._wanted = self.sim.hold_action()
        self._last = self._ramp(self._wanted)   # every base command goes through the ramp
        return self._last

    @property
    def last_action(self) -> np.ndarray | None:
        """The action returned at the latest step (None before the first)."""
        return None if self._last is None else self._last.copy()

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
        yield from self.wait(PAUSE_AFTER_MOVE_STEPS)

    def ik(self, side: str, pos, quat) -> IKResult:
        """Torso + arm IK seeded with the currently commanded joints (the seed of the next waypoint)."""
        return self.sim.solve_ik(side, pos, quat, use_torso=True, seed_action=self._target,
                                 max_iterations=IK_MAX_ITERATIONS)

    def _command(self, side: str, q: np.ndarray) -> None:
        self._target[ACTION_SLICES["torso"]] = q[:4]
        self._target[ACTION_SLICES[f"{side}_arm"]] = q[4:]

    def move_joints(self, side: str, q: np.ndarray, settle: int = PAUSE_AFTER_MOVE_STEPS) -> Iterator[np.ndarray]:
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
        half = np.array(BASE_HALF_EXTENTS_M[:2]) + BASE_CLEARANCE_M
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
