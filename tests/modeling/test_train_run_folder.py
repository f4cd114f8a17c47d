"""A run folder belongs to one training run (issue 14, item 4), tested through ``bspatial train``.

Each case is a defect a tester measured: a rerun without ``--resume`` appended a second copy of every
metrics step; ``--resume`` with another seed or batch size was accepted; a folder holding an older run's
checkpoints was resumed ("final loss nan", exit 0); a complete-looking ``step_N.tmp`` was taken as a
checkpoint; a missing data folder ended in a Hub-offline traceback; ``--max-steps 0`` was ignored.
"""

import json
import shutil

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset

# Shared fixtures of tests/modeling/conftest.py: one torch thread, a fresh Accelerate state per test.
pytestmark = [pytest.mark.usefixtures("one_torch_thread", "fresh_accelerate_state"), pytest.mark.slow]

TINY_STEPS = 2  # the tiny preset checkpoints every 2 steps: a 2-step run ends on a complete checkpoint


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("lerobot") / "tiny"
    build_tiny_lerobot_dataset(root, episodes_per_task=1, frames_per_episode=12)
    return root


@pytest.fixture(scope="module")
def other_data(tmp_path_factory):
    # Same shapes and tasks, other frames and actions: a run must not silently switch to it on resume.
    root = tmp_path_factory.mktemp("lerobot_other") / "tiny"
    build_tiny_lerobot_dataset(root, episodes_per_task=1, frames_per_episode=12, seed=1)
    return root


def bspatial_train(*args):
    from accelerate.state import AcceleratorState, PartialState

    AcceleratorState._reset_state(True)
    PartialState._reset_state()
    return CliRunner().invoke(app, ["train", *map(str, args)])


def metrics_steps(run):
    return [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]


def refused(result):
    """Non-zero exit through the CLI's own error path (a SystemExit), not an uncaught exception."""
    return result.exit_code != 0 and isinstance(result.exception, SystemExit)


def flat(output):
    return " ".join(output.split())  # the message may wrap on a narrow terminal


def test_a_run_records_its_config_and_data_fingerprint(tmp_path, data, other_data):
    run = tmp_path / "run"
    result = bspatial_train(data, run, "--max-steps", TINY_STEPS, "--seed", 3)
    assert result.exit_code == 0, result.output
    record = json.loads((run / "run_config.json").read_text())
    assert record["training_config"]["name"] == "tiny"
    assert record["training_config"]["seed"] == 3
    assert record["training_config"]["batch_size"] == 2  # the tiny preset's
    assert record["training_config"]["max_steps"] == TINY_STEPS
    assert record["data"]["episodes"] == 2  # one episode for each of the two tasks
    # The fingerprint follows the content: a byte copy elsewhere matches, other frames do not.
    copy = tmp_path / "moved" / "tiny"
    shutil.copytree(data, copy)
    from bspatial.modeling.training_data import dataset_fingerprint

    assert dataset_fingerprint(copy) == record["data"]["fingerprint"] == dataset_fingerprint(data)
    assert dataset_fingerprint(other_data) != record["data"]["fingerprint"]


def test_rerun_without_resume_is_refused_and_leaves_the_run_alone(tmp_path, data):
    run = tmp_path / "run"
    assert bspatial_train(data, run, "--max-steps", TINY_STEPS).exit_code == 0
    before = (run / "metrics.jsonl").read_bytes()
    assert metrics_steps(run) == [1, 2]
    again = bspatial_train(data, run, "--max-steps", TINY_STEPS)
    assert refused(again), again.output
    assert str(run) in flat(again.output) and "--resume" in again.output and "another output folder" in again.output
    assert (run / "metrics.jsonl").read_bytes() == before  # measured before the fix: steps 1, 2, 1, 2


def test_resume_with_another_config_is_refused_naming_each_field(tmp_path, data, other_data):
    run = tmp_path / "run"
    assert bspatial_train(data, run, "--max-steps", 4).exit_code == 0
    other = bspatial_train(data, run, "--resume", "--max-steps", 6, "--seed", 1, "--batch-size", 4)
    assert refused(other), other.output
    message = flat(other.output)
    assert str(run) in message
    assert "seed: recorded 0 vs given 1" in message
    assert "batch_size: recorded 2 vs given 4" in message
    assert "max_steps: recorded" not in message  # may change on resume (extends the run)
    preset = bspatial_train(data, run, "--resume", "--max-steps", 4, "--preset", "tiny_lora")
    assert refused(preset) and "vlm_adapter: recorded 'frozen' vs given 'lora'" in flat(preset.output)
    assert "name: recorded 'tiny' vs given 'tiny_lora'" in flat(preset.output)
    switched = bspatial_train(other_data, run, "--resume", "--max-steps", 4)
    assert refused(switched) and "data fingerprint: recorded sha256:" in flat(switched.output)
    assert metrics_steps(run) == [1, 2, 3, 4]  # none of the refused runs touched the run


