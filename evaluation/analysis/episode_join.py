"""Perception and action on the same episode: each rollout episode joined with the VLM's answer on its own frame.

Table 3 correlates per-task means of two different item sets (perception items vs rollout episodes); the
``episode_aligned`` dataset config asks the VLM about each held-out and prompt-probe episode's own first frame
(item id ``ep-<split>-<task>-<index:04d>``, :func:`bspatial.construction.splits.aligned_episode_key`), so each
episode can be paired with whether the VLM got *that* scene right. Per policy, split and task family (and pooled
over families), per perception measure and success rate, a :class:`JoinCell` holds:

* success when the item was answered right and when it was wrong (pooled counts), and their difference compared
  within tasks (the Mantel-Haenszel common difference with Sato's 95% interval,
  :func:`bspatial.scoring.stats.mantel_haenszel_difference`);
* the Cochran-Mantel-Haenszel test of that association stratified by task
  (:func:`bspatial.scoring.stats.cochran_mantel_haenszel`): a task's difficulty moves both sides together, so
  only within-task association counts;
* the task-level Spearman rho of the same joined episodes (per-task accuracy vs per-task success), the
  Table 3 statistic on the aligned items, for comparison.

Episodes are read and scored by the rollout tables' own rule (:func:`~bspatial.evaluation.rollout.tables.group_records`:
the spatial condition only; :func:`~bspatial.evaluation.rollout.tables.rates_of`: a crashed episode is a failure).
An episode with no item of a measure, and an item with no episode, are left out of that measure and counted.

Why within tasks and not the pooled difference: with a chance VLM (which cannot know anything about an episode)
and the tiny policy on 4 held-out episodes per task, the pooled strict difference was -19.4 points with a normal
interval of [-32.7, -6.2], excluding 0: the few right answers fell on tasks the policy never solves, and a 0/10
group has no variance to widen a normal interval. Within tasks the same data give -9.2 [-24.8, +6.3] and CMH
p = 1.0, the reference's band. Scenes: a cell holds one policy's episodes of one split, each its own scene (the
manifests draw a seed per entry), so an interval clustered by scene is this one; a cell whose scenes repeat (a
hand-made manifest) is logged, since its interval then assumes independent scenes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bspatial.catalog.tasks import FAMILIES, TASKS, canonical_task_name
from bspatial.common.jsonl import read_jsonl
from bspatial.construction.publishing.aligned_records import ALIGNED_CONFIG
from bspatial.construction.splits import aligned_episode_key
from bspatial.evaluation.analysis.bootstrap import rho_or_none
from bspatial.evaluation.analysis.join import MIN_JOINED_TASKS
from bspatial.evaluation.analysis.perception import (MANIPULATION, MEASURES, Measure, load_summary, part_folder,
                                                    read_run_parts)
from bspatial.evaluation.analysis.success import MANIPULATION_SUCCESS, load_rollout_records
from bspatial.evaluation.rollout.tables import MANIPULATION_SPLITS, group_records, policy_label, rates_of
from bspatial.evaluation.vlm.run_files import SAMPLES_FILE, SUMMARY_FILE
from bspatial.scoring.stats import (MantelHaenszelDifference, MantelHaenszelTest, cochran_mantel_haenszel,
                                   mantel_haenszel_difference)

logger = logging.getLogger(__name__)

EPISODE_ALIGNED = ALIGNED_CONFIG
"""The dataset config of the items rendered from the evaluation episodes' own first frames."""
ALIGNED_MEASURES: tuple[Measure, ...] = tuple(replace(m, config=EPISODE_ALIGNED) for m in MEASURES
                                              if m.pairing == MANIPULATION)
"""VQA, tolerant and strict IR, read from the ``episode_aligned`` parts (same sample fields as Table 3's)."""
POOLED = "all"
"""The family column of a row pooled over every family."""

EpisodeKey = tuple[str, str, int]
"""(split, canonical task, index): how an aligned item names its episode."""


@dataclass(frozen=True)
class AlignedItem:
    """One aligned item's verdict: its id, the task its row names (canonical) and whether it was right."""

    item_id: str
    task: str
    right: bool


@dataclass(frozen=True)
class Episode:
    """One rollout episode: its task (canonical), family, index, seed and 0/1 success per rate."""

    task: str
    family: str
    index: int
    seed: int
    success: dict[str, int]

    @property
    def scene(self) -> tuple[str, int]:
        # Episodes of one task and seed share a scene layout: the unit the interval clusters on.
        return self.task, self.seed


