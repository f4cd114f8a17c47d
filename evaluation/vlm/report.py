"""Tables 1 and 2 of the paper, one row per run, from the runs' summary.json files.

* Table 1 (general VQA): single-frame All / Dir. / Dist. / Size, multi-frame All / Dir.; All is pooled
  over questions and single-frame Dir. includes the locate subtype (Table 1 caption); multi-frame
  pools rotation and navigation sequences.
* Table 2 (task-grounded): manipulation VQA All / Dir. / Dist. / Size as unweighted means of
  per-task accuracies, and IR strict / tolerant, each task weighted equally (Appendix 14).
* Breakdowns: per task (task-grounded VQA accuracy, IR strict / tolerant; navigation VQA per task
  is Table S11's VQA column) and per setting / category / subtype.
* Intervals: every cell of Tables 1 and 2 with two 95% intervals of one rule (CR1,
  :mod:`bspatial.scoring.clustered`), items clustered by the scene / frame they share and items taken as
  independent, and the ratio of their standard errors (``intervals.md`` / ``.csv``). The Markdown tables
  show the clustered interval in brackets; the breakdowns carry it as ``ci_low`` / ``ci_high``.
* Paired (``paired=(run_a, run_b)``): exact McNemar and the paired intervals of two runs on the same items
  (:mod:`.paired`), ``paired.md`` / ``.csv``.
* Circular (runs of ``eval-vlm --circular``): ``circular.md`` / ``.csv``, every cell of a circular part with its
  plain accuracy (rotation 0, as in Tables 1 and 2) beside its circular accuracy (:mod:`.controls`).

Human runs (``bspatial human``, model ``human:<annotator>``, :mod:`.human`) are pooled into one row,
``human (N annotators)``, where the first of them stood: every annotator's answers are scored together, so a
cell's n is the number of answers (:func:`pool_human_runs`).

A blind run (``eval-vlm --blind``) is its own row, its model labelled ``<model> (blind)``
(:func:`bspatial.evaluation.vlm.controls.model_label`), listed right after the first seeing run of the same model
when the report has one (:func:`run_order`).

CSV columns use the names of the paper's tables in ``bspatial/reference/tables``
(``single_all`` ..., ``task_all`` ..., ``ir_strict``), after ``run`` and ``model``, and nothing else (so
they line up with the paper's CSVs; the intervals have their own file); an empty cell means the run did
not evaluate that part, an empty interval that it could not be estimated (one cluster, or a summary
written before intervals existed: rerunning eval-vlm on the finished run folder rewrites it). A run is a
folder of parts (``<suite>-<config>/``, see :mod:`bspatial.evaluation.vlm.runner`), or a single part folder.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bspatial.common.files import atomic_write_text
from bspatial.common.tables import csv_table, markdown_table
from bspatial.evaluation.vlm.controls import model_label
from bspatial.evaluation.vlm.paired import PAIRED_COLUMNS, PAIRED_HEADERS, paired_rows
from bspatial.evaluation.vlm.run_files import FINGERPRINT_FILE, SAMPLES_FILE, SUMMARY_FILE, part_folders
from bspatial.common.jsonl import read_jsonl

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
PER_TASK_COLUMNS = ("run", "model", "suite", "setting", "task", "metric", "value", "n", "ci_low", "ci_high", "clusters")
PER_SUBTYPE_COLUMNS = ("run", "model", "setting", "category", "subtype", "accuracy", "n", "ci_low", "ci_high",
                       "clusters")
INTERVAL_COLUMNS = ("run", "model", "table", "column", "accuracy", "n", "clusters", "independent_low",
                    "independent_high", "clustered_low", "clustered_high", "se_ratio")
CIRCULAR_COLUMNS = ("run", "model", "part", "cell", "n", "plain_accuracy", "circular_accuracy", "circular_ci_low",
                    "circular_ci_high")
CIRCULAR_HEADERS = ("Run", "Model", "Part", "Cell", "n", "Plain (rotation 0)", "Circular (all rotations)",
                    "Circular 95% (clustered)")
INTERVAL_HEADERS = ("Run", "Model", "Table", "Cell", "Accuracy", "n", "Clusters", "Independent items 95% (HC1)",
                    "Clustered by scene/frame 95% (CR1)", "SE ratio (clustered / independent)")
_PAPER_TABLES = {"table1": "table1_vlm_vqa", "table2": "table2_task_vqa_ir"}
HUMAN_MODEL_PREFIX = "human:"
"""The model of a person's run (``bspatial human --annotator NAME`` logs ``human:NAME``)."""
HUMAN_RUN_NAME = "human"
"""The run name of the pooled human row."""


