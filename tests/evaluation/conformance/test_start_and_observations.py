"""Nothing differs between the demonstrations and the rollouts (issue 33): the start state, the replay check and
the observation check.

One reach demonstration is recorded here by ``bspatial demos`` (module fixture). Its actions replayed through
``bspatial rollout --policy replay:`` reproduce its outcome; the observation a policy receives at step t through
``bspatial rollout``, ``lerobot-eval``'s loop and the openpi server equals the dataset's frame t. The other task
families' replays are checked on the experts' actions (physics only: rendering does not touch the physics, and
``benchmarks/replay.py`` replays recorded datasets of every family).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bspatial.catalog.schema import ACTION_DIM, GRIPPER_DIMS, PROPRIO_SLICES, STATE_DIM
from bspatial.cli import app

pytestmark = [pytest.mark.slow, pytest.mark.sim]

TASK = "reach_plate"


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> Path:
    from bspatial.construction.demonstrations.demos import record_demos

    return record_demos(tmp_path_factory.mktemp("demos") / "out", tasks=[TASK], episodes_per_task=1, seed=0)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    """A tiny random BSpatialVLA reading all three cameras and the 84-dim state (its outputs are not used)."""
    import torch

    from bspatial.modeling import BSpatialVLAForActionPrediction, BSpatialVLAProcessor
    from bspatial.modeling.tiny_backbone import build_tiny_processor, tiny_policy_config

    path = tmp_path_factory.mktemp("ckpt")
    config = tiny_policy_config(state_dim=STATE_DIM)
    torch.manual_seed(0)
    model = BSpatialVLAForActionPrediction(config)
    qwen = build_tiny_processor()
    stats = {"observation.state": {"q01": [-3.0] * STATE_DIM, "q99": [3.0] * STATE_DIM},
             "action": {"q01": [-1.5] * ACTION_DIM, "q99": [1.5] * ACTION_DIM}}
    BSpatialVLAProcessor.from_model_config(config, qwen.image_processor, qwen.tokenizer, stats).save_pretrained(path)
    model.save_pretrained(path)
    return path


def _provenance(root: Path) -> dict:
    return json.loads((root / "meta" / "bspatial_demos.json").read_text())


def test_a_rollout_starts_where_the_demonstration_starts(demos):
    """Step 0 of a rollout (any policy: here `hold`) shows the grippers the demonstration's first frame shows."""
    import pandas as pd

    from bspatial.evaluation.rollout.episodes import load_instance
    from bspatial.evaluation.rollout.plan import plan_episodes
    from bspatial.sim.mujoco_backend import MujocoBackend

    first = pd.read_parquet(next((demos / "data").rglob("*.parquet"))).iloc[0]
    state0 = np.asarray(first["observation.state"], np.float32)
    sides = [PROPRIO_SLICES["left_gripper"].start, PROPRIO_SLICES["right_gripper"].start]
    assert state0[sides].tolist() == pytest.approx([-1.0, -1.0], abs=1e-3)   # closed, as the expert's first action
    [episode] = plan_episodes("training", [TASK], 1)
    assert episode.seed == _provenance(demos)["episodes"][0]["scene_seed"]
    backend = MujocoBackend()
    try:
        load_instance(backend, episode)
        np.testing.assert_array_equal(np.asarray(backend.robot_state().proprio, np.float32), state0)
        hold = backend.hold_action()
        assert hold[list(GRIPPER_DIMS)].tolist() == pytest.approx([-1.0, -1.0], abs=1e-3)   # `hold` keeps them closed
    finally:
        backend.close()


