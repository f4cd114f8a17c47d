"""Records one short reach demonstration once and checks it as lerobot, the stats, the IR oracle and the
trainer see it; plus the failed-build cleanup."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bspatial.construction import demos
from bspatial.construction.demos import (ACTION_KEY, CAMERAS, EPISODE_COLUMNS, FPS, IR_TARGET_KEY, STATE_KEY,
                                         record_demos)

TASK = "reach_plate"  # the shortest expert episode (~170 steps)
CHUNK = 32


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return record_demos(tmp_path_factory.mktemp("demos") / "out", tasks=[TASK], episodes_per_task=1, seed=0)


def _frames(root: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted((root / "data").rglob("*.parquet"))], ignore_index=True)


def test_lerobot_loads_action_chunks_and_episode_extras(root):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    dataset = LeRobotDataset("local/out", root=root, delta_timestamps={ACTION_KEY: [i / FPS for i in range(CHUNK)]},
                             return_uint8=True)
    assert dataset.fps == FPS == 30 and dataset.num_episodes == 1
    assert set(dataset.meta.camera_keys) == {f"observation.images.rgb.{c}" for c in CAMERAS}
    n = len(dataset)
    first, last = dataset[0], dataset[n - 1]
    assert first[ACTION_KEY].shape == (CHUNK, 23) and first[STATE_KEY].shape == (84,)
    assert first["observation.images.rgb.head"].shape == (3, 224, 224)
    assert not first["action_is_pad"].any()
    assert last["action_is_pad"].tolist() == [False] + [True] * (CHUNK - 1)  # padded past the episode end
    episodes = dataset.meta.episodes
    row = {c: episodes[c][0] for c in EPISODE_COLUMNS}
    assert row["task_name"] == TASK and row["split"] == "train" and row["variant"] == "largest"
    assert first["task"] == episodes["tasks"][0][0] and "largest plate" in first["task"]


def test_stats_quantiles_are_exact(root):
    frames = _frames(root)
    stats = json.loads((root / "meta" / "stats.json").read_text())
    for key in (STATE_KEY, ACTION_KEY):
        values = np.stack(frames[key].to_numpy()).astype(np.float64)
        for q in ("q01", "q99"):
            np.testing.assert_allclose(stats[key][q], np.quantile(values, int(q[1:]) / 100, axis=0), rtol=0, atol=1e-9)


def test_ir_target_lies_on_the_target_in_the_replayed_head_frames(root):
    """Replays the recorded actions and checks the IR point against the head segmentation and video."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks import sample_instance

    episode = pd.read_parquet(next((root / "meta" / "episodes").rglob("*.parquet"))).iloc[0]
    instance = sample_instance(episode["task_name"], episode["variant"], int(episode["scene_seed"]))
    frames = _frames(root)
    targets = np.stack(frames[IR_TARGET_KEY].to_numpy())
    assert targets.dtype == np.float32 and not np.isnan(targets).any()  # a reach target stays in view
    checked = [0, len(frames) // 2]
    dataset = LeRobotDataset("local/out", root=root, return_uint8=True)
    sim = MujocoBackend(camera_size=224)
    try:
        sim.load(instance.scene)
        for t, action in enumerate(frames[ACTION_KEY]):
            if t in checked:
                head = sim.render("head")
                x, y = targets[t].astype(int)
                assert head.mask(instance.target)[y, x], f"frame {t}: IR point {(x, y)} is off {instance.target}"
                decoded = dataset[t]["observation.images.rgb.head"].permute(1, 2, 0).numpy()
                assert np.abs(decoded.astype(int) - head.rgb.astype(int)).mean() < 8  # the same frame, lossy
            if t == checked[-1]:
                break
            sim.step(np.asarray(action, np.float64))
    finally:
        sim.close()


def test_tiny_policy_trains_on_the_demos_and_predicts_a_chunk(root, tmp_path):
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from transformers import AutoModel, AutoProcessor

    from bspatial.modeling.train import train

    result = train("tiny", str(root), str(tmp_path / "run"), max_steps=2, task_column="task_name")
    assert result.last_step == 2 and all(np.isfinite(result.losses))
    model = AutoModel.from_pretrained(result.pretrained_dir)
    processor = AutoProcessor.from_pretrained(result.pretrained_dir)
    item = LeRobotDataset("local/out", root=root, return_uint8=True)[3]
    observation = {k: v for k, v in item.items() if k.startswith("observation.") or k == "task"}
    actions = processor.unnormalize_actions(model.sample_actions(processor(observation)))
    assert actions.shape == (1, CHUNK, 23) and torch.isfinite(actions).all()


def test_failed_build_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(demos, "record_episode", lambda backend, instance, split: (None, "forced failure"))
    with pytest.raises(ValueError, match="no demonstration"):
        record_demos(tmp_path / "out", tasks=[TASK], episodes_per_task=1)
    assert list(tmp_path.iterdir()) == []


def test_bad_arguments_raise_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="unknown task"):
        record_demos(tmp_path / "out", tasks=["fly_to_moon"])
    with pytest.raises(ValueError, match="split must be one of"):
        record_demos(tmp_path / "out", split="test")
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError):
        record_demos(tmp_path / "taken", tasks=[TASK])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_cli_reports_bad_input_with_exit_code_1(tmp_path):
    import typer
    from typer.testing import CliRunner

    from bspatial.construction.demos_cli import demos_command

    app = typer.Typer()
    app.command("demos")(demos_command)
    app.command("other")(lambda: None)  # two commands: "demos" stays a subcommand, as in bspatial.cli
    result = CliRunner().invoke(app, ["demos", "--out", str(tmp_path / "out"), "--task", "fly_to_moon"])
    assert result.exit_code == 1 and "unknown task 'fly_to_moon'" in result.output
    help_text = CliRunner().invoke(app, ["demos", "--help"]).output
    for option in ("--out", "--task", "--episodes-per-task", "--seed", "--split", "--overwrite"):
        assert option in help_text
