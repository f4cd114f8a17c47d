"""LeRobot both ways: ``lerobot-eval --env.type=bspatial`` (the plugin) and ``bspatial rollout --policy lerobot:...``.

One ACT trained by the real ``lerobot-train`` on demos recorded here by ``bspatial demos`` serves both harnesses
(session fixture in conftest.py). Its 2 training steps teach it little, so its rates are near 0; the harnesses are shown to agree
by more than a rate: episode for episode, the traces lerobot-eval's episodes leave are the rollout's byte for
byte. That a strict success reaches lerobot-eval's ``pc_success`` is shown with the scripted
experts behind LeRobot's policy interface, on a cap where one of two episodes commits.
"""

import importlib.metadata
import json
import logging
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.evaluation.envs import BSpatialEnv
from bspatial.evaluation.envs.lerobot_env import BSpatialEnvConfig
from bspatial.evaluation.rollout.episodes import load_results
from bspatial.tasks.experts import make_expert

from .conftest import BIN, EVAL_STEPS, TASK, rollout_records, run_command, same_episodes, strict_rate

pytestmark = [pytest.mark.slow, pytest.mark.subprocess, pytest.mark.sim]


def test_the_plugin_distribution_is_installed():
    # lerobot-eval finds --env.type=bspatial only through an installed distribution named lerobot_env_*.
    try:
        importlib.metadata.distribution("lerobot_env_bspatial")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("lerobot_env_bspatial is not installed: pip install -e plugins/lerobot_env_bspatial (make venv)")


def _lerobot_eval(act_checkpoint, tmp_path, *options) -> Path:
    """Run the real ``lerobot-eval`` on TASK's first episodes (capped at EVAL_STEPS, seed 0, CPU) with ``options``;
    returns its output folder (records under ``records/``)."""
    evaluated = tmp_path / "lerobot-eval"
    run_command([BIN / "lerobot-eval", f"--policy.path={act_checkpoint / 'pretrained_model'}", "--env.type=bspatial",
                 f"--env.task={TASK}", f"--env.episode_length={EVAL_STEPS}", f"--env.record_dir={evaluated / 'records'}",
                 *options, "--seed=0", "--policy.device=cpu", f"--output_dir={evaluated}"], tmp_path)
    return evaluated


def test_lerobot_eval_and_rollout_play_the_same_episodes(act_checkpoint, tmp_path):
    # batch_size 1: a batch of 2 changes the network's float rounding (~1e-8 in the traces), not the episodes.
    evaluated = _lerobot_eval(act_checkpoint, tmp_path, "--eval.n_episodes=2", "--eval.batch_size=1")
    info = json.loads((evaluated / "eval_info.json").read_text())
    rollout = rollout_records("--policy", f"lerobot:{act_checkpoint}#select_action", "--n-episodes", 2,
                       "--max-steps", EVAL_STEPS, "--out", tmp_path / "rollout")
    assert [r["status"] in ("decided", "timeout") for r in rollout] == [True, True]   # no crash, no sim error
    assert info["overall"]["n_episodes"] == 2 and info["overall"]["pc_success"] == 100 * strict_rate(rollout)
    assert info["per_task"][0]["task_group"] == TASK
    assert info["per_task"][0]["metrics"]["successes"] == [r["outcome"] == "correct" for r in rollout]
    same_episodes(load_results(evaluated / "records"), rollout)


def test_lerobot_eval_with_a_perturbation_plays_the_rollouts_perturbed_episode(act_checkpoint, tmp_path):
    """``--env.perturbation=camera+noise``: the env draws the episode's camera offsets and noise as ``bspatial
    rollout --condition`` does, and renders the frames in the same order, so the ACT sees the same pixels on both
    paths and plays the same episode."""
    evaluated = _lerobot_eval(act_checkpoint, tmp_path, "--env.perturbation=noise+camera", "--eval.n_episodes=1",
                              "--eval.batch_size=1")
    rollout = rollout_records("--policy", f"lerobot:{act_checkpoint}#select_action", "--n-episodes", 1,
                              "--max-steps", EVAL_STEPS, "--condition", "camera+noise", "--out", tmp_path / "rollout")
    evaluated_records = load_results(evaluated / "records")
    assert evaluated_records[0]["condition"] == "camera+noise" and evaluated_records[0]["perturbation"]["camera"]
    same_episodes(evaluated_records, rollout)