def test_replaying_the_demonstration_through_bspatial_rollout_reproduces_its_outcome(demos, tmp_path):
    out = tmp_path / "replay"
    result = CliRunner().invoke(app, ["rollout", "--policy", f"replay:{demos}", "--split", "training", "--tasks",
                                      TASK, "--n-episodes", "2", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    replayed, unrecorded = [json.loads(p.read_text()) for p in sorted((out / "episodes").glob("*.json"))]
    row = _provenance(demos)["episodes"][0]
    assert (replayed["seed"], replayed["variant"]) == (row["scene_seed"], row["variant"])
    assert replayed["outcome"] == "correct" and replayed["status"] == "decided"
    assert replayed["steps"] == row["length"]   # committed on the very step the recording did
    assert replayed["protocol"] == "per_step"
    # The second training entry was never recorded: nothing to replay, and the tables leave it out.
    assert unrecorded["status"] == "not_applicable" and "no demonstration" in unrecorded["message"]


def test_replay_refuses_a_folder_that_is_not_a_demos_dataset(tmp_path):
    result = CliRunner().invoke(app, ["rollout", "--policy", f"replay:{tmp_path}", "--split", "training", "--tasks",
                                      TASK, "--n-episodes", "1", "--out", str(tmp_path / "out"), "--no-progress"])
    assert result.exit_code != 0 and "bspatial_demos.json" in " ".join(result.output.split())


def test_every_path_gives_the_policy_the_demonstrations_frame(demos, checkpoint):
    from bspatial.evaluation.conformance.observations import PATHS, check_observations

    length = _provenance(demos)["episodes"][0]["length"]
    steps = [0, 1, 40, length - 1]
    report = check_observations(demos, 0, checkpoint, steps=steps)
    assert set(report.paths) == set(PATHS)
    for path, path_report in report.paths.items():
        assert path_report.problems == [], path
        assert path_report.state_max_abs == 0.0   # the state exactly
        assert 0 < path_report.pixel_mean_abs < 4   # the codec's loss (measured 1.1-2.7), not nothing
        assert path_report.pixel_mean_abs < path_report.pixel_neighbour_mean_abs   # frame t, not t - 1 or t + 1
    assert report.cross_path_problems == [] and report.passed


def test_the_observation_check_fails_a_rollout_that_starts_from_the_spawn(demos, checkpoint, monkeypatch):
    """The start this issue fixed: rollouts began with the spawn's open grippers. Put back, the check names it."""
    import bspatial.tasks.episode as episode_module
    from bspatial.evaluation.conformance.observations import check_observations

    monkeypatch.setattr(episode_module, "warm_up", lambda backend, instance: 0)
    report = check_observations(demos, 0, checkpoint, steps=[0], paths=["rollout"])
    [problem, *_] = report.paths["rollout"].problems
    assert not report.passed and problem.startswith("step 0: state differs from the dataset's")
    gripper_dims = {PROPRIO_SLICES["left_gripper"].start, PROPRIO_SLICES["right_gripper"].start}
    assert gripper_dims & set(json.loads(problem.split("at dims ")[1].rstrip(")")))


@pytest.mark.parametrize("task", ["place_carving_knife", "place_bowl_in_cabinet", "move_to_bookcase"])
def test_replayed_expert_actions_reproduce_the_outcome_in_every_family(task):
    """Directional placement, container placement and navigation: the expert's actions, replayed open loop from the
    start state on a fresh load of the same training instance, give the same trace and outcome."""
    from bspatial.evaluation.rollout.episodes import load_instance
    from bspatial.evaluation.rollout.plan import plan_episodes
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks.episode import run_episode
    from bspatial.tasks.experts import make_expert

    [episode] = plan_episodes("training", [task], 1)
    backend = MujocoBackend(camera_size=16)
    try:
        instance, _ = load_instance(backend, episode)
        expert, actions = make_expert(backend, instance), []

        def recording(observation):
            actions.append(np.asarray(expert(observation), np.float32))   # float32, as the dataset stores them
            return actions[-1]

        recorded = run_episode(backend, instance, recording)
        assert recorded.outcome.outcome == "correct"
        instance, _ = load_instance(backend, episode)
        replayed = run_episode(backend, instance, lambda observation: actions[observation.step])
        assert replayed.steps == recorded.steps and replayed.outcome.outcome == "correct"
        assert json.dumps(replayed.trace.to_dict()) == json.dumps(recorded.trace.to_dict())
    finally:
        backend.close()
