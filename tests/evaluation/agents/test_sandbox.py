"""Programs in the sandbox: a hand-written reach program, time and logs over the pipe, the watchdog and the
hold that follows, limits, and a child that dies with its host (real processes throughout)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from bspatial.common.processes import is_alive, live_descendants
from bspatial.evaluation.agents.api import AgentAPI
from bspatial.evaluation.agents.episode import run_agent_episode
from bspatial.evaluation.agents.sandbox import ProgramRun, SandboxLimits, run_program
from bspatial.evaluation.vlm.backends import load_backend
from bspatial.tasks.episode import EpisodeRun

from .conftest import OraclePointer, mujoco_project

pytestmark = [pytest.mark.slow, pytest.mark.subprocess, pytest.mark.sim]

# The watchdog's 2 s; the CPU and wall limits roomy: on a loaded machine (make test's two workers) the
# busy-looping program reached a 30 s CPU limit before the watchdog stopped it (measured once in a fresh
# clone's make test), which is the right stop for the wrong reason.
FAST = SandboxLimits(inactivity_s=2.0, wall_s=180.0, cpu_s=180.0, memory_bytes=2 << 30)
# For the tests that are not about the watchdog: on a loaded machine a program's imports and perception calls
# can take longer than FAST's 2 s without a robot command, which would stop it for the wrong reason.
ROOMY = SandboxLimits(inactivity_s=60.0, wall_s=120.0, cpu_s=60.0, memory_bytes=2 << 30)

REACH_PROGRAM = textwrap.dedent('''
    import numpy as np

    def run(api):
        points = api.point_at("largest plate", "head")
        api.log("pointed", points=points)
        u, v = points[0]
        target = api.pixel_to_point(u, v, "head")
        moved = api.approach(target, standoff=0.6)   # the plate lies at the back of the counter
        print("approach", moved.success, moved.reason)
        above = np.array(moved.point) + [0.0, 0.0, 0.10]
        print("above", bool(api.move_ee_to(above)))
        print("close", bool(api.close_gripper()))
        down = api.move_ee_by([0.0, 0.0, -0.15], speed=0.1)
        print("down", down.success, down.reason, down.detail)
''')


def _target_pixel(sim, instance):
    box = sim.object_bbox(instance.target)
    u, v, _, _, _ = mujoco_project(sim, "head", (box.center[0], box.center[1], box.aabb_max[2]), 224, 224)
    return u / 224, v / 224


def test_reach_program_touches_the_pointed_plate(sim, instance):
    sim.reset()
    pointer = OraclePointer()
    pointer.points = [_target_pixel(sim, instance)]
    episode = run_agent_episode(sim, instance, REACH_PROGRAM, pointer=pointer, limits=ROOMY, load=False)
    program = episode.program
    assert program.protections == ("landlock", "seccomp", "rlimits", "import_guard")
    # touching the plate decides the episode (Table S4 first contact): the sandbox stops the program there
    assert program.outcome == "stopped" and program.reason.startswith("the episode ended (decided)"), program
    assert episode.result.outcome.outcome == "correct"
    motions = {e["method"]: e for e in episode.call_log if "success" in e}
    assert [motions[m]["success"] for m in ("approach", "move_ee_to", "close_gripper")] == [True, True, True]
    assert motions["move_ee_by"]["success"] is False and motions["move_ee_by"]["reason"] == "timeout"
    assert "approach True None" in program.stdout and "above True" in program.stdout
    assert episode.episode_log[0]["msg"] == "pointed" and len(episode.episode_log[0]["points"]) == 1


def test_perception_over_the_pipe_does_not_advance_time(sim, instance):
    chance = load_backend("chance:0")
    api = AgentAPI(EpisodeRun(sim, instance, max_steps=60), pointer=chance, vlm=chance)
    source = textwrap.dedent('''
        import cv2
        from PIL import Image

        def run(api):
            before = api.get_state()["step"]
            image, depth = api.get_image("head"), api.get_depth("left_wrist")
            edges = cv2.Canny(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), 50, 150)
            Image.fromarray(image).save("head.png")          # inside the temp folder: allowed
            api.point_at("plate", "head"), api.ask_vlm("Is a plate visible?", ["head"])
            p = api.pixel_to_point(112, 160, "head")
            api.point_to_pixel(p, "head"), api.pixel_to_ray(10, 10, "right_wrist")
            assert api.get_state()["step"] == before
            api.log("shapes", image=list(image.shape), depth=list(depth.shape), edges=int(edges.any()))
            api.wait(0.1)
            print(api.instruction)
    ''')
    time_before = sim.time
    program = run_program(source, api, limits=ROOMY)
    assert program.outcome == "finished", program
    assert api.episode_log[0]["image"] == [224, 224, 3] and api.episode_log[0]["depth"] == [224, 224]
    perception = [e for e in api.call_log if e["method"] != "wait"]
    assert perception and all(e["step_before"] == e["step_after"] == 0 for e in perception)
    assert api.run.steps == 3 and np.isclose(sim.time - time_before, 0.1)
    assert program.stdout.strip() == instance.instruction
    assert program.robot_commands == 1 and program.calls == len(api.call_log)


def test_a_stopped_program_leaves_the_robot_holding_still(sim, instance):
    source = "def run(api):\n    api.move_base(0.1, 0.0, 0.0)\n    while True:\n        pass\n"
    sim.reset()
    started = time.monotonic()
    episode = run_agent_episode(sim, instance, source, limits=FAST, max_steps=120, load=False)
    assert episode.program.outcome == "stopped" and "no robot command for 2 s" in episode.program.reason
    assert time.monotonic() - started >= 2.0
    assert episode.result.status == "timeout" and episode.result.steps == 120
    moved = episode.call_log[0]["step_after"]
    assert episode.held_steps == 120 - moved
    bases = episode.result.trace.base_poses[moved:]
    assert np.ptp(bases, axis=0).max() < 1e-3                 # held still to the end of the budget


def test_cpu_limit_stops_a_spinning_program(sim, instance):
    api = AgentAPI(EpisodeRun(sim, instance, max_steps=10))
    program = run_program("def run(api):\n    while True:\n        pass\n", api,
                          limits=SandboxLimits(inactivity_s=60.0, cpu_s=1.0))
    assert program.outcome == "stopped" and "CPU limit of 1 s" in program.reason, program


def test_a_program_without_run_is_reported(sim, instance):
    api = AgentAPI(EpisodeRun(sim, instance, max_steps=10))
    program = run_program("x = 1\n", api, limits=ROOMY)
    assert program.outcome == "raised" and program.reason == "TypeError: the program must define run(api)"
    program = run_program("def run(api):\n    return (\n", api, limits=ROOMY)
    assert program.outcome == "raised" and program.reason.startswith("SyntaxError")


@pytest.mark.parametrize("field, value", [("inactivity_s", 0), ("cpu_s", -1.0), ("memory_bytes", 1.5),
                                          ("wall_s", True)])
def test_bad_limits_name_the_field(field, value):
    with pytest.raises(ValueError, match=f"{field} must be .*got {value!r}"):
        SandboxLimits(**{field: value})


HOST_SCRIPT = textwrap.dedent('''
    import sys
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks import sample_instance
    from bspatial.tasks.episode import EpisodeRun
    from bspatial.evaluation.agents.api import AgentAPI
    from bspatial.evaluation.agents.sandbox import SandboxLimits, run_program

    sim = MujocoBackend()
    run = EpisodeRun(sim, sample_instance("reach_plate", "largest", 0), max_steps=10, load=True)
    print("host ready", flush=True)
    run_program("import time\\ndef run(api):\\n    time.sleep(600)\\n", AgentAPI(run),
                limits=SandboxLimits(inactivity_s=600.0))
''')


def test_the_child_dies_with_its_host(tmp_path):
    host = subprocess.Popen([sys.executable, "-c", HOST_SCRIPT], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")})
    try:
        assert host.stdout.readline().strip() == "host ready"
        deadline = time.monotonic() + 30
        children: set[int] = set()
        while not children and time.monotonic() < deadline:
            children = live_descendants(host.pid)
            time.sleep(0.1)
        assert children, "the host never started its sandbox child"
        time.sleep(0.5)
        host.send_signal(signal.SIGKILL)
        host.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(is_alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(is_alive(pid) for pid in children)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


def test_program_run_fields_are_what_the_report_reads():
    run = ProgramRun("finished", "run(api) returned")
    assert (run.calls, run.robot_commands, run.refused, run.protections) == (0, 0, 0, ())


def test_the_child_never_gets_read_access_to_the_sources(monkeypatch):
    """An editable install may put the repository on sys.path: no Landlock read rule may cover it, while a
    virtual environment inside the repository stays readable."""
    from pathlib import Path

    import bspatial
    from bspatial.evaluation.agents import child
    from bspatial.evaluation.agents.sandbox import _source_roots

    repo = str(Path(bspatial.__file__).resolve().parent.parent)
    monkeypatch.setattr(sys, "path", [repo, str(Path(repo) / "bspatial"), *sys.path])
    paths = child._read_paths(_source_roots())
    assert repo in _source_roots()
    assert not any(repo == p or repo.startswith(p.rstrip("/") + "/") for p in paths)
    assert not any(p.startswith(str(Path(repo) / "bspatial")) for p in paths)
    assert os.path.realpath(sys.prefix) in paths


def test_output_read_back_never_follows_a_swapped_link(sim, instance, tmp_path):
    """The program replaces its stdout.txt with a link to a file only the host may read; the host reports
    what the program printed, not that file."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET host data\n")
    source = textwrap.dedent(f'''
        def run(api):
            print("printed by the program", flush=True)
            for cls in ().__class__.__base__.__subclasses__():
                if cls.__name__ == "_wrap_close":
                    os = cls.__init__.__globals__["sys"].modules["os"]
                    os.remove("stdout.txt")
                    os.symlink({str(secret)!r}, "stdout.txt")
                    assert os.path.islink("stdout.txt")
    ''')
    api = AgentAPI(EpisodeRun(sim, instance, max_steps=10))
    program = run_program(source, api, limits=ROOMY)
    assert program.outcome == "finished", program
    assert "SECRET" not in program.stdout and "printed by the program" in program.stdout
    assert secret.read_text() == "SECRET host data\n"