@dataclass(frozen=True)
class PolicyGroup:
    """One policy's episodes on one manipulation split of one rollout run, keyed (split, task, index)."""

    run: Path
    policy: str
    split: str
    label: str
    episodes: dict[EpisodeKey, Episode]


@dataclass(frozen=True)
class GroupJoin:
    """A policy group joined with the VLM items: every episode with at least one item, and the unpaired counts.

    Attributes:
        group: The policy group.
        pairs: (episode, measure name -> right) for every episode some measure has an item for.
        episodes_without_item: Measure name -> episodes of the group with no item of that measure.
        items_without_episode: Measure name -> items of the group's split with no episode in the group.
    """

    group: PolicyGroup
    pairs: list[tuple[Episode, dict[str, bool]]]
    episodes_without_item: dict[str, int]
    items_without_episode: dict[str, int]


@dataclass(frozen=True)
class JoinCell:
    """One row of a measure's table: a policy group's episodes of one family (or all), one success rate.

    Attributes:
        join: The policy group's join.
        family: A family of :data:`~bspatial.catalog.tasks.FAMILIES`, or :data:`POOLED`.
        measure: Measure name.
        rate: "soft" or "strict".
        n_right / successes_right: Episodes whose item was right, and how many of them succeeded.
        n_wrong / successes_wrong: Likewise for items answered wrong.
        difference: Success rate right minus wrong (proportions) within tasks (Mantel-Haenszel, Sato's interval);
            None when no task holds both sides.
        association: CMH test stratified by task; None when no task has both sides and both outcomes.
        n_tasks: Tasks among the cell's episodes.
        task_rho: Spearman rho of per-task accuracy vs per-task success; None with fewer than 3 tasks or a
            constant side.
    """

    join: GroupJoin
    family: str
    measure: str
    rate: str
    n_right: int
    successes_right: int
    n_wrong: int
    successes_wrong: int
    difference: MantelHaenszelDifference | None
    association: MantelHaenszelTest | None
    n_tasks: int
    task_rho: float | None


@dataclass(frozen=True)
class EpisodeJoin:
    """Everything ``bspatial analyze join`` computed for one VLM run against the rollout runs."""

    vlm_run: Path
    rollout_runs: tuple[Path, ...]
    measures: tuple[Measure, ...]
    joins: tuple[GroupJoin, ...]
    cells: tuple[JoinCell, ...]


# ----------------------------------------------------------------------------- the VLM side


def _aligned_rows(path: Path, measure: Measure) -> dict[EpisodeKey, AlignedItem]:
    items: dict[EpisodeKey, AlignedItem] = {}
    for row in read_jsonl(path):
        item_id = row.get("id")
        key = aligned_episode_key(item_id) if isinstance(item_id, str) else None
        if key is None:
            raise ValueError(f"{path}: row id {item_id!r} is not an episode-aligned id ep-<split>-<task>-<index>; "
                             f"is this an {EPISODE_ALIGNED} part?")
        split, task, index = key
        try:
            key, row_task = (split, canonical_task_name(task), index), canonical_task_name(row.get("task"))
        except ValueError as error:
            raise ValueError(f"{path}: row {item_id!r}: {error}") from None
        value = row.get(measure.sample_field)
        if not isinstance(value, bool):
            raise ValueError(f"{path}: row {item_id!r} field {measure.sample_field!r} must be true or false, "
                             f"got {value!r}")
        if key in items:
            raise ValueError(f"{path}: rows {items[key].item_id!r} and {item_id!r} both name episode {key}")
        items[key] = AlignedItem(item_id, row_task, value)
    return items


def read_aligned_part(run: Path, measure: Measure,
                      allow_incomplete: bool = False) -> dict[EpisodeKey, AlignedItem] | None:
    """The items of one measure's ``episode_aligned`` part by episode, or None when the run has no such part.

    Raises:
        ValueError: The summary is unreadable or incomplete (unless ``allow_incomplete``), a row id is not
            an aligned id, its task is unknown, its field is not a bool, or two rows name one episode.
    """
    folder = part_folder(run, measure)
    if not (folder / SUMMARY_FILE).is_file():
        return None
    load_summary(folder / SUMMARY_FILE, allow_incomplete)  # Table 3's rule: an incomplete part is refused
    return _aligned_rows(folder / SAMPLES_FILE, measure)


