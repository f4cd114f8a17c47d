"""The answerability audit of the data-quality report: do the items obey the validity rules?

Computed from the records' own metadata with **its own geometry** (a few lines of numpy below, never
:mod:`bspatial.world.relations`, the calculator the generator uses), so an error in one is caught by the
other. Per dataset config and rule it counts the items the rule applies to and the items that break it; the
build fails when any rule is broken by more than :data:`MAX_BREAK_SHARE_PCT` of its items (:class:`AuditFailure`).

Rules (the dataset card states them):

``options_real``
    Every option names something in the frame(s): an object option maps to an object whose segmentation
    covers at least the visibility threshold (the answer the stricter one), a numbered option to a mark
    drawn on the frame, a room option to a room whose floor covers :data:`MIN_ROOM_PIXELS` over the frames.
``named_visible``
    Every entity the question names (the direction subject and reference, the distance reference or
    landmark, the rooms) is visible by the same thresholds, and findable: at least
    :data:`FINDABLE_IN_FRAME_SHARE` of its 3D box in the frame and pixels at least
    :data:`FINDABLE_VISIBLE_SHARE` of its projected box's in-frame area (the audit's upright box, turned by the
    record's ``yaw``, sampled on a 9 x 9 x 9 grid; a little below the generator's 50% and 20%, so that only a
    clear sliver or a hidden landmark breaks it, not the two estimates' difference). Walls, and records
    without ``yaw`` (builds before the rule): the pixel threshold only.
``one_true``
    Exactly one option is true (goal-spot items, :func:`_spot_checks`: the answer spot on the instructed side of
    the reference, the others not), every distractor false by a margin along its own axis: distance 15% and
    size 10% relative (Appendix 11); direction, the distractor's own-axis offset at most
    :data:`~bspatial.catalog.thresholds.DIRECTION_DISTRACTOR_RATIO` of the answer's; room quadrants 15
    degrees off the axes.
``fourth_option_movable``
    Task-grounded items with an option beyond the task's candidates (the fourth object of a three-candidate
    distance question): that object is a movable household object (the metadata's ``movable``: not furniture
    fixed to the world), not the reference, and no candidate stands on it (its bottom within 3 cm of the
    object's top, its centre within the object's footprint radius). Records without ``movable`` (builds before
    this rule) are not checked.
``marks_on_objects``
    Items with numbered marks: every mark's anchor (the disc's centre, or the end of its leader line) lies inside
    its object's visible 2D box (a goal spot's mark: on the spot's projection, within a pixel), and the marks hide at most :data:`MAX_MARK_HIDDEN_SHARE` of the object's pixels
    (the share measured on the drawn marks when the item was made,
    :mod:`~bspatial.construction.items.marks`). Records whose marks carry no anchor (builds before the rule)
    are not checked.
``same_category``
    General size items compare objects of one category (Appendix 11.1). Task-grounded size items keep the
    task's Table S2 candidates ("food item", "toy" are mixed by definition; for the food items the
    typical-size leak is ``current_view_scene``
    Task-grounded navigation items: the current view (the last frame) shows the scene: walls cover at most
    :data:`MAX_LAST_FRAME_WALL_SHARE` of it and furniture or objects at least
    :data:`MIN_VIEW_CONTENT_SHARE` (shares measured on the
    view's segmentation when it was rendered, recorded in the metadata). Records without them (builds before the
    rule) are not checked.
``mixed_category_prior`` below).
``last_frame_scene``
    Multi-frame items: walls cover at most :data:`MAX_LAST_FRAME_WALL_SHARE` of the last frame.
``mixed_category_prior``
    Size items of the mixed-category tasks (:data:`MIXED_CATEGORY_TASKS`): an item "breaks" it when ranking
    its options' categories (from the metadata's objects) by typical size
    (:data:`bspatial.construction.quality.priors.TYPICAL_LENGTH_M`) picks the answer, i.e. a viewer who recognises
    the categories answers without comparing sizes. A share, not a defect per item: its line fails above
    chance plus :data:`PRIOR_MARGIN_PCT` points, and only on :data:`PRIOR_MIN_ITEMS` items or more.

Example:
    >>> row = {"id": "x", "setting": "single_frame", "category": "size", "subtype": "object_relative",
    ...        "question": "Which object is the longest?", "options": ["mug 1", "mug 2", "mug 3", "mug 4"],
    ...        "answer": "A", "metadata": json.dumps({"option_objects": {f"mug {k}": f"m{k}" for k in range(1, 5)},
    ...        "marks": [[str(k), [0, 0]] for k in range(1, 5)],
    ...        "objects": {f"m{k}": {"category": "mug", "center": [0, 0, 0], "extents": [0.2 / k, 0.05, 0.05],
    ...                              "pixels": 900} for k in range(1, 5)}})}
    >>> audit([row]).ok
    True
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from bspatial.catalog.thresholds import DIRECTION_DISTRACTOR_RATIO, DISTANCE_MARGIN, SIZE_MARGIN
from bspatial.construction.items.frames import MAX_LAST_FRAME_WALL_SHARE, MIN_ANSWER_PIXELS, MIN_ROOM_PIXELS, \
    MIN_VIEW_CONTENT_SHARE, MIN_VISIBLE_PIXELS
from bspatial.construction.quality import priors
from bspatial.scoring.geometry import project_points
from bspatial.construction.quality.report import QualityFailure
from bspatial.world import relations

MAX_BREAK_SHARE_PCT = 1.0
"""The build fails if any rule is broken by more than 1% of a config's items."""
RULES = ("options_real", "named_visible", "one_true", "fourth_option_movable", "marks_on_objects", "same_category",
         "last_frame_scene", "current_view_scene", "mixed_category_prior")
