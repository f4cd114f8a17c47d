"""One episode of a rollout run, from instance to result file.

Result file (``<out>/episodes/<task>-<index>.json``): task, variant, seed, split, index, policy, protocol (how the
policy's outputs became actions: :data:`~bspatial.evaluation.rollout.policies.PROTOCOLS`; the gymnasium env's
records say ``"caller"``: whoever stepped the env chose), condition,
instruction, status ("decided" / "timeout" / "sim_error" / "error" / "not_applicable"), outcome, soft_credit,
detail, failure_mode (one of the nine primary modes of :mod:`bspatial.scoring.failure_modes`, or ``success``;
under the no-intervention condition ``success`` / ``acted_unnecessarily``; null without a trace), secondary_modes
(:func:`bspatial.scoring.failure_modes.secondary_annotations`: a list, empty without a trace), steps, message,
trace (:meth:`EpisodeTrace.to_dict`, or null), ir (IR checkpoints: source, mode,
observations, observations without a target, and for predicted IR the VLM queries and failed
predictions; else null), spawn (navigation: the spawn validation's measurements; else null), context_frames
(checkpoints with scene-context frames: how many the episode's every chunk request carried; else null), latencies
(threaded inference: simulation steps each chunk took to arrive; else null), inference_ms (policies with a model:
:func:`~bspatial.evaluation.rollout.timing.latency_summary` of each model call's wall time; a measurement, not part
of the episode: paths that play the same episode differ only there; else null), perturbation (a condition with
perturbation axes: the episode's draws, :meth:`bspatial.tasks.perturbations.Perturbation.summary`; else null),
pointed (checkpoints with a pointing head run in this process: ``{"camera", "xy"}``, the head's point on the episode's
first observation on the IR prompt's 0-1000 scale, what ``eval-vlm --model policy-point:<run>`` answers the
episode's aligned IR item with; else null).

A crashed episode (any exception: a policy returning the wrong action shape, a model error) is written
with status ``"error"`` and its message, and counts as a failure (outcome ``"none"``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bspatial.common.files import atomic_write_text
from bspatial.evaluation.rollout.plan import RunSettings
from bspatial.evaluation.rollout.policies import make_policy, policy_protocol
from bspatial.evaluation.rollout.timing import latency_summary
from bspatial.sim.backend import SimBackend

if TYPE_CHECKING:
    from bspatial.construction.splits import SplitEntry

logger = logging.getLogger(__name__)


NAVIGATION_TRACE_SPLIT = "held_out"
"""Trace split of navigation episodes: Appendix 13.4 calls them "held-out navigation instances" (the trace
schema's splits are train / development / held_out / prompt_probe); the result file keeps split "navigation"."""
TRACE_SPLIT: dict[str, str] = {"held_out": "held_out", "prompt_probe": "prompt_probe",
                               "navigation": NAVIGATION_TRACE_SPLIT, "spa_id": "held_out", "spa_ood": "held_out",
                               "training": "train"}
"""Trace split per rollout split (the Spa-Bench episodes are unseen configurations, as held-out ones)."""
EPISODES_DIR = "episodes"


def _ir_summary(policy) -> dict[str, Any] | None:
    conditioner = getattr(getattr(policy, "predictor", None), "conditioner", None)
    return conditioner.summary() if conditioner is not None else None


def _pointed(policy) -> dict[str, Any] | None:
    return getattr(getattr(policy, "predictor", None), "pointed", None)


def _context_summary(policy) -> int | None:
    context = getattr(getattr(policy, "predictor", None), "context", None)
    return int(context.shape[1]) if context is not None else None


def result_path(out: Path, episode: SplitEntry) -> Path:
    return Path(out) / EPISODES_DIR / f"{episode.key}.json"


RECORD_EPISODE_FIELDS: tuple[str, ...] = ("task", "variant", "seed", "split", "index", "training_variant")
"""The manifest entry's fields a result record starts with (its ``training_index`` stays in the manifest)."""


def _record(episode: SplitEntry, policy_spec: str, **fields) -> dict[str, Any]:
    base = {**{name: getattr(episode, name) for name in RECORD_EPISODE_FIELDS}, "policy": policy_spec, "protocol": None, "condition": "spatial", "instruction": None,
            "status": "error",
            "outcome": "none", "soft_credit": False, "detail": "", "failure_mode": None, "secondary_modes": [],
            "steps": 0,
            "message": "", "trace": None, "ir": None, "spawn": None, "latencies": None, "context_frames": None,
            "inference_ms": None, "perturbation": None, "pointed": None}
    return {**base, **fields}


def load_instance(backend: SimBackend, episode: SplitEntry, condition: str = "spatial", perturbation=None):
    """Sample ``episode``'s instance under the language ``condition`` (:data:`bspatial.tasks.conditions.CONDITIONS`)
    with ``perturbation``'s scene changes (:class:`bspatial.tasks.perturbations.Perturbation`, or None) and load its
    scene; returns (instance, spawn record).

    Navigation spawns are redrawn until one passes the simulator's spawn validation (Appendix 13.4);
    its measurements are the spawn record (None for manipulation).

    Raises:
        bspatial.tasks.conditions.NotApplicable: the condition is undefined for this instance.
    """
    from bspatial.tasks.conditions import apply_condition
    from bspatial.tasks.episode import load_instance as load
    from bspatial.tasks.perturbations import perturb_instance

    def transform(instance):
        if condition != "spatial":
            instance = apply_condition(instance, condition)
        return instance if perturbation is None else perturb_instance(instance, perturbation)

    changed = condition != "spatial" or perturbation is not None
    instance, check = load(backend, episode.task, episode.variant, episode.seed, transform if changed else None)
    return instance, (asdict(check) if check is not None else None)


def _scored(result, condition: str) -> dict[str, Any]:
    """Outcome fields of a finished episode: Table S4's, or the no-intervention rule; plus its failure modes."""
    from bspatial.scoring.failure_modes import (no_intervention_mode, no_intervention_success, primary_failure_mode,
                                                secondary_annotations)

    if result.trace is None:
        return {"outcome": "none", "soft_credit": False, "detail": "", "failure_mode": None, "secondary_modes": []}
    from bspatial.tasks.perturbations import split_condition

    if split_condition(condition)[0] == "no_intervention":
        # The goal already held: success is leaving it (no Table S4 rule applies).
        kept = no_intervention_success(result.trace)
        mode = no_intervention_mode(result.trace)
        return {"outcome": "correct" if kept else "none", "soft_credit": False,
                "detail": "goal_left_alone" if kept else "acted", "failure_mode": mode,
                "secondary_modes": list(secondary_annotations(result.trace, mode))}
    outcome = result.outcome
    mode = primary_failure_mode(result.trace, outcome)
    return {"outcome": outcome.outcome, "soft_credit": bool(outcome.soft_credit), "detail": outcome.detail,
            "failure_mode": mode, "secondary_modes": list(secondary_annotations(result.trace, mode))}


def finished_record(episode: SplitEntry, policy_spec: str, result, *, protocol: str, condition: str = "spatial",
                    instruction: str | None = None, spawn: dict[str, Any] | None = None, policy=None,
                    perturbation: dict[str, Any] | None = None) -> dict[str, Any]:
    """The result record (module docstring) of a finished :class:`~bspatial.tasks.episode.EpisodeResult`.

    One record format for ``bspatial rollout`` and the gymnasium env (:mod:`bspatial.evaluation.envs`).
    """
    return _record(episode, policy_spec, protocol=protocol, condition=condition, instruction=instruction,
                   status=result.status,
                   steps=result.steps, message=result.message, **_scored(result, condition),
                   trace=result.trace.to_dict() if result.trace is not None else None,
                   ir=_ir_summary(policy), spawn=spawn, latencies=getattr(policy, "latencies", None) or None,
                   context_frames=_context_summary(policy),
                   inference_ms=latency_summary(getattr(policy, "inference_ms", None)), perturbation=perturbation,
                   pointed=_pointed(policy))


def run_one(backend: SimBackend, episode: SplitEntry, policy_spec: str, out: Path | None,
            settings: RunSettings = RunSettings(), inference=None) -> dict[str, Any]:
    """Run and record one episode; any exception becomes a status "error" record (the run goes on).

    An episode whose ``condition`` is undefined for its instance is recorded with status
    ``"not_applicable"`` (the tables leave it out). The record is written to ``out`` (:func:`write_record`);
    ``out=None`` only returns it (a worker's job: the run's own process writes the file). ``inference``: a
    checkpoint's batching server (:class:`~bspatial.evaluation.rollout.batching.ServerAddress`), else None.
    """
    from bspatial.tasks.conditions import NotApplicable
    from bspatial.tasks.episode import run_episode
    from bspatial.tasks.perturbations import episode_perturbation, seen_by_the_policy, split_condition

    condition, max_steps = settings.condition, settings.max_steps
    language, axes = split_condition(condition)
    perturbation = episode_perturbation(axes, settings.seed, episode.seed)
    drawn = perturbation.summary() if perturbation is not None else None   # every record keeps them
    instruction, policy, spawn = None, None, None
    protocol = policy_protocol(policy_spec)
    try:
        instance, spawn = load_instance(backend, episode, language, perturbation)
        instruction = instance.instruction
        policy = make_policy(policy_spec, seen_by_the_policy(backend, perturbation), instance, settings,
                             training_variant=episode.training_variant, inference=inference)
        steps = instance.step_budget if max_steps is None else min(max_steps, instance.step_budget)
        trace_split = TRACE_SPLIT[episode.split]
        # A no-intervention episode has nothing to decide early: it runs its whole budget.
        try:
            result = run_episode(backend, instance, policy, split=trace_split, max_steps=steps,
                                 stop_when_decided=language != "no_intervention")
        finally:
            if hasattr(policy, "close"):
                policy.close()   # threaded inference: no computation outlives its episode
        record = finished_record(episode, policy_spec, result, protocol=protocol, condition=condition,
                                 instruction=instruction, spawn=spawn, policy=policy, perturbation=drawn)
    except NotApplicable as why:
        record = _record(episode, policy_spec, protocol=protocol, condition=condition, status="not_applicable",
                         message=str(why), perturbation=drawn)
    except Exception as error:  # recorded, not hidden: the result file says what failed
        logger.warning("episode %s (%s, seed %d) crashed: %s: %s", episode.key, episode.variant, episode.seed,
                       type(error).__name__, error)
        record = _record(episode, policy_spec, protocol=protocol, condition=condition, instruction=instruction,
                         ir=_ir_summary(policy), spawn=spawn, message=f"{type(error).__name__}: {error}", perturbation=drawn)
    if out is not None:
        write_record(out, episode, record)
    return record


def write_record(out: Path, episode: SplitEntry, record: dict[str, Any]) -> Path:
    """Write ``episode``'s result record to its file under ``out`` (atomically: a kill leaves no half file)."""
    path = result_path(out, episode)
    path.parent.mkdir(parents=True, exist_ok=True)   # a gymnasium env's record folder may not exist yet
    atomic_write_text(path, json.dumps(record))
    return path


def load_results(out: str | Path) -> list[dict[str, Any]]:
    """Every episode result file under ``out`` (sorted by key); temp files of interrupted writes are ignored."""
    folder = Path(out) / EPISODES_DIR
    if not folder.is_dir():
        raise ValueError(f"{out} has no {EPISODES_DIR}/ folder of episode results")
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if not p.name.startswith(".")]
