"""Worker processes that die with their parent; what is still alive below a process.

A spawned ``ProcessPoolExecutor`` worker does not notice that its parent is gone: after a ``kill -9`` of
``bspatial rollout --workers 2`` or ``bspatial build --workers 2`` the workers were reparented, went on with
the jobs already queued to them, wrote result files into a run nobody owned any more, and then waited
forever on a queue whose write end they hold themselves. Every pool of ours is made by
:func:`worker_pool`, whose workers first run :func:`worker_initializer`: on Linux the kernel SIGKILLs the
worker the moment its parent dies (``prctl(PR_SET_PDEATHSIG)``), elsewhere a watchdog thread notices
within :data:`WATCHDOG_POLL_S`.

Example:
    >>> import os
    >>> with worker_pool(1) as pool:
    ...     pool.submit(os.getppid).result() == os.getpid()
    True
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

logger = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
"""``prctl`` option from ``<linux/prctl.h>``: the signal this process gets when its parent dies."""
WATCHDOG_POLL_S = 0.5
"""Non-Linux fallback: how often (s) the watchdog thread checks that the parent is still the parent."""
PARENT_GONE_EXIT_CODE = 1
"""Exit status of a worker that found its parent gone (the Linux path is killed by SIGKILL instead)."""


def worker_pool(max_workers: int, initializer: Callable[..., Any] | None = None,
                initargs: tuple = ()) -> ProcessPoolExecutor:
    """A ``ProcessPoolExecutor`` of ``max_workers`` spawned workers that die with this process.

    Spawned, never forked: the callers hold simulators, and a GL context must never cross a ``fork``.
    ``initializer(*initargs)``, if given, runs in each worker after :func:`die_with_parent` is armed.

    The pool must be used from the thread that will wait on it: Linux sends the parent-death signal
    when the *thread* that started a worker exits, and the pool starts its workers in ``submit``.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=max_workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=worker_initializer, initargs=(os.getpid(), initializer, initargs))


def worker_initializer(parent_pid: int, initializer: Callable[..., Any] | None = None, initargs: tuple = ()) -> None:
    """Pool initializer: :func:`die_with_parent` (``parent_pid``), then ``initializer(*initargs)`` if given."""
    die_with_parent(parent_pid)
    if initializer is not None:
        initializer(*initargs)


def die_with_parent(parent_pid: int) -> None:
    """Make this process end as soon as ``parent_pid`` (the process that started it) dies.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, so the kernel kills us however the parent dies (``kill -9``
    included) and nothing of ours runs after it. Other systems have no such call, so a daemon thread polls
    ``os.getppid()`` instead (a reparented process sees another parent pid); that leaves up to
    :data:`WATCHDOG_POLL_S` of work after the parent's death, which is the best a portable check can do.

    Either way, the parent may already have died before the watch was set up (the child runs this after
    spawning and importing): then no signal will ever come, so the parent pid is checked once more here.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"prctl(PR_SET_PDEATHSIG) failed: {os.strerror(error)}")
    else:
        threading.Thread(target=_watch_parent, args=(parent_pid,), name="parent-watchdog", daemon=True).start()
    if os.getppid() != parent_pid:
        logger.warning("worker %d: parent %d died before the worker started; exiting", os.getpid(), parent_pid)
        os._exit(PARENT_GONE_EXIT_CODE)   # no cleanup handlers: they belong to the dead parent's run


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(WATCHDOG_POLL_S)
    os._exit(PARENT_GONE_EXIT_CODE)


def is_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (``os.kill(pid, 0)`` also succeeds on a zombie,
    which has exited and only waits to be reaped). Linux ``/proc``; elsewhere the ``os.kill`` answer."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return _state_and_parent(stat.read_text())[0] not in ("Z", "X")
        except (FileNotFoundError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_descendants(pid: int) -> set[int]:
    """The pids of every live (not zombie) process below ``pid``: children, grandchildren, ...

    Reads ``/proc`` (Linux only: raises ``OSError`` where there is none). A process that is reparented when
    its parent dies is no longer below ``pid``; keep the pids from before and ask :func:`is_alive`.
    """
    children: dict[int, list[int]] = {}
    live: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, parent = _state_and_parent((entry / "stat").read_text())
        except OSError:   # exited while we looked
            continue
        children.setdefault(parent, []).append(int(entry.name))
        if state not in ("Z", "X"):
            live.add(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found & live


def _state_and_parent(stat: str) -> tuple[str, int]:
    # /proc/<pid>/stat is "pid (comm) state ppid ...", and comm may itself hold spaces and parentheses.
    state, parent = stat.rpartition(")")[2].split()[:2]
    return state, int(parent)


__all__ = ["die_with_parent", "is_alive", "live_descendants", "worker_initializer", "worker_pool"]
