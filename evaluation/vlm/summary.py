"""Aggregate a run part's per-sample log into summary.json: metrics through ``bspatial.scoring`` and
the cells of Tables 1 and 2 with per-task and per-subtype breakdowns.

Every cell carries two 95% intervals (percent) from one rule, :mod:`bspatial.scoring.clustered`'s CR1:
``ci_clustered`` with items clustered by the scene / frame they share (:mod:`.clusters`) and
``ci_independent`` with every item its own cluster, plus their standard errors and the cluster count.
The breakdowns carry the clustered interval (``ci_clustered``; IR: ``strict_ci_clustered`` /
``tolerant_ci_clustered``) and ``clusters``. An interval is None where it cannot be estimated (one cluster).

A circular run (``meta["circular"]``, :mod:`.controls`) adds ``circular_metrics`` and ``circular_cells`` beside the
plain ones (:func:`summarize_circular`); ``metrics`` and ``cells`` stay the plain accuracy of rotation 0.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bspatial.common.files import atomic_write_text
from bspatial.evaluation.vlm.clusters import cluster_keys
from bspatial.evaluation.vlm.run_files import ERRORS_FILE, SAMPLES_FILE, SUMMARY_FILE
from bspatial.common.jsonl import read_jsonl
from bspatial.scoring.aggregate import group_accuracy, task_mean
from bspatial.scoring.clustered import ClusteredInterval, clustered_interval, stratified_clustered_interval
from bspatial.scoring.point import PointStatus
from bspatial.scoring.vqa import table1_family, vqa_accuracy

Rows = Sequence[dict[str, Any]]
"""A part's per-sample log rows (samples.jsonl)."""


def write_summary(folder: str | Path, meta: dict[str, Any], complete: bool) -> dict[str, Any]:
    """Aggregate the part's logs into summary.json (atomically) and return it."""
    folder = Path(folder)
    rows = read_jsonl(folder / SAMPLES_FILE)
    errors = read_jsonl(folder / ERRORS_FILE)
    metrics = summarize_vqa(rows) if meta["suite"] == "vqa" else summarize_ir(rows)
    if meta.get("circular"):
        metrics.update(summarize_circular(rows))
    latencies = [r["latency_s"] for r in rows]
    summary = {
        **meta,
        # Complete means every item was scored: a malformed item is an unscored item, not a finished one.
        "complete": complete and not errors and len(rows) == meta["n_items"],
        "n_scored": len(rows),
        "n_errors": len(errors),
        "latency_s": {"mean": float(np.mean(latencies)) if rows else None, "total": float(np.sum(latencies))},
        **metrics,
    }
    atomic_write_text(folder / SUMMARY_FILE, json.dumps(summary, indent=2, sort_keys=False))
    return summary


