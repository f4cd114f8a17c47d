"""Rollout runner: planning / refusal, scripted and random rollouts, resume, crash records, workers."""

import json

import numpy as np
import pytest

from bspatial.evaluation.rollout import runner
from bspatial.evaluation.rollout.runner import load_results, plan_episodes, result_path, run_rollouts

REACH_TASKS = ["reach_plate", "reach_tool", "reach_dice"]


def test_plan_is_deterministic_and_uses_provisional_seeds():
    plan = plan_episodes("prompt_probe", ["reach_dice"], 5)
    assert [e.seed for e in plan] == [2_000_000 + i for i in range(5)]
    assert [e.variant for e in plan][:4] == ["closest/board game", "closest/wall", "farthest/board game",
                                            "farthest/wall"]
    assert plan[4].variant == "closest/board game"
    full = plan_episodes("held_out")
    assert len(full) == 469  # Table S2 held-out n (DESIGN §5)


@pytest.mark.parametrize("kwargs, message", [
    (dict(split="test"), "unknown split 'test'; known splits: held_out, prompt_probe, navigation"),
    (dict(split="navigation"), "needs navigation scene generators"),
    (dict(tasks=["reach_moon"]), "unknown task 'reach_moon'; known tasks for split 'held_out': reach_food_item"),
    (dict(tasks=["place_saucer"]), "has no held_out episodes"),
    (dict(policy_spec="nonexistent/ckpt"), "policy must be one of"),
])
def test_bad_input_refused_before_any_simulator(tmp_path, monkeypatch, kwargs, message):
    def no_sim(*args, **kw):
        raise AssertionError("a simulator was started")
    monkeypatch.setattr("bspatial.sim.mujoco_backend.MujocoBackend.__init__", no_sim)
    args = dict(policy_spec="scripted", split="held_out", tasks=["reach_plate"], out=tmp_path / "run")
    args.update(kwargs)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_rollouts(**args)
    assert not (tmp_path / "run").exists()


def test_scripted_rollout_is_strict_correct(tmp_path):
    summary = run_rollouts("scripted", "held_out", REACH_TASKS, tmp_path, n_episodes=1)
    assert (summary.planned, summary.ran, summary.errors) == (3, 3, 0)
    results = load_results(tmp_path)
    assert [r["task"] for r in results] == sorted(REACH_TASKS)
    for r in results:
        assert (r["outcome"], r["status"], r["split"]) == ("correct", "decided", "held_out"), r["detail"]
        assert r["trace"]["task"] == r["task"] and len(r["trace"]["base_poses"]) == r["steps"]


def test_random_rollout_is_not_strict_correct(tmp_path):
    run_rollouts("random", "held_out", REACH_TASKS, tmp_path, n_episodes=1, max_steps=150)
    results = load_results(tmp_path)
    assert len(results) == 3
    assert all(r["outcome"] != "correct" and r["status"] != "error" for r in results)
    # Seeded: the same run elsewhere gives the same traces.
    run_rollouts("random", "held_out", REACH_TASKS, tmp_path / "again", n_episodes=1, max_steps=150)
    assert [r["trace"] for r in load_results(tmp_path / "again")] == [r["trace"] for r in results]