def test_resume_may_extend_max_steps_and_move_the_dataset(tmp_path, data):
    run = tmp_path / "run"
    assert bspatial_train(data, run, "--max-steps", TINY_STEPS).exit_code == 0
    moved = tmp_path / "moved" / "tiny"
    shutil.copytree(data, moved)
    longer = bspatial_train(moved, run, "--resume", "--max-steps", 4)
    assert longer.exit_code == 0, longer.output
    assert "trained 4 steps" in longer.output and "nan" not in longer.output
    assert metrics_steps(run) == [1, 2, 3, 4]
    assert json.loads((run / "run_config.json").read_text())["training_config"]["max_steps"] == 4


def test_resuming_a_finished_run_is_refused_not_a_nan_loss(tmp_path, data):
    run = tmp_path / "run"
    assert bspatial_train(data, run, "--max-steps", TINY_STEPS).exit_code == 0
    done = bspatial_train(data, run, "--resume", "--max-steps", TINY_STEPS)
    assert refused(done), done.output  # measured before: "trained 2 steps ... final loss nan", exit 0
    assert "--max-steps" in done.output and "nan" not in done.output


def test_an_older_runs_checkpoints_are_not_resumed(tmp_path, data):
    # A folder written before runs recorded their config: checkpoints, metrics, no run_config.json.
    run = tmp_path / "run"
    assert bspatial_train(data, run, "--max-steps", TINY_STEPS, "--seed", 5).exit_code == 0
    (run / "run_config.json").unlink(missing_ok=True)  # (before the fix there was none)
    resumed = bspatial_train(data, run, "--resume", "--max-steps", TINY_STEPS)
    assert refused(resumed), resumed.output
    assert "run_config.json" in resumed.output and str(run) in flat(resumed.output)


def test_incomplete_checkpoints_are_never_resumed_and_are_removed(tmp_path, data):
    run = tmp_path / "run"
    assert bspatial_train(data, run, "--max-steps", 4).exit_code == 0   # checkpoints at steps 2 and 4
    full = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    checkpoints = run / "checkpoints"
    # A crash between writing step 4's checkpoint and publishing it: the staging folder looks complete
    # (step.json included) and the final export was never made.
    (checkpoints / "step_000000004").rename(checkpoints / "step_000000004.tmp")
    shutil.rmtree(run / "pretrained_model")
    assert (checkpoints / "step_000000004.tmp" / "step.json").exists()
    (checkpoints / "step_000000003").mkdir()   # no step.json: never completed
    resumed = bspatial_train(data, run, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "trained 4 steps" in resumed.output and "nan" not in resumed.output   # resumed at step 2
    assert sorted(p.name for p in checkpoints.iterdir()) == ["step_000000002", "step_000000004"]
    again = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in again] == [1, 2, 3, 4]
    assert np.array_equal([r["loss"] for r in again], [r["loss"] for r in full])  # exact resume from step 2
    assert (run / "pretrained_model" / "config.json").exists()


@pytest.mark.parametrize("case", ["missing", "empty", "no_stats"])
def test_a_missing_or_invalid_data_folder_is_named_without_a_hub_traceback(tmp_path, data, case):
    root = tmp_path / "data"
    if case == "empty":
        root.mkdir()
    elif case == "no_stats":
        shutil.copytree(data, root)
        (root / "meta" / "stats.json").unlink()
    result = bspatial_train(root, tmp_path / "run")
    assert refused(result), result.output
    message = flat(result.output)
    assert str(root) in message and "huggingface" not in message.lower()
    expected = {"missing": "does not exist", "empty": "meta/info.json", "no_stats": "meta/stats.json"}[case]
    assert expected in message
    assert not (tmp_path / "run").exists()  # nothing was started


def test_max_steps_below_one_is_refused_naming_the_field(tmp_path, data):
    result = bspatial_train(data, tmp_path / "run", "--max-steps", 0)
    assert refused(result), result.output   # measured before: 0 was ignored and the preset's 4 steps ran
    assert "max_steps must be a positive integer, got 0" in flat(result.output)
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


def test_resuming_a_run_that_stopped_before_its_first_checkpoint_restarts_it(tmp_path, data):
    # Decision: such a run has its record (so it is this run) and nothing to resume from; step 0 with the
    # same config is the same run, so --resume starts it over instead of leaving the folder unusable.
    run = tmp_path / "run"
    assert bspatial_train(data, run, "--max-steps", TINY_STEPS).exit_code == 0
    first = (run / "metrics.jsonl").read_text().splitlines()
    # What a crash before the first checkpoint leaves: the record, the config, step 1's metrics.
    shutil.rmtree(run / "checkpoints")
    shutil.rmtree(run / "pretrained_model")
    (run / "metrics.jsonl").write_text(first[0] + "\n")
    again = bspatial_train(data, run, "--resume", "--max-steps", TINY_STEPS)
    assert again.exit_code == 0, again.output
    assert "trained 2 steps" in again.output
    assert (run / "metrics.jsonl").read_text().splitlines() == first   # step 1 once, then step 2, as before