FINDABLE_IN_FRAME_SHARE = 0.45
"""A named entity has at least this share of its box in the frame (generator: 0.5)."""
FINDABLE_VISIBLE_SHARE = 0.18
"""... and shows at least this share of its projected box's in-frame area in pixels (generator: 0.2)."""
MAX_MARK_HIDDEN_SHARE = 0.25
"""The marks may hide at most a quarter of a marked object's pixels (issue 29; the generator's own constant is
:data:`bspatial.construction.items.marks.MAX_HIDDEN_SHARE`, not read here: the audit states the rule itself)."""
MIXED_CATEGORY_TASKS = ("reach_food_item", "reach_item")
"""Table S2 size tasks whose candidates are "food items" of mixed categories, drawn so that the categories'
typical sizes do not predict the answer. (reach_toys mixes toy categories too; not yet balanced.)"""
PRIOR_MARGIN_PCT = 10.0
"""mixed_category_prior fails when the prior picks the answer of more than chance (one in four options) plus
this many points of a line's items: the blind-baseline gate's 10-point band."""
PRIOR_MIN_ITEMS = 50
"""Fewer items cannot tell a leak from luck (the data-quality gate's GATE_MIN_ITEMS): the line is reported only."""
LETTERS = "ABCD"
_RANK = re.compile(r"\b(?:(second|third) )?(largest|smallest|longest|closest|farthest)\b")


def _limit(result: "RuleResult") -> str:
    """The limit, in a failure message, of a rule whose limit is not the 1% of the defect rules."""
    return "" if result.limit_pct == MAX_BREAK_SHARE_PCT else f", limit {result.limit_pct:g}%"


class AuditFailure(QualityFailure):
    """A validity rule is broken by more than :data:`MAX_BREAK_SHARE_PCT` of a config's items."""


@dataclass(frozen=True)
class RuleResult:
    config: str
    rule: str
    applies: int
    breaks: int
    examples: tuple[str, ...]
    limit_pct: float = MAX_BREAK_SHARE_PCT
    min_items: int = 0

    @property
    def share_pct(self) -> float:
        return 100.0 * self.breaks / self.applies if self.applies else 0.0

    @property
    def ok(self) -> bool:
        return self.applies < self.min_items or self.share_pct <= self.limit_pct


