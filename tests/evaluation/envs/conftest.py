"""What the env-adapter tests share: one ACT trained by the real ``lerobot-train`` on demos recorded here, the
rollout it is compared with, and how two harnesses' episodes are compared."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bspatial.cli import app
from bspatial.evaluation.rollout.episodes import load_results

TASK = "reach_plate"
EVAL_STEPS = 20       # a cap on the ACT's episodes (2 training steps: short episodes say as much as long ones)
BIN = Path(sys.executable).parent
OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled"}


def run_command(args, cwd):
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=OFFLINE, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{args[0]} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def rollout_records(*args) -> list[dict]:
    """``bspatial rollout --tasks TASK <args>``'s result records (``--out`` among ``args``)."""
    out = Path(args[args.index("--out") + 1])
    result = CliRunner().invoke(app, ["rollout", "--tasks", TASK, "--no-progress", *map(str, args)])
    assert result.exit_code == 0, result.output
    return load_results(out)


def strict_rate(records) -> float:
    return sum(r["outcome"] == "correct" for r in records) / len(records)


MEASURED = ("inference_ms",)
"""Record fields that are measurements of the machine, not of the episode."""


def same_episodes(left: list[dict], right: list[dict], ignore: tuple[str, ...] = ("policy",)) -> None:
    """Equal result records (who chose the actions, and how long the machine took, aside) with byte-equal traces."""
    assert [r["index"] for r in left] == [r["index"] for r in right] and left
    ignore = (*ignore, *MEASURED)
    for a, b in zip(left, right):
        assert {k: v for k, v in a.items() if k not in ignore} == {k: v for k, v in b.items() if k not in ignore}, a["index"]
        assert json.dumps(a["trace"]) == json.dumps(b["trace"])


@pytest.fixture(scope="session")
def lerobot_root(tmp_path_factory) -> Path:
    """A folder holding ``demos/``: one demonstration of TASK recorded by ``bspatial demos``."""
    root = tmp_path_factory.mktemp("lerobot")
    run_command([sys.executable, "-m", "bspatial.cli", "demos", "--out", root / "demos", "--task", TASK,
                 "--episodes-per-task", "1"], root)
    return root


@pytest.fixture(scope="session")
def act_checkpoint(lerobot_root) -> Path:
    """lerobot-train's step folder (``checkpoints/000002``, ``pretrained_model/`` inside) of an ACT trained 2 steps
    on the one demo, offline on CPU, with no pretrained backbone weights."""
    root = lerobot_root
    run_command([BIN / "lerobot-train", "--policy.type=act", f"--dataset.root={root / 'demos'}",
                 "--dataset.repo_id=local/bspatial_demos", "--steps=2", "--batch_size=2", "--save_freq=2",
                 "--num_workers=0", "--policy.device=cpu", "--policy.push_to_hub=false",
                 "--policy.pretrained_backbone_weights=null", "--wandb.enable=false", f"--output_dir={root / 'train'}",
                 # A small ACT (a 32-step chunk, as ours) keeps the test short; nothing here depends on its size.
                 "--policy.dim_model=64", "--policy.n_heads=2", "--policy.dim_feedforward=128",
                 "--policy.n_encoder_layers=1", "--policy.n_decoder_layers=1", "--policy.use_vae=false",
                 "--policy.chunk_size=32", "--policy.n_action_steps=32"], root)
    return root / "train" / "checkpoints" / "000002"
