"""Executors (issue 20): in this process, local worker processes and Ray actors run one job plan alike; a Ray actor
killed mid-job has its job rerun and yielded once; a job that kills every worker stops the run; no Ray, a clear
error. Job functions are the standard library's, so spawned workers and Ray actors import them by name."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from bspatial.common.executors import (MAX_JOB_ATTEMPTS, RAY_EXTRA_HINT, InProcess, LocalPool, RayNotInstalledError,
                                       WorkerLostError, check_ray_address, open_executor, run_jobs)

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

def test_every_executor_runs_the_plan_to_the_same_results(ray_cluster):
    jobs = list(range(12))
    expected = {i: math.factorial(i) for i in jobs}
    for workers, ray in ((1, None), (2, None), (2, "auto")):
        results = list(run_jobs(math.factorial, jobs, workers=workers, ray=ray))
        assert sorted(k for k, _ in results) == jobs, (workers, ray)   # each job once
        assert dict(results) == expected, (workers, ray)


def test_the_default_is_this_process_and_workers_make_a_pool():
    with open_executor() as one, open_executor(workers=2) as two:
        assert isinstance(one, InProcess) and isinstance(two, LocalPool)
        assert (one.workers, two.workers) == (1, 2)


@pytest.mark.parametrize("workers, ray", [(1, None), (2, None), (2, "auto")])
def test_jobs_submitted_while_iterating_run_too(ray_cluster, workers, ray):
    # The demos recorder plans attempts from outcomes it has seen: it submits during completed().
    with open_executor(workers=workers, ray=ray) as executor:
        executor.submit(0, abs, -1)
        seen = []
        for key, result in executor.completed():
            seen.append((key, result))
            if key < 3:
                executor.submit(key + 1, abs, -(result + 1))
        assert seen == [(0, 1), (1, 2), (2, 3), (3, 4)] and executor.pending() == 0


@pytest.mark.parametrize("workers, ray", [(1, None), (2, None), (2, "auto")])
def test_a_failing_job_raises_its_error(ray_cluster, workers, ray):
    with pytest.raises(ValueError, match="factorial"):
        list(run_jobs(math.factorial, [3, -1, 4], workers=workers, ray=ray))


def test_a_killed_ray_worker_has_its_job_rerun_and_yielded_once(ray_cluster, ray_actor_killer):
    killer = ray_actor_killer(60.0)
    # time.sleep(s) -> None: four 1.5 s jobs on two actors; one actor is SIGKILLed mid-job.
    keys = Counter(key for key, _ in run_jobs(time.sleep, [1.5] * 4, workers=2, ray="auto"))
    assert len(killer.join()) == 1
    assert keys == Counter(range(4))   # every job done, none twice


def test_a_job_that_kills_every_worker_stops_the_run(ray_cluster):
    # os._exit(3) ends the actor's process each time it runs.
    with pytest.raises(WorkerLostError, match=f"job 0 lost its Ray worker {MAX_JOB_ATTEMPTS} times"):
        list(run_jobs(os._exit, [3], workers=1, ray="auto"))


@pytest.mark.parametrize("bad", ["", "localhost", "host:port", "ray://", 6379])
def test_malformed_ray_addresses_are_refused_by_name(bad):
    with pytest.raises((ValueError, AttributeError)):
        check_ray_address(bad)
    if isinstance(bad, str):
        with pytest.raises(ValueError, match=f"--ray must be 'auto' or a cluster address host:port, got {bad!r}"):
            open_executor(ray=bad)


def test_bad_worker_counts_are_refused_by_name():
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match=f"workers must be an int >= 1, got {bad!r}"):
            open_executor(workers=bad)


def test_without_ray_the_error_names_the_flag_and_the_extra(ray_hidden_env):
    code = ("from bspatial.common.executors import open_executor\n"
            "try:\n    open_executor(ray='auto')\n"
            "except ImportError as error:\n    print(type(error).__name__, isinstance(error, ValueError), error)\n")
    done = subprocess.run([sys.executable, "-c", code], env=ray_hidden_env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("RayNotInstalledError True --ray needs Ray")
    assert RAY_EXTRA_HINT in done.stdout and "No module named 'ray'" in done.stdout
    assert issubclass(RayNotInstalledError, ImportError)


def test_more_ray_workers_than_cluster_cpus_are_refused(ray_cluster):
    # A third 1-CPU actor could never start on the 2-CPU cluster, and the jobs given to it would wait forever.
    with pytest.raises(ValueError, match=r"--workers 3 asks for more Ray actors than the cluster .* has CPUs \(2\)"):
        open_executor(workers=3, ray="auto")
    with open_executor(ray="auto") as executor:   # the default: one actor per cluster CPU
        assert executor.workers == 2


def test_local_workers_share_the_cores_instead_of_each_taking_all(monkeypatch):
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "LP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    share = max(1, (os.cpu_count() or 1) // 2)
    names = ("OMP_NUM_THREADS", "LP_NUM_THREADS")   # torch / numpy and Mesa llvmpipe, read in the worker
    with LocalPool(2) as pool:
        for name in names:
            pool.submit(name, os.getenv, name)
        results = dict(pool.completed())
    assert results == {name: str(share) for name in names}
    assert os.getenv("OMP_NUM_THREADS") is None   # the parent keeps its own
