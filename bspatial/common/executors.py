"""Where a job plan runs: in this process, in local worker processes, or on a Ray cluster.

A *job plan* is a list of picklable job values and one top-level function; ``bspatial rollout`` (one job per
episode), ``bspatial demos`` (one job per recording attempt) and ``bspatial build`` (one job per task, general
VQA, navigation VQA) each make one and hand it to an :class:`Executor`, which runs ``function(job)`` and yields
``(key, result)`` as results complete. The caller writes its own output files from the results, in the driver,
so a run writes the same files whichever executor ran it, and resume / kill / restart behave the same.

* :class:`InProcess` (``workers=1``, the default): the jobs run here, one after another, in submission order.
* :class:`LocalPool` (``workers=N``): :func:`bspatial.common.processes.worker_pool` (spawned workers, one
  simulator each, that die with this process).
* :class:`RayPool` (``ray="auto"`` or ``ray="<address>"``): one Ray actor per worker, each holding its own
  simulator for all the jobs it runs. ``"auto"`` joins the cluster Ray finds (``RAY_ADDRESS``, or the last one
  ``ray start`` made on this machine) or else starts a local one; an address joins that cluster. An actor that
  dies (its process killed, its node lost) is replaced and its job resubmitted, up to
  :data:`MAX_JOB_ATTEMPTS` times per job; the job's result is yielded once, so nothing is lost or duplicated.
  Ray is an optional extra (``pip install behavior-spatial[ray]``); without it ``--ray`` is refused with
  :class:`RayNotInstalledError`.

Callers may submit more jobs while iterating :meth:`Executor.completed` (the demos recorder plans attempts from
the outcomes it has seen), and bound their memory with :meth:`Executor.pending`.

Example:
    >>> with open_executor(workers=1) as executor:
    ...     for n in (3, 1, 2):
    ...         executor.submit(n, abs, -n)
    ...     sorted(executor.completed())
    [(1, 1), (2, 2), (3, 3)]
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

logger = logging.getLogger(__name__)

RAY_EXTRA_HINT = "pip install 'behavior-spatial[ray]'"
"""How to get Ray (setup.cfg's ``ray`` extra); named in :class:`RayNotInstalledError`."""
MAX_JOB_ATTEMPTS = 3
"""Ray: times a job may lose its actor before the run stops (a job that kills every worker it runs on is a bug
to report, not a reason to loop)."""
RAY_AUTO = "auto"


class RayNotInstalledError(ImportError, ValueError):
    """``--ray`` was asked for but Ray cannot be imported. A ``ValueError`` too, so commands report it as bad
    input (their ``error: ...`` line and non-zero exit)."""


class WorkerLostError(RuntimeError):
    """A job lost its Ray actor :data:`MAX_JOB_ATTEMPTS` times."""


class Executor:
    """Runs ``function(job)`` for submitted jobs; :meth:`completed` yields ``(key, result)`` as they finish.

    A job's exception is raised from :meth:`completed` (the run stops, as a plain loop would).
    Use as a context manager: leaving it stops the workers.
    """

    workers: int = 1

    def submit(self, key: Hashable, function: Callable[[Any], Any], job: Any) -> None:
        raise NotImplementedError

    def pending(self) -> int:
        """Jobs submitted whose result :meth:`completed` has not yielded yet."""
        raise NotImplementedError

    def completed(self) -> Iterator[tuple[Hashable, Any]]:
        """``(key, result)`` of each submitted job as it finishes, until none is pending (more may be submitted
        while iterating)."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop the workers (idempotent)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class InProcess(Executor):
    """Every job in this process, in submission order (the jobs' simulators are this process's)."""

    def __init__(self) -> None:
        self._queue: deque = deque()

    def submit(self, key: Hashable, function: Callable[[Any], Any], job: Any) -> None:
        self._queue.append((key, function, job))

    def pending(self) -> int:
        return len(self._queue)

    def completed(self) -> Iterator[tuple[Hashable, Any]]:
        while self._queue:
            key, function, job = self._queue[0]
            result = function(job)
            self._queue.popleft()
            yield key, result


THREAD_VARIABLES: tuple[str, ...] = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "LP_NUM_THREADS")
"""What sizes a worker's thread pools: OpenMP / MKL / OpenBLAS (torch, numpy) and Mesa llvmpipe (rendering)."""


def share_the_cores(threads: int) -> None:
    """Worker initializer: size this process's thread pools to its share of the machine's cores.

    Without it every worker's torch and renderer start one thread per core, so N workers on C cores run N x C
    busy threads (measured with 2 workers on 2 cores: a tiny policy's chunk took 466 ms instead of 71 ms).
    """
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, str(threads))   # a user's own setting wins
    import sys

    if "torch" in sys.modules:   # already imported with the machine's default: resize it too
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


