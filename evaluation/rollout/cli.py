"""Typer command function of the rollout runner, wired into the main ``bspatial`` app:

    app.command("rollout")(rollout)

Heavy imports (mujoco, torch) stay inside the function so ``bspatial --help`` is fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def rollout(
    policy: Annotated[str, typer.Option(help="'scripted' (task experts), 'random', 'hold' (never moves), scripted-wrong / "
                                             "scripted-memorizer / scripted-stops-short (references), a BSpatialVLA "
                                             "checkpoint folder, lerobot:<LeRobot checkpoint>[#select_action], "
                                             "openpi:ws://<host>:<port>, or replay:<bspatial demos folder> (the replay "
                                             "check, on --split training).")],
    split: Annotated[str, typer.Option(help="Evaluation split: held_out, prompt_probe (manipulation), navigation (Table S11), spa_id / spa_ood (Spa-Bench ID / OOD cells), or training (the demonstrations' manifest: replay check, in-distribution runs).")] = "held_out",
    tasks: Annotated[Optional[list[str]], typer.Option(
        "--tasks", "--task", help="Task name (repeatable); default: every task of the split.")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Run folder (default runs/<policy>-<split>); reruns resume there.")] = None,
    n_episodes: Annotated[Optional[int], typer.Option(min=1, help="Episodes per task (default: the Table S2 count).")] = None,
    workers: Annotated[Optional[int], typer.Option(min=1, help="Worker processes, one simulator each (default 1); "
                                                   "with --ray, Ray actors (default: one per cluster CPU).")] = None,
    ray: Annotated[Optional[str], typer.Option(
        "--ray", help="Run the episodes on Ray actors: 'auto' (join the cluster Ray finds, else start a local one) "
                      "or a cluster address host:port. Needs pip install 'behavior-spatial\\[ray]'.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the policy's randomness.")] = 0,
    max_steps: Annotated[Optional[int], typer.Option(min=1, help="Cap on each episode's step budget (smoke runs).")] = None,
    latency_steps: Annotated[int, typer.Option(min=0, help="Checkpoints: 0 = synchronous controller, k = async with k-step latency.")] = 0,
    threaded: Annotated[bool, typer.Option(
        help="Checkpoints: real asynchronous inference in a worker thread while the simulator steps (latency measured).")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    ir: Annotated[Optional[str], typer.Option(
        help="IR checkpoints: oracle (simulator target, the default), predicted (a grounding VLM, needs "
             "--ir-model), none (unmarked IR image) or wrong (the oracle cue on the target scripted-wrong pursues: "
             "another candidate, the mirrored side, another layer).")] = None,
    ir_model: Annotated[Optional[str], typer.Option(
        help="--ir predicted: the grounding VLM's backend spec, e.g. chance, openai:<url>#<model>, a hub id.")] = None,
    condition: Annotated[str, typer.Option(
        help="Spa-Bench condition on the split's scenes: spatial (as planned), direct, paraphrase, "
             "direct_paraphrase, cross_task (reach tasks), no_intervention (manipulation splits) or task_name (the "
             "instruction replaced by the task's bare name: a language-blanked policy's prompt); and / or "
             "perturbation axes joined by '+': camera, light, appearance, noise, robot_state (seeded per episode; "
             "e.g. camera+light, paraphrase+noise).")] = "spatial",
    batch_inference: Annotated[bool, typer.Option(
        help="Checkpoints and lerobot: policies with --workers: this process loads the model once and serves every "
             "worker's chunk requests in batches (the same noise, the same chunks; a sampling lerobot: policy draws "
             "its noise on the server); the workers never load the weights.")] = False,
    max_batch: Annotated[Optional[int], typer.Option(min=1, help="--batch-inference: requests per batch at most "
                                                                 "(default: one per worker).")] = None,
    batch_wait_ms: Annotated[float, typer.Option(min=0, help="--batch-inference: how long a batch's first request "
                                                             "waits for others, in ms.")] = 10.0,
    allow_errors: Annotated[bool, typer.Option(
        help="Exit 0 although some episodes crashed (they stay in the tables as errors, scored 'none').")] = False,
) -> None:
    """Roll out a policy on an evaluation split; one result file per episode, then the Table 4 / per-task tables."""
    from bspatial.evaluation.rollout.ir import IRSettings
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.evaluation.rollout.runner import BatchSettings, run_rollouts
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.tables import PRINTED_TABLES, write_tables
    from bspatial.evaluation.rollout.timing import pooled_latency

    out = out or Path("runs") / (f"{_policy_label(policy)}-{split}" + ("" if condition == "spatial" else f"-{condition}"))
    try:
        if ir is None and ir_model is not None:
            raise ValueError(f"--ir-model {ir_model!r} is only used with --ir predicted")
        settings = RunSettings(seed=seed, max_steps=max_steps, latency_steps=latency_steps, threaded=threaded,
                               ir=None if ir is None else IRSettings(ir, ir_model), condition=condition)
        batch = BatchSettings(max_batch, batch_wait_ms / 1000.0) if batch_inference else None
        if batch is None and max_batch is not None:
            raise ValueError(f"--max-batch {max_batch} is only used with --batch-inference")
        summary = run_rollouts(policy, split, tasks, out, settings, n_episodes=n_episodes, workers=workers, ray=ray,
                               progress=progress, batch=batch)
        if summary.ran and summary.errors == summary.ran:
            typer.echo(f"error: all {summary.ran} episodes crashed; no score is reported. First error: "
                       f"{summary.first_error}", err=True)
            raise typer.Exit(code=1)
        written = write_tables([out], out / "tables")
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    except KeyboardInterrupt:
        typer.echo(f"interrupted: rerun the same command to resume {out}", err=True)
        raise typer.Exit(code=130) from None
    for name in PRINTED_TABLES:
        if name in written:
            typer.echo(written[name].read_text())
    latency = pooled_latency(load_results(out))
    if latency is not None:
        typer.echo(f"inference: {latency['calls']} model calls, mean {latency['mean_ms']:.1f} ms, median of episodes "
                   f"{latency['p50_ms']:.1f} ms, p95 up to {latency['p95_ms']:.1f} ms, max {latency['max_ms']:.1f} ms")
    typer.echo(f"{summary.ran} episodes run, {summary.skipped_existing} already done, {summary.errors} crashed"
               + (f", tasks without an expert skipped: {', '.join(summary.skipped_tasks)}" if summary.skipped_tasks else "")
               + f" -> {out}")
    if summary.errors and not allow_errors:
        typer.echo(f"error: {summary.errors} of {summary.ran} episodes crashed (first: {summary.first_error}); "
                   "they count as failures in the tables. Pass --allow-errors to accept that.", err=True)
        raise typer.Exit(code=1)


def _policy_label(policy: str) -> str:
    """A folder-name-safe label of a policy spec: the checkpoint's folder name, or an external spec with its
    ``:``, ``/`` and ``#`` made ``_`` (``openpi:ws://127.0.0.1:8000`` -> ``openpi_ws_127.0.0.1_8000``).

    Example:
        >>> _policy_label("runs/ckpt/pretrained_model"), _policy_label("lerobot:out/act#select_action")
        ('ckpt', 'lerobot_out_act_select_action')
    """
    from bspatial.common.paths import folder_name
    from bspatial.evaluation.rollout.policies import EXTERNAL_POLICIES

    kind, sep, _ = policy.partition(":")
    if sep and kind in EXTERNAL_POLICIES:
        return folder_name(policy).strip("_")
    from bspatial.evaluation.rollout.tables import checkpoint_name

    return checkpoint_name(policy)
