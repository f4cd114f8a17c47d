"""Cluster-robust intervals of mean scores: items that share a scene or a frame are not independent.

General VQA asks several questions of one frame and several frames of one apartment; a model that
misreads an apartment misses many of its questions together. An interval that treats such items as
independent is too narrow (lmms-eval 0.6 reports cluster-robust standard errors, which "can be 3x
larger than naive"). This module holds the one rule the reports use:

* :func:`clustered_interval`: the mean of per-item scores in [0, 1] with the CR1 (Liang & Zeger 1986)
  sandwich variance, ``G/(G-1) · Σ_g (Σ_{i∈g} (y_i - ȳ))² / N²`` over G clusters of N items, and a normal
  interval ``ȳ ± z·SE`` clipped to [0, 1]. This is what ``statsmodels`` OLS of y on a constant with
  ``cov_type="cluster"`` computes (its small-sample factor ``G/(G-1)·(N-1)/(N-K)`` is ``G/(G-1)`` for K = 1).
  With one item per cluster it is HC1, ``s²/N`` with the unbiased sample variance: the "independent
  items" interval the reports print beside it comes from this same function, so the ratio of the two
  standard errors is the clustering's effect and nothing else.
* :func:`stratified_clustered_interval`: Appendix 14's unweighted mean over tasks of per-task means
  (Table 2), each task a fixed stratum: ``Var = Σ_t Var_t / T²`` with ``Var_t`` the CR1 variance of task t's
  mean (clusters must nest in tasks), as survey software does for stratified cluster samples.
* :func:`clustered_difference_interval`: the paired difference of two runs' scores on the same items,
  through the affine map ``d = 2·m - 1`` of the mean of ``(a - b + 1)/2`` (CR1 is affine-equivariant).

Known limits, said here rather than hidden: with fewer than 2 clusters there is no between-cluster
variance to estimate and the interval is None; with few clusters (under ~20-50, Cameron & Miller 2015)
CR1 is itself too narrow; a mean of exactly 0 or 1 has zero variance and a point interval (the Wilson
interval of :func:`bspatial.scoring.stats.wilson_interval` handles that end of a pooled k/n).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

# _z is the stats layer's one normal quantile (and its check of ``confidence``); reuse it, don't copy it.
from bspatial.scoring.stats import DEFAULT_CONFIDENCE, _z


@dataclass(frozen=True)
class ClusteredInterval:
    """A mean score with its cluster-robust standard error and normal interval, as proportions.

    Attributes:
        estimate: The mean (or the mean of per-stratum means), in [0, 1] (in [-1, 1] for a difference).
        se: CR1 standard error; None with fewer than 2 clusters (in some stratum, when stratified).
        low: Lower bound, clipped to the score range; None when ``se`` is None.
        high: Upper bound, clipped likewise; None when ``se`` is None.
        n: Items.
        clusters: Distinct clusters G (``== n`` when every item is its own cluster).
        confidence: Two-sided level.
    """

    estimate: float
    se: float | None
    low: float | None
    high: float | None
    n: int
    clusters: int
    confidence: float = DEFAULT_CONFIDENCE


def _scores(values: Sequence[float], low: float = 0.0, high: float = 1.0) -> list[float]:
    out = []
    for i, value in enumerate(values):
        try:
            number = float(value)
        except (TypeError, ValueError) as error:
            raise ValueError(f"scores[{i}] must be a number in [{low:g}, {high:g}], got {value!r}") from error
        if not low <= number <= high:  # also rejects NaN
            raise ValueError(f"scores[{i}] must be a number in [{low:g}, {high:g}], got {value!r}")
        out.append(number)
    return out


def _check_lengths(n: int, **others: Sequence[Hashable]) -> None:
    if n == 0:
        raise ValueError("scores must hold at least one item, got none")
    for name, values in others.items():
        if len(values) != n:
            raise ValueError(f"{name} must give one entry per score ({n}), got {len(values)}")


def _cr1(ys: list[float], clusters: Sequence[Hashable]) -> tuple[float, float | None, int]:
    """(mean, CR1 variance of the mean or None with < 2 clusters, G)."""
    n = len(ys)
    mean = sum(ys) / n
    totals: dict[Hashable, float] = {}
    for y, cluster in zip(ys, clusters):
        totals[cluster] = totals.get(cluster, 0.0) + (y - mean)  # each cluster's summed residual
    g = len(totals)
    if g < 2:
        return mean, None, g
    return mean, g / (g - 1) * sum(t * t for t in totals.values()) / (n * n), g


def _interval(estimate: float, variance: float | None, n: int, g: int, confidence: float,
              bounds: tuple[float, float] = (0.0, 1.0)) -> ClusteredInterval:
    z = _z(confidence)
    if variance is None:
        return ClusteredInterval(estimate, None, None, None, n, g, confidence)
    se = math.sqrt(variance)
    low, high = max(bounds[0], estimate - z * se), min(bounds[1], estimate + z * se)
    return ClusteredInterval(estimate, se, low, high, n, g, confidence)


def clustered_interval(scores: Sequence[float], clusters: Sequence[Hashable],
                       confidence: float = DEFAULT_CONFIDENCE) -> ClusteredInterval:
    """Mean of ``scores`` (each in [0, 1]) with a CR1 cluster-robust normal interval clipped to [0, 1].

    Args:
        scores: Per-item scores (0/1 correctness, or partial credit in [0, 1]).
        clusters: Per-item cluster key (items sharing a scene or frame share a key).
        confidence: Two-sided level.

    Raises:
        ValueError: No scores, lengths differ, a score outside [0, 1], or confidence outside (0, 1).

    Example:
        Three frames asked two questions each, a frame all right or all wrong (a clustered design), vs
        the same six answers as independent items:

        >>> scores = [1, 1, 1, 1, 0, 0]
        >>> c = clustered_interval(scores, ["f1", "f1", "f2", "f2", "f3", "f3"])
        >>> i = clustered_interval(scores, range(6))
        >>> (round(c.estimate, 4), c.clusters, round(c.se, 4), round(i.se, 4))
        (0.6667, 3, 0.3333, 0.2108)
        >>> round(c.low, 4), c.high
        (0.0133, 1.0)
    """
    ys = _scores(scores)
    _check_lengths(len(ys), clusters=clusters)
    mean, variance, g = _cr1(ys, clusters)
    return _interval(mean, variance, len(ys), g, confidence)


def stratified_clustered_interval(scores: Sequence[float], clusters: Sequence[Hashable], strata: Sequence[Hashable],
                                  confidence: float = DEFAULT_CONFIDENCE) -> ClusteredInterval:
    """Unweighted mean over strata of per-stratum means (Appendix 14's task mean) with a CR1 interval.

    Each stratum's mean gets its own CR1 variance (:func:`clustered_interval`'s rule); the strata are fixed
    (the 14 tasks are the benchmark, not a sample of tasks), so ``Var = Σ_t Var_t / T²``. A stratum with
    one cluster has no variance estimate, so neither has the mean (None, as Stata's default for a
    singleton unit): reporting 0 for it would narrow the interval silently.

    Raises:
        ValueError: As :func:`clustered_interval`, or a cluster key appears in two strata (clusters
            must nest in strata, or their covariance across strata is lost).

    Example:
        >>> r = stratified_clustered_interval([1, 0, 1, 1, 1, 0], range(6), ["a", "a", "b", "b", "b", "b"])
        >>> round(r.estimate, 4), round(r.se, 4), r.clusters   # (0.5 + 0.75) / 2; sqrt(0.25 + 0.0625) / 2
        (0.625, 0.2795, 6)
    """
    ys = _scores(scores)
    _check_lengths(len(ys), clusters=clusters, strata=strata)
    by_stratum: dict[Hashable, list[int]] = {}
    home: dict[Hashable, Hashable] = {}
    for i, (cluster, stratum) in enumerate(zip(clusters, strata)):
        if home.setdefault(cluster, stratum) != stratum:
            raise ValueError(f"cluster {cluster!r} spans strata {home[cluster]!r} and {stratum!r}; clusters must nest "
                             f"in strata")
        by_stratum.setdefault(stratum, []).append(i)
    means, variances = [], []
    for members in by_stratum.values():
        mean, variance, _ = _cr1([ys[i] for i in members], [clusters[i] for i in members])
        means.append(mean)
        variances.append(variance)
    t = len(means)
    total = None if any(v is None for v in variances) else sum(variances) / (t * t)  # type: ignore[arg-type]
    return _interval(sum(means) / t, total, len(ys), len(home), confidence)


def clustered_difference_interval(a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable],
                                  confidence: float = DEFAULT_CONFIDENCE) -> ClusteredInterval:
    """Mean paired difference ``a - b`` (scores in [0, 1] on the same items) with a CR1 interval in [-1, 1].

    Computed as ``2·m - 1`` with m the :func:`clustered_interval` of ``(a_i - b_i + 1) / 2`` (in [0, 1]):
    the mean, its CR1 standard error (times 2) and the clipping all map exactly.

    Example:
        >>> d = clustered_difference_interval([1, 1, 0, 1], [0, 1, 0, 0], ["s1", "s1", "s2", "s3"])
        >>> d.estimate, round(d.se, 4), d.clusters
        (0.5, 0.2165, 3)
    """
    xs, ys = _scores(a), _scores(b)
    if len(xs) != len(ys):
        raise ValueError(f"a and b must score the same items, got {len(xs)} and {len(ys)} scores")
    half = clustered_interval([(x - y + 1.0) / 2.0 for x, y in zip(xs, ys)], clusters, confidence)

    def back(value: float | None) -> float | None:
        return None if value is None else 2.0 * value - 1.0

    return ClusteredInterval(2.0 * half.estimate - 1.0, None if half.se is None else 2.0 * half.se, back(half.low),
                             back(half.high), half.n, half.clusters, confidence)
