"""`bspatial train` under `accelerate launch` with 2 CPU processes (gloo), in real subprocesses: the same loss
curve as one process on the same global batch, and checkpoints that resume across process counts.

Tolerance: the runs are float32 (the tiny preset trains without mixed precision) and differ only in the order
of float32 sums (each process reduces its share of the batch, gloo adds the two partial gradients, each share
pads its prompts to its own longest). Measured: at most 1.3e-7 relative (one float32 ulp, eps = 1.2e-7) over 6
steps. rel=1e-5 (~80 ulps) leaves room for that rounding to grow through the Adam steps, and is 500x tighter
than what the bugs this guards against produce: per-process flow-matching draws moved the losses by ~4e-2, and
equal weighting of the two processes' masked means (shares with more padding count more) by ~5e-3.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bspatial.modeling.testing_utils import build_tiny_lerobot_dataset
from bspatial.modeling.train import METRICS_FILE, PRETRAINED_DIR, checkpoint_dir, read_metrics

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

STEPS = 6
BATCH = 4  # global batch: 2 samples per process with 2 processes
RESUME_AT = 2  # the tiny preset saves every 2 steps
TOLERANCE = 1e-5  # relative; see the module docstring


def _env(**extra: str) -> dict[str, str]:
    # One intra-op thread per process: two processes on a shared 2-core machine.
    return {**os.environ, "OMP_NUM_THREADS": "1", **extra}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _train_args(data: Path, out: Path, *extra: str) -> list[str]:
    return ["train", str(data), str(out), "--batch-size", str(BATCH), "--max-steps", str(STEPS), *extra]


def one_process(data: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bspatial.cli", *_train_args(data, out, *extra)],
                          capture_output=True, text=True, timeout=300, env=_env())


def two_processes(data: Path, out: Path, *extra: str, batch: int = BATCH) -> subprocess.CompletedProcess:
    # `accelerate launch --cpu --num_processes 2` starts ONE process unless given an MPI hostfile (accelerate's
    # CPU launcher is mpirun); `--multi_gpu` is its torch.distributed launcher, and ACCELERATE_USE_CPU=1 makes
    # the processes one gloo job on the CPU.
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
              "--main_process_port", str(_free_port()), "-m", "bspatial.cli"]
    args = _train_args(data, out, *extra)
    args[args.index("--batch-size") + 1] = str(batch)
    return subprocess.run(launch + args, capture_output=True, text=True, timeout=300,
                          env=_env(ACCELERATE_USE_CPU="1"))


def succeeded(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, result.stderr[-4000:]


def curve(run: Path) -> list[tuple[int, float, float, float]]:
    return [(r["step"], r["loss"], r["lr"], r["grad_norm"]) for r in read_metrics(run)]


def assert_same_curve(got: list, expected: list) -> None:
    assert [row[0] for row in got] == [row[0] for row in expected]
    for row, reference in zip(got, expected, strict=True):
        assert row[1:] == pytest.approx(reference[1:], rel=TOLERANCE), (row, reference)


def interrupted_copy(run: Path, to: Path) -> Path:
    """The run folder as a run interrupted right after its step-RESUME_AT checkpoint leaves it: later
    checkpoints, the final export and later metric lines absent (a real SIGKILL is test_train_kill's)."""
    shutil.copytree(run, to)
    for step in range(RESUME_AT + 1, STEPS + 1):
        shutil.rmtree(checkpoint_dir(to, step), ignore_errors=True)
    shutil.rmtree(to / PRETRAINED_DIR)
    kept = [json.dumps(r) + "\n" for r in read_metrics(to) if r["step"] <= RESUME_AT]
    (to / METRICS_FILE).write_text("".join(kept))
    return to


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("processes") / "demos"
    build_tiny_lerobot_dataset(root, frames_per_episode=40)  # 32-step chunks: frames past 8 are padded
    return root


@pytest.fixture(scope="module")
def one_run(data) -> Path:
    out = data.parent / "one"
    succeeded(one_process(data, out))
    return out


@pytest.fixture(scope="module")
def two_run(data) -> Path:
    out = data.parent / "two"
    succeeded(two_processes(data, out))
    return out


def test_two_processes_follow_the_one_process_curve_on_the_same_global_batch(one_run, two_run):
    # Two processes really ran as one job: each saved its RNG state into the checkpoint.
    saved = checkpoint_dir(two_run, RESUME_AT)
    assert sorted(p.name for p in saved.glob("random_states_*.pkl")) == ["random_states_0.pkl", "random_states_1.pkl"]
    assert json.loads((saved / "step.json").read_text()) == {"step": RESUME_AT, "processes": 2}
    assert json.loads((checkpoint_dir(one_run, RESUME_AT) / "step.json").read_text())["processes"] == 1
    assert len(curve(one_run)) == STEPS
    assert_same_curve(curve(two_run), curve(one_run))
    # The batch size recorded for the run is the global one, whatever the process count.
    for run in (one_run, two_run):
        assert json.loads((run / "run_config.json").read_text())["training_config"]["batch_size"] == BATCH


def test_checkpoints_resume_across_process_counts(tmp_path, data, one_run, two_run):
    # A 2-process checkpoint continued by 1 process, and a 1-process checkpoint continued by 2.
    two_then_one = interrupted_copy(two_run, tmp_path / "two_then_one")
    succeeded(one_process(data, two_then_one, "--resume"))
    one_then_two = interrupted_copy(one_run, tmp_path / "one_then_two")
    succeeded(two_processes(data, one_then_two, "--resume"))
    for resumed in (two_then_one, one_then_two):
        assert [r["step"] for r in read_metrics(resumed)] == list(range(1, STEPS + 1))  # every step once
        assert_same_curve(curve(resumed), curve(one_run))
        assert (resumed / PRETRAINED_DIR / "config.json").is_file()
    assert json.loads((checkpoint_dir(one_then_two, STEPS) / "step.json").read_text())["processes"] == 2


def test_a_global_batch_the_processes_cannot_split_is_refused_naming_both(tmp_path, data):
    result = two_processes(data, tmp_path / "odd", batch=3)
    assert result.returncode != 0
    assert "batch_size 3 (the global batch) is not divisible by the 2 processes" in result.stderr
    assert not (tmp_path / "odd" / "run_config.json").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="with a GPU, torchrun's processes form one NCCL job")
def test_processes_that_accelerate_takes_for_separate_runs_are_refused(tmp_path, data):
    # torchrun on a machine without a GPU and without ACCELERATE_USE_CPU: Accelerate would see two
    # independent one-process runs, both training the whole batch into the same folder.
    env = {k: v for k, v in _env().items() if k != "ACCELERATE_USE_CPU"}
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
               str(_free_port()), "-m", "bspatial.cli", *_train_args(data, tmp_path / "split")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode != 0
    assert "the launcher started 2 processes" in result.stderr and "ACCELERATE_USE_CPU=1" in result.stderr
    assert not (tmp_path / "split" / "run_config.json").exists()
