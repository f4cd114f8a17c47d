"""Benchmark tasks (Table S2): seeded scene generators, instruction variants, geometric targets.

Public API:

* :func:`get_task`, :func:`task_names`, :func:`sample_instance` (:mod:`bspatial.tasks.registry`);
* :class:`Task`, :class:`TaskInstance`, :class:`PlacementGoal`, :data:`MIN_CANDIDATE_PIXELS`,
  :func:`check_visible` (:mod:`bspatial.tasks.base`);
* the spatial calculator is :mod:`bspatial.world.relations`, textures :mod:`bspatial.world.textures`.

Importing this package imports neither mujoco nor any GL library.
"""

from __future__ import annotations

from bspatial.common.lazy import lazy_exports

_EXPORTS = {
    "registry": ("get_task", "task_names", "sample_instance", "REGISTRY"),
    "budgets": ("step_budget",),
    "base": ("Task", "TaskInstance", "PlacementGoal", "Layout", "LayoutRejected", "MIN_CANDIDATE_PIXELS",
             "MAX_LAYOUT_ATTEMPTS", "check_visible", "candidate_pixels"),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
