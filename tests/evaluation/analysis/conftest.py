"""Real run folders on tiny data, made once per session through the real ``bspatial`` commands.

* a VLM run (``eval-vlm --model chance:4``) over the harness's fixture benchmark (task-grounded
  manipulation VQA on 4 tasks, IR on 4 tasks) and a navigation VQA repo written here (the fixture has
  2 navigation tasks; a rho needs 3);
* rollout runs: the scripted experts cut to 160 steps on 4 manipulation tasks (3 episodes each; the cap
  makes success differ between tasks), the random policy on the same tasks (success 0 everywhere: rho
  undefined), and the scripted navigation expert cut to 300 steps on 4 navigation tasks.

The chance seed and step caps are chosen so that both sides vary over most joined tasks (with seed 4,
tolerant and strict IR differ, and strict IR is 0 on every joined task: an undefined rho); the tests
check these preconditions rather than assume them.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

MODEL = "chance:4"
MANIPULATION_TASKS = ("reach_dice", "reach_hardback", "reach_tool", "place_carving_knife")
NAVIGATION_VQA_TASKS = ("move_to_fridge", "move_to_bar", "move_to_bathroom", "move_to_garage")
NAVIGATION_ROLLOUT_TASKS = ("move_to_fridge", "move_to_bar", "move_to_bathroom", "move_to_bookcase")
_DIRECTIONS = ["front-left", "front-right", "back-left", "back-right"]


def invoke(*args: str):
    """Run ``bspatial <args>`` through the main app."""
    from bspatial.cli import app

    return CliRunner().invoke(app, list(args))


def _png(rng: np.random.Generator) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, size=(16, 16, 3), dtype=np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def write_navigation_repo(root: Path, tasks=NAVIGATION_VQA_TASKS, per_task: int = 4) -> Path:
    """A ``task_navigation`` VQA repo: ``per_task`` questions on each task, 4 context frames + the view."""
    from bspatial.construction.items.records import VQARecord
    from bspatial.evaluation.vlm.fixtures import write_parquet_config, write_readme

    rng = np.random.default_rng(0)
    rows = []
    for task in tasks:
        for k in range(per_task):
            record = VQARecord(f"{task}-{k}", "task_navigation", "direction", "camera_relative",
                               tuple(_png(rng) for _ in range(5)),
                               "In which direction is the target relative to the robot?", tuple(_DIRECTIONS),
                               "ABCD"[int(rng.integers(4))], task=task)
            row = record.to_row()
            rows.append({**row, "frames": [{"bytes": data, "path": None} for data in row["frames"]]})
    repo = root / "vqa-nav"
    write_parquet_config(repo, "vqa", "task_navigation", rows)
    write_readme(repo, ("task_navigation",))
    return repo


def _ok(result) -> None:
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="session")
def vlm_run(tmp_path_factory) -> Path:
    from bspatial.evaluation.vlm.fixtures import write_fixture_repos

    root = tmp_path_factory.mktemp("vlm")
    repos = write_fixture_repos(root / "fixture")
    navigation = write_navigation_repo(root)
    run = root / "run"
    for suite, config, data in (("vqa", "task_manipulation", repos["vqa"]), ("ir", "all", repos["ir"]),
                                ("vqa", "task_navigation", navigation)):
        _ok(invoke("eval-vlm", "--model", MODEL, "--suite", suite, "--config", config, "--data", str(data),
                   "--out", str(run), "--no-progress"))
    return run


def _rollout(out: Path, policy: str, split: str, tasks, n_episodes: int, max_steps: int) -> Path:
    args = ["rollout", "--policy", policy, "--split", split, "--n-episodes", str(n_episodes),
            "--max-steps", str(max_steps), "--out", str(out), "--no-progress"]
    for task in tasks:
        args += ["--tasks", task]
    _ok(invoke(*args))
    return out


@pytest.fixture(scope="session")
def make_rollout():
    """``make_rollout(out, policy, split, tasks, n_episodes, max_steps)``: a rollout run through the CLI."""
    return _rollout


@pytest.fixture(scope="session")
def rollout_runs(tmp_path_factory) -> dict[str, Path]:
    """{"scripted", "random", "navigation"}: rollout run folders."""
    root = tmp_path_factory.mktemp("rollouts")
    return {
        "scripted": _rollout(root / "scripted", "scripted", "held_out", MANIPULATION_TASKS, 3, 160),
        "random": _rollout(root / "random", "random", "held_out", MANIPULATION_TASKS, 1, 5),
        "navigation": _rollout(root / "navigation", "scripted", "navigation", NAVIGATION_ROLLOUT_TASKS, 2, 300),
    }
