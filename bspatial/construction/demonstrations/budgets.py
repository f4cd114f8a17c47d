"""Step-budget calibration: run the scripted experts and write the packaged budget file.

The rule and the lookup live in :mod:`bspatial.tasks.budgets`; this module is the build step that
produces :data:`~bspatial.tasks.budgets.BUDGET_FILE` (``bspatial sim calibrate-budgets``). It sits in
the construction layer because it drives whole episodes (experts, the episode loop, a backend), which
the task layer's lookup must not import.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from pathlib import Path
from typing import Any, Sequence

from bspatial.sim.backend import SimBackend
from bspatial.common.files import atomic_write_text
from bspatial.tasks.budgets import (BUDGET_FILE, BUDGET_MARGIN, BUDGET_QUANTUM_STEPS, SCHEMA_VERSION, load_budget_file,
                                    budget_from_lengths)

logger = logging.getLogger(__name__)

CALIBRATION_CEILING_STEPS = 3000
"""Step limit while calibrating (100 s): far above any expert episode, so lengths are not truncated."""
CALIBRATION_SEEDS = 20
"""Seeds per instruction variant (navigation: per task) in the packaged calibration."""
CALIBRATION_SEED_BASE = 500_000
"""Calibration seeds are base + i: apart from the seeds the tests and ``benchmarks/sim.py`` use (0..N)."""


def demonstration_lengths(backend: SimBackend, name: str, variant: str, seeds: Sequence[int]) -> tuple[list[int], list[dict]]:
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
    from bspatial.common.progress import track
    from bspatial.sim.mujoco_backend import MujocoBackend
    from bspatial.tasks.registry import NAVIGATION_REGISTRY, get_task, task_names

    names = list(tasks) if tasks else [*task_names(), *NAVIGATION_REGISTRY]
    seed_list = [seed_base + i for i in range(seeds)]
    backend = MujocoBackend()
    result: dict[str, Any] = {}
    try:
        jobs = [(n, v) for n in names for v in get_task(n).variants]
        for name, variant in track(jobs, "calibrating step budgets", "variant"):
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
    atomic_write_text(path, text)
    load_budget_file.cache_clear()
    return path
