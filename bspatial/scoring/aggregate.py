"""Aggregation shared by the VQA and IR scores: per-group accuracy and the unweighted task mean.

Appendix 14: task-grounded manipulation VQA and IR are reported as the mean of per-task accuracies
(each of the 14 tasks weighted equally), while general VQA is pooled over questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from bspatial.scoring.validation import short_repr


def group_accuracy(correct: np.ndarray, labels: Sequence[str]) -> dict[str, tuple[float, int]]:
    """Mean of ``correct`` (percent) and count per distinct label, vectorised; labels sorted.

    A label without items has no entry (a breakdown reports it as absent, never as 0.0), so no
    labels at all give ``{}``; whether there is anything to score is the caller's check
    (:func:`bspatial.scoring.validation.check_not_empty`).

    Example:
        >>> group_accuracy(np.array([True, False, True]), ["a", "a", "b"])
        {'a': (50.0, 2), 'b': (100.0, 1)}
    """
    # pandas' hash factorisation: several times faster than np.unique's sort on 100k strings.
    inverse, names = pd.factorize(np.asarray(labels, dtype=object), sort=True)
    hits = np.bincount(inverse, weights=np.asarray(correct, dtype=float), minlength=len(names))
    counts = np.bincount(inverse, minlength=len(names))
    return {str(n): (percent(h, c), int(c)) for n, h, c in zip(names, hits, counts)}


def percent(hits: float, count: int) -> float:
    """``100 * hits / count``: the one formula of every group accuracy, batch or running totals.

    Example:
        >>> percent(1, 3)
        33.333333333333336
    """
    return float(100.0 * hits / count)


def mean_over_groups(per_group: Mapping[str, float]) -> float:
    """Unweighted mean of per-group accuracies (Appendix 14's per-task mean), in the dict's order.

    Example:
        >>> mean_over_groups({"a": 50.0, "b": 100.0})
        75.0
    """
    if not per_group:
        raise ValueError("per_group: expected at least one group, got none")
    return float(np.mean(list(per_group.values())))


def task_mean(values: np.ndarray, tasks: Sequence[str]) -> tuple[float, dict[str, float]]:
    """Unweighted mean over tasks of per-task mean accuracies, in percent.

    Args:
        values: per-item scores in [0, 1] (bool or float) [N].
        tasks: the task of each item [N].

    Returns:
        ``(mean over tasks, {task: per-task mean})``, both in percent; tasks in sorted order.

    Example:
        >>> task_mean(np.array([1, 0, 1, 1]), ["a", "a", "b", "b"])
        (75.0, {'a': 50.0, 'b': 100.0})
    """
    scores = np.asarray(values, dtype=float).reshape(-1)
    if len(tasks) != scores.size:
        raise ValueError(f"tasks: expected one task per value ({scores.size}), got {len(tasks)}")
    if scores.size == 0:
        raise ValueError("values: expected at least one value, got an empty array")
    if not np.isfinite(scores).all():
        raise ValueError(f"values: must be finite, got {short_repr(scores[~np.isfinite(scores)].tolist())}")
    per_task = {task: accuracy for task, (accuracy, _) in group_accuracy(scores, tasks).items()}
    return mean_over_groups(per_task), per_task
