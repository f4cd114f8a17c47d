"""Typer command functions of the VLM harness, wired into the main ``bspatial`` app:

    app.command("eval-vlm", cls=EvalVlmCommand)(eval_vlm)
    app.command("human")(human)

(``bspatial report``, which also writes the HTML leaderboard of every kind of run, lives in
:mod:`bspatial.evaluation.analysis.cli`: the harness sits below the analysis.)

Heavy imports (datasets, PIL, numpy-heavy scoring) stay inside the functions so ``bspatial --help`` is fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from typer.core import TyperCommand


class EvalVlmCommand(TyperCommand):
    """eval-vlm's command: a bare ``--blind`` (at the end, or before another option) means ``--blind grey``.

    typer has no option with an optional value, so the command line is read with that one rule first.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        from bspatial.evaluation.vlm.controls import DEFAULT_BLIND_MODE  # here: `bspatial --help` stays light

        bare = [k for k, arg in enumerate(args) if arg == "--blind" and (k + 1 == len(args) or args[k + 1].startswith("-"))]
        args = [f"--blind={DEFAULT_BLIND_MODE}" if k in bare else arg for k, arg in enumerate(args)]
        return super().parse_args(ctx, args)


def eval_vlm(
    model: Annotated[str, typer.Option(help="Model spec: 'chance' / 'chance:<seed>', a hub id or local path, 'openai:<base url>#<model>', or "
                                          "'vla-backbone:<VLA checkpoint folder>' (the VLM inside one of our policies), or 'policy-point:<rollout run>[,<run>...]' (a policy's own pointing-head points of its rollouts, on --suite ir --config episode_aligned).")],
    suite: Annotated[str, typer.Option(help="Suite: 'vqa' or 'ir'.")] = "vqa",
    config: Annotated[str, typer.Option(help="Dataset config: general_single_frame, general_multi_frame, task_manipulation, task_navigation (vqa); all or a task name (ir); episode_aligned (either suite, a `--preset aligned` build: one item per rollout episode); tiny (either suite: a stratified ~10% subset, not the build preset tiny).")] = "general_single_frame",
    out: Annotated[Optional[Path], typer.Option(help="Run folder (default runs/<model spec>, with -blind, -blind-none or -circular added for those runs); results go to <out>/<suite>-<config>/ and resume from there.")] = None,
    data: Annotated[Optional[str], typer.Option(help="Local dataset repo folder or Hub id (default: behavior-spatial/<suite>).")] = None,
    split: Annotated[str, typer.Option(help="Dataset split.")] = "test",
    batch_size: Annotated[int, typer.Option(min=1, help="Items per backend call (--circular sends each item's four rotations in the same call).")] = 8,
    limit: Annotated[Optional[int], typer.Option(min=0, help="Evaluate only the first N items.")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    blind: Annotated[Optional[str], typer.Option(
        metavar="[grey|none]",
        help="A blind run: the same items without their pictures. 'grey' (what a bare --blind means) sends a uniform "
             "grey (128) image of each frame's own size in its place, so prompts and image-token counts match the "
             "seeing run; 'none' sends no image (backends that accept text-only requests). Its own run: labelled "
             "'<model> (blind)' in reports.")] = None,
    circular: Annotated[bool, typer.Option(
        "--circular", help="VQA only: ask each item once per rotation of its options (A B C D -> B C D A -> ...); it "
                           "counts only if every rotation is right (VLMEvalKit's CircularEval). The summary and "
                           "`bspatial report` give plain (rotation 0) and circular accuracy.")] = False,
    allow_errors: Annotated[bool, typer.Option(
        help="Exit 0 although some items were malformed (logged in errors.jsonl, left unscored).")] = False,
    model_args: Annotated[
        str,
        typer.Option(
            help="Backend options as key=value pairs separated by commas, as lmms-eval's --model_args: "
            "transformers: dtype, device_map, max_new_tokens, revision; vla-backbone: the transformers ones (no revision) "
            "and base (the backbone VLM, for an untied LM head); openai: concurrency, connect_timeout_s (default 10), "
            "read_timeout_s (default 120), timeout_s (sets both), total_timeout_s (per item, over all retries), "
            "max_retries, max_tokens, api_key_env. Example: 'dtype=bfloat16,max_new_tokens=64'."
        ),
    ] = "",
) -> None:
    """Evaluate a VLM on a BEHAVIOR-Spatial suite (Appendix 15 prompts); resumable per-sample logs + summary."""
    from bspatial.common.paths import folder_name
    from bspatial.evaluation.vlm.backend_api import BackendFailedError
    from bspatial.evaluation.vlm.backends import load_backend
    from bspatial.evaluation.vlm.controls import Controls
    from bspatial.evaluation.vlm.runner import IncompatibleRunError, part_dir, run_suite

    try:
        controls = Controls(blind, circular)  # a bad --blind value fails before a model is loaded
        options = parse_model_args(model_args)
        try:
            backend = load_backend(model, **options)
        except TypeError as error:  # an option the backend does not take
            raise ValueError(f"--model-args {model_args!r} does not fit model {model!r}: {error}") from None
        # The runner sends one batch at a time: keep every concurrent request slot busy.
        batch_size = max(batch_size, int(getattr(backend, "concurrency", 1)))
        out = out or Path("runs") / (folder_name(backend.spec) + controls.folder_suffix)
        summary = run_suite(backend, suite, config, out, data=data, split=split, batch_size=batch_size, limit=limit,
                            progress=progress, blind=controls.blind, circular=controls.circular)
    except (ValueError, IncompatibleRunError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    except BackendFailedError as error:  # the model's side, not the command's: exit 1, and say how to go on
        typer.echo(f"error: {error}; what was scored is kept: rerun the same command to resume "
                   f"{part_dir(out or 'runs', suite, config)}", err=True)
        raise typer.Exit(code=1) from None
    except KeyboardInterrupt:
        typer.echo(f"interrupted: rerun the same command to resume {part_dir(out or 'runs', suite, config)}", err=True)
        raise typer.Exit(code=130) from None
    headline = {k: summary["metrics"][k] for k in ("accuracy", "strict_accuracy", "tolerant_accuracy") if k in summary.get("metrics", {})}
    if "accuracy" in summary.get("circular_metrics", {}):
        headline["circular_accuracy"] = summary["circular_metrics"]["accuracy"]
    folder = part_dir(out, suite, config)
    typer.echo(
        f"{suite}-{config}{f' (blind: {blind})' if blind else ''}: {summary['n_scored']} scored, "
        f"{summary['n_errors']} malformed, "
        + ", ".join(f"{k} {v:.1f}" for k, v in headline.items())
        + f" -> {folder}"
    )
    if summary["n_errors"] and not allow_errors:
        typer.echo(f"error: {summary['n_errors']} of {summary['n_items']} items are malformed and unscored (see "
                   f"{folder / 'errors.jsonl'}); the summary is marked incomplete. Pass --allow-errors to accept that.",
                   err=True)
        raise typer.Exit(code=1)
    if not summary["n_scored"]:
        typer.echo(f"error: no item of {suite}-{config} was scored", err=True)
        raise typer.Exit(code=1)




def human(
    data: Annotated[Path, typer.Option(help="A suite's local repo folder (e.g. <build>/vqa), or a `bspatial build` output "
                                            "folder holding vqa/ and ir/ (every suite in it is asked, VQA first).")],
    annotator: Annotated[str, typer.Option(help="Who answers: letters, digits, '_', '.', '-'; the run's model is "
                                                 "human:<annotator>.")],
    config: Annotated[str, typer.Option(help="Dataset config to answer (tiny: the stratified ~10% subset every build "
                                             "exports for people and API models).")] = "tiny",
    out: Annotated[Optional[Path], typer.Option(help="Run folder (default runs/human-<annotator>); answers go to "
                                                     "<out>/<suite>-<config>/ as eval-vlm writes them, and resume "
                                                     "from there.")] = None,
    suite: Annotated[Optional[str], typer.Option(help="Only this suite of a build folder: 'vqa' or 'ir' (default: "
                                                      "every suite found).")] = None,
    split: Annotated[str, typer.Option(help="Dataset split.")] = "test",
    host: Annotated[str, typer.Option(help="Address to serve on (default: this machine only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to serve on (0: any free port).")] = 8765,
) -> None:
    """Collect a human baseline: serve the items one at a time on a local page (frames, question, four option
    buttons for VQA; a click on the image for IR; a timer) and log each answer as an eval-vlm run of model
    human:<annotator>. Stop with Ctrl-C; the same command resumes at the first unanswered item. `bspatial report`
    pools every human run into one row."""
    from bspatial.evaluation.vlm.human import Annotator, HumanSession
    from bspatial.evaluation.vlm.human_server import make_server
    from bspatial.evaluation.vlm.runner import IncompatibleRunError

    try:
        person = Annotator(annotator)
        out = out or Path("runs") / f"human-{annotator}"
        with HumanSession(person, data, config, out, suite=suite, split=split) as session:
            try:
                server = make_server(session, host, port)
            except OSError as error:
                raise ValueError(f"--host {host!r} --port {port}: cannot serve there ({error})") from None
            progress = session.progress()
            typer.echo(f"{person.spec}: {progress['answered']} of {progress['total']} items answered -> {out}")
            typer.echo(f"open http://{host}:{server.server_port}/ (Ctrl-C stops; the same command resumes)")
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                typer.echo(f"stopped: {session.progress()['answered']} answered; rerun the same command to resume")
            finally:
                server.server_close()
    except (ValueError, IncompatibleRunError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None


def parse_model_args(text: str) -> dict[str, bool | int | float | str]:
    """Parse ``key=value,key=value`` backend options; values become bool, int, float or str.

    Example:
        >>> parse_model_args("dtype=bfloat16,max_new_tokens=64,trust_remote_code=true,timeout_s=2.5")
        {'dtype': 'bfloat16', 'max_new_tokens': 64, 'trust_remote_code': True, 'timeout_s': 2.5}
        >>> parse_model_args("dtype")
        Traceback (most recent call last):
        ...
        ValueError: --model-args entry 'dtype' must look like key=value
    """
    options: dict[str, bool | int | float | str] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--model-args entry {entry!r} must look like key=value")
        options[key.strip()] = _typed(value.strip())
    return options


def _typed(value: str) -> bool | int | float | str:
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value
