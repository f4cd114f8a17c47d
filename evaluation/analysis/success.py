"""Per-task success of ``rollout`` run folders (:mod:`bspatial.evaluation.rollout.runner`).

A rollout run folder holds ``rollout.json`` (its settings) and ``episodes/<task>-<index>.json``, one
result file per episode. Its episodes are grouped and scored by the rollout tables' own functions
(:func:`~bspatial.evaluation.rollout.tables.group_records`: the paper's protocol only, i.e. the spatial
condition; :func:`~bspatial.evaluation.rollout.tables.rates_of`: a crashed episode is a failure), so a
per-task rate here is the one ``bspatial rollout`` prints:

* manipulation splits (held-out, prompt-probe): soft and strict success per task (Table 3 uses held-out
  soft success, Sec. 5.3.3);
* the navigation split: success per task, the strict rate (navigation is binary, Table S4; Table S11).

Each episode's own 0/1 outcome is also kept, for the episode-level bootstrap: it is ``rates_of`` of
that episode alone, and the per-task mean of these outcomes is checked to equal the per-task rate.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bspatial.evaluation.analysis.join import TaskScores
from bspatial.evaluation.rollout.tables import MANIPULATION_SPLITS, NAVIGATION_SPLIT, group_records, policy_label, rates_of

logger = logging.getLogger(__name__)

MANIPULATION_SUCCESS = ("soft", "strict")
"""Success rates correlated for manipulation, main one first (Sec. 5.3.3: soft held-out success)."""
NAVIGATION_SUCCESS = "strict"
"""Table S11's navigation success is the strict rate (the base satisfies the goal criterion)."""


@dataclass(frozen=True)
class PolicyRun:
    """One policy's episodes on one split, from one rollout run folder.

    Attributes:
        run: The run folder.
        policy: The policy spec the episodes were run with.
        split: The split ("held_out", "prompt_probe" or "navigation").
        label: The report column: the rollout tables' policy label, made unique across runs.
        success: Rate name ("soft" / "strict") -> per-task scores.
    """

    run: Path
    policy: str
    split: str
    label: str
    success: dict[str, TaskScores]

    @property
    def is_navigation(self) -> bool:
        return self.split == NAVIGATION_SPLIT


def _per_episode(records: Sequence[Mapping[str, Any]], rate: str) -> dict[str, list[float]]:
    by_task: dict[str, list[float]] = {}
    for record in records:
        # rates_of of one episode: its task's canonical name and its 0/1 outcome under the one rule.
        alone = rates_of([record])
        (task,) = alone.per_task
        by_task.setdefault(task, []).append(float(getattr(alone, rate).successes))
    return by_task


def task_scores(records: Sequence[Mapping[str, Any]], rate: str, source: str) -> TaskScores:
    """Per-task ``rate`` ("soft" / "strict") of one policy's episodes, with each episode's 0/1 outcome."""
    rates = rates_of(records)
    scores = {task: per[rate].rate for task, per in rates.per_task.items()}
    samples = {task: np.asarray(values) for task, values in _per_episode(records, rate).items()}
    for task, score in scores.items():
        # An identity of the rule (a rate is successes / n); checked because the bootstrap relies on it.
        if abs(100.0 * float(samples[task].mean()) - score) > 1e-9:
            raise RuntimeError(f"{source}: {task} {rate} rate {score} is not the mean of its episodes")
    return TaskScores(f"{source} ({rate} success)", scores, samples)


def load_rollout_records(run: Path) -> list[dict[str, Any]]:
    """Every episode record of the rollout run folder ``run``; refused when it is not one or holds none."""
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.runner import MANIFEST_NAME

    if not run.is_dir():
        raise ValueError(f"--rollout {run}: not a folder (expected a rollout run folder)")
    if not (run / MANIFEST_NAME).is_file():
        raise ValueError(f"--rollout {run} is not a rollout run folder: it has no {MANIFEST_NAME}")
    records = load_results(run)
    if not records:
        raise ValueError(f"--rollout {run}: its episodes/ folder holds no episode result files")
    return records


def read_rollout(run: str | Path) -> list[PolicyRun]:
    """The policy/split groups of one rollout run folder (labels not yet made unique across runs).

    Raises:
        ValueError: ``run`` is not a rollout run folder, or holds no episode of the paper's protocol.
    """
    run = Path(run)
    groups = group_records(load_rollout_records(run))
    found = []
    for (policy, split), records in groups.items():
        if split in MANIPULATION_SPLITS:
            rates = MANIPULATION_SUCCESS
        elif split == NAVIGATION_SPLIT:
            rates = (NAVIGATION_SUCCESS,)
        else:
            logger.warning("--rollout %s: split %r is not paired with perception (Table 3 / S11); skipped", run, split)
            continue
        source = f"{run} ({policy}, {split})"
        found.append(PolicyRun(run, policy, split, policy_label(policy),
                               {rate: task_scores(records, rate, source) for rate in rates}))
    if not found:
        raise ValueError(f"--rollout {run}: no episode of the spatial condition on a held_out, prompt_probe or "
                         "navigation split")
    return found


def read_rollouts(runs: Sequence[str | Path]) -> list[PolicyRun]:
    """Every run's groups, labelled uniquely: the policy label, then the split when not held-out, then
    the run folder when two runs would share a column.

    Raises:
        ValueError: A run is given twice, or is not a rollout run folder.
    """
    resolved = [Path(r).resolve() for r in runs]
    repeated = sorted({str(r) for r in resolved if resolved.count(r) > 1})
    if repeated:
        raise ValueError(f"--rollout given more than once for {repeated}")
    groups = [group for run in runs for group in read_rollout(run)]
    labels = [g.label + ("" if g.split in ("held_out", NAVIGATION_SPLIT) else f" [{g.split}]") for g in groups]
    shared = {label for label in labels if labels.count(label) > 1}
    labels = [f"{label} ({g.run})" if label in shared else label for g, label in zip(groups, labels)]
    return [PolicyRun(g.run, g.policy, g.split, label, g.success) for g, label in zip(groups, labels)]