def has_aligned_parts(run: str | Path) -> bool:
    """Whether ``run`` holds a summary of any ``episode_aligned`` part (the leaderboard asks before joining)."""
    return any((part_folder(Path(run), m) / SUMMARY_FILE).is_file() for m in ALIGNED_MEASURES)


def read_aligned(run: str | Path, allow_incomplete: bool = False) -> dict[str, dict[EpisodeKey, AlignedItem]]:
    """Measure name -> its items by episode, for every ``episode_aligned`` part the run has.

    Raises:
        ValueError: ``run`` is not a folder or has no such part, or a part is refused (:func:`read_aligned_part`).
    """
    return read_run_parts(run, ALIGNED_MEASURES, lambda folder, m: read_aligned_part(folder, m, allow_incomplete),
                          f"has no {EPISODE_ALIGNED} part (evaluate it with eval-vlm on the {EPISODE_ALIGNED} config)")


# ----------------------------------------------------------------------------- the rollout side


def _integer(run: Path, record: Mapping[str, Any], field: str) -> int:
    value = record.get(field)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"--rollout {run}: episode {record.get('task')!r} index {record.get('index')!r}: field "
                         f"{field!r} must be an integer, got {value!r}")
    return value


def _episode(run: Path, record: Mapping[str, Any]) -> tuple[EpisodeKey, Episode]:
    # rates_of of one episode is that episode's 0/1 outcome under the tables' one rule (a crash is a failure).
    alone = rates_of([record])
    (task,) = alone.per_task
    index, seed = _integer(run, record, "index"), _integer(run, record, "seed")
    success = {rate: getattr(alone, rate).successes for rate in MANIPULATION_SUCCESS}
    return (record["split"], task, index), Episode(task, TASKS[task].family, index, seed, success)


def read_policy_groups(runs: Sequence[str | Path]) -> list[PolicyGroup]:
    """The manipulation policy groups of the rollout runs, labelled uniquely (the run folder added to a label
    two runs share).

    Raises:
        ValueError: A run is given twice or is not a rollout run folder, a record lacks an integer index or seed,
            or one group holds an episode twice.
    """
    resolved = [Path(r).resolve() for r in runs]
    repeated = sorted({str(r) for r in resolved if resolved.count(r) > 1})
    if repeated:
        raise ValueError(f"--rollout given more than once for {repeated}")
    groups = []
    for run in map(Path, runs):
        for (policy, split), records in group_records(load_rollout_records(run)).items():
            if split not in MANIPULATION_SPLITS:
                logger.info("--rollout %s: %s episodes of %s have no aligned items; skipped", run, split, policy)
                continue
            episodes: dict[EpisodeKey, Episode] = {}
            for record in records:
                key, episode = _episode(run, record)
                if key in episodes:
                    raise ValueError(f"--rollout {run}: policy {policy!r} has episode {key} twice")
                episodes[key] = episode
            groups.append(PolicyGroup(run, policy, split, policy_label(policy), episodes))
    names = [(g.label, g.split) for g in groups]
    return [replace(g, label=f"{g.label} ({g.run})") if names.count((g.label, g.split)) > 1 else g for g in groups]


# ----------------------------------------------------------------------------- the join


def _check_task(item: AlignedItem, group: PolicyGroup, episode: Episode) -> None:
    if item.task != episode.task:
        raise ValueError(f"VLM item {item.item_id!r} has task {item.task!r} but its episode in --rollout {group.run} "
                         f"({group.policy}, {group.split}, index {episode.index}) has task {episode.task!r}")


def join_group(group: PolicyGroup, aligned: Mapping[str, Mapping[EpisodeKey, AlignedItem]]) -> GroupJoin:
    """Pair each episode of ``group`` with its item of every measure; count what has no partner.

    Raises:
        ValueError: A paired item's task differs from its episode's.
    """
    right: dict[EpisodeKey, dict[str, bool]] = {}
    without_item, without_episode = {}, {}
    for measure, items in aligned.items():
        without_item[measure] = 0
        for key, episode in group.episodes.items():
            item = items.get(key)
            if item is None:
                without_item[measure] += 1
                continue
            _check_task(item, group, episode)
            right.setdefault(key, {})[measure] = item.right
        without_episode[measure] = sum(key[0] == group.split and key not in group.episodes for key in items)
    pairs = [(group.episodes[key], right[key]) for key in group.episodes if key in right]
    scenes = [e.scene for e, _ in pairs]
    if len(set(scenes)) < len(scenes):
        logger.warning("--rollout %s (%s, %s): %d episodes share %d scenes; the intervals assume independent scenes",
                       group.run, group.policy, group.split, len(scenes), len(set(scenes)))
    return GroupJoin(group, pairs, without_item, without_episode)


