"""Batched inference for rollouts: one process holds the checkpoint, every simulator worker asks it for chunks.

``bspatial rollout <checkpoint> --workers N --batch-inference``: the run's own process loads the model once and
serves it (:class:`InferenceServer`) on a local socket; each worker process builds its observation's raw inputs
(renders, the IR image, the instruction) and draws the episode's flow-matching noise from the episode's own
generator, exactly as an unbatched worker does, and sends both (:class:`InferenceClient`). The server gathers
requests until ``max_batch`` are waiting or ``max_wait_s`` has passed since the first, runs them as one batch
(:meth:`~bspatial.evaluation.rollout.policies.CheckpointPredictor.infer_batch`: the instructions padded, the noises
stacked) and answers each worker its own chunk. So the noise is the unbatched run's; what batching could change is
only the network's float rounding (measured: none for the tiny policy, chunks bit-identical; the tests compare).

Workers no longer load the weights (the predictor loads them lazily, at its first local inference), so N workers
hold one copy of the model, and on a GPU the model would run at batch N instead of N times at batch 1.

``lerobot:<checkpoint>`` policies under the chunk controller are served the same way
(:func:`bspatial.evaluation.envs.policy_lerobot.load_batch_predictor`): the workers send the env-side inputs
lerobot-eval builds, the server runs the policy's preprocessor, ``predict_action_chunk`` and postprocessor on the
batch. They draw their own noise (no noise travels), so a deterministic policy (ACT) plays the unbatched episodes
and a sampling one is reproducible only unbatched; ``#select_action`` (one action queue per episode) is refused.

Local processes only (a Unix socket with a random key); Ray actors on other machines cannot reach it.
"""

from __future__ import annotations

import logging
import os
import queue
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Client, Listener
from pathlib import Path
from typing import Any, Callable

import numpy as np

logger = logging.getLogger(__name__)

SERVER_TORCH_THREADS = 1
"""Intra-op threads of the inference thread. torch's OpenMP pool driven from a thread other than the main one is
slow with more than one thread (measured on 2 cores, the tiny policy: 66 ms per chunk with 2 threads, 26 ms with
1, 25 ms from the main thread with 2); the simulator workers have the other cores."""
DEFAULT_MAX_WAIT_S = 0.01
"""How long the first request of a batch waits for others (a control step of the simulator is ~10-30 ms)."""
_FAMILY = "AF_UNIX"


@dataclass(frozen=True)
class ServerAddress:
    """Where a worker finds the server (picklable: it travels with each episode job)."""

    path: str
    authkey: bytes


class RemoteInferenceError(RuntimeError):
    """The server's inference failed for this request (its message is the server's exception)."""


class InferenceServer:
    """Serves one policy's ``infer_batch`` to local clients (a context manager).

    Args:
        load: builds the predictor (:func:`~bspatial.evaluation.rollout.policies.load_batch_predictor`: a
            :class:`~bspatial.evaluation.rollout.policies.CheckpointPredictor` or a loaded ``lerobot:`` policy),
            called once on entering, with its weights loaded then: a bad checkpoint fails there, not in a worker's
            request.
        max_batch, max_wait_s: the size cap and the wait cap of a batch.

    Attributes:
        address: the :class:`ServerAddress` to give the clients.
        batch_sizes: the size of every batch run so far (for the benchmark and the tests).
    """

    def __init__(self, load: Callable[[], Any], max_batch: int, max_wait_s: float = DEFAULT_MAX_WAIT_S) -> None:
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise ValueError(f"max_batch must be an int >= 1, got {max_batch!r}")
        if not max_wait_s >= 0:
            raise ValueError(f"max_wait_s must be >= 0, got {max_wait_s!r}")
        self.load, self.max_batch, self.max_wait_s = load, max_batch, float(max_wait_s)
        self.batch_sizes: list[int] = []
        self._requests: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._connections: list[Any] = []
        self._listener: Listener | None = None
        self._folder: tempfile.TemporaryDirectory | None = None
        self.address: ServerAddress | None = None

    def __enter__(self) -> InferenceServer:
        self.predictor = self.load()
        self.predictor.model   # the weights now: a bad checkpoint fails here, not in the first worker's request
        self._folder = tempfile.TemporaryDirectory(prefix="bspatial-inference-")
        path = str(Path(self._folder.name) / "policy.sock")
        authkey = os.urandom(16)
        self._listener = Listener(path, family=_FAMILY, authkey=authkey)
        self.address = ServerAddress(path, authkey)
        for target in (self._accept, self._serve):
            thread = threading.Thread(target=target, name=f"inference-{target.__name__.strip('_')}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        if self._listener is not None:
            try:   # wake the accept loop with one last connection, then close
                Client(self.address.path, family=_FAMILY, authkey=self.address.authkey).close()
            except OSError:
                pass
            self._listener.close()
        for connection in list(self._connections):
            connection.close()
        for thread in self._threads:
            thread.join(timeout=5)
        if self._folder is not None:
            self._folder.cleanup()
        if self.batch_sizes:
            logger.info("batched inference: %d batches, mean size %.2f, max %d", len(self.batch_sizes),
                        float(np.mean(self.batch_sizes)), max(self.batch_sizes))

    # ---- threads --------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection = self._listener.accept()
            except (OSError, EOFError):
                return
            if self._stop.is_set():
                connection.close()
                return
            self._connections.append(connection)
            threading.Thread(target=self._read, args=(connection,), name="inference-reader", daemon=True).start()

    def _read(self, connection) -> None:
        import torch

        while True:
            try:
                raw, noise, want_point = connection.recv()
            except (EOFError, OSError):
                return   # the worker is gone
            raw = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in raw.items()}
            self._requests.put((connection, raw, None if noise is None else torch.from_numpy(noise), want_point))

    def _next_batch(self) -> list[tuple]:
        first = self._requests.get(timeout=0.1)
        batch, deadline = [first], time.monotonic() + self.max_wait_s
        while len(batch) < self.max_batch:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                batch.append(self._requests.get(timeout=remaining))
            except queue.Empty:
                break
        return batch

    def _serve(self) -> None:
        import torch

        torch.set_num_threads(SERVER_TORCH_THREADS)   # this thread's OpenMP setting (see the constant)
        while not self._stop.is_set():
            try:
                batch = self._next_batch()
            except queue.Empty:
                continue
            for group in _same_shapes(batch):
                self.batch_sizes.append(len(group))
                try:
                    chunks = self.predictor.infer_batch([raw for _, raw, _, _ in group],
                                                        [noise for _, _, noise, _ in group])
                    points = [self._point(raw) if want else None for _, raw, _, want in group]
                except Exception as error:   # every waiting worker learns why, and its episode records it
                    logger.exception("batched inference failed")
                    chunks = [RemoteInferenceError(f"{type(error).__name__}: {error}")] * len(group)
                    points = [None] * len(group)
                for (connection, _, _, _), chunk, point in zip(group, chunks, points):
                    try:
                        connection.send((chunk, point))
                    except OSError:
                        pass   # the worker died while waiting; its episode is lost with it

    def _point(self, raw: dict[str, Any]):
        """The pointing head's point for one request's raw inputs (an episode's first: its record's "pointed"),
        None for a predictor without one (a ``lerobot:`` policy, a checkpoint without the head)."""
        point = getattr(self.predictor, "point", None)
        return None if point is None else point(self.predictor.processor(raw))


