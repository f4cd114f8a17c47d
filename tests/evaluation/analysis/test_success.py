"""Per-task success read from rollout run folders: the numbers ``bspatial rollout`` itself printed."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from bspatial.evaluation.analysis.success import read_rollouts


def _printed(run, rate: str) -> dict[str, tuple[int, int]]:
    """(successes, n) per task from the per-task table the rollout command wrote."""
    with open(run / "tables" / "per_task_scripted_held_out.csv", newline="") as handle:
        return {r["task"]: (int(r[f"{rate}_count"]), int(r["n"])) for r in csv.DictReader(handle) if r["task"] != "POOLED"}


def test_scores_and_episode_rows_match_the_rollout_tables(rollout_runs):
    (scripted,) = read_rollouts([rollout_runs["scripted"]])
    assert (scripted.policy, scripted.split, scripted.label) == ("scripted", "held_out", "scripted (upper reference)")
    assert set(scripted.success) == {"soft", "strict"}
    for rate in ("soft", "strict"):
        side = scripted.success[rate]
        for task, (successes, n) in _printed(rollout_runs["scripted"], rate).items():
            assert side.scores[task] == pytest.approx(100.0 * successes / n)
            assert len(side.samples[task]) == n and side.samples[task].sum() == successes


def test_navigation_success_is_the_strict_rate(rollout_runs):
    (navigation,) = read_rollouts([rollout_runs["navigation"]])
    assert navigation.is_navigation and set(navigation.success) == {"strict"}
    with open(rollout_runs["navigation"] / "tables" / "table_s11.csv", newline="") as handle:
        printed = {r["task"]: float(r["success"]) for r in csv.DictReader(handle) if r["task"] != "POOLED"}
    assert {t: round(s, 1) for t, s in navigation.success["strict"].scores.items()} == printed


def test_a_crashed_episode_is_a_failure(rollout_runs, tmp_path):
    copy = tmp_path / "scripted"
    shutil.copytree(rollout_runs["scripted"], copy, ignore=shutil.ignore_patterns("*.lock"))
    path = copy / "episodes" / "reach_tool-0000.json"
    record = json.loads(path.read_text())
    assert record["outcome"] == "correct"
    path.write_text(json.dumps({**record, "status": "error"}))
    # The other episodes' outcomes as recorded (the step cap decides how many of them commit in time).
    others = [json.loads((copy / "episodes" / f"reach_tool-{k:04d}.json").read_text())["outcome"] == "correct"
              for k in (1, 2)]
    (scripted,) = read_rollouts([copy])
    assert scripted.success["strict"].scores["reach_tool"] == pytest.approx(100.0 * sum(others) / 3)
    assert scripted.success["strict"].samples["reach_tool"].tolist() == [0.0, *map(float, others)]


def test_two_runs_of_one_policy_get_their_folder_in_the_label(rollout_runs, tmp_path):
    copy = tmp_path / "again"
    shutil.copytree(rollout_runs["scripted"], copy, ignore=shutil.ignore_patterns("*.lock"))
    labels = [p.label for p in read_rollouts([rollout_runs["scripted"], copy])]
    assert labels == [f"scripted (upper reference) ({rollout_runs['scripted']})", f"scripted (upper reference) ({copy})"]


def test_a_run_given_twice_is_refused(rollout_runs):
    with pytest.raises(ValueError, match="--rollout given more than once"):
        read_rollouts([rollout_runs["scripted"], rollout_runs["scripted"]])
