"""``--policy lerobot:<checkpoint>``: what is refused before any episode, and the hint for a bare LeRobot folder.

Loading and running a real lerobot-train checkpoint is tested in tests/evaluation/envs/test_lerobot.py (one
trained ACT serves both harnesses there).
"""

import json

import pytest

from bspatial.evaluation.rollout.policies import check_policy_spec
from bspatial.evaluation.envs.policy_lerobot import CHECKPOINT_FILES, parse_target

ACT_FEATURES = {
    "input_features": {"observation.images.rgb.head": {"type": "VISUAL", "shape": [3, 224, 224]},
                       "observation.state": {"type": "STATE", "shape": [84]}},
    "output_features": {"action": {"type": "ACTION", "shape": [23]}},
}


def _checkpoint(folder, **config):
    """A folder with lerobot-train's pretrained_model file names; only config.json has content (the checks
    before an episode read nothing else)."""
    folder.mkdir(parents=True)
    for name in CHECKPOINT_FILES:
        (folder / name).write_text("{}")
    (folder / "config.json").write_text(json.dumps({"type": "act", "n_obs_steps": 1, "chunk_size": 32,
                                                    "device": "cpu", **ACT_FEATURES, **config}))
    return folder


def test_a_valid_checkpoint_is_normalised_with_its_options(tmp_path):
    folder = _checkpoint(tmp_path / "run" / "checkpoints" / "000002" / "pretrained_model")
    assert check_policy_spec(f"lerobot:{folder}") == f"lerobot:{folder.resolve()}"
    # lerobot-train's step folder resolves to its pretrained_model/; options are kept in a fixed order.
    assert (check_policy_spec(f"lerobot:{folder.parent}#device=cpu,select_action")
            == f"lerobot:{folder.resolve()}#select_action,device=cpu")
    assert parse_target("ckpt#select_action#device=cpu") == ("ckpt", True, "cpu")


@pytest.mark.parametrize("config, option, message", [
    ({"type": None}, "", "config.json has no policy 'type'"),
    ({"input_features": {"observation.images.top": {"type": "VISUAL", "shape": [3, 96, 96]}}}, "",
     "reads image 'observation.images.top', which the simulator does not render; its cameras are "
     "observation.images.rgb.head, observation.images.rgb.left_wrist"),
    ({"input_features": {"observation.state": {"type": "STATE", "shape": [14]}}}, "",
     "reads observation.state of shape (14,); the simulator's state has (84,)"),
    ({"output_features": {"action": {"type": "ACTION", "shape": [7]}}}, "", "outputs action of shape (7,)"),
    ({"type": "diffusion", "n_obs_steps": 2}, "", "n_obs_steps=2 observations, which the chunk controller does not "
                                                  "keep; run it with its own queue: lerobot:"),
    ({"type": "tdmpc", "chunk_size": None}, "", "declares no action chunk"),
    ({}, "#fast", "unknown option 'fast'; options: select_action, device=<torch device>"),
    ({}, "#device=npu", "runs on device 'npu', which this machine lacks; add #device=cpu"),
])
def test_checkpoints_the_simulator_cannot_run_are_refused_by_name(tmp_path, config, option, message):
    folder = _checkpoint(tmp_path / "ckpt", **config)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_policy_spec(f"lerobot:{folder}{option}")


def test_a_history_policy_runs_with_its_own_queue(tmp_path):
    folder = _checkpoint(tmp_path / "ckpt", type="diffusion", n_obs_steps=2, chunk_size=None, n_action_steps=8)
    assert check_policy_spec(f"lerobot:{folder}#select_action").endswith("#select_action")


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "absent", "no such folder"),
    (lambda tmp: tmp, "lacks config.json, model.safetensors, policy_preprocessor.json, policy_postprocessor.json"),
    (lambda tmp: (tmp / "file").write_text("x") and tmp / "file", "is a file; expected a LeRobot checkpoint folder"),
])
def test_missing_checkpoints_are_named(tmp_path, make, message):
    with pytest.raises(ValueError, match=message):
        check_policy_spec(f"lerobot:{make(tmp_path)}")


def test_hub_ids_come_only_from_the_local_cache():
    with pytest.raises(ValueError, match=r"no Hub repo of that id in the local cache \(download it first: hf download "
                                         r"someone/act_policy\)"):
        check_policy_spec("lerobot:someone/act_policy")


def test_a_bare_lerobot_folder_is_told_to_use_the_lerobot_prefix(tmp_path):
    folder = _checkpoint(tmp_path / "train" / "checkpoints" / "000002" / "pretrained_model")
    for spec in (folder, folder.parent):   # pretrained_model/ itself, and lerobot-train's step folder
        with pytest.raises(ValueError, match=f"it is a LeRobot 'act' policy checkpoint: run it as lerobot:{spec}"):
            check_policy_spec(str(spec))
