"""IR accuracy: turn raw model outputs or pixel points into strict / tolerant accuracy (Appendix 14).

Predictions are either raw model text (parsed by :func:`parse_point` on the prompt's 0-1000 scale
and scaled to the region's image size) or ``[x, y]`` points already in pixels of that image.
An unparseable or out-of-range answer is a ``none`` outcome, counted and never replaced by a guess.
The manipulation IR average weights every task equally (``task_mean_*``).

Memory: predictions are scored in chunks (:data:`IR_CHUNK_SIZE`, more with many distinct regions:
:data:`POINTS_PER_REGION`) and only counters are kept between chunks, and equal region specs (the
same JSON string, or dicts equal in value) share one prepared region, so scoring takes the memory
of one chunk plus the distinct regions, not memory per prediction. ``benchmarks/ir_scoring_memory.py``
on the IR suite's 1,240 regions: 33-42 MB from 1e4 to 1e6 predictions; the one-shot path it replaced
took 249 MB at 1e6, and 25 kB per prediction with dict references.
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

import numpy as np

from bspatial.scoring.aggregate import mean_over_groups, percent
from bspatial.scoring.ir import IRScores, score_ir
from bspatial.scoring.ir_regions import Region, region_from_dict
from bspatial.scoring.point import PointParse, PointStatus, parse_point
from bspatial.scoring.validation import check_not_empty, check_same_length

Prediction = str | Sequence[float] | None
Reference = str | Mapping[str, Any] | Region

IR_CHUNK_SIZE = 16_384
"""Fewest predictions scored at a time. Between chunks only counters are kept, so memory does not grow
with the number of predictions (measured before chunking: 1e6 predictions took 8 GB); a chunk's working arrays take
~250 bytes a prediction."""
POINTS_PER_REGION = 64
"""A chunk also holds this many predictions per distinct region prepared so far: each region's points
are scored in one vectorised call, and ~100 us per call would otherwise dominate (the IR suite: 1,240
queries, ~80 runs each). With :data:`REGION_CACHE_SIZE` this caps a chunk at 131,072 predictions."""
REGION_CACHE_SIZE = 2_048
"""Distinct region specs kept prepared across chunks, least recently used dropped first: the IR suite's
1,240 fit, so a whole run prepares each once; a column of all-distinct specs stays bounded."""


class _Regions:
    """Region objects for reference specs: one per distinct spec, at most ``size`` kept (None: all).

    Keys: a JSON string is its own key; a dict is keyed by its canonical JSON (a dataset column decoded
    to one dict per row is equal in value, not identity), or by identity when it holds values JSON cannot
    write (numpy masks); a Region is used as given.
    """

    def __init__(self, size: int | None) -> None:
        self._size = size
        self._by_key: OrderedDict[Hashable, Region] = OrderedDict()
        self._last: tuple[Any, Region] | None = None  # columns repeat one object in runs: skip the key

    def __len__(self) -> int:
        return len(self._by_key)

    def get(self, reference: Reference, index: int) -> Region:
        if isinstance(reference, Region):
            return reference
        if self._last is not None and self._last[0] is reference:
            return self._last[1]
        region = self._lookup(reference, index)
        self._last = (reference, region)
        return region

    def _lookup(self, reference: Reference, index: int) -> Region:
        key = _spec_key(reference, index)
        region = self._by_key.get(key)
        if region is not None:
            self._by_key.move_to_end(key)
            return region
        try:
            region = region_from_dict(reference)
        except ValueError as err:
            raise ValueError(f"references[{index}]: {err}") from err
        self._by_key[key] = region
        if self._size is not None and len(self._by_key) > self._size:
            self._by_key.popitem(last=False)
        return region


def _spec_key(reference: Any, index: int) -> Hashable:
    if isinstance(reference, str):
        return ("json", reference)
    if isinstance(reference, Mapping):
        try:
            return ("dict", json.dumps(reference, sort_keys=True))
        except (TypeError, ValueError):
            # The caller holds every reference for the whole call, so no id is reused meanwhile.
            return ("id", id(reference))
    raise ValueError(f"references[{index}] must be a region spec (JSON string or dict), got {type(reference).__name__}")


def as_regions(references: Sequence[Reference]) -> list[Region]:
    """Region objects for a column of region specs (Region, dict, or the JSON string the dataset stores).

    Equal specs (the many predictions made on one query) share one region object, so
    :func:`score_ir` prepares each distinct region once. Errors name the offending row.
    """
    regions = _Regions(size=None)
    return [regions.get(reference, i) for i, reference in enumerate(references)]


def prediction_points(
    predictions: Sequence[Prediction], regions: Sequence[Region], first_index: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Pixel points [N, 2] (NaN = no point) and a bool mask of predictions that could not be read.

    ``first_index`` is the position of ``predictions[0]`` in the whole column, for error messages.
    """
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
            raise ValueError(f"predictions[{first_index + i}] must be raw text or an [x, y] pixel point, got {pred!r}")
        points[i] = xy
    return points, unreadable


