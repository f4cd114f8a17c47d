"""An :class:`~bspatial.evaluation.analysis.correlate.Analysis` as Markdown and CSV files.

* ``correlation.md``: Table 3's layout (a row per policy, a column per perception measure: VQA, tolerant
  IR, plus strict IR), one table per success rate (soft first, as Table 3; then strict), the Table S11
  pairing (navigation VQA against navigation success) when there is one, and the joined / dropped tasks
  of every cell;
* ``correlation.csv``: one row per cell: rho, both intervals with their defined-resample counts, the
  tasks joined and dropped;
* ``correlation_per_task.csv``: the points behind each rho (Figure S9): per task, both scores and their
  sample counts.

Every file is written atomically (:func:`bspatial.common.files.atomic_write_text`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bspatial.common.files import atomic_write_text
from bspatial.evaluation.analysis.bootstrap import Interval
from bspatial.evaluation.analysis.correlate import Analysis, Correlation
from bspatial.evaluation.analysis.perception import NAVIGATION
from bspatial.evaluation.rollout.tables import to_csv, to_markdown

FILES = ("correlation.md", "correlation.csv", "correlation_per_task.csv")
_JOIN = "|"  # task lists inside one CSV cell


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _interval(interval: Interval) -> str:
    text = f"[{_number(interval.low)}, {_number(interval.high)}]"
    if interval.defined < interval.requested:
        text += f" ({interval.defined}/{interval.requested})"  # resamples with a constant side had no rho
    return text


def _cell(c: Correlation) -> str:
    if c.rho is None:
        return f"n/a ({c.undefined})"
    return f"{c.rho:.3f} {_interval(c.over_tasks)} / {_interval(c.over_items)}"


def _section_title(pairing: str, rate: str) -> str:
    if pairing == NAVIGATION:
        return "Navigation (Table S11 pairing): navigation VQA vs navigation success"
    return f"Manipulation (Table 3 layout): perception vs {rate} success"


def _sections(analysis: Analysis) -> list[str]:
    keys = list(dict.fromkeys((c.measure.pairing, c.rate) for c in analysis.correlations))
    keys.sort(key=lambda k: (k[0] == NAVIGATION, k[1] != "soft"))  # Table 3 (soft) first, S11 last
    blocks = []
    for pairing, rate in keys:
        cells = [c for c in analysis.correlations if (c.measure.pairing, c.rate) == (pairing, rate)]
        measures = list(dict.fromkeys(c.measure for c in cells))
        rows = []
        for label in dict.fromkeys(c.policy.label for c in cells):
            row: dict[str, Any] = {"Policy": label}
            for measure in measures:
                found = [c for c in cells if c.policy.label == label and c.measure == measure]
                row[measure.header] = _cell(found[0]) if found else "-"
            rows.append(row)
        blocks.append(f"### {_section_title(pairing, rate)}\n\n{to_markdown(rows)}")
    return blocks


def _tasks_table(analysis: Analysis) -> str:
    rows = [{"Measure": c.measure.name, "Success": c.rate, "Policy": c.policy.label, "n": len(c.joined.tasks),
             "Joined tasks": ", ".join(c.joined.tasks),
             "Only in the VLM run": ", ".join(c.joined.only_perception) or "-",
             "Only in the rollout run": ", ".join(c.joined.only_success) or "-"} for c in analysis.correlations]
    return to_markdown(rows)


def markdown(analysis: Analysis) -> str:
    """The whole Markdown report."""
    confidence = round(100 * analysis.correlations[0].over_tasks.confidence)
    legend = (f"VLM run: `{analysis.vlm_run}`. ρ is Spearman's rank correlation with average ranks for ties over "
              f"the tasks both runs score; the two brackets are {confidence}% bootstrap percentile intervals, first "
              f"resampling tasks, then resampling items and episodes within each task ({analysis.n_resamples} "
              f"resamples each, seed {analysis.seed}; a count k/N means only k resamples had a rho).")
    parts = ["## Perception vs action: Spearman's ρ", legend, *_sections(analysis), "### Joined tasks",
             _tasks_table(analysis)]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def csv_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """One row per cell (rho and intervals unrounded; empty where undefined)."""
    def value(v: float | None) -> float | str:
        return "" if v is None else v

    rows = []
    for c in analysis.correlations:
        rows.append({
            "pairing": c.measure.pairing, "measure": c.measure.name, "success": c.rate, "policy": c.policy.label,
            "policy_spec": c.policy.policy, "split": c.policy.split, "rollout_run": str(c.policy.run),
            "vlm_run": str(analysis.vlm_run), "n_tasks": len(c.joined.tasks), "rho": value(c.rho),
            "undefined": c.undefined,
            "tasks_ci_low": value(c.over_tasks.low), "tasks_ci_high": value(c.over_tasks.high),
            "tasks_resamples_defined": c.over_tasks.defined,
            "items_ci_low": value(c.over_items.low), "items_ci_high": value(c.over_items.high),
            "items_resamples_defined": c.over_items.defined,
            "n_resamples": analysis.n_resamples, "seed": analysis.seed, "confidence": c.over_tasks.confidence,
            "tasks": _JOIN.join(c.joined.tasks), "only_vlm": _JOIN.join(c.joined.only_perception),
            "only_rollout": _JOIN.join(c.joined.only_success),
        })
    return rows


def per_task_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """The points behind every rho: one row per cell and joined task."""
    rows = []
    for c in analysis.correlations:
        j = c.joined
        for task, x, y, xs, ys in zip(j.tasks, j.perception, j.success, j.perception_samples, j.success_samples):
            rows.append({"measure": c.measure.name, "success": c.rate, "policy": c.policy.label, "task": task,
                         "perception": x, "success_rate": y, "n_items": len(xs), "n_episodes": len(ys)})
    return rows


def write_report_files(out: str | Path, texts: dict[str, str]) -> dict[str, Path]:
    """Write each ``{file name: text}`` into the folder ``out`` (created if needed), each file atomically; returns
    file name -> path. The analysis commands' one way to write their reports.

    Raises:
        ValueError: ``out`` is a file.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    return {name: atomic_write_text(out / name, text) for name, text in texts.items()}


def write_report(analysis: Analysis, out: str | Path) -> dict[str, Path]:
    """Write the three files into ``out`` (created if needed); returns file name -> path."""
    return write_report_files(out, dict(zip(FILES, (markdown(analysis), to_csv(csv_rows(analysis)),
                                                    to_csv(per_task_rows(analysis))))))
