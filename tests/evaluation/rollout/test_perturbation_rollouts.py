"""Perturbation axes as rollout conditions: named on the command line, drawn per episode, kept in the records,
reaching what a policy sees, and paired with the unperturbed episodes in the Spa-Bench condition table."""

import csv

import pytest
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.evaluation.rollout.episodes import load_results
from bspatial.evaluation.rollout.plan import RunSettings
from bspatial.evaluation.rollout.runner import run_rollouts

pytestmark = [pytest.mark.slow, pytest.mark.sim]


def test_the_expert_keeps_its_episodes_under_camera_and_start_state_and_the_table_pairs_them(tmp_path):
    runner = CliRunner()
    for name, condition in (("plain", "spatial"), ("perturbed", "robot_state+camera")):
        result = runner.invoke(app, ["rollout", "--policy", "scripted", "--tasks", "reach_plate", "--n-episodes", "2",
                                     "--condition", condition, "--no-progress", "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    plain, perturbed = load_results(tmp_path / "plain"), load_results(tmp_path / "perturbed")
    for a, b in zip(plain, perturbed, strict=True):
        assert b["condition"] == "camera+robot_state"   # canonical: the axes in their fixed order
        assert a["perturbation"] is None and b["perturbation"]["axes"] == ["camera", "robot_state"]
        assert set(b["perturbation"]["camera"]) == {"head", "left_wrist", "right_wrist"}
        assert (a["instruction"], a["seed"]) == (b["instruction"], b["seed"])
        # The privileged expert reads the state, not pixels: a moved start changes its path, not its outcome.
        assert a["outcome"] == b["outcome"] == "correct"
        assert a["trace"]["eef_positions"][0] != b["trace"]["eef_positions"][0]
    # The two runs tabulated together from the command line: the condition table pairs them.
    result = runner.invoke(app, ["analyze", "rollouts", str(tmp_path / "plain"), str(tmp_path / "perturbed"),
                                 "--out", str(tmp_path / "tables")])
    assert result.exit_code == 0, result.output
    assert "| camera+robot_state |" in result.output
    rows = {r["condition"]: r for r in csv.DictReader((tmp_path / "tables" / "spa_bench_conditions.csv").open())}
    assert set(rows) == {"spatial", "camera+robot_state"}
    assert rows["camera+robot_state"]["n"] == "2"
    assert rows["camera+robot_state"]["paired_difference"].startswith("+0.0 ")   # both succeed on both scenes
    assert rows["camera+robot_state"]["paired_difference"].endswith("(n=2)")


def test_a_rerun_draws_the_same_perturbations_and_another_seed_others(tmp_path):
    settings = RunSettings(condition="light+appearance+noise", max_steps=5)
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        run_rollouts("random", "held_out", ["reach_plate"], tmp_path / name, RunSettings(
            condition=settings.condition, max_steps=5, seed=seed), n_episodes=1)
    a, b, c = (load_results(tmp_path / k)[0]["perturbation"] for k in "abc")
    assert a == b and a != c
    assert a["axes"] == ["light", "appearance", "noise"] and 2.0 <= a["noise_sigma"] <= 8.0


@pytest.mark.parametrize("condition, message", [
    ("camera+lights", "unknown condition 'lights' (did you mean 'light'?)"),
    ("direct+noise", "condition 'direct' is defined for manipulation splits only"),
])
def test_bad_conditions_exit_2_naming_the_part(tmp_path, condition, message):
    split = "navigation" if condition.startswith("direct") else "held_out"
    result = CliRunner().invoke(app, ["rollout", "--policy", "scripted", "--split", split, "--condition", condition,
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "run").exists()


def test_analyze_rollouts_refuses_a_folder_without_episodes(tmp_path):
    result = CliRunner().invoke(app, ["analyze", "rollouts", str(tmp_path), "--out", str(tmp_path / "tables")])
    assert result.exit_code == 2 and "has no episodes/ folder of episode results" in result.output