@dataclass(frozen=True)
class Run:
    """One run folder: its name, model spec, blind mode (None: it saw the frames), and its parts' summaries
    (``<suite>-<config>``)."""

    name: str
    model: str
    parts: dict[str, dict[str, Any]]
    blind: str | None = None

    @property
    def label(self) -> str:
        """The model as the tables show it: ``<model> (blind)`` for a blind run."""
        return model_label(self.model, self.blind)

    @property
    def complete(self) -> bool:
        return all(p.get("complete") for p in self.parts.values())

    def entries(self) -> dict[str, dict[str, Any]]:
        """Every table cell the parts provide, as summary.json holds it (accuracy, n, intervals); two parts
        providing the same cell is an error."""
        out: dict[str, dict[str, Any]] = {}
        owner: dict[str, str] = {}
        for part, summary in sorted(self.parts.items()):
            for key, cell in summary.get("cells", {}).items():
                if key in out:
                    raise ValueError(f"run {self.name}: cell {key!r} comes from both {owner[key]} and {part}")
                out[key], owner[key] = cell, part
        return out

    def cells(self) -> dict[str, float]:
        """Every table cell's accuracy (percent); see :meth:`entries`."""
        return {key: cell["accuracy"] for key, cell in self.entries().items()}

    def clustered_intervals(self) -> dict[str, tuple[float, float] | None]:
        """Every cell's clustered 95% interval (percent), None where there is none."""
        return {key: _pair(cell.get("ci_clustered")) for key, cell in self.entries().items()}


def load_run(path: str | Path) -> Run:
    """Read a run folder (parts with summary.json) or a single part folder.

    Raises:
        ValueError: no summary.json under ``path``, or parts evaluated different models.
    """
    path = Path(path)
    found = {name: folder / SUMMARY_FILE for name, folder in part_folders(path).items()}
    if not found:
        raise ValueError(f"{path}: no {SUMMARY_FILE} in it or in its sub-folders; is it a run folder of `bspatial eval-vlm`?")
    parts = {name: json.loads(file.read_text()) for name, file in found.items()}
    models = sorted({p["model"] for p in parts.values()})
    if len(models) > 1:
        raise ValueError(f"{path}: its parts evaluated different models {models}; one run folder holds one model")
    blind = {p.get("blind") for p in parts.values()}  # summaries written before blind runs existed: None
    if len(blind) > 1:
        modes = sorted(str(b) for b in blind)
        raise ValueError(f"{path}: its parts mix seeing and blind runs (blind: {modes}); a blind run is its own run "
                         f"folder")
    return Run(name=path.name, model=models[0], parts=parts, blind=blind.pop())


def human_label(annotators: int) -> str:
    """The pooled human row's model label.

    Example:
        >>> human_label(1), human_label(3)
        ('human (1 annotator)', 'human (3 annotators)')
    """
    return f"human ({annotators} annotator{'' if annotators == 1 else 's'})"


