"""Typer command functions of the serving subsystem, wired into the main ``bspatial`` app:

    app.command("serve-policy")(serve_policy)
    app.command("openpi-norm-stats")(openpi_norm_stats)

Heavy imports (torch, transformers, websockets) stay inside the functions so ``bspatial --help`` is fast.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

logger = logging.getLogger(__name__)


def serve_policy(
    checkpoint: Annotated[str, typer.Argument(help="A BSpatialVLA checkpoint folder (model + processor).")],
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (openpi's default 8000; 0 picks a free one).")] = 8000,
    host: Annotated[str, typer.Option(help="Interface to bind: 127.0.0.1 (this machine only) or 0.0.0.0 (every interface).")] = "127.0.0.1",
    seed: Annotated[int, typer.Option(min=0, help="Seed of each connection's flow-matching noise (reseeded on every connect).")] = 0,
) -> None:
    """Serve a checkpoint over openpi's websocket policy protocol (metadata on connect, observation -> "actions").

    Observation keys, the 84-dim state and the 23-dim action layout: bspatial.evaluation.serving.protocol (the
    metadata a client receives lists them too). Stop with Ctrl-C.
    """
    from bspatial.evaluation.rollout.policies import POLICY_KINDS, check_policy_spec
    from bspatial.evaluation.serving.server import serve_policy as serve

    try:
        spec = check_policy_spec(checkpoint)
        if spec in POLICY_KINDS or not Path(spec).is_dir():
            raise ValueError(f"serve-policy serves a BSpatialVLA checkpoint folder, got {checkpoint!r}")
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None

    def ready(url: str) -> None:   # tests and scripts wait for this line before connecting
        logger.info("serving %s on %s (openpi websocket protocol; Ctrl-C stops)", spec, url)

    try:
        serve(spec, host=host, port=port, seed=seed, ready=ready)
    except OSError as error:   # the port is taken, the host is not ours
        typer.echo(f"error: cannot serve on {host}:{port}: {error}", err=True)
        raise typer.Exit(code=2) from None
    except ValueError as error:   # a checkpoint the simulator's contract refuses (e.g. another state width)
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    except KeyboardInterrupt:
        raise typer.Exit(code=0) from None


def openpi_norm_stats(
    dataset: Annotated[Path, typer.Argument(help="A LeRobot dataset folder (bspatial demos --out).")],
    out: Annotated[Path, typer.Option(help="Folder for norm_stats.json: openpi reads <assets dir>/<asset id>/.")],
) -> None:
    """Convert the dataset's meta/stats.json (observation.state, action) to openpi's norm_stats.json."""
    from bspatial.evaluation.serving.norm_stats import write_norm_stats

    try:
        path = write_norm_stats(dataset, out)
    except (FileNotFoundError, ValueError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(str(path))
