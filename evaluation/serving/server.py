"""``bspatial serve-policy <checkpoint>``: a BSpatialVLA checkpoint behind openpi's websocket policy protocol.

Any openpi client (``openpi_client.websocket_client_policy.WebsocketClientPolicy``, a robot's runtime,
``bspatial rollout --policy openpi:ws://...``) connects, reads the metadata (:func:`~bspatial.evaluation.serving.
protocol.server_metadata`: the observation keys this checkpoint needs, the action layout, the horizon) and sends
observation maps (:mod:`bspatial.evaluation.serving.protocol`); each reply carries ``"actions"`` ``(32, 23)`` in
robot units and ``"server_timing"``.

The checkpoint runs through the same :class:`~bspatial.evaluation.rollout.policies.CheckpointPredictor` as a
rollout (same processor, same unnormalisation), so a served chunk equals the chunk ``bspatial rollout`` computes
from the same observation and seed. Noise: each connection gets its own generator (a connection is an episode:
the protocol has no reset message), seeded on the connection's first request with the episode's noise seed when the
client sends one (:data:`~bspatial.evaluation.serving.protocol.NOISE_SEED_KEY`: ``bspatial rollout --policy
openpi:...`` does, so a served episode plays as the in-process one), else with ``--seed``; a client's n-th request
draws the n-th noise sample of that seed whatever other clients do. Requests are served one at a time (one model); the
model runs in a worker thread so the event loop keeps answering websocket pings during a long inference.

Example:
    bspatial serve-policy runs/policy/pretrained_model --port 8000
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bspatial.catalog.schema import STATE_DIM
from bspatial.evaluation.serving.protocol import (ACTIONS_KEY, CAMERA_KEYS, HEALTH_PATH, INTERNAL_ERROR,
                                                  IR_IMAGE_KEYS, NOISE_SEED_KEY, PROMPT_KEY, STATE_KEY, TIMING_KEY,
                                                  noise_seed_of, pack, server_metadata, unpack)

logger = logging.getLogger(__name__)

DEFAULT_PORT = 8000
"""openpi's ``scripts/serve_policy.py`` default port."""
DEFAULT_HOST = "127.0.0.1"
"""Loopback by default (openpi binds 0.0.0.0): exposing a model on every interface is the user's choice
(``--host 0.0.0.0``), not a side effect of starting it."""


@dataclass(frozen=True)
class _Frame:
    rgb: np.ndarray


@dataclass(frozen=True)
class _State:
    proprio: np.ndarray


@dataclass(frozen=True)
class WireObservation:
    """An observation received over the wire, in the shape ``CheckpointPredictor.prepare`` reads a simulator
    :class:`~bspatial.tasks.episode.Observation` (instruction, ``state.proprio``, ``images[cam].rgb``)."""

    instruction: str
    state: _State
    images: dict[str, _Frame]
    extra_images: dict[str, np.ndarray] = field(default_factory=dict)   # "ir" / "anchor" as sent


class _SentIR:
    """The IR images the client sent, in the role of the rollout's IR conditioner (``images(head) -> slots``)."""

    def __init__(self, images: dict[str, np.ndarray]) -> None:
        self._images = images

    def images(self, head) -> dict[str, np.ndarray]:
        return dict(self._images)


def _image(observation: dict[str, Any], key: str) -> np.ndarray:
    """``observation[key]`` as a writable ``(H, W, 3)`` uint8 array; ValueError naming the key otherwise."""
    if key not in observation:
        raise ValueError(f"observation lacks {key!r}")
    image = np.asarray(observation[key])
    if image.dtype != np.uint8:
        # No silent rescaling: float frames in [0, 1] and in [0, 255] look alike.
        raise ValueError(f"observation {key!r} has dtype {image.dtype}; expected uint8 RGB")
    if image.ndim == 3 and image.shape[-1] == 3:
        return np.array(image)   # a copy: unpacked arrays are read-only views of the message
    if image.ndim == 3 and image.shape[0] == 3:
        return np.ascontiguousarray(image.transpose(1, 2, 0))
    raise ValueError(f"observation {key!r} has shape {image.shape}; expected (H, W, 3) or (3, H, W)")


