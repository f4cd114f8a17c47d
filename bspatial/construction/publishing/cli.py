"""``bspatial build``: the typer command function (wired in ``bspatial.cli``).

Heavy imports are lazy."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def build_command(
    preset: str = typer.Option("mini", "--preset", help="Preset name: tiny (tests), mini (the demo, a few minutes), paper (the paper's exact counts) or aligned (every held-out and prompt-probe episode's own IR query and task VQA item: config episode_aligned). A build size, not the dataset config tiny (a ~10% subset every build exports)."),
    out: Path = typer.Option(..., "--out", help="Output folder: receives vqa/ and ir/ Hub-shaped repos."),
    seed: int = typer.Option(0, "--seed", help="Build seed: the same seed gives identical parquet bytes."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a non-empty --out (the old one stays until "
                                   "the new one is complete)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Processes (one simulator each, default 1); "
                                          "the output does not depend on it. Use the number of cores for the paper "
                                          "preset. With --ray: Ray actors (default: one per cluster CPU)."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Run the jobs on Ray actors: 'auto' (join the cluster Ray "
                                      "finds, else start a local one) or a cluster address host:port (then --out on a "
                                      "filesystem every node mounts). Needs pip install 'behavior-spatial\\[ray]'."),
) -> None:
    """Build the benchmark's VQA and IR suites as Hub-shaped parquet repos."""
    import logging
    import time

    from bspatial.construction.publishing.build import build
    from bspatial.construction.publishing.presets import PresetShortfall
    from bspatial.construction.quality.report import QualityFailure

    start = time.perf_counter()
    try:
        repos = build(preset, out, seed, overwrite=overwrite, workers=workers, ray=ray)
    except (PresetShortfall, QualityFailure, ValueError, FileExistsError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    logging.getLogger(__name__).info("built in %.1f s", time.perf_counter() - start)
    for suite, repo in repos.items():
        typer.echo(f"{suite}: {repo}")

