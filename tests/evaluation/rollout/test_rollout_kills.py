"""``bspatial rollout --workers 2`` killed with SIGKILL: no worker outlives it, nothing is written after it,
and rerunning the same command finishes the run as a clean run would have.

The parent is a real ``python -m bspatial.cli`` process; it is killed once its workers are running episodes
(a first result file exists), so jobs are still queued to them.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bspatial.evaluation.rollout.episodes import EPISODES_DIR, load_results
from bspatial.evaluation.rollout.runner import run_rollouts
from bspatial.evaluation.rollout.plan import RunSettings

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

TASKS = ["reach_plate", "reach_tool"]
N_EPISODES, MAX_STEPS = 3, 100     # 6 episodes of about a second each: jobs are still queued at the kill


def command(out: Path) -> list[str]:
    tasks = [arg for task in TASKS for arg in ("--tasks", task)]
    return [sys.executable, "-m", "bspatial.cli", "rollout", "--policy", "random", "--split", "held_out", *tasks,
            "--n-episodes", str(N_EPISODES), "--max-steps", str(MAX_STEPS), "--workers", "2", "--no-progress",
            "--out", str(out)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
def test_a_killed_rollout_takes_its_workers_along_and_the_rerun_completes(tmp_path, sigkilled_run):
    out = tmp_path / "run"
    with sigkilled_run(command(out), out, lambda: any((out / EPISODES_DIR).glob("*.json")),
                       "got to their first episode"):
        done_before = len(list((out / EPISODES_DIR).glob("*.json")))
        # What a worker killed inside atomic_write_text leaves (the kill rarely lands there by itself).
        handle, cut = tempfile.mkstemp(prefix=".reach_tool-0002.json.", suffix=".tmp", dir=out / EPISODES_DIR)
        os.close(handle)

    rerun = subprocess.run(command(out), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"{done_before} already done" in rerun.stdout and f"removed stale {cut}" in rerun.stderr
    assert sorted(p.name for p in (out / EPISODES_DIR).iterdir()) == sorted(
        f"{task}-{i:04d}.json" for task in TASKS for i in range(N_EPISODES))   # no temp file of a cut write
    assert not (out / ".lock").exists()
    clean = tmp_path / "clean"
    run_rollouts("random", "held_out", TASKS, clean, RunSettings(max_steps=MAX_STEPS), n_episodes=N_EPISODES)
    assert load_results(out) == load_results(clean)
    assert json.loads((out / "rollout.json").read_text()) == json.loads((clean / "rollout.json").read_text())


def test_an_out_that_is_a_file_is_refused_by_name(tmp_path):
    import typer
    from typer.testing import CliRunner

    from bspatial.evaluation.rollout.cli import rollout

    app = typer.Typer()
    app.command("rollout")(rollout)
    app.command("noop")(lambda: None)  # two commands keep "rollout" a subcommand
    taken = tmp_path / "taken"
    taken.write_text("not a run folder")
    for out in (taken, taken / "run"):
        result = CliRunner().invoke(app, ["rollout", "--policy", "hold", "--tasks", "reach_plate", "--n-episodes", "1",
                                          "--out", str(out)])
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output   # no traceback
        assert f"error: {taken}" in result.output and "is a file" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"] and taken.read_text() == "not a run folder"
