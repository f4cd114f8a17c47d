"""One simulator per process: the backend that a worker process (or the main process) reuses across jobs.

Building a MuJoCo world is cheap but opening a renderer is not, and a GL context must never cross a
``fork``; so the process pools of ``bspatial build`` and ``bspatial rollout`` spawn workers, and each
worker keeps one backend for all the jobs it runs.
"""

from __future__ import annotations

from typing import Any

from bspatial.sim.backend import SimBackend

_BACKENDS: dict[tuple, SimBackend] = {}


def process_backend(**options: Any) -> SimBackend:
    """This process's MuJoCo backend built with ``options`` (created on first use, then reused)."""
    key = tuple(sorted(options.items()))
    if key not in _BACKENDS:
        from bspatial.sim.mujoco_backend import MujocoBackend

        _BACKENDS[key] = MujocoBackend(**options)
    return _BACKENDS[key]


def close_process_backends() -> None:
    """Close and forget every backend of this process (safe to call when there is none)."""
    while _BACKENDS:
        _, backend = _BACKENDS.popitem()
        backend.close()
