"""Demonstrations a user can trust (issue 17, item 5), checked on one freshly recorded set (a reach and a
navigation episode): strict-JSON finite statistics, the oracle IR target outside ``observation.*`` with its mask,
per-dimension names, grippers settled before the first frame, the base velocity ramp, the dataset card, lerobot's
own loading and normalisation, our IR-conditioned training on the set, and ``lerobot-doctor`` (the real PyPI
package, from a cached venv of its own)."""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from bspatial.catalog.schema import (ACTION_KEY, ACTION_NAMES, ACTION_SLICES, CONTROL_HZ, GRIPPER_DIMS, PROPRIO_SLICES,
                                     STATE_KEY, STATE_NAMES)
from bspatial.construction.demonstrations.demos import (CARD_FILE, GRIPPER_SETTLE_TOL, IR_TARGET_FILL, ORACLE_IR_TARGET_KEY,
                                         ORACLE_IR_VALID_KEY, record_demos)

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

REACH, NAV = "reach_plate", "move_to_bookcase"   # the shortest reach episode; a navigation one (no IR target, turns)
LEROBOT_DOCTOR = "lerobot-doctor==0.2.0"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return record_demos(tmp_path_factory.mktemp("trust") / "demos", tasks=[REACH, NAV], episodes_per_task=1, seed=0)


def _frames(root: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted((root / "data").rglob("*.parquet"))], ignore_index=True)


def _episodes(root: Path):
    for _, frames in _frames(root).groupby("episode_index"):
        yield np.stack(frames[STATE_KEY].to_numpy()), np.stack(frames[ACTION_KEY].to_numpy()), frames


def _strict_json(text: str):
    def refuse(token):
        raise ValueError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


# ----------------------------------------------------------------------------- statistics and the IR target


def test_stats_are_strict_json_and_finite_for_every_feature(root):
    stats = _strict_json((root / "meta" / "stats.json").read_text())   # NaN / Infinity tokens raise
    info = json.loads((root / "meta" / "info.json").read_text())
    numeric = [k for k, f in info["features"].items() if f["dtype"] != "string"]
    assert sorted(stats) == sorted(numeric)
    for key, entry in stats.items():
        for name, value in entry.items():
            assert np.all(np.isfinite(np.asarray(value, np.float64))), f"{key}/{name} is not finite"


def test_oracle_ir_target_is_a_masked_label_outside_the_policy_inputs(root):
    from lerobot.utils.feature_utils import dataset_to_policy_features

    info = json.loads((root / "meta" / "info.json").read_text())
    assert "observation.ir_target" not in info["features"]
    assert info["features"][ORACLE_IR_TARGET_KEY]["shape"] == [2]
    assert info["features"][ORACLE_IR_VALID_KEY]["shape"] == [1]
    inputs = dataset_to_policy_features(info["features"])   # what lerobot policies take as inputs and outputs
    assert not [k for k in inputs if "ir_target" in k]
    frames = _frames(root)
    provenance = json.loads((root / "meta" / "bspatial_demos.json").read_text())
    task_of = {row["episode_index"]: row["task_name"] for row in provenance["episodes"]}
    targets, valid = np.stack(frames[ORACLE_IR_TARGET_KEY].to_numpy()), frames[ORACLE_IR_VALID_KEY].to_numpy()
    reach = frames["episode_index"].map(task_of).eq(REACH).to_numpy()
    assert (valid[reach] == 1.0).all() and (valid[~reach] == 0.0).all()   # reach targets stay in view; nav has none
    assert np.isfinite(targets).all() and ((targets >= 0) & (targets < 224)).all()
    assert (targets[~reach] == IR_TARGET_FILL).all()


# ----------------------------------------------------------------------------- names, grippers, base ramp


def test_state_and_action_have_per_dimension_names(root):
    features = json.loads((root / "meta" / "info.json").read_text())["features"]
    state, action = features[STATE_KEY]["names"], features[ACTION_KEY]["names"]
    assert len(state) == 84 == len(set(state)) and len(action) == 23 == len(set(action))
    assert state == list(STATE_NAMES) and action == list(ACTION_NAMES)
    assert [action[i] for i in GRIPPER_DIMS] == ["left_gripper", "right_gripper"]
    assert action[ACTION_SLICES["base"]] == ["base_vx", "base_vy", "base_wz"]
    assert state[PROPRIO_SLICES["left_arm_qpos"]][0] == "left_arm_joint_1_pos"


def test_first_frame_grippers_equal_the_first_action_command(root):
    sides = [PROPRIO_SLICES["left_gripper"].start, PROPRIO_SLICES["right_gripper"].start]
    commands = []
    for state, action, _ in _episodes(root):
        np.testing.assert_allclose(state[0, sides], action[0, list(GRIPPER_DIMS)], rtol=0, atol=GRIPPER_SETTLE_TOL)
        commands.append(action[0, list(GRIPPER_DIMS)].tolist())
    assert commands == [[-1.0, -1.0], [1.0, 1.0]]   # reach closes both hands first; navigation keeps them open
    settle = [row["settle"] for row in json.loads((root / "meta" / "bspatial_demos.json").read_text())["episodes"]]
    assert settle[0]["steps"] > 0 and settle[1]["steps"] == 0


