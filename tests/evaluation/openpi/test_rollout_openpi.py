"""`bspatial rollout --policy openpi:ws://...`: openpi-protocol servers drive the simulator, result files are
written and scored; bad specs and unreachable servers are refused before any episode.

Two servers: our `bspatial serve-policy` (subprocess) and one made of openpi-client's own msgpack_numpy and
websockets (conftest.OpenpiPartsServer; openpi-client ships no server, openpi's own server is built exactly
so), which also records what our client sends.
"""

from __future__ import annotations

import json
import socket

import numpy as np
import pytest
from typer.testing import CliRunner

from bspatial.cli import app

pytestmark = [pytest.mark.slow, pytest.mark.sim]

TASK = "reach_plate"
MAX_STEPS = 12


def _rollout(policy: str, out, *extra: str):
    return CliRunner().invoke(app, ["rollout", "--policy", policy, "--split", "held_out", "--tasks", TASK,
                                    "--n-episodes", "1", "--max-steps", str(MAX_STEPS), "--out", str(out),
                                    "--no-progress", *extra])


def _records(out) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "episodes").glob("*.json"))]


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").replace("╭", " ").replace("╰", " ").split())


def test_serve_policy_drives_a_rollout(served, tmp_path):
    out = tmp_path / "run"
    result = _rollout(f"openpi:{served.url}", out)
    assert result.exit_code == 0, result.output
    [record] = _records(out)
    assert record["policy"] == f"openpi:{served.url}" and record["task"] == TASK
    assert record["status"] == "timeout" and record["steps"] == MAX_STEPS   # ran, nothing crashed
    assert record["outcome"] in ("correct", "wrong", "none") and isinstance(record["soft_credit"], bool)
    assert len(record["trace"]["base_poses"]) == MAX_STEPS   # the trace the rules scored
    table = (out / "tables" / "table4.md").read_text()
    assert "| 1 | 0 |" in table   # Held-out n = 1, errors = 0: the episode was scored


def test_the_same_checkpoint_and_episode_play_the_same_in_process_and_over_the_server(served, tiny_checkpoint,
                                                                                       tmp_path):
    """The server was started with --seed 7; the rollout's --seed 3 still decides the noise: our client sends each
    episode's noise seed (episode_noise_seed of --seed and the scene seed), which the server seeds the connection
    with. Two episodes, 40 steps each (a chunk and a replan of each plan's noise): byte-equal traces."""
    args = ["--n-episodes", "2", "--max-steps", "40", "--seed", "3"]
    served_run, direct_run = tmp_path / "served", tmp_path / "direct"
    for policy, out in ((f"openpi:{served.url}", served_run), (str(tiny_checkpoint), direct_run)):
        result = CliRunner().invoke(app, ["rollout", "--policy", policy, "--split", "held_out", "--tasks", TASK,
                                          "--out", str(out), "--no-progress", *args])
        assert result.exit_code == 0, result.output
    over_wire, in_process = _records(served_run), _records(direct_run)
    assert len(over_wire) == len(in_process) == 2
    for a, b in zip(over_wire, in_process):
        assert a["protocol"] == b["protocol"] == "chunk_controller"
        assert json.dumps(a["trace"]) == json.dumps(b["trace"]), a["index"]
        assert (a["outcome"], a["steps"]) == (b["outcome"], b["steps"])
    # Not a trace that ignores the policy: the two episodes moved the arms differently.
    assert over_wire[0]["trace"]["eef_positions"] != over_wire[1]["trace"]["eef_positions"]


