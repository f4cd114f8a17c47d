"""IR accuracy: turn raw model outputs or pixel points into strict / tolerant accuracy (Appendix 14).

Predictions are either raw model text (parsed by :func:`parse_point` on the prompt's 0-1000 scale
and scaled to the region's image size) or ``[x, y]`` points already in pixels of that image.
An unparseable or out-of-range answer is a ``none`` outcome, counted and never replaced by a guess.
The manipulation IR average weights every task equally (``task_mean_*``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bspatial.scoring.aggregate import group_accuracy, task_mean
from bspatial.scoring.ir import score_ir
from bspatial.scoring.ir_regions import Region, region_from_dict
from bspatial.scoring.point import PointParse, PointStatus, parse_point
from bspatial.scoring.validation import check_same_length

Prediction = str | Sequence[float] | None
Reference = str | Mapping[str, Any] | Region


def as_regions(references: Sequence[Reference]) -> list[Region]:
    """Region objects for a column of region specs (Region, dict, or the JSON string the dataset stores).

    Identical JSON strings (the many predictions made on one query) share one region object, so
    :func:`score_ir` prepares each distinct region once. Errors name the offending row.
    """
    by_string: dict[str, Region] = {}
    regions = []
    for i, reference in enumerate(references):
        if isinstance(reference, str) and reference in by_string:
            regions.append(by_string[reference])
            continue
        if isinstance(reference, Region):
            region = reference
        elif isinstance(reference, str | Mapping):
            try:
                region = region_from_dict(reference)
            except ValueError as err:
                raise ValueError(f"references[{i}]: {err}") from err
        else:
            raise ValueError(f"references[{i}] must be a region spec (JSON string or dict), got {type(reference).__name__}")
        if isinstance(reference, str):
            by_string[reference] = region
        regions.append(region)
    return regions


def prediction_points(predictions: Sequence[Prediction], regions: Sequence[Region]) -> tuple[np.ndarray, np.ndarray]:
    """Pixel points [N, 2] (NaN = no point) and a bool mask of predictions that could not be read."""
    unreadable = np.zeros(len(predictions), dtype=bool)
    if not any(p is None or isinstance(p, str) for p in predictions):
        # All pixel points: one array conversion instead of a Python loop (the benchmark path).
        try:
            points = np.asarray(predictions, dtype=float).reshape(len(predictions), -1)
        except ValueError:
            points = None  # ragged: the loop below names the bad row
        if points is not None and points.shape[1] == 2:
            return points, unreadable
    points = np.full((len(predictions), 2), np.nan)
    parses: dict[str | None, PointParse] = {}  # many runs repeat the same answer text
    for i, (pred, region) in enumerate(zip(predictions, regions)):
        if pred is None or isinstance(pred, str):
            parse = parses.get(pred) or parses.setdefault(pred, parse_point(pred))
            if parse.status is PointStatus.PARSED:
                points[i] = parse.to_pixels(*region.image_size)
            else:
                unreadable[i] = True
            continue
        xy = np.asarray(pred, dtype=float).reshape(-1)
        if xy.shape != (2,):
            raise ValueError(f"predictions[{i}] must be raw text or an [x, y] pixel point, got {pred!r}")
        points[i] = xy
    return points, unreadable


def ir_accuracy(
    predictions: Sequence[Prediction],
    references: Sequence[Reference],
    tasks: Sequence[str] | None = None,
) -> dict[str, float | int]:
    """Score IR predictions against region specs; the ``bspatial_ir`` metric's flat result.

    Keys: ``strict_accuracy``, ``tolerant_accuracy`` (percent), ``n``, ``correct`` / ``wrong`` /
    ``none`` counts (strict assignment), ``unparseable``; with tasks (given, or read from the
    regions' ``task`` fields when every region names one): ``task/<name>/strict`` and
    ``task/<name>/tolerant`` and the unweighted means ``task_mean_strict_accuracy``,
    ``task_mean_tolerant_accuracy``.
    """
    n = check_same_length(predictions=predictions, references=references)
    regions = as_regions(references)
    points, unreadable = prediction_points(predictions, regions)
    scores = score_ir(points, regions)
    labels = np.asarray(scores.label, dtype=str)
    result: dict[str, float | int] = {
        "strict_accuracy": 100.0 * float(scores.strict.mean()) if n else 0.0,
        "tolerant_accuracy": 100.0 * float(scores.tolerant.mean()) if n else 0.0,
        "n": n,
        "correct": int((labels == "correct").sum()),
        "wrong": int((labels == "wrong").sum()),
        "none": int((labels == "none").sum()),
        "unparseable": int(unreadable.sum()),
    }
    if tasks is None and n and all(getattr(r, "task", None) for r in regions):
        tasks = [r.task for r in regions]
    if tasks is not None:
        check_same_length(predictions=predictions, tasks=tasks)
        for kind, values in (("strict", scores.strict), ("tolerant", scores.tolerant)):
            per_task = group_accuracy(values, tasks)
            for task, (acc, count) in per_task.items():
                result[f"task/{task}/{kind}"] = acc
                result[f"n/task/{task}"] = count
            result[f"task_mean_{kind}_accuracy"] = task_mean(values, tasks)[0] if n else 0.0
    return result
