"""Every perception measure of a VLM run against every policy's per-task success (Sec. 5.3.3, Table S11).

Manipulation measures (task-grounded VQA, tolerant and strict IR) pair with each manipulation policy's
soft and strict success; navigation VQA pairs with each navigation policy's success. Each pair is joined
on the tasks both sides score (:func:`~bspatial.evaluation.analysis.join.join`), and gets Spearman's rho
with average ranks (:func:`bspatial.scoring.stats.spearman`) and two bootstrap intervals
(:mod:`~bspatial.evaluation.analysis.bootstrap`). Each interval draws from its own generator, seeded
from the run seed and the cell's names, so adding a policy or a measure leaves the other cells' intervals
as they were.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bspatial.common.seeds import derive_seed
from bspatial.evaluation.analysis.bootstrap import (DEFAULT_RESAMPLES, Interval, check_n_resamples, over_items, over_tasks,
                                                   rho_or_none)
from bspatial.evaluation.analysis.join import Joined, TaskScores, join
from bspatial.evaluation.analysis.perception import MEASURES, NAVIGATION, Measure, read_perception
from bspatial.evaluation.analysis.success import PolicyRun, read_rollouts

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Correlation:
    """One cell: a perception measure against one policy's success rate.

    Attributes:
        measure: The perception measure.
        rate: The success rate ("soft" / "strict"; navigation: "strict", Table S11's success).
        policy: The policy's run.
        joined: The joined tasks and both sides' scores.
        rho: Spearman's rho, or None when a side is constant over the joined tasks.
        undefined: Why rho is None ("" when it is not).
        over_tasks: Bootstrap interval, tasks resampled.
        over_items: Bootstrap interval, items and episodes resampled within tasks.
    """

    measure: Measure
    rate: str
    policy: PolicyRun
    joined: Joined
    rho: float | None
    undefined: str
    over_tasks: Interval
    over_items: Interval


@dataclass(frozen=True)
class Analysis:
    """Every cell of one VLM run against the rollout runs, with the settings that made the intervals."""

    vlm_run: Path
    correlations: list[Correlation]
    n_resamples: int
    seed: int


def correlate_pair(measure: Measure, perception: TaskScores, policy: PolicyRun, rate: str,
                   n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> Correlation:
    """Join one measure with one policy's ``rate`` and compute rho and both intervals.

    Raises:
        JoinError: Fewer than 3 tasks are on both sides.
        ValueError: ``n_resamples`` is not an int >= 1.
    """
    check_n_resamples(n_resamples)
    joined = join(perception, policy.success[rate])
    rho = rho_or_none(joined.perception, joined.success)
    if rho is None:
        # No estimate, so no interval around one (resampled rows could still break the tie by chance).
        side = "perception" if len(set(joined.perception)) < 2 else f"{rate} success"
        none = Interval(None, None, 0, n_resamples)
        return Correlation(measure, rate, policy, joined, None, f"{side} is equal on every joined task", none, none)
    names = (seed, measure.name, rate, policy.label)
    tasks = over_tasks(joined.perception, joined.success, n_resamples, np.random.default_rng(derive_seed(*names, "tasks")))
    items = over_items(joined.perception_samples, joined.success_samples, n_resamples,
                       np.random.default_rng(derive_seed(*names, "items")))
    return Correlation(measure, rate, policy, joined, rho, "", tasks, items)


def _pairs(measures: Sequence[Measure], policies: Sequence[PolicyRun]) -> list[tuple[Measure, PolicyRun, str]]:
    return [(m, p, rate) for m in measures for p in policies if (m.pairing == NAVIGATION) == p.is_navigation
            for rate in p.success]


def correlate_runs(vlm_run: str | Path, rollout_runs: Sequence[str | Path], n_resamples: int = DEFAULT_RESAMPLES,
                   seed: int = 0, allow_incomplete: bool = False) -> Analysis:
    """Read a VLM run folder and rollout run folders and correlate every pair they allow.

    Raises:
        ValueError: A folder is not a run of its kind, no measure pairs with any policy, or a pair
            joins fewer than 3 tasks (:class:`~bspatial.evaluation.analysis.join.JoinError`).
    """
    if not rollout_runs:
        raise ValueError("give at least one --rollout run folder")
    perception = read_perception(vlm_run, allow_incomplete)
    policies = read_rollouts(rollout_runs)
    measures = [m for m in MEASURES if m.name in perception]
    pairs = _pairs(measures, policies)
    if not pairs:
        raise ValueError(f"nothing to pair: --vlm {vlm_run} has {[(m.name, m.pairing) for m in measures]}, the rollout "
                         f"runs have splits {sorted({p.split for p in policies})} (manipulation measures pair with "
                         "held_out / prompt_probe runs, navigation VQA with navigation runs)")
    for measure in MEASURES:
        if measure.name not in perception:
            logger.info("--vlm %s has no %s-%s part: no %s column", vlm_run, measure.suite, measure.config, measure.name)
    cells = [correlate_pair(m, perception[m.name], p, rate, n_resamples, seed) for m, p, rate in pairs]
    return Analysis(Path(vlm_run), cells, n_resamples, seed)
