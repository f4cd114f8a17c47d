"""Fixtures of the openpi tests: a tiny checkpoint, `bspatial serve-policy` running on it in a subprocess, and an
openpi-protocol server made of openpi-client's own parts (its msgpack_numpy) and the real websockets library.

openpi-client pins numpy<2 and is installed without its dependencies (the Makefile's install step says why);
the tests import it for real and skip nothing: a missing package fails them.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

SERVER_SEED = 7
SERVER_START_TIMEOUT_S = 120.0   # a cold transformers import on a busy 2-core machine


def save_tiny_checkpoint(path: Path, **overrides) -> Path:
    """A tiny random BSpatialVLA + processor at ``path`` whose state width is the simulator's proprio."""
    import torch

    from bspatial.catalog.schema import ACTION_DIM, STATE_DIM
    from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
    from bspatial.modeling.tiny_backbone import build_tiny_processor, tiny_policy_config

    config = tiny_policy_config(state_dim=STATE_DIM, **overrides)
    torch.manual_seed(0)
    model = BSpatialVLAForActionPrediction(config)
    _open_gates(model)
    qwen = build_tiny_processor()
    # Wide action quantiles, so the unnormalised chunks are not all near zero.
    stats = {"observation.state": {"q01": [-3.0] * STATE_DIM, "q99": [3.0] * STATE_DIM},
             "action": {"q01": [-1.5] * ACTION_DIM, "q99": [1.5] * ACTION_DIM}}
    processor = BSpatialVLAProcessor.from_model_config(config, qwen.image_processor, qwen.tokenizer, stats)
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


def _open_gates(model, seed: int = 1) -> None:
    """As initialised, the closed adaLN-Zero gates keep every observation out of the actions (tests/modeling/
    test_golden.py shows it), so "the served chunk equals the direct one" would hold even for a server that
    ignored the observation. With the gates open, images, state and text all move the actions."""
    from bspatial.modeling.testing_utils import open_expert_gates

    open_expert_gates(model, seed)


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    return save_tiny_checkpoint(tmp_path_factory.mktemp("openpi-ckpt"))


@pytest.fixture(scope="session")
def tiny_dot_anchor_checkpoint(tmp_path_factory) -> Path:
    return save_tiny_checkpoint(tmp_path_factory.mktemp("openpi-ckpt-dot"), ir_mode="dot", first_frame_anchor=True)


class ServedPolicy:
    """``python -m bspatial.cli serve-policy <ckpt> --port 0`` in a subprocess; ``url`` once it is listening."""

    def __init__(self, checkpoint: Path, seed: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bspatial.cli", "serve-policy", str(checkpoint), "--port", "0", "--seed", str(seed)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.url: str | None = None
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()   # keeps the pipe drained all along
        if not self._ready.wait(SERVER_START_TIMEOUT_S) or self.url is None:
            self.close()
            raise AssertionError("serve-policy did not start:\n" + "".join(self.lines))

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line)
            found = re.search(r"serving .* on (ws://\S+)", line)
            if found:
                self.url = found.group(1)
                self._ready.set()
        self._ready.set()   # the process ended

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture(scope="session")
def served(tiny_checkpoint):
    server = ServedPolicy(tiny_checkpoint, SERVER_SEED)
    yield server
    server.close()


class OpenpiPartsServer:
    """An openpi-protocol server made of openpi-client's ``msgpack_numpy`` and ``websockets``' sync server, as
    openpi's ``WebsocketPolicyServer`` is built (metadata on connect, one reply per observation), independent of
    our server code. ``policy(obs) -> reply``; every observation and connection is recorded."""

    def __init__(self, policy: Callable[[dict], dict], metadata: dict | None = None, first_message: Any = None) -> None:
        from openpi_client import msgpack_numpy
        from websockets.sync.server import serve

        self.policy, self.metadata, self.first_message = policy, metadata or {}, first_message
        self.packer, self.unpackb = msgpack_numpy.Packer(), msgpack_numpy.unpackb
        self.observations: list[dict] = []
        self.connections = 0
        self.server = serve(self._handler, "127.0.0.1", 0, compression=None, max_size=None)
        self.url = f"ws://127.0.0.1:{self.server.socket.getsockname()[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _handler(self, websocket) -> None:
        import websockets

        self.connections += 1
        websocket.send(self.first_message if self.first_message is not None else self.packer.pack(self.metadata))
        while True:
            try:
                obs = self.unpackb(websocket.recv())
            except websockets.ConnectionClosed:
                return
            self.observations.append(obs)
            websocket.send(self.packer.pack(self.policy(obs)))

    def close(self) -> None:
        self.server.shutdown()


def hold_chunk(horizon: int, action_dim: int = 23) -> Callable[[dict], dict]:
    """A policy that commands the joint positions it reads in the state (our documented layout), grippers open."""
    from bspatial.catalog.schema import ACTION_SLICES, PROPRIO_SLICES

    def policy(obs: dict) -> dict:
        state = np.asarray(obs["observation/state"])
        action = np.zeros(action_dim, dtype=np.float32)
        for part in ("torso", "left_arm", "right_arm"):
            action[ACTION_SLICES[part]] = state[PROPRIO_SLICES[f"{part}_qpos"]]
        action[ACTION_SLICES["left_gripper"]] = action[ACTION_SLICES["right_gripper"]] = 1.0
        return {"actions": np.tile(action, (horizon, 1)), "policy_timing": {"infer_ms": 0.1}}

    return policy


@pytest.fixture
def parts_server():
    """``parts_server(policy, metadata=None, first_message=None)`` -> a running :class:`OpenpiPartsServer`."""
    made: list[OpenpiPartsServer] = []

    def make(policy: Callable[[dict], dict], **kwargs) -> OpenpiPartsServer:
        made.append(OpenpiPartsServer(policy, **kwargs))
        return made[-1]

    yield make
    for server in made:
        server.close()


@pytest.fixture
def hold_policy():
    """:func:`hold_chunk` (test modules cannot import this conftest under --import-mode=importlib)."""
    return hold_chunk