def pool_human_runs(runs: Sequence[Run], paths: Sequence[str | Path]) -> list[Run]:
    """``runs`` with the runs of people (model ``human:<name>``) replaced by one pooled run, in the place of the
    first of them; other runs are returned as they are. ``paths[i]`` is the folder of ``runs[i]``.

    Each part (``<suite>-<config>``) of the pooled run is summarised from all annotators' rows of that part
    together, by the summary's own rules (:mod:`.summary`): a cell's accuracy is over every answer given, its n
    the number of answers, and an item answered by several people is one cluster of its interval.

    Raises:
        ValueError: two human runs answered different data under one part name (their data hashes differ).
    """
    from bspatial.evaluation.vlm.summary import summarize_ir, summarize_vqa

    humans = [i for i, run in enumerate(runs) if run.model.startswith(HUMAN_MODEL_PREFIX)]
    if not humans:
        return list(runs)
    rows: dict[str, list[dict[str, Any]]] = {}
    data: dict[str, tuple[str, str]] = {}
    for i in humans:
        for part, folder in part_folders(paths[i]).items():
            stamp = json.loads((folder / FINGERPRINT_FILE).read_text())["components"]["data"]
            first = data.setdefault(part, (stamp, runs[i].name))
            if first[0] != stamp:
                raise ValueError(f"human runs {first[1]} and {runs[i].name} answered different data in {part} (data "
                                 f"hashes differ); pool only runs of one dataset")
            rows.setdefault(part, []).extend(read_jsonl(folder / SAMPLES_FILE))
    label = human_label(len(humans))
    parts = {}
    for part, pooled in rows.items():
        summary = next(runs[i].parts[part] for i in humans if part in runs[i].parts)
        metrics = summarize_vqa(pooled) if summary["suite"] == "vqa" else summarize_ir(pooled)
        parts[part] = {"suite": summary["suite"], "config": summary["config"], "model": label,
                       "complete": all(runs[i].parts.get(part, {}).get("complete") for i in humans),
                       "n_scored": len(pooled), "annotators": [runs[i].model for i in humans], **metrics}
    pooled_run = Run(name=HUMAN_RUN_NAME, model=label, parts=parts)
    return [pooled_run if i == humans[0] else run for i, run in enumerate(runs) if i == humans[0] or i not in humans]


def run_order(runs: Sequence[Run]) -> list[int]:
    """The order in which reports list ``runs`` (indices): as given, except that the blind runs of a model follow
    its first seeing run (so the rows sit together); a blind run whose model has no seeing run stays in place."""
    seeing = {run.model for run in runs if run.blind is None}
    order: list[int] = []
    for i, run in enumerate(runs):
        if run.blind is not None and run.model in seeing:
            continue  # placed behind its seeing run
        order.append(i)
        if run.blind is None:
            order += [j for j, other in enumerate(runs) if other.blind is not None and other.model == run.model
                      and j not in order]
    return order


def table_rows(runs: Sequence[Run], table: str, paper: bool = False) -> list[dict[str, Any]]:
    """Rows of Table 1 or 2 (``table`` = ``"table1"`` / ``"table2"``): run, model, then the cells (percent or None)."""
    columns = TABLES[table]
    rows = []
    for run in runs:
        cells = run.cells()
        rows.append({"run": run.name, "model": run.label, **{c: cells.get(key) for c, _, key in columns}})
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
                base = {"run": run.name, "model": run.label, "suite": summary["suite"], "task": task, "n": entry["n"],
                        "clusters": entry.get("clusters")}
                if summary["suite"] == "vqa":
                    rows.append({**base, "setting": entry["setting"], "metric": "accuracy", "value": entry["accuracy"],
                                 **_bounds(entry.get("ci_clustered"))})
                else:
                    for metric in ("strict", "tolerant"):
                        rows.append({**base, "setting": "ir", "metric": metric, "value": entry[metric],
                                     **_bounds(entry.get(f"{metric}_ci_clustered"))})
    return [{c: row[c] for c in PER_TASK_COLUMNS} for row in rows]