@dataclass
class _Tally:
    """Running counts of scored predictions: everything ir_accuracy reports, nothing per item."""

    n: int = 0
    strict: int = 0
    tolerant: int = 0
    unparseable: int = 0
    labels: Counter = field(default_factory=Counter)
    # Per task: predictions, strict hits, tolerant hits.
    task_n: Counter = field(default_factory=Counter)
    task_strict: Counter = field(default_factory=Counter)
    task_tolerant: Counter = field(default_factory=Counter)

    def add(self, scores: IRScores, unreadable: np.ndarray, tasks: Sequence[str] | None) -> None:
        self.n += len(scores.strict)
        self.strict += int(np.count_nonzero(scores.strict))
        self.tolerant += int(np.count_nonzero(scores.tolerant))
        self.unparseable += int(np.count_nonzero(unreadable))
        names, counts = np.unique(scores.label, return_counts=True)  # no Python string per prediction
        self.labels.update(dict(zip(names.tolist(), counts.tolist())))
        if tasks is not None:
            self.task_n.update(tasks)
            self.task_strict.update(compress(tasks, scores.strict.tolist()))
            self.task_tolerant.update(compress(tasks, scores.tolerant.tolist()))

    def result(self, per_task: bool) -> dict[str, float | int]:
        result: dict[str, float | int] = {
            # 100 * (hits / n), as the mean of the per-item bools was: the same float, bit for bit.
            "strict_accuracy": 100.0 * (self.strict / self.n),
            "tolerant_accuracy": 100.0 * (self.tolerant / self.n),
            "n": self.n,
            "correct": self.labels["correct"],
            "wrong": self.labels["wrong"],
            "none": self.labels["none"],
            "unparseable": self.unparseable,
        }
        if per_task:
            tasks = sorted(self.task_n)
            for kind, hits in (("strict", self.task_strict), ("tolerant", self.task_tolerant)):
                accuracies = {task: percent(hits[task], self.task_n[task]) for task in tasks}
                for task in tasks:
                    result[f"task/{task}/{kind}"] = accuracies[task]
                    result[f"n/task/{task}"] = self.task_n[task]
                result[f"task_mean_{kind}_accuracy"] = mean_over_groups(accuracies)
        return result


def _check_tasks(tasks: Sequence[Any], first_index: int) -> list[str]:
    values = list(tasks)
    for i, task in enumerate(values):
        if not isinstance(task, str) or not task:
            raise ValueError(f"tasks[{first_index + i}] must be a non-empty string, got {task!r}")
    return values


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
    ``task_mean_tolerant_accuracy``. Tasks without predictions are absent.

    Raises:
        ValueError: ``predictions`` is empty (there is nothing to score), lengths differ, or a
            prediction, reference or task is malformed (the message names its row).
    """
    n = check_same_length(predictions=predictions, references=references)
    check_not_empty("predictions", predictions)
    if tasks is not None:
        check_same_length(predictions=predictions, tasks=tasks)
    regions = _Regions(REGION_CACHE_SIZE)
    tally = _Tally()
    every_region_named = True  # decides, at the end, whether the regions' tasks are reported
    start = 0
    while start < n:
        stop = min(start + max(IR_CHUNK_SIZE, POINTS_PER_REGION * len(regions)), n)
        chunk = [regions.get(references[i], i) for i in range(start, stop)]
        points, unreadable = prediction_points(predictions[start:stop], chunk, first_index=start)
        chunk_tasks = None
        if tasks is not None:
            chunk_tasks = _check_tasks(tasks[start:stop], start)
        elif every_region_named:
            named = [r.task for r in chunk]
            every_region_named = all(named)
            chunk_tasks = named if every_region_named else None
        tally.add(score_ir(points, chunk), unreadable, chunk_tasks)
        start = stop
    return tally.result(per_task=tasks is not None or every_region_named)
