"""Records one short reach demonstration once and checks it as lerobot, the stats, the IR oracle and the
trainer see it; plus the failed-build cleanup."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bspatial.construction.demonstrations import demos
from bspatial.catalog.schema import ACTION_KEY, CAMERAS, CONTROL_HZ as FPS, STATE_KEY
from bspatial.construction.demonstrations.demos import (EPISODE_COLUMNS, IR_TARGET_FILL, ORACLE_IR_TARGET_KEY, ORACLE_IR_VALID_KEY,
                                         record_demos)
from bspatial.tasks.start import warm_up

pytestmark = [pytest.mark.slow, pytest.mark.sim]

TASK = "reach_plate"  # the shortest expert episode (~170 steps)
CHUNK = 32


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return record_demos(tmp_path_factory.mktemp("demos") / "out", tasks=[TASK], episodes_per_task=1, seed=0)


def _frames(root: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted((root / "data").rglob("*.parquet"))], ignore_index=True)


def _settle(root: Path, episode: int = 0) -> dict:
    """The unrecorded gripper settle before an episode's first frame (provenance), for replays."""
    return json.loads((root / "meta" / "bspatial_demos.json").read_text())["episodes"][episode]["settle"]


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
    targets = np.stack(frames[ORACLE_IR_TARGET_KEY].to_numpy())
    assert targets.dtype == np.float32 and (frames[ORACLE_IR_VALID_KEY] == 1.0).all()  # a reach target stays in view
    checked = [0, len(frames) // 2]
    dataset = LeRobotDataset("local/out", root=root, return_uint8=True)
    sim = MujocoBackend(camera_size=224)
    try:
        sim.load(instance.scene)
        warm_up(sim, instance)   # the start state every episode begins from
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
    monkeypatch.setattr(demos, "record_episode", lambda backend, instance, split, **kw: (None, "forced failure"))
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

    from bspatial.construction.demonstrations.cli import demos_command

    app = typer.Typer()
    app.command("demos")(demos_command)
    app.command("other")(lambda: None)  # two commands: "demos" stays a subcommand, as in bspatial.cli
    result = CliRunner().invoke(app, ["demos", "--out", str(tmp_path / "out"), "--task", "fly_to_moon"])
    assert result.exit_code == 1 and "unknown task 'fly_to_moon'" in result.output
    help_text = CliRunner().invoke(app, ["demos", "--help"]).output
    for option in ("--out", "--task", "--episodes-per-task", "--seed", "--split", "--overwrite", "--suite",
                   "--paperback-prefix"):
        assert option in help_text


# ----------------------------------------------------------------------------- navigation and the paperback prefix

NAV_TASK = "move_to_bookcase"
PAPERBACK_SEED = 1  # build seed whose first paperback configuration puts the bisector ~0.5 m off the start


def _episode_meta(root: Path) -> pd.Series:
    return pd.read_parquet(next((root / "meta" / "episodes").rglob("*.parquet"))).iloc[0]


def _replay(sim, instance, actions, settle: dict):
    """Run the recorded actions open-loop from the instance's start state (the episode loop's warm-up, which must
    take the recorded settle's steps); returns the episode result."""
    from bspatial.tasks.episode import EpisodeRun

    queue = [np.asarray(a, np.float64) for a in actions]
    run = EpisodeRun(sim, instance, max_steps=len(queue), load=True)
    assert run.warm_up_steps == settle["steps"]
    while not run.done:
        run.step(queue[run.steps])
    return run.result()


def test_demos_are_recorded_on_the_training_split(root):
    from bspatial.construction.splits import variant_partition

    episode = _episode_meta(root)
    assert int(episode["training_index"]) == 0 and int(episode["scene_seed"]) < 2 ** 61
    assert episode["variant"] in variant_partition(TASK)[0]


@pytest.fixture(scope="module")
def nav_root(tmp_path_factory):
    return record_demos(tmp_path_factory.mktemp("nav") / "out", tasks=[NAV_TASK], episodes_per_task=1)


def test_navigation_demo_loads_has_no_ir_target_and_reaches_the_goal(nav_root):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks.navigation import goal_reached, sample_validated_instance

    dataset = LeRobotDataset("local/nav", root=nav_root, delta_timestamps={ACTION_KEY: [i / FPS for i in range(CHUNK)]},
                             return_uint8=True)
    assert dataset.num_episodes == 1 and dataset[0][ACTION_KEY].shape == (CHUNK, 23)
    assert dataset[0]["task"] == "Move to the bookcase."
    episode = _episode_meta(nav_root)
    assert (episode["task_name"], episode["variant"]) == (NAV_TASK, "")
    frames = _frames(nav_root)
    assert (frames[ORACLE_IR_VALID_KEY] == 0.0).all()       # no oracle IR target on navigation frames ...
    assert (np.stack(frames[ORACLE_IR_TARGET_KEY].to_numpy()) == IR_TARGET_FILL).all()   # ... only the fill
    sim = MujocoBackend(camera_size=64)
    try:
        instance, _ = sample_validated_instance(sim, NAV_TASK, int(episode["scene_seed"]))
        assert not goal_reached(instance, sim.robot_state().base_pose)
        result = _replay(sim, instance, frames[ACTION_KEY], _settle(nav_root))
        assert result.trace.nav_success and result.outcome.outcome == "correct"
    finally:
        sim.close()


@pytest.fixture(scope="module")
def paperback_root(tmp_path_factory):
    return record_demos(tmp_path_factory.mktemp("paperback") / "out", tasks=["reach_paperback_book"],
                        episodes_per_task=1, seed=PAPERBACK_SEED, paperback_prefix=True)


def test_paperback_prefix_starts_on_the_bisector_and_still_reaches_the_target(paperback_root):
    import dataclasses

    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.world.spec import RobotSpawn
    from bspatial.tasks import sample_instance
    from bspatial.world.relations import object_box

    episode = _episode_meta(paperback_root)
    provenance = json.loads((paperback_root / "meta" / "bspatial_demos.json").read_text())
    prefix = provenance["episodes"][0]["prefix"]
    instance = sample_instance("reach_paperback_book", episode["variant"], int(episode["scene_seed"]))
    # The two candidate books, recomputed here: closest and farthest to the reference's box centre.
    objects = {o.name: o for o in instance.scene.objects}
    ref = object_box(objects[instance.reference]).center
    books = {n: object_box(objects[n]).center for n in instance.candidates}
    dist = {n: float(np.linalg.norm(c - ref)) for n, c in books.items()}
    a, b = books[min(dist, key=dist.get)][:2], books[max(dist, key=dist.get)][:2]
    start = np.array(prefix["measured_start"])          # the simulator's base pose at the first frame
    assert abs(np.linalg.norm(start[:2] - a) - np.linalg.norm(start[:2] - b)) < 0.02   # on the bisector
    assert np.linalg.norm(start[:2]) > 0.3                 # and well away from the original start (0, 0)
    assert 0 < prefix["steps"] < int(episode["length"])
    # Replaying the recorded actions from the augmented spawn ends on the instructed book.
    spawn = RobotSpawn(*prefix["spawn"])
    moved = dataclasses.replace(instance, scene=dataclasses.replace(instance.scene, robot=spawn),
                                step_budget=int(episode["length"]) + 10)
    actions = _frames(paperback_root)[ACTION_KEY]
    sim = MujocoBackend(camera_size=64)
    try:
        result = _replay(sim, moved, actions, _settle(paperback_root))
        np.testing.assert_allclose(result.trace.base_poses[prefix["steps"] - 1][:2], (0.0, 0.0), atol=0.03)
        assert result.outcome.outcome == "correct"
        contacted = result.trace.eef_contacts.any(axis=0)
        assert [n for n, c in zip(result.trace.candidate_names, contacted) if c] == [instance.target]
    finally:
        sim.close()


def test_a_head_camera_recording_holds_the_head_camera_only(tmp_path):
    """``bspatial demos --camera head``: what a head-camera learner reads, and nothing it does not."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    with pytest.raises(ValueError, match="including 'head'"):
        record_demos(tmp_path / "wrists", tasks=[TASK], cameras=("left_wrist",))
    out = record_demos(tmp_path / "head", tasks=[TASK], episodes_per_task=1, cameras=("head",))
    dataset = LeRobotDataset("local/head", root=out, return_uint8=True)
    assert dataset.meta.camera_keys == ["observation.images.rgb.head"]
    assert dataset[0]["observation.images.rgb.head"].shape == (3, 224, 224)
    assert json.loads((out / "meta" / "bspatial_demos.json").read_text())["cameras"] == ["head"]