def test_lerobot_eval_with_two_async_envs_plays_the_one_env_episodes(act_checkpoint, tmp_path):
    """--eval.batch_size 2 with async envs (two simulator processes, one batched policy call per step) against
    the rollout's one episode at a time: the same outcomes and steps; traces equal to float rounding (a batch of 2
    changes the network's rounding, about 1e-8, never an episode)."""
    evaluated = _lerobot_eval(act_checkpoint, tmp_path, "--eval.n_episodes=2", "--eval.batch_size=2",
                              "--eval.use_async_envs=true")
    rollout = rollout_records("--policy", f"lerobot:{act_checkpoint}#select_action", "--n-episodes", 2,
                              "--max-steps", EVAL_STEPS, "--out", tmp_path / "rollout")
    batched = load_results(evaluated / "records")
    assert [r["index"] for r in batched] == [0, 1]
    _same_up_to_rounding(batched, rollout)


def _same_up_to_rounding(left: list[dict], right: list[dict], atol: float = 1e-5) -> None:
    """The same outcomes, statuses, steps and soft credit; the arms' and the base's paths equal to ``atol`` metres
    (a network run at another batch size rounds differently in the last bits)."""
    for a, b in zip(left, right, strict=True):
        assert (a["outcome"], a["status"], a["steps"], a["soft_credit"]) == (b["outcome"], b["status"], b["steps"],
                                                                           b["soft_credit"])
        np.testing.assert_allclose(np.asarray(a["trace"]["eef_positions"], float),
                                   np.asarray(b["trace"]["eef_positions"], float), atol=atol)
        np.testing.assert_allclose(np.asarray(a["trace"]["base_poses"], float),
                                   np.asarray(b["trace"]["base_poses"], float), atol=atol)


def test_rollout_drives_a_lerobot_policy_through_the_chunk_controller(act_checkpoint, tmp_path):
    from lerobot.configs.policies import PreTrainedConfig
    from lerobot.envs.utils import preprocess_observation
    from lerobot.policies.act.modeling_act import ACTPolicy
    from lerobot.policies.factory import make_pre_post_processors

    from bspatial.evaluation.rollout.controller import ChunkedPolicy, REPLAN_THRESHOLD
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.evaluation.rollout.policies import check_policy_spec, make_policy
    from bspatial.tasks.episode import run_episode

    # What lerobot itself predicts on the env's first observation of held-out entry 0 (its own loading code).
    folder = str(act_checkpoint / "pretrained_model")
    act = ACTPolicy.from_pretrained(folder).eval()
    pre, post = make_pre_post_processors(PreTrainedConfig.from_pretrained(folder), pretrained_path=folder)
    env_pre, _ = BSpatialEnvConfig(task=TASK).get_env_processors()
    env = BSpatialEnv(TASK, n_episodes=1)
    try:
        obs, _ = env.reset(seed=0)
        with torch.inference_mode():
            batch = pre(env_pre({**preprocess_observation(obs), "task": [env.task]}))
            expected = post(act.predict_action_chunk(batch))[0].numpy()
        # The rollout's policy on the same episode (same simulator state: the env's, reset again by the loop).
        spec = check_policy_spec(f"lerobot:{act_checkpoint}")
        policy = make_policy(spec, env.backend, env.instance, RunSettings())
        assert isinstance(policy, ChunkedPolicy)
        applied = []
        # All 25 steps, even past a commitment: this test is about when the controller plans.
        result = run_episode(env.backend, env.instance, lambda o: applied.append(policy(o)) or applied[-1],
                             split="held_out", max_steps=25, stop_when_decided=False)
    finally:
        env.close()
    assert (result.status, result.steps, len(applied)) == ("timeout", 25, 25)
    # Appendix 16.3: a plan every REPLAN_THRESHOLD steps; until the second plan, the first chunk's rows.
    assert policy.calls == [0, REPLAN_THRESHOLD, 2 * REPLAN_THRESHOLD]
    np.testing.assert_allclose(np.array(applied[:REPLAN_THRESHOLD]), expected[:REPLAN_THRESHOLD], rtol=1e-6, atol=1e-6)
    assert not np.allclose(applied[REPLAN_THRESHOLD], expected[REPLAN_THRESHOLD])   # the second plan takes over
    # Through the CLI as well: the default (controller) mode runs and scores its episode.
    record, = rollout_records("--policy", f"lerobot:{act_checkpoint}", "--n-episodes", 1, "--max-steps", 12,
                       "--out", tmp_path / "controller")
    assert record["status"] in ("decided", "timeout") and record["outcome"] in ("correct", "wrong", "none")
    assert record["policy"] == f"lerobot:{(act_checkpoint / 'pretrained_model').resolve()}"