@dataclass(frozen=True)
class AuditReport:
    results: tuple[RuleResult, ...]
    parts: tuple[tuple[str, str, str, str, int, int], ...] = ()
    """(config, category, task or subtype, rule, checked, broken): where within a config a rule breaks. Reported
    beside the per-config lines; the gate is per config and rule."""

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def to_markdown(self) -> str:
        lines = ["| config | rule | items checked | broken | broken % | check |", "|---|---|---|---|---|---|"]
        lines += [f"| {r.config} | {r.rule} | {r.applies} | {r.breaks} | {r.share_pct:.1f} | "
                  f"{'pass' if r.ok else 'FAIL'} |" for r in self.results]
        return "\n".join(lines)

    def parts_markdown(self) -> str:
        lines = ["| config | category | task or subtype | rule | items checked | broken | broken % |",
                 "|---|---|---|---|---|---|---|"]
        lines += [f"| {c} | {cat} | {part} | {rule} | {n} | {b} | {100.0 * b / n if n else 0.0:.1f} |"
                  for c, cat, part, rule, n, b in self.parts]
        return "\n".join(lines)

    def failures(self) -> str:
        return "; ".join(f"{r.config} / {r.rule}: {r.breaks} of {r.applies} ({r.share_pct:.1f}%{_limit(r)}), e.g. "
                         f"{', '.join(r.examples)}" for r in self.results if not r.ok)


# ----------------------------------------------------------------------------- the audit's own geometry


def _offsets(a, b, T_world_cam) -> dict[str, float]:
    """Signed offsets of ``a`` from ``b`` per direction word (Appendix 15: left/right along the image's
    columns, front = deeper along the optical axis, above/below by world height)."""
    R = np.asarray(T_world_cam, float)[:3, :3]
    d = np.asarray(a, float) - np.asarray(b, float)
    right = float(d @ R[:, 0])                                 # the camera's x axis in the world
    front = float(d @ R[:, 2])                                 # the optical axis in the world
    return {"right": right, "left": -right, "front": front, "back": -front, "above": float(d[2]), "below": -float(d[2])}


def project(points, camera) -> tuple[np.ndarray, np.ndarray]:
    """World points -> (pixel (u, v), depth) for the record's camera (its ``K`` and ``T_world_cam``)."""
    return project_points(points, camera["K"], camera["T_world_cam"])