def per_subtype_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Accuracy per setting / category / subtype of every VQA part."""
    rows = []
    for run in runs:
        for part, summary in sorted(run.parts.items()):
            for label, entry in sorted(summary.get("per_subtype", {}).items()):
                setting, category, subtype = label.split("/")
                rows.append({"run": run.name, "model": run.label, "setting": setting, "category": category,
                             "subtype": subtype, "accuracy": entry["accuracy"], "n": entry["n"],
                             "clusters": entry.get("clusters"), **_bounds(entry.get("ci_clustered"))})
    return rows


def interval_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row (:data:`INTERVAL_COLUMNS`) per run and cell of Tables 1 and 2 that the run has."""
    rows = []
    for run in runs:
        entries = run.entries()
        for table, columns in TABLES.items():
            for column, _, key in columns:
                if key not in entries:
                    continue
                cell = entries[key]
                independent, clustered = _bounds(cell.get("ci_independent")), _bounds(cell.get("ci_clustered"))
                se_c, se_i = cell.get("se_clustered"), cell.get("se_independent")
                rows.append({"run": run.name, "model": run.label, "table": table, "column": column,
                             "accuracy": cell["accuracy"], "n": cell["n"], "clusters": cell.get("clusters"),
                             "independent_low": independent["ci_low"], "independent_high": independent["ci_high"],
                             "clustered_low": clustered["ci_low"], "clustered_high": clustered["ci_high"],
                             "se_ratio": se_c / se_i if se_c is not None and se_i else None})
    return rows


def circular_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row (:data:`CIRCULAR_COLUMNS`) per cell of every circular part: plain accuracy beside circular accuracy."""
    rows = []
    for run in runs:
        for part, summary in sorted(run.parts.items()):
            circular = summary.get("circular_cells") or {}
            for key, cell in circular.items():
                plain = summary.get("cells", {}).get(key, {})
                rows.append({"run": run.name, "model": run.label, "part": part, "cell": key, "n": cell["n"],
                             "plain_accuracy": plain.get("accuracy"), "circular_accuracy": cell["accuracy"],
                             **{f"circular_{k}": v for k, v in _bounds(cell.get("ci_clustered")).items()}})
    return rows


def _pair(value: Any) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def _bounds(value: Any) -> dict[str, float | None]:
    pair = _pair(value)
    return {"ci_low": None if pair is None else pair[0], "ci_high": None if pair is None else pair[1]}


def to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    return csv_table(columns, [{c: _csv_value(row.get(c)) for c in columns} for row in rows])


def to_markdown(rows: Sequence[dict[str, Any]], columns: Sequence[str], headers: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table; numbers to one decimal, missing cells as an em dash."""
    cells = [[_md_value(row.get(c)) for c in columns] for row in rows]
    return markdown_table(list(headers or columns), cells, right_aligned_from=2) + "\n"


def write_report(run_paths: Sequence[str | Path], out: str | Path, paper: bool = False,
                 paired: tuple[str | Path, str | Path] | None = None) -> dict[str, Path]:
    """Write table1/table2/per_task/per_subtype/intervals (and with ``paired``, paired) as .md and .csv under
    ``out``; returns the paths by name.

    Raises:
        ValueError: A run folder is unreadable, two runs share a name, or the paired runs cannot be paired
            (:func:`bspatial.evaluation.vlm.paired.paired_rows`); checked before anything is written.
    """
    loaded = pool_human_runs([load_run(p) for p in run_paths], run_paths)
    runs = [loaded[i] for i in run_order(loaded)]
    compared = None if paired is None else paired_rows(*paired)
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
        shown = _bracketed(rows, runs, columns)
        written[f"{table}.md"] = _write(out / f"{table}.md", _titled(table, to_markdown(shown, keys, headers), runs))
    for name, rows, columns in (
        ("per_task", per_task_rows(runs), PER_TASK_COLUMNS),
        ("per_subtype", per_subtype_rows(runs), PER_SUBTYPE_COLUMNS),
    ):
        written[f"{name}.csv"] = _write(out / f"{name}.csv", to_csv(rows, columns))
        written[f"{name}.md"] = _write(out / f"{name}.md", to_markdown(rows, columns))
    intervals = interval_rows(runs)
    written["intervals.csv"] = _write(out / "intervals.csv", to_csv(intervals, INTERVAL_COLUMNS))
    written["intervals.md"] = _write(out / "intervals.md", _INTERVALS_TITLE + to_markdown(
        [_interval_display(r) for r in intervals], INTERVAL_COLUMNS[:7] + ("independent", "clustered", "se_ratio"),
        INTERVAL_HEADERS))
    circular = circular_rows(runs)
    if circular:
        written["circular.csv"] = _write(out / "circular.csv", to_csv(circular, CIRCULAR_COLUMNS))
        shown = [{**r, "interval": _interval_text((r["circular_ci_low"], r["circular_ci_high"]))} for r in circular]
        written["circular.md"] = _write(out / "circular.md", _CIRCULAR_TITLE + to_markdown(
            shown, (*CIRCULAR_COLUMNS[:7], "interval"), CIRCULAR_HEADERS))
    if compared is not None:
        written["paired.csv"] = _write(out / "paired.csv", to_csv(compared, PAIRED_COLUMNS))
        written["paired.md"] = _write(out / "paired.md", _PAIRED_TITLE + to_markdown(
            [_paired_display(r) for r in compared], _PAIRED_DISPLAY, PAIRED_HEADERS))
    return written


