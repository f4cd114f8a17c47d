"""``bspatial rollout --workers 2`` killed with SIGKILL: no worker outlives it, nothing is written after it,
and rerunning the same command finishes the run as a clean run would have.

The parent is a real ``python -m bspatial.cli`` process; it is killed once its workers are running episodes
(a first result file exists), so jobs are still queued to them.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bspatial.common.processes import is_alive, live_descendants
from bspatial.evaluation.rollout.episodes import EPISODES_DIR, load_results
from bspatial.evaluation.rollout.runner import run_rollouts
from bspatial.evaluation.rollout.plan import RunSettings

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

TASKS = ["reach_plate", "reach_tool"]
N_EPISODES, MAX_STEPS = 3, 100     # 6 episodes of about a second each: jobs are still queued at the kill
STARTED_WITHIN_S = 120.0           # bounds of the polls (a loaded machine), not speed claims
GONE_WITHIN_S = 20.0
WRITE_SLACK_S = 1.0                # a write in flight at the kill may land this much later


def command(out: Path) -> list[str]:
    tasks = [arg for task in TASKS for arg in ("--tasks", task)]
    return [sys.executable, "-m", "bspatial.cli", "rollout", "--policy", "random", "--split", "held_out", *tasks,
            "--n-episodes", str(N_EPISODES), "--max-steps", str(MAX_STEPS), "--workers", "2", "--no-progress",
            "--out", str(out)]


def poll(condition, timeout_s: float):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def mtimes(folder: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
def test_a_killed_rollout_takes_its_workers_along_and_the_rerun_completes(tmp_path):
    out = tmp_path / "run"
    parent = subprocess.Popen(command(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        started = poll(lambda: len(live_descendants(parent.pid)) >= 2 and any((out / EPISODES_DIR).glob("*.json")),
                       STARTED_WITHIN_S)
        assert started and parent.poll() is None, "the workers never got to their first episode"
        workers = live_descendants(parent.pid)
        killed_at = time.time()
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        poll(lambda: not any(is_alive(p) for p in workers), GONE_WITHIN_S)
        assert {p for p in workers if is_alive(p)} == set(), "workers outlived their killed parent"
        late = {p.name: t / 1e9 - killed_at for p, t in mtimes(out).items() if t / 1e9 > killed_at + WRITE_SLACK_S}
        assert late == {}, "files written after the parent was killed"
        before = mtimes(out)
        time.sleep(1.0)
        assert mtimes(out) == before
        done_before = len(list((out / EPISODES_DIR).glob("*.json")))
        # What a worker killed inside atomic_write_text leaves (the kill rarely lands there by itself).
        handle, cut = tempfile.mkstemp(prefix=".reach_tool-0002.json.", suffix=".tmp", dir=out / EPISODES_DIR)
        os.close(handle)
    finally:
        for pid in workers:   # a failing run must not leave its orphans behind
            if is_alive(pid):
                os.kill(pid, signal.SIGKILL)

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