def test_batched_rollouts_of_a_lerobot_act_are_the_unbatched_ones(act_checkpoint, tmp_path, caplog):
    """Two workers, one server batching their chunk requests: ACT draws no noise, so the episodes are the
    one-process run's (outcomes, steps, chunks planned at the same steps; paths to float rounding: measured, a
    batch of 2 or one thread instead of two moves this ACT's actions by 3e-7 and its hands by 1.3e-5 m in 20
    steps; a chunk answered to the wrong worker would move them by centimetres)."""
    policy = f"lerobot:{act_checkpoint}"
    one = rollout_records("--policy", policy, "--n-episodes", 3, "--max-steps", EVAL_STEPS, "--out", tmp_path / "one")
    # A long wait: a request waits for the other worker's, so the two episodes running together share batches.
    with caplog.at_level(logging.INFO, logger="bspatial.evaluation.rollout.batching"):
        batched = rollout_records("--policy", policy, "--n-episodes", 3, "--max-steps", EVAL_STEPS, "--workers", 2,
                                  "--batch-inference", "--batch-wait-ms", 3000, "--out", tmp_path / "batched")
    assert re.search(r"batched inference: \d+ batches, mean size [\d.]+, max 2", caplog.text), caplog.text
    assert [r["index"] for r in batched] == [0, 1, 2]
    _same_up_to_rounding(one, batched, atol=1e-4)
    assert [r["inference_ms"]["calls"] for r in batched] == [r["inference_ms"]["calls"] for r in one]
    # select_action's queue belongs to one episode: refused before any episode, naming why.
    result = CliRunner().invoke(app, ["rollout", "--policy", f"{policy}#select_action", "--tasks", TASK, "--workers",
                                      2, "--batch-inference", "--out", str(tmp_path / "refused")])
    assert result.exit_code == 2 and "runs its own select_action (one action queue per episode)" in result.output
    assert not (tmp_path / "refused").exists()


def test_pixel_perturbations_reach_what_a_lerobot_policy_sees(act_checkpoint, tmp_path):
    """The ACT is deterministic given its inputs (the plain run repeated is the same, byte for byte): runs under
    ``noise`` and ``light`` differ from it only because the policy saw other pixels."""
    def path(name, condition):
        record, = rollout_records("--policy", f"lerobot:{act_checkpoint}", "--n-episodes", 1, "--max-steps", 12,
                                  "--condition", condition, "--out", tmp_path / name)
        return json.dumps(record["trace"]["eef_positions"])

    plain = path("plain", "spatial")
    assert path("again", "spatial") == plain
    assert path("noise", "noise") != plain
    assert path("light", "light") != plain


def _scripted_experts(vec_env):
    """Our scripted experts behind LeRobot's policy interface, one per sub-env of ``vec_env``: a stand-in for a
    trained policy that succeeds, to see a strict success reach lerobot-eval's pc_success."""
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.pretrained import PreTrainedPolicy

    class ScriptedExperts(PreTrainedPolicy):
        config_class, name = ACTConfig, "bspatial_scripted_experts"

        def __init__(self):
            super().__init__(ACTConfig())
            self.experts = None

        def reset(self):
            self.experts = None   # rebuilt on the first step, once lerobot-eval has reset the envs

        def select_action(self, batch):
            envs = [e.unwrapped for e in vec_env.envs]
            if self.experts is None:
                self.experts = [make_expert(e.backend, e.instance) for e in envs]
            rows = [x(e.policy_observation) if e.episode_record is None else e.backend.hold_action()
                    for x, e in zip(self.experts, envs)]
            return torch.as_tensor(np.stack(rows))   # float64, as the rollout hands the experts' actions over

        def predict_action_chunk(self, batch):
            raise NotImplementedError

        def forward(self, batch):
            raise NotImplementedError

        def get_optim_params(self):
            return {}

    return ScriptedExperts()


