"""Rollouts of a policy on an evaluation split: one resumable JSON result file per episode.

``run_rollouts(policy_spec, split, tasks, out)`` plans the split's episodes (task, variant, seed),
refuses unknown splits / tasks / policies before any simulator starts, skips episodes whose result
file exists, and runs the rest, in this process or in ``workers`` spawned processes (one simulator
each). World, task and runner stay separate (STYLE rule 5): the episode loop is
:func:`bspatial.tasks.episode.run_episode`; this module only plans, builds policies and records.

Policies (``policy_spec``):

* ``"scripted"``: the privileged experts of :mod:`bspatial.tasks.experts` (the upper reference row);
  tasks whose family has no expert are skipped with a log line;
* ``"random"``: uniform targets within the joint limits and small base velocities, redrawn every
  :data:`RANDOM_HOLD_STEPS` steps, seeded per episode (the lower reference row);
* a checkpoint folder: a BSpatialVLA model + processor (``save_pretrained``) driven through the
  Appendix 16.3 controller (:mod:`bspatial.evaluation.rollout.controller`).

Episodes (provisional): episode ``i`` of a task uses variant ``variants[i % len(variants)]`` and
seed ``SPLIT_SEED_BASE[split] + i``; the per-task counts are Table S2's (``n_heldout``,
``n_prompt_probe``) unless ``n_episodes`` is given. The held-out and prompt-probe manifests of the
construction issue will replace this plan; the seed bases keep evaluation seeds far from training seeds.

A crashed episode (any exception: a policy returning the wrong action shape, a model error) is written
with status ``"error"`` and its message, and counts as a failure (outcome ``"none"``); the run goes on.

Result file (``<out>/episodes/<task>-<index>.json``): task, variant, seed, split, index, policy,
instruction, status ("decided" / "timeout" / "sim_error" / "error"), outcome, soft_credit, detail,
steps, message, trace (:meth:`EpisodeTrace.to_dict`, or null).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from bspatial.evaluation.vlm.run_files import atomic_write

logger = logging.getLogger(__name__)

ROLLOUT_SPLITS: tuple[str, ...] = ("held_out", "prompt_probe", "navigation")
"""Closed-loop protocols of Section 4.3 / 5.1 (navigation needs navigation scene generators: refused for now)."""
SPLIT_SEED_BASE: dict[str, int] = {"held_out": 1_000_000, "prompt_probe": 2_000_000}
"""Provisional: episode i of a split uses seed base + i, until the construction issue's split manifests land."""
POLICY_KINDS: tuple[str, ...] = ("scripted", "random")
"""Built-in policies; any other spec must be a checkpoint folder."""

RANDOM_BASE_SPEED_M_S = 0.1
"""Random policy: |vx|, |vy| bound (m/s); small next to the 1.0 m/s base limit (bspatial.sim.robot.BASE_MAX_SPEED)."""
RANDOM_YAW_RATE_RAD_S = 0.2
"""Random policy: |wz| bound (rad/s)."""
RANDOM_HOLD_STEPS = 15
"""Random policy: a drawn target is held this many steps (0.5 s at 30 Hz) so the PD joints can follow it."""
RANDOM_JOINT_SPEED_RAD_S = 0.5
"""Random policy: commanded joint positions move towards the drawn target at most this fast."""
CONTROL_HZ = 30.0
"""Control rate (bspatial.tasks.episode: 30 Hz steps)."""
MANIFEST_NAME = "rollout.json"
"""Run settings written to ``out``; a resumed run must use the same ones."""
EPISODES_DIR = "episodes"


@dataclass(frozen=True)
class EpisodeSpec:
    """One planned episode."""

    task: str
    variant: str
    seed: int
    split: str
    index: int

    @property
    def key(self) -> str:
        return f"{self.task}-{self.index:04d}"


@dataclass
class RolloutSummary:
    """What :func:`run_rollouts` did."""

    out: Path
    planned: int
    ran: int
    skipped_existing: int
    errors: int
    skipped_tasks: list[str] = field(default_factory=list)


# ---- planning (no simulator) -------------------------------------------------------------------


