"""Headless MuJoCo for the task tests: MUJOCO_GL is chosen before anything imports mujoco.

Same probe as tests/sim/conftest.py (EGL first, OSMesa as the fallback, DESIGN §3); each candidate is
tried in a subprocess because MuJoCo fixes its GL platform at import.
"""

import os
import subprocess
import sys

import pytest

_PROBE = "import mujoco; c = mujoco.GLContext(8, 8); c.make_current(); c.free()"


def _gl_works(platform: str) -> bool:
    env = {**os.environ, "MUJOCO_GL": platform}
    try:
        return subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


if "MUJOCO_GL" not in os.environ and "mujoco" not in sys.modules:
    for _platform in ("egl", "osmesa"):
        if _gl_works(_platform):
            os.environ["MUJOCO_GL"] = _platform
            break


@pytest.fixture(scope="session")
def sim():
    """One MuJoCo backend reused across tests (each test loads its own scene)."""
    from bspatial.sim.mujoco_backend import MujocoBackend

    backend = MujocoBackend()
    yield backend
    backend.close()
