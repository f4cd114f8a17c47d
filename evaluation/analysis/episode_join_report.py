"""An :class:`~bspatial.evaluation.analysis.episode_join.EpisodeJoin` as Markdown and CSV files.

* ``join.md``: one table per perception measure, a row per policy, split, family (then pooled) and success
  rate: success when the item was right / wrong, their difference within tasks with its interval, the
  task-stratified CMH p; below it the task-level rho of each pooled row, the paper's Table 3 rho for the
  measure (held-out soft success; "n/a" where the paper has no such column), and the unpaired counts;
* ``join.csv``: one row per cell, every number unrounded (rates and differences in percent);
* ``join_pairs.csv``: one row per paired episode, the measures' 0/1 verdicts and its soft / strict success.

Every file is written atomically (:func:`~bspatial.evaluation.analysis.report.write_report_files`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bspatial.common.tables import csv_table, markdown_table
from bspatial.evaluation.analysis.episode_join import POOLED, EpisodeJoin, JoinCell
from bspatial.evaluation.analysis.leaderboard import CORRELATION_MEASURES
from bspatial.evaluation.analysis.perception import Measure
from bspatial.evaluation.analysis.report import write_report_files
from bspatial.evaluation.analysis.success import MANIPULATION_SUCCESS
from bspatial.reference import load_table

FILES = ("join.md", "join.csv", "join_pairs.csv")
PAPER_SPLIT, PAPER_RATE = "held_out", "soft"
"""Table 3's rhos are over held-out soft success (Sec. 5.3.3); other splits and rates have no paper value."""
HEADER = ("Policy", "Split", "Family", "Success", "n right", "success if right", "n wrong", "success if wrong",
          "difference within tasks [95% CI], tasks", "CMH p (tasks)")
CELL_COLUMNS = ("vlm_run", "rollout_run", "policy", "policy_spec", "split", "family", "measure", "success",
                "n_right", "successes_right", "success_right", "n_wrong", "successes_wrong", "success_wrong",
                "difference", "difference_se", "difference_ci_low", "difference_ci_high", "difference_tasks", "confidence",
                "cmh_chi2", "cmh_p", "cmh_tasks", "n_tasks", "task_rho", "episodes_without_item",
                "items_without_episode")


def _percent(successes: int, n: int) -> float | None:
    return None if n == 0 else 100.0 * successes / n


