"""The runner: one episode of a :class:`~bspatial.tasks.base.TaskInstance` under a policy, recorded as an
:class:`~bspatial.scoring.trace.EpisodeTrace`.

World (the backend), task (the instance) and runner (this module) stay separate. The
policy is any callable ``policy(observation) -> action`` with a 23-dim action (R1Pro layout); it sees an
:class:`Observation` (step index, instruction, robot state, optional camera frames). Privileged
policies such as the scripted experts hold the backend themselves.

Per step the runner records exactly what the Table S4 rules read (trace schema of
:mod:`bspatial.scoring.trace`): both end-effector positions, every reach candidate's bounding-box
centre and whether a gripper link touches it, the base pose, and for placement tasks the manipulated
object's bounding-box centre and held flag (releases are the held -> not-held transitions); the
countertop / container geometry comes from the instance. Navigation episodes evaluate the instance's
goal criterion (:func:`bspatial.tasks.navigation.goal_reached`) on the base pose every step;
``nav_success`` is whether it held at any step.

Early stop (``stop_when_decided``; implementation choices, the paper only says episodes end at the
budget or on commitment):

* reach families: the first step with an end-effector-candidate contact decides the outcome (Table S4
  "first contact"), so the episode ends there;
* navigation: the first step at which the goal criterion holds (success is then decided);
* placement families: a release commits the placement; the episode ends once the released object has
  been at rest for :data:`AT_REST_STEPS` steps (the last row is then its resting pose, as the trace
  schema requires) or :data:`MAX_STEPS_AFTER_RELEASE` after the release, whichever comes first.

The loop itself is :class:`EpisodeRun`, advanced one action at a time: :func:`run_episode` drives it
with a policy callable, and the gymnasium env (:mod:`bspatial.evaluation.envs`) steps it from outside,
so both end episodes and score them by the same rules.

Physics instability ends the episode with status ``sim_error``; the rows recorded before it are kept
(the failing step's state is not recorded), and the caller's run goes on.

Example:
    >>> from bspatial.sim.mujoco_backend import MujocoBackend
    >>> from bspatial.tasks import sample_instance
    >>> sim = MujocoBackend()
    >>> inst = sample_instance("reach_plate", "largest", 0)
    >>> sim.load(inst.scene)
    >>> hold = sim.hold_action()
    >>> result = run_episode(sim, inst, lambda obs: hold, max_steps=5)
    >>> result.status, result.trace.num_steps
    ('timeout', 5)
    >>> sim.close()
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Literal

import numpy as np

from bspatial.scoring.action import EpisodeOutcome, outcome_from_trace
from bspatial.scoring.trace import EpisodeTrace
from bspatial.catalog.schema import ARMS
from bspatial.sim.backend import CameraFrame, RobotState, SimBackend
from bspatial.tasks.base import TaskInstance
from bspatial.tasks.start import warm_up

logger = logging.getLogger(__name__)

EEF_LINKS: frozenset[str] = frozenset(
    f"robot/{side}_{link}" for side in ARMS for link in ("hand", "finger_a", "finger_b"))
"""Robot bodies that count as the end-effector for reach contacts (trace schema: "gripper links included")."""

AT_REST_STEPS = 10
"""Placement: consecutive steps (1/3 s at 30 Hz) the released object must be at rest before the episode ends."""
AT_REST_SPEED_M_S = 0.02
"""... at rest = bounding-box centre speed below this (m/s)."""
MAX_STEPS_AFTER_RELEASE = 60
"""Placement: the episode ends at most this many steps (2 s) after a release, at rest or not."""

Status = Literal["decided", "timeout", "sim_error"]

Policy = Callable[["Observation"], np.ndarray]


@dataclass(frozen=True)
class Observation:
    """What a policy sees at one step.

    Attributes:
        step: index of the action about to be chosen (0-based).
        instruction: the task instruction.
        state: the robot state (its ``proprio`` is the BEHAVIOR-style vector a learned policy reads).
        images: camera name -> frame, for the cameras the runner was asked to render (empty otherwise).
    """

    step: int
    instruction: str
    state: RobotState
    images: dict[str, CameraFrame] = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodeResult:
    """The outcome of :func:`run_episode`.

    Attributes:
        trace: the recorded trace; None only when the very first step failed (nothing to record).
        outcome: Table S4 label of the trace (None when ``trace`` is None).
        status: "decided" (stopped early on a commitment), "timeout" (ran ``max_steps``) or "sim_error".
        steps: actions applied (including a failing one).
        message: the backend's error message for a sim_error, else "".
    """

    trace: EpisodeTrace | None
    outcome: EpisodeOutcome | None
    status: Status
    steps: int
    message: str = ""


class _Recorder:
    """Accumulates the per-step rows of a trace for one instance."""

    def __init__(self, backend: SimBackend, instance: TaskInstance) -> None:
        self.backend, self.instance = backend, instance
        self.reach = instance.family in ("reach", "reach_base_proximity")
        self.navigation = instance.family == "navigation"
        self.rows: dict[str, list] = {k: [] for k in ("eef", "cand", "contact", "base", "obj", "held", "goal")}
        if self.navigation:
            from bspatial.tasks.navigation import goal_reached
            self._goal_reached = goal_reached

    def record(self, state: RobotState) -> None:
        b, inst, rows = self.backend, self.instance, self.rows
        rows["eef"].append([state.eef_pos[s] for s in ARMS])
        rows["base"].append(np.asarray(state.base_pose, float))
        if self.reach:
            rows["cand"].append([b.object_bbox(c).center for c in inst.candidates])
            rows["contact"].append(self._contacts())
        if self.navigation:
            rows["goal"].append(self._goal_reached(inst, state.base_pose))
        if inst.manipulated is not None:
            # The object's frame origin (bottom-face centre for every bspatial.tasks object), the
            # point the trace schema, the container bands and the countertop rest band refer to.
            rows["obj"].append(b.object_pose(inst.manipulated).position)
            rows["held"].append(inst.manipulated in state.grasped.values())

    def _contacts(self) -> list[bool]:
        names = self.instance.candidates
        touched = set()
        for c in self.backend.contacts():
            if c.body_a in EEF_LINKS and c.body_b in names:
                touched.add(c.body_b)
            elif c.body_b in EEF_LINKS and c.body_a in names:
                touched.add(c.body_a)
        return [n in touched for n in names]

    @property
    def num_steps(self) -> int:
        return len(self.rows["base"])

    def trace(self, split: str) -> EpisodeTrace | None:
        if not self.num_steps:
            return None
        inst, rows = self.instance, self.rows
        reach = self.reach
        placement = inst.manipulated is not None
        return EpisodeTrace(
            task=inst.task, split=split, variant=inst.variant, instruction=inst.instruction,
            seed=0 if inst.seed is None else inst.seed, step_budget=inst.step_budget,
            eef_positions=np.array(rows["eef"]),
            candidate_names=inst.candidates if reach else (),
            instructed_candidate=inst.instructed_candidate if reach else None,
            candidate_positions=np.array(rows["cand"]) if reach else None,
            eef_contacts=np.array(rows["contact"], dtype=bool) if reach else None,
            base_poses=np.array(rows["base"]),
            object_positions=np.array(rows["obj"]) if placement else None,
            object_held=np.array(rows["held"], dtype=bool) if placement else None,
            countertop=inst.countertop, container=inst.container,
            nav_success=bool(any(rows["goal"])) if self.navigation else None)


def _placement_settled(rows: dict[str, list]) -> bool:
    """After a release: the object has been at rest AT_REST_STEPS steps, or MAX_STEPS_AFTER_RELEASE have passed."""
    held = np.asarray(rows["held"], bool)
    if held.size < 2 or held[-1] or not held.any():
        return False
    since_release = held.size - 1 - int(np.flatnonzero(held)[-1])
    if since_release >= MAX_STEPS_AFTER_RELEASE:
        return True
    if since_release < AT_REST_STEPS:
        return False
    recent = np.asarray(rows["obj"][-AT_REST_STEPS - 1:])
    speeds = np.linalg.norm(np.diff(recent, axis=0), axis=1) * 30.0
    return bool(np.all(speeds < AT_REST_SPEED_M_S))


def _decided(recorder: _Recorder) -> bool:
    if recorder.reach:
        return bool(np.any(recorder.rows["contact"][-1]))
    if recorder.navigation:
        return bool(recorder.rows["goal"][-1])
    return _placement_settled(recorder.rows)


class EpisodeRun:
    """One episode advanced a step at a time: the loop :func:`run_episode` drives, and the gymnasium env steps.

    One implementation of the step loop and its stopping rules for every caller (``bspatial rollout``,
    the demos, :mod:`bspatial.evaluation.envs`): construction resets the world (or loads
    ``instance.scene``); then :meth:`observation` / :meth:`step` alternate until :attr:`done`, and
    :meth:`result` scores the recorded trace.

    Args:
        backend: a :class:`~bspatial.sim.backend.SimBackend` holding ``instance.scene`` (pass ``load=True``
            to load it here); the world is reset first.
        instance: the sampled task instance.
        split: the trace's split (:data:`bspatial.scoring.trace.SPLITS`).
        max_steps: step limit, at most the instance's step budget (default: the budget).
        stop_when_decided: end early once the outcome is committed (see the module docstring).
        load: load ``instance.scene`` into the backend first.

    Construction brings the world to the start state (:func:`bspatial.tasks.start.warm_up`): the warm-up steps are
    not part of the episode (no row, no step counted), as they are not part of a demonstration.

    Attributes:
        warm_up_steps: simulator steps the warm-up took (grippers settled to the family's start command).
        steps: actions applied so far (a failing one included).
        status: None while running, then "decided", "timeout" or "sim_error".
        state: the robot state the next action is chosen from.
    """

    def __init__(self, backend: SimBackend, instance: TaskInstance, *, split: str = "train",
                 max_steps: int | None = None, stop_when_decided: bool = True, load: bool = False) -> None:
        budget = instance.step_budget if max_steps is None else int(max_steps)
        if not 1 <= budget <= instance.step_budget:
            raise ValueError(f"max_steps must be in 1..{instance.step_budget} (the step budget), got {max_steps!r}")
        if load:
            backend.load(instance.scene)
        else:
            backend.reset()
        # The start state of every episode, demonstration or rollout (bspatial.tasks.start).
        self.warm_up_steps = warm_up(backend, instance)
        self.backend, self.instance, self.split = backend, instance, split
        self.budget, self.stop_when_decided = budget, stop_when_decided
        self.recorder = _Recorder(backend, instance)
        self.state: RobotState = backend.robot_state()
        self.steps = 0
        self.status: Status | None = None
        self.message = ""

    @property
    def done(self) -> bool:
        return self.status is not None

    def observation(self, cameras: tuple[str, ...] = (), *, rgb_only: bool = False) -> Observation:
        """What the policy sees before the next action, with ``cameras`` rendered (``rgb_only``: without depth and
        segmentation, one render pass instead of two; the same RGB)."""
        images = {c: self.backend.render(c, rgb_only=rgb_only) for c in cameras}
        return Observation(self.steps, self.instance.instruction, self.state, images)

    def step(self, action: np.ndarray) -> Status | None:
        """Apply one action, record the row the rules read and decide whether the episode ends.

        Returns:
            the final status once the episode has ended, else None.
        """
        if self.done:
            raise RuntimeError(f"the episode has ended (status {self.status!r}); start a new one")
        inst = self.instance
        result = self.backend.step(action)
        self.steps += 1
        if result.status != "ok":
            self.status, self.message = "sim_error", result.message
            logger.warning("episode %s/%s seed %s: sim_error at step %d: %s", inst.task, inst.variant,
                           inst.seed, self.steps - 1, self.message)
            return self.status
        self.state = self.backend.robot_state()
        self.recorder.record(self.state)
        if self.stop_when_decided and _decided(self.recorder):
            self.status = "decided"
        elif self.steps >= self.budget:
            self.status = "timeout"
        return self.status

    def result(self) -> EpisodeResult:
        """The recorded trace and its Table S4 outcome (call once :attr:`done`)."""
        if not self.done:
            raise RuntimeError(f"the episode is still running (step {self.steps} of {self.budget})")
        trace = self.recorder.trace(self.split)
        outcome = outcome_from_trace(trace) if trace is not None else None
        return EpisodeResult(trace, outcome, self.status, self.steps, self.message)


def run_episode(backend: SimBackend, instance: TaskInstance, policy: Policy, *, split: str = "train", max_steps: int | None = None,
                cameras: tuple[str, ...] = (), stop_when_decided: bool = True, load: bool = False) -> EpisodeResult:
    """Run ``policy`` on ``instance`` for up to ``max_steps`` (default: the instance's step budget).

    The loop over :class:`EpisodeRun` (whose arguments these are); ``policy`` maps an
    :class:`Observation` to a 23-dim action, and ``cameras`` are rendered into every observation (none by
    default: privileged experts need none).
    """
    run = EpisodeRun(backend, instance, split=split, max_steps=max_steps, stop_when_decided=stop_when_decided,
                     load=load)
    while not run.done:
        run.step(policy(run.observation(cameras)))
    return run.result()


def load_instance(backend: SimBackend, task: str, variant: str, seed: int,
                  transform: Callable[[TaskInstance], TaskInstance] | None = None):
    """Sample ``task``'s instance for ``variant`` and ``seed`` and load it into ``backend``.

    The world is left in the episode's start state (:func:`bspatial.tasks.start.warm_up`). Returns
    ``(instance, spawn_check)``. Navigation instances come from
    :func:`bspatial.tasks.navigation.sample_validated_instance` (the spawn passes the physical settling
    checks; ``spawn_check`` holds its measurements, taken before ``transform``); manipulation ones from
    :func:`bspatial.tasks.registry.sample_instance` (``spawn_check`` is None). Either is passed through
    ``transform`` (e.g. a Spa-Bench condition, :func:`bspatial.tasks.conditions.apply_condition`, or a
    perturbation, :func:`bspatial.tasks.perturbations.perturb_instance`) before the scene is loaded.
    """
    from bspatial.tasks.registry import NAVIGATION_REGISTRY, canonical_task_name, sample_instance

    if canonical_task_name(task) in NAVIGATION_REGISTRY:
        from bspatial.tasks.navigation import sample_validated_instance

        instance, check = sample_validated_instance(backend, canonical_task_name(task), seed)
        if transform is not None:   # e.g. a perturbation axis: applied to the validated spawn's scene
            instance = transform(instance)
            backend.load(instance.scene)
    else:
        instance, check = sample_instance(task, variant, seed), None
        if transform is not None:
            instance = transform(instance)
        backend.load(instance.scene)
    warm_up(backend, instance)   # a policy built on the loaded world sees the start state (bspatial.tasks.start)
    return instance, check
