"""Step-budget calibration: a fresh calibration run, written and merged into a budget file."""

from bspatial.construction.demonstrations import budgets as calibration
from bspatial.tasks import budgets
from bspatial.tasks.registry import get_task


def test_fresh_calibration_round_trips_and_merges(tmp_path):
    path = tmp_path / "budgets.json"
    data = calibration.calibrate(["reach_dice"], seeds=1, seed_base=7)
    entry = data["tasks"]["reach_dice"]
    assert entry["seeds"] == [7]
    assert set(entry["lengths"]) == set(get_task("reach_dice").variants)
    calibration.write_budgets(data, path)
    assert budgets.step_budget("reach_dice", path) == entry["budget"] >= 1.5 * entry["max_length"]
    # A second calibration of another task merges into the file instead of replacing it.
    calibration.write_budgets({**data, "tasks": {"move_to_oven": {**entry, "budget": 60}}}, path)
    assert budgets.step_budget("reach_dice", path) == entry["budget"]
    assert budgets.step_budget("move_to_oven", path) == 60
