"""Episode-aligned items: for every held-out and prompt-probe manipulation episode, its IR query and task VQA item.

The paper-count configs draw their own layouts, so none of their instances is an episode a policy is rolled out on.
Here each item is made from the episode itself: the instance ``bspatial rollout`` loads for the manifest entry
(:func:`bspatial.construction.splits.split_episodes` with the build seed; :func:`bspatial.tasks.episode.load_instance`),
in its start state after the warm-up, and the head frame the policy sees first (at the construction size). The
question and the IR label are the paper build's own (:func:`~bspatial.construction.publishing.task_records.vqa_row`,
:func:`~bspatial.construction.publishing.task_records.ir_row`), with two differences that keep the item the
episode's:

* no decoy: a three-candidate distance question whose frame has no fourth visible object that loses is not asked
  (the paper build adds a copy of a candidate, a frame the episode never shows);
* no prior-balanced pick among drafts: there is one instance per episode, so every valid item is kept.

An episode whose frame fails a filter gets no item of that suite; the build's card counts, per split and task, the
episodes, the items made and the reasons for the others. Item ids carry the episode
(:func:`~bspatial.construction.splits.aligned_item_id`); the metadata repeats it as ``episode``.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from bspatial.common.tables import markdown_table
from bspatial.construction.publishing.presets import Preset
from bspatial.construction.publishing.task_records import ir_row, vqa_row
from bspatial.sim.backend import SimBackend

logger = logging.getLogger(__name__)

ALIGNED_CONFIG = "episode_aligned"
"""The config of both suites holding the aligned items (the builders select rows with an ``episode``)."""


def aligned_count_key(task: str) -> str:
    """The build's count key of ``task``'s aligned items (its card's counts table row)."""
    return f"{ALIGNED_CONFIG}/{task}"


def build_aligned_records(sim: SimBackend, preset: Preset, seed: int, task: str, root: Path, vqa, ir) -> dict:
    """Write the aligned VQA rows of ``task``'s episodes to ``vqa``, its IR rows to ``ir``, images under ``root``.

    Returns the coverage: ``{split: {"episodes": n, "vqa": n, "ir": n, "reasons": {reason: n}}}``.
    """
    from bspatial.construction.items.frames import Rejected, png_bytes, record_frame
    from bspatial.construction.splits import aligned_item_id, split_episodes
    from bspatial.tasks.episode import load_instance

    coverage: dict = {}
    for split in preset.aligned_splits:
        made, reasons = Counter(), Counter()
        entries = split_episodes(split, [task], seed=seed, limit=preset.aligned_limit)
        for entry in entries:
            instance, _ = load_instance(sim, entry.task, entry.variant, entry.seed)
            record = record_frame(sim, instance.scene)   # the start state the policy's first frame shows
            item_id = aligned_item_id(entry)
            meta = {"seed": entry.seed, "build_seed": seed, "target": instance.target,
                    "candidates": list(instance.candidates), "camera": record.camera_dict(),
                    "episode": {k: v for k, v in asdict(entry).items() if k != "training_index"}}
            try:   # IR first: the VQA row's goal-state capture reloads the simulator
                row = ir_row(instance, record, item_id, f"images/ir-{item_id}.png", meta)
                (root / row["image"]).write_bytes(png_bytes(record.frame.rgb))
                ir.write(json.dumps(row, sort_keys=True) + "\n")
                made["ir"] += 1
            except Rejected as why:
                reasons[_reason("ir", why)] += 1
            try:
                row, rgb = vqa_row(sim, instance, record, entry.seed, item_id, f"images/vqa-{item_id}.png", meta,
                                   decoys=False)
                (root / row["frames"][0]).write_bytes(png_bytes(rgb))
                vqa.write(json.dumps(row, sort_keys=True) + "\n")
                made["vqa"] += 1
            except Rejected as why:
                reasons[_reason("vqa", why)] += 1
        coverage[split] = {"episodes": len(entries), "vqa": made["vqa"], "ir": made["ir"], "reasons": dict(reasons)}
        logger.info("aligned %s / %s: %d episodes, %d VQA items, %d IR queries", task, split, len(entries),
                    made["vqa"], made["ir"])
    return coverage


def _reason(suite: str, why: Exception) -> str:
    """A rejection's reason with its numbers folded (``bowl_0 covers 360 px`` and ``bowl_0 covers 451 px`` are one
    reason in the card's table)."""
    return f"{suite}: " + re.sub(r"\d+(\.\d+)?", "N", str(why))


def coverage_markdown(coverage: dict[str, dict], suite: str) -> str:
    """The card's coverage table of one suite: per task and split, episodes, items, and why the others have none."""
    rows, totals = [], Counter()
    for task, splits in coverage.items():
        for split, c in splits.items():
            why = "; ".join(f"{reason.removeprefix(suite + ': ')} ({n})" for reason, n in
                            sorted(c["reasons"].items(), key=lambda kv: -kv[1]) if reason.startswith(f"{suite}: ")) or "-"
            rows.append((task, split, c["episodes"], c[suite], why))
            totals[split, "episodes"] += c["episodes"]
            totals[split, suite] += c[suite]
    splits = dict.fromkeys(split for _, split, *_ in rows)
    rows += [("**all**", split, totals[split, "episodes"], totals[split, suite], "") for split in splits]
    return markdown_table(("task", "split", "episodes", "items", "episodes without an item: why"), rows)
