"""Fixtures shared across test folders: one local Ray cluster for every Ray test of a session (its start-up
takes ~12 s on a 2-core machine, so it is paid once); and how ``make test`` splits the suite over pytest-xdist
workers (:func:`pytest_xdist_make_scheduler`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
CHROME_ARGUMENTS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--window-size=1400,1000")

RAY_TEST_FILES = frozenset({"test_executors.py", "test_build_ray.py", "test_demos_ray.py", "test_rollout_ray.py"})
"""The files whose tests use the session's Ray cluster."""

FOLDERS_SHARING_SESSION_FIXTURES = frozenset({"analysis", "openpi", "lmms_eval"})
"""Test folders whose conftest builds something costly once per session (rollout runs, a served policy, the
lmms-eval venv and its run): their tests stay on one xdist worker so it is built once."""

METRIC_LOADERS = "metric-modules"
"""The group of the metric modules' doctests and tests/metrics: they ``evaluate.load`` our metric scripts in
the test process, and two workers doing so at once on a fresh machine broke one import (measured: "No module
named 'evaluate_modules.metrics.bspatial_action'" in a doctest while the other worker loaded metrics too)."""


def xdist_group_of(nodeid: str) -> str:
    """The group of the test ``nodeid`` (``path::name``): the tests of one group run on one xdist worker, in order.

    A file is its own group (its module fixtures are built once); the Ray tests are one group, since one cluster
    serves them and :class:`RayActorKiller` SIGKILLs any of our Ray actors on the machine, which must not be
    another worker's; so are the :data:`METRIC_LOADERS` and each folder of
    :data:`FOLDERS_SHARING_SESSION_FIXTURES`."""
    path = Path(nodeid.split("::", 1)[0])
    if path.name in RAY_TEST_FILES:
        return "ray"
    if path.parts[0] == "metrics" or path.parts[:2] == ("tests", "metrics"):
        return METRIC_LOADERS
    if path.parent.name in FOLDERS_SHARING_SESSION_FIXTURES:
        return f"folder:{path.parent}"
    return f"file:{path}"


def pytest_xdist_make_scheduler(config, log):
    """``make test`` (``-n 2``) schedules by :func:`xdist_group_of`.

    Why not ``--dist loadgroup`` with ``xdist_group`` marks added at collection: on pytest 9.2 the node-id
    suffix those marks work through no longer takes effect, and the groups are silently ignored
    (pytest-dev/pytest-xdist#1386; measured here: a file's tests, and the Ray tests, spread over both workers).
    A scheduler that computes the group from the node id needs nothing of collection."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group_of(nodeid)

    return GroupScheduling(config, log)


RAY_TEST_CPUS = 2
"""The issue's test cluster: a local Ray cluster with 2 CPUs."""


@pytest.fixture(scope="session")
def ray_cluster():
    """``ray`` initialised on a local 2-CPU cluster (no dashboard, no usage stats); its GCS address is
    ``ray_cluster.get_runtime_context().gcs_address``. Shut down at the end of the session."""
    import ray   # make test installs the [ray] extra: a missing ray is a failure, not a skip
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


@pytest.fixture(scope="module")
def browser():
    """A headless Debian chromium driven by selenium (the HTML report's and the human page's browser tests)."""
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        pytest.fail(f"the browser tests need {CHROMIUM} and {CHROMEDRIVER}: run `make browser` "
                    "(it installs Debian's chromium and chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="bspatial-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (*CHROME_ARGUMENTS, f"--user-data-dir={profile}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# ----------------------------------------------------------------------------- SIGKILLed runs

KILL_STARTED_WITHIN_S = 120.0   # bounds of the polls (a loaded machine), not speed claims
KILL_GONE_WITHIN_S = 20.0
KILL_WRITE_SLACK_S = 1.0        # a write in flight at the kill may land this much later


def poll(condition, timeout_s: float):
    """``condition()``'s first truthy value within ``timeout_s`` (checked every 50 ms), else its last value."""
    import time

    deadline = time.monotonic() + timeout_s
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def file_mtimes(folder: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def sigkilled_run():
    """A context manager for the kill tests of our multi-process commands (build, rollout): start ``command``,
    wait until ``started()`` (its workers are at work), SIGKILL the parent, and check what a kill must leave: no
    worker alive, no file under ``watched`` written after the kill, nothing changing a second later. The body
    runs after those checks with the workers' pids; on the way out any worker still alive is killed, so a failing
    test leaves no orphans."""
    import contextlib
    import signal
    import subprocess
    import time

    from bspatial.common.processes import is_alive, live_descendants

    @contextlib.contextmanager
    def run(command: list[str], watched: Path, started, what_started: str):
        parent = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        workers: set[int] = set()
        try:
            ok = poll(lambda: len(live_descendants(parent.pid)) >= 2 and started(), KILL_STARTED_WITHIN_S)
            assert ok and parent.poll() is None, f"the workers never {what_started}"
            workers = live_descendants(parent.pid)
            killed_at = time.time()
            parent.send_signal(signal.SIGKILL)
            parent.wait()
            poll(lambda: not any(is_alive(p) for p in workers), KILL_GONE_WITHIN_S)
            assert {p for p in workers if is_alive(p)} == set(), "workers outlived their killed parent"
            late = {p.name: t / 1e9 - killed_at for p, t in file_mtimes(watched).items()
                    if t / 1e9 > killed_at + KILL_WRITE_SLACK_S}
            assert late == {}, "files written after the parent was killed"
            before = file_mtimes(watched)
            time.sleep(1.0)
            assert file_mtimes(watched) == before
            yield workers
        finally:
            for pid in workers:   # a failing run must not leave its orphans behind
                if is_alive(pid):
                    os.kill(pid, signal.SIGKILL)

    return run

