"""Tables 1 and 2 of the paper, one row per run, from the runs' summary.json files.

* Table 1 (general VQA): single-frame All / Dir. / Dist. / Size, multi-frame All / Dir.; All is pooled
  over questions and single-frame Dir. includes the locate subtype (Table 1 caption); multi-frame
  pools rotation and navigation sequences.
* Table 2 (task-grounded): manipulation VQA All / Dir. / Dist. / Size as unweighted means of
  per-task accuracies, and IR strict / tolerant, each task weighted equally (Appendix 14).
* Breakdowns: per task (task-grounded VQA accuracy, IR strict / tolerant; navigation VQA per task
  is Table S11's VQA column) and per setting / category / subtype.

CSV columns use the names of the paper's tables in ``bspatial/reference/tables``
(``single_all`` ..., ``task_all`` ..., ``ir_strict``), after ``run`` and ``model``; an empty cell
means the run did not evaluate that part. A run is a folder of parts (``<suite>-<config>/``,
see :mod:`bspatial.evaluation.vlm.runner`), or a single part folder.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bspatial.common.files import atomic_write_text
from bspatial.evaluation.vlm.run_files import SUMMARY_FILE

logger = logging.getLogger(__name__)

# (CSV column, Markdown header, summary cell) per table; CSV names as in bspatial/reference/tables.
TABLE1_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("single_all", "Single-frame All", "single_frame/all"),
    ("single_dir", "Single-frame Dir.", "single_frame/direction"),
    ("single_dist", "Single-frame Dist.", "single_frame/distance"),
    ("single_size", "Single-frame Size", "single_frame/size"),
    ("multi_all", "Multi-frame All", "multi_frame/all"),
    ("multi_dir", "Multi-frame Dir.", "multi_frame/direction"),
)
TABLE2_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("task_all", "Task VQA All", "task_manipulation/all"),
    ("task_dir", "Task VQA Dir.", "task_manipulation/direction"),
    ("task_dist", "Task VQA Dist.", "task_manipulation/distance"),
    ("task_size", "Task VQA Size", "task_manipulation/size"),
    ("ir_strict", "IR Strict", "ir/strict"),
    ("ir_tolerant", "IR Tolerant", "ir/tolerant"),
)
TABLES = {"table1": TABLE1_COLUMNS, "table2": TABLE2_COLUMNS}
PER_TASK_COLUMNS = ("run", "model", "suite", "setting", "task", "metric", "value", "n")
PER_SUBTYPE_COLUMNS = ("run", "model", "setting", "category", "subtype", "accuracy", "n")
_PAPER_TABLES = {"table1": "table1_vlm_vqa", "table2": "table2_task_vqa_ir"}


@dataclass(frozen=True)
class Run:
    """One run folder: its name, model spec, and the summaries of its parts (``<suite>-<config>``)."""

    name: str
    model: str
    parts: dict[str, dict[str, Any]]

    @property
    def complete(self) -> bool:
        return all(p.get("complete") for p in self.parts.values())

    def cells(self) -> dict[str, float]:
        """Every table cell the parts provide; two parts providing the same cell is an error."""
        out: dict[str, float] = {}
        owner: dict[str, str] = {}
        for part, summary in sorted(self.parts.items()):
            for key, cell in summary.get("cells", {}).items():
                if key in out:
                    raise ValueError(f"run {self.name}: cell {key!r} comes from both {owner[key]} and {part}")
                out[key], owner[key] = cell["accuracy"], part
        return out


def load_run(path: str | Path) -> Run:
    """Read a run folder (parts with summary.json) or a single part folder.

    Raises:
        ValueError: no summary.json under ``path``, or parts evaluated different models.
    """
    path = Path(path)
    if (path / SUMMARY_FILE).is_file():
        found = {path.name: path / SUMMARY_FILE}
    else:
        found = {p.parent.name: p for p in sorted(path.glob(f"*/{SUMMARY_FILE}"))}
    if not found:
        raise ValueError(f"{path}: no {SUMMARY_FILE} in it or in its sub-folders; is it a run folder of `bspatial eval-vlm`?")
    parts = {name: json.loads(file.read_text()) for name, file in found.items()}
    models = sorted({p["model"] for p in parts.values()})
    if len(models) > 1:
        raise ValueError(f"{path}: its parts evaluated different models {models}; one run folder holds one model")
    return Run(name=path.name, model=models[0], parts=parts)


def table_rows(runs: Sequence[Run], table: str, paper: bool = False) -> list[dict[str, Any]]:
    """Rows of Table 1 or 2 (``table`` = ``"table1"`` / ``"table2"``): run, model, then the cells (percent or None)."""
    columns = TABLES[table]
    rows = []
    for run in runs:
        cells = run.cells()
        rows.append({"run": run.name, "model": run.model, **{c: cells.get(key) for c, _, key in columns}})
    if paper:
        from bspatial.reference import load_table

        for ref in load_table(_PAPER_TABLES[table]):
            rows.append(
                {"run": "paper", "model": ref["model"], **{c: float(ref[c]) if ref.get(c) else None for c, _, _ in columns}}
            )
    return rows


def per_task_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Long-format per-task breakdown: VQA accuracy per task, IR strict and tolerant per task."""
    rows = []
    for run in runs:
        for part, summary in sorted(run.parts.items()):
            for task, entry in sorted(summary.get("per_task", {}).items()):
                base = {"run": run.name, "model": run.model, "suite": summary["suite"], "task": task, "n": entry["n"]}
                if summary["suite"] == "vqa":
                    rows.append({**base, "setting": entry["setting"], "metric": "accuracy", "value": entry["accuracy"]})
                else:
                    for metric in ("strict", "tolerant"):
                        rows.append({**base, "setting": "ir", "metric": metric, "value": entry[metric]})
    return [{c: row[c] for c in PER_TASK_COLUMNS} for row in rows]