def test_lerobot_eval_counts_a_strict_success_as_the_rollout_does(tmp_path):
    from lerobot.scripts.lerobot_eval import eval_policy_all

    # Cap the budget one step short of the longer of two scripted episodes: exactly one of them commits.
    full = rollout_records("--policy", "scripted", "--n-episodes", 2, "--out", tmp_path / "full")
    assert [r["outcome"] for r in full] == ["correct", "correct"] and full[0]["steps"] != full[1]["steps"]
    cap = max(r["steps"] for r in full) - 1
    rollout = rollout_records("--policy", "scripted", "--n-episodes", 2, "--max-steps", cap, "--out", tmp_path / "capped")
    assert strict_rate(rollout) == 0.5

    config = BSpatialEnvConfig(task=TASK, episode_length=cap, camera_names="head", image_size=64,
                               record_dir=str(tmp_path / "records"))
    envs = config.create_envs(n_envs=2)   # both episodes side by side in one vector env
    env_pre, env_post = config.get_env_processors()
    info = eval_policy_all(envs, _scripted_experts(envs[TASK][0]), env_pre, env_post, lambda b: b, lambda a: a,
                           n_episodes=2, start_seed=0)
    assert info["overall"]["pc_success"] == 100 * strict_rate(rollout) == 50.0
    assert info["per_task"][0]["metrics"]["successes"] == [r["outcome"] == "correct" for r in rollout]
    # The scripted rollout chose per step; lerobot-eval's records say select_action (what it runs).
    assert {r["protocol"] for r in rollout} == {"per_step"}
    assert {r["protocol"] for r in load_results(tmp_path / "records")} == {"select_action"}
    same_episodes(load_results(tmp_path / "records"), rollout, ignore=("policy", "protocol"))


@pytest.mark.parametrize("kwargs, message", [
    (dict(task="reach_moon"), "env.task='reach_moon' (env.split=None): unknown task 'reach_moon'"),
    (dict(task="move_to_fridge", split="held_out"), "unknown task 'move_to_fridge'; known tasks for split 'held_out'"),
    (dict(task="reach_plate", camera_names="head,tail"), "env.camera_names must be distinct names from"),
    (dict(task="reach_plate", fps=10), "env.fps must be the simulator's control rate 30, got 10"),
    (dict(task="reach_plate", episode_length=0), "env.episode_length must be an int >= 1 (or None: the budget), got 0"),
    (dict(task="reach_plate", image_size=1000), "env.image_size must be an int in 1..720, got 1000"),
])
def test_env_config_refuses_bad_fields_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        BSpatialEnvConfig(**kwargs)


def test_env_config_builds_one_env_per_task_with_the_demos_keys():
    config = BSpatialEnvConfig(task="all", split="prompt_probe")
    names = config.task_names()
    assert len(names) == 14 and "place_saucer" not in names   # Table S2: 14 tasks with prompt probes
    assert BSpatialEnvConfig(task="reach_plate, move_to_fridge").task_names() == ["reach_plate", "move_to_fridge"]
    assert config.features_map["pixels/head"] == "observation.images.rgb.head"
    assert config.features["agent_pos"].shape == (84,) and config.features["action"].shape == (23,)
    envs = BSpatialEnvConfig(task="reach_plate,move_to_fridge", episode_length=5).create_envs(n_envs=1)
    try:
        assert list(envs) == ["reach_plate", "move_to_fridge"]
        navigation = envs["move_to_fridge"][0].envs[0].unwrapped
        assert (navigation.split, navigation._max_episode_steps) == ("navigation", 5)
    finally:
        for group in envs.values():
            group[0].close()
    with pytest.raises(ValueError, match="env.task is required"):
        BSpatialEnvConfig().create_envs(n_envs=1)


def test_lerobot_eval_inputs_carry_each_camera_under_its_demo_key():
    from lerobot.envs.utils import preprocess_observation

    obs = {"pixels": {"head": np.full((4, 4, 3), 51, np.uint8), "left_wrist": np.full((4, 4, 3), 102, np.uint8),
                      "right_wrist": np.full((4, 4, 3), 153, np.uint8)},
           "agent_pos": np.arange(84, dtype=np.float32)}
    env_pre, _ = BSpatialEnvConfig(task=TASK).get_env_processors()
    batch = env_pre({**preprocess_observation(obs), "task": ["reach the plate"]})   # as lerobot-eval's loop
    for camera, value in (("head", 0.2), ("left_wrist", 0.4), ("right_wrist", 0.6)):
        image = batch[f"observation.images.rgb.{camera}"]
        assert image.shape == (1, 3, 4, 4) and torch.allclose(image, torch.full_like(image, value))
    assert batch["observation.state"].tolist() == [list(range(84))] and batch["task"] == ["reach the plate"]
    assert not any(k.startswith("observation.images.") and ".rgb." not in k for k in batch)
