"""``bspatial report --html <runs...> --out site/``: the static leaderboard folder.

The folder (``index.html``, ``figures/``, ``logs/``, ``bspatial-report.json``) is built in a staging
folder beside ``--out`` and published in one rename (:func:`bspatial.common.files.publish_folder`), so a
reader, or a kill mid-build, sees the old site or the new one, never half of one. An existing ``--out``
is replaced only when it is a site this command wrote (it holds ``bspatial-report.json``): pointing
``--out`` at a folder of other files is refused rather than swapped away.

Runs are told apart by their files: a ``rollout`` run folder holds ``rollout.json``; an ``eval-vlm`` run
folder holds ``summary.json`` parts. Each run's logs are copied into ``logs/`` (VLM parts' samples,
summaries and fingerprints; a rollout run's settings and its episode records as one ``episodes.jsonl``),
so the site is whole on its own, offline, wherever it is moved.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from bspatial.common.files import (atomic_write_text, publish_folder, remove_stale_staging, require_folder_path,
                                   staging_folder)
from bspatial.common.locks import run_folder_lock
from bspatial.common.progress import track
from bspatial.evaluation.analysis import html, leaderboard, plots

logger = logging.getLogger(__name__)

INDEX = "index.html"
MARKER = "bspatial-report.json"
"""Written into every site: what it was built from; its presence lets a rebuild replace the folder."""
FIGURES, LOGS = "figures", "logs"
CORRELATION_RESAMPLES = 1000
"""Bootstrap resamples of Table 3's intervals in the page (``analyze correlate`` defaults to 2000; the
page shows the over-tasks interval only, whose 2.5 / 97.5 percentiles are stable at 1000)."""
SCATTER_MEASURES = (("vqa", "task-grounded VQA accuracy (%)"), ("ir_tolerant", "tolerant IR accuracy (%)"))
"""Figure S9's perception scores: VQA and tolerant IR (Table 3's two columns)."""


@dataclass(frozen=True)
class VlmRun:
    label: str
    path: Path
    run: Any     # bspatial.evaluation.vlm.report.Run


@dataclass(frozen=True)
class RolloutRun:
    label: str
    path: Path
    settings: dict[str, Any]
    records: list[dict[str, Any]]


def _labels(paths: Sequence[Path]) -> list[str]:
    """Folder names, with the parent folder added where two runs share a name."""
    names = [p.name for p in paths]
    return [f"{p.parent.name}/{p.name}" if names.count(p.name) > 1 else p.name for p in paths]


def load_runs(paths: Sequence[str | Path]) -> tuple[list[VlmRun], list[RolloutRun]]:
    """Sort run folders into VLM runs and rollout runs, labelled uniquely.

    Raises:
        ValueError: a path is given twice, is not a folder, or is neither kind of run folder.
    """
    from bspatial.evaluation.agents.evaluate import EVALUATION_MANIFEST
    from bspatial.evaluation.rollout.episodes import load_results
    from bspatial.evaluation.rollout.runner import MANIFEST_NAME
    from bspatial.evaluation.vlm.report import load_run

    if not paths:
        raise ValueError("give at least one run folder")
    resolved = [Path(p).resolve() for p in paths]
    twice = sorted({str(p) for p in resolved if resolved.count(p) > 1})
    if twice:
        raise ValueError(f"run folders given more than once: {twice}")
    vlm, rollout = [], []
    for path, label in zip(resolved, _labels(resolved)):
        if not path.is_dir():
            raise ValueError(f"run {path}: not a folder (expected an eval-vlm or rollout run folder)")
        manifest = next((path / m for m in (MANIFEST_NAME, EVALUATION_MANIFEST) if (path / m).is_file()), None)
        if manifest is not None:   # a rollout run, or an agent evaluation (same episode files)
            records = load_results(path)
            if not records:
                raise ValueError(f"run {path}: a rollout run folder with no episode result files")
            rollout.append(RolloutRun(label, path, json.loads(manifest.read_text()), records))
        else:
            try:
                vlm.append(VlmRun(label, path, load_run(path)))
            except ValueError as error:
                raise ValueError(f"run {path} is neither a rollout run folder (no {MANIFEST_NAME}) nor an eval-vlm "
                                 f"run folder ({error})") from None
    return vlm, rollout


# ----------------------------------------------------------------------------- correlations


def correlations(vlm: Sequence[VlmRun], rollout: Sequence[RolloutRun], seed: int = 0) -> tuple[list[Any], list[str]]:
    """Every cell ``bspatial analyze correlate`` would compute, per VLM run against all rollout runs.

    Cells are computed one by one (:func:`~bspatial.evaluation.analysis.correlate.correlate_pair`, the
    command's own function) so that a pair joining fewer than 3 tasks (a smoke rollout on one task, a
    navigation run on two) drops only that cell, where the command refuses the whole analysis; the
    dropped cells are named in the returned notes (shown on the page). A VLM run without task parts
    (general VQA only) has nothing to correlate and is only logged.
    """
    from bspatial.evaluation.analysis.correlate import MEASURES, Analysis, _pairs, correlate_pair
    from bspatial.evaluation.analysis.join import JoinError
    from bspatial.evaluation.analysis.perception import read_perception
    from bspatial.evaluation.analysis.success import read_rollouts

    if not vlm or not rollout:
        return [], []
    try:
        policies = read_rollouts([r.path for r in rollout])
    except ValueError as error:
        return [], [f"Table 3 / Figure S9: the rollout runs cannot be correlated: {error}"]
    # read_rollouts tells apart two runs' equal labels by the run's path; the page's run label is shorter.
    names = {r.path: r.label for r in rollout}
    policies = [dataclasses.replace(p, label=p.label.replace(str(p.run), names.get(p.run, p.run.name))) for p in policies]
    analyses, notes = [], []
    for v in vlm:
        try:
            perception = read_perception(v.path)
        except ValueError as error:
            logger.info("VLM run %s has nothing to correlate: %s", v.label, error)
            continue
        cells, dropped = [], []
        # _pairs is correlate_runs' own pairing rule (which measure meets which split and rate).
        for measure, policy, rate in _pairs([m for m in MEASURES if m.name in perception], policies):
            try:
                cells.append(correlate_pair(measure, perception[measure.name], policy, rate, CORRELATION_RESAMPLES,
                                            seed))
            except JoinError as error:
                logger.info("VLM run %s: no %s / %s %s cell: %s", v.label, measure.name, policy.label, rate, error)
                dropped.append(f"{measure.name} vs {policy.label} {rate}")
        if dropped:
            notes.append(f"Table 3 / Figure S9: VLM run {v.label}: fewer than 3 tasks in common, so no rho for "
                         f"{'; '.join(dropped)} (`bspatial analyze correlate` lists the tasks).")
            logger.warning(notes[-1])
        if cells:
            analyses.append(Analysis(v.path, cells, CORRELATION_RESAMPLES, seed))
    return analyses, notes


def episode_joins(vlm: Sequence[VlmRun], rollout: Sequence[RolloutRun]) -> tuple[list[Any], list[str]]:
    """``bspatial analyze join`` for every VLM run with an ``episode_aligned`` part, against all rollout runs.

    A VLM run without such a part is skipped (nothing to join); a join that is refused (an incomplete part, no
    episode in common) is named in the returned notes rather than failing the page, as Table 3's cells are.
    """
    from bspatial.evaluation.analysis.episode_join import has_aligned_parts, join_runs
    from bspatial.evaluation.rollout.runner import MANIFEST_NAME

    # Agent evaluations (their own manifest) have Tables 5 / S6, not aligned perception items.
    runs = [r.path for r in rollout if (r.path / MANIFEST_NAME).is_file()]
    joins, notes = [], []
    for v in vlm:
        if not runs or not has_aligned_parts(v.path):
            continue
        try:
            joins.append(join_runs(v.path, runs))
        except ValueError as error:
            notes.append(f"Perception and action on the same episode: VLM run {v.label}: {error}")
            logger.warning(notes[-1])
    return joins, notes


# ----------------------------------------------------------------------------- figures


def _scatter(analysis, measure: str) -> list[plots.ScatterSeries]:
    series = []
    for c in analysis.correlations:
        if c.measure.name == measure and c.rate == "soft" and c.policy.split == "held_out":
            note = "ρ undefined" if c.rho is None else f"Spearman ρ = {c.rho:.3f}"
            series.append(plots.ScatterSeries(c.policy.label, tuple(c.joined.tasks), tuple(c.joined.perception),
                                              tuple(c.joined.success), note))
    return series


def _rate_figures(records) -> list[tuple[str, str, Any]]:
    from bspatial.evaluation.rollout.tables import group_records, policy_label, rates_of

    out = []
    groups = group_records(records)
    for split, (key, title) in leaderboard.COMPARISON_SPLITS.items():
        per_policy = {policy_label(p): rates_of(g) for (p, s), g in groups.items() if s == split}
        if not per_policy:
            continue
        tasks = list(dict.fromkeys(t for r in per_policy.values() for t in r.per_task))
        for rate in ("soft", "strict"):
            series = {label: [*(r.per_task[t][rate] if t in r.per_task else None for t in tasks), getattr(r, rate)]
                      for label, r in per_policy.items()}
            name = "+Soft" if rate == "soft" else "strict"
            fig = plots.rate_bars_figure([*tasks, "POOLED"], series, f"{title.split(':')[0]}: {name} success per task",
                                         f"{name} success (%)")
            out.append((f"{key}_{rate}", f"{title.split(':')[0]} ({split}), {name} success",
                        "Per task and POOLED (Table 4's column); error bars: Wilson 95% intervals.", fig))
    return out


def _failure_figure(records):
    from bspatial.evaluation.rollout.tables import group_records, policy_label

    counts = {}
    for (policy, split), group in group_records(records).items():
        labelled = Counter(r["failure_mode"] for r in group if r.get("failure_mode"))
        if labelled:
            counts[f"{policy_label(policy)} · {split}"] = dict(labelled)
    if not counts:
        return None
    from bspatial.scoring.failure_modes import FAILURE_MODES

    return plots.failure_stack_figure(counts, FAILURE_MODES, "Primary failure modes (Spa-Bench style)")


def _navigation_figures(records) -> list[tuple[str, Any]]:
    import numpy as np

    from bspatial.evaluation.rollout.tables import group_records, rates_of
    from bspatial.tasks.navigation import NAV_TASKS

    by_plan: dict[str, list[plots.NavStart]] = {}
    for (policy, split), group in group_records(records).items():
        for r in group:
            if split != "navigation" or not (r.get("trace") or {}).get("base_poses"):
                continue
            poses = np.asarray(r["trace"]["base_poses"], float)
            start = plots.NavStart(r["task"], tuple(float(v) for v in poses[0]), poses,
                                   bool(rates_of([r]).strict.successes), policy)
            by_plan.setdefault(NAV_TASKS[r["task"]].plan, []).append(start)
    return [(plan, plots.navigation_map_figure(plan, starts)) for plan, starts in sorted(by_plan.items())]


def write_figures(folder: Path, analyses, records, labels: dict[Path, str] | None = None) -> list[html.FigureLink]:
    """Every figure the runs allow, saved under ``folder`` (PNG + SVG); returns their links (relative).
    ``labels`` names the VLM run folders in the captions (default: the folder name)."""
    jobs: list[tuple[str, str, str, Any]] = []   # (stem, title, caption, figure factory)
    by_vlm: dict[Path, list[Any]] = {}
    for analysis in analyses:
        by_vlm.setdefault(analysis.vlm_run, []).append(analysis)
    for i, (vlm_run, group) in enumerate(by_vlm.items()):
        for measure, axis in SCATTER_MEASURES:
            series = [s for analysis in group for s in _scatter(analysis, measure)]
            if series:
                jobs.append((f"figure_s9_{i}_{measure}", f"Figure S9: {axis} vs soft held-out success",
                             f"Perception from VLM run {(labels or {}).get(vlm_run, vlm_run.name)}; one panel per policy, one point per task, "
                             "descriptive linear fit.", lambda s=series, a=axis: plots.scatter_figure(
                                 s, a, "soft held-out success (%)", "Task-level perception vs policy success")))
    manipulation = [r for r in records if r["split"] in ("held_out", "prompt_probe")]
    if manipulation:
        for stem, title, caption, fig in _rate_figures(manipulation):
            jobs.append((stem, title, caption, lambda f=fig: f))
        jobs.append(("failure_modes", "Failure modes", "Share of each primary failure mode per policy and split "
                     "(counts on the bars).", lambda: _failure_figure(records)))
    for plan, fig in _navigation_figures(records):
        jobs.append((f"navigation_{plan}", f"Navigation map: {plan}", "Furniture footprints (gray), destinations "
                     "(yellow, star), start poses and headings (blue arrows; filled = reached the goal), base paths.",
                     lambda f=fig: f))
    links = []
    folder.mkdir(parents=True, exist_ok=True)
    for stem, title, caption, make in track(jobs, "figures", "figure", leave=False):
        fig = make()
        if fig is None:
            continue
        plots.save_figure(fig, folder / stem)
        links.append(html.FigureLink(title, caption, f"{folder.name}/{stem}.png", f"{folder.name}/{stem}.svg"))
    return links


# ----------------------------------------------------------------------------- logs and run cards


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "run"


def copy_logs(site: Path, index: int, run: VlmRun | RolloutRun) -> html.RunCard:
    """Copy one run's logs into ``site/logs/<nn>-<label>/``; returns its card (links relative to ``site``)."""
    from bspatial.evaluation.vlm.run_files import ERRORS_FILE, FINGERPRINT_FILE, SAMPLES_FILE, SUMMARY_FILE

    target = site / LOGS / f"{index:02d}-{_safe(run.label)}"
    target.mkdir(parents=True)
    links = []
    if isinstance(run, RolloutRun):
        atomic_write_text(target / "rollout.json", json.dumps(run.settings, indent=2))
        lines = "".join(json.dumps(r, sort_keys=True) + "\n" for r in run.records)
        atomic_write_text(target / "episodes.jsonl", lines)
        links = [("settings (rollout.json)", "rollout.json"), (f"episodes.jsonl ({len(run.records)} episodes)",
                                                               "episodes.jsonl")]
        card = html.RunCard(run.label, "rollout", str(run.path), run.settings,
                            tuple((n, f"{LOGS}/{target.name}/{h}") for n, h in links))
        return card
    fingerprints = {}
    parts = [run.path] if (run.path / SUMMARY_FILE).is_file() else sorted(p.parent for p in run.path.glob(f"*/{SUMMARY_FILE}"))
    for part in parts:
        (target / part.name).mkdir()
        for name in (SAMPLES_FILE, SUMMARY_FILE, FINGERPRINT_FILE, ERRORS_FILE):
            if (part / name).is_file():
                shutil.copyfile(part / name, target / part.name / name)
                links.append((f"{part.name}/{name}", f"{LOGS}/{target.name}/{part.name}/{name}"))
        if (part / FINGERPRINT_FILE).is_file():
            fingerprints[part.name] = json.loads((part / FINGERPRINT_FILE).read_text())
    return html.RunCard(run.label, f"eval-vlm, model {run.run.label}", str(run.path), fingerprints, tuple(links))


