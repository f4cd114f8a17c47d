"""Blocking motion primitives of the agent API (Appendix 16.5), executed step by step on an episode.

:class:`Motor` drives an :class:`~bspatial.tasks.episode.EpisodeRun` with the scripted experts' machinery
(:class:`~bspatial.tasks.experts.motion.ScriptedExpert`: the backend's IK seeded with the commanded joints,
the gripper script, the base velocity ramp and the experts' speeds and gains), so a program's motions
obey the same dynamics limits as the demonstrations. Each call runs until it finishes or fails and
returns a :class:`MotionResult`; a failure names one of the paper's reasons:

* ``stalled``: the hand cannot follow (contact or reach limit: IK misses the waypoint, or the hand lags
  the commanded line for :data:`STALL_STEPS` steps, or ends farther than :data:`ARRIVE_TOL_M`);
* ``blocked``: the base is commanded but makes no progress for :data:`BLOCK_WINDOW_STEPS` steps;
* ``pushing``: a hand link presses on something with more than :data:`PUSH_FORCE_N`; the arm then backs
  off :data:`BACKOFF_M` along the way it came;
* ``timeout``: the motion did not finish within its step cap, or the episode ended during it.

Between calls the robot holds its commanded joints (the commanded gripper, not the measured opening, so
an assisted grasp is never released by a hold).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from bspatial.catalog.schema import ACTION_SLICES, CONTROL_HZ
from bspatial.sim import robot as robot_mod
from bspatial.tasks.episode import EEF_LINKS, EpisodeRun
from bspatial.tasks.experts.motion import (
    BASE_GAIN,
    BASE_SPEED_M_S,
    IK_MAX_ITERATIONS,
    ScriptedExpert,
)

Reason = Literal["stalled", "blocked", "pushing", "timeout"]

ARRIVE_TOL_M = 0.02
"""A hand motion succeeds when the end-effector ends within this distance (m) of the goal."""
REACH_TOL_M = 0.01
"""IK must reach each waypoint of the line within this (m); otherwise the goal is out of reach (stalled)."""
STALL_LAG_M = 0.04
"""... and the hand stalls when it lags the commanded waypoint by more than this (m) ..."""
STALL_STEPS = 15
"""... for this many consecutive steps (0.5 s)."""
PUSH_FORCE_N = 60.0
"""Summed normal force (N) of one hand's links on anything outside the robot that counts as pushing."""
BACKOFF_M = 0.05
"""After pushing, the hand backs off this far (m) along the way it came."""
BASE_ARRIVE_TOL_M = 0.02
"""A base motion succeeds within this position error (m) ..."""
BASE_YAW_TOL_RAD = 0.03
"""... and this heading error (rad)."""
BLOCK_WINDOW_STEPS = 15
"""The base is blocked when, over this many steps (0.5 s) of a command above :data:`BLOCK_MIN_COMMAND` ..."""
BLOCK_MIN_COMMAND = 0.05
"""... (m/s, yaw rate counted at :data:`YAW_LEVER_M`) ..."""
BLOCK_PROGRESS_M = 0.01
"""... it moved less than this (m, yaw counted at :data:`YAW_LEVER_M`)."""
YAW_LEVER_M = 0.3
"""Heading changes count as motion of a point this far (m) from the base centre (the base half-length)."""
DEFAULT_EE_SPEED_M_S = 0.2
"""``move_ee_to`` / ``move_ee_by`` speed when the program gives none (m/s)."""
MAX_EE_SPEED_M_S = 0.5
"""Fastest hand speed a program may ask for (m/s): the experts' transit speed is 0.35."""
CATCH_UP_STEPS = 15
"""Hold steps after a hand line for the arm to catch up before the arrival check."""
CAP_FACTOR, CAP_SLACK_S = 2.0, 2.0
"""A motion's step cap: twice its nominal duration plus 2 s; beyond it the motion times out."""
GRIPPER_STEPS = 12
"""Steps of an open / close command (the experts' gripper script)."""
MAX_WAIT_S = 60.0
"""Longest single ``wait`` (s)."""


@dataclass(frozen=True)
class MotionResult:
    """What a motion call returns: success, the failure reason (None on success), a sentence, the steps it
    took, and for ``approach`` the target point re-expressed in the new base frame."""

    success: bool
    reason: Reason | None = None
    detail: str = ""
    steps: int = 0
    point: tuple[float, float, float] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        return {"success": self.success, "reason": self.reason, "detail": self.detail, "steps": self.steps,
                "point": None if self.point is None else list(self.point)}