def test_killed_run_resumes_without_duplicates_or_losses(tmp_path, monkeypatch):
    real, calls = runner.run_one, []

    def dies_after_two(backend, episode, *args, **kwargs):
        if len(calls) == 2:
            raise KeyboardInterrupt  # the kill, between episodes
        calls.append(episode.key)
        return real(backend, episode, *args, **kwargs)

    monkeypatch.setattr(runner, "run_one", dies_after_two)
    with pytest.raises(KeyboardInterrupt):
        run_rollouts("random", "held_out", ["reach_plate", "reach_tool"], tmp_path, n_episodes=2, max_steps=5)
    first = {r["task"] + str(r["index"]): r for r in load_results(tmp_path)}
    assert len(first) == 2
    (tmp_path / "episodes" / ".reach_tool-0001.json.tmp123").write_text("{half")  # a write cut short
    monkeypatch.setattr(runner, "run_one", real)
    summary = run_rollouts("random", "held_out", ["reach_plate", "reach_tool"], tmp_path, n_episodes=2, max_steps=5)
    assert (summary.planned, summary.skipped_existing, summary.ran) == (4, 2, 2)
    keys = [(r["task"], r["index"]) for r in load_results(tmp_path)]
    assert sorted(keys) == [("reach_plate", 0), ("reach_plate", 1), ("reach_tool", 0), ("reach_tool", 1)]
    for key, r in first.items():  # finished episodes were not rerun
        assert r == {k["task"] + str(k["index"]): k for k in load_results(tmp_path)}[key]
    with pytest.raises(ValueError, match="other settings"):
        run_rollouts("random", "held_out", ["reach_plate"], tmp_path, n_episodes=2, max_steps=6)


def test_wrong_action_shape_records_an_error_and_the_run_goes_on(tmp_path, monkeypatch):
    real = runner.make_policy

    def broken(policy_spec, backend, instance, seed, latency_steps=0):
        if instance.task == "reach_plate":
            return lambda obs: np.zeros(7)
        return real(policy_spec, backend, instance, seed, latency_steps)

    monkeypatch.setattr(runner, "make_policy", broken)
    summary = run_rollouts("random", "held_out", ["reach_plate", "reach_tool"], tmp_path, n_episodes=1, max_steps=5)
    assert summary.errors == 1
    bad, good = load_results(tmp_path)
    assert (bad["task"], bad["status"], bad["outcome"], bad["trace"]) == ("reach_plate", "error", "none", None)
    assert "shape (23,)" in bad["message"] and "(7,)" in bad["message"]
    assert good["status"] == "timeout" and good["trace"] is not None


def test_worker_processes_write_the_same_files(tmp_path):
    summary = run_rollouts("random", "held_out", ["reach_plate", "reach_tool"], tmp_path / "two", n_episodes=1,
                           max_steps=20, workers=2)
    assert summary.ran == 2 and summary.errors == 0
    run_rollouts("random", "held_out", ["reach_plate", "reach_tool"], tmp_path / "one", n_episodes=1, max_steps=20)
    two, one = load_results(tmp_path / "two"), load_results(tmp_path / "one")
    assert [r["trace"] for r in two] == [r["trace"] for r in one]


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    import torch

    from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
    from bspatial.modeling.testing_utils import build_tiny_processor, tiny_policy_config
    from bspatial.sim.robot import PROPRIO_DIM

    config = tiny_policy_config(state_dim=PROPRIO_DIM)
    torch.manual_seed(0)
    model = BSpatialVLAForActionPrediction(config)
    qwen = build_tiny_processor()
    stats = {"observation.state": {"q01": [-3.0] * PROPRIO_DIM, "q99": [3.0] * PROPRIO_DIM},
             "action": {"q01": [-0.5] * 23, "q99": [0.5] * 23}}
    processor = BSpatialVLAProcessor.from_model_config(config, qwen.image_processor, qwen.tokenizer, stats)
    path = tmp_path_factory.mktemp("ckpt")
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


def test_checkpoint_policy_runs_through_the_controller(tmp_path, tiny_checkpoint):
    summary = run_rollouts(str(tiny_checkpoint), "held_out", ["reach_plate"], tmp_path, n_episodes=1, max_steps=12)
    (r,) = load_results(tmp_path)
    assert summary.errors == 0, r["message"]
    assert r["status"] in ("timeout", "decided", "sim_error") and r["outcome"] in ("none", "wrong", "correct")
    assert json.loads(result_path(tmp_path, plan_episodes("held_out", ["reach_plate"], 1)[0]).read_text()) == r
