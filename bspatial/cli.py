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
analyze_app = typer.Typer(help="Analyses across run folders: perception vs action (Table 3, Table S11).", no_args_is_help=True)
app.add_typer(analyze_app, name="analyze")


@app.callback()
def _main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log debug messages.")] = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from bspatial.common.progress import quiet_library_progress, stderr_is_terminal

    if not stderr_is_terminal():  # a log file: our commands log progress lines, the libraries' bars stay out
        quiet_library_progress()


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
    datasets: Annotated[
        Optional[Path], typer.Option(help="A `bspatial build` output folder (vqa/, ir/) to seed the datasets cache from.")
    ] = None,
    datasets_cache: Annotated[
        Optional[Path], typer.Option(help="datasets' HF_DATASETS_CACHE (default: datasets' own setting).")
    ] = None,
    hub_cache: Annotated[
        Optional[Path], typer.Option(help="huggingface-hub's HF_HUB_CACHE, for the EnvHub repo (default: its setting).")
    ] = None,
) -> None:
    """Seed the caches for offline bare-name loading: evaluate.load("bspatial_vqa" | "bspatial_ir" |
    "bspatial_action") and LeRobot's make_env("behavior-spatial/envhub", trust_remote_code=True) always, and with
    --datasets load_dataset("behavior-spatial/vqa" | "behavior-spatial/ir").

    Load with HF_EVALUATE_OFFLINE=1 / HF_HUB_OFFLINE=1 set, so the libraries go to the cache without
    trying the Hub first.
    """
    from bspatial.hub import install_datasets, install_envhub, install_metrics

    for path in install_metrics(modules_cache):
        typer.echo(f"installed {path}")
    typer.echo(f"installed {install_envhub(hub_cache)}")
    if datasets is not None:
        try:
            seeded = install_datasets(datasets, datasets_cache)
        except FileNotFoundError as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(code=2) from None
        for path in seeded:
            typer.echo(f"seeded {path}")


def _register_subsystem_commands() -> None:
    # The command functions live with their subsystems; their modules keep heavy imports inside
    # the functions, so registering them here costs nothing at `--help` time.
    from bspatial.evaluation.agents.cli import agents_app
    from bspatial.evaluation.analysis.cli import correlate, join, report, rollouts
    from bspatial.evaluation.analysis.model_card import model_card_command
    import bspatial.evaluation.analysis.policy_point  # noqa: F401  (registers eval-vlm's policy-point backend)
    from bspatial.evaluation.envs.cli import vla_eval_config_command
    from bspatial.evaluation.vlm.cli import EvalVlmCommand, eval_vlm, human

    from bspatial.construction.demonstrations.cli import demos_command, sim_calibrate_budgets
    from bspatial.construction.gallery.cli import sim_gallery
    from bspatial.construction.publishing.cli import build_command
    from bspatial.evaluation.rollout.cli import rollout
    from bspatial.evaluation.serving.cli import openpi_norm_stats, serve_policy
    from bspatial.tasks.cli import sim_tasks, sim_view

    app.command("build")(build_command)
    app.command("demos")(demos_command)
    app.command("rollout")(rollout)
    app.command("serve-policy")(serve_policy)
    app.command("openpi-norm-stats")(openpi_norm_stats)
    app.command("eval-vlm", cls=EvalVlmCommand)(eval_vlm)  # a bare --blind means --blind grey
    app.command("human")(human)
    app.command("report")(report)
    app.command("model-card")(model_card_command)
    app.command("vla-eval-config")(vla_eval_config_command)
    analyze_app.command("correlate")(correlate)
    analyze_app.command("rollouts")(rollouts)
    analyze_app.command("join")(join)
    app.add_typer(agents_app, name="agents")
    sim_app.command("tasks")(sim_tasks)
    sim_app.command("view")(sim_view)
    sim_app.command("calibrate-budgets")(sim_calibrate_budgets)
    sim_app.command("gallery")(sim_gallery)


_register_subsystem_commands()


@app.command()
def splits(
    out: Annotated[Path, typer.Option("--out", help="Folder for training / held_out / prompt_probe / navigation .jsonl.")],
    seed: Annotated[int, typer.Option("--seed", min=0, help="Build seed: every scene seed derives from it.")] = 0,
    n_training: Annotated[int, typer.Option("--n-training", min=1, help="Training configurations per task.")] = 200,
) -> None:
    """Write the split manifests: training configurations, held-out (469), prompt-probe (700), navigation (401)."""
    from bspatial.construction.splits import write_manifests

    try:
        paths = write_manifests(out, seed=seed, n_training=n_training)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    for path in paths.values():
        typer.echo(str(path))


@app.command(
    "train",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def train(ctx: typer.Context) -> None:
    """Train BEHAVIOR-Spatial-VLA on LeRobot demonstrations with Accelerate (`bspatial train --help`)."""
    # Importing anything under bspatial.modeling imports transformers (~10 s: the package registers
    # its Auto classes), so this command forwards its arguments, --help included, to the real one
    # only when it runs; `bspatial --help` stays fast.
    from bspatial.modeling.train_cli import train_command

    command = typer.main.get_command(_single_command_app(train_command))
    command.main(args=ctx.args, prog_name="bspatial train", standalone_mode=True)


def _single_command_app(function) -> typer.Typer:
    """A one-command app: typer turns it into that command itself, options and help included."""
    single = typer.Typer(add_completion=False)
    single.command()(function)
    return single


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
