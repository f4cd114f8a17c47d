"""Navigation policies with scene-context frames (issue 21, item 1): recorded with the demonstrations, carried by
every training sample, fed in every rollout batch, on one real navigation recording.

The frames come from one function (construction.questions.navigation_vqa.context_tour); here they are rendered again on a
fresh simulator and compared with what the dataset file, the training batch and the rollout's model input hold.
"""

import json
import re
import shutil

import numpy as np
import pytest
import torch

from bspatial.construction.demonstrations.context_frames import CONTEXT_FRAME_SIZE, encode_strip
from bspatial.construction.demonstrations.demos import PROVENANCE_FILE, record_demos
from bspatial.construction.questions.navigation_vqa import CONTEXT_FRAMES, context_tour
from bspatial.modeling.processing_bspatial_vla import CONTEXT_IMAGE_KEY, CONTEXT_IS_PAD_KEY

# Shared fixtures of tests/modeling/conftest.py: one torch thread, a fresh Accelerate state per test.
pytestmark = [pytest.mark.usefixtures("one_torch_thread", "fresh_accelerate_state"), pytest.mark.slow, pytest.mark.sim]

NAV_TASK = "move_to_table_near_sofa"   # the shortest seed-0 navigation demonstration (120 steps)
ROLLOUT_STEPS = 12                     # two chunk requests (steps 0 and 10, the replanning threshold)


@pytest.fixture(scope="module")
def sim():
    from bspatial.sim.mujoco_backend import MujocoBackend

    backend = MujocoBackend(camera_size=CONTEXT_FRAME_SIZE)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    return record_demos(tmp_path_factory.mktemp("nav") / "demos", tasks=[NAV_TASK], episodes_per_task=1, seed=0,
                        suite="navigation")


@pytest.fixture(scope="module")
def episode_row(demos):
    (row,) = json.loads((demos / PROVENANCE_FILE).read_text())["episodes"]
    return row


def _tour(sim, seed: int) -> np.ndarray:
    """The context tour of ``NAV_TASK``'s instance of ``seed``, rendered again on ``sim`` (K, H, W, 3)."""
    from bspatial.tasks.navigation import sample_validated_instance

    instance, _ = sample_validated_instance(sim, NAV_TASK, seed)
    return np.stack(context_tour(sim, instance, size=CONTEXT_FRAME_SIZE))


@pytest.fixture(scope="module")
def tour(sim, episode_row):
    return _tour(sim, int(episode_row["scene_seed"]))


def test_the_stored_frames_are_the_context_tour_rendered_again_byte_for_byte(demos, episode_row, tour):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    assert episode_row["context_frames"] == {"frames": len(tour), "file": "meta/context_frames/episode_000000.png"}
    assert len(tour) == CONTEXT_FRAMES and tour.shape[1:] == (CONTEXT_FRAME_SIZE, CONTEXT_FRAME_SIZE, 3)
    assert (demos / episode_row["context_frames"]["file"]).read_bytes() == encode_strip(tour)
    # The strip sits beside lerobot's files; lerobot reads the set as before.
    dataset = LeRobotDataset("local/nav", root=demos, return_uint8=True)
    assert dataset.num_episodes == 1 and len(dataset) == episode_row["length"]


def _policy_data(demos, preset: str = "tiny_navigation"):
    from bspatial.modeling.train import build_policy
    from bspatial.modeling.training_config import get_preset
    from bspatial.modeling.training_data import build_dataset, dataset_metadata, policy_dataset

    config = get_preset(preset)
    model, processor, _ = build_policy(config, dataset_metadata(demos))
    dataset, _ = build_dataset(demos, config, chunk_size=model.config.chunk_size)
    return dataset, policy_dataset(dataset, processor), processor


def test_every_training_sample_carries_the_episodes_frames_in_tour_order(demos, tour):
    from bspatial.modeling.training_data import ContextFramesDataset, ProcessorCollate

    raw, dataset, processor = _policy_data(demos)
    assert processor.max_context_frames == CONTEXT_FRAMES
    expected = torch.from_numpy(tour).permute(0, 3, 1, 2)
    first, last = dataset[0], dataset[len(dataset) - 1]
    for item in (first, last):
        assert torch.equal(item[CONTEXT_IMAGE_KEY], expected)
        assert not item[CONTEXT_IS_PAD_KEY].any()
    batch = ProcessorCollate(processor)([first, last])
    # Per sample: its 12 context frames, then the 3 cameras; each is one image of the vision tower.
    assert len(batch["image_grid_thw"]) == 2 * (CONTEXT_FRAMES + len(processor.image_names))
    # A policy taking more frames than the tour gives: the real ones first, padding marked.
    padded = ContextFramesDataset(raw, CONTEXT_FRAMES + 3)[0]
    assert torch.equal(padded[CONTEXT_IMAGE_KEY][:CONTEXT_FRAMES], expected)
    assert padded[CONTEXT_IS_PAD_KEY].tolist() == [False] * CONTEXT_FRAMES + [True] * 3
    assert not padded[CONTEXT_IMAGE_KEY][CONTEXT_FRAMES:].any()
    with pytest.raises(ValueError, match=f"holds {CONTEXT_FRAMES} context frames, more than the policy's "
                                         f"max_context_frames={CONTEXT_FRAMES - 1}"):
        ContextFramesDataset(raw, CONTEXT_FRAMES - 1)[0]
    # A context-free policy trains on the same set without them.
    _, plain, _ = _policy_data(demos, "tiny")
    assert CONTEXT_IMAGE_KEY not in plain[0]


