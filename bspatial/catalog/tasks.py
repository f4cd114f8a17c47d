"""The benchmark's task table (paper Table S2) as named constants.

Every action-suite number that depends on the task lives here: the outcome-rule family of Table S4,
the spatial category, the instruction variants, and the episode counts of each evaluation split
(held-out from Table S2, prompt probe from Table S10, navigation from Table S2 / S11).

Task names follow the paper's code names with underscores (Table S2 prints some with dots, e.g.
``reach_paperback.book``; Tables S9/S10 shorten two of them). :func:`get_task` accepts all three
spellings.

Example:
    >>> get_task("place_bowl").name
    'place_bowl_in_cabinet'
    >>> get_task("reach_soda.can").family
    'reach_base_proximity'
    >>> sum(get_task(t).n_heldout for t in MANIPULATION_EVAL_TASKS)
    469
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, Mapping

from bspatial.common.registry import unknown_name

Family = Literal["reach", "reach_base_proximity", "directional_placement", "container_placement", "navigation"]
Category = Literal["size", "distance", "ordinal", "locate", "direction", "navigation"]

FAMILIES: tuple[Family, ...] = (
    "reach",
    "reach_base_proximity",
    "directional_placement",
    "container_placement",
    "navigation",
)
CATEGORIES: tuple[Category, ...] = ("size", "distance", "ordinal", "locate", "direction", "navigation")

# Episode counts per split. Held-out n per task is Table S2's n column; the prompt probe uses 50
# episodes per evaluated manipulation task (Table S10 rates are multiples of 2.0 = 1/50; 14 x 50 =
# the 700 of Sec. 4.3); navigation uses 40 spawn-validated instances per task, 41 for
# move_to_table_near_sofa (Table S2).
PROMPT_PROBE_EPISODES_PER_TASK = 50
NAVIGATION_EPISODES_PER_TASK = 40

# Split totals printed in the paper (Sec. 4.3 "Held-out & Prompt-probe evaluation"; Table S11).
N_HELDOUT_TOTAL = 469
N_PROMPT_PROBE_TOTAL = 700
N_NAVIGATION_TOTAL = 401

# Separator between the relation and the reference object of a two-factor variant, e.g.
# "closest/sofa". "x" (Table S2's product sign) would clash with grid cells such as "2x2".
VARIANT_SEPARATOR = "/"


@dataclass(frozen=True)
class TaskSpec:
    """One row of Table S2.

    Attributes:
        name: Canonical task name (underscores only).
        family: Outcome-rule family of Table S4.
        category: Spatial category of the instruction (Table S2 "Category").
        example_instruction: Table S2's example instruction.
        relations: The relation values an instruction varies over ("largest", "closest", "left",
            a grid cell "2x1", a shelf layer "3"). Empty for navigation.
        references: Reference objects crossed with ``relations`` (Table S2's "x" factor); empty
            when the relation alone names the target.
        n_heldout: Held-out episodes (Table S2 n; 0 for the training-only place_saucer).
        n_prompt_probe: Prompt-probe episodes (Table S10; 0 when the task is not probed).
        n_navigation: Navigation evaluation episodes (Table S2; 0 for manipulation).
        scene: Navigation environment (Table S2 grouping); None for manipulation.
    """

    name: str
    family: Family
    category: Category
    example_instruction: str
    relations: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    n_heldout: int = 0
    n_prompt_probe: int = 0
    n_navigation: int = 0
    scene: str | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r} for task {self.name!r}")
        if self.category not in CATEGORIES:
            raise ValueError(f"category must be one of {CATEGORIES}, got {self.category!r} for task {self.name!r}")
        for field_name in ("n_heldout", "n_prompt_probe", "n_navigation"):
            value = getattr(self, field_name)
            if value < 0:
                raise ValueError(f"{field_name} must be >= 0, got {value!r} for task {self.name!r}")

    @property
    def is_navigation(self) -> bool:
        """Whether the task is scored by the binary navigation rule."""
        return self.family == "navigation"

    @property
    def is_evaluated(self) -> bool:
        """Whether the paper evaluates the task (False only for the training-only place_saucer)."""
        return self.n_heldout + self.n_prompt_probe + self.n_navigation > 0

    @property
    def variants(self) -> tuple[str, ...]:
        """Instruction variant ids: the relations, crossed with the references when there are any.

        Example:
            >>> get_task("reach_storage_box").variants
            ('closest/coffee table', 'closest/bottom cabinet', 'farthest/coffee table', 'farthest/bottom cabinet')
        """
        if not self.references:
            return self.relations
        return tuple(
            f"{relation}{VARIANT_SEPARATOR}{reference}"
            for relation, reference in itertools.product(self.relations, self.references)
        )


_SIZE_4 = ("largest", "2nd largest", "smallest", "2nd smallest")
_NEAR_FAR = ("closest", "farthest")
_SIDES = ("left", "right")
_PROBE = PROMPT_PROBE_EPISODES_PER_TASK


def _manipulation() -> tuple[TaskSpec, ...]:
    # Table S2, manipulation block, in the paper's order.
    return (
        TaskSpec("reach_food_item", "reach", "size", "Reach the largest food item on the chopping board.",
                 _SIZE_4, (), 32, _PROBE),
        TaskSpec("reach_item", "reach", "size", "Reach the smallest food item on the countertop.",
                 _SIZE_4, (), 32, _PROBE),
        TaskSpec("reach_plate", "reach", "size", "Reach the largest plate from the countertop.",
                 _SIZE_4, (), 31, _PROBE),
        TaskSpec("reach_toys", "reach", "size", "Reach the second largest toy on the desk.",
                 ("largest", "2nd largest", "3rd largest", "smallest", "2nd smallest"), (), 40, _PROBE),
        TaskSpec("reach_dice", "reach", "distance", "Reach the dice closest to the board game on the bed.",
                 _NEAR_FAR, ("board game", "wall"), 32, _PROBE),
        TaskSpec("reach_paperback_book", "reach", "distance",
                 "Reach the paperback book farthest from the folder on the desk.",
                 _NEAR_FAR, ("folder", "pencil case"), 22, _PROBE),
        TaskSpec("reach_pizza_plate", "reach", "distance",
                 "Reach the pizza plate closest to the fridge on the breakfast table.",
                 _NEAR_FAR, ("fridge", "black chair", "white chair"), 40, _PROBE),
        TaskSpec("reach_soda_can", "reach_base_proximity", "distance",
                 "Reach the can of soda farthest from the sofa on the floor.",
                 _NEAR_FAR, ("sofa", "coffee table", "bottom cabinet"), 42, _PROBE),
        TaskSpec("reach_storage_box", "reach", "distance",
                 "Reach the storage box closest to the coffee table on the floor.",
                 _NEAR_FAR, ("coffee table", "bottom cabinet"), 32, _PROBE),
        TaskSpec("reach_tool", "reach", "ordinal", "Reach the tool on the second leftmost of the countertop.",
                 ("leftmost", "2nd leftmost", "rightmost", "2nd rightmost"), (), 32, _PROBE),
        TaskSpec("reach_hardback", "reach", "locate", "Reach the hardback book at the 2x2 grid of the bookcase.",
                 ("1x1", "1x2", "2x1", "2x2", "3x1", "3x2"), (), 48, _PROBE),
        TaskSpec("place_carving_knife", "directional_placement", "direction",
                 "Place the carving knife on the countertop and to the right of the cutting board.",
                 _SIDES, ("cutting board", "microwave", "burner", "frying pan"), 24, _PROBE),
        # Training-only (Table S2 "train-only"): no held-out or probe episodes.
        TaskSpec("place_saucer", "directional_placement", "direction",
                 "Place the saucer on the countertop and to the left of the electric kettle.",
                 _SIDES, ("coffee maker", "kettle", "coffee bottle"), 0, 0),
        TaskSpec("place_tupperware_in_fridge", "container_placement", "locate",
                 "Place the tupperware in the layer 5 of the fridge.", ("4", "5", "6"), (), 22, _PROBE),
        TaskSpec("place_bowl_in_cabinet", "container_placement", "locate",
                 "Place the bowl in the layer 3 of the bottom cabinet.", ("1", "2", "3", "4", "5"), (), 40, _PROBE),
    )


def _navigation() -> tuple[TaskSpec, ...]:
    # Table S2, navigation block (grouped by environment), in the paper's order.
    rows = (
        ("move_to_garage", "garage", "two-floor house"),
        ("move_to_fridge", "fridge", "two-floor house"),
        ("move_to_table_in_kitchen", "table in the kitchen", "two-floor house"),
        ("move_to_bookcase", "bookcase", "single-floor house"),
        ("move_to_bathroom", "bathroom", "single-floor house"),
        ("move_to_table_near_sofa", "table near the sofa", "single-floor house"),
        ("move_to_corner_booth", "corner booth", "restaurant diner"),
        ("move_to_bar", "bar", "restaurant diner"),
        ("move_to_kitchen_sink", "kitchen sink", "restaurant diner"),
        ("move_to_oven", "oven", "restaurant diner"),
    )
    # Table S2: one extra spawn-validated instance for the table near the sofa.
    extra = {"move_to_table_near_sofa": 1}
    return tuple(
        TaskSpec(name, "navigation", "navigation", f"Move to the {goal}.",
                 n_navigation=NAVIGATION_EPISODES_PER_TASK + extra.get(name, 0), scene=scene)
        for name, goal, scene in rows
    )


def _build_registry(specs: tuple[TaskSpec, ...]) -> Mapping[str, TaskSpec]:
    registry: dict[str, TaskSpec] = {}
    for spec in specs:
        if spec.name in registry:
            raise ValueError(f"duplicate task name {spec.name!r}")
        registry[spec.name] = spec
    return MappingProxyType(registry)


TASKS: Mapping[str, TaskSpec] = _build_registry(_manipulation() + _navigation())
"""All 25 tasks by canonical name, in Table S2 order."""

# Tables S9/S10 (and the Table S2 task column) use short names for the two container tasks.
TASK_ALIASES: Mapping[str, str] = MappingProxyType({
    "place_tupperware": "place_tupperware_in_fridge",
    "place_bowl": "place_bowl_in_cabinet",
})

MANIPULATION_TASKS: tuple[str, ...] = tuple(n for n, s in TASKS.items() if not s.is_navigation)
"""The 15 manipulation tasks, including the training-only place_saucer."""
MANIPULATION_EVAL_TASKS: tuple[str, ...] = tuple(n for n in MANIPULATION_TASKS if TASKS[n].n_heldout > 0)
"""The 14 evaluated manipulation tasks (Tables S5, S9, S10)."""
TRAIN_ONLY_TASKS: tuple[str, ...] = tuple(n for n in MANIPULATION_TASKS if not TASKS[n].is_evaluated)
NAVIGATION_TASKS: tuple[str, ...] = tuple(n for n, s in TASKS.items() if s.is_navigation)
"""The 10 navigation tasks (Tables S2, S11)."""


def bare_task_name(task_name: str) -> str:
    """The instruction of a language-blanked policy: the task's name with underscores read as spaces.

    The one definition for both sides: training with the instruction replaced
    (``bspatial.modeling``'s ``instruction_source="task_name"``) and rollouts that prompt such a policy the same way
    (the ``task_name`` condition, :mod:`bspatial.tasks.conditions`). It names the task family only, never which
    candidate to reach.

    Example:
        >>> bare_task_name("reach_plate")
        'reach plate'
    """
    return task_name.replace("_", " ").strip()


def canonical_task_name(name: str) -> str:
    """Return the canonical name for a task name, a dotted Table S2 spelling or a short alias.

    Raises:
        ValueError: If the name is unknown; the message lists the known names.

    Example:
        >>> canonical_task_name("reach_paperback.book")
        'reach_paperback_book'
    """
    if not isinstance(name, str):
        raise ValueError(f"task must be a string, got {name!r}")
    candidate = name.strip().replace(".", "_")
    candidate = TASK_ALIASES.get(candidate, candidate)
    if candidate not in TASKS:
        listing = ", ".join(list(TASKS) + [f"{k} (= {v})" for k, v in TASK_ALIASES.items()])
        raise unknown_name("task", name, [*TASKS, *TASK_ALIASES], listing=listing)
    return candidate


def get_task(name: str) -> TaskSpec:
    """Look up a task by canonical name, dotted spelling or alias.

    Raises:
        ValueError: If the name is unknown; the message lists the known names.

    Example:
        >>> get_task("move_to_table_near_sofa").n_navigation
        41
    """
    return TASKS[canonical_task_name(name)]