class CheckpointPolicy:
    """A BSpatialVLA checkpoint as an openpi policy: ``infer(observation map, generator) -> {"actions": ...}``.

    Args:
        checkpoint: a BSpatialVLA checkpoint folder (model + processor).
        seed: the seed every connection's noise generator starts from.

    Attributes:
        metadata: what the server sends on connect.
    """

    def __init__(self, checkpoint: str | Path, seed: int = 0) -> None:
        import torch

        from bspatial.evaluation.rollout.policies import CheckpointPredictor

        self.torch = torch
        self.predictor = CheckpointPredictor(str(checkpoint))
        self.seed = int(seed)
        self.needs = ([IR_IMAGE_KEYS["ir"]] if self.predictor.ir_mode != "none" else []) + \
                     ([IR_IMAGE_KEYS["anchor"]] if self.predictor.anchor else [])
        self.metadata = server_metadata(checkpoint=str(Path(checkpoint).resolve()), cameras=self.predictor.cameras,
                                        horizon=self.predictor.horizon, action_dim=self.predictor.action_dim,
                                        ir_mode=self.predictor.ir_mode, first_frame_anchor=self.predictor.anchor,
                                        seed=self.seed, ir_dot_radius=self.predictor.ir_dot_radius)
        self._lock = threading.Lock()

    def new_generator(self, seed: int | None = None):
        """A connection's noise generator, seeded with ``seed`` (the episode's) or else :attr:`seed`."""
        generator = self.torch.Generator()
        generator.manual_seed(self.seed if seed is None else int(seed))
        return generator

    def parse(self, observation: Any) -> WireObservation:
        """The checked observation; ValueError naming the key and what is wrong with it."""
        if not isinstance(observation, dict):
            raise ValueError(f"an observation must be a map, got {type(observation).__name__}")
        instruction = observation.get(PROMPT_KEY)
        if not isinstance(instruction, str):
            raise ValueError(f"observation {PROMPT_KEY!r} must be the instruction string, got "
                             f"{'nothing' if instruction is None else type(instruction).__name__}")
        if STATE_KEY not in observation:
            raise ValueError(f"observation lacks {STATE_KEY!r}")
        state = np.array(observation[STATE_KEY], dtype=np.float32)
        if state.shape != (STATE_DIM,):
            raise ValueError(f"observation {STATE_KEY!r} has shape {state.shape}; expected ({STATE_DIM},) "
                             "(bspatial.catalog.schema.PROPRIO_LAYOUT)")
        if not np.all(np.isfinite(state)):
            raise ValueError(f"observation {STATE_KEY!r} has non-finite values at {np.flatnonzero(~np.isfinite(state)).tolist()}")
        images = {cam: _Frame(_image(observation, CAMERA_KEYS[cam])) for cam in self.predictor.cameras}
        extra = {name: _image(observation, key) for name, key in IR_IMAGE_KEYS.items() if key in self.needs}
        return WireObservation(instruction, _State(state), images, extra)

    def infer(self, observation: Any, generator) -> dict[str, Any]:
        """``{"actions": (horizon, action_dim) float32}`` for one observation map, drawing noise from ``generator``."""
        wire = self.parse(observation)
        ir = _SentIR(wire.extra_images) if self.predictor.ir_mode != "none" else None

        def render(camera: str):   # every camera was checked present by parse()
            raise ValueError(f"observation lacks {CAMERA_KEYS[camera]!r}")

        with self._lock:
            # The predictor holds one generator; the connection's is swapped in under the lock, so concurrent
            # clients each keep their own noise stream.
            self.predictor.generator = generator
            chunk = self.predictor(wire, render, ir)
        return {ACTIONS_KEY: np.asarray(chunk, dtype=np.float32)}


class PolicyServer:
    """openpi's websocket protocol over a policy with ``metadata``, ``new_generator()`` and ``infer(obs, gen)``."""

    def __init__(self, policy: CheckpointPolicy, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
        self.policy, self.host, self.port = policy, host, int(port)

    async def _handler(self, websocket) -> None:
        import websockets

        peer = websocket.remote_address
        logger.info("connection from %s opened", peer)
        generator = self.policy.new_generator()
        noise_seed, requests = None, 0   # the episode's noise seed, fixed by the connection's first request
        previous_total_ms = None
        try:
            await websocket.send(pack(self.policy.metadata))
            while True:
                message = await websocket.recv()
                start = time.monotonic()
                try:
                    observation = self._decode(message)
                    sent = noise_seed_of(observation) if isinstance(observation, dict) else None
                    if requests == 0 and sent is not None:
                        noise_seed, generator = sent, self.policy.new_generator(sent)
                    elif sent != noise_seed:
                        raise ValueError(f"{NOISE_SEED_KEY!r} changed within a connection ({noise_seed} -> {sent}); "
                                         "a connection is one episode with one noise seed")
                    requests += 1
                    reply = await asyncio.to_thread(self.policy.infer, observation, generator)
                except Exception as error:  # answered, as openpi's server does: a text frame, then close 1011
                    text = (f"bad observation: {error}" if isinstance(error, ValueError)
                            else traceback.format_exc())
                    logger.warning("request from %s failed: %s", peer, text.strip().splitlines()[-1])
                    await websocket.send(text)
                    await websocket.close(code=INTERNAL_ERROR, reason="request failed; the reason is the previous frame")
                    return
                timing = {"infer_ms": (time.monotonic() - start) * 1000.0}
                if previous_total_ms is not None:   # the total of a request includes its send: known only after it
                    timing["prev_total_ms"] = previous_total_ms
                reply[TIMING_KEY] = timing
                await websocket.send(pack(reply))
                previous_total_ms = (time.monotonic() - start) * 1000.0
        except websockets.ConnectionClosed:
            logger.info("connection from %s closed", peer)

    @staticmethod
    def _decode(message) -> Any:
        if isinstance(message, str):
            raise ValueError("expected a binary msgpack observation, got a text frame")
        try:
            return unpack(message)
        except Exception as error:   # msgpack's several exception types: all mean "not a msgpack map"
            raise ValueError(f"the message is not msgpack ({type(error).__name__}: {error})") from None

    @staticmethod
    def _health(connection, request):
        import http

        if request.path == HEALTH_PATH:
            return connection.respond(http.HTTPStatus.OK, "OK\n")
        return None

    async def serve(self, ready: Callable[[str], None] | None = None, stop: asyncio.Event | None = None) -> None:
        """Serve until ``stop`` is set (forever without one); ``ready(url)`` is called once the socket is bound."""
        from websockets.asyncio.server import serve

        # No compression and no size limit: chunks and images are incompressible bytes (openpi's settings).
        async with serve(self._handler, self.host, self.port, compression=None, max_size=None,
                         process_request=self._health) as server:
            port = server.sockets[0].getsockname()[1]   # the bound port (--port 0 picks a free one)
            url = f"ws://{self.host}:{port}"
            if ready is not None:
                ready(url)
            if stop is None:
                await server.serve_forever()
            else:
                await stop.wait()


def serve_policy(checkpoint: str | Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, seed: int = 0,
                 ready: Callable[[str], None] | None = None) -> None:
    """Load ``checkpoint`` and serve it until interrupted."""
    policy = CheckpointPolicy(checkpoint, seed)
    asyncio.run(PolicyServer(policy, host, port).serve(ready))
