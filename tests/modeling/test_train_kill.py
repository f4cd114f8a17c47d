"""`bspatial train` SIGKILLed mid-run (in a real subprocess) and resumed: the metrics hold every step once and
the losses are the uninterrupted run's."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset
from bspatial.modeling.train import read_metrics

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

STEPS = 24
KILL_AFTER = 7  # logged steps: past the checkpoints of steps 2, 4 and 6 (tiny saves every 2 steps)


def _train(data, out, *extra: str) -> list[str]:
    return [sys.executable, "-m", "bspatial.cli", "train", str(data), str(out), "--max-steps", str(STEPS), *extra]


def test_train_killed_mid_run_resumes_to_the_uninterrupted_losses(tmp_path):
    data = tmp_path / "demos"
    build_tiny_lerobot_dataset(data, frames_per_episode=40)
    full = subprocess.run(_train(data, tmp_path / "full"), capture_output=True, text=True, timeout=300)
    assert full.returncode == 0, full.stderr[-3000:]

    killed = tmp_path / "killed"
    process = subprocess.Popen(_train(data, killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while not (killed / "metrics.jsonl").exists() or len((killed / "metrics.jsonl").read_text().splitlines()) < KILL_AFTER:
        assert process.poll() is None and time.monotonic() < deadline, "training ended or stalled before the kill"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert not (killed / "pretrained_model").exists()

    again = subprocess.run(_train(data, killed), capture_output=True, text=True, timeout=300)
    assert again.returncode != 0 and "--resume" in again.stderr  # a used folder is not started over
    resumed = subprocess.run(_train(data, killed, "--resume"), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows, reference = read_metrics(killed), read_metrics(tmp_path / "full")
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))  # every step once
    assert [r["loss"] for r in rows] == pytest.approx([r["loss"] for r in reference], rel=1e-6)
    assert (killed / "pretrained_model" / "config.json").is_file()
    assert not [p for p in (killed / "checkpoints").iterdir() if not p.name.startswith("step_") or p.suffix]
