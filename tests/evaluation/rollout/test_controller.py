"""Appendix 16.3 controller semantics on synthetic chunk streams (no simulator)."""

from types import SimpleNamespace

import numpy as np
import pytest

from bspatial.catalog.schema import CHUNK_SIZE, GRIPPER_DIMS
from bspatial.evaluation.rollout.controller import REPLAN_THRESHOLD, ChunkController, ChunkedPolicy, ensemble_weights

H, D = CHUNK_SIZE, 23
ARM = 7  # a non-gripper dim (left arm joint 1)


def chunk(value: float, gripper: float | None = None) -> np.ndarray:
    """A constant chunk: every dim ``value``, gripper dims ``gripper`` (default ``value``)."""
    c = np.full((H, D), float(value))
    c[:, list(GRIPPER_DIMS)] = value if gripper is None else gripper
    return c


def ramp(offset: float = 0.0) -> np.ndarray:
    """Row i holds offset + i in every dim: the action reveals the index used."""
    return offset + np.arange(H, dtype=float)[:, None].repeat(D, 1)


def test_weights_for_three_plans_to_three_decimals():
    assert np.round(ensemble_weights(3), 3).tolist() == [0.330, 0.333, 0.337]
    assert ensemble_weights(1).tolist() == [1.0]
    with pytest.raises(ValueError, match="m must be >= 1"):
        ensemble_weights(0)


def test_pre_commit_repeats_the_last_action():
    hold = np.linspace(-1, 1, D)
    c = ChunkController(hold)
    for t in range(3):
        np.testing.assert_array_equal(c.action(t), hold)
    assert c.committed is None


def test_index_counts_from_the_observation_step():
    c = ChunkController(np.zeros(D))
    c.add_chunk(ramp(), obs_step=0)
    assert c.action(4)[ARM] == 4.0  # first used at step 4 (a late chunk): entered at index 4


def test_switch_only_at_the_threshold():
    c = ChunkController(np.zeros(D))
    c.add_chunk(ramp(), obs_step=0)
    c.action(0)
    c.add_chunk(ramp(100), obs_step=5)  # newer, but the committed index is below 10
    for t in range(1, REPLAN_THRESHOLD):
        c.action(t)
        assert c.committed_steps == (0,), t
    c.action(REPLAN_THRESHOLD)  # index 10: switch to the newest covering chunk
    assert c.committed_steps == (0, 5)
    # Next switch: counted from the new chunk's observation step (5), so at step 15, not 20.
    c.add_chunk(ramp(200), obs_step=12)
    c.action(14)
    assert c.committed_steps == (0, 5)
    c.action(15)
    assert c.committed_steps == (0, 5, 12)


def test_committed_chunk_kept_when_nothing_newer():
    c = ChunkController(np.zeros(D))
    c.add_chunk(ramp(), obs_step=0)
    for t in range(20):
        assert c.action(t)[ARM] == t
    assert c.committed_steps == (0,)


def test_three_plan_ensemble_and_history_of_three():
    c = ChunkController(np.zeros(D))
    for k, obs in enumerate((0, 10, 20, 30)):
        c.add_chunk(chunk(k + 1.0), obs_step=obs)
        c.action(obs)
    assert c.committed_steps == (10, 20, 30)  # the oldest entry dropped out
    a = c.action(31)
    w = ensemble_weights(3)
    assert a[ARM] == pytest.approx(w @ [2.0, 3.0, 4.0])
    assert a[0] == pytest.approx(w @ [2.0, 3.0, 4.0])  # the base dims are ensembled too


def test_only_covering_entries_are_averaged():
    c = ChunkController(np.zeros(D))
    c.add_chunk(chunk(1.0), obs_step=0)
    c.action(0)
    c.add_chunk(chunk(2.0), obs_step=10)
    c.action(10)
    assert c.action(31)[ARM] == pytest.approx(ensemble_weights(2) @ [1.0, 2.0])
    assert c.action(32)[ARM] == 2.0  # chunk 0 (rows 0..31) no longer covers step 32


def test_gripper_from_the_newest_covering_chunk_even_if_uncommitted():
    c = ChunkController(np.zeros(D))
    c.add_chunk(chunk(1.0, gripper=-1.0), obs_step=0)
    c.action(0)
    c.add_chunk(chunk(5.0, gripper=0.7), obs_step=3)  # arrives; not committed before index 10
    a = c.action(4)
    assert c.committed_steps == (0,)
    assert a[ARM] == 1.0
    assert a[list(GRIPPER_DIMS)].tolist() == [0.7, 0.7]


