"""Typer command functions of the analysis, wired into the main ``bspatial`` app as a group:

    analyze_app.command("correlate")(correlate)     # bspatial analyze correlate ...
    analyze_app.command("rollouts")(rollouts)       # bspatial analyze rollouts RUN... (the rollout tables together)
    analyze_app.command("join")(join)               # bspatial analyze join (perception and action, episode by episode)
    app.command("report")(report)                   # bspatial report [--html] (VLM tables, the HTML leaderboard)

Heavy imports (the run readers, which pull in the VLM runner's modules) stay inside the function so
``bspatial --help`` is fast.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, TypeVar

import typer

# Light: numpy and the stdlib statistics (the readers, with the VLM runner's imports, load in the command).
from bspatial.evaluation.analysis.bootstrap import DEFAULT_RESAMPLES

T = TypeVar("T")


def _written(write: Callable[[], T], printed: Sequence[str] = ()) -> T:
    """Run a command's writer: a ValueError is the user's input (a folder that is not a run, a refused part), so it
    is printed and the command exits 2; the files named in ``printed`` that were written are echoed."""
    try:
        written = write()
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    for name in printed:
        if name in written:
            typer.echo(written[name].read_text())
    return written


def _paths(written: dict[str, Path]) -> str:
    return "wrote " + ", ".join(str(p) for p in written.values())


def correlate(
    vlm: Annotated[Path, typer.Option("--vlm", help="An eval-vlm run folder (its vqa-task_manipulation, ir-all and "
                                                   "vqa-task_navigation parts are read).")],
    rollout: Annotated[list[Path], typer.Option("--rollout", help="A rollout run folder (repeatable): one column each.")],
    out: Annotated[Path, typer.Option(help="Folder for correlation.md, correlation.csv, correlation_per_task.csv.")] = Path("reports"),
    n_resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples per interval.")] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the bootstrap resampling.")] = 0,
    allow_incomplete: Annotated[bool, typer.Option(
        help="Use VLM parts whose summary is not complete (some items unscored).")] = False,
) -> None:
    """Spearman's rho (average ranks) of per-task perception scores vs per-task policy success, in Table 3's
    layout (and Table S11's navigation pairing), with bootstrap 95% intervals over tasks and over items/episodes."""
    from bspatial.evaluation.analysis.correlate import correlate_runs
    from bspatial.evaluation.analysis.report import write_report

    written = _written(lambda: write_report(correlate_runs(vlm, rollout, n_resamples=n_resamples, seed=seed,
                                                           allow_incomplete=allow_incomplete), out),
                       ["correlation.md"])
    typer.echo(_paths(written))


def join(
    vlm: Annotated[Path, typer.Option("--vlm", help="An eval-vlm run folder with vqa-episode_aligned and/or "
                                                   "ir-episode_aligned parts.")],
    rollout: Annotated[list[Path], typer.Option("--rollout", help="A rollout run folder (repeatable) of the same "
                                                                  "held-out / prompt-probe episodes.")],
    out: Annotated[Path, typer.Option(help="Folder for join.md, join.csv, join_pairs.csv.")] = Path("reports/join"),
    allow_incomplete: Annotated[bool, typer.Option(
        help="Use VLM parts whose summary is not complete (some items unscored).")] = False,
) -> None:
    """Each rollout episode paired with the VLM's answer on its own first frame: success when the item was right vs
    wrong, their difference within tasks with its 95% interval, a task-stratified CMH test, and the task-level rho
    of the same episodes beside the paper's Table 3 rho."""
    from bspatial.evaluation.analysis.episode_join import join_runs
    from bspatial.evaluation.analysis.episode_join_report import write_report

    written = _written(lambda: write_report(join_runs(vlm, rollout, allow_incomplete=allow_incomplete), out),
                       ["join.md"])
    typer.echo(_paths(written))


def rollouts(
    runs: Annotated[list[Path], typer.Argument(help="Rollout run folders (bspatial rollout --out), e.g. a plain and a "
                                                    "perturbed run of the same policy, beside the references.")],
    out: Annotated[Path, typer.Option(help="Folder for the tables (Markdown and CSV).")] = Path("reports/rollouts"),
) -> None:
    """The rollout tables of several runs together: Table 4 / S11, the Spa-Bench condition table (a condition or
    perturbation run paired with the same policy's plain run on the same scenes), the cue ladder, failure modes."""
    from bspatial.evaluation.rollout.tables import PRINTED_TABLES, write_tables

    written = _written(lambda: write_tables(runs, out), PRINTED_TABLES)
    typer.echo(f"wrote {len(written)} files to {out}")


def report(
    runs: Annotated[list[Path], typer.Argument(help="Run folders (one table row each), e.g. runs/*; with --html also "
                                                    "rollout run folders.")],
    out: Annotated[Path, typer.Option(
        help="Folder for table1/table2/per_task/per_subtype/intervals (and circular, paired) .md and .csv; with --html the site "
             "folder (index.html, figures/, logs/).")] = Path("reports"),
    paper: Annotated[bool, typer.Option(help="Append the paper's published rows as reference.")] = False,
    html: Annotated[bool, typer.Option("--html", help="Write a static HTML leaderboard instead (Tables 1-5, S6, "
                                                      "S9-S11 beside the paper's rows, always included, figures, run "
                                                      "fingerprints and logs); opens from the file system, no "
                                                      "server.")] = False,
    paired: Annotated[tuple[Path, Path] | None, typer.Option(
        metavar="RUN_A RUN_B", help="Also compare two eval-vlm runs on the same items: exact McNemar, Newcombe's and "
                                    "the scene-clustered interval of the difference, per shared part (paired.md).",
    )] = None,
) -> None:
    """Write Table 1 and Table 2 layouts (plus per-task / per-subtype breakdowns and every cell's independent-item
    and scene-clustered 95% intervals) as Markdown and CSV, or with --html a static leaderboard site of eval-vlm
    and rollout runs. A paired comparison is asked for by name (--paired), not made for every two runs: k runs
    would give k(k-1)/2 tests nobody asked."""
    if html and paired is not None:
        typer.echo("error: --paired writes paired.md beside the Markdown tables; run it without --html", err=True)
        raise typer.Exit(code=2)
    if html:
        from bspatial.evaluation.analysis.site import write_site

        typer.echo(f"wrote {_written(lambda: write_site(runs, out))}")
        return
    from bspatial.evaluation.vlm.report import write_report

    written = _written(lambda: write_report(runs, out, paper=paper, paired=paired),
                       ("table1.md", "table2.md", "intervals.md", "circular.md", "paired.md"))
    typer.echo(_paths(written))