def test_an_openpi_server_of_openpi_client_parts_drives_a_rollout(parts_server, hold_policy, tmp_path):
    horizon = 5   # below the 10-step replanning threshold: a new chunk each time one runs out
    server = parts_server(hold_policy(horizon))   # openpi's default metadata: an empty map
    out = tmp_path / "run"
    result = _rollout(f"openpi:{server.url}", out)
    assert result.exit_code == 0, result.output
    [record] = _records(out)
    assert record["status"] == "timeout" and record["steps"] == MAX_STEPS

    # One connection for the check before the run, one for the episode (openpi has no reset message).
    assert server.connections == 2
    assert len(server.observations) == -(-MAX_STEPS // horizon)   # steps 0, 5, 10
    expected_keys = {"prompt", "observation/state", "observation/egocentric_camera", "observation/wrist_image_left",
                     "observation/wrist_image_right", "bspatial/noise_seed"}
    from bspatial.evaluation.rollout.plan import episode_noise_seed

    for obs in server.observations:
        assert set(obs) == expected_keys
        assert obs["prompt"] == record["instruction"]
        assert obs["bspatial/noise_seed"] == episode_noise_seed(0, record["seed"])   # --seed 0, the scene seed
        assert obs["observation/state"].shape == (84,) and obs["observation/state"].dtype == np.float32
        for key in expected_keys - {"prompt", "observation/state", "bspatial/noise_seed"}:
            assert obs[key].shape == (224, 224, 3) and obs[key].dtype == np.uint8
            assert obs[key].std() > 0   # a rendered scene, not a blank frame
    # What the server saw at step 0 is the episode's scene right after reset, camera by camera, and its state.
    state, frames = _scene_at_reset()
    step0 = server.observations[0]
    np.testing.assert_array_equal(step0["observation/state"], state.astype(np.float32))
    for cam, key in (("head", "observation/egocentric_camera"), ("left_wrist", "observation/wrist_image_left"),
                     ("right_wrist", "observation/wrist_image_right")):
        np.testing.assert_array_equal(step0[key], frames[cam], err_msg=key)
    # The state is the documented 84-dim layout: base pose x, y, yaw at 0:3, (cos, sin) of the yaw at 3:5, the left
    # arm's 7 joint positions at 16:23 followed by their sines (23:30) and cosines (30:37).
    for obs in server.observations:
        state = obs["observation/state"]
        np.testing.assert_allclose(state[3:5], [np.cos(state[2]), np.sin(state[2])], atol=1e-5)
        np.testing.assert_allclose(state[23:30], np.sin(state[16:23]), atol=1e-5)
        np.testing.assert_allclose(state[30:37], np.cos(state[16:23]), atol=1e-5)


def _scene_at_reset():
    """The proprio vector and camera frames of the run's first episode right after it is loaded, rebuilt here."""
    from bspatial.evaluation.rollout.episodes import load_instance
    from bspatial.evaluation.rollout.plan import plan_episodes
    from bspatial.sim.mujoco_backend import MujocoBackend

    [episode] = plan_episodes("held_out", [TASK], 1)
    backend = MujocoBackend()
    try:
        load_instance(backend, episode)
        return backend.robot_state().proprio, {cam: backend.render(cam).rgb for cam in ("head", "left_wrist", "right_wrist")}
    finally:
        backend.close()


def test_a_chunk_of_the_wrong_width_fails_the_run_with_its_shape(parts_server, hold_policy, tmp_path):
    server = parts_server(hold_policy(50, action_dim=32))   # an openpi model's padded 32-dim actions
    out = tmp_path / "run"
    result = _rollout(f"openpi:{server.url}", out)
    assert result.exit_code == 1
    assert "'actions' has shape (50, 32); expected (horizon, 23)" in _flat(result.output)
    [record] = _records(out)
    assert record["status"] == "error"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def not_websocket():
    """A TCP server that accepts and hangs up: something listens, nothing speaks websocket."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield f"ws://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


@pytest.mark.parametrize("target, message", [
    ("http://127.0.0.1:8000", "must be a websocket URL ws://host:port or wss://host:port, got scheme 'http'"),
    ("", "got scheme None"),
    ("ws://", "the URL has no host"),
    ("ws://127.0.0.1:port", "the port 'port' is not a port number"),
    ("ws://127.0.0.1:70000", "the port '70000' is not a port number"),
    ("ws://127.0.0.1:{free}", "is unreachable: ConnectionRefusedError"),
    ("ws://no-such-host.invalid:8000", "is unreachable"),
])
def test_bad_specs_and_unreachable_servers_are_refused_before_any_episode(tmp_path, target, message):
    out = tmp_path / "run"
    result = _rollout(f"openpi:{target.format(free=_free_port())}", out)
    assert result.exit_code == 2, result.output
    assert message in _flat(result.output)
    assert not out.exists()   # refused before the run folder, let alone an episode


def test_a_server_that_is_not_openpi_is_refused_before_any_episode(tmp_path, not_websocket, parts_server,
                                                                   hold_policy):
    result = _rollout(f"openpi:{not_websocket}", tmp_path / "a")
    assert result.exit_code == 2 and "refused the websocket handshake" in _flat(result.output)
    talks_text = parts_server(hold_policy(5), first_message="hello")   # a websocket, but no msgpack metadata
    result = _rollout(f"openpi:{talks_text.url}", tmp_path / "b")
    assert result.exit_code == 2 and "its first message is not a msgpack metadata map" in _flat(result.output)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists() and talks_text.observations == []
