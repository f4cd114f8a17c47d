"""Candidate food items whose categories do not predict a size rank (the mixed-category tasks).

``reach_food_item`` and ``reach_item`` ask for "the largest / second largest / smallest / second smallest
food item", and their candidates are of different categories by definition (Table S2). Drawn naively, a
box of cereal stood over the limes and the typical-size ranking of the categories picked the answer of
78% of episodes: a viewer who recognises the categories wins without comparing sizes.

Here a candidate set is four categories of a pool that is **balanced**: with every instance size inside
its category's range (:data:`bspatial.world.objects.FOOD_ITEMS`, :data:`~bspatial.world.objects.PACKAGED_FOOD`)
and neighbouring sizes apart by the 10% margin, every category of the set can take every rank. The draw
then picks a size order under which every category takes every rank with probability 1/4, and sizes along
that order; it never sees the instruction, so one scene serves every rank (the prompt probe asks the
training scene for another one). So for any table of typical sizes (the range midpoints, or the blind baseline's
:mod:`bspatial.construction.quality.priors`) the answer's category has each typical rank with probability 1/4: the
chance of four candidates.

Sizes are compared as the scene's size rule measures them (the object box's longest side, which for an
apple includes its stem), so a drawn order is the order the task and the VQA item see.

Example:
    >>> import numpy as np
    >>> picks = draw_balanced(np.random.default_rng(0), BOARD_FOOD, 4)
    >>> len({c for c, _ in picks}) == 4
    True
"""

from __future__ import annotations

import functools
import itertools
from typing import Sequence

import numpy as np

from bspatial.catalog.thresholds import SIZE_MARGIN
from bspatial.world import objects
from bspatial.world.relations import object_box, rank_index
from bspatial.world.spec import ObjectSpec

BOARD_FOOD = ("apple", "bell_pepper", "lemon", "mango", "orange", "potato")
"""Produce for the chopping board. The long vegetables cannot join them (a cucumber is never smaller than an
apple), and four of those do not fit the 42 x 58 cm board; the lime is smaller than any three others can be."""
COUNTER_FOOD = ("bag_of_chips", "box_of_crackers", "box_of_oatmeal", "banana", "carrot", "cucumber", "eggplant")
"""Food on the countertop: packages and long produce whose sizes overlap. A box of cereal (24-32 cm) would be
the largest in almost any set, an apple or orange the smallest, so neither joins (they would decide the rank)."""
SIZE_RATIO = 1.01 / (1.0 - SIZE_MARGIN)
"""Neighbouring drawn sizes differ by this factor: the 10% margin (relative to the larger, so 1 / 0.9) and
1% more, so a drawn set passes the size rule's check without rejection."""


def food_object(name: str, category: str, length: float, position, yaw: float = 0.0) -> ObjectSpec:
    """The food builder of ``category`` (a package stands upright; produce lies or rests)."""
    if category in objects.PACKAGED_FOOD:
        return objects.packaged_food(name, category, length, position, yaw)
    return objects.food_item(name, category, length, position, yaw)


def _range(category: str) -> tuple[float, float]:
    if category in objects.PACKAGED_FOOD:
        return objects.PACKAGED_FOOD[category][0]
    return objects.FOOD_ITEMS[category][0]


@functools.lru_cache(maxsize=None)
def measured_map(category: str) -> tuple[float, float]:
    """(a, b) with longest side = a * length + b for the builder of ``category``: every part scales with the
    length except fixed details (an apple's 1 cm stem), so two probes give the exact line."""
    lo, hi = _range(category)
    f = [object_box(food_object("probe", category, L, (0.0, 0.0, 0.0))).longest for L in (lo, hi)]
    a = (f[1] - f[0]) / (hi - lo)
    return a, f[0] - a * lo


def measured_range(category: str) -> tuple[float, float]:
    a, b = measured_map(category)
    lo, hi = _range(category)
    return a * lo + b, a * hi + b


def _bounds(order: Sequence[str]) -> list[tuple[float, float]] | None:
    """Per position of ``order`` (smallest first): the (lowest, highest) size from which the chain can still
    be finished; None when no sizes fit."""
    ranges = [measured_range(c) for c in order]
    lowest, prev = [], 0.0
    for lo, hi in ranges:
        prev = max(lo, prev * SIZE_RATIO)
        if prev > hi:
            return None
        lowest.append(prev)
    highest, nxt = [0.0] * len(order), float("inf")
    for i in range(len(order) - 1, -1, -1):
        nxt = min(ranges[i][1], nxt / SIZE_RATIO)
        highest[i] = nxt
    return list(zip(lowest, highest))