_GRID9 = np.stack(np.meshgrid(*[np.linspace(-0.5, 0.5, 9)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)


def findable(meta: Mapping, name: str) -> bool:
    """``name`` is visible by the pixel threshold and, with a ``yaw`` recorded, findable (the rule's text above)."""
    from shapely.geometry import MultiPoint, box

    state = (meta.get("objects") or {}).get(name)
    if state is None or int(state.get("pixels", 0)) < MIN_VISIBLE_PIXELS:
        return False
    if state["category"] in ("walls", "floor", "robot") or "yaw" not in state or "camera" not in meta:
        return True
    c, s = np.cos(state["yaw"]), np.sin(state["yaw"])
    turn = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    points = np.asarray(state["center"], float) + (_GRID9 * np.asarray(state["extents"], float)) @ turn.T
    uv, z = project(points, meta["camera"])
    K = np.asarray(meta["camera"]["K"], float)
    w, h = 2 * K[0, 2], 2 * K[1, 2]
    front = z > 1e-3
    inside = front & (uv[:, 0] >= 0) & (uv[:, 0] < w) & (uv[:, 1] >= 0) & (uv[:, 1] < h)
    area = MultiPoint([tuple(p) for p in uv[front]]).convex_hull.intersection(box(0, 0, w, h)).area \
        if front.sum() >= 3 else 0.0
    return bool(inside.mean() >= FINDABLE_IN_FRAME_SHARE
                and state["pixels"] >= max(MIN_VISIBLE_PIXELS, FINDABLE_VISIBLE_SHARE * area))


def _aabb_distance(point, center, extents) -> float:
    gap = np.maximum(np.abs(np.asarray(point, float) - np.asarray(center, float)) - np.asarray(extents, float) / 2, 0)
    return float(np.sqrt((gap ** 2).sum()))


def _gap(a: float, b: float) -> float:
    big = max(abs(a), abs(b))
    return abs(a - b) / big if big else 0.0


def _ranked_ok(values: Mapping[str, float], answer: str, relation: str, margin: float) -> bool:
    """``answer`` holds the rank ``relation`` names and differs from every other option by ``margin``."""
    matches = list(_RANK.finditer(relation))   # the last: size questions first say "the longest dimension"
    match = matches[-1] if matches else None
    if match is None or answer not in values:
        return False
    k = {"second": 1, "third": 2}.get(match.group(1) or "", 0)
    descending = match.group(2) in ("largest", "longest", "farthest")
    order = sorted(values, key=lambda n: -values[n] if descending else values[n])
    return k < len(order) and order[k] == answer and all(
        _gap(values[n], values[answer]) >= margin for n in values if n != answer)


# ----------------------------------------------------------------------------- per-item checks


def _pixels(meta: Mapping, name: str) -> int:
    return int((meta.get("objects") or {}).get(name, {}).get("pixels", 0))


def _object_option_checks(row: Mapping, meta: Mapping, answer: str) -> dict[str, bool]:
    options = meta["option_objects"]
    marks = {str(m[0]) for m in meta.get("marks") or []}
    real = set(row["options"]) <= set(options)
    for text in row["options"]:
        name = options.get(text)
        threshold = MIN_ANSWER_PIXELS if text == answer else MIN_VISIBLE_PIXELS
        numbered = re.fullmatch(r".* (\d+)", text)
        if name is None or _pixels(meta, name) < threshold or (numbered and numbered.group(1) not in marks):
            real = False
    return {"options_real": real}


def _distance_true(row: Mapping, meta: Mapping, answer: str) -> bool:
    objects = meta["objects"]
    reference = meta.get("reference")
    point = meta.get("point")
    if point is None and reference in objects:      # task-grounded: the named landmark
        ref = objects[reference]
        if ref["category"] == "walls":              # a wall: perpendicular distance to its slab
            measure = lambda c: _aabb_distance(c, ref["center"], ref["extents"])  # noqa: E731
        else:
            measure = lambda c: float(np.linalg.norm(np.subtract(c, ref["center"])))  # noqa: E731
    elif point is not None:
        measure = lambda c: float(np.linalg.norm(np.subtract(c, point)))  # noqa: E731
    else:
        return False
    values = {t: measure(objects[n]["center"]) for t, n in meta["option_objects"].items()
              if n in objects and t in row["options"]}
    return len(values) == len(row["options"]) and _ranked_ok(values, answer, row["question"], DISTANCE_MARGIN)


def _size_true(row: Mapping, meta: Mapping, answer: str) -> bool:
    objects = meta["objects"]
    values = {t: float(max(objects[n]["extents"])) for t, n in meta["option_objects"].items()
              if n in objects and t in row["options"]}
    if len(values) != len(row["options"]):
        return False
    if len(meta.get("candidates") or ()) > len(values):
        # A task's rank ("the third largest toy on the desk") is among all its candidates, of which the options
        # are four: rank among the candidates, and every option must differ from the answer by the margin.
        named = {n: t for t, n in meta["option_objects"].items()}
        everyone = {named.get(n, n): float(max(objects[n]["extents"])) for n in meta["candidates"] if n in objects}
        return len(everyone) == len(meta["candidates"]) and _ranked_ok(everyone, answer, row["question"], 0.0) \
            and all(_gap(v, values[answer]) >= SIZE_MARGIN for t, v in values.items() if t != answer)
    return _ranked_ok(values, answer, row["question"], SIZE_MARGIN)


def _direction_checks(row: Mapping, meta: Mapping, answer: str) -> dict[str, bool]:
    objects = meta.get("objects") or {}
    subject = meta.get("object")
    if meta.get("arm"):
        ref_point, ref_ok = meta["eef_pos"][meta["arm"]], True
    else:
        ref = meta.get("reference")
        ref_point, ref_ok = (objects[ref]["center"], _pixels(meta, ref) >= MIN_VISIBLE_PIXELS) if ref in objects \
            else (None, False)
    named = subject in objects and findable(meta, subject) and ref_ok and (meta.get("arm") or findable(meta, ref))
    if not named or ref_point is None:
        return {"named_visible": False, "one_true": False}
    offsets = _offsets(objects[subject]["center"], ref_point, meta["camera"]["T_world_cam"])
    true = offsets[answer] > 0 and all(offsets[o] <= DIRECTION_DISTRACTOR_RATIO * offsets[answer]
                                       for o in row["options"] if o != answer)
    return {"named_visible": True, "one_true": true}


SPOT_MIN_OFFSET_M = 0.05
"""A goal spot is on a side of the reference when it lies at least this far along the robot-right axis."""


def _spot_checks(row: Mapping, meta: Mapping, answer: str) -> dict[str, bool]:
    """Marked-spot items (direction / locate of the placement tasks): every option a drawn mark; a container's answer
    mark alone inside the instructed layer; a directional placement's answer spot on the instructed side of the
    reference by
    :data:`SPOT_MIN_OFFSET_M`, every other spot not on it (its offset that way at most the distractor ratio of the
    answer's); the reference findable."""
    spots, marks = meta["spots"], {str(m[3]) for m in meta.get("marks") or [] if len(m) >= 4}
    real = set(row["options"]) <= set(spots) and set(row["options"]) <= marks
    if "layer_bounds" in meta:   # container: the answer mark alone inside the instructed layer (floor to next floor)
        low, high = meta["layer_bounds"][meta["instructed_layer"] - 1], meta["layer_bounds"][meta["instructed_layer"]]
        inside = {t: low < spots[t][2] < high for t in row["options"] if t in spots}
        return {"options_real": real,
                "one_true": real and inside.get(answer, False) and sum(inside.values()) == 1}
    right = np.asarray(meta["right_axis"], float)
    sign = 1.0 if meta["side"] == "right" else -1.0
    toward = {t: sign * float(np.dot(np.asarray(p[:2], float) - np.asarray(meta["reference_center"], float), right))
              for t, p in spots.items()}
    true = real and toward[answer] >= SPOT_MIN_OFFSET_M and all(
        toward[t] <= DIRECTION_DISTRACTOR_RATIO * toward[answer] for t in row["options"] if t != answer)
    return {"options_real": real, "named_visible": findable(meta, meta["reference"]), "one_true": true}


def _room_checks(row: Mapping, meta: Mapping, answer: str) -> dict[str, bool]:
    pixels = meta.get("room_pixels") or {}
    out = {"last_frame_scene": meta.get("last_frame_wall_share", 1.0) <= MAX_LAST_FRAME_WALL_SHARE}
    if row["category"] == "direction":
        a, b = meta["object"], meta["reference"]
        out["named_visible"] = pixels.get(a, 0) >= MIN_ROOM_PIXELS and pixels.get(b, 0) >= MIN_ROOM_PIXELS
        offset = np.subtract(meta["room_centers"][a], meta["room_centers"][b])
        out["one_true"] = relations.clear_quadrant(offset, meta["last_yaw"]) == answer
        return out
    rooms = meta["option_rooms"]
    out["options_real"] = set(row["options"]) <= set(rooms) and all(
        pixels.get(rooms[t], 0) >= MIN_ROOM_PIXELS for t in row["options"])
    if not out["options_real"]:
        out["one_true"] = False
        return out
    if row["category"] == "distance":
        robot = meta["robot_xy"]
        values = {t: float(np.hypot(*np.subtract(meta["room_centers"][rooms[t]], robot))) for t in row["options"]}
        out["one_true"] = _ranked_ok(values, answer, "closest", DISTANCE_MARGIN)
    elif "room_bounds" in meta:
        bounds = meta["room_bounds"]
        values = {t: (bounds[rooms[t]][1] - bounds[rooms[t]][0]) * (bounds[rooms[t]][3] - bounds[rooms[t]][2])
                  for t in row["options"]}
        out["one_true"] = _ranked_ok(values, answer, "largest", SIZE_MARGIN)
    return out


def prior_picks(categories: Sequence[str], answer: int, relation: str) -> bool | None:
    """Whether ranking ``categories`` (one per option, e.g. "box_of_oatmeal") by typical size puts option
    ``answer`` at the rank ``relation`` names ("the second smallest ..."); ties go by option order, which
    the question draws at random. None when a category has no typical size or two options share one."""
    rank = priors.ranks([c.replace("_", " ") for c in categories], priors.TYPICAL_LENGTH_M, descending=True)
    matches = list(_RANK.finditer(relation))
    if rank is None or not matches:
        return None
    k = {"second": 1, "third": 2}.get(matches[-1].group(1) or "", 0)
    wanted = k if matches[-1].group(2) in ("largest", "longest") else len(categories) - 1 - k
    return rank[answer] == wanted


SUPPORT_GAP_M = 0.03
"""The audit's own resting test: a candidate's bottom within this of the object's top (upright boxes)."""


def _stands_on(upper: Mapping, lower: Mapping) -> bool:
    (ux, uy, uz), (lx, ly, lz) = upper["center"], lower["center"]
    bottom, top = uz - upper["extents"][2] / 2.0, lz + lower["extents"][2] / 2.0
    footprint_radius = float(np.hypot(lower["extents"][0], lower["extents"][1])) / 2.0   # any yaw
    return abs(bottom - top) <= SUPPORT_GAP_M and float(np.hypot(ux - lx, uy - ly)) <= footprint_radius


def _fourth_option_check(meta: Mapping) -> dict[str, bool]:
    objects, candidates = meta.get("objects") or {}, set(meta["candidates"])
    extra = [n for n in meta["option_objects"].values() if n not in candidates]
    states = [objects.get(n) for n in extra]
    if not extra or any(state is not None and "movable" not in state for state in states):
        return {}   # no option beyond the candidates, or a record from before the rule
    ok = all(state is not None and state["movable"] and n != meta.get("reference")
             and not any(c in objects and _stands_on(objects[c], state) for c in candidates)
             for n, state in zip(extra, states))
    return {"fourth_option_movable": ok}


def _marks_check(meta: Mapping) -> dict[str, bool]:
    marks, objects = meta.get("marks") or [], meta.get("objects") or {}
    if not marks or any(len(m) < 5 for m in marks):
        return {}   # no marks, or a record from before the rule

    spots = meta.get("spots") or {}

    def on_object(mark) -> bool:
        _, _, (u, v), name, hidden = mark
        if name in spots:   # a spot on the counter (goal-spot items): the mark sits on the spot's projection
            uv, z = project(np.asarray(spots[name], float)[None], meta["camera"])
            return bool(z[0] > 0 and abs(uv[0, 0] - u) <= 1.0 and abs(uv[0, 1] - v) <= 1.0)
        box = (objects.get(name) or {}).get("box2d")
        return box is not None and box[0] <= u < box[2] and box[1] <= v < box[3] \
            and hidden is not None and hidden <= MAX_MARK_HIDDEN_SHARE

    return {"marks_on_objects": all(on_object(m) for m in marks)}


def _prior_check(row: Mapping, meta: Mapping, answer: str) -> dict[str, bool]:
    objects, names = meta.get("objects") or {}, meta["option_objects"]
    categories = [(objects.get(names.get(t)) or {}).get("category", "") for t in row["options"]]
    picked = prior_picks(categories, row["options"].index(answer), row["question"])
    return {} if picked is None else {"mixed_category_prior": not picked}


def item_checks(row: Mapping[str, Any]) -> dict[str, bool]:
    """Each applicable rule of one VQA record -> whether the record keeps it."""
    meta = json.loads(row["metadata"]) if isinstance(row["metadata"], str) else dict(row["metadata"])
    answer = row["options"][LETTERS.index(row["answer"])]
    setting, category = row["setting"], row["category"]
    if setting.startswith("multi_frame"):
        return _room_checks(row, meta, answer)
    if setting == "task_navigation":
        if "current_view_wall_share" not in meta:
            return {}
        return {"current_view_scene": meta["current_view_wall_share"] <= MAX_LAST_FRAME_WALL_SHARE
                and meta["current_view_content_share"] >= MIN_VIEW_CONTENT_SHARE}
    if setting not in ("single_frame", "task_manipulation"):
        return {}
    out: dict[str, bool] = _marks_check(meta)
    if "option_objects" in meta:
        out.update(_object_option_checks(row, meta, answer))
        if category == "distance":
            reference = meta.get("reference")
            if reference not in (None, "camera", "left_arm", "right_arm"):
                out["named_visible"] = findable(meta, reference)
            out["one_true"] = out["options_real"] and _distance_true(row, meta, answer)
            if meta.get("candidates"):
                out.update(_fourth_option_check(meta))
        elif category == "size":
            out["one_true"] = out["options_real"] and _size_true(row, meta, answer)
            if setting == "single_frame":   # tasks keep their Table S2 candidate sets (toys, food items)
                names = [meta["option_objects"].get(t) for t in row["options"]]
                out["same_category"] = len({(meta["objects"].get(n) or {}).get("category") for n in names}) == 1
            elif row.get("task") in MIXED_CATEGORY_TASKS:
                out.update(_prior_check(row, meta, answer))
    elif "spots" in meta:
        out.update(_spot_checks(row, meta, answer))
    elif category == "direction" and row["subtype"] in ("object_relative", "robot_arm_relative"):
        out.update(_direction_checks(row, meta, answer))
    return out


def audit(rows: Iterable[Mapping[str, Any]], config_of: Callable[[Mapping[str, Any]], str] | None = None,
          max_examples: int = 3) -> AuditReport:
    """Per (config, rule): the items checked and broken (``config_of`` as in the quality report)."""
    applies: dict[tuple[str, str], int] = defaultdict(int)
    broken: dict[tuple[str, str], list[str]] = defaultdict(list)
    part_applies: dict[tuple[str, str, str, str], int] = defaultdict(int)
    part_broken: dict[tuple[str, str, str, str], int] = defaultdict(int)
    for row in rows:
        config = config_of(row) if config_of else "all"
        part = (config, row["category"], row.get("task") or row.get("subtype") or "")
        for rule, kept in item_checks(row).items():
            applies[config, rule] += 1
            part_applies[(*part, rule)] += 1
            if not kept:
                broken[config, rule].append(str(row["id"]))
                part_broken[(*part, rule)] += 1
    limits = {"mixed_category_prior": {"limit_pct": 100.0 / len(LETTERS) + PRIOR_MARGIN_PCT, "min_items": PRIOR_MIN_ITEMS}}
    results = [RuleResult(config, rule, applies[config, rule], len(broken[config, rule]),
                          tuple(broken[config, rule][:max_examples]), **limits.get(rule, {}))
               for config, rule in sorted(applies, key=lambda k: (k[0], RULES.index(k[1])))]
    parts = tuple((*key, n, part_broken[key]) for key, n in sorted(part_applies.items(),
                                                                    key=lambda kv: (*kv[0][:3], RULES.index(kv[0][3]))))
    return AuditReport(tuple(results), parts)


def check(report: AuditReport) -> None:
    """Raise :class:`AuditFailure` naming every rule broken by more than :data:`MAX_BREAK_SHARE_PCT`."""
    if not report.ok:
        raise AuditFailure(f"answerability audit: rules broken by more than {MAX_BREAK_SHARE_PCT}% of items: "
                           f"{report.failures()}")


__all__: Sequence[str] = ("AuditFailure", "AuditReport", "RuleResult", "audit", "check", "findable", "item_checks",
                          "prior_picks", "project")
