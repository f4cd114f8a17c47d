"""``bspatial agents``: develop a code-as-policy program with a writer, evaluate the frozen program, tables.

    bspatial agents develop --writer scripted --task reach_plate
    bspatial agents develop --writer openai:http://127.0.0.1:8000/v1#Qwen/Qwen3.5-4B --generation paper-qwen --task reach_plate
    bspatial agents evaluate --run runs/agents/scripted-oracle-reach_plate
    bspatial agents tables --eval runs/agents/scripted-oracle-reach_plate/evaluation-held_out --out reports/agents

Every command resumes in its folder after an interruption. Heavy imports stay inside the functions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

agents_app = typer.Typer(help="Code-as-policy agents (Sec. 4.4, App. 16.5): develop, evaluate, tables.",
                         no_args_is_help=True)


def _fail(error: Exception, code: int = 2) -> None:
    typer.echo(f"error: {error}", err=True)
    raise typer.Exit(code=code) from None


def _generation(preset: str, temperature, top_p, top_k, min_p, presence_penalty, max_tokens, extra_body):
    from dataclasses import asdict

    from bspatial.evaluation.agents.writers import GENERATION_PRESETS, GenerationSettings

    if preset not in GENERATION_PRESETS:
        raise ValueError(f"--generation must be one of {sorted(GENERATION_PRESETS)}, got {preset!r}")
    fields = asdict(GENERATION_PRESETS[preset])
    given = {"temperature": temperature, "top_p": top_p, "top_k": top_k, "min_p": min_p,
             "presence_penalty": presence_penalty, "max_tokens": max_tokens}
    fields.update({k: v for k, v in given.items() if v is not None})
    if extra_body is not None:
        try:
            extra = json.loads(extra_body)
        except ValueError as error:
            raise ValueError(f"--extra-body must be a JSON object, got {extra_body!r} ({error})") from None
        if not isinstance(extra, dict):
            raise ValueError(f"--extra-body must be a JSON object, got {extra_body!r}")
        fields["extra"] = {**fields["extra"], **extra}
    return GenerationSettings(**fields)


@agents_app.command("develop")
def develop_command(
    writer: Annotated[str, typer.Option(help="'scripted' (the reference writer) or openai:<base url>#<model> "
                                             "(vLLM, SGLang, a hosted API; key from OPENAI_API_KEY).")],
    task: Annotated[str, typer.Option(help="A manipulation task (any spelling), e.g. reach_plate.")],
    out: Annotated[Optional[Path], typer.Option(help="Run folder (default runs/agents/<writer>-<pointer>-<task>); "
                                                     "reruns resume there.")] = None,
    pointer: Annotated[str, typer.Option(help="point_at's model: oracle (privileged: simulator segmentation), "
                                              "chance, or a VLM backend spec.")] = "oracle",
    vlm: Annotated[str, typer.Option(help="ask_vlm's backend spec.")] = "chance",
    n_development: Annotated[int, typer.Option(min=1, help="Development episodes (paper: 10).")] = 10,
    attempts: Annotated[int, typer.Option(min=1, help="Writing attempts per step (paper: 3).")] = 3,
    max_steps: Annotated[Optional[int], typer.Option(min=1, help="Cap on each episode's step budget (smoke runs).")] = None,
    generation: Annotated[str, typer.Option(help="Generation preset: default (the server's) or paper-qwen "
                                                 "(App. 16.5: T 1.0, top-p 0.95, top-k 20, min-p 0, presence 1.5, "
                                                 "thinking on).")] = "default",
    temperature: Annotated[Optional[float], typer.Option(help="Overrides the preset.")] = None,
    top_p: Annotated[Optional[float], typer.Option(help="Overrides the preset.")] = None,
    top_k: Annotated[Optional[int], typer.Option(help="Overrides the preset.")] = None,
    min_p: Annotated[Optional[float], typer.Option(help="Overrides the preset.")] = None,
    presence_penalty: Annotated[Optional[float], typer.Option(help="Overrides the preset.")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(help="Reply budget (default: the server's).")] = None,
    extra_body: Annotated[Optional[str], typer.Option(help="JSON object merged into each request body.")] = None,
    screen_wall_s: Annotated[float, typer.Option(min=1.0, help="Screening wall cap in seconds (paper: 60).")] = 60.0,
    unconfined: Annotated[bool, typer.Option(help="Run programs without Landlock / seccomp when the kernel lacks "
                                                  "them (resource limits and the import guard only).")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Develop a program over the development episodes, validate it and freeze it (App. 16.5)."""
    from bspatial.evaluation.agents.develop import develop
    from bspatial.evaluation.agents.writers import writer_label
    from bspatial.common.paths import folder_name

    out = out or Path("runs") / "agents" / folder_name(f"{writer_label(writer)}-{pointer}-{task}").strip("_")
    try:
        settings = _generation(generation, temperature, top_p, top_k, min_p, presence_penalty, max_tokens, extra_body)
        summary = develop(writer, task, out, pointer=pointer, vlm=vlm, n_development=n_development, attempts=attempts,
                          max_steps=max_steps, generation=settings, screen_wall_s=screen_wall_s,
                          require_confinement=not unconfined, progress=progress)
    except ValueError as error:
        _fail(error)
    except RuntimeError as error:
        _fail(error, code=1)
    except KeyboardInterrupt:
        typer.echo(f"interrupted: rerun the same command to resume {out}", err=True)
        raise typer.Exit(code=130) from None
    typer.echo(f"{summary.steps_run} development steps ran, {summary.steps_skipped} skipped; validation: "
               f"{summary.validation_outcome}; frozen: step {summary.frozen_step} ({summary.frozen_reason}) -> {out}")