def _cell(join: GroupJoin, family: str, measure: str, rate: str) -> JoinCell:
    pairs = [(e, r[measure]) for e, r in join.pairs if measure in r and family in (POOLED, e.family)]
    successes = [e.success[rate] for e, _ in pairs]
    flags = [right for _, right in pairs]
    by_task: dict[str, list[int]] = {}   # a, b, c, d of the task's 2x2 table (right/wrong x success/failure)
    for (episode, right), success in zip(pairs, successes):
        by_task.setdefault(episode.task, [0, 0, 0, 0])[(0 if right else 2) + (0 if success else 1)] += 1
    tables = [tuple(t) for t in by_task.values()]
    accuracy = [(t[0] + t[1]) / sum(t) for t in by_task.values()]
    success_rates = [(t[0] + t[2]) / sum(t) for t in by_task.values()]
    rho = rho_or_none(accuracy, success_rates) if len(by_task) >= MIN_JOINED_TASKS else None
    return JoinCell(join, family, measure, rate,
                    n_right=sum(flags), successes_right=sum(s for s, f in zip(successes, flags) if f),
                    n_wrong=len(flags) - sum(flags), successes_wrong=sum(s for s, f in zip(successes, flags) if not f),
                    difference=mantel_haenszel_difference(tables), association=cochran_mantel_haenszel(tables),
                    n_tasks=len(by_task), task_rho=rho)


def cells_of(join: GroupJoin, measures: Sequence[str]) -> list[JoinCell]:
    """Every row of one group: per measure and rate, each family with pairs (FAMILIES order), then pooled."""
    present = {e.family for e, _ in join.pairs}
    families = [f for f in FAMILIES if f in present] + [POOLED]
    return [_cell(join, family, measure, rate) for measure in measures for rate in MANIPULATION_SUCCESS
            for family in families]


def join_runs(vlm_run: str | Path, rollout_runs: Sequence[str | Path], allow_incomplete: bool = False) -> EpisodeJoin:
    """Read an eval-vlm run's ``episode_aligned`` parts and rollout runs, and join them episode by episode.

    Raises:
        ValueError: A folder is not a run of its kind, the VLM run has no ``episode_aligned`` part, a part is
            refused, an item's task differs from its episode's, or no episode pairs with any item.
    """
    if not rollout_runs:
        raise ValueError("give at least one --rollout run folder")
    aligned = read_aligned(vlm_run, allow_incomplete)
    groups = read_policy_groups(rollout_runs)
    joins = [join_group(group, aligned) for group in groups]
    if not any(j.pairs for j in joins):
        item_splits = sorted({key[0] for items in aligned.values() for key in items})
        raise ValueError(f"no rollout episode of --rollout {', '.join(map(str, rollout_runs))} has an aligned item in "
                         f"--vlm {vlm_run} (the items are of splits {item_splits}; the rollout groups are "
                         f"{[(g.policy, g.split) for g in groups]}); were both made from the same split manifests?")
    for j in joins:
        if not j.pairs:
            logger.warning("--rollout %s (%s, %s): no episode has an aligned item; no rows", j.group.run,
                           j.group.policy, j.group.split)
    measures = tuple(m for m in ALIGNED_MEASURES if m.name in aligned)
    cells = [c for j in joins if j.pairs for c in cells_of(j, [m.name for m in measures])]
    return EpisodeJoin(Path(vlm_run), tuple(Path(r) for r in rollout_runs), measures, tuple(joins), tuple(cells))


__all__ = ["ALIGNED_MEASURES", "EPISODE_ALIGNED", "POOLED", "AlignedItem", "Episode", "EpisodeJoin", "GroupJoin",
           "JoinCell", "PolicyGroup", "cells_of", "has_aligned_parts", "join_group", "join_runs", "read_aligned",
           "read_aligned_part", "read_policy_groups"]
