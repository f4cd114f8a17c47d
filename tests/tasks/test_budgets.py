"""Step budgets: the calibration formula, the packaged calibration file, and a fresh calibration run."""

import json
import math

import pytest

from bspatial.catalog.tasks import MANIPULATION_TASKS, NAVIGATION_TASKS
from bspatial.construction.demonstrations.budgets import CALIBRATION_SEEDS
from bspatial.tasks import budgets
from bspatial.tasks.registry import get_task


def test_formula_is_one_and_a_half_longest_demonstrations_in_whole_seconds():
    assert budgets.budget_from_lengths([100, 200]) == 300       # 1.5 * 200 = 300, already whole seconds
    assert budgets.budget_from_lengths([201]) == 330            # 301.5 -> 11 seconds of 30 steps
    assert budgets.budget_from_lengths([1]) == 30
    with pytest.raises(ValueError, match="at least one"):
        budgets.budget_from_lengths([])
    with pytest.raises(ValueError, match="must be >= 1, got 0"):
        budgets.budget_from_lengths([5, 0])


def test_packaged_file_calibrates_every_task_from_its_recorded_lengths():
    data = json.loads(budgets.BUDGET_FILE.read_text())
    assert set(data["tasks"]) == set(MANIPULATION_TASKS) | set(NAVIGATION_TASKS)
    for name, entry in data["tasks"].items():
        variants = get_task(name).variants
        assert set(entry["lengths"]) == set(variants), name
        lengths = [n for per_variant in entry["lengths"].values() for n in per_variant]
        assert max(lengths) == entry["max_length"]
        # Recompute the rule by hand here rather than through budget_from_lengths.
        assert entry["budget"] == 30 * math.ceil(1.5 * max(lengths) / 30), name
        # Every variant was calibrated on the recorded seeds, and almost every demonstration succeeded
        # (the benchmark's 95% bar; failures are listed with their seed).
        n_seeds = len(entry["seeds"])
        assert n_seeds == CALIBRATION_SEEDS
        assert len(lengths) + len(entry["failures"]) == n_seeds * len(variants)
        assert len(lengths) >= 0.95 * n_seeds * len(variants), (name, entry["failures"])


def test_unknown_task_and_bad_schema_raise(tmp_path):
    with pytest.raises(ValueError, match="unknown task 'reach_moon'"):
        budgets.step_budget("reach_moon")
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({"schema_version": 99, "tasks": {}}))
    with pytest.raises(ValueError, match="schema_version must be 1, got 99"):
        budgets.step_budget("reach_plate", bad)