def feasible_orders(categories: Sequence[str], answer: str, position: int) -> list[tuple[str, ...]]:
    """Orders (smallest first) of ``categories`` with ``answer`` at ``position`` whose sizes can be drawn."""
    others = [c for c in categories if c != answer]
    orders = [tuple(p[:position]) + (answer,) + tuple(p[position:]) for p in itertools.permutations(others)]
    return [o for o in orders if _bounds(o) is not None]


@functools.lru_cache(maxsize=None)
def balanced_sets(pool: tuple[str, ...], n: int) -> tuple[tuple[str, ...], ...]:
    """The ``n``-category subsets of ``pool`` in which every category can take every rank.

    Raises:
        ValueError: ``pool`` has no balanced subset (a range edit broke the design).
    """
    sets = tuple(s for s in itertools.combinations(sorted(pool), n)
                 if all(feasible_orders(s, c, p) for c in s for p in range(n)))
    if not sets:
        raise ValueError(f"food pool {list(pool)} has no {n} categories that can each take every size rank")
    return sets


ORDER_FIT_SWEEPS = 2000
"""Sweeps of iterative proportional fitting in :func:`order_distribution` (its marginals are then within
:data:`ORDER_MARGINAL_TOLERANCE` of 1/n on every balanced set of the two pools)."""
ORDER_MARGINAL_TOLERANCE = 1e-3


@functools.lru_cache(maxsize=None)
def order_distribution(categories: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], ...], np.ndarray]:
    """Drawable orders (smallest first) of ``categories`` and a probability for each under which every category
    sits at every position with probability 1/n.

    The scene must not depend on the instruction's variant (a prompt probe keeps the training scene and asks for
    another rank), so the order is drawn once for all ranks. Not every order can be drawn (a potato can be
    smaller than an apple, not 40% smaller), so the uniform order is out; iterative proportional fitting from the
    uniform distribution over the drawable orders finds the closest one (in KL) whose rank marginals are uniform.

    Raises:
        ValueError: no such distribution (the set is not balanced).
    """
    n = len(categories)
    orders = tuple(o for o in itertools.permutations(categories) if _bounds(o) is not None)
    at = np.array([[[o[p] == c for o in orders] for p in range(n)] for c in categories], dtype=float)  # c, p, o
    weights = np.full(len(orders), 1.0 / max(len(orders), 1))
    for _ in range(ORDER_FIT_SWEEPS):
        for p in range(n):
            marginal = at[:, p, :] @ weights
            if np.any(marginal <= 0):
                raise ValueError(f"food set {list(categories)}: no drawable order puts every category at rank {p}")
            weights = weights * (((1.0 / n) / marginal) @ at[:, p, :])
        weights = weights / weights.sum()
    error = float(np.abs(np.einsum("cpo,o->cp", at, weights) - 1.0 / n).max())
    if error > ORDER_MARGINAL_TOLERANCE:
        raise ValueError(f"food set {list(categories)}: rank marginals are off uniform by {error:.2g}")
    return orders, weights


def draw_balanced(rng: np.random.Generator, pool: tuple[str, ...], n: int) -> list[tuple[str, float]]:
    """``n`` (category, length) pairs, in a random order: a balanced set, a size order drawn from
    :func:`order_distribution` (each category at each rank with probability 1/n, whatever the instruction
    asks), sizes drawn along the order."""
    sets = balanced_sets(pool, n)
    categories = sets[int(rng.integers(len(sets)))]
    orders, weights = order_distribution(categories)
    order = orders[int(rng.choice(len(orders), p=weights))]
    bounds = _bounds(order)
    sizes, prev = [], 0.0
    for (lowest, highest), category in zip(bounds, order):
        lo = max(lowest, prev * SIZE_RATIO)
        prev = float(rng.uniform(lo, highest))
        sizes.append(prev)
    picks = [(c, (s - measured_map(c)[1]) / measured_map(c)[0]) for c, s in zip(order, sizes)]
    return [picks[i] for i in rng.permutation(n)]
