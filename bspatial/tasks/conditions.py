"""Spa-Bench evaluation conditions on our tasks: direct and paraphrased instructions, no-intervention scenes.

Spa-Bench (Sec. III.D) probes *why* a policy fails a spatial instruction with matched-scene
conditions; this module turns a sampled :class:`~bspatial.tasks.base.TaskInstance` into its
counterpart under each condition, keeping the scene (and so the target) unless the condition says
otherwise:

* ``spatial``: the instance as sampled (the reference condition);
* ``direct``: the instruction names the target instead of describing it spatially ("Reach the
  apple."), so spatial inference is removed while the scene and the motion stay. Defined only when the
  target's category is unique among the candidates (food items, toys, tools); identical-looking
  candidates (plates, dice, cans, books) cannot be named without a relation, and placement goals are
  relations by nature, so those raise :class:`NotApplicable`;
* ``paraphrase`` / ``direct_paraphrase``: the same meaning in other words (rule-based rewrites of
  :data:`PARAPHRASES`, checked to change the text);
* ``cross_task``: reach tasks only: the candidates are replaced by objects of another task, scaled and placed
  so the concept still picks the same target (:mod:`bspatial.tasks.cross_task`, which also says why no
  placement task admits it);
* ``task_name``: the instruction replaced by the task's bare name ("reach plate",
  :func:`bspatial.catalog.tasks.bare_task_name`): how a language-blanked policy (trained on the bare names) is
  evaluated, and how any policy is asked without the words that pick its target;
* ``no_intervention``: placement tasks only: the manipulated object already rests at the goal, so
  the right behaviour is to leave it (Spa-Bench: "withholding arm and gripper motion when a goal
  already holds"); scored by :func:`bspatial.scoring.failure_modes.no_intervention_success`.

ID vs OOD is a split rather than a condition: :data:`WITHHELD_CELLS` names, per task, the variants
whose concept-argument pairing is withheld from training.

Example:
    >>> paraphrase("Reach the largest plate from the countertop.")
    'Touch the biggest plate from the counter.'
    >>> paraphrase("Place the bowl in the layer 1 of the bottom cabinet.")
    'Put the bowl in the layer 1 of the bottom cabinet.'
"""

from __future__ import annotations

import dataclasses
import re

from bspatial.tasks.base import NotApplicable, TaskInstance
from bspatial.tasks.cross_task import cross_task_instance

CONDITIONS: tuple[str, ...] = ("spatial", "direct", "paraphrase", "direct_paraphrase", "cross_task", "no_intervention",
                               "task_name")
"""Spa-Bench's conditions as they map onto our tasks (ID / OOD cells are a split, not a condition)."""

PARAPHRASES: tuple[tuple[str, str], ...] = (
    # Applied in order, whole words only; each keeps the relation and its argument.
    (r"^Reach the ", "Touch the "),
    (r"^Place the ", "Put the "),
    (r"\bsecond largest\b", "second biggest"),
    (r"\bthird largest\b", "third biggest"),
    (r"\blargest\b", "biggest"),
    (r"\bsecond smallest\b", "second tiniest"),
    (r"\bsmallest\b", "tiniest"),
    (r"\bclosest to\b", "nearest to"),
    (r"\bfarthest from\b", "furthest from"),
    (r"\bon the second leftmost of\b", "second from the left on"),
    (r"\bon the second rightmost of\b", "second from the right on"),
    (r"\bon the leftmost of\b", "furthest to the left on"),
    (r"\bon the rightmost of\b", "furthest to the right on"),
    (r"\bto the left of\b", "on the left side of"),
    (r"\bto the right of\b", "on the right side of"),
    (r"\bcountertop\b", "counter"),
)


