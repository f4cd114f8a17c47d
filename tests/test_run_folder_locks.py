"""One run per output folder: a second process meets the lock at once, with the holder named.

A real second process holds each lock (``flock`` is per open file, so a thread of this process would not
do); every command that owns an output folder must refuse to start while it is held, and start normally
once the holder is gone (the kernel drops the lock however the holder exits).
"""

import subprocess
import sys
from pathlib import Path

import pytest

from bspatial.common.locks import RunFolderLocked, run_folder_lock

pytestmark = [pytest.mark.subprocess]

HOLD = """
import sys, time
from bspatial.common.locks import run_folder_lock
with run_folder_lock(sys.argv[1], "holder-under-test", name=sys.argv[2]):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture()
def holder():
    processes = []

    def hold(folder: Path, name: str = ".lock") -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-c", HOLD, str(folder), name], stdout=subprocess.PIPE, text=True)
        assert process.stdout.readline().strip() == "held"
        processes.append(process)
        return process

    yield hold
    for process in processes:
        process.kill()
        process.wait()


def test_a_held_lock_names_its_holder_and_is_freed_when_the_holder_dies(tmp_path, holder):
    process = holder(tmp_path)
    with pytest.raises(RunFolderLocked, match=rf"in use by .*\"pid\": {process.pid}.*holder-under-test"):
        with run_folder_lock(tmp_path, "second"):
            pass
    process.kill()   # kill -9: no cleanup code runs in the holder
    process.wait()
    with run_folder_lock(tmp_path, "third"):
        pass


def test_rollout_refuses_a_folder_another_run_holds(tmp_path, holder):
    from bspatial.evaluation.rollout.runner import run_rollouts
    from bspatial.evaluation.rollout.plan import RunSettings

    holder(tmp_path / "run")
    with pytest.raises(RunFolderLocked, match="holder-under-test"):
        run_rollouts("hold", "held_out", ["reach_plate"], tmp_path / "run", RunSettings(max_steps=5), n_episodes=1)
    assert not (tmp_path / "run" / "episodes").exists()    # nothing was written before the refusal


def test_eval_vlm_refuses_a_part_folder_another_run_holds(tmp_path, holder):
    from bspatial.evaluation.vlm.fixtures import write_fixture_repos
    from bspatial.evaluation.vlm.runner import part_dir, run_suite

    repos = write_fixture_repos(tmp_path / "data")
    holder(part_dir(tmp_path / "out", "vqa", "general"))
    with pytest.raises(RunFolderLocked, match="holder-under-test"):
        run_suite("chance", "vqa", "general", tmp_path / "out", data=str(repos["vqa"]), progress=False)
    assert not list(part_dir(tmp_path / "out", "vqa", "general").glob("*.jsonl"))


def test_build_and_demos_refuse_an_output_another_run_holds(tmp_path, holder):
    from bspatial.construction.publishing.build import build
    from bspatial.construction.demonstrations.demos import record_demos

    holder(tmp_path, ".built.lock")
    with pytest.raises(RunFolderLocked, match="holder-under-test"):
        build("tiny", tmp_path / "built")
    holder(tmp_path, ".demos.lock")
    with pytest.raises(RunFolderLocked, match="holder-under-test"):
        record_demos(tmp_path / "demos", tasks=["reach_plate"], episodes_per_task=1)
    assert not (tmp_path / "built").exists() and not (tmp_path / "demos").exists()


def test_train_refuses_a_folder_another_run_holds(tmp_path, holder):
    from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset
    from bspatial.modeling.train import train

    data = tmp_path / "data"
    build_tiny_lerobot_dataset(data, frames_per_episode=40)
    holder(tmp_path / "run")
    with pytest.raises(RunFolderLocked, match="holder-under-test"):
        train("tiny", str(data), str(tmp_path / "run"), max_steps=1)
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_the_cli_turns_the_refusal_into_a_message_and_a_non_zero_exit(tmp_path, holder):
    from typer.testing import CliRunner

    from bspatial.cli import app

    holder(tmp_path / "run")
    result = CliRunner().invoke(app, ["rollout", "--policy", "hold", "--tasks", "reach_plate", "--n-episodes", "1",
                                      "--out", str(tmp_path / "run"), "--no-progress"])
    assert result.exit_code == 2 and "is in use by" in result.output and "holder-under-test" in result.output