def test_base_velocity_command_ramps_within_the_acceleration_limit(root):
    from bspatial.tasks.experts.motion import BASE_MAX_ACCEL_M_S2, BASE_MAX_YAW_ACCEL_RAD_S2

    for state, action, _ in _episodes(root):
        base = np.vstack([np.zeros((1, 3)), action[:, ACTION_SLICES["base"]].astype(np.float64)])   # from rest
        step = np.diff(base, axis=0)
        assert np.linalg.norm(step[:, :2], axis=1).max() <= BASE_MAX_ACCEL_M_S2 / CONTROL_HZ + 1e-6
        assert np.abs(step[:, 2]).max() <= BASE_MAX_YAW_ACCEL_RAD_S2 / CONTROL_HZ + 1e-6
        assert np.linalg.norm(base[:, :2], axis=1).max() > 0.3      # the base did drive (to cruise speed or near)
        # The simulated base follows the command: its measured velocity ramps too.
        measured = np.vstack([np.zeros((1, 2)), state[:, PROPRIO_SLICES["base_velocity"]][:, :2].astype(np.float64)])
        assert np.linalg.norm(np.diff(measured, axis=0), axis=1).max() <= 2 * BASE_MAX_ACCEL_M_S2 / CONTROL_HZ


def test_base_ramp_clips_to_the_base_limits_and_keeps_the_direction():
    from bspatial.sim.robot import BASE_MAX_YAW_RATE
    from bspatial.tasks.experts.motion import BaseVelocityRamp

    ramp = BaseVelocityRamp(max_accel=3.0, max_yaw_accel=30.0)
    wanted = np.zeros(23)
    wanted[:3] = (0.3, 0.4, 5.0)          # 0.5 m/s at 53 deg; 5 rad/s is past the base's 1.5 rad/s
    wanted[14] = -1.0
    out = [ramp(wanted) for _ in range(12)]
    np.testing.assert_allclose(out[0][:2], (0.06, 0.08))              # 0.1 m/s along the wanted direction
    np.testing.assert_allclose(out[-1][:3], (0.3, 0.4, BASE_MAX_YAW_RATE))
    assert all(np.array_equal(o[3:], wanted[3:]) for o in out)         # only the base is touched
    with pytest.raises(ValueError, match="accelerations must be positive"):
        BaseVelocityRamp(max_accel=0.0)


# ----------------------------------------------------------------------------- the card


def test_dataset_card_describes_the_set(root):
    card = (root / CARD_FILE).read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["task_categories"] == ["robotics"] and "LeRobot" in front["tags"]
    assert front["configs"] == [{"config_name": "default", "data_files": "data/*/*.parquet"}]
    for section in ("## Origin", "## Robot", "## Cameras", "## Tasks and episodes", "## Features",
                    "## Oracle IR target", "## Recording conventions", "## Limitations", "## Load", "## Provenance"):
        assert f"\n{section}\n" in card, section
    for fact in ("MuJoCo household simulator", "not BEHAVIOR-1K / OmniGibson", "Synthetic",
                 "scripted privileged experts", "R1Pro",
                 "| head | `observation.images.rgb.head` | 224 x 224 | 30 | av1 |",
                 f"| `{REACH}` | 1 |", f"| `{NAV}` | 1 |", "| `observation.state` | float32 | (84,) |",
                 "left_arm_joint_7_pos", "base_vx, base_vy, base_wz",
                 "| `oracle.ir_target_valid` | float32 | (1,) | valid |",
                 f"--task {REACH} --task {NAV} --episodes-per-task 1 --seed 0"):
        assert fact in card, fact
    assert "$" not in card


# ----------------------------------------------------------------------------- lerobot and our training read it