def test_a_navigation_set_without_its_frames_is_refused_naming_the_folder(demos, tmp_path):
    from typer.testing import CliRunner

    from bspatial.modeling.train import train
    from bspatial.modeling.train_cli import train_command
    from bspatial.cli import _single_command_app

    bare = shutil.copytree(demos, tmp_path / "bare")
    shutil.rmtree(bare / "meta" / "context_frames")
    refused = rf"the dataset at {re.escape(repr(str(bare)))} has no context frames .* for 1 of its 1 episodes \(first: \[0\]\)"
    with pytest.raises(FileNotFoundError, match=refused):
        train("tiny_navigation", str(bare), str(tmp_path / "run"))
    assert not any((tmp_path / "run").iterdir())   # refused before anything was written
    result = CliRunner().invoke(_single_command_app(train_command),
                                ["--preset", "tiny_navigation", str(bare), str(tmp_path / "run")])
    assert result.exit_code == 1 and f"the dataset at '{bare}' has no context frames" in result.output


@pytest.fixture(scope="module")
def checkpoint(demos, tmp_path_factory):
    from bspatial.modeling.train import train

    from accelerate.state import AcceleratorState, PartialState

    AcceleratorState._reset_state(True)
    PartialState._reset_state()
    result = train("tiny_navigation", str(demos), str(tmp_path_factory.mktemp("nav_policy") / "run"), max_steps=2)
    assert result.last_step == 2 and all(np.isfinite(result.losses))
    return result.pretrained_dir


def test_the_tiny_navigation_policy_reloads_and_its_rollout_feeds_the_frames(checkpoint, sim, tmp_path):
    from transformers import AutoModel

    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.policies import _PREDICTORS, check_policy_spec
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.plan import RunSettings

    model = AutoModel.from_pretrained(checkpoint)
    assert model.config.max_context_frames == CONTEXT_FRAMES
    run_rollouts(str(checkpoint), "navigation", [NAV_TASK], tmp_path / "roll",
                 RunSettings(seed=0, max_steps=ROLLOUT_STEPS), n_episodes=1)
    (record,) = load_results(tmp_path / "roll")
    assert record["status"] == "timeout" and record["steps"] == ROLLOUT_STEPS, record["message"]
    assert record["context_frames"] == CONTEXT_FRAMES   # the result file says what every chunk request carried
    # The latest chunk request's raw batch holds the held-out episode's tour, rendered again here ...
    predictor = _PREDICTORS[check_policy_spec(str(checkpoint))]
    fed = predictor.last_batch[CONTEXT_IMAGE_KEY]
    expected = torch.from_numpy(_tour(sim, int(record["seed"]))).permute(0, 3, 1, 2)[None]
    assert torch.equal(fed, expected)
    # ... and the model's input has one image per context frame before the cameras.
    inputs = predictor.processor(predictor.last_batch)
    assert len(inputs["image_grid_thw"]) == CONTEXT_FRAMES + model.config.num_images


def test_a_navigation_checkpoint_never_runs_context_free(checkpoint, sim, tmp_path):
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.policies import CheckpointPredictor
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.tasks.episode import Observation
    from bspatial.tasks.navigation import sample_validated_instance

    run_rollouts(str(checkpoint), "held_out", ["reach_plate"], tmp_path / "manip", RunSettings(seed=0, max_steps=3),
                 n_episodes=1)
    (record,) = load_results(tmp_path / "manip")
    assert record["status"] == "error" and "navigation tasks only" in record["message"]
    assert "task 'reach_plate' is a manipulation task" in record["message"]
    predictor = CheckpointPredictor(str(checkpoint))
    instance, _ = sample_validated_instance(sim, NAV_TASK, 0)
    observation = Observation(0, instance.instruction, sim.robot_state(), {})
    with pytest.raises(ValueError, match="max_context_frames=12: the episode's scene-context frames are required"):
        predictor.prepare(observation, sim.render)
