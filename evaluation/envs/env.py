"""A gymnasium env over the simulator: one task's evaluation episodes, stepped by the rollout's own loop.

``BSpatialEnv(task, split)`` serves the split manifest's episodes of ``task`` (the entries ``bspatial rollout``
plans, :func:`bspatial.evaluation.rollout.plan.plan_episodes`). Each episode is loaded the way a rollout loads
it (:func:`bspatial.evaluation.rollout.episodes.load_instance`: navigation spawns validated) and advanced by
:class:`bspatial.tasks.episode.EpisodeRun`, the loop ``bspatial rollout`` drives, so early stopping, the trace
and the Table S4 outcome are the rollout's; the finished episode's record is the rollout's result record
(:func:`bspatial.evaluation.rollout.episodes.finished_record`).

Which episode ``reset`` loads: ``options={"episode_index": i}`` picks manifest entry ``i``; else ``seed``
picks entry ``seed % n`` (``n`` manifest entries), so ``n`` consecutive seeds visit every entry once (what
``lerobot-eval`` does with ``--eval.n_episodes=n``; with ``--seed=0`` its first ``k`` episodes are entries
``0..k-1``, the episodes of ``bspatial rollout --n-episodes k``); a reset without either loads entry
``episode_offset`` the first time, then the entry ``episode_stride`` after the previous one (0 and 1 by default: the
next entry). A vector env of ``N`` copies gives copy ``i`` offset ``i`` and stride ``N``
(:mod:`bspatial.evaluation.envs.vector`), so unseeded resets and autoresets never play one entry twice.

Observation (LeRobot's gym convention, which ``lerobot-eval`` turns into policy inputs): ``{"pixels": {camera:
uint8 (H, W, 3)}, "agent_pos": float32 (84,)}``, cameras ``head``, ``left_wrist``, ``right_wrist``
(:data:`bspatial.catalog.schema.CAMERAS`) and the proprioceptive state
(:data:`bspatial.catalog.schema.PROPRIO_LAYOUT`). In the demos these are ``observation.images.rgb.<camera>``
and ``observation.state`` (:data:`POLICY_KEYS` maps them). The instruction is not part of the observation
(strings do not batch in a vector env): it is the env's ``task`` and ``task_description`` attributes (what
lerobot-eval reads into the batch's ``"task"``) and ``info["task"]``.

Action: the 23-dim R1Pro action (:data:`bspatial.catalog.schema.ACTION_SLICES`). ``terminated`` when the outcome
is committed (status "decided") or the physics failed ("sim_error"); ``truncated`` at the step budget
("timeout"). ``info["is_success"]`` is the strict outcome (``outcome == "correct"``), set on the step that ends
the episode, with ``outcome``, ``soft_credit``, ``detail`` and ``failure_mode``; the reward is 1.0 on that step
for a strict success, else 0.0 (sparse, as LeRobot's benchmark envs). With ``record_dir`` every finished
episode's record is also written to ``<record_dir>/episodes/<task>-<index>.json``, a rollout run folder that
:func:`bspatial.evaluation.rollout.tables.write_tables` turns into Table 4 (soft and wrong-target rates too).

Example:
    >>> env = BSpatialEnv("reach_plate", max_steps=3)
    >>> obs, info = env.reset(seed=0)
    >>> obs["pixels"]["head"].shape, obs["agent_pos"].shape, info["episode_index"]
    ((224, 224, 3), (84,), 0)
    >>> env.task == info["task"] == env.instance.instruction
    True
    >>> for _ in range(3):
    ...     obs, reward, terminated, truncated, info = env.step(env.backend.hold_action())
    >>> truncated, info["status"], info["is_success"], env.episode_record["steps"]
    (True, 'timeout', False, 3)
    >>> env.close()
"""

from __future__ import annotations

import logging
import os
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from bspatial.evaluation.rollout.plan import TRAINING_SPLIT   # also served: place_saucer has no other split
from bspatial.catalog.schema import (ACTION_DIM, ACTION_SLICES, ARMS, CAMERAS, CONSTRUCTION_FRAME_SIZE, CONTROL_HZ,
                                     HEAD_CAMERA, POLICY_IMAGE_SIZE, STATE_DIM, STATE_KEY, image_key)

logger = logging.getLogger(__name__)