def test_no_covering_commitment_clamps_the_most_recent():
    c = ChunkController(np.zeros(D))
    c.add_chunk(ramp(), obs_step=0)
    c.action(0)
    for t in (H, H + 5, 100):
        np.testing.assert_array_equal(c.action(t), ramp()[H - 1])


def test_wrong_chunk_shape_is_a_clear_error():
    c = ChunkController(np.zeros(D))
    with pytest.raises(ValueError, match=r"chunk must have shape \(32, 23\), got \(32, 7\)"):
        c.add_chunk(np.zeros((H, 7)), obs_step=0)


def test_ema_smooths_non_gripper_dims_only():
    c = ChunkController(np.zeros(D), ema_alpha=0.5)
    c.add_chunk(chunk(4.0, gripper=1.0), obs_step=0)
    a0, a1 = c.action(0), c.action(1)
    assert (a0[ARM], a1[ARM]) == (2.0, 3.0)
    assert a0[list(GRIPPER_DIMS)].tolist() == [1.0, 1.0]


def obs(t):
    return SimpleNamespace(step=t)


def test_synchronous_policy_replans_every_threshold_steps():
    calls = []

    def predictor(o):
        calls.append(o.step)
        return ramp(1000 * len(calls))

    policy = ChunkedPolicy(predictor, np.zeros(D))
    actions = [policy(obs(t)) for t in range(25)]
    assert calls == [0, 10, 20]
    assert actions[0][ARM] == 1000.0  # used at once (index 0)
    assert actions[12][ARM] == pytest.approx(ensemble_weights(2) @ [1000 + 12, 2000 + 2])


def test_asynchronous_latency_in_simulation_steps():
    hold = np.full(D, -3.0)
    policy = ChunkedPolicy(lambda o: ramp(1000 * o.step), hold, latency_steps=4)
    actions = [policy(obs(t)) for t in range(16)]
    # Calls run back to back: observation 0 delivers at 4, observation 4 at 8, ...
    assert policy.calls == [0, 4, 8, 12]
    for t in range(4):  # before the first delivery: the hold action repeats
        np.testing.assert_array_equal(actions[t], hold)
    assert actions[4][ARM] == 4.0  # chunk of observation 0 entered at index 4 = latency
    # The chunk of observation 4 arrives at step 8, but the committed index (8) is still < 10.
    assert actions[8][ARM] == 8.0
    # At step 10 the committed index reaches 10: switch to the newest covering chunk (observation 4).
    assert actions[10][ARM] == pytest.approx(ensemble_weights(2) @ [10.0, 4000 + 6])
    assert actions[8][list(GRIPPER_DIMS)].tolist() == [4004.0, 4004.0]  # gripper: newest chunk


class _GatedPredictor:
    """prepare() on the caller's thread, infer() on the worker; each inference waits for its gate."""

    def __init__(self):
        import threading

        self.threads, self.gates = [], []
        self.threading = threading

    def prepare(self, observation):
        self.threads.append(("prepare", self.threading.current_thread().name))
        gate = self.threading.Event()
        self.gates.append(gate)
        return observation.step, gate

    def infer(self, inputs):
        step, gate = inputs
        self.threads.append(("infer", self.threading.current_thread().name))
        assert gate.wait(10), "test gate never opened"
        return ramp(1000 * step)


def test_threaded_inference_runs_while_steps_go_on_and_measures_latency():
    import time

    hold = np.full(D, -3.0)
    predictor = _GatedPredictor()
    policy = ChunkedPolicy(predictor, hold, threaded=True)
    actions = [policy(obs(t)) for t in range(3)]          # inference of observation 0 still running
    assert all((a == hold).all() for a in actions)         # the hold action repeats meanwhile
    predictor.gates[0].set()
    while not policy._future[1].done():
        time.sleep(0.001)
    action = policy(obs(3))                                # delivered now: entered at index 3
    assert action[ARM] == 3.0 and policy.latencies == [3]
    assert policy.calls == [0, 3]                          # the next computation starts at once
    predictor.gates[1].set()
    policy.close()
    kinds = {kind: name for kind, name in predictor.threads}
    assert kinds["prepare"] != kinds["infer"] and kinds["infer"].startswith("policy-inference")
    with pytest.raises(ValueError, match="latency_steps must be 0"):
        ChunkedPolicy(predictor, hold, threaded=True, latency_steps=2)
    with pytest.raises(ValueError, match="needs a predictor with prepare"):
        ChunkedPolicy(lambda o: ramp(), hold, threaded=True)