# ----------------------------------------------------------------------------- the site


def build_page(vlm: Sequence[VlmRun], rollout: Sequence[RolloutRun], figures, cards, notes, analyses,
               joins: Sequence[Any] = ()) -> html.Page:
    from bspatial.evaluation.agents.tables import is_agent

    everything = [r for run in rollout for r in run.records]
    records = [r for r in everything if not is_agent(r)]     # agent programs have Tables 5 / S6
    rows = _table_runs(vlm)
    tables = [leaderboard.vlm_table("table1", rows),
              leaderboard.vlm_table("table2", rows),
              leaderboard.correlation_table(analyses, {r.path: r.label for r in [*vlm, *rollout]}),
              # Only when some VLM run has episode_aligned parts: without them there is nothing to show.
              *([leaderboard.episode_join_table(joins, {r.path: r.label for r in [*vlm, *rollout]})] if joins else []),
              leaderboard.table4(records),
              *leaderboard.code_as_policy_tables([r for r in everything if is_agent(r)]),
              leaderboard.comparison_table(records, "held_out"),
              leaderboard.comparison_table(records, "prompt_probe"),
              leaderboard.navigation_table(records)]
    intro = (f"{len(vlm)} eval-vlm run(s) and {len(rollout)} rollout run(s), beside the paper's published rows. "
             "Built by bspatial report --html; works offline from this folder.")
    return html.Page("BEHAVIOR-Spatial leaderboard", intro, tuple(tables), tuple(figures), tuple(cards), tuple(notes))


