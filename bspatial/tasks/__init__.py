"""Benchmark tasks (Table S2): seeded scene generators, instruction variants, geometric targets.

Public API:

* :func:`get_task`, :func:`task_names`, :func:`sample_instance` (:mod:`bspatial.tasks.registry`);
* :class:`Task`, :class:`TaskInstance`, :class:`PlacementGoal`, :data:`MIN_CANDIDATE_PIXELS`,
  :func:`check_visible` (:mod:`bspatial.tasks.base`);
* geometry helpers in :mod:`bspatial.tasks.geometry`, textures in :mod:`bspatial.tasks.assets`.

Importing this package imports neither mujoco nor any GL library.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "registry": ("get_task", "task_names", "sample_instance", "REGISTRY"),
    "budgets": ("step_budget",),
    "base": ("Task", "TaskInstance", "PlacementGoal", "Layout", "LayoutRejected", "MIN_CANDIDATE_PIXELS",
             "MAX_LAYOUT_ATTEMPTS", "check_visible", "candidate_pixels"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