def summarize_vqa(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """VQA metrics through ``bspatial.scoring`` plus the Table 1 / Table 2 cells and breakdowns.

    ``cells`` (percent, with ``n``): ``single_frame/{all,direction,distance,size}`` and
    ``multi_frame/{all,direction,distance,size}`` pooled over questions (multi-frame pools rotation
    and navigation; direction includes locate); ``task_manipulation/{all,<category>}`` as the
    unweighted mean of per-task accuracies (Appendix 14; per category: the mean over the tasks that
    have questions of it); ``task_navigation/all`` pooled over questions (Appendix 14).
    """
    if not rows:
        return {"metrics": {}, "cells": {}, "per_task": {}, "per_subtype": {}}
    tasks = [r["task"] for r in rows]
    metrics = vqa_accuracy(
        [r["raw_output"] for r in rows],
        [r["answer"] for r in rows],
        options=[r["options"] for r in rows],
        settings=[r["setting"] for r in rows],
        categories=[r["category"] for r in rows],
        subtypes=[r["subtype"] for r in rows],
        tasks=tasks if all(tasks) else None,
    )
    correct = np.array([r["correct"] for r in rows], dtype=bool)
    clusters = cluster_keys([r["id"] for r in rows])
    return {
        "metrics": metrics,
        "cells": _vqa_cells(rows, correct, clusters),
        "per_task": _per_task_vqa(rows, correct, clusters),
        "per_subtype": _per_subtype(rows, correct, clusters),
    }


def summarize_circular(rows: Rows) -> dict[str, Any]:
    """Circular accuracy (:mod:`bspatial.scoring.circular`) of a circular run's rows, beside the plain accuracy.

    ``circular_metrics``: ``accuracy`` (percent of items right in every rotation), ``plain_accuracy`` (rotation 0,
    the item as written: ``metrics["accuracy"]``), ``n``, ``rotations`` and ``rotation_accuracy`` (percent right
    per rotation index; uneven values show a preference for a letter). ``circular_cells``: the Table 1 / 2 cells
    of the circular verdicts, aggregated by the same rules as ``cells``.
    """
    if not rows:
        return {"circular_metrics": {}, "circular_cells": {}}
    verdicts = np.array([r["circular_correct"] for r in rows], dtype=bool)
    by_rotation = np.array([[record["correct"] for record in r["rotations"]] for r in rows], dtype=bool)
    metrics = {
        "accuracy": 100.0 * float(verdicts.mean()),
        "plain_accuracy": 100.0 * float(np.mean([r["correct"] for r in rows])),
        "n": len(rows),
        "rotations": int(by_rotation.shape[1]),
        "rotation_accuracy": [100.0 * float(a) for a in by_rotation.mean(axis=0)],
    }
    return {"circular_metrics": metrics, "circular_cells": _vqa_cells(rows, verdicts, cluster_keys([r["id"] for r in rows]))}


def _percent(interval: ClusteredInterval) -> tuple[list[float] | None, float | None]:
    if interval.se is None:
        return None, None
    return [100.0 * interval.low, 100.0 * interval.high], 100.0 * interval.se  # type: ignore[operator]


def _cell_intervals(scores: np.ndarray, clusters: Sequence[str], tasks: Sequence[str] | None = None) -> dict[str, Any]:
    """A cell's interval fields (module docstring); ``tasks`` given: Appendix 14's task mean, tasks as strata."""
    own = range(len(scores))  # every item its own cluster: the same rule assuming independent items
    if tasks is None:
        clustered, independent = clustered_interval(scores, clusters), clustered_interval(scores, own)
    else:
        clustered = stratified_clustered_interval(scores, clusters, tasks)
        independent = stratified_clustered_interval(scores, own, tasks)
    (ci_clustered, se_clustered), (ci_independent, se_independent) = _percent(clustered), _percent(independent)
    return {"clusters": clustered.clusters, "ci_clustered": ci_clustered, "se_clustered": se_clustered,
            "ci_independent": ci_independent, "se_independent": se_independent}


def _breakdown_interval(scores: np.ndarray, clusters: Sequence[str]) -> dict[str, Any]:
    interval = clustered_interval(scores, clusters)
    return {"ci_clustered": _percent(interval)[0], "clusters": interval.clusters}


def _vqa_cells(rows: Rows, correct: np.ndarray, clusters: Sequence[str]) -> dict[str, dict[str, Any]]:
    cells: dict[str, dict[str, Any]] = {}
    families = [table1_family(r["setting"]) for r in rows]
    for family in dict.fromkeys(families):
        idx = [i for i, f in enumerate(families) if f == family]
        sub = correct[idx]
        if family == "task_manipulation":
            for name, select in [("all", idx)] + [(c, [i for i in idx if rows[i]["category"] == c]) for c in ("direction", "distance", "size")]:
                if select:
                    tasks = [rows[i]["task"] for i in select]
                    mean, _ = task_mean(correct[select], tasks)
                    intervals = _cell_intervals(correct[select], [clusters[i] for i in select], tasks)
                    cells[f"{family}/{name}"] = {"accuracy": mean, "n": len(select), **intervals}
            continue
        cells[f"{family}/all"] = {"accuracy": 100.0 * float(sub.mean()), "n": len(idx),
                                  **_cell_intervals(sub, [clusters[i] for i in idx])}
        for category, (acc, n) in group_accuracy(sub, [rows[i]["category"] for i in idx]).items():
            select = [i for i in idx if rows[i]["category"] == category]
            cells[f"{family}/{category}"] = {"accuracy": acc, "n": n,
                                             **_cell_intervals(correct[select], [clusters[i] for i in select])}
    return cells


def _members(labels: Sequence[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        out.setdefault(label, []).append(i)
    return out


def _per_task_vqa(rows: Rows, correct: np.ndarray, clusters: Sequence[str]) -> dict[str, dict[str, Any]]:
    idx = [i for i, r in enumerate(rows) if r["task"]]
    if not idx:
        return {}
    groups = group_accuracy(correct[idx], [rows[i]["task"] for i in idx])
    members = _members([r["task"] or "" for r in rows])
    setting = {rows[i]["task"]: rows[i]["setting"] for i in idx}
    return {task: {"setting": setting[task], "accuracy": acc, "n": n,
                   **_breakdown_interval(correct[members[task]], [clusters[i] for i in members[task]])}
            for task, (acc, n) in groups.items()}


def _per_subtype(rows: Rows, correct: np.ndarray, clusters: Sequence[str]) -> dict[str, dict[str, Any]]:
    labels = [f"{r['setting']}/{r['category']}/{r['subtype']}" for r in rows]
    members = _members(labels)
    return {label: {"accuracy": acc, "n": n, **_breakdown_interval(correct[members[label]],
                                                                   [clusters[i] for i in members[label]])}
            for label, (acc, n) in group_accuracy(correct, labels).items()}


def summarize_ir(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """IR metrics: pooled and task-mean strict / tolerant accuracy (Appendix 14), labels, per task."""
    if not rows:
        return {"metrics": {}, "cells": {}, "per_task": {}}
    strict = np.array([r["strict"] for r in rows], dtype=bool)
    tolerant = np.array([r["tolerant"] for r in rows], dtype=bool)
    tasks = [r["task"] for r in rows]
    mean_strict, per_strict = task_mean(strict, tasks)
    mean_tolerant, per_tolerant = task_mean(tolerant, tasks)
    clusters = cluster_keys([r["id"] for r in rows])
    members = _members(tasks)
    labels = [r["label"] for r in rows]
    counts = group_accuracy(strict, tasks)
    metrics = {
        "strict_accuracy": 100.0 * float(strict.mean()),
        "tolerant_accuracy": 100.0 * float(tolerant.mean()),
        "task_mean_strict_accuracy": mean_strict,
        "task_mean_tolerant_accuracy": mean_tolerant,
        "n": len(rows),
        **{label: labels.count(label) for label in ("correct", "wrong", "none")},
        "unparseable": sum(r["parse_status"] != PointStatus.PARSED.value for r in rows),
    }
    return {
        "metrics": metrics,
        "cells": {
            "ir/strict": {"accuracy": mean_strict, "n": len(rows), **_cell_intervals(strict, clusters, tasks)},
            "ir/tolerant": {"accuracy": mean_tolerant, "n": len(rows), **_cell_intervals(tolerant, clusters, tasks)},
        },
        "per_task": {t: {"strict": per_strict[t], "tolerant": per_tolerant[t], "n": counts[t][1],
                         **_ir_task_intervals(strict, tolerant, [clusters[i] for i in members[t]], members[t])}
                     for t in per_strict},
    }


def _ir_task_intervals(strict: np.ndarray, tolerant: np.ndarray, clusters: Sequence[str],
                       members: Sequence[int]) -> dict[str, Any]:
    intervals = {f"{name}_ci_clustered": _breakdown_interval(values[members], clusters)["ci_clustered"]
                 for name, values in (("strict", strict), ("tolerant", tolerant))}
    return {**intervals, "clusters": len(set(clusters))}