class LocalPool(Executor):
    """``workers`` spawned processes of :func:`bspatial.common.processes.worker_pool` (they die with us), each with
    its share of the cores for its thread pools (:func:`share_the_cores`)."""

    def __init__(self, workers: int) -> None:
        from bspatial.common.processes import worker_pool

        self.workers = workers
        self._pool = worker_pool(workers, share_the_cores, (max(1, (os.cpu_count() or 1) // workers),))
        self._futures: dict = {}
        self._order = 0

    def submit(self, key: Hashable, function: Callable[[Any], Any], job: Any) -> None:
        self._futures[self._pool.submit(function, job)] = (self._order, key)
        self._order += 1

    def pending(self) -> int:
        return len(self._futures)

    def completed(self) -> Iterator[tuple[Hashable, Any]]:
        from concurrent.futures import FIRST_COMPLETED, wait

        while self._futures:
            done, _ = wait(list(self._futures), return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: self._futures[f][0]):
                _, key = self._futures.pop(future)
                yield key, future.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class JobWorker:
    """The Ray actor of :class:`RayPool`: one process that runs jobs one at a time, keeping what its jobs keep
    per process (:func:`bspatial.sim.process.process_backend`: one simulator for all of them)."""

    def run(self, function: Callable[[Any], Any], job: Any) -> Any:
        return function(job)

    def pid(self) -> int:
        return os.getpid()


class RayPool(Executor):
    """``workers`` Ray actors (default: one per CPU of the cluster); jobs queue here until an actor is free.

    Ray is initialised here unless this process already did it (then that connection is used and kept).
    """

    def __init__(self, address: str, workers: int | None = None) -> None:
        ray = import_ray()
        self._ray = ray
        self._idle, self._running = [], {}
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            _init_ray(ray, address, workers)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if workers is not None and workers > cpus:
            # An actor holds one CPU: the ones beyond the cluster's CPUs would never start, nor would their jobs.
            self.close()
            raise ValueError(f"--workers {workers} asks for more Ray actors than the cluster at {address!r} has "
                             f"CPUs ({cpus}); pass --workers {max(cpus, 1)} or fewer, or leave it out")
        self.workers = workers or max(1, cpus)
        self._actor_class = ray.remote(num_cpus=1)(JobWorker)
        self._idle = [self._actor_class.remote() for _ in range(self.workers)]
        self._queue: deque = deque()
        self._running: dict = {}    # ObjectRef -> (actor, key, function, job)
        self._losses: dict = {}
        logger.info("ray: %d actors on %s", self.workers, ray.get_runtime_context().gcs_address)

    def submit(self, key: Hashable, function: Callable[[Any], Any], job: Any) -> None:
        self._queue.append((key, function, job))

    def pending(self) -> int:
        return len(self._queue) + len(self._running)

    def actors(self) -> list:
        """The live actor handles (idle and busy)."""
        return self._idle + [actor for actor, *_ in self._running.values()]

    def completed(self) -> Iterator[tuple[Hashable, Any]]:
        from ray.exceptions import RayActorError

        while self._queue or self._running:
            while self._queue and self._idle:
                key, function, job = self._queue.popleft()
                actor = self._idle.pop()
                self._running[actor.run.remote(function, job)] = (actor, key, function, job)
            ready, _ = self._ray.wait(list(self._running), num_returns=1)
            actor, key, function, job = self._running.pop(ready[0])
            try:
                result = self._ray.get(ready[0])
            except RayActorError as error:   # the actor's process died (ActorDiedError and kin): the job reruns
                self._replace(actor, key, function, job, error)
                continue
            self._idle.append(actor)
            yield key, result

    def _replace(self, actor, key: Hashable, function: Callable[[Any], Any], job: Any, error: Exception) -> None:
        self._losses[key] = self._losses.get(key, 0) + 1
        self._ray.kill(actor)
        if self._losses[key] >= MAX_JOB_ATTEMPTS:
            raise WorkerLostError(f"job {key!r} lost its Ray worker {self._losses[key]} times; last: "
                                  f"{type(error).__name__}: {error}")
        logger.warning("ray: the worker running job %r died (%s); starting another and rerunning the job",
                       key, type(error).__name__)
        self._idle.append(self._actor_class.remote())
        self._queue.appendleft((key, function, job))

    def close(self) -> None:
        for actor in self.actors():
            self._ray.kill(actor)
        self._idle, self._running = [], {}
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False


def import_ray():
    """``import ray``, or :class:`RayNotInstalledError` naming ``--ray`` and the extra to install."""
    try:
        import ray
    except ImportError as error:
        raise RayNotInstalledError(f"--ray needs Ray, which is not installed ({error}); install it with "
                                   f"{RAY_EXTRA_HINT}, or leave out --ray to run on this machine") from None
    return ray


def _init_ray(ray, address: str, workers: int | None) -> None:
    # Ray's usage-stats reporter tries the network at start-up; a benchmark run should not phone home.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        if address == RAY_AUTO:
            try:
                ray.init(address=RAY_AUTO, logging_level=logging.WARNING)   # a cluster Ray can find ...
            except ConnectionError:
                # ... or a local one sized by --workers (the whole machine without it)
                ray.init(num_cpus=workers, include_dashboard=False, logging_level=logging.WARNING)
        else:
            ray.init(address=address, logging_level=logging.WARNING)
    except (ConnectionError, ValueError) as error:
        raise ValueError(f"--ray {address!r}: cannot join a Ray cluster there ({type(error).__name__}: {error}); "
                         f"pass --ray {RAY_AUTO} to start or join one on this machine") from None


def check_ray_address(ray: str | None) -> str | None:
    """``ray`` if it is None, ``"auto"`` or a cluster address (``host:port``, ``ray://host:port``).

    Example:
        >>> check_ray_address("auto"), check_ray_address("10.0.0.5:6379"), check_ray_address(None)
        ('auto', '10.0.0.5:6379', None)
    """
    if ray is None or ray == RAY_AUTO:
        return ray
    host, _, port = ray.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--ray must be {RAY_AUTO!r} or a cluster address host:port, got {ray!r}")
    return ray


def open_executor(workers: int | None = None, ray: str | None = None) -> Executor:
    """The executor for ``--workers`` / ``--ray``: Ray actors when ``ray`` is given (``workers`` of them,
    default one per cluster CPU), else ``workers`` local processes (default 1: this process).

    Raises:
        ValueError: ``workers`` < 1 or a malformed ``ray``; :class:`RayNotInstalledError` without Ray.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if check_ray_address(ray) is not None:
        return RayPool(ray, workers)
    return InProcess() if (workers or 1) == 1 else LocalPool(workers)


def run_jobs(function: Callable[[Any], Any], jobs: Iterable[Any], workers: int | None = None,
             ray: str | None = None) -> Iterator[tuple[int, Any]]:
    """``(index, function(job))`` for every job of the plan, as they complete (see :func:`open_executor`).

    Example:
        >>> sorted(run_jobs(abs, [-1, -2]))
        [(0, 1), (1, 2)]
    """
    with open_executor(workers, ray) as executor:
        for index, job in enumerate(jobs):
            executor.submit(index, function, job)
        yield from executor.completed()


__all__ = ["Executor", "InProcess", "JobWorker", "LocalPool", "MAX_JOB_ATTEMPTS", "RAY_EXTRA_HINT",
           "RayNotInstalledError", "RayPool", "WorkerLostError", "check_ray_address", "import_ray", "open_executor",
           "run_jobs"]
