"""Screening on the mock API over a recorded reach_plate scene: each rejection rule and each acceptance cap."""

from __future__ import annotations

import numpy as np
import pytest

from bspatial.evaluation.agents.pointers import OraclePointer
from bspatial.evaluation.agents.sandbox import SandboxLimits
from bspatial.evaluation.agents.screening import PERCEPTION_STREAK, SCREEN_CALLS, RecordedScene, record_scene, screen
from bspatial.evaluation.agents.writers import reference_program

pytestmark = [pytest.mark.slow, pytest.mark.sim]

# Short caps so every case takes seconds; the rules are the paper's (the streak and call cap unchanged).
LIMITS = SandboxLimits(inactivity_s=30.0, wall_s=4.0, cpu_s=30.0, call_idle_s=1.5)


@pytest.fixture(scope="module")
def scene(sim, instance, tmp_path_factory):
    path = tmp_path_factory.mktemp("scene") / "example_scene.npz"
    record_scene(sim, instance).save(path)
    return RecordedScene.load(path)


def _screen(source, scene, instance=None, limits=LIMITS):
    pointer = None if instance is None else OraclePointer(instance, lambda: scene.frames.values())
    return screen(source, scene, pointer=pointer, limits=limits)[0]


def test_recorded_scene_round_trips(sim, instance, scene):
    from bspatial.tasks.start import warm_up

    sim.load(instance.scene)
    warm_up(sim, instance)   # the start state an episode (and so the recorded scene) begins from
    head = sim.render("head")
    assert np.array_equal(scene.frames["head"].rgb, head.rgb)
    assert np.array_equal(scene.frames["head"].segmentation, head.segmentation)
    assert np.allclose(scene.frames["head"].K, head.K) and scene.instruction == instance.instruction
    assert scene.state["step"] == 0 and set(scene.state["eef"]) == {"left", "right"}


def test_the_reference_program_passes(scene, instance):
    verdict = _screen(reference_program("reach_plate"), scene, instance)
    assert verdict.passed and verdict.reason == "run(api) returned after commanding a motion", verdict
    assert verdict.motions >= 3


@pytest.mark.parametrize("source, reason", [
    ("def run(api):\n    api.move_base(0.1)\n    raise KeyError('plate')\n", r"^error: KeyError: 'plate'"),
    ("def run(api):\n    api.get_state()\n    api.wait(1.0)\n", r"^the program never commands a motion$"),
    ("def run(api):\n    api.move_base(0.1)\n    while True:\n        api.get_state()\n",
     rf"^{PERCEPTION_STREAK} consecutive perception calls without a motion$"),
    ("import time\ndef run(api):\n    api.move_base(0.1)\n    time.sleep(60)\n", r"^no API call for 1.5 s"),
    ("def run(api):\n    api.move_base(0.1)\n    while True:\n        pass\n", r"^no API call for 1.5 s"),
    ("def run(api):\n    api.move_base(dx='far')\n", r"^error: .*dx must be a finite number"),
])
def test_rejections(scene, source, reason):
    import re

    verdict = _screen(source, scene)
    assert not verdict.passed and re.search(reason, verdict.reason), verdict


def test_still_running_at_the_call_cap_is_accepted(scene):
    roomy = SandboxLimits(inactivity_s=60.0, wall_s=60.0, cpu_s=60.0, call_idle_s=30.0)   # a loaded machine
    verdict = _screen("def run(api):\n    while True:\n        api.get_state()\n        api.move_ee_by([0, 0, 0])\n",
                      scene, limits=roomy)
    assert verdict.passed and verdict.reason == f"still running at the {SCREEN_CALLS}-call cap", verdict
    assert verdict.calls == SCREEN_CALLS


def test_still_running_at_the_wall_cap_is_accepted(scene):
    source = "import time\ndef run(api):\n    while True:\n        api.move_ee_by([0, 0, 0])\n        time.sleep(0.5)\n"
    verdict = _screen(source, scene)
    assert verdict.passed and verdict.reason == "still running at the 4 s cap", verdict
    assert 2 <= verdict.calls < 20