def _check_split(split: str) -> str:
    if split not in ROLLOUT_SPLITS:
        raise ValueError(f"unknown split {split!r}; known splits: {', '.join(ROLLOUT_SPLITS)}")
    if split == "navigation":
        raise ValueError("split 'navigation' needs navigation scene generators, which no task has yet; "
                         f"runnable splits: {', '.join(SPLIT_SEED_BASE)}")
    return split


def _split_count(spec, split: str) -> int:
    return spec.n_heldout if split == "held_out" else spec.n_prompt_probe


def resolve_tasks(split: str, tasks: Sequence[str] | None) -> list[str]:
    """Canonical task names to run (default: every task with episodes in ``split``), Table S2 order.

    Raises:
        ValueError: unknown split or task (listing the known ones), or a task with no episodes in the split.
    """
    from bspatial.scoring.task_specs import TASKS, canonical_task_name
    from bspatial.tasks.registry import REGISTRY

    _check_split(split)
    known = [n for n in REGISTRY if _split_count(TASKS[n], split) > 0]
    if not tasks:
        return known
    names = []
    for name in tasks:
        try:
            canonical = canonical_task_name(name)
        except ValueError:
            canonical = None
        if canonical not in REGISTRY:
            raise ValueError(f"unknown task {name!r}; known tasks for split {split!r}: {', '.join(known)}")
        if canonical not in known:
            raise ValueError(f"task {name!r} has no {split} episodes (Table S2); known tasks: {', '.join(known)}")
        if canonical not in names:
            names.append(canonical)
    return [n for n in known if n in names]


def plan_episodes(split: str, tasks: Sequence[str] | None = None, n_episodes: int | None = None) -> list[EpisodeSpec]:
    """The episodes of ``split`` for ``tasks`` (see the module docstring for the provisional seeds).

    Example:
        >>> [(e.task, e.variant, e.seed) for e in plan_episodes("held_out", ["reach_plate"], 2)]
        [('reach_plate', 'largest', 1000000), ('reach_plate', '2nd largest', 1000001)]
    """
    from bspatial.scoring.task_specs import TASKS

    if n_episodes is not None and n_episodes < 1:
        raise ValueError(f"n_episodes must be >= 1, got {n_episodes!r}")
    plan = []
    for task in resolve_tasks(split, tasks):
        spec = TASKS[task]
        n = _split_count(spec, split) if n_episodes is None else n_episodes
        for i in range(n):
            plan.append(EpisodeSpec(task, spec.variants[i % len(spec.variants)], SPLIT_SEED_BASE[split] + i, split, i))
    return plan


def check_policy_spec(policy_spec: str) -> str:
    """``"scripted"``, ``"random"`` or an existing checkpoint folder (with a config.json)."""
    if policy_spec in POLICY_KINDS:
        return policy_spec
    path = Path(policy_spec)
    if not (path / "config.json").is_file():
        raise ValueError(f"policy must be one of {POLICY_KINDS} or a checkpoint folder with config.json, "
                         f"got {policy_spec!r}")
    return str(path.resolve())


# ---- policies ----------------------------------------------------------------------------------


