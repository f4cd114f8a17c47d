"""Cluster-robust (CR1) intervals against closed forms worked by hand and the OLS sandwich in matrix form.

The matrix reference is how statsmodels computes ``OLS(y, X).fit(cov_type="cluster")`` (not installed here):
``c · (X'X)^-1 (Σ_g X_g' e_g e_g' X_g) (X'X)^-1`` with ``c = G/(G-1) · (N-1)/(N-K)``, written for any design
matrix X, so it shares no code with the per-cluster sums of :mod:`bspatial.scoring.clustered`.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from bspatial.scoring.clustered import (
    clustered_difference_interval,
    clustered_interval,
    stratified_clustered_interval,
)
from bspatial.scoring.stats import wilson_interval

Z95 = 1.959963984540054  # Phi^-1(0.975)


def sandwich_cov(y: np.ndarray, x: np.ndarray, groups: list) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients and their CR1 covariance (statsmodels' cov_type="cluster" with its default correction)."""
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    bread = np.linalg.inv(x.T @ x)
    labels = sorted(set(groups), key=str)
    meat = np.zeros((x.shape[1], x.shape[1]))
    for label in labels:
        rows = [i for i, g in enumerate(groups) if g == label]
        score = x[rows].T @ resid[rows]
        meat += np.outer(score, score)
    n, k, g = x.shape[0], x.shape[1], len(labels)
    return beta, g / (g - 1) * (n - 1) / (n - k) * bread @ meat @ bread


def frames_fixture() -> tuple[list[int], list[str]]:
    """12 questions on 4 frames (3 each): frames f0, f1 all right, f2 all wrong, f3 one of three right."""
    scores = [1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0]
    frames = [f"f{i // 3}" for i in range(12)]
    return scores, frames


def test_items_sharing_frames_get_the_sandwich_interval_and_a_wider_one_than_independent_items():
    scores, frames = frames_fixture()
    clustered = clustered_interval(scores, frames)
    independent = clustered_interval(scores, range(len(scores)))
    beta, cov = sandwich_cov(np.asarray(scores, float), np.ones((12, 1)), frames)
    assert clustered.estimate == pytest.approx(beta[0]) == pytest.approx(7 / 12)
    assert clustered.se == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-12)
    # By hand: residual sums per frame 3(5/12), 3(5/12), 3(-7/12), 1 - 3(7/12) = -9/12, so
    # Σ² = (225 + 225 + 441 + 81) / 144 = 972 / 144 and V = G/(G-1) · Σ² / N² = 4/3 · 972/144 / 144 = 1/16.
    assert clustered.se ** 2 == pytest.approx(4 / 3 * 972 / 144 / 144, rel=1e-12) == pytest.approx(1 / 16)
    assert clustered.clusters == 4 and clustered.n == 12
    assert clustered.low == pytest.approx(max(0.0, 7 / 12 - Z95 * clustered.se), abs=1e-12)
    assert clustered.high == pytest.approx(min(1.0, 7 / 12 + Z95 * clustered.se), abs=1e-12)
    assert clustered.se > 1.5 * independent.se
    assert clustered.high - clustered.low > independent.high - independent.low


def test_identical_answers_within_frames_make_the_interval_three_times_wider():
    # lmms-eval 0.6: clustered standard errors "can be 3x larger than naive". 10 frames x 9 questions, a
    # frame all right or all wrong, half the frames right: V = 1/(4(G-1)) = 1/36 by hand, SE = 1/6.
    scores = [1] * 45 + [0] * 45
    frames = [i // 9 for i in range(90)]
    clustered = clustered_interval(scores, frames)
    independent = clustered_interval(scores, range(90))
    assert clustered.se == pytest.approx(1 / 6, rel=1e-12)
    assert independent.se == pytest.approx(math.sqrt(0.25 / 89), rel=1e-12)  # s²/N with s² = N/(N-1) · 1/4
    assert clustered.se / independent.se == pytest.approx(3.145, abs=1e-3)


@pytest.mark.parametrize("k,n", [(7, 12), (131, 469), (399, 401)])
def test_singleton_clusters_reduce_to_hc1_and_nearly_to_wald_and_wilson(k, n):
    scores = [1] * k + [0] * (n - k)
    result = clustered_interval(scores, [f"item-{i}" for i in range(n)])
    p = k / n
    assert result.clusters == n
    assert result.se == pytest.approx(math.sqrt(statistics.variance(scores) / n), rel=1e-12)  # HC1
    assert result.se == pytest.approx(math.sqrt(p * (1 - p) / n * n / (n - 1)), rel=1e-12)  # Wald · sqrt(n/(n-1))
    if n > 400:
        low, high = wilson_interval(k, n)
        assert result.low == pytest.approx(low, abs=0.01) and result.high == pytest.approx(high, abs=0.01)


def test_partial_credit_scores_match_the_sandwich():
    scores = [0.25, 1.0, 0.5, 0.0, 0.75, 1.0, 0.5]
    groups = ["a", "a", "b", "c", "c", "c", "d"]
    _, cov = sandwich_cov(np.asarray(scores), np.ones((7, 1)), groups)
    assert clustered_interval(scores, groups).se == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-12)


