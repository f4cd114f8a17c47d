"""Bootstrap percentile intervals for Spearman's rho between per-task perception and success scores.

Two sources of uncertainty, two intervals (the paper prints rho alone, Table 3 / Sec. 5.3.3):

* **over tasks**: the 14 (or 10) tasks are a sample of tasks. Resample the tasks with replacement,
  keep each task's pair of scores, recompute rho.
* **over items / episodes**: each per-task score is a mean over a few dozen questions, queries or
  episodes. Resample the per-sample rows within each task (both sides, independently), recompute every
  per-task score, then rho.

A resample whose perception or success scores are all equal has no rho (its ranks are constant); it is
left out and the interval is over the resamples that have one, whose count is reported. Rho itself is
:func:`bspatial.scoring.stats.spearman` (average ranks for ties) in every resample.

Example:
    >>> import numpy as np
    >>> x, y = [10.0, 20.0, 30.0, 40.0], [1.0, 3.0, 2.0, 4.0]
    >>> a = over_tasks(x, y, 200, np.random.default_rng(0))
    >>> (a.requested, a.defined <= a.requested, -1.0 <= a.low <= a.high <= 1.0)
    (200, True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bspatial.scoring.stats import DEFAULT_CONFIDENCE, spearman

DEFAULT_RESAMPLES = 2000
"""Bootstrap resamples per interval: enough for stable 2.5 / 97.5 percentiles (Efron & Tibshirani
1993 suggest >= 1000 for percentile intervals), ~0.1 s per interval over 14 tasks."""


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval of rho.

    Attributes:
        low: Lower bound (None when no resample had a rho).
        high: Upper bound (None when no resample had a rho).
        defined: Resamples that had a rho (neither side constant).
        requested: Resamples drawn.
        confidence: Two-sided level.
    """

    low: float | None
    high: float | None
    defined: int
    requested: int
    confidence: float = DEFAULT_CONFIDENCE


def rho_or_none(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho, or None when either side is constant (rho undefined)."""
    # Checked here rather than by catching spearman's ValueError, which would also hide a bad value.
    if len(set(x)) < 2 or len(set(y)) < 2:
        return None
    return spearman(x, y)


def _interval(rhos: list[float], requested: int, confidence: float) -> Interval:
    if not rhos:
        return Interval(None, None, 0, requested, confidence)
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(np.asarray(rhos), [tail, 100.0 - tail])
    return Interval(float(low), float(high), len(rhos), requested, confidence)


def check_n_resamples(n_resamples: int) -> None:
    """Raise ValueError unless ``n_resamples`` is an int >= 1."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an int >= 1, got {n_resamples!r}")


def _check(n_resamples: int, confidence: float) -> None:
    check_n_resamples(n_resamples)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def over_tasks(x: Sequence[float], y: Sequence[float], n_resamples: int, rng: np.random.Generator,
               confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Resample tasks with replacement (pairs kept together) and take the percentile interval of rho."""
    _check(n_resamples, confidence)
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(f"x and y must be 1-D of one length, got shapes {xs.shape} and {ys.shape}")
    draws = rng.integers(0, len(xs), size=(n_resamples, len(xs)))
    rhos = [r for r in (rho_or_none(xs[d].tolist(), ys[d].tolist()) for d in draws) if r is not None]
    return _interval(rhos, n_resamples, confidence)


def _resampled_scores(samples: Sequence[np.ndarray], n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """[n_resamples, n_tasks] per-task scores (percent) from rows resampled within each task."""
    columns = []
    for task_rows in samples:
        rows = np.asarray(task_rows, dtype=float)
        if rows.ndim != 1 or rows.size == 0:
            raise ValueError(f"every task needs at least one sample row, got shape {rows.shape}")
        picks = rng.integers(0, rows.size, size=(n_resamples, rows.size))
        # The per-task score is the mean of its 0/1 rows in percent: exactly what the summaries and
        # rates report (checked against them when the rows are read).
        columns.append(100.0 * rows[picks].mean(axis=1))
    return np.stack(columns, axis=1)


def over_items(perception_samples: Sequence[np.ndarray], success_samples: Sequence[np.ndarray], n_resamples: int,
               rng: np.random.Generator, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Resample each task's rows (items on one side, episodes on the other), recompute scores, then rho."""
    _check(n_resamples, confidence)
    if len(perception_samples) != len(success_samples):
        raise ValueError(f"one entry per task on both sides, got {len(perception_samples)} and {len(success_samples)}")
    x = _resampled_scores(perception_samples, n_resamples, rng)
    y = _resampled_scores(success_samples, n_resamples, rng)
    rhos = [r for r in (rho_or_none(a.tolist(), b.tolist()) for a, b in zip(x, y)) if r is not None]
    return _interval(rhos, n_resamples, confidence)
