"""Rollouts of a policy on an evaluation split: one resumable JSON result file per episode.

``run_rollouts(policy_spec, split, tasks, out)`` plans the split's episodes (:mod:`.plan`), refuses
unknown splits / tasks / policies (:mod:`.policies`) before any simulator starts, skips episodes whose
result file exists, and runs the rest (:mod:`.episodes`), in this process, in ``workers`` spawned
processes or on ``ray`` actors (one simulator each, :mod:`bspatial.common.executors`). World, task and
runner stay separate: the episode loop is :func:`bspatial.tasks.episode.run_episode`.

Splits: ``held_out`` and ``prompt_probe`` run the manipulation tasks; ``navigation`` runs the 10
navigation tasks (Table S11), each spawn drawn and physically validated by
:func:`bspatial.tasks.navigation.sample_validated_instance` (Appendix 13.4). Episodes come from the split
manifests of :mod:`bspatial.construction.splits`: held-out entries pair unseen scene seeds with
relation-reversed variants, prompt-probe entries reuse training scenes with a variant whose target
differs, navigation entries are held-out spawn seeds; Table S2's per-task counts (469 / 700 / 401 in
all). ``n_episodes`` keeps the first ``n`` entries of each task (smoke runs).

Spa-Bench conditions (``condition``, :mod:`bspatial.tasks.conditions`) rerun the same manifest entries
with a direct or paraphrased instruction, or as no-intervention scenes whose goal already holds
(success = not acting, :func:`bspatial.scoring.failure_modes.no_intervention_success`; the scripted
reference holds still there). An entry whose condition is undefined is recorded with status
``"not_applicable"``. A crashed episode is recorded as an error and the run goes on.

Workers only compute: each job returns its episode's record and this process writes the result file, so a
run on a Ray cluster writes the same files, in the same place, as a local one; an episode whose Ray worker
died is rerun and written once. Local worker processes and Ray actors die with the run: a killed run writes
nothing more, and its rerun removes the temporary files of result writes it cut short.
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence


from bspatial.common.executors import check_ray_address, import_ray, open_executor
from bspatial.common.files import check_run_settings, remove_stale_temp_files, require_folder_path
from bspatial.common.locks import run_folder_lock
from bspatial.evaluation.rollout.batching import DEFAULT_MAX_WAIT_S, InferenceServer
from bspatial.evaluation.rollout.episodes import EPISODES_DIR, result_path, run_one, write_record
from bspatial.evaluation.rollout.plan import SPLIT_BUILD_SEED, RunSettings, plan_episodes, resolve_tasks
from bspatial.evaluation.rollout.policies import (REFERENCE_BEHAVIOURS, check_policy_spec, load_batch_predictor,
                                                  resolve_ir)
from bspatial.sim.process import close_process_backends, process_backend

if TYPE_CHECKING:
    from bspatial.construction.splits import SplitEntry

logger = logging.getLogger(__name__)


MANIFEST_NAME = "rollout.json"
"""Run settings written to ``out``; a resumed run must use the same ones."""


@dataclass(frozen=True)
class BatchSettings:
    """Batched inference (``bspatial rollout --batch-inference``): one server, ``max_batch`` requests at most
    (None = one per worker), the first waiting ``max_wait_s`` at most for the others."""

    max_batch: int | None = None
    max_wait_s: float = DEFAULT_MAX_WAIT_S

    def check(self, policy_spec: str, ray: str | None) -> None:
        """Refuses what cannot be served (:func:`~bspatial.evaluation.rollout.policies.batch_refusal`), Ray actors,
        bad sizes."""
        from bspatial.evaluation.rollout.policies import batch_refusal

        refusal = batch_refusal(policy_spec)
        if refusal is not None:
            raise ValueError(f"batched inference serves BSpatialVLA checkpoints and lerobot: policies; {refusal}")
        if ray is not None:
            raise ValueError("batched inference runs on this machine's worker processes (a local socket); "
                             "it cannot be combined with --ray")
        if self.max_batch is not None and (isinstance(self.max_batch, bool) or self.max_batch < 1):
            raise ValueError(f"max_batch must be >= 1, got {self.max_batch!r}")
        if not self.max_wait_s >= 0:
            raise ValueError(f"max_wait_s must be >= 0, got {self.max_wait_s!r}")


@dataclass
class RolloutSummary:
    """What :func:`run_rollouts` did."""

    out: Path
    planned: int
    ran: int
    skipped_existing: int
    errors: int
    skipped_tasks: list[str] = field(default_factory=list)
    first_error: str | None = None
    """The message of the first crashed episode of this invocation, if any."""


# ---- the job (in this process, a worker process or a Ray actor) ---------------------------------

def _episode_job(args: tuple) -> dict[str, Any]:
    """One episode's result record, computed on this process's simulator (the caller writes it)."""
    episode, policy_spec, settings, inference = args
    return run_one(process_backend(), episode, policy_spec, None, settings, inference)


# ---- the run -----------------------------------------------------------------------------------


def _check_condition(condition: str, split: str) -> str:
    """The canonical name of a checked condition (language condition and perturbation axes,
    :mod:`bspatial.tasks.perturbations`)."""
    from bspatial.tasks.perturbations import condition_name, split_condition

    language, axes = split_condition(condition)
    if split == "navigation" and language != "spatial":
        raise ValueError(f"condition {language!r} is defined for manipulation splits only, got split 'navigation' "
                         "(the perturbation axes apply to every split)")
    return condition_name(language, axes)


def _check_manifest(out: Path, settings: dict[str, Any]) -> None:
    check_run_settings(out / MANIFEST_NAME, settings, "a run")


def _scripted_tasks(tasks: list[str]) -> tuple[list[str], list[str]]:
    from bspatial.catalog.tasks import TASKS
    from bspatial.tasks.experts import EXPERTS

    keep = [t for t in tasks if TASKS[t].family in EXPERTS]   # navigation's grid-A* expert is one of them
    skipped = [t for t in tasks if t not in keep]
    for t in skipped:
        logger.warning("scripted policy: skipping task %s: no expert for family %r (experts: %s)",
                       t, TASKS[t].family, sorted(EXPERTS))
    return keep, skipped


def run_rollouts(policy_spec: str, split: str, tasks: Sequence[str] | None, out: str | Path,
                 settings: RunSettings = RunSettings(), *, n_episodes: int | None = None, workers: int | None = None,
                 ray: str | None = None, progress: bool = False, batch: BatchSettings | None = None) -> RolloutSummary:
    """Run (or resume) the rollouts of ``policy_spec`` on ``split``; one result file per episode under ``out``.

    What an episode does is ``settings`` (recorded in the run's manifest: a rerun with other settings is
    refused); which episodes run, where and how visibly are the keyword arguments.

    Args:
        policy_spec: "scripted", "random" or a checkpoint folder.
        split: "held_out", "prompt_probe" (manipulation) or "navigation" (the 10 navigation tasks).
        tasks: task names (any spelling); None = every task with episodes in the split.
        out: run folder; finished episodes found there are skipped.
        settings: how every episode runs (:class:`~bspatial.evaluation.rollout.plan.RunSettings`).
        n_episodes: episodes per task (default: the Table S2 count of the split).
        workers: processes (spawned, one simulator each); None or 1 runs in this process. With ``ray``: the
            number of Ray actors (default: one per CPU of the cluster).
        ray: run the episodes on Ray actors: "auto" (join the cluster Ray finds, else start a local one) or a
            cluster address; None = this machine's processes. Same result files either way.
        progress: show progress (a bar on a terminal, log lines in a log file: :mod:`bspatial.common.progress`).
        batch: serve a checkpoint's inference from this process to every worker, batched
            (:mod:`bspatial.evaluation.rollout.batching`); None = each worker runs its own copy.
    """
    if batch is not None:
        batch.check(policy_spec, ray)   # before check_policy_spec, which loads a checkpoint or calls a server
    policy_spec = check_policy_spec(policy_spec)
    if policy_spec in REFERENCE_BEHAVIOURS and split == "navigation":
        raise ValueError(f"policy {policy_spec!r} is a manipulation reference (a distractor, a memorized target, a "
                         "stop before committing); navigation has none: use scripted, random or hold")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    if check_ray_address(ray) is not None:
        import_ray()   # without Ray, refused before any folder is touched
    names = resolve_tasks(split, tasks)
    explicit = settings.ir
    settings = replace(settings, ir=resolve_ir(policy_spec, split, explicit.source if explicit else None,
                                               explicit.model if explicit else None))
    settings = replace(settings, condition=_check_condition(settings.condition, split))
    skipped_tasks: list[str] = []
    if policy_spec == "scripted":
        names, skipped_tasks = _scripted_tasks(names)
    plan = plan_episodes(split, names, n_episodes) if names else []
    out = require_folder_path(out)
    with run_folder_lock(out, f"rollout --policy {policy_spec} --split {split}"):
        for folder in (out, out / EPISODES_DIR):   # we hold out's lock: a temp file there is a killed run's
            remove_stale_temp_files(folder)
        (out / EPISODES_DIR).mkdir(parents=True, exist_ok=True)
        _check_manifest(out, {"policy": policy_spec, "split": split, "split_build_seed": SPLIT_BUILD_SEED,
                              "seed": settings.seed, "max_steps": settings.max_steps,
                              "latency_steps": settings.latency_steps, "threaded": settings.threaded,
                              **settings.ir.as_manifest(), "condition": settings.condition})
        todo = [e for e in plan if not result_path(out, e).exists()]
        logger.info("rollout %s on %s: %d episodes planned, %d already done, %d to run", policy_spec, split,
                    len(plan), len(plan) - len(todo), len(todo))
        statuses = _run_todo(todo, policy_spec, out, settings, workers, ray, progress, batch)
        crashed = [e for e in todo if statuses[e.key] == "error"]
        first_error = json.loads(result_path(out, crashed[0]).read_text())["message"] if crashed else None
        return RolloutSummary(out, len(plan), len(todo), len(plan) - len(todo), len(crashed), skipped_tasks, first_error)


def _run_todo(todo: list[SplitEntry], policy_spec: str, out: Path, settings: RunSettings, workers: int | None,
              ray: str | None, progress: bool, batch: BatchSettings | None = None) -> dict[str, str]:
    """Run the episodes (the executor of ``workers`` / ``ray``), writing each result file as it arrives;
    returns episode key -> status."""
    from bspatial.common.progress import progress_bar

    statuses: dict[str, str] = {}
    if not todo:
        return statuses   # nothing to run: no pool, no Ray start-up
    bar = progress_bar(len(todo), "episodes", "episode", enabled=progress)
    # A worker pool is not worth its start-up for one episode; Ray is asked for by name, so it is used.
    local_workers = 1 if len(todo) <= 1 and ray is None else workers
    server = (InferenceServer(partial(load_batch_predictor, policy_spec), batch.max_batch or local_workers or 1,
                              batch.max_wait_s) if batch is not None else contextlib.nullcontext())
    try:
        with server, open_executor(local_workers, ray) as executor:
            inference = server.address if batch is not None else None
            by_key = {episode.key: episode for episode in todo}
            for episode in todo:
                executor.submit(episode.key, _episode_job, (episode, policy_spec, settings, inference))
            for key, record in executor.completed():
                write_record(out, by_key[key], record)
                statuses[key] = record["status"]
                bar.update()
    finally:
        bar.close()
        close_process_backends()
    return statuses


__all__ = ["MANIFEST_NAME", "BatchSettings", "RolloutSummary", "run_rollouts"]
