"""Per-task step budgets, calibrated from the scripted demonstrations' lengths.

Sec. 4.3: "Episodes use per-task step budgets calibrated to the corresponding demonstration
horizons." The paper gives no formula, so ours is: run the task's scripted expert (the demonstrator
of :mod:`bspatial.construction.demonstrations.demos`, which records exactly these episodes) on
``CALIBRATION_SEEDS`` seeds of every instruction variant with ``CALIBRATION_CEILING_STEPS``
as the limit (:mod:`bspatial.construction.demonstrations.budgets`), keep the lengths of the episodes the Table S4 rules score ``correct``, and set

    budget = ceil(BUDGET_MARGIN * longest demonstration / BUDGET_QUANTUM_STEPS) * BUDGET_QUANTUM_STEPS

(one and a half times the longest demonstration, rounded up to whole seconds at 30 Hz). Demonstration
length here is what ``record_demos`` writes: the episode runs until its outcome is decided (first
contact for reach, the released object at rest for placement, the goal criterion for navigation).

The calibration is a build step (:mod:`bspatial.construction.demonstrations.budgets`, ``bspatial sim
calibrate-budgets``) that writes :data:`BUDGET_FILE` (packaged with the code; tasks read their budget
from it), recording the seeds, the margin and every variant's lengths so the numbers can be checked.
A task missing from the file is an error, never a default.

Example:
    >>> budget_from_lengths([100, 210, 180])
    330
    >>> step_budget("reach_plate") >= 30 and step_budget("move_to_oven") >= 30
    True
    >>> step_budget("reach_moon")
    Traceback (most recent call last):
    ...
    ValueError: unknown task 'reach_moon'; ...
"""

from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable

BUDGET_FILE = Path(__file__).with_name("step_budgets.json")
"""The calibrated budgets, packaged with the code (:func:`bspatial.construction.demonstrations.budgets.write_budgets` rewrites it)."""
BUDGET_MARGIN = 1.5
"""Budget = this many times the longest demonstration (ours: the paper says only "calibrated to the
demonstration horizons"; a policy slower than the expert by half still fits)."""
BUDGET_QUANTUM_STEPS = 30
"""Budgets are rounded up to whole seconds of 30 Hz control."""
SCHEMA_VERSION = 1


def budget_from_lengths(lengths: Iterable[int], *, margin: float = BUDGET_MARGIN,
                        quantum: int = BUDGET_QUANTUM_STEPS) -> int:
    """``ceil(margin * max(lengths) / quantum) * quantum``; raises on an empty or non-positive input."""
    lengths = [int(n) for n in lengths]
    if not lengths:
        raise ValueError("lengths must hold at least one demonstration length, got none")
    if min(lengths) < 1:
        raise ValueError(f"lengths must be >= 1, got {min(lengths)}")
    return int(math.ceil(margin * max(lengths) / quantum)) * quantum


@functools.lru_cache(maxsize=None)
def load_budget_file(path: str) -> dict[str, Any]:
    """The parsed budget file at ``path`` (cached; :func:`bspatial.construction.demonstrations.budgets.write_budgets` clears it)."""
    data = json.loads(Path(path).read_text())
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version must be {SCHEMA_VERSION}, got {data.get('schema_version')!r}")
    return data


def step_budget(task: str, path: str | os.PathLike = BUDGET_FILE) -> int:
    """The calibrated step budget of ``task`` (canonical Table S2 name).

    Raises:
        ValueError: ``task`` is not in the calibration file (the message lists the ones that are).
    """
    tasks = load_budget_file(str(path))["tasks"]
    if task not in tasks:
        raise ValueError(f"unknown task {task!r}; {Path(path).name} calibrates: {', '.join(tasks)}")
    return int(tasks[task]["budget"])
