"""The host-side agent API on a small reach_plate episode: time, privileged information, motion results."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bspatial.evaluation.agents.api import METHODS, POINT_PROMPT, AgentAPI
from bspatial.evaluation.vlm.backends import load_backend
from bspatial.tasks.episode import EpisodeRun

from .conftest import OraclePointer, mujoco_project

pytestmark = [pytest.mark.sim]


def _api(sim, instance, **kwargs):
    stop = kwargs.pop("stop_when_decided", True)
    return AgentAPI(EpisodeRun(sim, instance, max_steps=kwargs.pop("max_steps", 300), stop_when_decided=stop),
                    **kwargs)


def test_perception_and_state_calls_do_not_advance_time(sim, instance):
    chance = load_backend("chance:0")
    api = _api(sim, instance, pointer=chance, vlm=chance)
    api.wait(0.2)
    time_before, steps_before = sim.time, api.run.steps
    qpos_before = sim.data.qpos.copy()
    for camera in ("head", "left_wrist", "right_wrist"):
        api.call("get_image", [camera])
        api.call("get_depth", [camera])
        api.call("pixel_to_point", [100.0, 150.0, camera])
        api.call("pixel_to_ray", [100.0, 150.0, camera])
        api.call("point_to_pixel", [[1.0, 0.0, 0.9], camera])
        api.call("point_at", ["plate", camera])
    assert api.call("ask_vlm", ["Is a plate on the counter?", ["head", "left_wrist"]]) in ("yes", "no")
    api.call("get_state")
    api.call("log", ["looked around"], {"n": 3})
    assert sim.time == time_before and api.run.steps == steps_before
    assert np.array_equal(sim.data.qpos, qpos_before)
    assert all(e["step_before"] == e["step_after"] == steps_before for e in api.call_log)
    assert api.episode_log == [{"step": steps_before, "msg": "looked around", "n": 3}]


def test_motion_calls_advance_time(sim, instance):
    api = _api(sim, instance)
    before = sim.time
    assert api.call("wait", [0.5])["success"]
    assert api.run.steps == 15 and math.isclose(sim.time - before, 0.5, abs_tol=1e-9)


def test_state_has_no_privileged_information(sim, instance):
    api = _api(sim, instance)
    sim.set_base_pose(0.3, -0.2, 0.4)
    state = api.get_state()
    text = json.dumps(state)
    for name in sim.object_names():
        assert name not in text
    assert set(state) == {"step", "time_s", "eef", "gripper", "holding", "joints", "done"}
    assert state["holding"] == {"left": False, "right": False}
    # end-effector positions are in the base frame: rotate the world position by -yaw about the base by hand
    world = sim.robot_state().eef_pos["left"]
    d = world - (0.3, -0.2, 0.0)
    c, s = math.cos(0.4), math.sin(0.4)
    assert np.allclose(state["eef"]["left"]["position"], (c * d[0] + s * d[1], -s * d[0] + c * d[1], d[2]))
    assert not any(m.startswith("_") for m in METHODS)


def test_unknown_methods_and_bad_arguments_are_refused(sim, instance):
    api = _api(sim, instance)
    with pytest.raises(ValueError, match="method must be one of the agent API's .*'motor'"):
        api.call("motor")
    with pytest.raises(ValueError, match=r"p must be 3 numbers, got 7: 'plate_0'"):
        api.call("approach", ["plate_0"])
    with pytest.raises(ValueError, match=r"speed must be in \(0, 0.5\] m/s, got 3.0"):
        api.call("move_ee_by", [[0, 0, 0.1]], {"speed": 3.0})
    with pytest.raises(ValueError, match="arm must be one of .*got 'middle'"):
        api.call("close_gripper", [], {"arm": "middle"})
    with pytest.raises(ValueError, match=r"seconds must be in \[0, 60.0\], got -1.0"):
        api.call("wait", [-1.0])
    with pytest.raises(RuntimeError, match="point_at: no model was given"):
        api.call("point_at", ["plate", "head"])
    assert api.run.steps == 0


def test_point_at_uses_the_prompt_and_reads_every_point(sim, instance):
    pointer = OraclePointer()
    pointer.points = [(0.25, 0.5), (0.75, 0.125)]
    api = _api(sim, instance, pointer=pointer)
    points = api.point_at("largest plate", "head")
    assert pointer.prompts == [POINT_PROMPT.format(text="largest plate")] == ["Point to every largest plate in the image."]
    assert np.allclose(points, [(56.0, 112.0), (168.0, 28.0)])


def test_reach_out_of_range_stalls(sim, instance):
    api = _api(sim, instance)
    result = api.move_ee_to([1.6, 0.3, 0.9], arm="left")
    assert not result["success"] and result["reason"] == "stalled" and "reach limit" in result["detail"]


def test_driving_into_the_counter_is_blocked(sim, instance):
    api = _api(sim, instance)
    result = api.move_base(2.0, 0.0, 0.0)
    assert not result["success"] and result["reason"] == "blocked"
    x = sim.robot_state().base_pose[0]
    assert 0.0 < x < 1.0                       # it stopped short of the 2 m asked


def test_pressing_into_the_counter_is_pushing_and_backs_off(sim, instance):
    api = _api(sim, instance, stop_when_decided=False)
    assert api.move_base(0.25, 0.0, 0.0)["success"]      # up to the counter, the right hand above its top
    start = np.array(api.get_state()["eef"]["right"]["position"])
    result = api.move_ee_by([0.1, -0.1, -0.5], arm="right", speed=0.1)
    assert not result["success"] and result["reason"] == "pushing", result
    end = np.array(api.get_state()["eef"]["right"]["position"])
    assert end[2] > start[2] - 0.5 + 0.1     # it stopped on the countertop, far above the goal inside it


def test_arm_auto_follows_the_target_side(sim, instance):
    api = _api(sim, instance)
    assert api._arm("auto", 0.1) == "left" and api._arm("auto", -0.1) == "right"
    assert api._arm("auto") == "right"   # no target point: the arm of the previous hand call


def test_turning_in_place(sim, instance):
    api = _api(sim, instance)
    api.move_base(-0.2, 0.0, 0.0)
    result = api.move_base(0.0, 0.0, math.pi / 2)
    assert result["success"], result
    assert abs(math.remainder(sim.robot_state().base_pose[2] - math.pi / 2, math.tau)) < 0.03


def test_approach_faces_the_point_and_returns_it_in_the_new_frame(sim, instance):
    api = _api(sim, instance)
    box = sim.object_bbox(instance.target)
    top = np.array([box.center[0], box.center[1], box.aabb_max[2]])
    u, v, _, _, _ = mujoco_project(sim, "head", top, 224, 224)
    seen = api.pixel_to_point(u, v, "head")
    # a standoff 5 cm longer than the default: the target plate lies at the back of the counter, where the
    # default stop is within a few cm of the base touching the counter (then approach says "blocked")
    result = api.approach(seen, standoff=0.6)
    assert result["success"], result
    # Appendix 16.5: the point ends standoff ahead, offset toward the reaching arm (left: y > 0)
    assert np.allclose(result["point"][:2], (0.6, 0.22), atol=0.03)


def test_any_json_call_is_answered_or_refused(sim, instance):
    """What the pipe can carry (any JSON arguments, any method name) either gets an answer or one of the
    refusals the sandbox turns into an error for the program; nothing else escapes to the host."""
    scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True) | st.text(max_size=8)
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)
    chance = load_backend("chance:0")
    api = _api(sim, instance, pointer=chance, vlm=chance, max_steps=60)

    @settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(method=st.sampled_from(METHODS + ("motor", "__init__", "_frame")), args=st.lists(values, max_size=4),
           kwargs=st.dictionaries(st.sampled_from(["arm", "speed", "use_torso", "standoff", "camera", "x", "msg"]),
                                  values, max_size=3))
    def check(method, args, kwargs):
        try:
            api.call(method, args, kwargs)
        except (ValueError, TypeError, RuntimeError):
            pass

    check()
