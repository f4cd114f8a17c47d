"""``bspatial train``: the typer command function (registered by ``bspatial.cli``).

Heavy imports (torch, lerobot, accelerate) happen inside the command, so registering it is cheap.
Multi-GPU / multi-node: ``accelerate launch -m bspatial.cli train ...`` (Accelerate reads its launch
environment; the preset's batch is the global batch, split evenly across the processes, and the loss curve
is the one-process curve). Several CPU processes (gloo): ``ACCELERATE_USE_CPU=1 accelerate launch
--multi_gpu --num_processes 2 -m bspatial.cli train ...`` (``accelerate launch --cpu`` alone starts one
process unless given an MPI hostfile).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def train_command(
    dataset_root: Annotated[Path, typer.Argument(help="Local LeRobot v3 dataset folder (meta/, data/, videos/).")],
    output_dir: Annotated[
        Path, typer.Argument(help="Run folder of one run (empty or new unless --resume): run_config.json, "
                                  "checkpoints/, metrics.jsonl, pretrained_model/.")
    ],
    preset: Annotated[str, typer.Option(help="Training preset (Table S3 rows, data subsets, or 'tiny').")] = "tiny",
    max_steps: Annotated[Optional[int], typer.Option(help="Override the preset's total steps.")] = None,
    resume: Annotated[
        bool, typer.Option(help="Continue the run in OUTPUT_DIR from its newest checkpoint (same config and data).")
    ] = False,
    init_expert_from: Annotated[
        Optional[Path], typer.Option(help="Checkpoint whose action_expert.* initialises the expert (DROID-style).")
    ] = None,
    data_fraction: Annotated[Optional[float], typer.Option(help="Per-task episode fraction (nested subsets).")] = None,
    batch_size: Annotated[Optional[int], typer.Option(help="Override the preset's global batch size.")] = None,
    seed: Annotated[Optional[int], typer.Option(help="Override the preset's seed.")] = None,
    tracker: Annotated[Optional[list[str]], typer.Option(help="Extra Accelerate tracker (repeatable), e.g. wandb.")] = None,
) -> None:
    """Train BEHAVIOR-Spatial-VLA on LeRobot demonstrations with Accelerate; list presets with --preset help."""
    from .train import train
    from .training_config import PRESETS

    if preset == "help":
        for p in PRESETS:
            typer.echo(f"{p.name:26s} batch {p.batch_size:4d}  peak LR {p.peak_lr:g}  steps {p.max_steps}")
        return
    overrides = {k: v for k, v in (("data_fraction", data_fraction), ("batch_size", batch_size), ("seed", seed))
                 if v is not None}
    try:
        result = train(preset, str(dataset_root), str(output_dir), max_steps=max_steps, resume=resume,
                       init_expert_from=None if init_expert_from is None else str(init_expert_from),
                       trackers=tuple(tracker or ()), **overrides)
    except (ValueError, FileNotFoundError) as error:
        # A plain line and exit 1, as `bspatial splits` does: the message names a folder or a field, and
        # a usage-error box would wrap long paths mid-word and call a refused run folder an "invalid value".
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    from bspatial.common.distributed import Launch

    if Launch.of_environment().rank != 0:
        return  # one summary per launch: rank 0's (every rank trained the same steps)
    typer.echo(f"trained {result.last_step} steps; {result.trainable_parameters:,} of {result.total_parameters:,} "
               f"parameters trainable; final loss {result.losses[-1] if result.losses else float('nan'):.4f}")
    if result.pretrained_dir is not None:
        typer.echo(f"saved {result.pretrained_dir}")


__all__ = ["train_command"]
