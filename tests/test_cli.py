"""The CLI: fast help (no heavy imports), version, and hub install."""

import subprocess
import sys

from typer.testing import CliRunner

import pytest

from bspatial import __version__
from bspatial.cli import app

pytestmark = [pytest.mark.subprocess]

HEAVY = ("torch", "transformers", "mujoco", "evaluate", "datasets", "lerobot")


def test_help_lists_the_commands_without_heavy_imports():
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from bspatial.cli import app\n"
        "r = CliRunner().invoke(app, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(r.output)\n"
        f"print('HEAVY', sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    for command in ("demo", "hub", "version"):
        assert command in out


def test_version():
    result = CliRunner().invoke(app, ["version"])
    assert result.exit_code == 0
    assert result.output.strip() == __version__


def test_hub_install_writes_the_three_modules(tmp_path):
    result = CliRunner().invoke(app, ["hub", "install", "--modules-cache", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for name in ("bspatial_vqa", "bspatial_ir", "bspatial_action"):
        folder = tmp_path / "evaluate_modules" / "metrics" / f"evaluate-metric--{name}"
        scripts = list(folder.glob(f"*/{name}.py"))
        assert len(scripts) == 1 and len(scripts[0].parent.name) == 64
        assert (scripts[0].parent / "__init__.py").is_file()


def test_train_forwards_to_the_training_command():
    result = CliRunner().invoke(app, ["train", "--preset", "help", "unused_dataset", "unused_output"])
    assert result.exit_code == 0, result.output
    assert "tiny" in result.output and "peak LR" in result.output


def test_task_lists_take_either_spelling(tmp_path):
    # rollout said --tasks and demos --task; both commands now take both.
    out = tmp_path / "r"
    result = CliRunner().invoke(app, ["rollout", "--policy", "scripted", "--split", "held_out", "--task", "reach_plate",
                                      "--tasks", "reach_tool", "--n-episodes", "1", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name.split("-")[0] for p in (out / "episodes").glob("*.json")) == ["reach_plate", "reach_tool"]
    for command in ("rollout", "demos"):
        help_text = CliRunner().invoke(app, [command, "--help"], terminal_width=200).output
        assert "--tasks" in help_text and "--task" in help_text.replace("--tasks", "")


def test_help_names_the_ray_extra_with_its_brackets():
    # Typer renders help through rich markup, which swallowed an unescaped "[ray]" ("pip install 'behavior-spatial'").
    for command in ("build", "demos", "rollout"):
        help_text = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "400"}).output
        assert "'behavior-spatial[ray]'" in " ".join(help_text.split()), (command, help_text)
