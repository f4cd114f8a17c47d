"""Fixtures of the simulator tests (MUJOCO_GL is chosen by the root conftest, before mujoco loads)."""

import numpy as np
import pytest

from bspatial.world.spec import CameraSpec, SceneSpec, box_object, table_object

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
