"""The `bspatial` command line. Heavy imports stay inside the commands so `--help` is fast."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Optional

import typer

app = typer.Typer(help="BEHAVIOR-Spatial: spatial VQA, point grounding (IR) and robot action suites.", no_args_is_help=True)
hub_app = typer.Typer(help="Offline Hugging Face set-up: seed the caches that bare-name loading reads.", no_args_is_help=True)
app.add_typer(hub_app, name="hub")
sim_app = typer.Typer(help="The embedded MuJoCo household simulator: tasks and views.", no_args_is_help=True)
app.add_typer(sim_app, name="sim")


@app.callback()
def _main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log debug messages.")] = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")


@app.command()
def version() -> None:
    """Print the package version."""
    from bspatial import __version__

    typer.echo(__version__)


@hub_app.command("install")
def hub_install(
    modules_cache: Annotated[
        Optional[Path], typer.Option(help="evaluate's HF_MODULES_CACHE (default: $HF_MODULES_CACHE or $HF_HOME/modules).")
    ] = None,
) -> None:
    """Seed evaluate's module cache so evaluate.load("bspatial_vqa" | "bspatial_ir" | "bspatial_action") works offline.

    Load with HF_EVALUATE_OFFLINE=1 set, so evaluate goes to the cache without trying the Hub first.
    """
    from bspatial.hub import install_metrics

    for path in install_metrics(modules_cache):
        typer.echo(f"installed {path}")


def _register_subsystem_commands() -> None:
    # The command functions live with their subsystems; their modules keep heavy imports inside
    # the functions, so registering them here costs nothing at `--help` time.
    from bspatial.evaluation.vlm.cli import eval_vlm, report

    from bspatial.sim.cli import sim_tasks, sim_view

    app.command("eval-vlm")(eval_vlm)
    app.command("report")(report)
    sim_app.command("tasks")(sim_tasks)
    sim_app.command("view")(sim_view)


_register_subsystem_commands()


@app.command()
def demo(
    seed: Annotated[int, typer.Option(help="Seed of the chance reference model.")] = 0,
    workdir: Annotated[Path, typer.Option(help="Where the demo writes its fixture suites and run folders.")] = Path(".demo"),
) -> None:
    """The main job on the embedded default: score through the three metrics and print the tables."""
    from bspatial.demo import run_demo

    run_demo(seed=seed, workdir=workdir)


if __name__ == "__main__":
    app()
