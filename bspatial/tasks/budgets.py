"""Per-task step budgets, calibrated from the scripted demonstrations' lengths.

Sec. 4.3: "Episodes use per-task step budgets calibrated to the corresponding demonstration
horizons." The paper gives no formula, so ours is: run the task's scripted expert (the demonstrator
of :mod:`bspatial.construction.demos`, which records exactly these episodes) on
:data:`CALIBRATION_SEEDS` seeds of every instruction variant with :data:`CALIBRATION_CEILING_STEPS`
as the limit, keep the lengths of the episodes the Table S4 rules score ``correct``, and set

    budget = ceil(BUDGET_MARGIN * longest demonstration / BUDGET_QUANTUM_STEPS) * BUDGET_QUANTUM_STEPS

(one and a half times the longest demonstration, rounded up to whole seconds at 30 Hz). Demonstration
length here is what ``record_demos`` writes: the episode runs until its outcome is decided (first
contact for reach, the released object at rest for placement, the goal criterion for navigation).

The calibration is a build artefact: ``bspatial sim calibrate-budgets`` writes
:data:`BUDGET_FILE` (packaged with the code; tasks read their budget from it), recording the seeds,
the margin and every variant's lengths so the numbers can be checked. A task missing from the file
is an error, never a default.

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

import dataclasses
import functools
import json
import logging
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

logger = logging.getLogger(__name__)

BUDGET_FILE = Path(__file__).with_name("step_budgets.json")
"""The calibrated budgets, packaged with the code (``bspatial sim calibrate-budgets`` rewrites it)."""
BUDGET_MARGIN = 1.5
"""Budget = this many times the longest demonstration (ours: the paper says only "calibrated to the
demonstration horizons"; a policy slower than the expert by half still fits)."""
BUDGET_QUANTUM_STEPS = 30
"""Budgets are rounded up to whole seconds of 30 Hz control."""
CALIBRATION_CEILING_STEPS = 3000
"""Step limit while calibrating (100 s): far above any expert episode, so lengths are not truncated."""
CALIBRATION_SEEDS = 20
"""Seeds per instruction variant (navigation: per task) in the packaged calibration."""
CALIBRATION_SEED_BASE = 500_000
"""Calibration seeds are base + i: apart from the seeds the tests and ``benchmarks/sim.py`` use (0..N)."""
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
def _load(path: str) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version must be {SCHEMA_VERSION}, got {data.get('schema_version')!r}")
    return data


def step_budget(task: str, path: str | os.PathLike = BUDGET_FILE) -> int:
    """The calibrated step budget of ``task`` (canonical Table S2 name).

    Raises:
        ValueError: ``task`` is not in the calibration file (the message lists the ones that are).
    """
    tasks = _load(str(path))["tasks"]
    if task not in tasks:
        raise ValueError(f"unknown task {task!r}; {Path(path).name} calibrates: {', '.join(tasks)}")
    return int(tasks[task]["budget"])


# ----------------------------------------------------------------------------- calibration


def demonstration_lengths(backend, name: str, variant: str, seeds: Sequence[int]) -> tuple[list[int], list[dict]]:
    """Expert episode lengths of the ``correct`` episodes, and the failures ``{seed, outcome, status}``."""
    from bspatial.tasks.episode import load_instance, run_episode
    from bspatial.tasks.experts import make_expert

    lengths, failures = [], []
    for seed in seeds:
        # The ceiling, not the packaged budget, limits a calibration episode: lengths are never truncated.
        instance = dataclasses.replace(load_instance(backend, name, variant, seed)[0], step_budget=CALIBRATION_CEILING_STEPS)
        result = run_episode(backend, instance, make_expert(backend, instance))
        outcome = result.outcome.outcome if result.outcome is not None else None
        if outcome == "correct":
            lengths.append(result.steps)
        else:
            failures.append({"seed": int(seed), "outcome": outcome, "status": result.status})
    return lengths, failures


def calibrate(tasks: Sequence[str] | None = None, seeds: int = CALIBRATION_SEEDS,
              seed_base: int = CALIBRATION_SEED_BASE) -> dict[str, Any]:
    """Run the experts and compute every task's budget (see the module docstring); no file is written.

    Raises:
        ValueError: a task with no ``correct`` demonstration at all (its budget would be undefined).
    """
    from tqdm.auto import tqdm

    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks.registry import NAVIGATION_REGISTRY, get_task, task_names

    names = list(tasks) if tasks else [*task_names(), *NAVIGATION_REGISTRY]
    seed_list = [seed_base + i for i in range(seeds)]
    backend = MujocoBackend()
    result: dict[str, Any] = {}
    try:
        jobs = [(n, v) for n in names for v in get_task(n).variants]
        for name, variant in tqdm(jobs, desc="calibrating step budgets", unit="variant"):
            lengths, failures = demonstration_lengths(backend, name, variant, seed_list)
            entry = result.setdefault(name, {"lengths": {}, "failures": []})
            entry["lengths"][variant] = lengths
            entry["failures"] += [{"variant": variant, **f} for f in failures]
    finally:
        backend.close()
    for name, entry in result.items():
        every = [n for lengths in entry["lengths"].values() for n in lengths]
        if not every:
            raise ValueError(f"task {name!r}: no correct expert demonstration in {seeds} seeds per variant")
        entry["max_length"] = max(every)
        entry["budget"] = budget_from_lengths(every)
        logger.info("%-28s longest demonstration %4d steps -> budget %4d (%d failures)", name, entry["max_length"],
                    entry["budget"], len(entry["failures"]))
    return {"schema_version": SCHEMA_VERSION, "margin": BUDGET_MARGIN, "quantum_steps": BUDGET_QUANTUM_STEPS,
            "tasks": {n: {"budget": result[n]["budget"], "max_length": result[n]["max_length"], "seeds": seed_list,
                          "lengths": result[n]["lengths"], "failures": result[n]["failures"]} for n in names}}


def write_budgets(data: dict[str, Any], path: str | os.PathLike = BUDGET_FILE) -> Path:
    """Write ``data`` (from :func:`calibrate`) atomically; merges into an existing file's tasks."""
    path = Path(path)
    if path.exists():
        merged = json.loads(path.read_text())
        merged["tasks"].update(data["tasks"])
        data = {**data, "tasks": merged["tasks"]}
    header = {k: v for k, v in data.items() if k != "tasks"}
    # One line per task keeps the file reviewable in a diff (the lengths lists are long).
    tasks = ",\n".join(f"  {json.dumps(name)}: {json.dumps(entry)}" for name, entry in data["tasks"].items())
    text = json.dumps(header, indent=1)[:-2] + ',\n "tasks": {\n' + tasks + "\n }\n}\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    _load.cache_clear()
    return path
