"""Workers of :func:`bspatial.common.processes.worker_pool` die with their parent, however it dies.

A real parent process is started and killed with SIGKILL (no cleanup code of ours runs in it); its worker
must be gone within a bounded poll. The race where the parent dies before the worker armed the watch, and
a caller's own initializer, are checked as well.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from bspatial.common.processes import PARENT_GONE_EXIT_CODE, is_alive, live_descendants, worker_pool

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers"), pytest.mark.subprocess]

GONE_WITHIN_S = 20.0   # a bound for the poll, not a speed claim

PARENT = """
import os, time
from bspatial.common.processes import worker_pool
pool = worker_pool(1)
print(pool.submit(os.getpid).result(), flush=True)
pool.submit(time.sleep, 600)
time.sleep(600)
"""


def wait_until_gone(pids: set[int], timeout_s: float = GONE_WITHIN_S) -> set[int]:
    """Poll until none of ``pids`` is alive or ``timeout_s`` passed; returns the ones still alive."""
    deadline = time.monotonic() + timeout_s
    while (alive := {p for p in pids if is_alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def test_a_worker_dies_when_its_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    workers: set[int] = set()
    try:
        workers = {int(p) for p in parent.stdout.readline().split()}
        assert len(workers) == 1 and workers <= live_descendants(parent.pid)
        parent.kill()
        parent.wait()
        assert wait_until_gone(workers) == set()
    finally:
        parent.kill()
        parent.wait()
        for pid in wait_until_gone(workers, 0):   # a failed run must not leave its orphan behind
            os.kill(pid, signal.SIGKILL)


def test_a_worker_whose_parent_died_before_it_armed_the_watch_exits():
    # Pid 1 is not this child's parent: what a worker sees when its parent died (and it was reparented)
    # before it armed the watch, so no parent-death signal will ever come.
    code = "from bspatial.common.processes import worker_initializer; worker_initializer(1); print('survived')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == PARENT_GONE_EXIT_CODE and "survived" not in result.stdout


def test_the_callers_own_initializer_runs_in_each_worker_too(tmp_path):
    with worker_pool(1, initializer=os.chdir, initargs=(str(tmp_path),)) as pool:
        assert pool.submit(os.getcwd).result() == str(tmp_path)
        assert pool.submit(os.getppid).result() == os.getpid()


def test_live_descendants_sees_grandchildren_and_not_the_dead():
    code = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
            "time.sleep(600)")
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + GONE_WITHIN_S
        while len(found := live_descendants(child.pid)) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(found) == 1 and child.pid in live_descendants(os.getpid())
        (grandchild,) = found
        os.kill(grandchild, signal.SIGKILL)
        assert wait_until_gone({grandchild}) == set()   # a zombie until its parent reaps it: not alive
    finally:
        child.kill()
        child.wait()