def _cap(seconds: float) -> int:
    return int(math.ceil((CAP_FACTOR * seconds + CAP_SLACK_S) * CONTROL_HZ))


class Motor(ScriptedExpert):
    """The motion side of the agent API over one episode (see the module docstring).

    Args:
        run: the running episode; every action goes through :meth:`EpisodeRun.step`.
    """

    def __init__(self, run: EpisodeRun) -> None:
        super().__init__(run.backend, run.instance)
        self.run = run
        self._target = run.backend.hold_action()
        self._target[ACTION_SLICES["base"]] = 0.0
        self.use_torso = False

    # ------------------------------------------------------------------ stepping

    def ik(self, side: str, pos, quat):
        """IK of ``side`` (torso too when the call asked for it), seeded with the commanded joints."""
        return self.sim.solve_ik(side, pos, quat, use_torso=self.use_torso, seed_action=self._target,
                                 max_iterations=IK_MAX_ITERATIONS)

    def _set_joints(self, side: str, q: np.ndarray) -> None:
        if self.use_torso:
            self._command(side, q)
        else:
            self._target[ACTION_SLICES[f"{side}_arm"]] = q

    def _step(self, action: np.ndarray) -> bool:
        """Apply one action through the base ramp; False once the episode has ended (nothing applied)."""
        if self.run.done:
            return False
        self.run.step(self._ramp(action))
        return True

    def _ended(self, steps: int) -> MotionResult:
        return MotionResult(False, "timeout", f"the episode ended ({self.run.status}) at step {self.run.steps}",
                            steps)

    def hold_steps(self, n: int) -> MotionResult:
        """Hold still for ``n`` steps (``wait``)."""
        for i in range(n):
            if not self._step(self._target.copy()):
                return self._ended(i)
        return MotionResult(True, steps=n)

    def hold_until_done(self) -> int:
        """Hold still until the episode ends (after the program stopped); returns the steps taken."""
        n = 0
        while self._step(self._target.copy()):
            n += 1
        return n

    def _stop_base(self) -> int:
        """Hold until the ramped base command is back at rest (it decelerates at the ramp's limits)."""
        n = 0
        while np.any(np.abs(self._ramp.command) > 1e-9) and self._step(self._target.copy()):
            n += 1
        return n

    # ------------------------------------------------------------------ base

    def drive(self, goal_xy, goal_yaw: float) -> MotionResult:
        """Holonomic base motion to world ``goal_xy`` and heading ``goal_yaw``, closed-loop on the pose."""
        goal = np.asarray(goal_xy, float)
        x, y, th = self.sim.robot_state().base_pose
        distance, turn = float(np.linalg.norm(goal - (x, y))), abs(math.remainder(goal_yaw - th, math.tau))
        cap = _cap(distance / BASE_SPEED_M_S + turn / robot_mod.BASE_MAX_YAW_RATE)
        window: deque[np.ndarray] = deque(maxlen=BLOCK_WINDOW_STEPS + 1)
        result = None
        for i in range(cap):
            x, y, th = self.sim.robot_state().base_pose
            err, yaw_err = goal - (x, y), math.remainder(goal_yaw - th, math.tau)
            if np.linalg.norm(err) < BASE_ARRIVE_TOL_M and abs(yaw_err) < BASE_YAW_TOL_RAD:
                result = MotionResult(True, steps=i)
                break
            v = BASE_GAIN * err
            speed = float(np.linalg.norm(v))
            if speed > BASE_SPEED_M_S:
                v *= BASE_SPEED_M_S / speed
            c, s = math.cos(th), math.sin(th)
            action = self._target.copy()
            action[ACTION_SLICES["base"]] = (c * v[0] + s * v[1], -s * v[0] + c * v[1], BASE_GAIN * yaw_err)
            if not self._step(action):
                return self._ended(i)
            window.append(np.array([x, y, th]))
            if len(window) == window.maxlen and self._no_progress(window):
                result = MotionResult(False, "blocked", f"the base made under {BLOCK_PROGRESS_M} m of progress "
                                      f"in {BLOCK_WINDOW_STEPS} steps; stopped {np.linalg.norm(err):.3f} m short", i + 1)
                break
        if result is None:
            result = MotionResult(False, "timeout", f"the base did not arrive within {cap} steps", cap)
        stopping = self._stop_base()
        return MotionResult(result.success, result.reason, result.detail, result.steps + stopping)

    def _no_progress(self, window: deque) -> bool:
        command = self._ramp.command
        if float(np.linalg.norm(command[:2])) + YAW_LEVER_M * abs(float(command[2])) < BLOCK_MIN_COMMAND:
            return False
        first, last = window[0], window[-1]
        moved = float(np.linalg.norm(last[:2] - first[:2])) + YAW_LEVER_M * abs(math.remainder(last[2] - first[2], math.tau))
        return moved < BLOCK_PROGRESS_M

    # ------------------------------------------------------------------ hand

    def line(self, side: str, goal, speed: float, use_torso: bool) -> MotionResult:
        """Straight-line motion of ``side``'s end-effector to world ``goal`` (orientation free)."""
        self.use_torso = bool(use_torso)
        goal = np.asarray(goal, float)
        start = self.sim.robot_state().eef_pos[side].copy()
        length = float(np.linalg.norm(goal - start))
        n = max(1, int(math.ceil(length / (speed / CONTROL_HZ))))
        lagging = 0
        for i in range(1, n + 1):
            waypoint = start + (goal - start) * i / n
            solution = self.ik(side, waypoint, None)
            if solution.pos_error > REACH_TOL_M:
                self._stop_base()
                return MotionResult(False, "stalled", f"reach limit: the {side} hand cannot reach "
                                    f"{np.round(waypoint, 3).tolist()} (IK error {solution.pos_error:.3f} m)", i - 1)
            self._set_joints(side, solution.qpos)
            if not self._step(self._target.copy()):
                return self._ended(i - 1)
            if self._pressing(side) > PUSH_FORCE_N:
                force = self._pressing(side)
                back = self._back_off(side, start, goal)
                return MotionResult(False, "pushing", f"the {side} hand pressed with {force:.0f} N "
                                    f"(limit {PUSH_FORCE_N:.0f} N) and backed off {BACKOFF_M} m", i + back)
            lag = float(np.linalg.norm(self.sim.robot_state().eef_pos[side] - waypoint))
            lagging = lagging + 1 if lag > STALL_LAG_M else 0
            if lagging >= STALL_STEPS:
                return MotionResult(False, "stalled", f"contact: the {side} hand lagged the line by {lag:.3f} m "
                                    f"for {STALL_STEPS} steps", i)
        for j in range(CATCH_UP_STEPS):
            if float(np.linalg.norm(self.sim.robot_state().eef_pos[side] - goal)) < ARRIVE_TOL_M:
                return MotionResult(True, steps=n + j)
            if not self._step(self._target.copy()):
                return self._ended(n + j)
        error = float(np.linalg.norm(self.sim.robot_state().eef_pos[side] - goal))
        if error < ARRIVE_TOL_M:
            return MotionResult(True, steps=n + CATCH_UP_STEPS)
        return MotionResult(False, "stalled", f"the {side} hand ended {error:.3f} m from the goal", n + CATCH_UP_STEPS)

    def _pressing(self, side: str) -> float:
        """Summed normal force of ``side``'s hand links on bodies outside the robot."""
        links = {name for name in EEF_LINKS if name.startswith(f"robot/{side}_")}
        total = 0.0
        for c in self.sim.contacts():
            if (c.body_a in links and not c.body_b.startswith("robot/")) or \
               (c.body_b in links and not c.body_a.startswith("robot/")):
                total += max(0.0, c.normal_force)
        return total

    def _back_off(self, side: str, start, goal) -> int:
        direction = np.asarray(goal, float) - np.asarray(start, float)
        norm = float(np.linalg.norm(direction))
        if norm == 0:
            return 0
        here = self.sim.robot_state().eef_pos[side].copy()
        target = here - BACKOFF_M * direction / norm
        n = max(1, int(math.ceil(BACKOFF_M / (DEFAULT_EE_SPEED_M_S / CONTROL_HZ))))
        for i in range(1, n + 1):
            self._set_joints(side, self.ik(side, here + (target - here) * i / n, None).qpos)
            if not self._step(self._target.copy()):
                return i - 1
        return n

    # ------------------------------------------------------------------ gripper

    def gripper(self, side: str, command: float) -> MotionResult:
        """Open (+1) or close (-1) ``side``'s gripper over :data:`GRIPPER_STEPS` steps."""
        for i, action in enumerate(self.set_gripper(side, command, GRIPPER_STEPS)):
            if not self._step(action):
                return self._ended(i)
        return MotionResult(True, steps=GRIPPER_STEPS)
