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
  Appendix 16.3 controller (:mod:`bspatial.evaluation.rollout.controller`). IR checkpoints
  (``ir_mode`` dot / attn_map, optionally ``first_frame_anchor``) get their IR image at every policy
  observation from the run's IR source (:mod:`bspatial.evaluation.rollout.ir`): ``oracle`` (default),
  ``predicted`` (a grounding VLM) or ``none``.

Splits: ``held_out`` and ``prompt_probe`` run the manipulation tasks; ``navigation`` runs the 10
navigation tasks (Table S11), each spawn drawn and physically validated by
:func:`bspatial.tasks.navigation.sample_validated_instance` (Appendix 13.4); the scripted policy there
is the grid-A* navigation expert (:mod:`bspatial.tasks.nav_expert`).

Episodes come from the split manifests of :mod:`bspatial.construction.splits` (build seed
:data:`SPLIT_BUILD_SEED`): held-out entries pair unseen scene seeds with relation-reversed variants,
prompt-probe entries reuse training scenes with a variant whose target differs, navigation entries are
held-out spawn seeds; Table S2's per-task counts (469 / 700 / 401 in all). ``n_episodes`` keeps the first
``n`` entries of each task (smoke runs).

Spa-Bench conditions (``condition``, :mod:`bspatial.tasks.conditions`) rerun the same manifest entries
with a direct or paraphrased instruction, or as no-intervention scenes whose goal already holds
(success = not acting, :func:`bspatial.scoring.failure_modes.no_intervention_success`; the scripted
reference holds still there). An entry whose condition is undefined is recorded with status
``"not_applicable"``.

A crashed episode (any exception: a policy returning the wrong action shape, a model error) is written
with status ``"error"`` and its message, and counts as a failure (outcome ``"none"``); the run goes on.