class RandomPolicy:
    """Uniform joint targets within the limits, uniform grippers, small base velocities; seeded.

    Each drawn target is held :data:`RANDOM_HOLD_STEPS` steps; the commanded joint positions move towards
    it at :data:`RANDOM_JOINT_SPEED_RAD_S` from the robot's joint positions at the first step (a jump
    straight to a random target would fling the arms through the scene in a few steps).
    """

    def __init__(self, rng: np.random.Generator) -> None:
        from bspatial.sim.backend import ACTION_DIM, ACTION_SLICES
        from bspatial.sim.robot import ARM_RANGE, TORSO_RANGE

        low, high = np.empty(ACTION_DIM), np.empty(ACTION_DIM)
        base = np.array([RANDOM_BASE_SPEED_M_S, RANDOM_BASE_SPEED_M_S, RANDOM_YAW_RATE_RAD_S])
        low[ACTION_SLICES["base"]], high[ACTION_SLICES["base"]] = -base, base
        low[ACTION_SLICES["torso"]], high[ACTION_SLICES["torso"]] = np.array(TORSO_RANGE).T
        for side in ("left", "right"):
            low[ACTION_SLICES[f"{side}_arm"]], high[ACTION_SLICES[f"{side}_arm"]] = np.array(ARM_RANGE).T
            low[ACTION_SLICES[f"{side}_gripper"]], high[ACTION_SLICES[f"{side}_gripper"]] = -1.0, 1.0
        self.joints = np.zeros(ACTION_DIM, dtype=bool)
        for part in ("torso", "left_arm", "right_arm"):
            self.joints[ACTION_SLICES[part]] = True
        self.slices = ACTION_SLICES
        self.rng, self.low, self.high = rng, low, high
        self.target: np.ndarray | None = None
        self.command: np.ndarray | None = None

    def __call__(self, observation) -> np.ndarray:
        if self.command is None:
            state, s = observation.state, self.slices
            self.command = np.zeros_like(self.low)
            self.command[s["torso"]] = state.torso_qpos
            self.command[s["left_arm"]], self.command[s["right_arm"]] = state.left_arm_qpos, state.right_arm_qpos
        if self.target is None or observation.step % RANDOM_HOLD_STEPS == 0:
            self.target = self.rng.uniform(self.low, self.high)
        step = RANDOM_JOINT_SPEED_RAD_S / CONTROL_HZ
        j = self.joints
        self.command[j] += np.clip(self.target[j] - self.command[j], -step, step)
        self.command[~j] = self.target[~j]
        return self.command.copy()


class CheckpointPredictor:
    """A BSpatialVLA checkpoint + processor: observation -> (32, 23) chunk in robot units.

    The state is the backend's proprioceptive vector (:data:`bspatial.sim.robot.PROPRIO_LAYOUT`); the
    cameras are ``config.camera_names``, rendered only when a chunk is requested.
    """

    def __init__(self, path: str) -> None:
        import torch
        from transformers import AutoModel, AutoProcessor

        import bspatial.modeling  # noqa: F401  (registers the auto classes)
        from bspatial.sim.robot import PROPRIO_DIM

        self.torch = torch
        self.model = AutoModel.from_pretrained(path).eval()
        self.processor = AutoProcessor.from_pretrained(path)
        config = self.model.config
        if config.ir_mode != "none":
            raise ValueError(f"checkpoint {path!r} has ir_mode={config.ir_mode!r}; oracle / predicted IR rollouts "
                             "are not wired yet (issue 7, next slice)")
        if config.state_dim != PROPRIO_DIM:
            raise ValueError(f"checkpoint {path!r} has state_dim={config.state_dim}; the simulator's proprioceptive "
                             f"state has {PROPRIO_DIM} dims")
        self.cameras = list(config.camera_names)
        self.horizon, self.action_dim = config.chunk_size, config.action_dim
        self.generator = torch.Generator()

    def reseed(self, seed: int) -> None:
        self.generator.manual_seed(int(seed))

    def __call__(self, observation, render: Callable[[str], Any]) -> np.ndarray:
        torch = self.torch
        batch: dict[str, Any] = {"observation.state": torch.as_tensor(observation.state.proprio, dtype=torch.float32)[None],
                                 "task": observation.instruction}
        for cam in self.cameras:
            frame = observation.images.get(cam) or render(cam)
            batch[f"observation.images.rgb.{cam}"] = torch.from_numpy(np.ascontiguousarray(frame.rgb)).permute(2, 0, 1)[None]
        inputs = self.processor(batch)
        normalized = self.model.sample_actions(inputs, generator=self.generator)
        return self.processor.unnormalize_actions(normalized)[0].numpy()


_PREDICTORS: dict[str, CheckpointPredictor] = {}  # one loaded checkpoint per process