PIXELS_KEY = "pixels"
"""Observation key of the camera images (LeRobot's gym convention: ``pixels`` -> ``observation.images.*``)."""
AGENT_POS_KEY = "agent_pos"
"""Observation key of the 84-dim state (LeRobot's gym convention: ``agent_pos`` -> ``observation.state``)."""
POLICY_KEYS: dict[str, str] = {**{f"{PIXELS_KEY}/{cam}": image_key(cam) for cam in CAMERAS}, AGENT_POS_KEY: STATE_KEY}
"""Env observation key -> the demos' LeRobot feature key (BEHAVIOR's keys)."""
ENV_POLICY = "gymnasium"
"""The ``policy`` field of the env's episode records (the env does not know who chose the actions)."""
ENV_PROTOCOL = "caller"
"""The default ``protocol`` of the env's records: whoever steps the env chose every action."""


def env_observation(frames: dict[str, np.ndarray], proprio: np.ndarray) -> dict[str, Any]:
    """The env observation of rendered RGB ``frames`` (camera -> uint8 HxWx3) and a proprioceptive vector.

    One definition for the env and for :mod:`bspatial.evaluation.envs.policy_lerobot`, which feeds LeRobot
    policies the same observation in ``bspatial rollout``.
    """
    return {PIXELS_KEY: {cam: np.ascontiguousarray(rgb, dtype=np.uint8) for cam, rgb in frames.items()},
            AGENT_POS_KEY: np.asarray(proprio, dtype=np.float32)}


def default_split(task: str) -> str:
    """The split a task's env serves by default: navigation tasks "navigation", manipulation tasks "held_out",
    and a task evaluated in neither (place_saucer, Table S2) its training episodes."""
    from bspatial.catalog.tasks import TASKS, canonical_task_name

    spec = TASKS[canonical_task_name(task)]
    if spec.family == "navigation":
        return "navigation"
    return "held_out" if spec.n_heldout > 0 else TRAINING_SPLIT


def plan_env_episodes(task: str, split: str, n_episodes: int | None = None) -> list:
    """The episodes (:class:`~bspatial.construction.splits.SplitEntry`) the env of ``task`` serves on ``split``.

    Raises:
        ValueError: unknown task or split, or a task with no episodes in the split (naming the known ones).
    """
    from bspatial.evaluation.rollout.plan import plan_episodes

    return plan_episodes(split, [task], n_episodes)


def action_space() -> spaces.Box:
    """The 23-dim action's bounds: base velocity limits, joint ranges, grippers in [-1, 1]."""
    from bspatial.sim.robot import ARM_RANGE, BASE_MAX_SPEED, BASE_MAX_YAW_RATE, TORSO_RANGE

    low, high = np.empty(ACTION_DIM, np.float32), np.empty(ACTION_DIM, np.float32)
    base = np.array([BASE_MAX_SPEED, BASE_MAX_SPEED, BASE_MAX_YAW_RATE], np.float32)
    low[ACTION_SLICES["base"]], high[ACTION_SLICES["base"]] = -base, base
    low[ACTION_SLICES["torso"]], high[ACTION_SLICES["torso"]] = np.array(TORSO_RANGE, np.float32).T
    for side in ARMS:
        low[ACTION_SLICES[f"{side}_arm"]], high[ACTION_SLICES[f"{side}_arm"]] = np.array(ARM_RANGE, np.float32).T
        low[ACTION_SLICES[f"{side}_gripper"]], high[ACTION_SLICES[f"{side}_gripper"]] = -1.0, 1.0
    return spaces.Box(low, high, dtype=np.float32)


def observation_space(cameras: Sequence[str], image_size: int) -> spaces.Dict:
    pixels = spaces.Dict({cam: spaces.Box(0, 255, (image_size, image_size, 3), np.uint8) for cam in cameras})
    state = spaces.Box(-np.inf, np.inf, (STATE_DIM,), np.float32)
    return spaces.Dict({PIXELS_KEY: pixels, AGENT_POS_KEY: state})