Result file (``<out>/episodes/<task>-<index>.json``): task, variant, seed, split, index, policy, condition,
instruction, status ("decided" / "timeout" / "sim_error" / "error" / "not_applicable"), outcome, soft_credit,
detail, failure_mode (:func:`bspatial.scoring.failure_modes.primary_failure_mode`; null for no-intervention), steps, message, trace (:meth:`EpisodeTrace.to_dict`, or null), ir (IR checkpoints: source, mode,
observations, observations without a target, and for predicted IR the VLM queries and failed
predictions; else null), spawn (navigation: the spawn validation's measurements; else null).
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

from bspatial.catalog.schema import CONTROL_HZ
from bspatial.common.files import atomic_write_text

logger = logging.getLogger(__name__)

ROLLOUT_SPLITS: tuple[str, ...] = ("held_out", "prompt_probe", "navigation", "spa_id", "spa_ood")
"""Closed-loop protocols of Section 4.3 / 5.1: manipulation held-out and prompt probe, navigation (Table S11);
and Spa-Bench's in-distribution / withheld-cell episodes (:mod:`bspatial.construction.splits`)."""
SPLIT_BUILD_SEED = 0
"""Build seed of the split manifests (:data:`bspatial.construction.splits.DEFAULT_BUILD_SEED`, what
``bspatial build`` writes); recorded in the run manifest so a resumed run plans the same episodes."""
NAVIGATION_TRACE_SPLIT = "held_out"
"""Trace split of navigation episodes: Appendix 13.4 calls them "held-out navigation instances" (the trace
schema's splits are train / development / held_out / prompt_probe); the result file keeps split "navigation"."""
TRACE_SPLIT: dict[str, str] = {"held_out": "held_out", "prompt_probe": "prompt_probe",
                               "navigation": NAVIGATION_TRACE_SPLIT, "spa_id": "held_out", "spa_ood": "held_out"}
"""Trace split per rollout split (the Spa-Bench episodes are unseen configurations, as held-out ones)."""
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


@dataclass(frozen=True)
class RunSettings:
    """How every episode of a run is executed (one picklable value for the worker processes).

    Attributes:
        seed: seed of the policy's randomness (random policy, flow-matching noise).
        max_steps: cap on each episode's step budget; None = the task's budget.
        latency_steps: checkpoints: 0 = synchronous controller, k = asynchronous with a k-step latency.
        threaded: checkpoints: asynchronous inference in a worker thread, latency measured.
        ir: the IR source of IR checkpoints (:class:`~bspatial.evaluation.rollout.ir.IRSettings`); None = none.
        condition: the Spa-Bench condition (:data:`bspatial.tasks.conditions.CONDITIONS`).
    """

    seed: int = 0
    max_steps: int | None = None
    latency_steps: int = 0
    threaded: bool = False
    ir: Any = None
    condition: str = "spatial"


# ---- planning (no simulator) -------------------------------------------------------------------


def _check_split(split: str) -> str:
    if split not in ROLLOUT_SPLITS:
        raise ValueError(f"unknown split {split!r}; known splits: {', '.join(ROLLOUT_SPLITS)}")
    return split


def _split_count(spec, split: str) -> int:
    if split in ("spa_id", "spa_ood"):
        from bspatial.construction.splits import SPA_ID_PER_TASK, SPA_OOD_PER_TASK, spa_tasks

        return (SPA_ID_PER_TASK if split == "spa_id" else SPA_OOD_PER_TASK) if spec.name in spa_tasks() else 0
    return {"held_out": spec.n_heldout, "prompt_probe": spec.n_prompt_probe, "navigation": spec.n_navigation}[split]


def _split_registry(split: str):
    from bspatial.tasks.registry import NAVIGATION_REGISTRY, REGISTRY

    return NAVIGATION_REGISTRY if split == "navigation" else REGISTRY


def resolve_tasks(split: str, tasks: Sequence[str] | None) -> list[str]:
    """Canonical task names to run (default: every task with episodes in ``split``), Table S2 order.

    Raises:
        ValueError: unknown split or task (listing the known ones), or a task with no episodes in the split.
    """
    from bspatial.catalog.tasks import TASKS, canonical_task_name

    _check_split(split)
    registry = _split_registry(split)
    known = [n for n in registry if _split_count(TASKS[n], split) > 0]
    if not tasks:
        return known
    names = []
    for name in tasks:
        try:
            canonical = canonical_task_name(name)
        except ValueError:
            canonical = None
        if canonical not in registry:
            raise ValueError(f"unknown task {name!r}; known tasks for split {split!r}: {', '.join(known)}")
        if canonical not in known:
            raise ValueError(f"task {name!r} has no {split} episodes (Table S2); known tasks: {', '.join(known)}")
        if canonical not in names:
            names.append(canonical)
    return [n for n in known if n in names]


def plan_episodes(split: str, tasks: Sequence[str] | None = None, n_episodes: int | None = None,
                  build_seed: int = SPLIT_BUILD_SEED) -> list[EpisodeSpec]:
    """The episodes of ``split`` for ``tasks``: the split manifest's entries, the first ``n_episodes`` per task.

    Example:
        >>> [(e.task, e.variant, e.index) for e in plan_episodes("held_out", ["reach_plate"], 2)]
        [('reach_plate', '2nd largest', 0), ('reach_plate', 'smallest', 1)]
    """
    from bspatial.construction.splits import split_episodes

    if n_episodes is not None and (isinstance(n_episodes, bool) or not isinstance(n_episodes, int) or n_episodes < 1):
        raise ValueError(f"n_episodes must be an int >= 1, got {n_episodes!r}")
    names = resolve_tasks(split, tasks)
    entries = split_episodes(split, names, seed=build_seed, limit=n_episodes) if names else []
    return [EpisodeSpec(e.task, e.variant, e.seed, e.split, e.index) for e in entries]


def check_policy_spec(policy_spec: str) -> str:
    """``"scripted"``, ``"random"`` or an existing checkpoint folder (with a config.json)."""
    if policy_spec in POLICY_KINDS:
        return policy_spec
    path = Path(policy_spec)
    if not (path / "config.json").is_file():
        raise ValueError(f"policy must be one of {POLICY_KINDS} or a checkpoint folder with config.json, "
                         f"got {policy_spec!r}")
    return str(path.resolve())


def checkpoint_ir_mode(policy_spec: str) -> str:
    """``config.ir_mode`` of a checkpoint folder read from its config.json (no torch); "none" for built-ins."""
    if policy_spec in POLICY_KINDS:
        return "none"
    config = json.loads((Path(policy_spec) / "config.json").read_text())
    return str(config.get("ir_mode", "none"))


def resolve_ir(policy_spec: str, split: str, ir: str | None = None, ir_model: str | None = None):
    """The run's :class:`~bspatial.evaluation.rollout.ir.IRSettings`, checked against the policy and split.

    ``ir=None`` means: ``"oracle"`` for an IR checkpoint on a manipulation split, ``"none"`` otherwise.
    Only IR checkpoints take an IR source, and navigation has no IR target (the paper's navigation policy
    has no IR variant); an explicit source for anything else is refused.

    Raises:
        ValueError: naming the bad field and value.
    """
    from bspatial.evaluation.rollout.ir import IR_CHECKPOINT_MODES, IRSettings
    from bspatial.evaluation.vlm.backends import parse_spec

    takes_ir = checkpoint_ir_mode(policy_spec) in IR_CHECKPOINT_MODES and split != "navigation"
    if ir is None:
        ir = "oracle" if takes_ir else "none"
    settings = IRSettings(ir, ir_model)
    if settings.source != "none" and not takes_ir:
        why = ("navigation tasks have no IR target" if split == "navigation" else
               f"policy {policy_spec!r} has no IR image slot (ir_mode={checkpoint_ir_mode(policy_spec)!r})")
        raise ValueError(f"ir={settings.source!r} needs a checkpoint with ir_mode in {IR_CHECKPOINT_MODES} on a "
                         f"manipulation split; {why}")
    if settings.model is not None:
        parse_spec(settings.model)  # an unknown backend kind is refused before any simulator starts
    return settings


# ---- policies ----------------------------------------------------------------------------------


class RandomPolicy:
    """Uniform joint targets within the limits, uniform grippers, small base velocities; seeded.

    Each drawn target is held :data:`RANDOM_HOLD_STEPS` steps; the commanded joint positions move towards
    it at :data:`RANDOM_JOINT_SPEED_RAD_S` from the robot's joint positions at the first step (a jump
    straight to a random target would fling the arms through the scene in a few steps).
    """

    def __init__(self, rng: np.random.Generator) -> None:
        from bspatial.catalog.schema import ACTION_DIM, ACTION_SLICES
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
        from bspatial.catalog.schema import STATE_DIM

        self.torch = torch
        self.model = AutoModel.from_pretrained(path).eval()
        self.processor = AutoProcessor.from_pretrained(path)
        config = self.model.config
        if config.state_dim != STATE_DIM:
            raise ValueError(f"checkpoint {path!r} has state_dim={config.state_dim}; the simulator's proprioceptive "
                             f"state has {STATE_DIM} dims")
        self.cameras = list(config.camera_names)
        self.ir_mode, self.anchor = config.ir_mode, bool(config.first_frame_anchor)
        # The processor draws the cue on the head camera, or the first camera without one; so do we.
        self.ir_camera = "head" if "head" in self.cameras else self.cameras[0]
        self.horizon, self.action_dim = config.chunk_size, config.action_dim
        self.generator = torch.Generator()
        self.last_batch: dict[str, Any] | None = None  # the raw inputs of the latest chunk (logs, tests)

    def reseed(self, seed: int) -> None:
        self.generator.manual_seed(int(seed))

    def _image(self, rgb: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(rgb)).permute(2, 0, 1)[None]

    def __call__(self, observation, render: Callable[[str], Any], ir=None) -> np.ndarray:
        """One chunk from ``observation``; ``ir`` (an :class:`~bspatial.evaluation.rollout.ir.IRConditioner`)
        is required by IR checkpoints and adds ``observation.images.ir`` (and ``.anchor``)."""
        return self.infer(self.prepare(observation, render, ir))

    def prepare(self, observation, render: Callable[[str], Any], ir=None) -> dict[str, Any]:
        """The model inputs of ``observation``: renders cameras and the IR image (simulator thread only)."""
        torch = self.torch
        batch: dict[str, Any] = {"observation.state": torch.as_tensor(observation.state.proprio, dtype=torch.float32)[None],
                                 "task": observation.instruction}
        frames = {}
        for cam in self.cameras:
            frames[cam] = observation.images.get(cam) or render(cam)
            batch[f"observation.images.rgb.{cam}"] = self._image(frames[cam].rgb)
        if self.ir_mode != "none":
            if ir is None:
                raise ValueError(f"checkpoint has ir_mode={self.ir_mode!r}: an IR conditioner is required")
            for name, image in ir.images(frames[self.ir_camera]).items():
                batch[f"observation.images.{name}"] = self._image(image)
        self.last_batch = batch
        return self.processor(batch)

    def infer(self, inputs: dict[str, Any]) -> np.ndarray:
        """(horizon, action_dim) chunk in robot units from :meth:`prepare`'s inputs; touches no simulator
        state, so it may run in another thread while the simulator steps."""
        normalized = self.model.sample_actions(inputs, generator=self.generator)
        return self.processor.unnormalize_actions(normalized)[0].numpy()


_PREDICTORS: dict[str, CheckpointPredictor] = {}  # one loaded checkpoint per process


class EpisodePredictor:
    """``observation -> chunk`` for one episode: the shared checkpoint, this episode's renderer and IR.

    Attributes:
        predictor: the process's :class:`CheckpointPredictor`.
        conditioner: the episode's :class:`~bspatial.evaluation.rollout.ir.IRConditioner` (IR checkpoints), else None.
    """

    def __init__(self, predictor: CheckpointPredictor, backend, conditioner=None) -> None:
        self.predictor, self.backend, self.conditioner = predictor, backend, conditioner

    def __call__(self, observation) -> np.ndarray:
        return self.predictor(observation, self.backend.render, self.conditioner)

    def prepare(self, observation) -> dict[str, Any]:
        return self.predictor.prepare(observation, self.backend.render, self.conditioner)

    def infer(self, inputs: dict[str, Any]) -> np.ndarray:
        return self.predictor.infer(inputs)


def make_policy(policy_spec: str, backend, instance, settings: RunSettings = RunSettings()):
    """The per-step policy for one episode (``instance`` already loaded into ``backend``, the world reset).

    ``settings.ir`` (:class:`~bspatial.evaluation.rollout.ir.IRSettings`, default no IR) conditions IR checkpoints.
    """
    from bspatial.evaluation.rollout.ir import NO_IR, make_conditioner

    ir = NO_IR if settings.ir is None else settings.ir
    episode_seed = [int(settings.seed), int(instance.seed or 0)]
    if policy_spec == "scripted" and settings.condition == "no_intervention":
        # The privileged expert knows the goal already holds: its reference behaviour is to stay still.
        hold = backend.hold_action()
        return lambda observation: hold
    if policy_spec == "scripted":
        if instance.family == "navigation":
            from bspatial.tasks.nav_expert import NavigationExpert
            return NavigationExpert(backend, instance)
        from bspatial.tasks.experts import make_expert
        return make_expert(backend, instance)
    if policy_spec == "random":
        return RandomPolicy(np.random.default_rng(episode_seed))
    from bspatial.evaluation.rollout.controller import ChunkedPolicy

    if policy_spec not in _PREDICTORS:
        _PREDICTORS[policy_spec] = CheckpointPredictor(policy_spec)
    predictor = _PREDICTORS[policy_spec]
    predictor.reseed(int(np.random.default_rng(episode_seed).integers(2**31)))
    conditioner = None
    if predictor.ir_mode != "none":
        conditioner = make_conditioner(ir, predictor.ir_mode, predictor.anchor, backend, instance)
    elif ir.source != "none":
        raise ValueError(f"ir={ir.source!r} given for checkpoint {policy_spec!r}, which has ir_mode='none'")
    return ChunkedPolicy(EpisodePredictor(predictor, backend, conditioner), backend.hold_action(),
                         latency_steps=settings.latency_steps, threaded=settings.threaded,
                         horizon=predictor.horizon, action_dim=predictor.action_dim)


def _ir_summary(policy) -> dict[str, Any] | None:
    conditioner = getattr(getattr(policy, "predictor", None), "conditioner", None)
    return conditioner.summary() if conditioner is not None else None


# ---- one episode -------------------------------------------------------------------------------


def result_path(out: Path, episode: EpisodeSpec) -> Path:
    return Path(out) / EPISODES_DIR / f"{episode.key}.json"


def _record(episode: EpisodeSpec, policy_spec: str, **fields) -> dict[str, Any]:
    base = {**asdict(episode), "policy": policy_spec, "condition": "spatial", "instruction": None, "status": "error",
            "outcome": "none", "soft_credit": False, "detail": "", "failure_mode": None, "steps": 0, "message": "",
            "trace": None, "ir": None, "spawn": None, "latencies": None}
    return {**base, **fields}


def load_instance(backend, episode: EpisodeSpec, condition: str = "spatial"):
    """Sample ``episode``'s instance under ``condition`` and load its scene; returns (instance, spawn record).

    Navigation spawns are redrawn until one passes the simulator's spawn validation (Appendix 13.4);
    its measurements are the spawn record (None for manipulation).

    Raises:
        bspatial.tasks.conditions.NotApplicable: the condition is undefined for this instance.
    """
    from bspatial.tasks.conditions import apply_condition
    from bspatial.tasks.episode import load_instance as load

    transform = None if condition == "spatial" else (lambda inst: apply_condition(inst, condition))
    instance, check = load(backend, episode.task, episode.variant, episode.seed, transform)
    return instance, (asdict(check) if check is not None else None)


def _scored(result, condition: str) -> dict[str, Any]:
    """Outcome fields of a finished episode: Table S4's, or the no-intervention rule; plus its failure mode."""
    from bspatial.scoring.failure_modes import no_intervention_success, primary_failure_mode

    if result.trace is None:
        return {"outcome": "none", "soft_credit": False, "detail": "", "failure_mode": None}
    if condition == "no_intervention":
        kept = no_intervention_success(result.trace)
        # The goal already held: success is leaving it (no Table S4 rule applies, no failure-mode label).
        return {"outcome": "correct" if kept else "none", "soft_credit": False,
                "detail": "goal_left_alone" if kept else "acted", "failure_mode": None}
    outcome = result.outcome
    return {"outcome": outcome.outcome, "soft_credit": bool(outcome.soft_credit), "detail": outcome.detail,
            "failure_mode": primary_failure_mode(result.trace, outcome)}


def run_one(backend, episode: EpisodeSpec, policy_spec: str, out: Path,
            settings: RunSettings = RunSettings()) -> dict[str, Any]:
    """Run and record one episode; any exception becomes a status "error" record (the run goes on).

    An episode whose ``condition`` is undefined for its instance is recorded with status
    ``"not_applicable"`` (the tables leave it out).
    """
    from bspatial.tasks.conditions import NotApplicable
    from bspatial.tasks.episode import run_episode

    condition, max_steps = settings.condition, settings.max_steps
    instruction, policy, spawn = None, None, None
    try:
        instance, spawn = load_instance(backend, episode, condition)
        instruction = instance.instruction
        policy = make_policy(policy_spec, backend, instance, settings)
        steps = instance.step_budget if max_steps is None else min(max_steps, instance.step_budget)
        trace_split = TRACE_SPLIT[episode.split]
        # A no-intervention episode has nothing to decide early: it runs its whole budget.
        try:
            result = run_episode(backend, instance, policy, split=trace_split, max_steps=steps,
                                 stop_when_decided=condition != "no_intervention")
        finally:
            if hasattr(policy, "close"):
                policy.close()   # threaded inference: no computation outlives its episode
        record = _record(episode, policy_spec, condition=condition, instruction=instruction, status=result.status,
                         steps=result.steps, message=result.message, **_scored(result, condition),
                         trace=result.trace.to_dict() if result.trace is not None else None,
                         ir=_ir_summary(policy), spawn=spawn, latencies=getattr(policy, "latencies", None) or None)
    except NotApplicable as why:
        record = _record(episode, policy_spec, condition=condition, status="not_applicable", message=str(why))
    except Exception as error:  # recorded, not hidden: the result file says what failed
        logger.warning("episode %s (%s, seed %d) crashed: %s: %s", episode.key, episode.variant, episode.seed,
                       type(error).__name__, error)
        record = _record(episode, policy_spec, condition=condition, instruction=instruction, ir=_ir_summary(policy),
                         spawn=spawn, message=f"{type(error).__name__}: {error}")
    path = result_path(out, episode)
    atomic_write_text(path, json.dumps(record))
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
    episode, policy_spec, out, settings = args
    record = run_one(_worker_backend(), episode, policy_spec, out, settings)
    return episode.key, record["status"]


# ---- the run -----------------------------------------------------------------------------------


def _check_condition(condition: str, split: str) -> None:
    from bspatial.tasks.conditions import CONDITIONS

    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {list(CONDITIONS)}, got {condition!r}")
    if split == "navigation" and condition != "spatial":
        raise ValueError(f"condition {condition!r} is defined for manipulation splits only, got split 'navigation'")


def _check_manifest(out: Path, settings: dict[str, Any]) -> None:
    path = out / MANIFEST_NAME
    if path.exists():
        old = json.loads(path.read_text())
        diff = {k: (old.get(k), v) for k, v in settings.items() if old.get(k) != v}
        if diff:
            raise ValueError(f"{out} holds a run with other settings {diff} (old, new); use another --out")
    else:
        atomic_write_text(path, json.dumps(settings, indent=2))


def _scripted_tasks(tasks: list[str]) -> tuple[list[str], list[str]]:
    from bspatial.catalog.tasks import TASKS
    from bspatial.tasks.experts import EXPERTS

    # Navigation tasks have the grid-A* navigation expert (bspatial.tasks.nav_expert).
    keep = [t for t in tasks if TASKS[t].family in EXPERTS or TASKS[t].is_navigation]
    skipped = [t for t in tasks if t not in keep]
    for t in skipped:
        logger.warning("scripted policy: skipping task %s: no expert for family %r (experts: %s)",
                       t, TASKS[t].family, sorted(EXPERTS))
    return keep, skipped


def run_rollouts(policy_spec: str, split: str, tasks: Sequence[str] | None, out: str | Path,
                 n_episodes: int | None = None, workers: int = 1, seed: int = 0, max_steps: int | None = None,
                 latency_steps: int = 0, progress: bool = False, ir: str | None = None,
                 ir_model: str | None = None, condition: str = "spatial", threaded: bool = False) -> RolloutSummary:
    """Run (or resume) the rollouts of ``policy_spec`` on ``split``; one result file per episode under ``out``.

    Args:
        policy_spec: "scripted", "random" or a checkpoint folder.
        split: "held_out", "prompt_probe" (manipulation) or "navigation" (the 10 navigation tasks).
        tasks: task names (any spelling); None = every task with episodes in the split.
        out: run folder; finished episodes found there are skipped.
        n_episodes: episodes per task (default: the Table S2 count of the split).
        workers: processes (spawned, one simulator each); 1 runs in this process.
        seed: seed of the policy's randomness (random policy, flow-matching noise).
        max_steps: cap on each episode's step budget (smoke tests); None = the task's budget.
        latency_steps: checkpoint policies: 0 = synchronous controller, k = asynchronous with k-step latency.
        threaded: checkpoint policies: asynchronous inference in a worker thread while the simulator steps
            (latency measured per chunk and recorded as ``latencies``; not deterministic).
        progress: show a progress bar.
        ir: IR checkpoints: "oracle" (default), "predicted" or "none"; others take only None / "none".
        ir_model: ``ir="predicted"``: the grounding VLM's backend spec (e.g. "chance", "openai:<url>#<model>").
        condition: Spa-Bench condition (:data:`bspatial.tasks.conditions.CONDITIONS`) on the split's scenes:
            "spatial" (the instruction as planned), "direct", "paraphrase", "direct_paraphrase" or
            "no_intervention" (manipulation splits only).
    """
    policy_spec = check_policy_spec(policy_spec)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps!r}")
    names = resolve_tasks(split, tasks)
    ir_settings = resolve_ir(policy_spec, split, ir, ir_model)
    _check_condition(condition, split)
    if threaded and latency_steps:
        raise ValueError(f"threaded inference measures its latency; latency_steps must be 0, got {latency_steps!r}")
    skipped_tasks: list[str] = []
    if policy_spec == "scripted":
        names, skipped_tasks = _scripted_tasks(names)
    plan = plan_episodes(split, names, n_episodes) if names else []
    out = Path(out)
    (out / EPISODES_DIR).mkdir(parents=True, exist_ok=True)
    _check_manifest(out, {"policy": policy_spec, "split": split, "split_build_seed": SPLIT_BUILD_SEED,
                          "seed": seed, "max_steps": max_steps,
                          "latency_steps": latency_steps, "threaded": threaded, **ir_settings.as_manifest(),
                          "condition": condition})
    todo = [e for e in plan if not result_path(out, e).exists()]
    logger.info("rollout %s on %s: %d episodes planned, %d already done, %d to run", policy_spec, split,
                len(plan), len(plan) - len(todo), len(todo))
    settings = RunSettings(seed, max_steps, latency_steps, threaded, ir_settings, condition)
    statuses = _run_todo(todo, policy_spec, out, settings, workers, progress)
    return RolloutSummary(out, len(plan), len(todo), len(plan) - len(todo),
                          sum(s == "error" for s in statuses), skipped_tasks)


def _run_todo(todo: list[EpisodeSpec], policy_spec: str, out: Path, settings: RunSettings, workers: int,
              progress: bool) -> list[str]:
    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo), desc="episodes", disable=not progress)
    statuses = []
    try:
        if workers == 1 or len(todo) <= 1:
            from bspatial.sim.mujoco_backend import MujocoBackend
            with MujocoBackend() as backend:
                for episode in todo:
                    statuses.append(run_one(backend, episode, policy_spec, out, settings)["status"])
                    bar.update()
        else:
            context = multiprocessing.get_context("spawn")
            jobs = [(e, policy_spec, out, settings) for e in todo]
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


__all__ = ["CheckpointPredictor", "EpisodePredictor", "EpisodeSpec", "POLICY_KINDS", "ROLLOUT_SPLITS", "RandomPolicy",
           "RolloutSummary", "SPLIT_BUILD_SEED", "check_policy_spec", "checkpoint_ir_mode", "load_instance",
           "load_results", "make_policy", "plan_episodes", "resolve_ir", "resolve_tasks", "result_path", "run_one",
           "run_rollouts"]
