"""The task registry: Table S2 task names -> :class:`~bspatial.tasks.base.Task` builder functions.

One registry style: tasks are builder functions in an explicit table (no registration
by import side effect); unknown names raise listing the known ones; duplicate names raise. Task names
accept the spellings of :func:`bspatial.catalog.tasks.canonical_task_name` (dotted Table S2
names, short aliases).

Example:
    >>> task_names()[:2]
    ('reach_food_item', 'reach_item')
    >>> get_task("place_bowl").name
    'place_bowl_in_cabinet'
    >>> get_task("fly_to_moon")
    Traceback (most recent call last):
    ...
    ValueError: unknown task 'fly_to_moon'; known tasks: reach_food_item, ...
"""

from __future__ import annotations

import functools
from types import MappingProxyType
from typing import Callable, Iterable, Mapping

import numpy as np

from bspatial.common.registry import unknown_name
from bspatial.catalog.tasks import MANIPULATION_TASKS, NAVIGATION_TASKS, TASKS, canonical_task_name
from bspatial.tasks.base import Generator, Task, TaskInstance
from bspatial.tasks.budgets import step_budget
from bspatial.tasks import navigation
from bspatial.tasks.manipulation import placement, reach_distance, reach_ordinal_locate, reach_size


def _builder(name: str, generator: Generator) -> Callable[[], Task]:
    def build() -> Task:
        spec = TASKS[name]
        return Task(spec=spec, generator=generator, step_budget=step_budget(name))
    build.__name__ = f"build_{name}"
    return build


def make_registry(entries: Iterable[tuple[str, Callable[[], Task]]]) -> Mapping[str, Callable[[], Task]]:
    """Freeze (name, builder) pairs into a registry; a duplicate name raises ValueError."""
    registry: dict[str, Callable[[], Task]] = {}
    for name, builder in entries:
        if name in registry:
            raise ValueError(f"duplicate task name {name!r} in the task registry")
        registry[name] = builder
    return MappingProxyType(registry)


_GENERATORS: tuple[tuple[str, Generator], ...] = (
    ("reach_food_item", reach_size.reach_food_item),
    ("reach_item", reach_size.reach_item),
    ("reach_plate", reach_size.reach_plate),
    ("reach_toys", reach_size.reach_toys),
    ("reach_dice", reach_distance.reach_dice),
    ("reach_paperback_book", reach_distance.reach_paperback_book),
    ("reach_pizza_plate", reach_distance.reach_pizza_plate),
    ("reach_soda_can", reach_distance.reach_soda_can),
    ("reach_storage_box", reach_distance.reach_storage_box),
    ("reach_tool", reach_ordinal_locate.reach_tool),
    ("reach_hardback", reach_ordinal_locate.reach_hardback),
    ("place_carving_knife", placement.place_carving_knife),
    ("place_saucer", placement.place_saucer),
    ("place_tupperware_in_fridge", placement.place_tupperware_in_fridge),
    ("place_bowl_in_cabinet", placement.place_bowl_in_cabinet),
)

REGISTRY: Mapping[str, Callable[[], Task]] = make_registry((n, _builder(n, g)) for n, g in _GENERATORS)
"""The 15 manipulation tasks, in Table S2 order (what ``task_names`` lists: variants, budgets, experts)."""

NAVIGATION_REGISTRY: Mapping[str, Callable[[], Task]] = make_registry(
    (n, functools.partial(navigation.build_navigation_task, n)) for n in navigation.NAV_TASKS)
"""The 10 navigation tasks (Table S2 / S11; :mod:`bspatial.tasks.navigation`), resolved by :func:`get_task`."""


def task_names() -> tuple[str, ...]:
    """Names of the tasks that have scene generators, in Table S2 order."""
    return tuple(REGISTRY)


def get_task(name: str) -> Task:
    """Build the task called ``name`` (canonical, dotted or alias spelling).

    Raises:
        ValueError: unknown name (the message lists the known ones, manipulation then navigation).
    """
    try:
        canonical = canonical_task_name(name)
    except ValueError:
        raise unknown_name("task", name, (*REGISTRY, *NAVIGATION_REGISTRY)) from None
    if canonical in NAVIGATION_REGISTRY:
        return NAVIGATION_REGISTRY[canonical]()
    if canonical not in REGISTRY:
        raise ValueError(f"task {name!r} has no scene generator yet; known tasks: {known}")
    return REGISTRY[canonical]()


def sample_instance(name: str, variant: str, seed: int, *, clutter: bool = True) -> TaskInstance:
    """``get_task(name).sample(variant, np.random.default_rng(seed), seed=seed, clutter=clutter)``."""
    return get_task(name).sample(variant, np.random.default_rng(seed), seed=seed, clutter=clutter)


assert set(REGISTRY) == set(MANIPULATION_TASKS), "registry must cover Table S2's manipulation tasks"
assert set(NAVIGATION_REGISTRY) == set(NAVIGATION_TASKS), "navigation registry must cover Table S2's navigation tasks"