def per_subtype_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Accuracy per setting / category / subtype of every VQA part."""
    rows = []
    for run in runs:
        for part, summary in sorted(run.parts.items()):
            for label, entry in sorted(summary.get("per_subtype", {}).items()):
                setting, category, subtype = label.split("/")
                rows.append({"run": run.name, "model": run.model, "setting": setting, "category": category,
                             "subtype": subtype, "accuracy": entry["accuracy"], "n": entry["n"]})
    return rows


def to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _csv_value(row.get(c)) for c in columns})
    return buffer.getvalue()


def to_markdown(rows: Sequence[dict[str, Any]], columns: Sequence[str], headers: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table; numbers to one decimal, missing cells as an em dash."""
    headers = list(headers or columns)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" if i < 2 else "---:" for i in range(len(headers))) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_md_value(row.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def write_report(run_paths: Sequence[str | Path], out: str | Path, paper: bool = False) -> dict[str, Path]:
    """Write table1/table2/per_task/per_subtype as .md and .csv under ``out``; returns the paths by name."""
    runs = [load_run(p) for p in run_paths]
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"run names must be distinct (they label the rows), got {names}")
    for run in runs:
        if not run.complete:
            logger.warning("run %s is incomplete (interrupted or limited): its rows cover part of the suite", run.name)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for table, columns in TABLES.items():
        rows = table_rows(runs, table, paper=paper)
        keys = ["run", "model", *(c for c, _, _ in columns)]
        headers = ["Run", "Model", *(h for _, h, _ in columns)]
        written[f"{table}.csv"] = _write(out / f"{table}.csv", to_csv(rows, keys))
        written[f"{table}.md"] = _write(out / f"{table}.md", _titled(table, to_markdown(rows, keys, headers), runs))
    for name, rows, columns in (
        ("per_task", per_task_rows(runs), PER_TASK_COLUMNS),
        ("per_subtype", per_subtype_rows(runs), PER_SUBTYPE_COLUMNS),
    ):
        written[f"{name}.csv"] = _write(out / f"{name}.csv", to_csv(rows, columns))
        written[f"{name}.md"] = _write(out / f"{name}.md", to_markdown(rows, columns))
    return written


_TITLES = {
    "table1": "Table 1: VQA accuracy (%). Single-frame Dir. includes locate; All is pooled over all questions.",
    "table2": "Table 2: task-grounded manipulation VQA and IR accuracy (%), unweighted means of per-task accuracies.",
}


def _titled(table: str, body: str, runs: Sequence[Run]) -> str:
    note = "".join(f"\nRun {r.name} is incomplete: it covers part of its suites.\n" for r in runs if not r.complete)
    return f"{_TITLES[table]}\n\n{body}{note}"


def _write(path: Path, text: str) -> Path:
    return atomic_write_text(path, text)


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    return round(value, 4) if isinstance(value, float) else value


def _md_value(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}" if isinstance(value, float) else str(value)
