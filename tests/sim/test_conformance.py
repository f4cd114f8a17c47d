"""The MuJoCo backend passes the SimBackend conformance checks (bspatial.sim.conformance), one test each."""

import pytest

from bspatial.sim import conformance
from bspatial.sim.conformance import CHECKS, conformance_scene, run_checks
from bspatial.sim.mujoco_backend import MujocoBackend

pytestmark = [pytest.mark.sim]


@pytest.fixture()
def backend():
    sim = MujocoBackend()
    sim.load(conformance_scene())
    yield sim
    sim.close()


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_mujoco_backend_passes(backend, check):
    check(backend)


class _ForgetsToReset(MujocoBackend):
    """A broken backend: reset() works only the first time, inside load (a negative control for the checks)."""

    def reset(self) -> None:
        if not getattr(self, "_reset_once", False):
            self._reset_once = True
            super().reset()


class _NoLists(MujocoBackend):
    """A broken backend: reports every object as movable."""

    def movable_objects(self):
        return self.object_names()


@pytest.mark.parametrize("broken,check", [(_ForgetsToReset, conformance.check_reset_restores_the_spawn),
                                          (_NoLists, conformance.check_object_lists)])
def test_each_check_catches_its_broken_backend(broken, check):
    sim = broken()
    sim.load(conformance_scene())
    try:
        with pytest.raises(AssertionError):
            check(sim)
    finally:
        sim.close()


def test_run_checks_names_the_failed_check():
    with pytest.raises(AssertionError, match="^check_object_lists: "):
        run_checks(_NoLists)
