"""Per-task perception scores of an ``eval-vlm`` run folder (:mod:`bspatial.evaluation.vlm.runner`).

A run folder holds one part per suite/config, ``<run>/<suite>-<config>/`` with ``summary.json`` and
``samples.jsonl``. The measures of Sec. 5.3.3 and Table S11 read these parts' ``per_task`` breakdowns
(:mod:`bspatial.evaluation.vlm.summary`):

=============  ======================  =========================================  ==================
measure        part                    per-task score (summary.json)              per-sample field
=============  ======================  =========================================  ==================
vqa            vqa-task_manipulation   ``per_task[task]["accuracy"]``             ``correct``
ir_tolerant    ir-all                  ``per_task[task]["tolerant"]``             ``tolerant``
ir_strict      ir-all                  ``per_task[task]["strict"]``               ``strict``
nav_vqa        vqa-task_navigation     ``per_task[task]["accuracy"]``             ``correct``
=============  ======================  =========================================  ==================

The per-task score is taken from the summary, as ``eval-vlm`` aggregated it; the part's sample rows
are read too, for the item-level bootstrap, and must reproduce the summary's score (a summary older
than its samples is refused, not silently mixed).
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from bspatial.catalog.tasks import canonical_task_name
from bspatial.evaluation.analysis.join import TaskScores
from bspatial.evaluation.vlm.run_files import SAMPLES_FILE, SUMMARY_FILE
from bspatial.common.jsonl import read_jsonl

logger = logging.getLogger(__name__)

MANIPULATION, NAVIGATION = "manipulation", "navigation"
"""The two pairings: manipulation measures against soft / strict success (Table 3), navigation VQA
against navigation success (Table S11)."""


@dataclass(frozen=True)
class Measure:
    """A perception measure: which part of a run folder, which summary field, which sample field.

    Attributes:
        name: Short name (CSV ``measure`` column).
        header: Column header of the Markdown table.
        suite / config: The run part ``<suite>-<config>/`` it is read from.
        summary_field: The key of ``summary.json``'s ``per_task[task]`` holding the score (percent).
        sample_field: The 0/1 field of each ``samples.jsonl`` row the score is the mean of.
        pairing: :data:`MANIPULATION` or :data:`NAVIGATION`: which rollout splits it pairs with.
    """

    name: str
    header: str
    suite: str
    config: str
    summary_field: str
    sample_field: str
    pairing: str


MEASURES: tuple[Measure, ...] = (
    # Sec. 5.3.3: "Qwen3.5-4B's task-level VQA and tolerant IR accuracies" (Table 3's two columns).
    Measure("vqa", "VQA ρ", "vqa", "task_manipulation", "accuracy", "correct", MANIPULATION),
    Measure("ir_tolerant", "IR (tolerant) ρ", "ir", "all", "tolerant", "tolerant", MANIPULATION),
    # Not in Table 3, reported beside it: strict IR is the paper's headline IR score (Table 2).
    Measure("ir_strict", "IR strict ρ", "ir", "all", "strict", "strict", MANIPULATION),
    # Table S11: navigation VQA accuracy per task against navigation success per task.
    Measure("nav_vqa", "Navigation VQA ρ", "vqa", "task_navigation", "accuracy", "correct", NAVIGATION),
)
"""Every perception measure, in report column order."""
_AGREEMENT = 1e-6  # percent; summary and samples are two roundings of one mean


def part_folder(run: Path, measure: Measure) -> Path:
    """The folder of ``measure``'s part in the eval-vlm run folder ``run`` (it may not exist)."""
    # The runner owns the folder layout; imported here, not at module level (it pulls in the backends).
    from bspatial.evaluation.vlm.runner import part_dir

    return part_dir(run, measure.suite, measure.config)


def load_summary(path: Path, allow_incomplete: bool) -> dict[str, Any]:
    """A part's ``summary.json``; refused when unreadable, without ``per_task``, or (unless ``allow_incomplete``)
    not complete."""
    try:
        summary = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error})") from None
    if not isinstance(summary, dict) or not isinstance(summary.get("per_task"), dict) or not summary["per_task"]:
        raise ValueError(f"{path}: field 'per_task' is missing or empty; is this an eval-vlm summary of a task part?")
    if summary.get("complete") is not True:
        message = (f"{path}: field 'complete' is {summary.get('complete')!r} (items unscored or malformed); "
                   "finish the eval-vlm run, or pass --allow-incomplete")
        if not allow_incomplete:
            raise ValueError(message)
        logger.warning("%s", message)
    return summary


