"""``bspatial agents develop / evaluate`` as real processes: SIGKILLed mid-run and rerun, neither a development
step nor a writer request nor an evaluation episode is lost or repeated; bad input exits non-zero, naming it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bspatial.evaluation.agents.writers import reference_program

from .writer_server import CannedChatServer, fenced

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

STARTED_WITHIN_S = 180.0     # bounds of the polls on a loaded machine, not speed claims


def bspatial(*args: str) -> list[str]:
    return [sys.executable, "-m", "bspatial.cli", "agents", *args, "--no-progress"]


def poll(condition, timeout_s: float):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return value


def kill_when(command: list[str], condition) -> None:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert poll(condition, STARTED_WITHIN_S) and process.poll() is None, "the run never got there"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()


def test_killed_development_resumes_without_losing_or_repeating(tmp_path):
    out = tmp_path / "dev"
    # reach_dice: its reference program reaches every development and held-out episode with the oracle pointer
    # (32 of 32 held out), so the history below is the program's, not a scene's luck.
    with CannedChatServer([fenced(reference_program("reach_dice"))]) as server:
        command = bspatial("develop", "--writer", server.spec, "--task", "reach_dice", "--n-development", "3",
                           "--screen-wall-s", "10", "--out", str(out))
        # Killed once step 1's reply is logged: its screening and episode are under way.
        kill_when(command, lambda: (out / "exchanges" / "step-01-attempt-0.json").exists())
        assert len(server.bodies) == 2
        step0 = (out / "steps" / "step-00.json").read_bytes()
        assert not (out / "steps" / "step-01.json").exists()
        rerun = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "3 development steps ran, 0 skipped" in rerun.stdout
    assert len(server.bodies) == 3                      # step 1's logged reply was reused, not asked again
    assert (out / "steps" / "step-00.json").read_bytes() == step0
    assert sorted(p.name for p in (out / "steps").glob("*.json")) == [f"step-0{i}.json" for i in range(3)]
    assert sorted(p.name for p in (out / "exchanges").iterdir()) == [f"step-0{i}-attempt-0.json" for i in range(3)]
    # the rerun rebuilt the conversation: step 2's request carries step 1's feedback in its history
    history = server.bodies[2]["messages"][-1]["content"][-1]["text"]
    assert "step 0: strict success" in history and "step 1: strict success" in history
    assert json.loads((out / "frozen.json").read_text())["writer"] == server.spec


def test_killed_evaluation_resumes_without_losing_or_repeating(tmp_path):
    from bspatial.evaluation.agents.develop import develop

    dev = tmp_path / "dev"
    develop("scripted", "reach_plate", dev, n_development=1)
    episodes = dev / "evaluation-held_out" / "episodes"
    command = bspatial("evaluate", "--run", str(dev), "--n-episodes", "2")
    kill_when(command, lambda: any(episodes.glob("*.json")))
    first = {p.name: p.read_bytes() for p in episodes.glob("*.json")}
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"{len(first)} already done" in rerun.stdout and "| ours | 2 |" in rerun.stdout
    assert sorted(p.name for p in episodes.iterdir()) == [f"reach_plate-000{i}.json" for i in range(2)]
    assert {name: (episodes / name).read_bytes() for name in first} == first


def test_bad_input_exits_non_zero_naming_it(tmp_path):
    from typer.testing import CliRunner

    from bspatial.cli import app

    cases = [
        (bspatial("develop", "--writer", "gpt-6", "--task", "reach_plate", "--out", str(tmp_path / "a")),
         "writer must be 'scripted' or 'openai:<base url>#<model>', got 'gpt-6'"),
        (bspatial("develop", "--writer", "scripted", "--task", "reach_moon", "--out", str(tmp_path / "b")),
         "unknown task 'reach_moon'"),
        (bspatial("develop", "--writer", "scripted", "--task", "reach_plate", "--generation", "fast",
                  "--out", str(tmp_path / "c")), "--generation must be one of ['default', 'paper-qwen'], got 'fast'"),
        (bspatial("evaluate", "--run", str(tmp_path)), "holds no frozen program"),
    ]
    for command, message in cases:
        result = CliRunner().invoke(app, command[3:])        # the arguments after 'python -m bspatial.cli'
        assert result.exit_code == 2 and message in result.stderr, (command, result.output[-2000:])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists() and not (tmp_path / "c").exists()