def _points(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


def rate_text(successes: int, n: int) -> str:
    return "–" if n == 0 else f"{100.0 * successes / n:.1f} ({successes}/{n})"


def difference_text(c: JoinCell) -> str:
    d = c.difference
    if d is None:
        return "–"
    # Sato's variance is 0 when no contributing task's outcome varies (an expert that always succeeds): a
    # zero-width bracket would read as certainty, so say why there is none.
    bracket = "no outcome varies" if d.se == 0 else f"{100 * d.low:+.1f}, {100 * d.high:+.1f}"
    return f"{100 * d.estimate:+.1f} [{bracket}], {d.strata}"


def cmh_text(c: JoinCell) -> str:
    return "n/a" if c.association is None else f"{c.association.p_value:.3f} ({c.association.strata})"


def paper_rhos(measure: str) -> str:
    """The paper's Table 3 rhos of ``measure`` per policy, as printed, or "n/a" where Table 3 has no column."""
    column = next((col for name, _, col in CORRELATION_MEASURES if name == measure), None)
    if column is None:
        return "n/a"
    return ", ".join(f"{row['policy']} {row[column]}" for row in load_table("table3_spearman"))


def _rho_lines(cells: list[JoinCell], measure: str) -> list[str]:
    lines = []
    for c in cells:
        if c.family != POOLED:
            continue
        rho = "n/a" if c.task_rho is None else f"{c.task_rho:.3f}"
        paper = paper_rhos(measure) if (c.join.group.split, c.rate) == (PAPER_SPLIT, PAPER_RATE) else "n/a"
        lines.append(f"- {c.join.group.label}, {c.join.group.split}, {c.rate} success: ρ = {rho} over {c.n_tasks} "
                     f"tasks; paper's Table 3 ρ: {paper}")
    return lines


def _unpaired_lines(join: EpisodeJoin, measure: str) -> list[str]:
    return [f"- {j.group.label}, {j.group.split}: {j.episodes_without_item[measure]} episode(s) without an item, "
            f"{j.items_without_episode[measure]} item(s) without an episode" for j in join.joins]


def _measure_section(join: EpisodeJoin, measure: Measure) -> str:
    cells = [c for c in join.cells if c.measure == measure.name]
    rows = [(c.join.group.label, c.join.group.split, c.family, c.rate, c.n_right,
             rate_text(c.successes_right, c.n_right), c.n_wrong, rate_text(c.successes_wrong, c.n_wrong),
             difference_text(c), cmh_text(c)) for c in cells]
    parts = [f"### {measure.name} ({measure.suite}-{measure.config}, field `{measure.sample_field}`)",
             markdown_table(HEADER, rows, right_aligned_from=4),
             "Task-level Spearman ρ of these episodes (per-task accuracy vs per-task success, pooled rows; the "
             "paper's is over other items, held-out soft success):", "\n".join(_rho_lines(cells, measure.name)),
             "Unpaired (left out of this measure):", "\n".join(_unpaired_lines(join, measure.name))]
    return "\n\n".join(parts)


def markdown(join: EpisodeJoin) -> str:
    """The whole Markdown report."""
    confidence = round(100 * next((c.difference.confidence for c in join.cells if c.difference), 0.95))
    legend = (f"VLM run: `{join.vlm_run}`; rollout runs: {', '.join(f'`{r}`' for r in join.rollout_runs)}. Each "
              "episode is paired with the VLM's item rendered from its own first frame. Success rates in percent "
              "(successes/episodes, pooled); difference: success if right minus success if wrong within tasks "
              f"(Mantel-Haenszel), percentage points, with Sato's {confidence}% interval and the number of tasks "
              "holding both sides (each episode is its own scene, so a scene-clustered interval is this one); CMH p: "
              "Cochran-Mantel-Haenszel test (continuity-corrected) stratified by task, with the number of tasks that "
              "carry information.")
    parts = ["## Perception and action on the same episode", legend,
             *(_measure_section(join, m) for m in join.measures)]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def _blank(value: float | int | None) -> float | int | str:
    return "" if value is None else value


def csv_rows(join: EpisodeJoin) -> list[dict[str, Any]]:
    """One row per cell; empty where a value is undefined."""
    rows = []
    for c in join.cells:
        g, d, a = c.join.group, c.difference, c.association
        rows.append({
            "vlm_run": str(join.vlm_run), "rollout_run": str(g.run), "policy": g.label, "policy_spec": g.policy,
            "split": g.split, "family": c.family, "measure": c.measure, "success": c.rate,
            "n_right": c.n_right, "successes_right": c.successes_right,
            "success_right": _blank(_percent(c.successes_right, c.n_right)), "n_wrong": c.n_wrong,
            "successes_wrong": c.successes_wrong, "success_wrong": _blank(_percent(c.successes_wrong, c.n_wrong)),
            "difference": _blank(_points(d.estimate if d else None)),
            "difference_se": _blank(_points(d.se if d else None)),
            "difference_ci_low": _blank(_points(d.low if d else None)),
            "difference_ci_high": _blank(_points(d.high if d else None)),
            "difference_tasks": d.strata if d else 0, "confidence": _blank(d.confidence if d else None),
            "cmh_chi2": _blank(a.statistic if a else None), "cmh_p": _blank(a.p_value if a else None),
            "cmh_tasks": a.strata if a else 0, "n_tasks": c.n_tasks, "task_rho": _blank(c.task_rho),
            "episodes_without_item": c.join.episodes_without_item[c.measure],
            "items_without_episode": c.join.items_without_episode[c.measure],
        })
    return rows


def pair_rows(join: EpisodeJoin) -> list[dict[str, Any]]:
    """One row per paired episode: 1 / 0 per measure (empty: no item of that measure), soft and strict success."""
    rows = []
    for j in join.joins:
        for episode, right in j.pairs:
            rows.append({"policy": j.group.label, "rollout_run": str(j.group.run), "split": j.group.split,
                         "task": episode.task, "index": episode.index, "seed": episode.seed,
                         **{m.name: _blank(None if m.name not in right else int(right[m.name])) for m in join.measures},
                         **{rate: episode.success[rate] for rate in MANIPULATION_SUCCESS}})
    return rows


def write_report(join: EpisodeJoin, out: str | Path) -> dict[str, Path]:
    """Write the three files into ``out`` (created if needed); returns file name -> path."""
    pair_columns = ("policy", "rollout_run", "split", "task", "index", "seed", *(m.name for m in join.measures),
                    *MANIPULATION_SUCCESS)
    return write_report_files(out, dict(zip(FILES, (markdown(join), csv_table(CELL_COLUMNS, csv_rows(join)),
                                                    csv_table(pair_columns, pair_rows(join))))))


__all__ = ["FILES", "cmh_text", "csv_rows", "difference_text", "markdown", "pair_rows", "paper_rhos", "rate_text",
           "write_report"]
