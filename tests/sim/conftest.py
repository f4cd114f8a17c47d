"""Headless MuJoCo for the simulator tests: MUJOCO_GL is chosen here, before anything imports mujoco.

EGL (Mesa llvmpipe) first, OSMesa as the fallback (DESIGN §3). Each candidate is probed in a
subprocess because MuJoCo fixes its GL platform at import and a failed probe could not be undone.
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

import numpy as np  # noqa: E402

from bspatial.sim.spec import CameraSpec, SceneSpec, box_object, table_object  # noqa: E402

TABLE_HEIGHT = 0.75
BLOCK_SIZE = (0.4, 0.3, 0.2)     # a static box on the table: its top is at TABLE_HEIGHT + 0.2
BLOCK_XY = (1.1, 0.0)


def make_table_scene() -> SceneSpec:
    """A table in front of the robot with a static block, a free cereal box and a top-down camera."""
    return SceneSpec(
        name="table_scene",
        objects=(
            table_object("table_0", "breakfast_table", (0.8, 1.2), TABLE_HEIGHT, (1.0, 0.0)),
            box_object("block_0", "shelf", BLOCK_SIZE, (*BLOCK_XY, TABLE_HEIGHT + BLOCK_SIZE[2] / 2),
                       rgba=(0.2, 0.4, 0.8, 1), static=True),
            box_object("cereal_0", "box_of_cereal", (0.06, 0.18, 0.26), (0.85, 0.35, TABLE_HEIGHT + 0.13),
                       rgba=(0.9, 0.7, 0.1, 1), mass=0.3),
            box_object("cereal_1", "box_of_cereal", (0.06, 0.18, 0.26), (0.85, -0.35, TABLE_HEIGHT + 0.13),
                       rgba=(0.8, 0.2, 0.2, 1), mass=0.3, yaw=0.4),
        ),
        cameras=(CameraSpec("top", (BLOCK_XY[0], BLOCK_XY[1], 3.0), (BLOCK_XY[0], BLOCK_XY[1], 0.0)),),
    )


@pytest.fixture(scope="module")
def table_sim():
    from bspatial.sim.mujoco_backend import MujocoBackend

    sim = MujocoBackend()
    sim.load(make_table_scene())
    for _ in range(10):   # let the free boxes settle
        sim.step(sim.hold_action())
    yield sim
    sim.close()


@pytest.fixture()
def table_geometry() -> dict:
    """The known geometry of :func:`make_table_scene` (tests cannot import conftest by name)."""
    return {"table_height": TABLE_HEIGHT, "block_size": BLOCK_SIZE, "block_xy": BLOCK_XY}


@pytest.fixture()
def rng():
    return np.random.default_rng(0)
