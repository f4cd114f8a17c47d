"""Batched inference: one server process answers every worker's chunk requests in batches, and the episodes are
the unbatched ones (the same noise from each episode's generator; the tiny policy's chunks bit-identical)."""

import logging
import re
import threading

import numpy as np
import pytest

from bspatial.evaluation.rollout.batching import InferenceClient, InferenceServer
from bspatial.evaluation.rollout.episodes import load_results
from bspatial.evaluation.rollout.plan import RunSettings
from bspatial.evaluation.rollout.policies import CheckpointPredictor
from bspatial.evaluation.rollout.runner import BatchSettings, run_rollouts

pytestmark = [pytest.mark.slow, pytest.mark.sim, pytest.mark.subprocess]


def _raw_inputs(predictor, variants_seeds):
    """Raw inputs of the first observation of reach_plate instances (different instructions: padded in a batch)."""
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks import sample_instance
    from bspatial.tasks.episode import EpisodeRun

    sim = MujocoBackend(camera_size=64)
    try:
        raws = []
        for variant, seed in variants_seeds:
            run = EpisodeRun(sim, sample_instance("reach_plate", variant, seed), max_steps=2, load=True)
            raws.append(predictor.raw_inputs(run.observation(), lambda c: sim.render(c, rgb_only=True)))
        return raws
    finally:
        sim.close()


def test_two_waiting_requests_run_as_one_batch_and_get_the_unbatched_chunks(tiny_checkpoint):
    predictor = CheckpointPredictor(str(tiny_checkpoint))
    raws = _raw_inputs(predictor, [("largest", 0), ("2nd smallest", 3)])
    assert len(set(r["task"] for r in raws)) == 2
    expected, noises = [], []
    for seed, raw in zip((11, 12), raws):   # what an unbatched worker computes with its episode's generator
        predictor.reseed(seed)
        noises.append(predictor.draw_noise())
        predictor.reseed(seed)
        expected.append(predictor.infer(predictor.processor(raw)))
    # A long wait: the first request waits for the second, so the two run as one batch of 2.
    with InferenceServer(lambda: CheckpointPredictor(str(tiny_checkpoint)), max_batch=2, max_wait_s=30.0) as server:
        got, points = [None, None], ["unanswered", "unanswered"]

        def ask(i):
            got[i], points[i] = InferenceClient(server.address).infer(raws[i], noises[i])

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        sizes = list(server.batch_sizes)
    assert sizes == [2]
    assert points == [None, None]   # not asked for (a client asks on an episode's first chunk)
    for chunk, reference in zip(got, expected):
        assert chunk.shape == (predictor.horizon, predictor.action_dim)
        np.testing.assert_array_equal(chunk, reference)   # bit for bit


def test_batched_workers_play_the_unbatched_episodes(tiny_checkpoint, tmp_path, caplog):
    settings = RunSettings(max_steps=25)
    run_rollouts(str(tiny_checkpoint), "held_out", ["reach_plate"], tmp_path / "one", settings, n_episodes=3)
    # A long wait: a request waits for the other worker's, so the two episodes running together share batches.
    with caplog.at_level(logging.INFO, logger="bspatial.evaluation.rollout.batching"):
        summary = run_rollouts(str(tiny_checkpoint), "held_out", ["reach_plate"], tmp_path / "batched", settings,
                               n_episodes=3, workers=2, batch=BatchSettings(max_wait_s=3.0))
    assert summary.errors == 0
    assert re.search(r"batched inference: \d+ batches, mean size [\d.]+, max 2", caplog.text), caplog.text
    one, batched = load_results(tmp_path / "one"), load_results(tmp_path / "batched")
    assert [r["index"] for r in batched] == [0, 1, 2]
    for a, b in zip(one, batched):
        assert {k: v for k, v in a.items() if k != "inference_ms"} == {k: v for k, v in b.items() if k != "inference_ms"}
        assert a["inference_ms"]["calls"] == b["inference_ms"]["calls"] == 3   # plans at steps 0, 10, 20 of 25


@pytest.mark.parametrize("policy, kwargs, message", [
    ("scripted", {}, "policy 'scripted' is built in: it has no model to batch"),
    ("openpi:ws://127.0.0.1:1", {}, "an openpi server batches on its own side"),
    (None, {"ray": "auto"}, "it cannot be combined with --ray"),
])
def test_what_cannot_be_batched_is_refused_before_any_episode(tiny_checkpoint, tmp_path, policy, kwargs, message):
    with pytest.raises(ValueError) as error:
        run_rollouts(policy or str(tiny_checkpoint), "held_out", ["reach_plate"], tmp_path, n_episodes=1,
                     batch=BatchSettings(), **kwargs)
    assert message in str(error.value)
    assert not (tmp_path / "episodes").exists()
