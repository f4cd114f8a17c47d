"""Rollouts on Ray actors (issue 20): the same run folder, byte for byte, as this process and as two local workers;
``bspatial rollout --ray auto`` joining a running cluster; an actor SIGKILLed mid-episode has its episode rerun
and written once; resume; without Ray, the error names --ray and the extra before anything is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bspatial.evaluation.rollout.episodes import load_results
from bspatial.evaluation.rollout.runner import run_rollouts
from bspatial.evaluation.rollout.plan import RunSettings
from bspatial.evaluation.rollout.tables import write_tables

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


TASKS = ["reach_plate", "reach_tool"]
PLAN = dict(settings=RunSettings(max_steps=40), n_episodes=2)   # 4 short scripted episodes
BSPATIAL = [sys.executable, "-m", "bspatial.cli"]


def run_files(out: Path) -> dict[str, bytes]:
    """Every file a run wrote (the lock file aside: it names its holder)."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_ray_writes_the_same_run_folder_as_one_and_two_local_processes(ray_cluster, tmp_path):
    for name, kwargs in (("one", {}), ("two", {"workers": 2}), ("ray", {"workers": 2, "ray": "auto"})):
        summary = run_rollouts("scripted", "held_out", TASKS, tmp_path / name, **PLAN, **kwargs)
        assert (summary.planned, summary.ran, summary.errors) == (4, 4, 0), name
        write_tables([tmp_path / name], tmp_path / name / "tables")
    one = run_files(tmp_path / "one")
    assert len([k for k in one if k.startswith("episodes/")]) == 4 and "tables/table4.md" in one
    assert run_files(tmp_path / "two") == one
    assert run_files(tmp_path / "ray") == one


def test_cli_ray_auto_joins_the_running_cluster(ray_cluster, tmp_path):
    env = {**os.environ, "RAY_ADDRESS": ray_cluster.get_runtime_context().gcs_address}
    command = BSPATIAL + ["rollout", "--policy", "scripted", "--split", "held_out", "--tasks", "reach_plate",
                          "--n-episodes", "1", "--max-steps", "40", "--no-progress"]
    ray_run = subprocess.run(command + ["--ray", "auto", "--out", str(tmp_path / "ray")], env=env,
                             capture_output=True, text=True, timeout=300)
    assert ray_run.returncode == 0, ray_run.stderr[-3000:]
    assert "1 episodes run, 0 already done, 0 crashed" in ray_run.stdout
    local = subprocess.run(command + ["--out", str(tmp_path / "local")], capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr[-3000:]
    assert run_files(tmp_path / "ray") == run_files(tmp_path / "local")


def test_a_killed_actor_has_its_episode_rerun_and_written_once(ray_cluster, ray_actor_killer, tmp_path):
    run_rollouts("scripted", "held_out", TASKS, tmp_path / "local", **PLAN)
    killer = ray_actor_killer(60.0)
    summary = run_rollouts("scripted", "held_out", TASKS, tmp_path / "ray", **PLAN, workers=2, ray="auto")
    assert len(killer.join()) == 1   # an actor died mid-episode ...
    assert (summary.planned, summary.ran, summary.errors) == (4, 4, 0)   # ... and every episode ran once
    assert [(r["task"], r["index"]) for r in load_results(tmp_path / "ray")] == \
        [("reach_plate", 0), ("reach_plate", 1), ("reach_tool", 0), ("reach_tool", 1)]
    assert run_files(tmp_path / "ray") == run_files(tmp_path / "local")
    # Resume: a rerun on Ray finds every episode done and runs none.
    again = run_rollouts("scripted", "held_out", TASKS, tmp_path / "ray", **PLAN, workers=2, ray="auto")
    assert (again.ran, again.skipped_existing) == (0, 4)


def test_a_ray_run_resumes_a_local_one(ray_cluster, tmp_path):
    run_rollouts("scripted", "held_out", TASKS, tmp_path / "mixed", RunSettings(max_steps=40), n_episodes=1)
    summary = run_rollouts("scripted", "held_out", TASKS, tmp_path / "mixed", **PLAN, workers=2, ray="auto")
    assert (summary.planned, summary.skipped_existing, summary.ran) == (4, 2, 2)
    run_rollouts("scripted", "held_out", TASKS, tmp_path / "local", **PLAN)
    assert run_files(tmp_path / "mixed") == run_files(tmp_path / "local")


def test_without_ray_rollout_exits_2_naming_the_flag_and_the_extra(ray_hidden_env, tmp_path):
    done = subprocess.run(BSPATIAL + ["rollout", "--policy", "scripted", "--split", "held_out", "--tasks", "reach_plate",
                                      "--n-episodes", "1", "--ray", "auto", "--out", str(tmp_path / "run")],
                          env=ray_hidden_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "error: --ray needs Ray" in done.stderr and "pip install 'behavior-spatial[ray]'" in done.stderr
    assert not (tmp_path / "run").exists()   # refused before the run folder was made