def _table_runs(vlm: Sequence[VlmRun]) -> list[tuple[str, Any]]:
    """Tables 1 and 2's ``(label, run)`` rows: every annotator's run (``bspatial human``) pooled into one human row
    (:func:`~bspatial.evaluation.vlm.report.pool_human_runs`); their logs keep a card each."""
    from bspatial.evaluation.vlm.report import HUMAN_RUN_NAME, pool_human_runs

    labels = {id(r.run): r.label for r in vlm}
    return [(labels.get(id(run), HUMAN_RUN_NAME), run) for run in pool_human_runs([r.run for r in vlm],
                                                                                   [r.path for r in vlm])]


def _check_out(out: Path) -> None:
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ValueError(f"--out {out} is a non-empty folder that is not a report site (no {MARKER}); "
                         "give a new folder or a site this command wrote")


def write_site(run_paths: Sequence[str | Path], out: str | Path, seed: int = 0) -> Path:
    """Build the leaderboard folder ``out`` from run folders; returns the path of its ``index.html``.

    Raises:
        ValueError: a run folder is not a run of either kind, or ``out`` is a folder of other files, or a
            file (:class:`~bspatial.common.files.NotAFolderError`).
    """
    out = require_folder_path(Path(out).resolve())
    vlm, rollout = load_runs(run_paths)
    for run in vlm:
        if not run.run.complete:
            logger.warning("run %s is incomplete (interrupted or limited): its rows cover part of the suite", run.label)
    with run_folder_lock(out.parent, "report --html", name=f".{out.name}.lock"):
        remove_stale_staging(out)   # we hold out's lock: a staging folder of out is a killed build's
        _check_out(out)
        stage = staging_folder(out)
        try:
            analyses, notes = correlations(vlm, rollout, seed)
            joins, join_notes = episode_joins(vlm, rollout)
            records = [r for run in rollout for r in run.records]
            figures = write_figures(stage / FIGURES, analyses, records, {r.path: r.label for r in vlm})
            cards = [copy_logs(stage, i, run) for i, run in enumerate([*vlm, *rollout])]
            page = build_page(vlm, rollout, figures, cards, [*notes, *join_notes], analyses, joins)
            atomic_write_text(stage / INDEX, html.render_page(page))
            atomic_write_text(stage / MARKER, json.dumps({"runs": [str(r.path) for r in [*vlm, *rollout]],
                                                          "seed": seed}, indent=2))
            publish_folder(stage, out)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return out / INDEX


__all__ = ["INDEX", "MARKER", "RolloutRun", "VlmRun", "build_page", "copy_logs", "correlations", "episode_joins",
           "load_runs", "write_figures", "write_site"]
