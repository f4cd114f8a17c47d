"""Bootstrap intervals of rho against what the resampling must give by construction."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bspatial.evaluation.analysis.bootstrap import DEFAULT_RESAMPLES, over_items, over_tasks


def test_perfectly_monotone_tasks_give_rho_one_in_every_resample():
    # Any resample of tasks from a monotone pairing keeps x and y ranked alike (ties in both at the same
    # places): rho is exactly 1 whenever it is defined.
    x = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    y = [1.0, 4.0, 9.0, 16.0, 25.0, 36.0]
    interval = over_tasks(x, y, 500, np.random.default_rng(0))
    assert (interval.low, interval.high) == (pytest.approx(1.0), pytest.approx(1.0))


def test_resamples_with_a_constant_side_are_left_out_and_counted():
    # With 3 distinct tasks a resample is constant iff it draws one task three times: P = 3 / 27.
    n = 2000
    interval = over_tasks([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], n, np.random.default_rng(1))
    expected = n * (1 - 3 / 27)
    sigma = math.sqrt(n * (3 / 27) * (24 / 27))
    assert abs(interval.defined - expected) < 5 * sigma
    assert interval.requested == n


def test_items_that_agree_within_each_task_give_a_point_interval():
    # Rows equal within a task: every resample reproduces the per-task scores, so the interval is the
    # point rho. Scores x = (0, 100, 100), y = (0, 0, 100): ranks (1, 2.5, 2.5) and (1.5, 1.5, 3),
    # dx = (-1, .5, .5), dy = (-.5, -.5, 1), rho = .75 / 1.5 = 0.5.
    perception = [np.zeros(4), np.ones(3), np.ones(5)]
    success = [np.zeros(2), np.zeros(6), np.ones(3)]
    interval = over_items(perception, success, 200, np.random.default_rng(0))
    assert (interval.low, interval.high, interval.defined) == (pytest.approx(0.5), pytest.approx(0.5), 200)


def test_more_items_per_task_give_a_narrower_item_interval():
    rng = np.random.default_rng(0)
    rates = [0.1, 0.3, 0.5, 0.7, 0.9]
    def rows(n):
        return [(rng.random(n) < p).astype(float) for p in rates]
    few = over_items(rows(5), rows(5), 1000, np.random.default_rng(1))
    many = over_items(rows(500), rows(500), 1000, np.random.default_rng(1))
    assert (many.high - many.low) < (few.high - few.low)


def test_same_generator_seed_same_interval():
    x, y = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0], [2.0, 6.0, 5.0, 3.0, 5.0, 8.0]
    a = over_tasks(x, y, 300, np.random.default_rng(7))
    b = over_tasks(x, y, 300, np.random.default_rng(7))
    assert a == b


@pytest.mark.parametrize("n", [0, -1, 2.5, True])
def test_resample_count_must_be_a_positive_int(n):
    with pytest.raises(ValueError, match="n_resamples must be an int >= 1"):
        over_tasks([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], n, np.random.default_rng(0))


def test_default_resamples_is_the_cli_default():
    import inspect

    from bspatial.evaluation.analysis.cli import correlate

    assert DEFAULT_RESAMPLES == 2000
    assert inspect.signature(correlate).parameters["n_resamples"].default == DEFAULT_RESAMPLES
