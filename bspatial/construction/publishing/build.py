"""``build(preset, out, seed)``: run the build's jobs and write Hub-shaped repos.

The jobs are independent (one per evaluated manipulation task, :mod:`~bspatial.construction.publishing.task_records`;
one per general-VQA activity, :mod:`~bspatial.construction.questions.general`, its apartments' frames and candidates;
task-grounded navigation VQA, :mod:`~bspatial.construction.questions.navigation_vqa`, context tour + current view), each
writing its own part files or staged frames; they run in this process, in spawned workers or on Ray actors (one
simulator each, :mod:`bspatial.common.executors`). The driver then subsamples general VQA from all activities'
candidates at once (the pick balances over the whole pool) and merges the parts in a fixed order, so the
records do not depend on where the jobs ran. (General VQA was one job of 33 minutes, the paper build's
critical path on 2 cores.)

Jobs write their part files and images straight into the build's staging folder (the images are most of a
build's bytes; passing them back through the driver would double its memory and I/O). So on a Ray cluster of
several machines the staging folder (beside ``out``) must be on a filesystem every node mounts: a job that
cannot see it stops the build with an error saying so. On one machine there is nothing to do.

Records go to ``<tmp>/records`` (JSONL + PNG / JPEG) and are exported to parquet repos with their cards
(:mod:`~bspatial.construction.publishing.export`). Everything is built in a temporary sibling of ``out`` and
renamed into place at the end (:func:`bspatial.common.files.publish_folder`), so a failed build leaves
nothing behind and a killed one leaves only its staging folder, which the next build of ``out`` removes.
Local workers die with the build (:func:`bspatial.common.processes.worker_pool`), Ray actors with their
driver. Same preset and seed -> identical parquet bytes.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any


from bspatial.catalog.schema import CONSTRUCTION_FRAME_SIZE
from bspatial.catalog.tasks import NAVIGATION_TASKS
from bspatial.common.files import publish_folder, remove_stale_staging, require_folder_path, staging_folder
from bspatial.common.locks import run_folder_lock
from bspatial.common.executors import check_ray_address, import_ray, open_executor
from bspatial.construction.publishing.export import build_fingerprint, export_repos, quality_report
from bspatial.construction.publishing.presets import Preset, PresetShortfall, get_preset
from bspatial.construction.publishing.aligned_records import aligned_count_key, build_aligned_records
from bspatial.construction.publishing.task_records import build_task_records
from bspatial.sim.backend import SimBackend
from bspatial.sim.process import close_process_backends, process_backend

logger = logging.getLogger(__name__)


def build(preset: str | Preset, out: str | Path, seed: int = 0, *, overwrite: bool = False,
          workers: int | None = None, ray: str | None = None) -> dict[str, Path]:
    """Build the preset into ``out/vqa`` and ``out/ir``; returns ``{suite: repo dir}``.

    ``workers`` processes (one simulator each; None or 1: this process) share the independent jobs (one per task,
    general VQA, navigation VQA); with ``ray`` ("auto" or a cluster address) they are ``workers`` Ray actors
    (default: one per cluster CPU). The output is byte-identical for any number of workers, local or on Ray.

    Raises:
        PresetShortfall: too few valid frames for a category (nothing is written).
        QualityFailure: the data-quality gate fails: an answer leak, or an item validity rule broken by more
            than 1% of a config's items (:mod:`~bspatial.construction.quality.audit`; nothing is written).
        FileExistsError: ``out`` exists and is not empty (pass ``overwrite=True``).
        NotAFolderError: ``out`` is, or lies under, a file (a ``ValueError``).
        ValueError: unknown preset, or ``workers`` < 1.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if check_ray_address(ray) is not None:
        import_ray()   # without Ray, refused before any folder is touched
    preset = get_preset(preset)
    out = require_folder_path(Path(out).resolve())
    with run_folder_lock(out.parent, f"build --preset {preset.name}", name=f".{out.name}.lock"):
        remove_stale_staging(out)   # we hold out's lock: a staging folder of out is a killed build's
        if out.exists() and any(out.iterdir()) and not overwrite:
            raise FileExistsError(f"out {str(out)!r} exists and is not empty; pass overwrite=True to replace it")
        tmp = staging_folder(out)
        try:
            records = tmp / "records"
            counts = _write_records(preset, seed, records, workers, ray)
            quality = quality_report(records)
            fingerprint = build_fingerprint(preset, seed)
            stage = tmp / "out"
            export_repos(records, stage, tmp / "cache", counts, preset, seed, fingerprint, quality)
            publish_folder(stage, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return {"vqa": out / "vqa", "ir": out / "ir"}


# ----------------------------------------------------------------------------- records


def _job_names(preset: Preset) -> list[str]:
    """The build's independent jobs: one per task with task-grounded quotas, one per task with aligned episodes, one
    per general-VQA activity (its frames and candidates; the driver then subsamples them all at once,
    :func:`_write_general`), then navigation (when it has questions to make)."""
    from bspatial.construction.questions.activities import GENERAL_ACTIVITIES

    general = [] if preset.general is None else GENERAL_ACTIVITIES[: preset.general.activities]
    tasks = [t for t in preset.tasks if preset.count("vqa_per_task", t) or preset.count("ir_per_task", t)]
    aligned = list(preset.tasks) if preset.aligned_splits else []
    navigation = any(preset.count("navigation_per_task", t) for t in NAVIGATION_TASKS)
    return ([f"task:{t}" for t in tasks] + [f"{ALIGNED_JOB}{t}" for t in aligned]
            + [f"{GENERAL_JOB}{a}" for a in general] + (["navigation"] if navigation else []))


GENERAL_JOB = "general:"
"""Prefix of a general-VQA activity job's name."""
ALIGNED_JOB = "aligned:"
"""Prefix of a task's episode-aligned job (:mod:`~bspatial.construction.publishing.aligned_records`)."""


def _run_job(args: tuple) -> tuple[str, Any]:
    """Run one job: a task, a task's aligned episodes or navigation into its own part files
    ``parts/<job>.{vqa,ir}.jsonl`` (returns (job, counts)); a general-VQA activity into its staged frames (returns
    (job, its candidates))."""
    preset, seed, root, job = args
    if not root.is_dir():
        import socket

        raise FileNotFoundError(f"build job {job!r} on {socket.gethostname()} cannot see the build's staging folder "
                                f"{root}: with --ray on several machines, put --out on a filesystem every node mounts")
    sim = process_backend(max_render_size=CONSTRUCTION_FRAME_SIZE)   # one per worker, reused by its jobs
    if job.startswith(GENERAL_JOB):
        from bspatial.construction.questions.general import activity_frames

        return job, activity_frames(sim, preset.general, seed, job[len(GENERAL_JOB):], root)
    stem = root / "parts" / job.replace(":", "-")
    counts: dict = {"vqa": {}, "ir": {}, "aligned": {}}
    with open(f"{stem}.vqa.jsonl", "w") as vqa, open(f"{stem}.ir.jsonl", "w") as ir:
        if job.startswith("task:"):
            task = job[len("task:"):]
            counts["vqa"][task], counts["ir"][task] = build_task_records(sim, preset, seed, task, root, vqa, ir)
        elif job.startswith(ALIGNED_JOB):
            task = job[len(ALIGNED_JOB):]
            coverage = build_aligned_records(sim, preset, seed, task, root, vqa, ir)
            counts["aligned"][task] = coverage
            for suite in ("vqa", "ir"):
                counts[suite][aligned_count_key(task)] = sum(c[suite] for c in coverage.values())
        else:
            counts["vqa"].update(_build_navigation(sim, preset, seed, root, vqa))
    return job, counts


def _write_records(preset: Preset, seed: int, root: Path, workers: int | None = None, ray: str | None = None) -> dict:
    """Run the jobs (on the executor of ``workers`` / ``ray``, one simulator per worker), write general VQA's
    records from the activities' candidates, and merge the part files (every task's in the preset's order, the
    aligned episodes', general VQA's, navigation's), so the records do not depend on where the jobs ran."""
    from bspatial.common.progress import progress_bar

    (root / "images").mkdir(parents=True)
    (root / "parts").mkdir()
    jobs = _job_names(preset)
    results: dict[str, Any] = {}
    bar = progress_bar(len(jobs), f"build {preset.name}", "job")
    try:
        with open_executor(workers, ray) as executor:
            # Longest first (the tasks and navigation take minutes, an activity under one), so the workers
            # finish together.
            order = jobs if executor.workers == 1 else sorted(jobs, key=lambda j: j.startswith(GENERAL_JOB))
            for job in order:
                executor.submit(job, _run_job, (preset, seed, root, job))
            for job, (_, result) in executor.completed():
                results[job] = result
                bar.update()
    finally:
        bar.close()
        close_process_backends()
    if preset.general is not None:
        results["general"] = _write_general(preset, seed, root, [results[j] for j in jobs if j.startswith(GENERAL_JOB)])
    parts = ([j for j in jobs if j.startswith(("task:", ALIGNED_JOB))] + (["general"] if preset.general is not None
                                                                         else []) + [j for j in jobs if j == "navigation"])
    counts: dict = {"vqa": {}, "ir": {}, "aligned": {}}
    with open(root / "vqa.jsonl", "w") as vqa, open(root / "ir.jsonl", "w") as ir:
        for job in parts:
            stem = root / "parts" / job.replace(":", "-")
            vqa.write(Path(f"{stem}.vqa.jsonl").read_text())
            ir.write(Path(f"{stem}.ir.jsonl").read_text())
            for key in counts:
                counts[key].update(results[job].get(key, {}))
    return counts


def _write_general(preset: Preset, seed: int, root: Path, pools: list) -> dict:
    """General VQA's part files from the activities' candidates (an empty IR part: general VQA has no IR)."""
    from bspatial.construction.questions.general import GeneralShortfall, write_general_records

    stem = root / "parts" / "general"
    try:
        with open(f"{stem}.vqa.jsonl", "w") as vqa:
            made = write_general_records(pools, preset.general, seed, root, vqa)
    except GeneralShortfall as error:
        raise PresetShortfall(f"preset {preset.name!r}: category {error}") from None
    Path(f"{stem}.ir.jsonl").write_text("")
    return {"vqa": made, "ir": {}}


def _build_navigation(sim: SimBackend, preset: Preset, seed: int, root: Path, vqa) -> dict[str, int]:
    from bspatial.construction.questions.navigation_vqa import NavigationShortfall, write_navigation

    wanted = {task: preset.count("navigation_per_task", task) for task in NAVIGATION_TASKS}
    try:
        made = write_navigation(sim, wanted, seed, root, vqa)
    except NavigationShortfall as error:
        raise PresetShortfall(f"preset {preset.name!r}: category {error}") from None
    return {f"task_navigation/{task}": n for task, n in made.items()}


# ----------------------------------------------------------------------------- export


