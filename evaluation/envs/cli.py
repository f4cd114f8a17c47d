"""Typer command of the env adapters, wired into the main ``bspatial`` app:

    app.command("vla-eval-config")(vla_eval_config_command)
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def vla_eval_config_command(
    out: Annotated[Path, typer.Option(help="The YAML file to write.")],
    split: Annotated[str, typer.Option(help="held_out, prompt_probe, navigation, spa_id, spa_ood or training.")] = "held_out",
    tasks: Annotated[Optional[list[str]], typer.Option(
        "--tasks", "--task", help="Task name (repeatable); default: every task of the split.")] = None,
    n_episodes: Annotated[Optional[int], typer.Option(min=1, help="Episodes per task (default: the Table S2 count).")] = None,
    server: Annotated[str, typer.Option(help="The model server's websocket URL.")] = "ws://localhost:8000",
    output_dir: Annotated[str, typer.Option(help="vla-eval's results folder.")] = "results/vla-eval",
    record_dir: Annotated[str, typer.Option(
        help="Folder for our per-episode records and the Table 4 / S11 tables written at the end.")] =
        "results/vla-eval/bspatial-records",
    render: Annotated[str, typer.Option(help="cpu (software rendering) or gpu (EGL on the GPU).")] = "cpu",
    cameras: Annotated[Optional[list[str]], typer.Option(
        "--camera", help="Camera sent to the model server (repeatable): head, left_wrist, right_wrist; default all.")] = None,
    image_size: Annotated[Optional[int], typer.Option(min=1, help="Square render size (default 224, the demos').")] = None,
    max_steps: Annotated[Optional[int], typer.Option(min=1, help="Cap on each episode's step budget (smoke runs).")] = None,
    policy_label: Annotated[Optional[str], typer.Option(help="What the tables call the evaluated model.")] = None,
) -> None:
    """Write a vla-eval config that plays a BEHAVIOR-Spatial split (one benchmark entry per task)."""
    from bspatial.evaluation.envs.vla_eval_config import vla_eval_config, write_vla_eval_config

    params = {key: value for key, value in (("camera_names", cameras), ("image_size", image_size),
                                             ("max_steps", max_steps), ("policy_label", policy_label))
              if value is not None}
    try:
        config = vla_eval_config(split, tasks, n_episodes=n_episodes, server=server, output_dir=output_dir,
                                 record_dir=record_dir, render=render, params=params)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    path = write_vla_eval_config(config, out)
    episodes = sum(entry["episodes_per_task"] for entry in config["benchmarks"])
    typer.echo(f"{path}: {len(config['benchmarks'])} tasks, {episodes} episodes of {split}; "
               f"run: vla-eval run --no-docker -c {path}")
