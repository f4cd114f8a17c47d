"""The rollout command function, driven through a Typer app (the main app wires it the same way)."""

import typer
from typer.testing import CliRunner

from bspatial.evaluation.rollout.cli import rollout
from bspatial.evaluation.rollout.episodes import load_results

app = typer.Typer()
app.command("rollout")(rollout)
app.command("noop")(lambda: None)  # two commands keep "rollout" a subcommand


def test_cli_runs_and_prints_table4(tmp_path):
    args = ["rollout", "--policy", "random", "--tasks", "reach_plate", "--n-episodes", "1", "--max-steps", "5",
            "--out", str(tmp_path), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "random (lower reference)" in result.output and "1 episodes run" in result.output
    assert "inference:" not in result.output   # the random policy has no model to time
    assert (tmp_path / "tables" / "table4.csv").exists()
    again = CliRunner().invoke(app, args)
    assert "0 episodes run, 1 already done" in again.output


def test_cli_refuses_unknown_split(tmp_path):
    result = CliRunner().invoke(app, ["rollout", "--policy", "random", "--split", "test", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown split 'test'" in result.output


def test_cli_navigation_prints_table_s11(tmp_path):
    args = ["rollout", "--policy", "scripted", "--split", "navigation", "--tasks", "move_to_bookcase",
            "--n-episodes", "1", "--out", str(tmp_path), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "| move_to_bookcase | single_floor_house_toy_room | 100.0 [" in result.output
    assert (tmp_path / "tables" / "table_s11.csv").exists() and not (tmp_path / "tables" / "table4.csv").exists()


def test_cli_refuses_ir_for_a_policy_without_an_ir_slot(tmp_path):
    result = CliRunner().invoke(app, ["rollout", "--policy", "random", "--ir", "oracle", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "ir='oracle' needs a checkpoint with ir_mode" in result.output


def test_cli_exits_non_zero_when_every_episode_crashes(tmp_path, monkeypatch):
    from bspatial.evaluation.rollout import episodes

    def broken(*args, **kwargs):
        return lambda observation: [0.0] * 7   # the wrong action shape: every episode crashes
    monkeypatch.setattr(episodes, "make_policy", broken)
    args = ["rollout", "--policy", "random", "--tasks", "reach_plate", "--n-episodes", "2", "--max-steps", "5",
            "--out", str(tmp_path), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "all 2 episodes crashed; no score is reported" in result.output and "action" in result.output
    assert "Held-out +Soft" not in result.output


def test_cli_exits_non_zero_on_some_crashes_unless_allowed(tmp_path, monkeypatch):
    from bspatial.evaluation.rollout import episodes

    real = episodes.make_policy

    def sometimes(policy_spec, backend, instance, settings, **kwargs):
        return (lambda observation: [0.0] * 7) if instance.task == "reach_tool" else real(policy_spec, backend, instance, settings, **kwargs)
    monkeypatch.setattr(episodes, "make_policy", sometimes)
    base = ["rollout", "--policy", "random", "--tasks", "reach_plate", "--tasks", "reach_tool", "--n-episodes", "1",
            "--max-steps", "5", "--no-progress"]
    refused = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "a")])
    assert refused.exit_code == 1 and "1 of 2 episodes crashed" in refused.output and "--allow-errors" in refused.output
    assert "Held-out +Soft" in refused.output       # the table is still printed, with the error counted
    allowed = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "b"), "--allow-errors"])
    assert allowed.exit_code == 0, allowed.output


def test_cli_prints_the_runs_inference_latency(tmp_path, tiny_checkpoint):
    result = CliRunner().invoke(app, ["rollout", "--policy", str(tiny_checkpoint), "--task", "reach_plate",
                                      "--n-episodes", "2", "--max-steps", "5", "--no-progress", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    records = load_results(tmp_path)
    # One plan per episode in 5 steps: 2 model calls, each episode's summary in its record.
    assert [r["inference_ms"]["calls"] for r in records] == [1, 1]
    line = next(line for line in result.output.splitlines() if line.startswith("inference:"))
    assert line.startswith("inference: 2 model calls, mean ") and " ms, median of episodes " in line


def test_cli_refuses_a_batch_size_without_batched_inference(tmp_path):
    result = CliRunner().invoke(app, ["rollout", "--policy", "random", "--max-batch", "2", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--max-batch 2 is only used with --batch-inference" in result.output