def make_policy(policy_spec: str, backend, instance, seed: int, latency_steps: int = 0):
    """The per-step policy for one episode (``instance`` already loaded into ``backend``)."""
    episode_seed = [int(seed), int(instance.seed or 0)]
    if policy_spec == "scripted":
        from bspatial.tasks.experts import make_expert
        return make_expert(backend, instance)
    if policy_spec == "random":
        return RandomPolicy(np.random.default_rng(episode_seed))
    from bspatial.evaluation.rollout.controller import ChunkedPolicy

    if policy_spec not in _PREDICTORS:
        _PREDICTORS[policy_spec] = CheckpointPredictor(policy_spec)
    predictor = _PREDICTORS[policy_spec]
    predictor.reseed(int(np.random.default_rng(episode_seed).integers(2**31)))
    return ChunkedPolicy(lambda obs: predictor(obs, backend.render), backend.hold_action(), latency_steps=latency_steps,
                         horizon=predictor.horizon, action_dim=predictor.action_dim)


# ---- one episode -------------------------------------------------------------------------------


def result_path(out: Path, episode: EpisodeSpec) -> Path:
    return Path(out) / EPISODES_DIR / f"{episode.key}.json"


def _record(episode: EpisodeSpec, policy_spec: str, **fields) -> dict[str, Any]:
    base = {**asdict(episode), "policy": policy_spec, "instruction": None, "status": "error", "outcome": "none",
            "soft_credit": False, "detail": "", "steps": 0, "message": "", "trace": None}
    return {**base, **fields}


def run_one(backend, episode: EpisodeSpec, policy_spec: str, out: Path, seed: int = 0,
            max_steps: int | None = None, latency_steps: int = 0) -> dict[str, Any]:
    """Run and record one episode; any exception becomes a status "error" record (the run goes on)."""
    from bspatial.tasks import sample_instance
    from bspatial.tasks.episode import run_episode

    instruction = None
    try:
        instance = sample_instance(episode.task, episode.variant, episode.seed)
        instruction = instance.instruction
        backend.load(instance.scene)
        policy = make_policy(policy_spec, backend, instance, seed, latency_steps)
        steps = instance.step_budget if max_steps is None else min(max_steps, instance.step_budget)
        result = run_episode(backend, instance, policy, split=episode.split, max_steps=steps)
        outcome = result.outcome
        record = _record(episode, policy_spec, instruction=instruction, status=result.status,
                         outcome=outcome.outcome if outcome else "none",
                         soft_credit=bool(outcome.soft_credit) if outcome else False,
                         detail=outcome.detail if outcome else "", steps=result.steps, message=result.message,
                         trace=result.trace.to_dict() if result.trace is not None else None)
    except Exception as error:  # recorded, not hidden: the result file says what failed
        logger.warning("episode %s (%s, seed %d) crashed: %s: %s", episode.key, episode.variant, episode.seed,
                       type(error).__name__, error)
        record = _record(episode, policy_spec, instruction=instruction,
                         message=f"{type(error).__name__}: {error}")
    path = result_path(out, episode)
    atomic_write(path, json.dumps(record))
    return record


# ---- worker processes --------------------------------------------------------------------------

_WORKER_BACKEND = None


def _worker_backend():
    global _WORKER_BACKEND
    if _WORKER_BACKEND is None:
        from bspatial.sim.mujoco_backend import MujocoBackend
        _WORKER_BACKEND = MujocoBackend()
    return _WORKER_BACKEND


def _worker_run(args: tuple) -> tuple[str, str]:
    episode, policy_spec, out, seed, max_steps, latency_steps = args
    record = run_one(_worker_backend(), episode, policy_spec, out, seed, max_steps, latency_steps)
    return episode.key, record["status"]


# ---- the run -----------------------------------------------------------------------------------


def _check_manifest(out: Path, settings: dict[str, Any]) -> None:
    path = out / MANIFEST_NAME
    if path.exists():
        old = json.loads(path.read_text())
        diff = {k: (old.get(k), v) for k, v in settings.items() if old.get(k) != v}
        if diff:
            raise ValueError(f"{out} holds a run with other settings {diff} (old, new); use another --out")
    else:
        atomic_write(path, json.dumps(settings, indent=2))


