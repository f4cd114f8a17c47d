"""`bspatial serve-policy` as openpi's own client sees it: metadata on connect, `infer` -> the checkpoint's chunk.

The reference is the same checkpoint run in this process through CheckpointPredictor (what `bspatial rollout`
uses) on the same observation and seed; openpi_client.websocket_client_policy.WebsocketClientPolicy is the real
package, talking to the real command in a subprocess.
"""

from __future__ import annotations

import urllib.request

import numpy as np
import pytest

# openpi_client's own client connects outside a `with` block, which websockets 17 deprecates: its warning, not ours.
pytestmark = [pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager:DeprecationWarning"), pytest.mark.slow, pytest.mark.subprocess]

SEED = 7   # conftest.SERVER_SEED: the seed the served subprocess was started with
# DESIGN §4, the R1Pro layout, written out here rather than read from the code under test.
R1PRO_LAYOUT = {"base": [0, 3], "torso": [3, 7], "left_arm": [7, 14], "left_gripper": [14, 15],
                "right_arm": [15, 22], "right_gripper": [22, 23]}
CAMERA_KEYS = {"head": "observation/egocentric_camera", "left_wrist": "observation/wrist_image_left",
               "right_wrist": "observation/wrist_image_right"}


def _wire_observation(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    obs = {"prompt": "Reach the second largest plate from the countertop.",
           "observation/state": rng.uniform(-1, 1, 84).astype(np.float32)}
    for key in CAMERA_KEYS.values():
        obs[key] = rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)
    return obs


def _sim_observation(wire: dict):
    """The same observation as the simulator hands it to a checkpoint policy (real Observation / CameraFrame)."""
    from bspatial.sim.backend import CameraFrame, RobotState
    from bspatial.tasks.episode import Observation

    zeros = np.zeros(3)
    state = RobotState(base_pose=zeros, base_velocity=zeros, torso_qpos=np.zeros(4), left_arm_qpos=np.zeros(7),
                       right_arm_qpos=np.zeros(7), gripper={"left": 1.0, "right": 1.0}, eef_pos={}, eef_quat={},
                       grasped={"left": None, "right": None}, proprio=np.asarray(wire["observation/state"]))
    frames = {cam: CameraFrame(cam, wire[key], np.zeros((224, 224), np.float32), np.zeros((224, 224), np.int32), {},
                               np.eye(3), np.eye(4)) for cam, key in CAMERA_KEYS.items()}
    return Observation(step=0, instruction=wire["prompt"], state=state, images=frames)


@pytest.fixture(scope="module")
def direct(tiny_checkpoint):
    from bspatial.evaluation.rollout.policies import CheckpointPredictor

    return CheckpointPredictor(str(tiny_checkpoint))


def _no_render(camera):
    raise AssertionError(f"every camera is in the observation; {camera} was rendered")


def test_openpi_client_reads_the_metadata(served):
    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    client = WebsocketClientPolicy(host=served.url)
    meta = client.get_server_metadata()
    assert meta["action_dim"] == 23 and meta["action_horizon"] == 32 and meta["state_dim"] == 84
    assert meta["action_layout"] == R1PRO_LAYOUT
    assert meta["observation_keys"] == ["prompt", "observation/state", *CAMERA_KEYS.values()]
    assert meta["ir_mode"] == "none" and meta["seed"] == SEED and meta["control_hz"] == 30
    with urllib.request.urlopen(served.url.replace("ws://", "http://") + "/healthz", timeout=10) as response:
        assert response.status == 200 and response.read() == b"OK\n"


def test_served_actions_equal_the_checkpoint_run_directly(served, direct):
    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    wire = _wire_observation()
    client = WebsocketClientPolicy(host=served.url)
    first, second = client.infer(wire), client.infer(wire)
    assert first["actions"].shape == (32, 23) and first["actions"].dtype == np.float32
    assert set(first["server_timing"]) == {"infer_ms"} and set(second["server_timing"]) == {"infer_ms", "prev_total_ms"}

    observation = _sim_observation(wire)
    direct.reseed(SEED)
    expected_first = direct(observation, _no_render)
    expected_second = direct(observation, _no_render)   # the generator moves on within an episode
    np.testing.assert_array_equal(first["actions"], expected_first.astype(np.float32))
    np.testing.assert_array_equal(second["actions"], expected_second.astype(np.float32))
    assert not np.array_equal(first["actions"], second["actions"])   # the noise really differs per draw

    # A new connection is a new episode (the protocol has no reset message): the seed starts over.
    again = WebsocketClientPolicy(host=served.url).infer(wire)
    np.testing.assert_array_equal(again["actions"], first["actions"])
    # And the observation matters: another image gives another chunk.
    other = dict(wire, **{CAMERA_KEYS["head"]: np.zeros((224, 224, 3), np.uint8)})
    assert not np.array_equal(WebsocketClientPolicy(host=served.url).infer(other)["actions"], first["actions"])


def test_channel_first_images_are_the_same_observation(served):
    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    wire = _wire_observation(1)
    chw = {k: (v.transpose(2, 0, 1) if k in CAMERA_KEYS.values() else v) for k, v in wire.items()}
    hwc_actions = WebsocketClientPolicy(host=served.url).infer(wire)["actions"]
    np.testing.assert_array_equal(WebsocketClientPolicy(host=served.url).infer(chw)["actions"], hwc_actions)


@pytest.mark.parametrize("change, message", [
    (lambda o: o.pop("observation/wrist_image_left"), "observation lacks 'observation/wrist_image_left'"),
    (lambda o: o.update({"observation/state": np.zeros(23, np.float32)}), "'observation/state' has shape (23,)"),
    (lambda o: o.update({"observation/egocentric_camera": np.zeros((224, 224, 3), np.float32)}),
     "'observation/egocentric_camera' has dtype float32"),
    (lambda o: o.pop("prompt"), "'prompt' must be the instruction string"),
])
def test_a_bad_observation_is_answered_with_what_is_wrong(served, change, message):
    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    wire = _wire_observation()
    change(wire)
    with pytest.raises(RuntimeError, match="Error in inference server") as error:
        WebsocketClientPolicy(host=served.url).infer(wire)
    assert message in str(error.value)
    # The server goes on serving the next client.
    assert WebsocketClientPolicy(host=served.url).infer(_wire_observation())["actions"].shape == (32, 23)


def test_an_ir_checkpoint_needs_and_uses_the_ir_images(tiny_dot_anchor_checkpoint):
    """In process (no second server): the served policy of a dot-IR + first-frame-anchor checkpoint."""
    from bspatial.evaluation.rollout.policies import CheckpointPredictor
    from bspatial.evaluation.serving.server import CheckpointPolicy

    policy = CheckpointPolicy(tiny_dot_anchor_checkpoint, seed=3)
    assert policy.metadata["observation_keys"][-2:] == ["observation/ir_image", "observation/anchor_image"]
    assert policy.metadata["ir_mode"] == "dot" and policy.metadata["first_frame_anchor"] is True
    wire = _wire_observation()
    with pytest.raises(ValueError, match="observation lacks 'observation/ir_image'"):
        policy.infer(wire, policy.new_generator())

    rng = np.random.default_rng(5)
    ir, anchor = (rng.integers(0, 256, (224, 224, 3), dtype=np.uint8) for _ in range(2))
    served = policy.infer({**wire, "observation/ir_image": ir, "observation/anchor_image": anchor},
                          policy.new_generator())["actions"]

    class SentImages:   # the IR images as the rollout's IR conditioner would hand them over
        def images(self, head):
            return {"ir": ir, "anchor": anchor}

    direct = CheckpointPredictor(str(tiny_dot_anchor_checkpoint))
    direct.reseed(3)
    np.testing.assert_array_equal(served, direct(_sim_observation(wire), _no_render, SentImages()).astype(np.float32))
    blank = policy.infer({**wire, "observation/ir_image": np.zeros_like(ir), "observation/anchor_image": anchor},
                         policy.new_generator())["actions"]
    assert not np.array_equal(blank, served)   # the IR image reaches the model


@pytest.mark.parametrize("spec, message", [("no/such/folder", "is not a behavior-spatial checkpoint (no such folder)"),
                                           ("scripted", "serve-policy serves a BSpatialVLA checkpoint folder")])
def test_serve_policy_refuses_what_is_not_a_checkpoint(spec, message):
    from typer.testing import CliRunner

    from bspatial.cli import app

    result = CliRunner().invoke(app, ["serve-policy", spec, "--port", "0"])
    assert result.exit_code == 2 and message in " ".join(result.output.split())


def test_serve_policy_names_a_port_that_is_taken(tiny_checkpoint):
    import socket

    from typer.testing import CliRunner

    from bspatial.cli import app

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve-policy", str(tiny_checkpoint), "--port", str(port)])
    assert result.exit_code == 2 and f"cannot serve on 127.0.0.1:{port}" in result.output
