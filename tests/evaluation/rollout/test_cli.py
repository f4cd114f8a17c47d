"""The rollout command function, driven through a Typer app (the main app wires it the same way)."""

import typer
from typer.testing import CliRunner

from bspatial.evaluation.rollout.cli import rollout

app = typer.Typer()
app.command("rollout")(rollout)
app.command("noop")(lambda: None)  # two commands keep "rollout" a subcommand


def test_cli_runs_and_prints_table4(tmp_path):
    args = ["rollout", "--policy", "random", "--tasks", "reach_plate", "--n-episodes", "1", "--max-steps", "5",
            "--out", str(tmp_path), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "random (lower reference)" in result.output and "1 episodes run" in result.output
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
