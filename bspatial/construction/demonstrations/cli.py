"""``bspatial demos`` and ``bspatial sim calibrate-budgets``: typer command functions (wired in ``bspatial.cli``).
Heavy imports are lazy."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def demos_command(
    out: Path = typer.Option(..., "--out", help="Dataset folder to create (LeRobot v3: meta/, data/, videos/)."),
    tasks: Optional[list[str]] = typer.Option(None, "--task", "--tasks", help="Task name (repeatable); default: the "
                                              "tasks of --suite."),
    episodes_per_task: int = typer.Option(2, "--episodes-per-task", min=1, help="Correct episodes wanted per task."),
    seed: int = typer.Option(0, "--seed", help="Build seed: demos use the training split "
                      "entries of this seed (`bspatial splits --seed`)."),
    split: str = typer.Option("train", "--split", help="Split recorded in the traces and episode metadata."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out (the old dataset stays "
                                   "until the new one is complete)."),
    suite: str = typer.Option("manipulation", "--suite", help="Default task list: 'manipulation' (15 tasks) or "
                              "'navigation' (10 tasks, A* expert, validated spawns)."),
    paperback_prefix: bool = typer.Option(False, "--paperback-prefix", help="Prefix reach_paperback_book demos with "
                                          "base motion from the candidate books' bisector (Appendix 16.8)."),
    spa_withheld: bool = typer.Option(False, "--spa-withheld", help="Spa-Bench ID / OOD study: never record a "
                                      "withheld concept-argument cell (bspatial.tasks.conditions.WITHHELD_CELLS)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Processes recording attempts, one simulator "
                                          "each (default 1); with --ray, Ray actors (default: one per cluster CPU)."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Record on Ray actors: 'auto' (join the cluster Ray finds, "
                                      "else start a local one) or a cluster address host:port. Needs "
                                      "pip install 'behavior-spatial\\[ray]'."),
    cameras: Optional[list[str]] = typer.Option(None, "--camera", "--cameras", help="Camera recorded (repeatable; "
                                                "default head, left_wrist, right_wrist; head is required): fewer "
                                                "cameras record faster, for a learner that reads fewer."),
) -> None:
    """Record scripted-expert demonstrations as one LeRobot v3 dataset: video cameras, named state / action
    dimensions, finite statistics (exact q01/q99, the oracle IR target as a masked label outside observation.*),
    grippers settled before the first frame, a ramped base, and a dataset card (README.md)."""
    import logging
    import time

    from bspatial.construction.demonstrations.demos import record_demos

    start = time.perf_counter()
    try:
        path = record_demos(out, tasks=tasks or None, episodes_per_task=episodes_per_task, seed=seed, split=split,
                            overwrite=overwrite, suite=suite, paperback_prefix=paperback_prefix,
                            spa_withheld=spa_withheld, workers=workers, ray=ray,
                            **({"cameras": cameras} if cameras else {}))
    except (ValueError, FileExistsError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    logging.getLogger(__name__).info("recorded in %.1f s", time.perf_counter() - start)
    typer.echo(str(path))


def sim_calibrate_budgets(
    tasks: str = typer.Option("", "--tasks", help="comma-separated task names (default: all 25)"),
    seeds: int = typer.Option(20, "--seeds", help="expert episodes per instruction variant"),
    out: Optional[Path] = typer.Option(None, "--out", help="budget file (default: the packaged one)"),
) -> Path:
    """Recalibrate the per-task step budgets from scripted-expert demonstration lengths."""
    import logging

    from bspatial.construction.demonstrations import budgets
    from bspatial.tasks.budgets import BUDGET_FILE

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    data = budgets.calibrate([t for t in tasks.split(",") if t] or None, seeds=seeds)
    path = budgets.write_budgets(data, out or BUDGET_FILE)
    typer.echo(f"wrote {path}")
    return path
