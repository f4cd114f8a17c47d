"""``bspatial rollout --policy openpi:ws://host:port``: any openpi-protocol policy server drives the simulator.

The server can be openpi's own (``scripts/serve_policy.py``), a BEHAVIOR-1K challenge server, or ours
(``bspatial serve-policy <checkpoint>``). The protocol, the observation keys we send and the 23-dim action layout
we expect back are documented in :mod:`bspatial.evaluation.serving.protocol`; in short, every planned step sends

* ``prompt``: the instruction; ``observation/state``: the 84-dim proprioception (``PROPRIO_LAYOUT``);
* ``observation/egocentric_camera``, ``observation/wrist_image_left``, ``observation/wrist_image_right``:
  ``(H, W, 3)`` uint8 frames of the head and wrist cameras,

and reads back ``actions`` of shape ``(horizon, 23)`` in robot units (base velocities 0:3, torso 3:7, left arm
7:14, left gripper 14, right arm 15:22, right gripper 22). The chunks go through the same Appendix 16.3
controller as our checkpoints (:class:`~bspatial.evaluation.rollout.controller.ChunkedPolicy`: replanning,
ensembling, gripper rule, ``--latency-steps`` / ``--threaded``). The server's horizon is read from its first
chunk (openpi metadata does not carry it reliably), and a horizon below the controller's 10-step replanning
threshold replans when the chunk runs out.

Each episode opens its own connection and closes it at the end: openpi's protocol has no reset message, so a
fresh connection is how a server learns that an episode began. Every observation also carries the episode's noise
seed (:data:`~bspatial.evaluation.serving.protocol.NOISE_SEED_KEY`, :func:`~bspatial.evaluation.rollout.plan.
episode_noise_seed` of ``--seed`` and the scene seed): ``bspatial serve-policy`` seeds the connection's noise with it,
so the same checkpoint and episode play the same over the server as in process; openpi's own servers ignore it.

Example:
    bspatial serve-policy runs/policy/pretrained_model --port 8000 &
    bspatial rollout --policy openpi:ws://127.0.0.1:8000 --split held_out --tasks reach_plate
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from bspatial.catalog.schema import ACTION_DIM, CAMERAS
from bspatial.evaluation.rollout.plan import RunSettings, episode_noise_seed
from bspatial.evaluation.serving.protocol import ACTIONS_KEY, observation as wire_observation, pack, unpack
from bspatial.sim.backend import SimBackend

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10.0
"""Seconds to open the websocket and receive the metadata; beyond that the server counts as unreachable."""
INFER_TIMEOUT_S = 300.0
"""Seconds one chunk may take (a large model on a busy remote GPU is slow; a hung server must not hang a run)."""
SCHEMES = ("ws", "wss")


def normalise_url(target: str) -> str:
    """``ws[s]://host[:port][/path]`` with the port checked and no trailing slash; ValueError naming what is wrong.

    Example:
        >>> normalise_url("ws://LocalHost:8000/")
        'ws://localhost:8000'
    """
    spec = f"openpi:{target}"
    parts = urlsplit(target.strip())
    if parts.scheme not in SCHEMES:
        raise ValueError(f"policy {spec!r}: the target must be a websocket URL ws://host:port or wss://host:port, "
                         f"got scheme {parts.scheme or None!r}")
    if not parts.hostname:
        raise ValueError(f"policy {spec!r}: the URL has no host (expected openpi:ws://host:port)")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"policy {spec!r}: the port {parts.netloc.rpartition(':')[2]!r} is not a port number "
                         "(0-65535)") from None
    if parts.query or parts.fragment:
        raise ValueError(f"policy {spec!r}: an openpi server URL takes no query or fragment")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class OpenPIConnection:
    """One websocket connection to an openpi server: metadata on connect, ``infer(obs) -> reply``.

    Raises:
        ValueError: the server is unreachable or does not speak the protocol (no metadata map on connect).
    """

    def __init__(self, url: str, connect_timeout: float = CONNECT_TIMEOUT_S,
                 infer_timeout: float = INFER_TIMEOUT_S) -> None:
        import websockets
        from websockets.sync.client import connect

        self.url, self.infer_timeout = url, infer_timeout
        # The connection lives across calls, so its context is entered here and left in close() (websockets
        # deprecates using connect() outside a `with`).
        self._context = ExitStack()
        try:
            # As openpi's client connects: no compression, no message size limit.
            self._ws = self._context.enter_context(
                connect(url, compression=None, max_size=None, open_timeout=connect_timeout))
        except (OSError, TimeoutError) as error:   # refused, no such host, no answer in time
            raise ValueError(f"openpi server {url!r} is unreachable: {type(error).__name__}: {error}") from None
        except websockets.WebSocketException as error:
            # Something listens but does not speak websocket: a bad handshake, or (a race) the socket closed
            # while the handshake was under way.
            raise ValueError(f"openpi server {url!r} refused the websocket handshake ({type(error).__name__}: "
                             f"{error}); is it an openpi policy server?") from None
        try:
            first = self._ws.recv(timeout=connect_timeout)
        except (TimeoutError, websockets.ConnectionClosed) as error:
            self.close()
            raise ValueError(f"openpi server {url!r} sent no metadata on connect ({type(error).__name__}: {error}); "
                             "is it an openpi policy server?") from None
        self.metadata = self._metadata(first)

    def _metadata(self, first) -> dict[str, Any]:
        try:
            metadata = unpack(first) if isinstance(first, bytes) else None
        except Exception:   # msgpack's several exception types: all mean "not msgpack"
            metadata = None
        if not isinstance(metadata, dict):
            self.close()
            raise ValueError(f"openpi server {self.url!r}: its first message is not a msgpack metadata map "
                             f"({type(first).__name__} of {len(first)}); is it an openpi policy server?")
        return metadata

    def infer(self, observation: dict[str, Any]) -> dict[str, Any]:
        """The server's reply to one observation map. RuntimeError with the server's text when it failed."""
        import websockets

        try:
            self._ws.send(pack(observation))
            reply = self._ws.recv(timeout=self.infer_timeout)
        except TimeoutError:
            raise RuntimeError(f"openpi server {self.url!r} sent no reply within {self.infer_timeout:.0f} s") from None
        except websockets.ConnectionClosed as error:
            raise RuntimeError(f"openpi server {self.url!r} closed the connection: {error}") from None
        if isinstance(reply, str):   # openpi's servers answer a failed request with a text frame, then close
            raise RuntimeError(f"openpi server {self.url!r} failed:\n{reply}")
        return unpack(reply)

    def close(self) -> None:
        self._context.close()


def check_spec(target: str) -> str:
    """The normalised URL of a reachable openpi server, checked before any episode (connects once, reads the
    metadata, disconnects). ValueError naming the URL and what is wrong."""
    url = normalise_url(target)
    connection = OpenPIConnection(url)
    connection.close()
    logger.info("openpi server %s reachable; metadata keys: %s", url, sorted(connection.metadata))
    return url


def chunk_of(reply: Any, url: str) -> np.ndarray:
    """The ``(horizon, 23)`` float chunk of a reply; ValueError naming the field and its shape otherwise."""
    if not isinstance(reply, dict) or ACTIONS_KEY not in reply:
        keys = sorted(reply) if isinstance(reply, dict) else type(reply).__name__
        raise ValueError(f"openpi server {url!r}: the reply has no {ACTIONS_KEY!r} (got {keys})")
    actions = np.asarray(reply[ACTIONS_KEY])
    if actions.dtype.kind not in "fiu":
        raise ValueError(f"openpi server {url!r}: {ACTIONS_KEY!r} has dtype {actions.dtype}; expected numbers")
    if actions.ndim != 2 or actions.shape[0] < 1 or actions.shape[1] != ACTION_DIM:
        raise ValueError(f"openpi server {url!r}: {ACTIONS_KEY!r} has shape {actions.shape}; expected (horizon, "
                         f"{ACTION_DIM}) in the R1Pro layout (bspatial.catalog.schema.ACTION_SLICES); a server whose "
                         "model pads actions must cut them to 23 in its output transform")
    return actions.astype(np.float64)


class OpenPIPredictor:
    """``observation -> chunk`` over a connection; ``prepare`` renders (simulator thread), ``infer`` asks the
    server (may run in the controller's worker thread)."""

    def __init__(self, connection: OpenPIConnection, backend: SimBackend, noise_seed: int | None = None) -> None:
        self.connection, self.backend, self.noise_seed = connection, backend, noise_seed

    def prepare(self, observation) -> dict[str, Any]:
        images = {cam: (observation.images.get(cam) or self.backend.render(cam, rgb_only=True)).rgb for cam in CAMERAS}
        return wire_observation(observation.instruction, observation.state.proprio, images, self.noise_seed)

    def infer(self, inputs: dict[str, Any]) -> np.ndarray:
        return chunk_of(self.connection.infer(inputs), self.connection.url)

    def __call__(self, observation) -> np.ndarray:
        return self.infer(self.prepare(observation))


class _Primed:
    """A predictor whose first answer is a chunk already computed (the probe that revealed the horizon)."""

    def __init__(self, predictor: OpenPIPredictor, first: np.ndarray) -> None:
        self.predictor, self.first = predictor, first

    def prepare(self, observation):
        return None if self.first is not None else self.predictor.prepare(observation)

    def infer(self, inputs) -> np.ndarray:
        if self.first is not None:
            first, self.first = self.first, None
            return first
        return self.predictor.infer(inputs)

    def __call__(self, observation) -> np.ndarray:
        return self.infer(self.prepare(observation))


class OpenPIPolicy:
    """The per-step policy of one episode: a connection, and a :class:`ChunkedPolicy` built on the first step.

    Attributes:
        latencies: threaded mode: simulation steps between each chunk's observation and its arrival.
    """

    def __init__(self, connection: OpenPIConnection, backend: SimBackend, settings: RunSettings,
                 noise_seed: int | None = None) -> None:
        self.connection, self.settings = connection, settings
        self.predictor = OpenPIPredictor(connection, backend, noise_seed)
        self.initial_action = backend.hold_action()
        self.chunked = None

    def __call__(self, observation) -> np.ndarray:
        if self.chunked is None:
            from bspatial.evaluation.rollout.controller import REPLAN_THRESHOLD, ChunkedPolicy

            first = self.predictor(observation)   # synchronous, even in threaded mode: it sizes the controller
            horizon = len(first)
            self.chunked = ChunkedPolicy(_Primed(self.predictor, first), self.initial_action,
                                         latency_steps=self.settings.latency_steps, threaded=self.settings.threaded,
                                         horizon=horizon, action_dim=ACTION_DIM,
                                         replan_threshold=min(REPLAN_THRESHOLD, horizon))
        return self.chunked(observation)

    @property
    def latencies(self) -> list[int]:
        return self.chunked.latencies if self.chunked is not None else []

    def close(self) -> None:
        """Stop the controller's thread and end the connection (the server's episode ends with it)."""
        try:
            if self.chunked is not None:
                self.chunked.close()
        finally:
            self.connection.close()


def make_policy(target: str, backend: SimBackend, instance, settings: RunSettings = RunSettings()) -> OpenPIPolicy:
    """The policy of one episode: a new connection to the server at ``target`` (a new episode for the server)."""
    ir = settings.ir
    if ir is not None and getattr(ir, "source", "none") != "none":
        raise ValueError(f"ir={ir.source!r}: an openpi server gets no IR image from the run (only BSpatialVLA "
                         "checkpoints take an IR source)")
    return OpenPIPolicy(OpenPIConnection(normalise_url(target)), backend, settings,
                        episode_noise_seed(settings.seed, instance.seed))


def protocol(target: str) -> str:
    return "chunk_controller"   # the server's chunks go through the Appendix 16.3 controller