def test_lerobot_loads_the_set_and_its_normalisation_is_finite(root):
    import torch
    from lerobot.configs.types import FeatureType, NormalizationMode, PolicyFeature
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.factory import make_pre_post_processors
    from lerobot.processor import NormalizerProcessorStep
    from lerobot.utils.feature_utils import dataset_to_policy_features

    dataset = LeRobotDataset("local/demos", root=root,
                             delta_timestamps={ACTION_KEY: [i / CONTROL_HZ for i in range(8)]})
    loader = torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=False)   # frames of both episodes below
    batches = [next(iter(loader)), dataset[len(dataset) - 1]]
    features = dataset_to_policy_features(dataset.meta.features)
    config = ACTConfig(device="cpu", chunk_size=8, n_action_steps=8, pretrained_backbone_weights=None,
                       input_features={k: f for k, f in features.items() if f.type is not FeatureType.ACTION},
                       output_features={k: f for k, f in features.items() if f.type is FeatureType.ACTION})
    preprocessor, _ = make_pre_post_processors(config, dataset_stats=dataset.meta.stats)
    for batch in batches:
        out = preprocessor(batch)
        normalised = [k for k in config.input_features if k in out] + [ACTION_KEY]   # every policy input + the action
        assert {STATE_KEY, ACTION_KEY, "observation.images.rgb.head"} <= set(normalised)
        for key in normalised:
            assert torch.isfinite(out[key]).all(), key
    # The oracle pair normalises to finite values too, in lerobot's quantile mode (pi0.5), should a user feed it to a
    # policy as an observation (lerobot's steps only normalise observation.* keys: the pair is renamed into one).
    from lerobot.processor.converters import batch_to_transition, transition_to_batch

    renamed = {ORACLE_IR_TARGET_KEY: "observation.oracle_ir_target", ORACLE_IR_VALID_KEY: "observation.oracle_ir_valid"}
    stats = {**dataset.meta.stats, **{new: dataset.meta.stats[old] for old, new in renamed.items()}}
    batch = {**batches[0], **{new: batches[0][old] for old, new in renamed.items()}}
    shapes = {"observation.oracle_ir_target": (2,), "observation.oracle_ir_valid": (1,)}
    step = NormalizerProcessorStep(features={**features, **{k: PolicyFeature(FeatureType.STATE, shape)
                                                            for k, shape in shapes.items()}},
                                   stats=stats, norm_map={FeatureType.STATE: NormalizationMode.QUANTILES,
                                                          FeatureType.ACTION: NormalizationMode.QUANTILES,
                                                          FeatureType.VISUAL: NormalizationMode.MEAN_STD})
    out = transition_to_batch(step(batch_to_transition(batch)))
    for key in (STATE_KEY, ACTION_KEY, *renamed.values()):
        assert torch.isfinite(torch.as_tensor(out[key])).all(), key


def test_ir_conditioned_training_reads_the_oracle_target(root, tmp_path):
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from bspatial.modeling.ir_rendering import DOT_COLOR
    from bspatial.modeling.train import train
    from bspatial.modeling.training_data import FirstFrameAnchorDataset, with_ir_target

    dataset = LeRobotDataset("local/demos", root=root, return_uint8=True)
    first_reach, first_nav = dataset[0], dataset[len(dataset) - 1]
    target = with_ir_target(first_reach)["observation.ir_target"]
    assert torch.equal(target, first_reach[ORACLE_IR_TARGET_KEY])
    assert torch.isnan(with_ir_target(first_nav)["observation.ir_target"]).all()   # no dot on navigation frames
    anchored = FirstFrameAnchorDataset(dataset, "observation.images.rgb.head")
    x, y = (int(math.floor(v + 0.5)) for v in target.tolist())
    assert anchored.anchor(0)[:, y, x].tolist() == list(DOT_COLOR)   # the dot at the reach episode's first target
    for preset in ("tiny_dot_ir", "tiny_dot_ir_anchor"):
        result = train(preset, str(root), str(tmp_path / preset), max_steps=1, task_column="task_name")
        assert result.last_step == 1 and all(np.isfinite(result.losses))


# ----------------------------------------------------------------------------- lerobot-doctor


def _doctor_python() -> Path:
    """The interpreter of a venv holding only lerobot-doctor, created once and cached (never the project's .venv)."""
    cache = Path(os.environ.get("BSPATIAL_TEST_VENVS", Path.home() / ".cache" / "bspatial" / "test-venvs"))
    venv = cache / LEROBOT_DOCTOR.replace("==", "-")
    if (venv / "bin" / "python").exists():
        return venv / "bin" / "python"
    staging = cache / f".{venv.name}.tmp{os.getpid()}"
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(staging)], check=True, capture_output=True)
    install = subprocess.run([str(staging / "bin" / "python"), "-m", "pip", "install", "--quiet", LEROBOT_DOCTOR],
                             capture_output=True, text=True, timeout=600)
    if install.returncode:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.fail(f"cannot install {LEROBOT_DOCTOR} (the package index is needed once; the venv is cached): "
                    f"{install.stderr.strip()[-300:]}")
    try:
        staging.rename(venv)   # complete or absent; run through `python -m`, so no script names the staging path
    except OSError:            # another run finished first
        shutil.rmtree(staging, ignore_errors=True)
    return venv / "bin" / "python"


def test_lerobot_doctor_passes_on_a_fresh_set(root):
    run = subprocess.run([str(_doctor_python()), "-m", "lerobot_doctor.cli", "check", str(root), "--ci"],
                         capture_output=True, text=True, timeout=600)
    report = json.loads(run.stdout)
    failed = {c["name"]: [m["message"] for m in c["messages"] if m["severity"] == "FAIL"]
              for c in report["checks"] if c["severity"] == "FAIL"}
    assert run.returncode == 0 and not failed, failed
    messages = [m["message"] for c in report["checks"] for m in c["messages"]]
    assert not [m for m in messages if "NaN" in m or "Inf values" in m]
    assert report["total_episodes"] == 2