def test_stratified_task_mean_by_hand_and_against_the_sandwich_of_a_task_dummy_regression():
    # Two tasks; in task b two items share a layout. The task mean is the average of the two task dummies'
    # coefficients; with clusters nested in tasks its CR1 variance is Σ_t Var_t / T² (per-task factors).
    scores = [1, 0, 1, 1, 1, 0, 0]
    tasks = ["a", "a", "b", "b", "b", "b", "b"]
    clusters = ["a0", "a1", "b0", "b0", "b1", "b2", "b3"]
    result = stratified_clustered_interval(scores, clusters, tasks)
    assert result.estimate == pytest.approx((1 / 2 + 3 / 5) / 2)
    var_a = 2 / 1 * (0.5 ** 2 + 0.5 ** 2) / 4  # two singletons: s²/n = 0.5 / 2
    # task b: mean 3/5; cluster residual sums b0: 2(2/5), b1: 2/5, b2: -3/5, b3: -3/5
    var_b = 4 / 3 * ((4 / 5) ** 2 + (2 / 5) ** 2 + 2 * (3 / 5) ** 2) / 25
    assert result.se == pytest.approx(math.sqrt(var_a + var_b) / 2, rel=1e-12)
    for name, members in (("a", slice(0, 2)), ("b", slice(2, 7))):
        y = np.asarray(scores[members], float)
        _, cov = sandwich_cov(y, np.ones((len(y), 1)), clusters[members])
        assert cov[0, 0] == pytest.approx(var_a if name == "a" else var_b, rel=1e-12)
    assert result.clusters == 6 and result.n == 7


def test_one_cluster_or_a_one_cluster_stratum_has_no_interval():
    alone = clustered_interval([1, 0, 1], ["s", "s", "s"])
    assert (alone.estimate, alone.se, alone.low, alone.high, alone.clusters) == (pytest.approx(2 / 3), None, None, None, 1)
    stratified = stratified_clustered_interval([1, 0, 1], ["x", "y", "z"], ["a", "a", "b"])
    assert stratified.se is None and stratified.low is None and stratified.estimate == pytest.approx(0.75)


def test_interval_is_clipped_to_the_score_range():
    result = clustered_interval([1, 1, 1, 1, 1, 0], ["a", "a", "b", "b", "c", "c"])
    # By hand: mean 5/6; residual sums a: 2/6, b: 2/6, c: 1/6 - 5/6 = -4/6, so Σ² = (4 + 4 + 16) / 36 = 2/3 and
    # V = 3/2 · (2/3) / 36 = 1/36, SE = 1/6. The high end 5/6 + z/6 = 1.16 is clipped to 1; the low end is not.
    assert result.se == pytest.approx(1 / 6, rel=1e-12)
    assert result.estimate + Z95 * result.se > 1.0 and result.high == 1.0
    assert result.low == pytest.approx(5 / 6 - Z95 / 6, abs=1e-12)   # 0.50667


def test_paired_difference_matches_the_sandwich_of_the_differences():
    a = [1, 1, 0, 1, 1, 0, 1, 1]
    b = [0, 1, 0, 0, 1, 1, 0, 0]
    groups = ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"]
    d = np.asarray(a, float) - np.asarray(b, float)
    beta, cov = sandwich_cov(d, np.ones((8, 1)), groups)
    result = clustered_difference_interval(a, b, groups)
    assert result.estimate == pytest.approx(beta[0]) == pytest.approx(3 / 8)
    assert result.se == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-12)
    assert result.low == pytest.approx(max(-1.0, 3 / 8 - Z95 * result.se), abs=1e-12)
    assert result.high == pytest.approx(min(1.0, 3 / 8 + Z95 * result.se), abs=1e-12)


@pytest.mark.parametrize("call,message", [
    (lambda: clustered_interval([], []), "at least one item"),
    (lambda: clustered_interval([1, 0], ["a"]), r"clusters must give one entry per score \(2\), got 1"),
    (lambda: clustered_interval([1, 1.5], ["a", "b"]), r"scores\[1\] must be a number in \[0, 1\], got 1.5"),
    (lambda: clustered_interval([1, float("nan")], ["a", "b"]), r"scores\[1\]"),
    (lambda: clustered_interval([1, 0], ["a", "b"], confidence=1.0), "confidence must be in"),
    (lambda: stratified_clustered_interval([1, 0], ["a", "a"], ["t1", "t2"]), "cluster 'a' spans strata 't1' and 't2'"),
    (lambda: clustered_difference_interval([1, 0], [1], ["a", "b"]), "same items, got 2 and 1"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
