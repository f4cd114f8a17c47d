"""``build(preset, out, seed)``: sample task instances, render, label, and write Hub-shaped repos.

Pipeline per evaluated manipulation task (Table S2): for each instruction variant draw instances
(``bspatial.tasks.sample_instance`` with seeds derived from the build seed), capture the 720x720 head
frame (:mod:`~bspatial.construction.frames`), ask the task's question
(:mod:`~bspatial.construction.templates`) and label its IR query
(:mod:`~bspatial.construction.ir_labels`) until the variant's quotas are met. Quotas are split
evenly over the variants (Section 3.3: "balanced across instruction variants").

General VQA comes from :mod:`~bspatial.construction.general` (49 activity scenes), task-grounded
navigation VQA from :mod:`~bspatial.construction.navigation_vqa` (context tour + current view).

Records go to ``<tmp>/records`` (JSONL + PNG / JPEG); the ``datasets/`` builders read them and each
config is written as ``<suite>/<config>/test-00000-of-00001.parquet``; the README is the card rendered
from ``hub_cards/`` (:mod:`~bspatial.construction.cards`) with its ``configs:`` header, and the VQA card
carries the data-quality report (:mod:`~bspatial.construction.quality`) that every build also logs.
Everything is built in a temporary sibling of ``out`` and renamed into place at the end, so a failed
or interrupted build leaves nothing behind. Same preset and seed -> identical parquet bytes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bspatial.common.files import publish_folder
from bspatial.common.seeds import derive_seed
from bspatial.construction.general import GeneralPlan
from bspatial.catalog.counts import (IR_QUERIES, MULTI_FRAME_COUNTS, SINGLE_FRAME_COUNTS,
                                                TASK_MANIPULATION_VQA, TASK_NAVIGATION_VQA, split_evenly)
from bspatial.catalog.tasks import MANIPULATION_EVAL_TASKS, NAVIGATION_TASKS, TASKS

logger = logging.getLogger(__name__)

SPLIT = "test"
BUILD_SCHEMA_VERSION = 2
"""Bumped when records change meaning; part of the build fingerprint in the dataset cards."""


@dataclass(frozen=True)
class Preset:
    """How much to build.

    Attributes:
        name: preset name.
        tasks: manipulation tasks to build.
        vqa_per_task / ir_per_task: task-grounded manipulation questions / IR queries per task: one
            number for every task, or ``((task, n), ...)`` pairs (the paper preset's exact totals).
        max_draws_per_variant: instance draws per variant before the preset counts as unmeetable.
        general: the general-VQA plan (configs ``general_single_frame`` / ``general_multi_frame``), or None.
        navigation_per_task: task-grounded navigation questions (config ``task_navigation``) per navigation
            task, as for ``vqa_per_task``; 0 builds none.
        vqa_choice: task-grounded questions drawn per question kept (first round): the kept ones are a
            prior-balanced pick (:mod:`~bspatial.construction.debias`) with each variant's count unchanged.
    """

    name: str
    tasks: tuple[str, ...]
    vqa_per_task: int | tuple[tuple[str, int], ...]
    ir_per_task: int | tuple[tuple[str, int], ...]
    max_draws_per_variant: int = 8
    general: GeneralPlan | None = None
    navigation_per_task: int | tuple[tuple[str, int], ...] = 0
    vqa_choice: int = 1

    def __post_init__(self) -> None:
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown:
            raise ValueError(f"preset {self.name!r}: unknown tasks {unknown}")
        if self.vqa_choice < 1:
            raise ValueError(f"preset {self.name!r}: vqa_choice must be >= 1, got {self.vqa_choice}")
        if self.max_draws_per_variant < 0:
            raise ValueError(f"preset {self.name!r}: max_draws_per_variant must be >= 0, "
                             f"got {self.max_draws_per_variant}")
        for field_name in ("vqa_per_task", "ir_per_task", "navigation_per_task"):
            value = getattr(self, field_name)
            counts = dict(value) if isinstance(value, tuple) else {"every task": value}
            bad = {t: n for t, n in counts.items() if not isinstance(n, int) or n < 0}
            if bad:
                raise ValueError(f"preset {self.name!r}: {field_name} must be >= 0, got {bad}")

    def count(self, field_name: str, task: str) -> int:
        """``field_name``'s number for ``task`` (0 for a task the pairs do not name)."""
        value = getattr(self, field_name)
        return dict(value).get(task, 0) if isinstance(value, tuple) else value


def _general_counts(n: int) -> tuple[tuple, tuple]:
    """``n`` questions for every general-VQA (category, subtype) of Table S1."""
    return tuple((k, n) for k in SINGLE_FRAME_COUNTS), tuple((k, n) for k in MULTI_FRAME_COUNTS)


PRESETS: tuple[Preset, ...] = (
    # Tests: one instance of each IR region kind and of the locate / direction templates; one general
    # question per Table S1 subtype from two activities.
    Preset("tiny", ("reach_plate", "reach_dice", "reach_tool", "reach_hardback", "place_carving_knife",
                    "place_tupperware_in_fridge"), 1, 1, 6,
           GeneralPlan(*_general_counts(1), activities=3, layouts=1, views=3, rotations=1, navigations=1),
           navigation_per_task=(("move_to_bookcase", 2),)),
    # make demo: every evaluated task, about two minutes on 2 cores. Two questions per task: the
    # container-locate question needs the placed object visible from the head camera, which most
    # bottom-cabinet layers are not (see the build report). General VQA: 3 per subtype.
    Preset("mini", MANIPULATION_EVAL_TASKS, 2, 4, 8,
           GeneralPlan(*_general_counts(3), activities=6, layouts=1, views=3, rotations=1, navigations=1),
           navigation_per_task=2),
    # The paper's counts exactly: general VQA (Table S1: 1,078 single-frame, 494 multi-frame over 49
    # activities), task-grounded manipulation 1,082 and navigation 602 questions, 1,240 IR queries
    # (Section 3.3), spread evenly over the tasks (paper_counts.split_evenly: no per-task table exists).
    Preset("paper", MANIPULATION_EVAL_TASKS, split_evenly(TASK_MANIPULATION_VQA, MANIPULATION_EVAL_TASKS),
           split_evenly(IR_QUERIES, MANIPULATION_EVAL_TASKS), 400,
           GeneralPlan(tuple(SINGLE_FRAME_COUNTS.items()), tuple(MULTI_FRAME_COUNTS.items()),
                       activities=49, layouts=3, views=6, rotations=2, navigations=1),
           navigation_per_task=split_evenly(TASK_NAVIGATION_VQA, NAVIGATION_TASKS), vqa_choice=2),
)
_BY_NAME = {p.name: p for p in PRESETS}
assert len(_BY_NAME) == len(PRESETS), "duplicate preset names"


QUESTION_STREAM = 1
"""Second seed word of a task-grounded question's generator (its first is the layout's draw seed)."""
GIVE_UP_DRAWS = 24
"""Draws after which a suite with no valid frame for a variant is given up for that variant and round
(e.g. a bottom-cabinet layer the head camera cannot see into): its quota moves to the other variants."""


class PresetShortfall(RuntimeError):
    """A preset cannot be met: names the category and the shortfall."""


def get_preset(name: str | Preset) -> Preset:
    if isinstance(name, Preset):
        return name
    if name not in _BY_NAME:
        raise ValueError(f"preset must be one of {list(_BY_NAME)}, got {name!r}")
    return _BY_NAME[name]


def build(preset: str | Preset, out: str | Path, seed: int = 0, *, overwrite: bool = False,
          workers: int = 1) -> dict[str, Path]:
    """Build the preset into ``out/vqa`` and ``out/ir``; returns ``{suite: repo dir}``.

    ``workers`` processes (one simulator each) share the independent jobs (one per task, general VQA,
    navigation VQA); the output is byte-identical for any number of workers.

    Raises:
        PresetShortfall: too few valid frames for a category (nothing is written).
        FileExistsError: ``out`` exists and is not empty (pass ``overwrite=True``).
        ValueError: unknown preset, or ``workers`` < 1.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    preset = get_preset(preset)
    out = Path(out).resolve()
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise FileExistsError(f"out {str(out)!r} exists and is not empty; pass overwrite=True to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        records = tmp / "records"
        counts = _write_records(preset, seed, records, workers)
        quality = _quality(records)
        fingerprint = _fingerprint(preset, seed)
        stage = tmp / "out"
        _export(records, stage, tmp / "cache", counts, preset, seed, fingerprint, quality)
        publish_folder(stage, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"vqa": out / "vqa", "ir": out / "ir"}


# ----------------------------------------------------------------------------- records


def _draw_seed(seed: int, task: str, variant: str, k: int) -> int:
    return derive_seed(seed, task, variant, k)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _quotas(n: int, variants: tuple[str, ...], rng: np.random.Generator) -> dict[str, int]:
    order = [variants[i] for i in rng.permutation(len(variants))]
    return {v: n // len(variants) + (1 if i < n % len(variants) else 0) for i, v in enumerate(order)}


_WORKER_SIM = None  # one simulator per worker process (jobs of a build run in the same workers)


def _job_names(preset: Preset) -> list[str]:
    """The build's independent jobs in their merge order: one per task, then general VQA, then navigation."""
    return [f"task:{t}" for t in preset.tasks] + (["general"] if preset.general is not None else []) + ["navigation"]


def _run_job(args: tuple) -> tuple[str, dict]:
    """Run one job into its own part files ``parts/<job>.{vqa,ir}.jsonl``; returns (job, counts)."""
    global _WORKER_SIM
    preset, seed, root, job = args
    if _WORKER_SIM is None:
        from bspatial.sim import MujocoBackend

        _WORKER_SIM = MujocoBackend(max_render_size=720)
    sim = _WORKER_SIM
    stem = root / "parts" / job.replace(":", "-")
    counts: dict = {"vqa": {}, "ir": {}}
    with open(f"{stem}.vqa.jsonl", "w") as vqa, open(f"{stem}.ir.jsonl", "w") as ir:
        if job.startswith("task:"):
            task = job[len("task:"):]
            counts["vqa"][task], counts["ir"][task] = _build_task(sim, preset, seed, task, root, vqa, ir)
        elif job == "general":
            counts["vqa"].update(_build_general(sim, preset, seed, root, vqa))
        else:
            counts["vqa"].update(_build_navigation(sim, preset, seed, root, vqa))
    return job, counts


def _close_worker_sim() -> None:
    global _WORKER_SIM
    if _WORKER_SIM is not None:
        _WORKER_SIM.close()
        _WORKER_SIM = None


def _write_records(preset: Preset, seed: int, root: Path, workers: int = 1) -> dict:
    """Run the jobs (in ``workers`` spawned processes, one simulator each, or in this process) and merge
    their part files in :func:`_job_names` order, so the records do not depend on ``workers``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from tqdm.auto import tqdm

    (root / "images").mkdir(parents=True)
    (root / "parts").mkdir()
    jobs = _job_names(preset)
    results: dict[str, dict] = {}
    bar = tqdm(total=len(jobs), desc=f"build {preset.name}", disable=None)
    try:
        if workers <= 1:
            for job in jobs:
                results[job] = _run_job((preset, seed, root, job))[1]
                bar.update()
        else:
            context = multiprocessing.get_context("spawn")   # never fork a process that holds a GL context
            # Longest jobs first (general VQA, then the tasks), so the workers finish together.
            order = sorted(jobs, key=lambda j: (j != "general", j == "navigation"))
            with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
                for job, job_counts in pool.map(_run_job, [(preset, seed, root, j) for j in order]):
                    results[job] = job_counts
                    bar.update()
    finally:
        bar.close()
        _close_worker_sim()
    counts: dict = {"vqa": {}, "ir": {}}
    with open(root / "vqa.jsonl", "w") as vqa, open(root / "ir.jsonl", "w") as ir:
        for job in jobs:
            stem = root / "parts" / job.replace(":", "-")
            vqa.write(Path(f"{stem}.vqa.jsonl").read_text())
            ir.write(Path(f"{stem}.ir.jsonl").read_text())
            for suite in ("vqa", "ir"):
                counts[suite].update(results[job][suite])
    return counts


def _build_task(sim, preset: Preset, seed: int, task: str, root: Path, vqa, ir) -> tuple[int, int]:
    from bspatial.construction.frames import capture, draw_marks, goal_view_scene, json_default, png_bytes
    from bspatial.construction.ir_labels import ir_region
    from bspatial.construction.templates import Rejected, task_question
    from bspatial.tasks import sample_instance

    variants = TASKS[task].variants
    rng = np.random.default_rng(_draw_seed(seed, task, "quotas", 0))
    wanted_vqa, wanted_ir = preset.count("vqa_per_task", task), preset.count("ir_per_task", task)
    need_vqa, need_ir = _quotas(wanted_vqa, variants, rng), _quotas(wanted_ir, variants, rng)
    made = {"vqa": 0, "ir": 0}
    # Questions beyond a variant's quota (round 0): the prior-balanced pick chooses among them.
    spare_vqa = {v: (preset.vqa_choice - 1) * n for v, n in need_vqa.items()}
    kept_vqa: dict[str, int] = dict.fromkeys(variants, 0)
    drafts: list[tuple[str, dict, str, bytes]] = []  # (variant, row, image path, PNG bytes)
    reasons: dict[str, int] = {}
    # Round 0 fills each variant's quota; a variant whose frames never qualify (e.g. a fridge layer the
    # head camera cannot see) hands its remainder to the variants that did, drawn in round 1
    # (Section 3.3: suites keep only valid samples, balanced across variants as far as they allow).
    short_in_round0: set[str] = set()
    for round_ in range(2):
        if round_ == 1:
            short_in_round0 = {v for v in variants if need_vqa[v] or need_ir[v]}
        for variant in variants:
            if round_ == 1:
                # The remainder is spread over the variants that did not fail: each takes an equal share
                # of what is still left, so a share it cannot fill moves on to the next. (Handing the whole
                # remainder to the first such variant piled the bottom cabinet's hidden layers 1-2 onto
                # layer 3: 46 of 77 answers, a blind guesser's 60%.)
                if variant in short_in_round0:
                    continue
                takers = [v for v in variants[variants.index(variant):] if v not in short_in_round0]
                for need in (need_vqa, need_ir):
                    left = sum(need.values())
                    share = -(-left // len(takers))  # ceil
                    need.update(dict.fromkeys(variants, 0), **{variant: share})
                    if len(takers) > 1:  # the rest waits on the next taker (so the totals stay exact)
                        need[takers[1]] = left - share
            tried, got = {"vqa": 0, "ir": 0}, {"vqa": 0, "ir": 0}
            for k in range(round_ * preset.max_draws_per_variant, (round_ + 1) * preset.max_draws_per_variant):
                # A suite whose frames never qualify for this variant within GIVE_UP_DRAWS draws is given up
                # (its quota moves on in round 1) instead of burning the whole draw budget.
                spare = spare_vqa[variant] if round_ == 0 else 0
                want_vqa = need_vqa[variant] + spare > 0 and not (tried["vqa"] >= GIVE_UP_DRAWS and got["vqa"] == 0)
                want_ir = need_ir[variant] > 0 and not (tried["ir"] >= GIVE_UP_DRAWS and got["ir"] == 0)
                if not want_vqa and not want_ir:
                    break
                draw = _draw_seed(seed, task, variant, k)
                try:
                    instance = sample_instance(task, variant, draw)
                except ValueError as error:
                    reasons[str(error)[:80]] = reasons.get(str(error)[:80], 0) + 1
                    continue
                record = capture(sim, instance.scene)
                item_id = f"{task}-{_slug(variant)}-{draw:08x}"
                meta = {"seed": draw, "build_seed": seed, "target": instance.target, "candidates": list(instance.candidates),
                        "camera": record.camera_dict()}
                if want_vqa:
                    tried["vqa"] += 1
                    goal = capture(sim, goal_view_scene(instance)) if instance.placement is not None else None
                    try:
                        # Its own stream: seeded with the layout's seed alone, the option order would repeat the
                        # layout sampler's first draws, which decided whether the layout was accepted (the
                        # paper preset's answers then piled on one mark number, 37 of 77 soda-can questions).
                        q = task_question(instance, record, goal, np.random.default_rng((draw, QUESTION_STREAM)))
                    except Rejected as why:
                        reasons[f"vqa: {why}"[:80]] = reasons.get(f"vqa: {why}"[:80], 0) + 1
                    else:
                        shown = goal if q.frame == "goal" else record
                        rgb = draw_marks(shown.frame.rgb, list(q.marks)) if q.marks else shown.frame.rgb
                        image = f"images/vqa-{item_id}.png"
                        objects = {n: s.to_dict() for n, s in shown.objects.items() if s.pixels}
                        row = {"id": f"tm-{item_id}", "suite": "vqa", "setting": "task_manipulation",
                               "category": q.category, "subtype": q.subtype, "task": task, "variant": variant,
                               "frames": [image], "question": q.question, "options": list(q.options), "answer": q.answer,
                               "metadata": json.dumps({**meta, "camera": shown.camera_dict(), "frame": q.frame,
                                                       "marks": [[m[0], list(m[1])] for m in q.marks],
                                                       "objects": objects, **q.metadata}, sort_keys=True, default=json_default)}
                        drafts.append((variant, row, image, png_bytes(rgb)))
                        if need_vqa[variant] > 0:
                            need_vqa[variant] -= 1
                            kept_vqa[variant] += 1
                            made["vqa"] += 1
                        else:
                            spare_vqa[variant] -= 1
                        got["vqa"] += 1
                if want_ir:
                    tried["ir"] += 1
                    try:
                        region = ir_region(instance, record)
                    except Rejected as why:
                        reasons[f"ir: {why}"[:80]] = reasons.get(f"ir: {why}"[:80], 0) + 1
                    else:
                        image = f"images/ir-{item_id}.png"
                        (root / image).write_bytes(png_bytes(record.frame.rgb))
                        row = {"id": f"ir-{item_id}", "suite": "ir", "task": task, "variant": variant,
                               "instruction": instance.instruction, "image": image, "region": json.dumps(region),
                               "metadata": json.dumps({**meta, "target_center": record.objects[instance.target].center},
                                                      sort_keys=True, default=json_default)}
                        ir.write(json.dumps(row, sort_keys=True) + "\n")
                        need_ir[variant] -= 1
                        made["ir"] += 1
                        got["ir"] += 1
    _write_drafts(drafts, kept_vqa, root, vqa, np.random.default_rng(_draw_seed(seed, task, "choice", 0)))
    for suite, need, wanted in (("task_manipulation VQA", need_vqa, wanted_vqa), ("IR", need_ir, wanted_ir)):
        short = sum(need.values())
        if short:
            common = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
            raise PresetShortfall(
                f"preset {preset.name!r}: category {suite} / task {task}: built {wanted - short} of {wanted} "
                f"(short by {short}; variants short: { {v: n for v, n in need.items() if n} }) after "
                f"{preset.max_draws_per_variant} draws per variant; most common rejections: {common}")
    return made["vqa"], made["ir"]


def _write_drafts(drafts: list[tuple[str, dict, str, bytes]], kept: dict[str, int], root: Path, vqa,
                  rng: np.random.Generator) -> None:
    """Write ``kept[variant]`` of each variant's drafted questions (all of them when there are no more):
    a prior-balanced pick (:func:`~bspatial.construction.debias.balanced_choice`), in draft order."""
    from bspatial.construction.debias import balanced_choice
    from bspatial.construction.quality import answer_text

    if len(drafts) > sum(kept.values()):
        answers = [answer_text(row) for _, row, _, _ in drafts]
        picked = set(balanced_choice([row for _, row, _, _ in drafts], sum(kept.values()), answers, rng,
                                     frames=[variant for variant, _, _, _ in drafts], room=dict(kept)))
        drafts = [d for i, d in enumerate(drafts) if i in picked]
    for _, row, image, data in drafts:
        (root / image).write_bytes(data)
        vqa.write(json.dumps(row, sort_keys=True) + "\n")


def _build_general(sim, preset: Preset, seed: int, root: Path, vqa) -> dict[str, int]:
    from bspatial.construction.general import GeneralShortfall, write_general

    try:
        return write_general(sim, preset.general, seed, root, vqa)
    except GeneralShortfall as error:
        raise PresetShortfall(f"preset {preset.name!r}: category {error}") from None


def _build_navigation(sim, preset: Preset, seed: int, root: Path, vqa) -> dict[str, int]:
    from bspatial.construction.navigation_vqa import NavigationShortfall, write_navigation

    wanted = {task: preset.count("navigation_per_task", task) for task in NAVIGATION_TASKS}
    try:
        made = write_navigation(sim, wanted, seed, root, vqa)
    except NavigationShortfall as error:
        raise PresetShortfall(f"preset {preset.name!r}: category {error}") from None
    return {f"task_navigation/{task}": n for task, n in made.items()}


# ----------------------------------------------------------------------------- export


def builder_module(suite: str):
    """Import ``datasets/bspatial_<suite>/bspatial_<suite>.py`` by path (``datasets/`` is not a package)."""
    from bspatial.common.paths import data_root  # the checkout, or the wheel's share/ folder

    path = data_root() / "datasets" / f"bspatial_{suite}" / f"bspatial_{suite}.py"
    spec = importlib.util.spec_from_file_location(f"bspatial_{suite}_builder", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # datasets re-imports the builder's module by name
    spec.loader.exec_module(module)
    return module


def _quality(records: Path) -> str:
    """The data-quality report of the VQA records (issue 4 item 7), logged and returned as Markdown."""
    from bspatial.construction.quality import quality_report

    with open(records / "vqa.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    config_of_setting = {s: c.name for c in builder_module("vqa").BspatialVQA.BUILDER_CONFIGS for s in c.settings}
    report = quality_report(rows, config_of=lambda row: config_of_setting[row["setting"]])
    markdown = report.to_markdown()
    log = logger.info if report.ok else logger.warning
    log("data-quality report (%s):\n%s", "pass" if report.ok else "FAIL: the templates may leak answers", markdown)
    parts = report.parts_markdown()
    logger.info("blind baseline by task or subtype (informational):\n%s", parts)
    return f"{markdown}\n\nBlind baseline by task or subtype (informational; the checks are per category):\n\n{parts}"


def _export(records: Path, stage: Path, cache: Path, counts: dict, preset: Preset, seed: int, fingerprint: str,
            quality: str = "") -> None:
    import pyarrow.parquet as pq

    vqa_mod, ir_mod = builder_module("vqa"), builder_module("ir")
    # A config with no rows is left out (datasets cannot prepare an empty split), and so is a suite
    # with no config (e.g. a VQA-only preset writes no ir/ repo).
    any_task_vqa = any(counts["vqa"].get(t) for t in preset.tasks)
    plan = {
        "vqa": (vqa_mod.BspatialVQA, (["task_manipulation"] if any_task_vqa else []) + (
            ["general_single_frame", "general_multi_frame"] if preset.general is not None else []) + (
            ["task_navigation"] if any(k.startswith("task_navigation/") for k in counts["vqa"]) else [])),
        "ir": (ir_mod.BspatialIR, (["all"] if any(counts["ir"].values()) else [])
               + [t for t in ir_mod.TASKS if counts["ir"].get(t)]),
    }
    for suite, (cls, configs) in plan.items():
        if not configs:
            logger.info("%s: no records, no repo written", suite)
            continue
        repo = stage / suite
        for config in configs:
            builder = cls(config_name=config, data_dir=str(records), cache_dir=str(cache / suite))
            builder.download_and_prepare()
            table = builder.as_dataset(split=SPLIT).data.table
            path = repo / config / f"{SPLIT}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, path)
        _write_card(repo, suite, configs, counts, preset, seed, fingerprint, quality if suite == "vqa" else "")


def _fingerprint(preset: Preset, seed: int) -> str:
    import bspatial

    text = json.dumps({"preset": preset.__dict__, "seed": seed, "schema": BUILD_SCHEMA_VERSION,
                       "version": getattr(bspatial, "__version__", "0")}, sort_keys=True, default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain(value):
    """JSON form of the preset's nested values (the general plan is a dataclass, counts are tuples)."""
    import dataclasses

    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else list(value)


def _write_card(repo: Path, suite: str, configs: list[str], counts: dict, preset: Preset, seed: int,
                fingerprint: str, quality: str = "") -> None:
    import bspatial
    from bspatial.construction.cards import render_dataset_card

    card = render_dataset_card(suite, configs=configs, counts=counts[suite], preset=preset.name, seed=seed,
                               fingerprint=fingerprint, version=getattr(bspatial, "__version__", "0"),
                               quality_markdown=quality)
    (repo / "README.md").write_text(card)