@agents_app.command("evaluate")
def evaluate_command(
    run: Annotated[Path, typer.Option(help="A development run folder holding a frozen program.")],
    split: Annotated[str, typer.Option(help="held_out (Tables 5 / S6) or prompt_probe.")] = "held_out",
    out: Annotated[Optional[Path], typer.Option(help="Evaluation folder (default <run>/evaluation-<split>).")] = None,
    n_episodes: Annotated[Optional[int], typer.Option(min=1, help="Episodes (default: the task's Table S2 count).")] = None,
    max_steps: Annotated[Optional[int], typer.Option(min=1, help="Cap on each episode's step budget (smoke runs).")] = None,
    vlm: Annotated[str, typer.Option(help="ask_vlm's backend spec.")] = "chance",
    unconfined: Annotated[bool, typer.Option(help="Run without Landlock / seccomp (see develop).")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Run a frozen program unchanged on its task's held-out episodes; print Table 5 / S6 rows."""
    from bspatial.evaluation.agents.evaluate import evaluate_frozen
    from bspatial.evaluation.agents.tables import write_agent_tables

    try:
        summary = evaluate_frozen(run, out, split=split, n_episodes=n_episodes, max_steps=max_steps, vlm=vlm,
                                  require_confinement=not unconfined, progress=progress)
        written = write_agent_tables([summary.out], summary.out / "tables") if split == "held_out" else {}
    except ValueError as error:
        _fail(error)
    except KeyboardInterrupt:
        typer.echo(f"interrupted: rerun the same command to resume {out or run}", err=True)
        raise typer.Exit(code=130) from None
    if "table5.md" in written:
        typer.echo(written["table5.md"].read_text())
    typer.echo(f"{summary.ran} episodes run, {summary.skipped_existing} already done, {summary.errors} crashed "
               f"-> {summary.out}")
    if summary.errors:
        typer.echo(f"error: {summary.errors} episodes crashed; they count as failures", err=True)
        raise typer.Exit(code=1)


@agents_app.command("tables")
def tables_command(
    eval_dirs: Annotated[list[Path], typer.Option("--eval", help="An agent evaluation folder (repeatable).")],
    out: Annotated[Path, typer.Option(help="Folder for table5.{md,csv} and table_s6.{md,csv}.")] = Path("reports/agents"),
) -> None:
    """Table 5 and Table S6 over several agent evaluations, beside the paper's rows."""
    from bspatial.evaluation.agents.tables import write_agent_tables

    try:
        written = write_agent_tables(eval_dirs, out)
    except ValueError as error:
        _fail(error)
    typer.echo(written["table5.md"].read_text())
    typer.echo(f"-> {out}")