def _same_shapes(batch: list[tuple]) -> list[list[tuple]]:
    """Requests grouped by their inputs' shapes (images of one size, the same context frames), in arrival order:
    each group collates into one batch."""
    groups: dict[tuple, list[tuple]] = {}
    for request in batch:
        raw = request[1]
        signature = tuple(sorted((k, tuple(getattr(v, "shape", ()))) for k, v in raw.items()))
        groups.setdefault(signature, []).append(request)
    return list(groups.values())


_CLIENTS: dict[ServerAddress, InferenceClient] = {}   # one connection per worker process and server


class InferenceClient:
    """A worker's connection to the :class:`InferenceServer`."""

    def __init__(self, address: ServerAddress) -> None:
        self.connection = Client(address.path, family=_FAMILY, authkey=address.authkey)

    @classmethod
    def of(cls, address: ServerAddress) -> InferenceClient:
        """This process's client of ``address`` (connected once)."""
        if address not in _CLIENTS:
            _CLIENTS[address] = cls(address)
        return _CLIENTS[address]

    def infer(self, raw: dict[str, Any], noise, want_point: bool = False) -> tuple[np.ndarray, list[float] | None]:
        """The server's chunk for one observation's raw inputs and noise (None: a policy that draws its own), and
        with ``want_point`` the pointing head's point on them (:meth:`CheckpointPredictor.point`; else None)."""
        # Tensors travel as numpy arrays: torch's own pickling for multiprocessing moves every tensor into a new
        # shared-memory segment (measured: ~80 ms per request), numpy's is a plain copy of the bytes.
        raw = {k: v.numpy() if hasattr(v, "numpy") else v for k, v in raw.items()}
        self.connection.send((raw, None if noise is None else noise.numpy(), want_point))
        chunk, point = self.connection.recv()
        if isinstance(chunk, RemoteInferenceError):
            raise chunk
        return chunk, point


class RemoteEpisodePredictor:
    """``observation -> chunk`` for one episode, inference served by an :class:`InferenceServer`: the same
    ``prepare`` (simulator thread: renders, IR, noise) / ``infer`` split as the local
    :class:`~bspatial.evaluation.rollout.policies.EpisodePredictor`."""

    def __init__(self, local, client: InferenceClient) -> None:
        self.local, self.client = local, client   # local: the episode's EpisodePredictor (its weights never load)
        # What the episode's record reads from a predictor (the IR summary, the context frames, the first point).
        self.conditioner, self.context = local.conditioner, local.context
        self.first_point = local.first_point   # the local predictor never infers: the point is kept here

    @property
    def pointed(self) -> dict[str, Any] | None:
        return self.first_point.pointed

    def prepare(self, observation) -> tuple[dict[str, Any], Any]:
        predictor = self.local.predictor
        raw = predictor.raw_inputs(observation, self.local.render, self.local.conditioner, self.local.context)
        return raw, predictor.draw_noise()

    def infer(self, prepared: tuple[dict[str, Any], Any]) -> np.ndarray:
        chunk, xy = self.client.infer(*prepared, want_point=self.first_point.ask())
        self.first_point.keep(xy)
        return chunk

    def __call__(self, observation) -> np.ndarray:
        return self.infer(self.prepare(observation))


__all__ = ["DEFAULT_MAX_WAIT_S", "InferenceClient", "InferenceServer", "RemoteEpisodePredictor",
           "RemoteInferenceError", "ServerAddress"]
