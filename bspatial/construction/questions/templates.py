"""Task-grounded manipulation VQA templates: one four-option question per task instance.

Each template asks about the relation the task's instruction turns on, in the wording of Table S1,
with the answer computed by :mod:`bspatial.world.relations` from the frame's 3D states and
checked against the task's own geometric target wherever the two coincide (a disagreement is a bug
and raises :class:`ConstructionError`, never a silently wrong label):

=============  =====================  ============================================================
task category  (category, subtype)    question
=============  =====================  ============================================================
size           size / object_rel.     which {noun} {where} is the {relation}? (longest dimension)
distance       distance / object_rel. which object is the {closest to|farthest from} the {ref}?
ordinal        direction / ordinal    which tool is the {relation} on the countertop?
locate (grid)  direction / locate     where is the marked hardback book located on the bookcase?
locate (layer) direction / locate     Task: {instruction} which marked layer of the {container} is where ...?
direction      direction / locate     Task: {instruction} which marked spot is where the {object} should be placed?
=============  =====================  ============================================================

Distractors come from the candidate objects (object answers) or the relation's answer space (cells,
layers, directions). Candidates that share a category get numbered marks drawn on the frame and
options "plate 1".."plate 4" (numbers from the seeded generator, so they never encode the order).
Every option names something in the image: the three-candidate distance tasks get a fourth
visible object that loses by the distance margin (when the frame has none, the build adds one of the
candidates' category, :mod:`~bspatial.construction.questions.decoys`), and all four options are then numbered marks
("object 1".."object 4"); direction distractors are false by the direction margin
(:func:`bspatial.world.relations.false_directions`); the landmark a question names is visible. No option
is offered that a text-only guesser could rule out as never right (:mod:`bspatial.construction.quality.report`):
the placement tasks' options are numbered marks in seeded order, on four layers' fronts (:func:`_layer`) or on four
spots of the counter (the goal, its mirror on the other side, two on the reference's front-back line:
:func:`_spots`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bspatial.catalog.thresholds import DISTANCE_MARGIN, ORDINAL_GAP_M, SIZE_MARGIN
from bspatial.world import relations
from bspatial.world.relations import spoken
from bspatial.construction.items.frames import STRUCTURAL_CATEGORIES, FrameRecord, \
    Rejected
from bspatial.construction.items.marks import MARK_RADIUS_PX, Mark, anchor_point, mark_frame
from bspatial.scoring.choice import LETTERS
from bspatial.catalog.tasks import TASKS
from bspatial.tasks.base import TaskInstance
from bspatial.tasks.manipulation.common import DISPLAY_NAMES, split_variant

N_OPTIONS = len(LETTERS)

# Noun and location phrase of each reach task's candidates (Table S2 example instructions).
NOUNS: dict[str, tuple[str, str]] = {
    "reach_food_item": ("food item", "on the chopping board"),
    "reach_item": ("food item", "on the countertop"),
    "reach_plate": ("plate", "on the countertop"),
    "reach_toys": ("toy", "on the desk"),
    "reach_dice": ("dice", "on the bed"),
    "reach_paperback_book": ("paperback book", "on the desk"),
    "reach_pizza_plate": ("pizza plate", "on the breakfast table"),
    "reach_soda_can": ("can of soda", "on the floor"),
    "reach_storage_box": ("storage box", "on the floor"),
    "reach_tool": ("tool", "on the countertop"),
    "reach_hardback": ("hardback book", "in the bookcase"),
}
_DISPLAY = {"walls": "wall"}


class NoFourthObject(Rejected):
    """A three-candidate distance question found no fourth visible object that loses by the margin: the build
    adds one of the candidates' category to the question's frame (:mod:`~bspatial.construction.questions.decoys`)."""


class ConstructionError(AssertionError):
    """The calculator's answer contradicts the task's own geometric target: a bug, never skipped."""


@dataclass(frozen=True)
class Question:
    category: str
    subtype: str
    question: str
    options: tuple[str, ...]
    answer: str  # letter
    frame: str  # "initial" or "goal" (goal-state frame of a placement task)
    marks: tuple[Mark, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def answer_text(self) -> str:
        return self.options[LETTERS.index(self.answer)]


def display(category: str) -> str:
    return _DISPLAY.get(category, category.replace("_", " "))


def task_question(instance: TaskInstance, record: FrameRecord, view: FrameRecord | None,
                  rng: np.random.Generator) -> Question:
    """The task-grounded question of ``instance`` (``view``: its container view, container tasks only,
    :func:`~bspatial.construction.items.frames.container_view_scene`).

    Raises:
        Rejected: a filter fails; ConstructionError: the answer contradicts the task's target.
    """
    if instance.category == "size":
        return _size(instance, record, rng)
    if instance.category == "distance":
        return _distance(instance, record, rng)
    if instance.category == "ordinal":
        return _ordinal(instance, record, rng)
    if instance.category == "locate":
        return _layer(instance, _need(view), rng) if instance.container is not None else _grid(instance, record, rng)
    if instance.category == "direction":
        return _spots(instance, record, rng)
    raise ValueError(f"task {instance.task!r} has category {instance.category!r} with no manipulation template")


def four_options(category: str, subtype: str, question: str, answer_text: str, distractors, rng: np.random.Generator,
                 **kwargs) -> Question:
    """A four-option :class:`Question`: the answer plus three distractors drawn by ``rng``, order shuffled
    (general VQA reuses the task-grounded rule, so both suites place answers the same way)."""
    return _finish(category, subtype, question, answer_text, distractors, rng, **kwargs)


def _need(view: FrameRecord | None) -> FrameRecord:
    if view is None:
        raise ValueError("container templates need the container view")
    return view


# ----------------------------------------------------------------------------- helpers


def _check_visible(record: FrameRecord, names, answer: str | None) -> None:
    for n in names:
        state = record.objects[n]
        if not state.visible(answer=(n == answer)):
            raise Rejected(f"{n} covers {state.pixels} px (too few{' for the answer' if n == answer else ''})")


def _labels(instance: TaskInstance, record: FrameRecord, names, rng, numbers_from: int | None = None,
            noun: str | None = None, marked: bool = False) -> tuple[dict[str, str], tuple, tuple[str, ...]]:
    """Option text per object, the marks to draw (when categories repeat, or always with ``marked``), and the
    option texts of the numbers left unused.

    Marks are numbered with distinct numbers drawn from 1..``numbers_from`` (default: as many as names);
    ``noun`` (default: the task's candidate noun) names the marked options ("dice 2", "object 3").
    """
    categories = [record.objects[n].category for n in names]
    if len(set(categories)) == len(categories) and not marked:
        return {n: display(c) for n, c in zip(names, categories)}, (), ()
    noun = noun or NOUNS.get(instance.task, (display(categories[0]), ""))[0]
    numbers = rng.choice(numbers_from or len(names), len(names), replace=False) + 1
    labels = {n: f"{noun} {k}" for n, k in zip(names, numbers)}
    marks = mark_frame(record, [(str(k), n) for n, k in zip(names, numbers)])
    unused = tuple(f"{noun} {k}" for k in range(1, (numbers_from or len(names)) + 1) if k not in set(numbers))
    return labels, marks, unused


def _finish(category, subtype, question, answer_text, distractors, rng, *, frame="initial", marks=(),
            metadata=None) -> Question:
    distractors = list(dict.fromkeys(d for d in distractors if d != answer_text))
    if len(distractors) < N_OPTIONS - 1:
        raise Rejected(f"only {len(distractors)} distractors for {question!r}")
    chosen = [distractors[i] for i in sorted(rng.choice(len(distractors), N_OPTIONS - 1, replace=False))]
    options = [answer_text, *chosen]
    order = rng.permutation(N_OPTIONS)
    options = tuple(options[i] for i in order)
    letter = LETTERS[options.index(answer_text)]
    return Question(category, subtype, question, options, letter, frame, tuple(marks),
                    {"answer_text": answer_text, **(metadata or {})})


# ----------------------------------------------------------------------------- templates


def _size(instance, record, rng) -> Question:
    names = list(instance.candidates)
    sizes = {n: relations.longest_dimension(record.objects[n].extents) for n in names}
    answer, margin = relations.pick_by_rank(sizes, instance.variant)
    if margin < SIZE_MARGIN:
        raise Rejected(f"size margin {margin:.3f} < {SIZE_MARGIN}")
    _agree(instance, answer)
    _check_visible(record, names, answer)
    # Always numbered marks ("food item 2", "toy 4"): the mixed-category tasks (reach_item, reach_food_item,
    # reach_toys) named their options by category, and typical sizes alone (a box of cereal is the largest,
    # a lime the smallest) then answered 55-64% of them without the image.
    labels, marks, _ = _labels(instance, record, names, rng, marked=True)
    noun, where = NOUNS[instance.task]
    q = (f"Measuring from the length of the longest dimension (length, width, or height), which {noun} {where} "
         f"is the {spoken(instance.variant)}?")
    return _finish("size", "object_relative", q, labels[answer], [labels[n] for n in names if n != answer], rng,
                   marks=marks, metadata={"option_objects": {labels[n]: n for n in names}, "values": sizes, "margin": margin})


def reference_distance(record: FrameRecord, reference: str):
    """World point -> distance (m) to ``reference`` as distance questions measure it."""
    ref = record.objects[reference]
    if ref.category == "walls":  # planar reference: perpendicular distance to its face
        return lambda p: relations.box_distance(p, ref.center, ref.extents, ref.rotation)
    return lambda p: relations.center_distance(p, ref.center)


def _distance(instance, record, rng) -> Question:
    relation, ref_key = split_variant(instance.variant)
    measure = reference_distance(record, instance.reference)
    names = list(instance.candidates)
    dist = {n: measure(record.objects[n].center) for n in names}
    answer, margin = relations.pick_by_rank(dist, relation)
    if margin < DISTANCE_MARGIN:
        raise Rejected(f"distance margin {margin:.3f} < {DISTANCE_MARGIN}")
    _agree(instance, answer)
    _check_visible(record, names, answer)
    # The landmark the question names must be findable in the frame (measured: 8.1% of these items named
    # a bottom cabinet or chair under 300 px; then slivers at the frame's edge, chairs hidden by the table).
    record.require_findable([instance.reference])
    if len(names) < N_OPTIONS:
        # Three candidates: the fourth option is another object visible in the frame that loses by the
        # margin (Section 3.3: distractors "drawn from the corresponding objects"), and every option is a
        # numbered mark ("object 1".."object 4", numbers in seeded order), so neither its name nor an absent
        # number tells a text-only or a looking guesser which option cannot be right.
        names = names + [_fourth_object(instance, record, names, dist, relation, measure, rng)]
    labels, marks, _ = _labels(instance, record, names, rng, noun=None if len(set(
        record.objects[n].category for n in names)) == 1 else "object")
    preposition = "to" if relation == "closest" else "from"
    q = (f"Measuring from the center of each object, which object is the {relation} {preposition} the "
         f"{DISPLAY_NAMES.get(ref_key, ref_key)}?")
    options = {labels[n]: n for n in names}
    return _finish("distance", "object_relative", q, labels[answer], [t for t in options if t != labels[answer]], rng,
                   marks=marks, metadata={"option_objects": options, "values": dist, "margin": margin,
                                          "reference": instance.reference})


FOURTH_MARK_CLEARANCE_PX = 2.5 * MARK_RADIUS_PX
"""A fourth-option object's mark keeps this far from the candidates' marks (2.5 mark radii), so two marks
never overlap (a large support's mask centroid can sit under the objects on it)."""


def _fourth_object(instance, record, names, dist, relation, measure, rng) -> str:
    """A visible movable household object (not a candidate, the reference, a structural part, furniture fixed to
    the world or a surface a candidate stands on) that loses to the answer by the distance margin; drawn by
    ``rng``. Adds its distance to ``dist``. (Furniture was the fourth option of 16% of the paper build's
    task-manipulation items, its number mark floating over an empty patch of its top: issue 29.)

    Raises:
        Rejected: no such object in the frame (the build draws another instance).
    """
    best = dist[relations.pick_by_rank(dist, relation)[0]]
    taken = [anchor_point(record.mask(n)) for n in names]
    pool = []
    for n, s in sorted(record.objects.items()):
        if n in names or n == instance.reference or s.category in STRUCTURAL_CATEGORIES \
                or not s.visible() or not s.movable or _supports_one_of(s, record, names):
            continue
        d = measure(s.center)
        loses = d > best if relation == "closest" else d < best
        if not loses or relations.relative_gap(d, best) < DISTANCE_MARGIN:
            continue
        u, v = anchor_point(record.mask(n))
        if min(np.hypot(u - a, v - b) for a, b in taken) >= FOURTH_MARK_CLEARANCE_PX:
            pool.append((n, d))
    if not pool:
        raise NoFourthObject("no fourth visible object loses to the answer by the distance margin")
    name, d = pool[int(rng.integers(len(pool)))]
    dist[name] = d
    return name


def _supports_one_of(state, record, names) -> bool:
    """Whether one of ``names`` stands on ``state`` (a tray under a candidate, say)."""
    return any(relations.rests_on(c.center, c.extents, c.rotation, state.center, state.extents, state.rotation)
               for c in (record.objects[n] for n in names))


def _ordinal(instance, record, rng) -> Question:
    names = list(instance.candidates)
    axis = relations.robot_right_axis(float(record.base_pose[2]))
    proj = {n: float(np.dot(record.objects[n].center[:2], axis)) for n in names}
    answer, _ = relations.pick_by_rank({n: -p for n, p in proj.items()}, instance.variant)
    order = relations.order_left_to_right({n: record.objects[n].center for n in names}, axis)
    gap = min(b - a for a, b in zip(sorted(proj.values()), sorted(proj.values())[1:]))
    if gap < ORDINAL_GAP_M:
        raise Rejected(f"ordinal gap {gap:.3f} m < {ORDINAL_GAP_M}")
    _agree(instance, answer)
    _check_visible(record, names, answer)
    labels, marks, _ = _labels(instance, record, names, rng)
    noun, where = NOUNS[instance.task]
    q = f"Which {noun} is the {spoken(instance.variant)} {where}?"
    return _finish("direction", "ordinal", q, labels[answer], [labels[n] for n in names if n != answer], rng,
                   marks=marks, metadata={"option_objects": {labels[n]: n for n in names}, "left_to_right": order,
                                          "right_axis": axis.tolist()})


def _grid(instance, record, rng) -> Question:
    top_down = {k: tuple(v) for k, v in instance.measurements["cells"].items()}
    rows = sorted({(v[4], v[5]) for v in top_down.values()})  # bottom first
    edges = sorted({e for v in top_down.values() for e in (v[2], v[3])}, reverse=True)  # robot-left (+y) first
    x_range = next(iter(top_down.values()))[:2]
    cells = relations.grid_cells_bottom_up(rows, edges, x_range)
    target = instance.target
    answer = relations.locate_cell(record.objects[target].center, cells)
    if answer is None:
        raise Rejected(f"{target} centre lies in no cell")
    # The task and the prompts' locate rules both count rows from the bottom: the cells must agree.
    if answer != instance.variant:
        raise ConstructionError(f"{instance.task} seed {instance.seed}: calculator cell {answer} vs task {instance.variant}")
    _check_visible(record, [target], target)
    q = "Where is the hardback book marked 1 located on the bookcase?"
    return _finish("direction", "locate", q, answer, sorted(cells), rng, marks=mark_frame(record, [("1", target)]),
                   metadata={"object": target, "cells": {k: list(v) for k, v in cells.items()}})


def _layer(instance, view, rng) -> Question:
    """Which of four numbered marks, on the fronts of four of the container's layers, is where the object goes
    (container tasks), on the container view of the start scene (:func:`~bspatial.construction.items.frames.container_view_scene`).

    Asked in the goal state as "where is the bowl located in the bottom cabinet?" with "layer k" options, the
    answer is one of the layers the task instructs and the goal view shows (4 or 5 in the cabinet, 4-6 in the
    fridge): a text-only guesser picking among them scored 49-58% on place_bowl_in_cabinet (issue 29). Marks on
    the instructed layer and three others, numbered in seeded order, leave the text nothing; the viewer counts
    the layers from the bottom, as the instruction does."""
    floors = [float(t) for t in instance.measurements["layer_tops"]]   # each layer's floor, bottom first
    tops = [*floors, floors[-1] + (floors[-1] - floors[-2])]          # ... and the top layer's top (same pitch)
    n_layers = len(floors)
    layer = instance.container.instructed_compartment + 1
    others = [k for k in range(1, n_layers + 1) if k != layer]
    chosen = sorted([layer, *(others[i] for i in rng.choice(len(others), N_OPTIONS - 1, replace=False))])
    front = _front_middle(instance, view)
    points = {k: np.r_[front, (tops[k - 1] + tops[k]) / 2] for k in chosen}
    category = view.objects[instance.reference].category
    noun = display(view.objects[instance.manipulated].category)
    q = f"Task: {instance.instruction} Which marked layer of the {display(category)} is where the {noun} should go?"
    return _spot_question(view, {f"layer {k}": p for k, p in points.items()}, f"layer {layer}", "mark", q, rng,
                          frame="goal", metadata={"layer_bounds": tops, "instructed_layer": layer,
                                                  "reference": instance.reference})


def _front_middle(instance, view) -> np.ndarray:
    """World xy of the middle of the container footprint's edge nearest the robot, 2 cm inside."""
    fp = np.asarray(instance.container.footprint, float)
    robot = np.asarray(view.base_pose[:2], float)
    edges = [(fp[i], fp[(i + 1) % len(fp)]) for i in range(len(fp))]
    a, b = min(edges, key=lambda e: float(np.linalg.norm((e[0] + e[1]) / 2 - robot)))
    middle = (a + b) / 2
    inward = fp.mean(axis=0) - middle
    return middle + 0.02 * inward / max(float(np.linalg.norm(inward)), 1e-9)


def _spot_question(record, spots: dict[str, np.ndarray], answer: str, noun: str, question: str, rng, *,
                   frame: str = "initial", metadata: dict) -> Question:
    """A four-option question whose options are numbered marks on world points ``spots`` (named by their role;
    ``answer`` the right one), numbers in seeded order ("spot 1".."spot 4"): projected into ``record``'s frame,
    inside it and clear of each other, or Rejected."""
    names = list(spots)
    uv, z = record.frame.project(np.stack([spots[n] for n in names]))
    w, h = record.image_size
    r = MARK_RADIUS_PX + 2
    if (z <= 0).any() or (uv[:, 0] < r).any() or (uv[:, 0] >= w - r).any() or (uv[:, 1] < r).any() \
            or (uv[:, 1] >= h - r).any():
        raise Rejected("a marked spot projects outside the frame")
    if min(np.hypot(*(uv[i] - uv[j])) for i in range(len(names)) for j in range(i)) < SPOT_CLEARANCE_PX:
        raise Rejected("two marked spots would overlap")
    numbers = rng.permutation(len(names)) + 1
    label = {n: f"{noun} {k}" for n, k in zip(names, numbers)}
    marks = tuple(Mark(str(k), label[n], (int(round(p[0])), int(round(p[1]))), (int(round(p[0])), int(round(p[1]))))
                  for n, k, p in zip(names, numbers, uv))
    return _finish("direction", "locate", question, label[answer], [label[n] for n in names if n != answer], rng,
                   frame=frame, marks=marks,
                   metadata={"spots": {label[n]: [float(v) for v in spots[n]] for n in names}, **metadata})


SPOT_SIDE_OFFSET_M = 0.12
"""The distractor spots in front of and behind the reference: this far from its centre along the robot's forward
axis (on the counter, on or next to the reference; clearly neither left nor right of it)."""
SPOT_CLEARANCE_PX = 2 * MARK_RADIUS_PX + 4
"""Two spots' discs keep this far apart (centre to centre) in the frame."""


def goal_spots(instance: TaskInstance) -> dict[str, np.ndarray]:
    """The four candidate spots of a directional placement's goal question (world points on the countertop): the
    task's goal point (``goal``), its mirror across the reference (``mirror``, the other side), and the points
    :data:`SPOT_SIDE_OFFSET_M` in front of and behind the reference's centre (``front``, ``back``)."""
    geo = instance.countertop
    goal = np.asarray(instance.placement.goal_point, float)
    right = np.asarray(geo.right_axis, float)
    forward = np.array([-right[1], right[0]])          # robot-right turned a quarter left: away from the robot
    center = np.asarray(geo.reference_center, float)
    lateral = float(np.dot(goal[:2] - center, right))
    z = float(geo.plane_height) + 0.002
    spots = {"goal": goal, "mirror": np.r_[goal[:2] - 2 * lateral * right, goal[2]]}
    for name, sign in (("back", 1.0), ("front", -1.0)):
        spots[name] = np.r_[center + sign * SPOT_SIDE_OFFSET_M * forward, z]
    return spots


def _spots(instance, record, rng) -> Question:
    """Which of four numbered spots on the counter is where the object goes (directional placement tasks).

    The goal state asked relative to the task's reference ("where is the knife relative to the cutting board?")
    has the instructed side as its answer, left or right, always: a text-only guesser picking between the two
    horizontal options scored 50% on each placement task of the paper build (issue 29), and other objects on a
    counter lie beside the goal too. Four numbered spots (the goal, its mirror on the other side, and two on the
    reference's front-back line) in seeded order leave the text nothing: the image decides which one is left of
    the reference."""
    moved = record.objects[instance.manipulated]
    _check_visible(record, [moved.name], None)
    record.require_findable([instance.reference])
    geo = instance.countertop
    q = f"Task: {instance.instruction} Which marked spot is where the {display(moved.category)} should be placed?"
    return _spot_question(record, goal_spots(instance), "goal", "spot", q, rng,
                          metadata={"reference": instance.reference,
                                    "reference_center": [float(v) for v in geo.reference_center],
                                    "right_axis": [float(v) for v in geo.right_axis], "side": geo.instructed_side})


def _agree(instance, answer: str) -> None:
    if answer != instance.target:
        raise ConstructionError(f"{instance.task} {instance.variant!r} seed {instance.seed}: calculator picks "
                                f"{answer}, the task's target is {instance.target}")
