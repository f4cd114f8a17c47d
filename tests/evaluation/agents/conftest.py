"""Fixtures of the agent tests: one small reach_plate episode world (MUJOCO_GL is chosen by the root conftest)."""

from __future__ import annotations

import numpy as np
import pytest

from bspatial.evaluation.vlm.backend_api import Response


@pytest.fixture(scope="module")
def sim():
    from bspatial.sim.mujoco_backend import MujocoBackend

    backend = MujocoBackend()
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def instance(sim):
    from bspatial.tasks import sample_instance

    inst = sample_instance("reach_plate", "largest", 0)
    sim.load(inst.scene)
    return inst


def mujoco_project(sim, camera: str, world_point, width: int, height: int):
    """Pixel (u, v) and depth of a world point from MuJoCo's own camera data (independent of our geometry):
    MuJoCo cameras look along their -z axis with +y up; fy = (H/2) / tan(fovy/2)."""
    import mujoco

    cam = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_CAMERA, f"robot/{camera}")
    if cam < 0:
        cam = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
    pos, mat = sim.data.cam_xpos[cam].copy(), sim.data.cam_xmat[cam].reshape(3, 3).copy()
    local = mat.T @ (np.asarray(world_point, float) - pos)
    f = (height / 2) / np.tan(np.radians(sim.model.cam_fovy[cam]) / 2)
    depth = -local[2]
    return width / 2 + f * local[0] / depth, height / 2 - f * local[1] / depth, depth, pos, mat


class OraclePointer:
    """A stand-in pointing model that answers Molmo's point format with given pixel fractions (the test
    computes them from the scene); the API must read its reply like any model's."""

    spec = "oracle-pointer"

    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []   # (u / W, v / H)
        self.prompts: list[str] = []

    def identity(self):
        return {"kind": "oracle-pointer"}

    def generation_settings(self):
        return {}

    def generate(self, requests):
        self.prompts += [r.prompt for r in requests]
        attrs = " ".join(f'x{i + 1}="{100 * x:.1f}" y{i + 1}="{100 * y:.1f}"' for i, (x, y) in enumerate(self.points))
        return [Response(f'<points {attrs} alt="target">target</points>', 0.0) for _ in requests]
