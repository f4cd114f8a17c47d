"""Per-task scores of one side of a correlation, and the join of two sides on their common tasks.

A side is a :class:`TaskScores`: one score per task (percent, as the run's own summary reports it) and
the per-sample 0/1 rows it is the mean of (VQA questions, IR queries or rollout episodes), which the
item-level bootstrap resamples. Tasks present on only one side are dropped and listed, never imputed.

Example:
    >>> import numpy as np
    >>> vqa = TaskScores("vlm", {"reach_dice": 50.0, "reach_tool": 100.0, "reach_plate": 0.0, "reach_item": 50.0},
    ...                  {t: np.array([1.0, 0.0]) for t in ("reach_dice", "reach_tool", "reach_plate", "reach_item")})
    >>> soft = TaskScores("rollout", {"reach_dice": 25.0, "reach_tool": 75.0, "reach_plate": 0.0, "reach_toys": 50.0},
    ...                   {t: np.array([1.0, 0.0]) for t in ("reach_dice", "reach_tool", "reach_plate", "reach_toys")})
    >>> joined = join(vqa, soft)
    >>> joined.tasks, joined.only_perception, joined.only_success
    (['reach_plate', 'reach_dice', 'reach_tool'], ['reach_item'], ['reach_toys'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bspatial.catalog.tasks import TASKS

MIN_JOINED_TASKS = 3
"""Fewest common tasks a rho is computed over: with two tasks the ranks agree or disagree, rho is +-1
whatever the scores, and it says nothing (the paper's rhos are over 14 and 10 tasks)."""


class JoinError(ValueError):
    """Two sides share fewer than :data:`MIN_JOINED_TASKS` tasks; the message names both sources."""


@dataclass(frozen=True)
class TaskScores:
    """One side of a correlation.

    Attributes:
        source: Where the scores come from (a file or run folder and the field), for messages.
        scores: Canonical task name -> score in percent.
        samples: Canonical task name -> the per-sample 0/1 values whose mean (x100) is the score.
    """

    source: str
    scores: dict[str, float]
    samples: dict[str, np.ndarray]


@dataclass(frozen=True)
class Joined:
    """The tasks both sides score, in Table S2 order, with both sides' scores and samples aligned."""

    tasks: list[str]
    perception: list[float]
    success: list[float]
    perception_samples: list[np.ndarray]
    success_samples: list[np.ndarray]
    only_perception: list[str]
    only_success: list[str]


def _table_order(tasks: set[str]) -> list[str]:
    # Table S2 order, as every per-task table of the package prints its rows.
    return [t for t in TASKS if t in tasks]


def join(perception: TaskScores, success: TaskScores) -> Joined:
    """Align two sides on the tasks they share.

    Raises:
        JoinError: If fewer than :data:`MIN_JOINED_TASKS` tasks are on both sides.
    """
    common = set(perception.scores) & set(success.scores)
    only_perception = _table_order(set(perception.scores) - common)
    only_success = _table_order(set(success.scores) - common)
    tasks = _table_order(common)
    if len(tasks) < MIN_JOINED_TASKS:
        raise JoinError(
            f"only {len(tasks)} task(s) {tasks} are in both {perception.source} and {success.source}; Spearman's "
            f"rho needs at least {MIN_JOINED_TASKS} (only in the first: {only_perception}; only in the second: "
            f"{only_success})")
    return Joined(tasks, [perception.scores[t] for t in tasks], [success.scores[t] for t in tasks],
                  [perception.samples[t] for t in tasks], [success.samples[t] for t in tasks],
                  only_perception, only_success)
