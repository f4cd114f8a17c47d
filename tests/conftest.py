"""Fixtures shared across test folders: one local Ray cluster for every Ray test of a session (its start-up
takes ~12 s on a 2-core machine, so it is paid once)."""

from __future__ import annotations

import os

import pytest

RAY_TEST_CPUS = 2
"""The issue's test cluster: a local Ray cluster with 2 CPUs."""


@pytest.fixture(scope="session")
def ray_cluster():
    """``ray`` initialised on a local 2-CPU cluster (no dashboard, no usage stats); its GCS address is
    ``ray_cluster.get_runtime_context().gcs_address``. Shut down at the end of the session."""
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")   # the machine has no network
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=RAY_TEST_CPUS, include_dashboard=False, logging_level="WARNING")
    yield ray
    if started:
        ray.shutdown()


BUSY_RAY_WORKER_TITLE = b"ray::JobWorker.run"
"""The process title Ray gives an actor of :mod:`bspatial.common.executors` while it runs a job."""


def busy_ray_workers() -> list[int]:
    """Pids of our Ray actors running a job now (their process title, read from /proc)."""
    from pathlib import Path

    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(BUSY_RAY_WORKER_TITLE):
                    pids.append(int(entry.name))
            except OSError:   # exited while we looked
                continue
    return pids


class RayActorKiller:
    """A thread that SIGKILLs the first of our Ray actors it sees running a job (any process's: the cluster's);
    ``killed`` holds its pid once done. ``join()`` after the run."""

    def __init__(self, timeout_s: float = 240.0) -> None:
        import threading

        self.killed: list[int] = []
        self._timeout_s = timeout_s
        self._thread = threading.Thread(target=self._run, name="ray-actor-killer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import signal
        import time

        deadline = time.monotonic() + self._timeout_s
        while time.monotonic() < deadline and not self.killed:
            busy = busy_ray_workers()
            if busy:
                os.kill(busy[0], signal.SIGKILL)
                self.killed.append(busy[0])
            time.sleep(0.02)

    def join(self) -> list[int]:
        self._thread.join()
        return self.killed


@pytest.fixture
def ray_actor_killer():
    """Starts a :class:`RayActorKiller`: call it (optionally with a timeout in s) just before the run."""
    return RayActorKiller


@pytest.fixture
def ray_hidden_env(tmp_path_factory) -> dict[str, str]:
    """An environment whose ``import ray`` fails as it does where Ray is not installed: a ``ray.py`` first on
    ``PYTHONPATH`` raising the error Python raises for a missing module."""
    folder = tmp_path_factory.mktemp("ray-hidden")
    (folder / "ray.py").write_text("raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
