"""The answerability audit of the IR (point-grounding) queries: can a careful viewer point at the answer?

The VQA audit (:mod:`~bspatial.construction.quality.audit`) checks its items from their metadata; this does the same
for IR records, from the region spec and the metadata the build writes for it (the reference object's state, the
camera, the placement goal point). Rules, per config (``all``: the IR suite has one paper-count config, plus
``episode_aligned``) and per task; the build fails when a rule is broken by more than
:data:`~bspatial.construction.quality.audit.MAX_BREAK_SHARE_PCT` of a config's queries:

``target_visible``
    Reach queries: the instructed object's mask (decoded from the region) covers at least the answer threshold
    (:data:`~bspatial.construction.items.frames.MIN_ANSWER_PIXELS`).
``one_target_region``
    Reach queries: exactly one target mask, sharing no pixel with a distractor's mask (the point has one object to
    land on).
``reference_findable``
    Queries whose instruction names a reference (a landmark of a distance reach, the object of a directional
    placement): the reference is findable by the VQA audit's rule (:func:`~bspatial.construction.quality.audit.findable`:
    half its box in the frame, pixels at least 18% of its projected box). Records without the reference's state
    (builds before the rule) are not checked.
``goal_in_frame``
    Placement queries: the instructed region is in the frame: the task's goal point (directional placement) or the
    middle of the instructed compartment's front face (container placement, from the region's box and bands)
    projects in front of the camera and inside the image.

Example:
    >>> row = {"id": "ir-x", "task": "reach_dice", "metadata": {},
    ...        "region": {"kind": "reach", "image_size": [4, 3], "targets": [{"size": [3, 4], "counts": [0, 12]}],
    ...                   "distractors": []}}
    >>> ir_audit([row]).results[1].rule, ir_audit([row]).results[1].breaks   # 12 px: too few to point at
    ('target_visible', 1)
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from bspatial.construction.items.frames import MIN_ANSWER_PIXELS
from bspatial.construction.quality.audit import AuditReport, RuleResult, findable, project
from bspatial.scoring.masks import Mask

IR_RULES = ("one_target_region", "target_visible", "reference_findable", "goal_in_frame")


def _mask(value: Any) -> np.ndarray:
    return Mask.from_json(value, "region mask").to_array()


def _in_frame(point, camera: Mapping, size) -> bool:
    uv, z = project(np.asarray(point, float)[None], camera)
    w, h = size
    return bool(z[0] > 0 and 0 <= uv[0, 0] < w and 0 <= uv[0, 1] < h)


def _container_goal(region: Mapping) -> np.ndarray:
    """The middle of the instructed compartment's front face (the box's -x face in its own frame)."""
    box = region["container"]
    center, half = np.asarray(box["center"], float), np.asarray(box["half_extents"], float)
    rotation = np.asarray(box.get("rotation", np.eye(3)), float)
    low, high = region["compartments"][region["instructed_compartment"]]
    local = np.array([-half[0], 0.0, 0.0])
    point = center + rotation @ local
    point[2] = (low + high) / 2
    return point


def _region(row: Mapping[str, Any]) -> Mapping[str, Any]:
    return row["region"] if isinstance(row["region"], Mapping) else json.loads(row["region"])


def region_kind(row: Mapping[str, Any]) -> str:
    """The record's region kind (reach, directional_placement, container_placement): the audit's "category"."""
    return str(_region(row)["kind"])


def ir_item_checks(row: Mapping[str, Any]) -> dict[str, bool]:
    """Each applicable rule of one IR record -> whether the record keeps it."""
    region = _region(row)
    meta = row.get("metadata") or {}
    meta = json.loads(meta) if isinstance(meta, str) else meta
    out: dict[str, bool] = {}
    if region["kind"] == "reach":
        targets = [_mask(m) for m in region["targets"]]
        others = [_mask(m) for m in region.get("distractors") or ()]
        out["one_target_region"] = len(targets) == 1 and not any((targets[0] & d).any() for d in others)
        out["target_visible"] = bool(targets) and int(targets[0].sum()) >= MIN_ANSWER_PIXELS
    else:
        camera = {"K": region["K"], "T_world_cam": region["T_world_cam"]}
        size = region["image_size"]
        if region["kind"] == "container_placement":
            out["goal_in_frame"] = _in_frame(_container_goal(region), camera, size)
        elif "goal_point" in meta:
            out["goal_in_frame"] = _in_frame(meta["goal_point"], camera, size)
    reference = meta.get("reference")
    if reference and reference in (meta.get("objects") or {}):
        out["reference_findable"] = findable(meta, reference)
    return out


def ir_audit(rows: Iterable[Mapping[str, Any]], config_of: Callable[[Mapping[str, Any]], str] | None = None,
             max_examples: int = 3) -> AuditReport:
    """Per (config, rule) and per (config, region kind, task, rule): the queries checked and broken."""
    applies: dict[tuple, int] = defaultdict(int)
    broken: dict[tuple, list[str]] = defaultdict(list)
    for row in rows:
        config = config_of(row) if config_of else "all"
        for rule, kept in ir_item_checks(row).items():
            for key in ((config, rule), (config, rule, region_kind(row), row["task"])):
                applies[key] += 1
                if not kept:
                    broken[key].append(str(row["id"]))
    results = [RuleResult(config, rule, applies[config, rule], len(broken[config, rule]),
                          tuple(broken[config, rule][:max_examples]))
               for config, rule in sorted((k for k in applies if len(k) == 2), key=lambda k: (k[0], IR_RULES.index(k[1])))]
    parts = tuple((config, kind, task, rule, applies[config, rule, kind, task], len(broken[config, rule, kind, task]))
                  for config, rule, kind, task in sorted((k for k in applies if len(k) == 4),
                                                         key=lambda k: (k[0], k[2], k[3], IR_RULES.index(k[1]))))
    return AuditReport(tuple(results), parts)


__all__ = ["IR_RULES", "ir_audit", "ir_item_checks"]