def _canonical(path: Path, task: Any) -> str:
    try:
        return canonical_task_name(task)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def _summary_scores(path: Path, summary: dict[str, Any], field: str) -> dict[str, float]:
    scores = {}
    for task, entry in summary["per_task"].items():
        value = entry.get(field) if isinstance(entry, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{path}: per_task[{task!r}][{field!r}] must be a number, got {value!r}")
        scores[_canonical(path, task)] = float(value)
    return scores


def _sample_rows(path: Path, field: str) -> dict[str, np.ndarray]:
    by_task: dict[str, list[float]] = {}
    for row in read_jsonl(path):
        if not row.get("task"):
            continue  # general VQA rows have no task; task parts always do
        value = row.get(field)
        if not isinstance(value, bool):
            raise ValueError(f"{path}: row {row.get('id')!r} field {field!r} must be true or false, got {value!r}")
        by_task.setdefault(_canonical(path, row["task"]), []).append(float(value))
    return {task: np.asarray(values) for task, values in by_task.items()}


def read_measure(run: Path, measure: Measure, allow_incomplete: bool = False) -> TaskScores | None:
    """The per-task scores of one measure, or None when the run has no such part.

    Raises:
        ValueError: The part's summary is unreadable, lacks the field, is incomplete (unless
            ``allow_incomplete``), or disagrees with its sample rows.
    """
    folder = part_folder(run, measure)
    summary_path = folder / SUMMARY_FILE
    if not summary_path.is_file():
        return None
    summary = load_summary(summary_path, allow_incomplete)
    scores = _summary_scores(summary_path, summary, measure.summary_field)
    samples = _sample_rows(folder / SAMPLES_FILE, measure.sample_field)
    for task, score in scores.items():
        rows = samples.get(task)
        recomputed = None if rows is None else 100.0 * float(rows.mean())
        if recomputed is None or abs(recomputed - score) > _AGREEMENT:
            raise ValueError(f"{summary_path}: per_task[{task!r}][{measure.summary_field!r}] is {score} but "
                             f"{folder / SAMPLES_FILE} gives {recomputed}; the summary is stale, rerun eval-vlm on this part")
    return TaskScores(f"{summary_path} ({measure.summary_field})", scores, {t: samples[t] for t in scores})


def read_perception(run: str | Path, allow_incomplete: bool = False) -> dict[str, TaskScores]:
    """Every measure the run folder has a part for: measure name -> per-task scores.

    Raises:
        ValueError: ``run`` is not a folder, or has none of the parts the measures read.
    """
    return read_run_parts(run, MEASURES, lambda folder, m: read_measure(folder, m, allow_incomplete),
                          "is not an eval-vlm run folder with task parts")


T = TypeVar("T")


def read_run_parts(run: str | Path, measures: Sequence[Measure], read: Callable[[Path, Measure], T | None],
                   missing: str) -> dict[str, T]:
    """Measure name -> ``read(run, measure)`` for every measure whose part the eval-vlm run folder has (``read``
    returns None for a missing part).

    Raises:
        ValueError: ``run`` is not a folder, or has none of the parts (the message: "--vlm RUN <missing>: it has
            none of [...]", with the parts it has).
    """
    run = Path(run)
    if not run.is_dir():
        raise ValueError(f"--vlm {run}: not a folder (expected an eval-vlm run folder)")
    found = {}
    for measure in measures:
        value = read(run, measure)
        if value is not None:
            found[measure.name] = value
    if not found:
        wanted = sorted({f"{part_folder(run, m).name}/{SUMMARY_FILE}" for m in measures})
        present = sorted(p.parent.name for p in run.glob(f"*/{SUMMARY_FILE}"))
        raise ValueError(f"--vlm {run} {missing}: it has none of {wanted} (parts found: {present or 'none'})")
    return found
