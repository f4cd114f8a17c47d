"""``bspatial demos --overwrite`` SIGKILLed while recording: the old dataset stays whole at ``--out``, and the
rerun removes the killed run's staging folder and puts a complete new dataset in its place."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

STARTED_WITHIN_S = 180.0   # bound of the poll on a loaded machine, not a speed claim


def command(out: Path) -> list[str]:
    return [sys.executable, "-m", "bspatial.cli", "demos", "--task", "reach_plate", "--episodes-per-task", "1",
            "--overwrite", "--out", str(out)]


def test_a_killed_overwrite_keeps_the_old_dataset_and_the_rerun_replaces_it(tmp_path):
    out = tmp_path / "demos"
    out.mkdir()
    (out / "old.txt").write_text("the previous dataset")
    parent = subprocess.Popen(command(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + STARTED_WITHIN_S
    while not any(p.is_file() for p in tmp_path.glob(".demos.building-*/**/*")):
        assert parent.poll() is None and time.monotonic() < deadline, "the recording never started writing"
        time.sleep(0.05)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert sorted(p.name for p in out.iterdir()) == ["old.txt"]   # untouched by the killed run
    stale = sorted(p.name for p in tmp_path.iterdir() if ".building-" in p.name)
    assert len(stale) == 1

    rerun = subprocess.run(command(out), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"removed stale {tmp_path / stale[0]}" in rerun.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demos"]   # no staging, aside or lock left
    assert not (out / "old.txt").exists()
    info = json.loads((out / "meta" / "info.json").read_text())
    assert info["total_episodes"] == 1 and info["total_frames"] > 0