WITHHELD_CELLS: dict[str, tuple[str, ...]] = {
    # Spa-Bench's ID / OOD protocol (Sec. III.C): a withheld cell pairs a concept with an argument
    # that each appear in training, only never together. Our variants are such pairs where they
    # compose: "<ordinal> <extreme>" (2nd + smallest), "<relation>/<reference>" (farthest + wall),
    # "<row>x<column>" (3 + 2), "<side>/<reference>". Demonstrations for an ID / OOD study skip these
    # variants; OOD episodes use only them, ID episodes only the others.
    "reach_food_item": ("2nd smallest",),
    "reach_item": ("2nd smallest",),
    "reach_plate": ("2nd smallest",),
    "reach_toys": ("2nd smallest",),
    "reach_dice": ("farthest/wall",),
    "reach_paperback_book": ("farthest/pencil case",),
    "reach_pizza_plate": ("farthest/white chair",),
    "reach_soda_can": ("farthest/bottom cabinet",),
    "reach_storage_box": ("farthest/bottom cabinet",),
    "reach_tool": ("2nd rightmost",),
    "reach_hardback": ("3x2",),
    "place_carving_knife": ("right/frying pan",),
    "place_saucer": ("right/coffee bottle",),
    # Layer numbers do not decompose into a concept and an argument: no withheld cell, no OOD study.
    "place_tupperware_in_fridge": (),
    "place_bowl_in_cabinet": (),
}


def withheld_variants(task: str) -> tuple[str, ...]:
    """The OOD cells of ``task`` (empty when its variants do not decompose); unknown tasks raise."""
    if task not in WITHHELD_CELLS:
        raise ValueError(f"unknown task {task!r}; tasks with ID / OOD cells: {', '.join(WITHHELD_CELLS)}")
    return WITHHELD_CELLS[task]


def in_distribution_variants(task: str, variants: tuple[str, ...]) -> tuple[str, ...]:
    """``variants`` without the withheld cells (what ID training and ID episodes use)."""
    withheld = set(withheld_variants(task))
    return tuple(v for v in variants if v not in withheld)



def paraphrase(instruction: str) -> str:
    """``instruction`` rewritten with :data:`PARAPHRASES`; raises :class:`NotApplicable` if nothing changed."""
    text = instruction
    for pattern, replacement in PARAPHRASES:
        text = re.sub(pattern, replacement, text)
    if text == instruction:
        raise NotApplicable(f"no paraphrase rule applies to {instruction!r}")
    return text


def _display(category: str) -> str:
    return category.replace("_", " ")


def direct_instruction(instance: TaskInstance) -> str:
    """"Reach the <target category>." when the category names the target uniquely among the candidates."""
    if instance.family not in ("reach", "reach_base_proximity"):
        raise NotApplicable(f"task {instance.task!r}: a {instance.family} goal is a relation; no direct instruction")
    categories = {name: instance.scene.object(name).category for name in instance.candidates}
    target = categories[instance.target]
    if list(categories.values()).count(target) > 1:
        raise NotApplicable(f"task {instance.task!r} seed {instance.seed}: {list(categories.values()).count(target)} "
                            f"candidates are {target!r}; the target cannot be named without a relation")
    return f"Reach the {_display(target)}."


def goal_state_scene(instance: TaskInstance):
    """The scene with the manipulated object resting at the placement goal point (orientation kept)."""
    from bspatial.world.spec import Pose

    if instance.placement is None or instance.manipulated is None:
        raise NotApplicable(f"task {instance.task!r} has no placement goal")
    goal = tuple(float(v) for v in instance.placement.goal_point)
    objects = tuple(dataclasses.replace(o, pose=Pose(goal, o.pose.quat)) if o.name == instance.manipulated else o
                    for o in instance.scene.objects)
    return dataclasses.replace(instance.scene, objects=objects)


def apply_condition(instance: TaskInstance, condition: str) -> TaskInstance:
    """``instance`` under ``condition`` (see the module docstring).

    Raises:
        ValueError: unknown condition (lists the known ones); NotApplicable: undefined for this instance.
    """
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {list(CONDITIONS)}, got {condition!r}")
    if condition == "spatial":
        return instance
    if condition == "no_intervention":
        return dataclasses.replace(instance, scene=goal_state_scene(instance))
    if condition == "cross_task":
        return cross_task_instance(instance)
    if condition == "task_name":
        from bspatial.catalog.tasks import bare_task_name

        return dataclasses.replace(instance, instruction=bare_task_name(instance.task))
    text = direct_instruction(instance) if condition.startswith("direct") else instance.instruction
    if condition.endswith("paraphrase"):
        text = paraphrase(text)
    return dataclasses.replace(instance, instruction=text)