def _bracketed(rows: Sequence[dict[str, Any]], runs: Sequence[Run],
               columns: Sequence[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The Markdown rows: our runs' cells (the first ``len(runs)`` rows) with their clustered interval."""
    shown = [dict(r) for r in rows]
    for row, run in zip(shown, runs):
        intervals = run.clustered_intervals()
        for column, _, key in columns:
            interval = intervals.get(key)
            if row[column] is not None and interval is not None:
                row[column] = f"{row[column]:.1f} {_interval_text(interval)}"
    return shown


def _interval_text(interval: tuple[float | None, float | None] | None, digits: int = 1) -> str | None:
    if interval is None or interval[0] is None or interval[1] is None:
        return None
    return f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def _interval_display(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "independent": _interval_text((row["independent_low"], row["independent_high"])),
            "clustered": _interval_text((row["clustered_low"], row["clustered_high"])),
            "se_ratio": None if row["se_ratio"] is None else f"{row['se_ratio']:.2f}"}


_PAIRED_DISPLAY = PAIRED_COLUMNS[:11] + ("newcombe", "clusters", "clustered")


def _paired_display(row: dict[str, Any]) -> dict[str, Any]:
    # p-values to 3 significant digits (one decimal, the tables' format, would print 0.0 for p = 0.04).
    return {**row, "mcnemar_p": f"{row['mcnemar_p']:.3g}",
            "newcombe": _interval_text((row["newcombe_low"], row["newcombe_high"])),
            "clustered": _interval_text((row["clustered_low"], row["clustered_high"]))}


_BRACKETS = (" Brackets: 95% intervals with items clustered by the scene / frame they share (CR1); intervals.md "
             "sets them beside intervals that take items as independent.")
_TITLES = {
    "table1": "Table 1: VQA accuracy (%). Single-frame Dir. includes locate; All is pooled over all questions."
              + _BRACKETS,
    "table2": "Table 2: task-grounded manipulation VQA and IR accuracy (%), unweighted means of per-task accuracies."
              + _BRACKETS,
}
_INTERVALS_TITLE = (
    "95% intervals of every Table 1 / Table 2 cell (%), one rule (CR1 sandwich variance, G/(G-1) factor, normal, "
    "clipped to [0, 100]) under two assumptions: every item independent (HC1), and items clustered by the scene or "
    "frame they share (general VQA: the apartment; task navigation: the spawn; task manipulation and IR: each item "
    "draws its own layout). Task means (Table 2) take tasks as fixed strata. SE ratio > 1: shared scenes widen the "
    "interval.\n\n")
_CIRCULAR_TITLE = (
    "Circular evaluation (eval-vlm --circular, VLMEvalKit's CircularEval): each item asked once per rotation of its "
    "options, correct only if every rotation is answered correctly. Plain is rotation 0 (the item as written, the "
    "number in Tables 1 and 2); cells aggregate as in Tables 1 and 2. Intervals: 95%, clustered by scene / frame.\n\n")
_PAIRED_TITLE = (
    "Paired comparison of two runs on the same items, pooled over each part's items. McNemar's exact test and "
    "Newcombe's interval treat items as independent pairs; the clustered interval (CR1) of the difference respects "
    "shared scenes / frames.\n\n")


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
