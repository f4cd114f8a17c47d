"""Task-grounded manipulation records: per evaluated task, its VQA questions and IR queries.

For each instruction variant draw instances (``bspatial.tasks.sample_instance`` with seeds derived from
the build seed), capture the 720x720 head frame (:mod:`~bspatial.construction.items.frames`), ask the task's
question (:mod:`~bspatial.construction.questions.templates`) and label its IR query
(:mod:`~bspatial.construction.ir_labels`) until the variant's quotas are met. Quotas are split evenly
over the variants (Section 3.3: "balanced across instruction variants").
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np

from bspatial.catalog.tasks import TASKS
from bspatial.common.seeds import derive_seed
from bspatial.construction.publishing.presets import Preset, PresetShortfall
from bspatial.construction.items.records import IRRecord, VQARecord
from bspatial.sim.backend import SimBackend

logger = logging.getLogger(__name__)


QUESTION_STREAM = 1
"""Second seed word of a task-grounded question's generator (its first is the layout's draw seed)."""
GIVE_UP_DRAWS = 24
"""Draws after which a suite with no valid frame for a variant is given up for that variant and round
(e.g. a bottom-cabinet layer the head camera cannot see into): its quota moves to the other variants."""


def _draw_seed(seed: int, task: str, variant: str, k: int) -> int:
    return derive_seed(seed, task, variant, k)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _quotas(n: int, variants: tuple[str, ...], rng: np.random.Generator) -> dict[str, int]:
    order = [variants[i] for i in rng.permutation(len(variants))]
    return {v: n // len(variants) + (1 if i < n % len(variants) else 0) for i, v in enumerate(order)}


def build_task_records(sim: SimBackend, preset: Preset, seed: int, task: str, root: Path, vqa, ir) -> tuple[int, int]:
    from bspatial.construction.ir_labels import ir_region
    from bspatial.construction.items.frames import Rejected, capture, draw_marks, goal_view_scene, png_bytes
    from bspatial.tasks import sample_instance

    variants = TASKS[task].variants
    rng = np.random.default_rng(_draw_seed(seed, task, "quotas", 0))
    wanted_vqa, wanted_ir = preset.count("vqa_per_task", task), preset.count("ir_per_task", task)
    need_vqa, need_ir = _quotas(wanted_vqa, variants, rng), _quotas(wanted_ir, variants, rng)
    made = {"vqa": 0, "ir": 0}
    # Questions beyond a variant's quota (round 0): the prior-balanced pick chooses among them.
    spare_vqa = {v: (preset.vqa_choice - 1) * n for v, n in need_vqa.items()}
    kept_vqa: dict[str, int] = dict.fromkeys(variants, 0)
    # (variant, row, image path, RGB frame): encoded only if picked; PNG encoding was a third of a task job's
    # time, and with vqa_choice > 1 most drafts are dropped.
    drafts: list[tuple[str, dict, str, np.ndarray]] = []
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
                        q, shown_initial = _ask(sim, instance, record, goal, draw)
                    except Rejected as why:
                        reasons[f"vqa: {why}"[:80]] = reasons.get(f"vqa: {why}"[:80], 0) + 1
                    else:
                        shown = goal if q.frame == "goal" else shown_initial
                        rgb = draw_marks(shown.frame.rgb, list(q.marks)) if q.marks else shown.frame.rgb
                        image = f"images/vqa-{item_id}.png"
                        objects = {n: s.to_dict() for n, s in shown.objects.items() if s.pixels}
                        row = VQARecord(f"tm-{item_id}", "task_manipulation", q.category, q.subtype, (image,),
                                        q.question, q.options, q.answer, task=task, variant=variant,
                                        metadata={**meta, "camera": shown.camera_dict(), "frame": q.frame,
                                                  "marks": [[m[0], list(m[1])] for m in q.marks],
                                                  "objects": objects, **q.metadata}).to_row()
                        drafts.append((variant, row, image, rgb))
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
                        row = IRRecord(f"ir-{item_id}", task, instance.instruction, image, region, variant=variant,
                                       metadata={**meta, "target_center": record.objects[instance.target].center}).to_row()
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


def _ask(sim: SimBackend, instance, record, goal, draw: int):
    """The task's question and the initial frame it shows: the task's own frame, or (a three-candidate distance
    question with no fourth visible object that loses) that frame with a copy of a candidate added
    (:func:`~bspatial.construction.questions.decoys.decoy_scene`). The IR query keeps the task's own frame.

    Raises:
        Rejected: the frame fails a filter, or no spot for the copy qualifies.
    """
    from bspatial.construction.questions.decoys import DECOY_STREAM, decoy_scene
    from bspatial.construction.items.frames import Rejected, capture
    from bspatial.construction.questions.templates import NoFourthObject, task_question

    try:
        # Its own stream: seeded with the layout's seed alone, the option order would repeat the layout
        # sampler's first draws, which decided whether the layout was accepted (the paper preset's answers
        # then piled on one mark number, 37 of 77 soda-can questions).
        return task_question(instance, record, goal, np.random.default_rng((draw, QUESTION_STREAM))), record
    except NoFourthObject:
        decoy = decoy_scene(instance, record, np.random.default_rng((draw, DECOY_STREAM)))
    if decoy is None:
        raise Rejected("fourth option: no visible object loses by the margin, no free spot for a copy")
    shown = capture(sim, decoy[0])
    try:
        return task_question(instance, shown, goal, np.random.default_rng((draw, QUESTION_STREAM))), shown
    except Rejected as why:
        raise Rejected(f"with a copy added: {why}") from None


def _write_drafts(drafts: list[tuple[str, dict, str, np.ndarray]], kept: dict[str, int], root: Path, vqa,
                  rng: np.random.Generator) -> None:
    """Write ``kept[variant]`` of each variant's drafted questions (all of them when there are no more):
    a prior-balanced pick (:func:`~bspatial.construction.quality.debias.balanced_choice`), in draft order."""
    from bspatial.construction.quality.debias import balanced_choice
    from bspatial.construction.items.frames import png_bytes
    from bspatial.construction.quality.report import answer_text

    if len(drafts) > sum(kept.values()):
        answers = [answer_text(row) for _, row, _, _ in drafts]
        picked = set(balanced_choice([row for _, row, _, _ in drafts], sum(kept.values()), answers, rng,
                                     frames=[variant for variant, _, _, _ in drafts], room=dict(kept)))
        drafts = [d for i, d in enumerate(drafts) if i in picked]
    for _, row, image, rgb in drafts:
        (root / image).write_bytes(png_bytes(rgb))
        vqa.write(json.dumps(row, sort_keys=True) + "\n")
