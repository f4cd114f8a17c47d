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
from dataclasses import dataclass, field
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


@dataclass
class _Quotas:
    """What a task job still needs and has made: per variant, the VQA and IR quotas left, the spare VQA drafts
    (beyond the quota, for the prior-balanced pick) and the questions kept; the rejection reasons seen."""

    need_vqa: dict[str, int]
    need_ir: dict[str, int]
    spare_vqa: dict[str, int]
    kept_vqa: dict[str, int]
    made: dict[str, int] = field(default_factory=lambda: {"vqa": 0, "ir": 0})
    reasons: dict[str, int] = field(default_factory=dict)

    def reject(self, reason: str) -> None:
        self.reasons[reason[:80]] = self.reasons.get(reason[:80], 0) + 1

    def share_remainder(self, variant: str, variants: tuple[str, ...], short_in_round0: set[str]) -> None:
        """Round 1: ``variant`` takes an equal share of what is still left; the rest waits on the next taker (so
        the totals stay exact). (Handing the whole remainder to the first such variant piled the bottom
        cabinet's hidden layers 1-2 onto layer 3: 46 of 77 answers, a blind guesser's 60%.)"""
        takers = [v for v in variants[variants.index(variant):] if v not in short_in_round0]
        for need in (self.need_vqa, self.need_ir):
            left = sum(need.values())
            share = -(-left // len(takers))  # ceil
            need.update(dict.fromkeys(variants, 0), **{variant: share})
            if len(takers) > 1:
                need[takers[1]] = left - share

    def count_vqa(self, variant: str) -> None:
        """One question drafted for ``variant``: against its quota while one is left, else as a spare."""
        if self.need_vqa[variant] > 0:
            self.need_vqa[variant] -= 1
            self.kept_vqa[variant] += 1
            self.made["vqa"] += 1
        else:
            self.spare_vqa[variant] -= 1


def build_task_records(sim: SimBackend, preset: Preset, seed: int, task: str, root: Path, vqa, ir) -> tuple[int, int]:
    """Draw instances of ``task`` until every variant's VQA and IR quotas are met; VQA rows go to ``vqa`` (after the
    prior-balanced pick), IR rows to ``ir``, images under ``root``. Returns (questions, IR queries) written.

    Raises:
        PresetShortfall: a quota cannot be met within the preset's draws.
    """
    variants = TASKS[task].variants
    rng = np.random.default_rng(_draw_seed(seed, task, "quotas", 0))
    wanted_vqa, wanted_ir = preset.count("vqa_per_task", task), preset.count("ir_per_task", task)
    need_vqa, need_ir = _quotas(wanted_vqa, variants, rng), _quotas(wanted_ir, variants, rng)
    # Questions beyond a variant's quota (round 0): the prior-balanced pick chooses among them.
    quotas = _Quotas(need_vqa, need_ir, spare_vqa={v: (preset.vqa_choice - 1) * n for v, n in need_vqa.items()},
                     kept_vqa=dict.fromkeys(variants, 0))
    # (variant, row, image path, RGB frame): encoded only if picked; PNG encoding was a third of a task job's
    # time, and with vqa_choice > 1 most drafts are dropped.
    drafts: list[tuple[str, dict, str, np.ndarray]] = []
    # Round 0 fills each variant's quota; a variant whose frames never qualify (e.g. a fridge layer the
    # head camera cannot see) hands its remainder to the variants that did, drawn in round 1
    # (Section 3.3: suites keep only valid samples, balanced across variants as far as they allow).
    short_in_round0: set[str] = set()
    for round_ in range(2):
        if round_ == 1:
            short_in_round0 = {v for v in variants if quotas.need_vqa[v] or quotas.need_ir[v]}
        for variant in variants:
            if round_ == 1:
                if variant in short_in_round0:
                    continue
                quotas.share_remainder(variant, variants, short_in_round0)
            draws = range(round_ * preset.max_draws_per_variant, (round_ + 1) * preset.max_draws_per_variant)
            _draw_variant(sim, quotas, drafts, seed, task, variant, draws, round_, root, ir)
    _write_drafts(drafts, quotas.kept_vqa, root, vqa, np.random.default_rng(_draw_seed(seed, task, "choice", 0)))
    for suite, need, wanted in (("task_manipulation VQA", quotas.need_vqa, wanted_vqa),
                                ("IR", quotas.need_ir, wanted_ir)):
        short = sum(need.values())
        if short:
            common = sorted(quotas.reasons.items(), key=lambda kv: -kv[1])[:3]
            raise PresetShortfall(
                f"preset {preset.name!r}: category {suite} / task {task}: built {wanted - short} of {wanted} "
                f"(short by {short}; variants short: { {v: n for v, n in need.items() if n} }) after "
                f"{preset.max_draws_per_variant} draws per variant; most common rejections: {common}")
    return quotas.made["vqa"], quotas.made["ir"]


def _draw_variant(sim: SimBackend, quotas: _Quotas, drafts: list, seed: int, task: str, variant: str,
                  draws: range, round_: int, root: Path, ir) -> None:
    """Draw instances of one variant until its quotas are met or ``draws`` run out. A suite whose frames never
    qualify for this variant within :data:`GIVE_UP_DRAWS` draws is given up (its quota moves on in round 1)
    instead of burning the whole draw budget."""
    from bspatial.construction.ir_labels import named_reference
    from bspatial.construction.items.frames import out_of_view, record_frame
    from bspatial.tasks import sample_instance

    tried, got = {"vqa": 0, "ir": 0}, {"vqa": 0, "ir": 0}
    for k in draws:
        spare = quotas.spare_vqa[variant] if round_ == 0 else 0
        want_vqa = quotas.need_vqa[variant] + spare > 0 and not (tried["vqa"] >= GIVE_UP_DRAWS and got["vqa"] == 0)
        want_ir = quotas.need_ir[variant] > 0 and not (tried["ir"] >= GIVE_UP_DRAWS and got["ir"] == 0)
        if not want_vqa and not want_ir:
            break
        draw = _draw_seed(seed, task, variant, k)
        try:
            instance = sample_instance(task, variant, draw)
        except ValueError as error:
            quotas.reject(str(error))
            continue
        sim.load(instance.scene)
        # Both suites name the instruction's reference and reject a frame where it is not findable (the VQA
        # templates and ir_labels): a reference cut by the frame's edge is rejected before the frame is rendered.
        reference = named_reference(instance)
        why = None if reference is None else out_of_view(sim, instance.scene, [reference])
        if why is not None:
            tried["vqa"] += want_vqa
            tried["ir"] += want_ir
            quotas.reject(f"not findable: {why}")
            continue
        record = record_frame(sim, instance.scene)
        item_id = f"{task}-{_slug(variant)}-{draw:08x}"
        meta = {"seed": draw, "build_seed": seed, "target": instance.target, "candidates": list(instance.candidates),
                "camera": record.camera_dict()}
        if want_vqa:
            tried["vqa"] += 1
            draft = _vqa_draft(sim, quotas, instance, record, draw, item_id, meta, task, variant)
            if draft is not None:
                drafts.append(draft)
                quotas.count_vqa(variant)
                got["vqa"] += 1
        if want_ir:
            tried["ir"] += 1
            if _write_ir(quotas, instance, record, item_id, meta, task, variant, root, ir):
                quotas.need_ir[variant] -= 1
                quotas.made["ir"] += 1
                got["ir"] += 1


def _vqa_draft(sim: SimBackend, quotas: _Quotas, instance, record, draw: int, item_id: str, meta: dict, task: str,
               variant: str) -> tuple[str, dict, str, np.ndarray] | None:
    """The instance's question as a draft (variant, row, image path, marked RGB frame), or None (the reason is
    counted)."""
    from bspatial.construction.items.frames import Rejected

    image = f"images/vqa-{item_id}.png"
    try:
        row, rgb = vqa_row(sim, instance, record, draw, f"tm-{item_id}", image, meta, decoys=True)
    except Rejected as why:
        quotas.reject(f"vqa: {why}")
        return None
    return variant, row, image, rgb


def vqa_row(sim: SimBackend, instance, record, draw: int, item_id: str, image: str, meta: dict, *,
            decoys: bool) -> tuple[dict, np.ndarray]:
    """The instance's task-grounded question as a record row and its (marked) RGB frame, the image it names.

    ``record`` is the instance's initial head frame; a container task's container view is captured here (it
    reloads ``sim``). ``decoys``: a three-candidate distance question with no fourth visible object that loses may
    add a copy of a candidate to the frame (:func:`_ask`); without, it is rejected.

    Raises:
        Rejected: the frame fails a filter (the message says which).
    """
    from bspatial.construction.items.frames import capture, container_view_scene
    from bspatial.construction.items.marks import draw_marks

    goal = capture(sim, container_view_scene(instance)) if instance.container is not None else None
    q, shown_initial = _ask(sim, instance, record, goal, draw, decoys)
    shown = goal if q.frame == "goal" else shown_initial
    rgb = draw_marks(shown.frame.rgb, q.marks) if q.marks else shown.frame.rgb
    objects = {n: s.to_dict() for n, s in shown.objects.items() if s.pixels}
    row = VQARecord(item_id, "task_manipulation", q.category, q.subtype, (image,), q.question, q.options,
                    q.answer, task=instance.task, variant=instance.variant,
                    metadata={**meta, "camera": shown.camera_dict(), "frame": q.frame,
                              "marks": [m.record() for m in q.marks], "objects": objects,
                              **q.metadata}).to_row()
    return row, rgb


def _write_ir(quotas: _Quotas, instance, record, item_id: str, meta: dict, task: str, variant: str, root: Path,
              ir) -> bool:
    """Label and write the instance's IR query; False (the reason counted) when its frame fails a filter."""
    from bspatial.construction.items.frames import Rejected, png_bytes

    image = f"images/ir-{item_id}.png"
    try:
        row = ir_row(instance, record, f"ir-{item_id}", image, meta)
    except Rejected as why:
        quotas.reject(f"ir: {why}")
        return False
    (root / image).write_bytes(png_bytes(record.frame.rgb))
    ir.write(json.dumps(row, sort_keys=True) + "\n")
    return True


def ir_row(instance, record, item_id: str, image: str, meta: dict) -> dict:
    """The instance's IR query on its head frame ``record`` as a record row naming ``image`` (the unmarked frame).

    Raises:
        Rejected: the frame fails a filter (:func:`~bspatial.construction.ir_labels.ir_region`).
    """
    from bspatial.construction.ir_labels import ir_region, named_reference

    region = ir_region(instance, record)
    # What the IR audit (bspatial.construction.quality.ir_audit) checks besides the region: the named reference's
    # state and the camera (findable), the directional placement's goal point (in the frame).
    audit: dict = {}
    reference = named_reference(instance)
    if reference is not None:
        audit.update(reference=reference, objects={reference: record.objects[reference].to_dict()},
                     camera=record.camera_dict())
    if instance.countertop is not None:
        audit["goal_point"] = [float(v) for v in instance.placement.goal_point]
    return IRRecord(item_id, instance.task, instance.instruction, image, region, variant=instance.variant,
                    metadata={**meta, "target_center": record.objects[instance.target].center, **audit}).to_row()


def _ask(sim: SimBackend, instance, record, goal, draw: int, decoys: bool = True):
    """The task's question and the initial frame it shows: the task's own frame, or (a three-candidate distance
    question with no fourth visible object that loses, and ``decoys``) that frame with a copy of a candidate added
    (:func:`~bspatial.construction.questions.decoys.decoy_scene`). The IR query keeps the task's own frame.

    Raises:
        Rejected: the frame fails a filter, or no spot for the copy qualifies (or ``decoys`` is False).
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
        if not decoys:
            raise Rejected("fourth option: no visible object loses by the margin in the episode's own frame") from None
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
