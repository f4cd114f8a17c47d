"""Demonstrations on Ray actors (issue 20): ``bspatial demos --ray auto`` joining the local 2-CPU cluster writes the
same LeRobot dataset, byte for byte, as one process, although one of its actors is SIGKILLed mid-recording; the
attempt plan runs exactly the attempts one process would and uses them in its order; without Ray, the error names
--ray and the extra."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from bspatial.construction.demonstrations.demos import MAX_ATTEMPTS_PER_EPISODE, _AttemptPlan, record_demos

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


TASK = "reach_plate"   # the shortest expert episode (~170 steps)
BSPATIAL = [sys.executable, "-m", "bspatial.cli"]


def dataset_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    return record_demos(tmp_path_factory.mktemp("local") / "out", tasks=[TASK], episodes_per_task=2)


def test_cli_demos_on_ray_with_a_killed_actor_write_the_local_dataset(ray_cluster, ray_actor_killer, local, tmp_path):
    env = {**os.environ, "RAY_ADDRESS": ray_cluster.get_runtime_context().gcs_address}
    killer = ray_actor_killer(240.0)
    done = subprocess.run(BSPATIAL + ["demos", "--out", str(tmp_path / "ray"), "--task", TASK, "--episodes-per-task",
                                      "2", "--ray", "auto", "--workers", "2"],
                          env=env, capture_output=True, text=True, timeout=480)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(killer.join()) == 1   # an actor died mid-recording; its attempt was recorded again, once
    ray_files, local_files = dataset_files(tmp_path / "ray"), dataset_files(local)
    assert sorted(ray_files) == sorted(local_files)
    assert [name for name in local_files if ray_files[name] != local_files[name]] == []


def test_without_ray_demos_exit_1_naming_the_flag_and_the_extra(ray_hidden_env, tmp_path):
    done = subprocess.run(BSPATIAL + ["demos", "--out", str(tmp_path / "out"), "--task", TASK, "--ray", "auto"],
                          env=ray_hidden_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "error: --ray needs Ray" in done.stderr and "pip install 'behavior-spatial[ray]'" in done.stderr
    assert not (tmp_path / "out").exists()


def one_process_order(kept: dict, tasks: list[str], wanted: int) -> list[tuple[str, int]]:
    """The attempts one process tries: each task's in order until ``wanted`` are kept or the attempts run out."""
    tried = []
    for task in tasks:
        n = 0
        for attempt in range(wanted * MAX_ATTEMPTS_PER_EPISODE):
            if n == wanted:
                break
            tried.append((task, attempt))
            n += kept[task, attempt]
    return tried


@pytest.mark.parametrize("seed", range(40))
def test_the_attempt_plan_runs_and_uses_what_one_process_would(seed):
    rng = random.Random(seed)
    tasks, wanted = ["a", "b", "c"], rng.randint(1, 3)
    success = rng.choice([0.3, 0.7, 1.0])
    kept = {(t, a): rng.random() < success for t in tasks for a in range(wanted * MAX_ATTEMPTS_PER_EPISODE)}
    plan, running, submitted, used = _AttemptPlan(tasks, wanted), [], [], []
    lookahead = rng.randint(1, 4)

    def top_up():
        for job in plan.next_jobs(lookahead - len(running) - plan.buffered()):
            submitted.append(job)
            running.append(job)

    top_up()
    while running:   # outcomes arrive in any order, as from workers of different speeds
        task, attempt = running.pop(rng.randrange(len(running)))
        plan.receive(task, attempt, ("episode" if kept[task, attempt] else None, "", {}))
        used.extend((t, a) for t, a, _ in plan.ready())
        top_up()
    assert plan.finished()
    expected = one_process_order(kept, tasks, wanted)
    assert used == expected                      # same attempts, used in the same order
    assert sorted(submitted) == sorted(expected)  # and none run that one process would not have run
