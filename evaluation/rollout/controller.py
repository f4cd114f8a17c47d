"""Receding-horizon execution of action chunks (Appendix 16.3, "Policy Execution"), pure numpy.

The policy predicts chunks of :data:`CHUNK_SIZE` actions; this module decides which action is
applied at every simulation step. Two pieces:

* :class:`ChunkController` holds the chunks and implements the paper's rules, step by step:

  1. **Indexing.** A chunk is indexed from the simulation step of its *input observation*: the chunk
     computed from the observation of step ``s`` gives at step ``t`` its row ``t - s``. A chunk that
     arrives late is therefore entered at a latency-dependent offset.
  2. **Switching.** The committed chunk is kept while its index is below :data:`REPLAN_THRESHOLD` and
     within the horizon; otherwise the newest chunk covering the current step is committed (if none
     is newer, the committed one stays). Because the index counts from the observation, switches do
     not happen at a fixed interval.
  3. **Ensembling.** Non-gripper dimensions (base included) are averaged over the entries of the
     :data:`ENSEMBLE_SIZE`-entry commitment history whose horizons cover the step, with weights
     ``exp(ENSEMBLE_RATE * r)``, ``r = 0..m-1`` oldest to newest (:func:`ensemble_weights`).
  4. **Gripper.** Gripper dimensions (:data:`GRIPPER_DIMS`) come from the newest chunk covering the
     step, committed or not.
  5. **Fallback.** With no committed entry covering the step, the most recently committed chunk is
     used with its index clamped to the horizon; before the first commit the last action repeats.
  6. Optional Spa-Bench causal EMA smoothing (:data:`SPA_BENCH_EMA_ALPHA`) of the non-gripper dims.

* :class:`ChunkedPolicy` turns a chunk predictor ``observation -> (horizon, 23)`` into the per-step
  policy :func:`bspatial.tasks.episode.run_episode` drives, in one of two modes:

  - synchronous (``latency_steps=0``, deterministic): when a new plan is needed (nothing committed,
    or the committed index has reached the threshold) the predictor runs on the current observation
    and its chunk is usable at once;
  - asynchronous with a fixed latency (``latency_steps=k >= 1``): inference runs back to back; a call
    started on the observation of step ``s`` delivers its chunk at step ``s + k`` (entered at index
    ``k``), and the next call starts on that step's observation. Latency is a number of simulation
    steps, so the schedule stays deterministic and testable;
  - asynchronous in a thread (``threaded=True``): the policy really computes while the simulator
    steps. The predictor must split into ``prepare(observation)`` (rendering: on the simulator's
    thread) and ``infer(inputs)`` (the model: on a worker thread). A chunk is entered when its
    computation has finished, at the index of the steps that passed meanwhile; the measured latencies
    (in simulation steps) are kept in :attr:`ChunkedPolicy.latencies`. The simulator is paced to the
    control rate in wall-clock time (:data:`CONTROL_HZ`), as a robot runs: MuJoCo alone steps far faster
    than real time, which would turn any inference into an unbounded latency. Not deterministic: the
    latency depends on the machine.

Example (synchronous, chunks whose rows are their step numbers):
    >>> import numpy as np
    >>> c = ChunkController(initial_action=np.zeros(23))
    >>> c.add_chunk(np.arange(32.0)[:, None].repeat(23, 1), obs_step=0)
    >>> float(c.action(3)[0]), c.committed_steps
    (3.0, (0,))
    >>> [round(float(w), 3) for w in ensemble_weights(3)]
    [0.33, 0.333, 0.337]
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from bspatial.catalog.schema import ACTION_DIM, CHUNK_SIZE, CONTROL_HZ, GRIPPER_DIMS
from bspatial.evaluation.rollout.timing import timed_call

REPLAN_THRESHOLD = 10
"""Steps, counted from the committed chunk's input-observation step, before the controller switches to a
newer chunk (Section 4.2 "10-step replanning threshold"; Appendix 16.3 "while this index is below ten")."""
ENSEMBLE_SIZE = 3
"""Entries of the commitment history averaged over (Appendix 16.3 "three-entry commitment history")."""
ENSEMBLE_RATE = 0.01
"""Ensemble weights w_r ∝ exp(ENSEMBLE_RATE * r), r oldest -> newest (Appendix 16.3; (0.330, 0.333, 0.337) for 3)."""
SPA_BENCH_EMA_ALPHA = 0.5
"""Weight of the new action in the optional causal EMA ``y_t = a x_t + (1 - a) y_{t-1}`` of non-gripper dims.
Spa-Bench (paper/spa-bench-summary.txt, "C. Deployment-Time Processing", pp. 12-13) smooths every
non-gripper dim with a causal EMA that persists across chunks and resets between rollouts, gripper
unfiltered; the summary does not give its coefficient, so 0.5 is our provisional choice (pass ``ema_alpha``
to change it)."""


def ensemble_weights(m: int, rate: float = ENSEMBLE_RATE) -> np.ndarray:
    """Normalised weights ``exp(rate * r)``, ``r = 0..m-1`` ordered oldest to newest (Appendix 16.3).

    Example:
        >>> ensemble_weights(1).tolist(), [round(float(w), 4) for w in ensemble_weights(2)]
        ([1.0], [0.4975, 0.5025])
    """
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m!r}")
    w = np.exp(rate * np.arange(m, dtype=float))
    return w / w.sum()


@dataclass(frozen=True, eq=False)
class Chunk:
    """A predicted chunk and the simulation step of its input observation."""

    actions: np.ndarray  # (horizon, action_dim)
    obs_step: int
    serial: int  # arrival order, breaks ties between chunks of the same observation step

    def index(self, step: int) -> int:
        return step - self.obs_step

    def covers(self, step: int) -> bool:
        return 0 <= self.index(step) < len(self.actions)

    def row(self, step: int, clamp: bool = False) -> np.ndarray:
        i = self.index(step)
        if clamp:
            i = min(max(i, 0), len(self.actions) - 1)
        return self.actions[i]


class ChunkController:
    """Chunk bookkeeping and the per-step action rule of Appendix 16.3 (see the module docstring).

    Args:
        initial_action: the action repeated before the first commit (e.g. the backend's hold action).
        horizon, action_dim: expected chunk shape; other shapes raise ``ValueError``.
        replan_threshold, ensemble_size, ensemble_rate, gripper_dims: the Appendix 16.3 constants.
        ema_alpha: None (default, the paper's controller) or the Spa-Bench EMA weight in (0, 1].
    """

    def __init__(self, initial_action: np.ndarray, *, horizon: int = CHUNK_SIZE, action_dim: int = ACTION_DIM,
                 replan_threshold: int = REPLAN_THRESHOLD, ensemble_size: int = ENSEMBLE_SIZE,
                 ensemble_rate: float = ENSEMBLE_RATE, gripper_dims: tuple[int, ...] = GRIPPER_DIMS,
                 ema_alpha: float | None = None) -> None:
        initial = np.asarray(initial_action, dtype=float)
        if initial.shape != (action_dim,):
            raise ValueError(f"initial_action must have shape ({action_dim},), got {initial.shape}")
        if not 1 <= replan_threshold <= horizon:
            raise ValueError(f"replan_threshold must be in 1..horizon={horizon}, got {replan_threshold!r}")
        if ema_alpha is not None and not 0.0 < ema_alpha <= 1.0:
            raise ValueError(f"ema_alpha must be in (0, 1] or None, got {ema_alpha!r}")
        self.horizon, self.action_dim = horizon, action_dim
        self.replan_threshold, self.ensemble_rate, self.ema_alpha = replan_threshold, ensemble_rate, ema_alpha
        self.gripper = np.zeros(action_dim, dtype=bool)
        self.gripper[list(gripper_dims)] = True
        self.chunks: list[Chunk] = []
        self.history: deque[Chunk] = deque(maxlen=ensemble_size)  # committed, oldest -> newest
        self.last_action = initial.copy()
        self._serial = 0

    # ---- input ----------------------------------------------------------------------------------

    def add_chunk(self, actions: Any, obs_step: int) -> None:
        """Receive a chunk predicted from the observation of simulation step ``obs_step``."""
        arr = np.asarray(actions, dtype=float)
        if arr.shape != (self.horizon, self.action_dim):
            raise ValueError(f"policy chunk must have shape ({self.horizon}, {self.action_dim}), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"policy chunk from step {obs_step} has non-finite values")
        self.chunks.append(Chunk(arr, int(obs_step), self._serial))
        self._serial += 1
        # Chunks older than the oldest committed one can never be chosen again.
        if self.history:
            oldest = self.history[0].obs_step
            self.chunks = [c for c in self.chunks if c.obs_step >= oldest or c in self.history]

    # ---- queries --------------------------------------------------------------------------------

    @property
    def committed(self) -> Chunk | None:
        return self.history[-1] if self.history else None

    @property
    def committed_steps(self) -> tuple[int, ...]:
        """Observation steps of the commitment history, oldest to newest (for logs and tests)."""
        return tuple(c.obs_step for c in self.history)

    def needs_plan(self, step: int) -> bool:
        """True when nothing is committed or the committed chunk is due for a switch at ``step``."""
        c = self.committed
        return c is None or not (c.index(step) < self.replan_threshold and c.covers(step))

    def _newest_covering(self, step: int) -> Chunk | None:
        covering = [c for c in self.chunks if c.covers(step)]
        return max(covering, key=lambda c: (c.obs_step, c.serial)) if covering else None

    # ---- the rule -------------------------------------------------------------------------------

    def _update_commitment(self, step: int) -> None:
        if not self.needs_plan(step):
            return
        newest = self._newest_covering(step)
        if newest is not None and newest is not self.committed:
            self.history.append(newest)

    def action(self, step: int) -> np.ndarray:
        """The action to apply at simulation ``step`` (call once per step, steps increasing)."""
        self._update_commitment(step)
        if self.committed is None:
            return self.last_action.copy()  # before the first commit: repeat the last action
        covering = [c for c in self.history if c.covers(step)]
        if covering:
            rows = np.stack([c.row(step) for c in covering])  # history order = oldest -> newest
            action = ensemble_weights(len(covering), self.ensemble_rate) @ rows
            action[self.gripper] = self._newest_covering(step).row(step)[self.gripper]
        else:
            action = self.committed.row(step, clamp=True).copy()
        if self.ema_alpha is not None:
            smooth = ~self.gripper
            action[smooth] = self.ema_alpha * action[smooth] + (1.0 - self.ema_alpha) * self.last_action[smooth]
        self.last_action = action
        return action.copy()


Predictor = Callable[[Any], np.ndarray]
"""``observation -> (horizon, action_dim)`` chunk in robot units."""


class ChunkedPolicy:
    """A per-step policy ``observation -> action`` from a chunk predictor, through a :class:`ChunkController`.

    Args:
        predictor: ``observation -> chunk``; an observation must have a ``step`` attribute
            (:class:`bspatial.tasks.episode.Observation`).
        initial_action: repeated before the first commit.
        latency_steps: 0 = synchronous; k >= 1 = asynchronous, each call delivers k steps after its
            observation (see the module docstring).
        threaded: asynchronous in a worker thread (``latency_steps`` must be 0); call :meth:`close`
            when the episode ends.
        pace_hz: threaded mode: wall-clock steps per second the simulator is held to.
        controller_kwargs: passed to :class:`ChunkController`.

    Attributes:
        calls: observation steps the predictor was called on (for tests and benchmarks).
        latencies: threaded mode: simulation steps between each chunk's observation and its arrival.
    """

    def __init__(self, predictor: Predictor, initial_action: np.ndarray, *, latency_steps: int = 0,
                 threaded: bool = False, pace_hz: float = CONTROL_HZ, **controller_kwargs) -> None:
        if latency_steps < 0:
            raise ValueError(f"latency_steps must be >= 0, got {latency_steps!r}")
        if threaded and latency_steps:
            raise ValueError(f"threaded inference measures its latency; latency_steps must be 0, got {latency_steps!r}")
        if threaded and not (hasattr(predictor, "prepare") and hasattr(predictor, "infer")):
            raise ValueError(f"threaded inference needs a predictor with prepare() and infer(), got "
                             f"{type(predictor).__name__}")
        self.predictor, self.latency = predictor, int(latency_steps)
        self.controller = ChunkController(initial_action, **controller_kwargs)
        self.calls: list[int] = []
        self.latencies: list[int] = []
        self.inference_ms: list[float] = []   # wall time of each model call (timing.latency_summary)
        self._pending: tuple[int, np.ndarray] | None = None  # (obs_step, chunk) in flight
        self._executor = None
        self._future: tuple[int, Any] | None = None  # (obs_step, concurrent.futures.Future) in flight
        if pace_hz <= 0:
            raise ValueError(f"pace_hz must be > 0, got {pace_hz!r}")
        self.pace_hz, self._start = float(pace_hz), None
        if threaded:
            from concurrent.futures import ThreadPoolExecutor
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="policy-inference")

    def _predict(self, observation) -> np.ndarray:
        self.calls.append(int(observation.step))
        return timed_call(self.predictor, self.inference_ms)(observation)

    def _pace(self, step: int) -> None:
        import time

        if self._start is None:
            self._start = time.perf_counter() - step / self.pace_hz
        wait = self._start + step / self.pace_hz - time.perf_counter()
        if wait > 0:
            time.sleep(wait)

    def _threaded(self, observation) -> np.ndarray:
        step = int(observation.step)
        self._pace(step)
        if self._future is not None and self._future[1].done():
            obs_step, future = self._future
            self.controller.add_chunk(future.result(), obs_step)   # re-raises an inference error here
            self.latencies.append(step - obs_step)
            self._future = None
        if self._future is None:
            self.calls.append(step)
            inputs = self.predictor.prepare(observation)            # renders: stays on this thread
            self._future = (step, self._executor.submit(timed_call(self.predictor.infer, self.inference_ms), inputs))
        # Before the first chunk arrives the initial action repeats (Appendix 16.3), as in the other modes.
        return self.controller.action(step)

    def close(self) -> None:
        """Stop the inference thread (threaded mode), waiting for a computation in flight."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor, self._future = None, None

    def __call__(self, observation) -> np.ndarray:
        step = int(observation.step)
        if self._executor is not None:
            return self._threaded(observation)
        if self.latency == 0:
            if self.controller.needs_plan(step):
                self.controller.add_chunk(self._predict(observation), step)
            return self.controller.action(step)
        if self._pending is not None and step >= self._pending[0] + self.latency:
            self.controller.add_chunk(self._pending[1], self._pending[0])
            self._pending = None
        if self._pending is None:
            # The chunk is computed now but only "arrives" latency steps later.
            self._pending = (step, self._predict(observation))
        return self.controller.action(step)


__all__ = ["ENSEMBLE_RATE", "ENSEMBLE_SIZE", "REPLAN_THRESHOLD",
           "SPA_BENCH_EMA_ALPHA", "Chunk", "ChunkController", "ChunkedPolicy", "ensemble_weights"]
