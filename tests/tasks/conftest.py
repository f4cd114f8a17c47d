"""Fixtures of the task tests (MUJOCO_GL is chosen by the root conftest, before mujoco loads)."""

import pytest


@pytest.fixture(scope="session")
def sim():
    """One MuJoCo backend reused across tests (each test loads its own scene)."""
    from bspatial.sim.mujoco_backend import MujocoBackend

    backend = MujocoBackend()
    yield backend
    backend.close()