def _scripted_tasks(tasks: list[str]) -> tuple[list[str], list[str]]:
    from bspatial.scoring.task_specs import TASKS
    from bspatial.tasks.experts import EXPERTS

    keep = [t for t in tasks if TASKS[t].family in EXPERTS]
    skipped = [t for t in tasks if t not in keep]
    for t in skipped:
        logger.warning("scripted policy: skipping task %s: no expert for family %r (experts: %s)",
                       t, TASKS[t].family, sorted(EXPERTS))
    return keep, skipped


def run_rollouts(policy_spec: str, split: str, tasks: Sequence[str] | None, out: str | Path,
                 n_episodes: int | None = None, workers: int = 1, seed: int = 0, max_steps: int | None = None,
                 latency_steps: int = 0, progress: bool = False) -> RolloutSummary:
    """Run (or resume) the rollouts of ``policy_spec`` on ``split``; one result file per episode under ``out``.

    Args:
        policy_spec: "scripted", "random" or a checkpoint folder.
        split: "held_out" or "prompt_probe" ("navigation" is refused until navigation scenes exist).
        tasks: task names (any spelling); None = every task with episodes in the split.
        out: run folder; finished episodes found there are skipped.
        n_episodes: episodes per task (default: the Table S2 count of the split).
        workers: processes (spawned, one simulator each); 1 runs in this process.
        seed: seed of the policy's randomness (random policy, flow-matching noise).
        max_steps: cap on each episode's step budget (smoke tests); None = the task's budget.
        latency_steps: checkpoint policies: 0 = synchronous controller, k = asynchronous with k-step latency.
        progress: show a progress bar.
    """
    policy_spec = check_policy_spec(policy_spec)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps!r}")
    names = resolve_tasks(split, tasks)
    skipped_tasks: list[str] = []
    if policy_spec == "scripted":
        names, skipped_tasks = _scripted_tasks(names)
    plan = plan_episodes(split, names, n_episodes) if names else []
    out = Path(out)
    (out / EPISODES_DIR).mkdir(parents=True, exist_ok=True)
    _check_manifest(out, {"policy": policy_spec, "split": split, "seed": seed, "max_steps": max_steps,
                          "latency_steps": latency_steps})
    todo = [e for e in plan if not result_path(out, e).exists()]
    logger.info("rollout %s on %s: %d episodes planned, %d already done, %d to run", policy_spec, split,
                len(plan), len(plan) - len(todo), len(todo))
    statuses = _run_todo(todo, policy_spec, out, seed, max_steps, latency_steps, workers, progress)
    return RolloutSummary(out, len(plan), len(todo), len(plan) - len(todo),
                          sum(s == "error" for s in statuses), skipped_tasks)


def _run_todo(todo: list[EpisodeSpec], policy_spec: str, out: Path, seed: int, max_steps: int | None,
              latency_steps: int, workers: int, progress: bool) -> list[str]:
    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo), desc="episodes", disable=not progress)
    statuses = []
    try:
        if workers == 1 or len(todo) <= 1:
            from bspatial.sim.mujoco_backend import MujocoBackend
            with MujocoBackend() as backend:
                for episode in todo:
                    statuses.append(run_one(backend, episode, policy_spec, out, seed, max_steps, latency_steps)["status"])
                    bar.update()
        else:
            context = multiprocessing.get_context("spawn")
            jobs = [(e, policy_spec, out, seed, max_steps, latency_steps) for e in todo]
            with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
                for _, status in pool.map(_worker_run, jobs):
                    statuses.append(status)
                    bar.update()
    finally:
        bar.close()
    return statuses


def load_results(out: str | Path) -> list[dict[str, Any]]:
    """Every episode result file under ``out`` (sorted by key); temp files of interrupted writes are ignored."""
    folder = Path(out) / EPISODES_DIR
    if not folder.is_dir():
        raise ValueError(f"{out} has no {EPISODES_DIR}/ folder of episode results")
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if not p.name.startswith(".")]


__all__ = ["EpisodeSpec", "POLICY_KINDS", "ROLLOUT_SPLITS", "RandomPolicy", "RolloutSummary", "SPLIT_SEED_BASE",
           "check_policy_spec", "load_results", "make_policy", "plan_episodes", "resolve_tasks", "result_path",
           "run_one", "run_rollouts"]
