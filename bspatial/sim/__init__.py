"""The embedded household simulator: the backend protocol, the MuJoCo default, robot and rendering.

Scenes arrive as backend-neutral :mod:`bspatial.world.spec` values (the world layer, below this one).

Public API (lazy: importing :mod:`bspatial.sim` imports neither mujoco nor any GL library):

* :mod:`bspatial.sim.backend`: ``SimBackend`` (Protocol), ``CameraFrame``, ``Contact``, ``ObjectPose``,
  ``BoundingBox``, ``RobotState``, ``StepResult`` (the action layout is :mod:`bspatial.catalog.schema`).
* :mod:`bspatial.sim.mujoco_backend`: ``MujocoBackend``.
* :mod:`bspatial.sim.robot`: the R1Pro-like robot, ``PROPRIO_SLICES``, ``solve_ik``.

MuJoCo picks its OpenGL platform from ``MUJOCO_GL`` when it is first imported, so this package sets a
headless default (``egl``, else ``osmesa`` when only libOSMesa is present) unless the user already chose
one; nothing is loaded or rendered here.
"""

from __future__ import annotations

import ctypes.util
import os
import sys

from bspatial.common.lazy import lazy_exports


def default_gl_platform() -> str | None:
    """The headless MuJoCo GL platform this machine can offer: "egl", "osmesa" or None."""
    if ctypes.util.find_library("EGL"):
        return "egl"
    if ctypes.util.find_library("OSMesa"):
        return "osmesa"
    return None


def _set_gl_default() -> None:
    # Only before mujoco is imported (afterwards the variable has no effect) and never over a user choice.
    if "MUJOCO_GL" in os.environ or "mujoco" in sys.modules or sys.platform != "linux":
        return
    platform = default_gl_platform()
    if platform is not None:
        os.environ["MUJOCO_GL"] = platform


_set_gl_default()

_EXPORTS = {
    "backend": ("SimBackend", "CameraFrame", "Contact", "ObjectPose", "BoundingBox", "RobotState", "StepResult"),
    "mujoco_backend": ("MujocoBackend",),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
