"""Per-group accuracy and the unweighted task mean (Appendix 14)."""

import numpy as np
import pytest

from bspatial.scoring.aggregate import group_accuracy, task_mean


def test_group_accuracy_matches_a_plain_loop():
    rng = np.random.default_rng(0)
    correct = rng.random(500) < 0.4
    labels = [f"t{i}" for i in rng.integers(0, 7, 500)]
    expected = {}
    for c, lab in zip(correct, labels):
        hits, n = expected.get(lab, (0, 0))
        expected[lab] = (hits + int(c), n + 1)
    got = group_accuracy(correct, labels)
    assert {k: (pytest.approx(100 * h / n), n) for k, (h, n) in expected.items()} == got


def test_task_mean_is_unweighted_over_tasks():
    values = np.array([1, 1, 1, 1, 0, 0])  # task a: 4/4, task b: 0/2
    mean, per_task = task_mean(values, ["a", "a", "a", "a", "b", "b"])
    assert per_task == {"a": 100.0, "b": 0.0}
    assert mean == 50.0  # pooled would be 66.7
    with pytest.raises(ValueError, match=r"tasks: expected one task per value \(6\), got 2"):
        task_mean(values, ["a", "b"])
    with pytest.raises(ValueError, match=r"values: expected at least one value"):
        task_mean(np.array([]), [])
    with pytest.raises(ValueError, match=r"values: must be finite, got \[nan\]"):
        task_mean(np.array([1.0, np.nan]), ["a", "b"])
