"""The gymnasium env: the rollout's episodes, loop and rules; ids for the 25 tasks; bad input refused by name."""

import json

import gymnasium as gym
import numpy as np
import pytest
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.evaluation.envs import BSpatialEnv, env_id, register_envs
from bspatial.evaluation.rollout.plan import plan_episodes
from bspatial.tasks.experts import make_expert

pytestmark = [pytest.mark.slow]


def _rollout_record(tmp_path, split, task, *extra):
    """The result file `bspatial rollout --policy scripted` writes for the first manifest entry of ``task``."""
    out = tmp_path / "rollout"
    args = ["rollout", "--policy", "scripted", "--split", split, "--tasks", task, "--n-episodes", "1",
            "--out", str(out), "--no-progress", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    files = sorted((out / "episodes").glob("*.json"))
    assert len(files) == 1
    return json.loads(files[0].read_text())


def _drive_with_the_expert(env):
    """Step ``env`` with the scripted expert built on its simulator, as `bspatial rollout` builds it."""
    expert = make_expert(env.backend, env.instance)
    steps = 0
    while True:
        obs, reward, terminated, truncated, info = env.step(expert(env.policy_observation))
        steps += 1
        assert obs["agent_pos"].dtype == np.float32 and env.observation_space.contains(obs)
        if terminated or truncated:
            return steps, reward, terminated, truncated, info
        assert not info["is_success"] and info["outcome"] is None   # nothing is scored before the end


@pytest.mark.parametrize("split, task, max_steps, perturbation", [
    ("held_out", "reach_dice", None, None),               # reach: ends on the first contact
    ("held_out", "place_bowl_in_cabinet", None, None),    # container placement: ends once the release settles
    ("navigation", "move_to_fridge", 120, None),          # navigation, truncated at --max-steps
    # Perturbed: the env draws the episode's perturbation as the rollout does (the same record, draws included).
    ("held_out", "reach_dice", None, "robot_state+light+noise"),
])
def test_expert_driven_env_episode_is_the_scripted_rollout_record(tmp_path, split, task, max_steps, perturbation):
    extra = ([] if max_steps is None else ["--max-steps", str(max_steps)]) + (
        [] if perturbation is None else ["--condition", perturbation])
    expected = _rollout_record(tmp_path, split, task, *extra)
    if perturbation is not None:
        assert expected["condition"] == "light+noise+robot_state" and expected["perturbation"]["axes"] == [
            "light", "noise", "robot_state"]
    # The rollout renders nothing, the env a frame every step: equal records show rendering never moves the
    # simulator. One small camera keeps the test fast (the frame size cannot change the physics).
    cameras = ("head",)
    env = BSpatialEnv(task, split, cameras=cameras, max_steps=max_steps, image_size=64, perturbation=perturbation)
    try:
        obs, info = env.reset(seed=0)
        assert (info["episode_index"], info["task"], env.task_description) == (0, expected["instruction"],
                                                                             expected["instruction"])
        assert set(obs["pixels"]) == set(cameras) and obs["pixels"]["head"].shape == (64, 64, 3)
        steps, reward, terminated, truncated, info = _drive_with_the_expert(env)
        record = json.loads(json.dumps(env.episode_record))   # what a result file holds
    finally:
        env.close()
    # Who chose the actions aside (the env's records cannot know: "caller"; the scripted rollout's: "per_step").
    assert (record["protocol"], expected["protocol"]) == ("caller", "per_step")
    ignored = ("policy", "protocol")
    assert {k: v for k, v in record.items() if k not in ignored} == {k: v for k, v in expected.items() if k not in ignored}
    assert json.dumps(record["trace"]) == json.dumps(expected["trace"])   # byte-equal trace
    assert steps == expected["steps"]
    assert (terminated, truncated) == (expected["status"] == "decided", expected["status"] == "timeout")
    assert info["is_success"] == (expected["outcome"] == "correct") and reward == float(info["is_success"])
    assert (info["outcome"], info["soft_credit"], info["failure_mode"]) == (
        expected["outcome"], expected["soft_credit"], expected["failure_mode"])
    if max_steps is None:   # the expert commits: a strict success, as the paper's oracle
        assert (expected["status"], expected["outcome"], info["is_success"]) == ("decided", "correct", True)


def test_seeds_and_options_pick_manifest_entries():
    env = BSpatialEnv("reach_plate", n_episodes=3, max_steps=2, cameras=("head",))
    plan = plan_episodes("held_out", ["reach_plate"], 3)
    try:
        picks = []
        for kwargs in (dict(seed=4), dict(), dict(options={"episode_index": 0}), dict(seed=2)):
            _, info = env.reset(**kwargs)
            picks.append(info["episode_index"])
            assert (env.episode.variant, env.episode.seed) == (plan[info["episode_index"]].variant, plan[info["episode_index"]].seed)
            assert env.instance.instruction == info["task"]
        assert picks == [1, 2, 0, 2]   # seed % 3; a bare reset takes the next entry
        hold = env.backend.hold_action()
        env.step(hold)
        _, reward, terminated, truncated, info = env.step(hold)
        assert (terminated, truncated, reward, info["is_success"], info["status"]) == (False, True, 0.0, False, "timeout")
        with pytest.raises(RuntimeError, match="has ended .*call reset"):
            env.step(hold)
        with pytest.raises(ValueError, match=r"options\['episode_index'\] must be an int in 0..2 .*got 3"):
            env.reset(options={"episode_index": 3})
        env.reset(seed=0)
        with pytest.raises(ValueError, match=r"action must have shape \(23,\), got shape \(7,\)"):
            env.step(np.zeros(7))
    finally:
        env.close()


@pytest.mark.parametrize("kwargs, message", [
    (dict(task="reach_moon"), "task: unknown task 'reach_moon'"),
    (dict(task="place_saucer", split="held_out"), "task 'place_saucer' has no held_out episodes"),
    (dict(task="reach_plate", split="navigation"), "unknown task 'reach_plate'; known tasks for split 'navigation'"),
    (dict(task="reach_plate", split="test"), "unknown split 'test'"),
    (dict(task="reach_plate", cameras=("head", "tail")), "cameras must be distinct names from"),
    (dict(task="reach_plate", image_size=0), "image_size must be an int in 1..720, got 0"),
    (dict(task="reach_plate", max_steps=0), "max_steps must be an int >= 1 or None, got 0"),
    (dict(task="reach_plate", render_mode="human"), "render_mode must be one of ['rgb_array'] or None, got 'human'"),
    (dict(task="reach_plate", perturbation="camera+lights"), "perturbation: unknown condition 'lights'"),
    (dict(task="reach_plate", perturbation="paraphrase"), "perturbation must be axes from camera, light"),
])
def test_bad_arguments_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        BSpatialEnv(**kwargs)


def test_step_before_reset_is_refused():
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        BSpatialEnv("reach_plate").step(np.zeros(23))


def test_registered_ids_cover_the_25_tasks_and_make_envs():
    ids = register_envs()
    assert len(ids) == len(set(ids)) == 25 and register_envs() == ids   # idempotent
    assert {"bspatial/ReachPlate-v0", "bspatial/PlaceSaucer-v0", "bspatial/MoveToTableNearSofa-v0"} <= set(ids)
    assert env_id("place_bowl") == "bspatial/PlaceBowlInCabinet-v0"
    env = gym.make("bspatial/PlaceSaucer-v0", n_episodes=1, max_steps=1)
    try:
        # place_saucer is evaluated in no split (Table S2): its env serves the training scenes.
        assert (env.unwrapped.split, env.unwrapped._max_episode_steps) == ("training", 1)
        obs, info = env.reset(seed=0)
        assert info["task_name"] == "place_saucer" and env.render().shape == (224, 224, 3)
        _, _, terminated, truncated, info = env.step(env.unwrapped.backend.hold_action())
        assert truncated and not terminated and env.unwrapped.episode_record["trace"]["split"] == "train"
    finally:
        env.close()


def test_a_perturbed_env_shows_other_pixels_and_the_same_ones_again_on_the_same_episode():
    plain = BSpatialEnv("reach_plate", n_episodes=1, max_steps=2, cameras=("head",), image_size=64)
    perturbed = BSpatialEnv("reach_plate", n_episodes=1, max_steps=2, cameras=("head",), image_size=64,
                            perturbation="light+noise")
    try:
        reference = plain.reset(seed=0)[0]["pixels"]["head"]
        first = perturbed.reset(seed=0)[0]["pixels"]["head"].copy()
        again = perturbed.reset(seed=0)[0]["pixels"]["head"]
    finally:
        plain.close()
        perturbed.close()
    assert np.abs(first.astype(int) - reference).mean() > 2.0   # tinted, dimmed or brightened, and noisy
    np.testing.assert_array_equal(first, again)                  # drawn per episode, noise included