class BSpatialEnv(gym.Env):
    """One task's evaluation episodes as a gymnasium env (see the module docstring).

    Args:
        task: task name (any spelling :func:`bspatial.catalog.tasks.canonical_task_name` accepts).
        split: "held_out", "prompt_probe", "navigation", "spa_id", "spa_ood" (the rollout splits) or "training";
            default :func:`default_split`.
        n_episodes: serve only the manifest's first ``n_episodes`` entries (default: all, Table S2's count).
        max_steps: cap on each episode's step budget (``bspatial rollout --max-steps``); None = the budget.
        cameras: cameras rendered into the observation (default all three).
        image_size: square render size (the demos' 224 by default).
        render_mode: "rgb_array" (``render()`` returns the head camera's last frame) or None.
        record_dir: folder that receives each finished episode's record (see the module docstring); None = none.
        protocol: the records' ``protocol`` (how the actions were chosen; the env cannot see it): ``"caller"`` by
            default, ``"select_action"`` under ``lerobot-eval`` (:class:`~bspatial.evaluation.envs.lerobot_env.
            BSpatialEnvConfig` says so: lerobot-eval runs the policy's ``select_action``).
        policy: the records' ``policy``, what the tables call the model choosing the actions (``"gymnasium"``).
        episode_offset, episode_stride: which entries unseeded resets load (see the module docstring).
        perturbation: perturbation axes joined by ``+`` (``"camera+light"``; :mod:`bspatial.tasks.perturbations`),
            drawn per episode from ``perturbation_seed`` and the entry's scene seed exactly as ``bspatial rollout
            --condition <axes> --seed <perturbation_seed>`` draws them; None = unperturbed. Language conditions run
            through ``bspatial rollout`` only (the env serves the planned instructions).

    Attributes:
        task_name: the canonical task name.
        task, task_description: the current episode's instruction ("" before the first reset).
        episodes: the served manifest entries (:class:`~bspatial.construction.splits.SplitEntry`).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": CONTROL_HZ}

    def __init__(self, task: str, split: str | None = None, *, n_episodes: int | None = None,
                 max_steps: int | None = None, cameras: Sequence[str] = CAMERAS, image_size: int = POLICY_IMAGE_SIZE,
                 render_mode: str | None = "rgb_array", record_dir: str | os.PathLike | None = None,
                 protocol: str = ENV_PROTOCOL, policy: str = ENV_POLICY, episode_offset: int = 0,
                 episode_stride: int = 1, perturbation: str | None = None, perturbation_seed: int = 0) -> None:
        from bspatial.catalog.tasks import canonical_task_name
        from bspatial.tasks.budgets import step_budget
        from bspatial.tasks.perturbations import axes_only

        try:
            self.task_name = canonical_task_name(task)
        except ValueError as error:
            raise ValueError(f"task: {error}") from None
        self.split = default_split(self.task_name) if split is None else split
        self.episodes = plan_env_episodes(self.task_name, self.split, n_episodes)
        cameras = tuple(cameras)
        unknown = [c for c in cameras if c not in CAMERAS]
        if not cameras or unknown or len(set(cameras)) != len(cameras):
            raise ValueError(f"cameras must be distinct names from {list(CAMERAS)}, got {list(cameras)!r}")
        if isinstance(image_size, bool) or not isinstance(image_size, int) or not 0 < image_size <= CONSTRUCTION_FRAME_SIZE:
            raise ValueError(f"image_size must be an int in 1..{CONSTRUCTION_FRAME_SIZE}, got {image_size!r}")
        if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1):
            raise ValueError(f"max_steps must be an int >= 1 or None, got {max_steps!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.cameras, self.image_size, self.max_steps, self.render_mode = cameras, image_size, max_steps, render_mode
        self.protocol, self.policy = str(protocol), str(policy)
        for name, value, least in (("episode_offset", episode_offset, 0), ("episode_stride", episode_stride, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an int >= {least}, got {value!r}")
        self.episode_offset, self.episode_stride = episode_offset, episode_stride
        self.axes, self.condition = axes_only(perturbation)
        if isinstance(perturbation_seed, bool) or not isinstance(perturbation_seed, int):
            raise ValueError(f"perturbation_seed must be an int, got {perturbation_seed!r}")
        self.perturbation_seed = perturbation_seed
        self.record_dir = None
        if record_dir is not None:
            from bspatial.common.files import require_folder_path

            self.record_dir = require_folder_path(record_dir)
        budget = step_budget(self.task_name)
        # lerobot-eval reads `_max_episode_steps` as its loop bound; the env truncates at the same step itself.
        self._max_episode_steps = budget if max_steps is None else min(max_steps, budget)
        self.observation_space = observation_space(cameras, image_size)
        self.action_space = action_space()
        self.task = self.task_description = ""
        self._backend = None
        self._cameras = None           # what the observation is rendered from (the backend, or its noisy cameras)
        self._drawn = None             # the episode's bspatial.tasks.perturbations.Perturbation, or None
        self._run = None               # the episode's bspatial.tasks.episode.EpisodeRun
        self._episode = None           # its SplitEntry
        self._spawn: dict[str, Any] | None = None
        self._index: int | None = None
        self._obs: dict[str, Any] | None = None
        self._record: dict[str, Any] | None = None

    # ---- what privileged callers read (scripted experts hold the backend, as in bspatial rollout) ----

    @property
    def backend(self):
        """The simulator (created at the first reset)."""
        return self._backend

    @property
    def instance(self):
        """The current episode's :class:`~bspatial.tasks.base.TaskInstance` (None before the first reset)."""
        return None if self._run is None else self._run.instance

    @property
    def episode(self):
        """The current manifest entry (:class:`~bspatial.construction.splits.SplitEntry`)."""
        return self._episode

    @property
    def policy_observation(self):
        """The current step's :class:`bspatial.tasks.episode.Observation` (no images), what a policy of
        ``bspatial rollout`` (e.g. a scripted expert) is given."""
        self._require_episode()
        return self._run.observation()

    @property
    def episode_record(self) -> dict[str, Any] | None:
        """The finished episode's record, the fields of a ``bspatial rollout`` result file (None while running)."""
        return self._record

    # ---- gymnasium API ---------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        from bspatial.evaluation.rollout.episodes import TRACE_SPLIT, load_instance
        from bspatial.tasks.episode import EpisodeRun
        from bspatial.tasks.perturbations import episode_perturbation, seen_by_the_policy

        self._index = self._pick(seed, options or {})
        episode = self.episodes[self._index]
        if self._backend is None:
            from bspatial.sim.mujoco_backend import MujocoBackend

            self._backend = MujocoBackend(camera_size=self.image_size)
        drawn = episode_perturbation(self.axes, self.perturbation_seed, episode.seed)
        instance, self._spawn = load_instance(self._backend, episode, "spatial", drawn)
        self._drawn = drawn
        self._cameras = seen_by_the_policy(self._backend, drawn)
        steps = instance.step_budget if self.max_steps is None else min(self.max_steps, instance.step_budget)
        self._run = EpisodeRun(self._backend, instance, split=TRACE_SPLIT[episode.split], max_steps=steps)
        self._episode, self._record = episode, None
        self.task = self.task_description = instance.instruction
        self._obs = self._observe()
        return self._obs, self._info()

    def step(self, action):
        self._require_episode()
        if self._run.done:
            raise RuntimeError(f"episode {self._episode.key} has ended (status {self._run.status!r}); call reset()")
        status = self._run.step(action)   # the backend validates the action (shape 23; NaN -> sim_error)
        if status is not None:
            from bspatial.evaluation.rollout.episodes import finished_record

            self._record = finished_record(self._episode, self.policy, self._run.result(), protocol=self.protocol,
                                           instruction=self.task, spawn=self._spawn, condition=self.condition,
                                           perturbation=self._drawn.summary() if self._drawn is not None else None)
            if self.record_dir is not None:
                self._write_record()
        if status != "sim_error":   # a failed step leaves no state worth rendering: the last frame stays
            self._obs = self._observe()
        success = self._record is not None and self._record["outcome"] == "correct"
        return self._obs, float(success), status in ("decided", "sim_error"), status == "timeout", self._info()

    def render(self):
        if self.render_mode is None or self._obs is None:
            return None
        camera = HEAD_CAMERA if HEAD_CAMERA in self.cameras else self.cameras[0]
        return self._obs[PIXELS_KEY][camera]

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = self._cameras = None
        self._run = None

    # ---- helpers ----------------------------------------------------------------------------------

    def _require_episode(self) -> None:
        if self._run is None:
            raise RuntimeError("call reset() before step()")

    def _pick(self, seed: int | None, options: dict[str, Any]) -> int:
        n = len(self.episodes)
        if "episode_index" in options:
            index = options["episode_index"]
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < n:
                raise ValueError(f"options['episode_index'] must be an int in 0..{n - 1} ({self.task_name} has {n} "
                                 f"{self.split} episodes), got {index!r}")
            return int(index)
        if seed is not None:
            return int(seed) % n
        return self.episode_offset % n if self._index is None else (self._index + self.episode_stride) % n

    def _write_record(self) -> None:
        from bspatial.evaluation.rollout.episodes import write_record

        write_record(self.record_dir, self._episode, self._record)

    def _observe(self) -> dict[str, Any]:
        frames = {cam: self._cameras.render(cam, rgb_only=True).rgb for cam in self.cameras}
        return env_observation(frames, self._run.state.proprio)

    def _info(self) -> dict[str, Any]:
        record = self._record or {}
        return {"task": self.task, "task_name": self.task_name, "episode_index": self._index,
                "episode_key": self._episode.key, "step": self._run.steps,
                "is_success": record.get("outcome") == "correct", "outcome": record.get("outcome"),
                "soft_credit": bool(record.get("soft_credit", False)), "detail": record.get("detail"),
                "failure_mode": record.get("failure_mode"), "status": record.get("status")}


__all__ = ["AGENT_POS_KEY", "ENV_POLICY", "PIXELS_KEY", "POLICY_KEYS", "TRAINING_SPLIT", "BSpatialEnv",
           "action_space", "default_split", "env_observation", "observation_space", "plan_env_episodes"]
