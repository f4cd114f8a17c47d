"""Size-rank reach tasks (Table S2): food item on a chopping board, item on the countertop, plate,
toys on a desk. The target is the candidate whose longest bounding-box dimension has the instructed
rank; every neighbouring pair of ranks differs by at least SIZE_MARGIN (10%).

The two food-item tasks mix categories by definition (Table S2: "the largest food item"), so a viewer who
knows that a box of cereal is large and a lime small would answer them from the categories alone (measured:
the typical sizes picked the answer of 78% of episodes). Their candidates are therefore drawn from
:mod:`~bspatial.tasks.manipulation.balanced_food` sets, in which every category can hold every rank, and
their size order is drawn so that every category holds every rank with probability 1/4, whatever the
instruction asks: the categories say nothing about the answer, and one scene serves every rank (a prompt
probe asks the training scene for another).
"""

from __future__ import annotations

import numpy as np

from bspatial.catalog.tasks import TaskSpec
from bspatial.world.furniture import countertop, make_scene, table
from bspatial.world.spec import ObjectSpec, Part, Pose
from bspatial.world.textures import rgba, wood_texture
from bspatial.tasks.base import Layout, LayoutRejected
from bspatial.catalog.thresholds import SIZE_MARGIN
from bspatial.world.relations import min_adjacent_gap, object_box, pick_by_rank, spoken
from bspatial.world import objects
from bspatial.tasks.manipulation.common import SPAWN, scatter, slots
from bspatial.tasks.manipulation.balanced_food import BOARD_FOOD, COUNTER_FOOD, draw_balanced, food_object

N_FOOD_ON_BOARD = 4
N_COUNTER_ITEMS = 4
N_PLATES = 4
N_TOYS = 5
COUNTER_GAP_M = 0.03
"""Free space between neighbouring items in reach_item's row: room for the hand's fingers beside the target."""
COUNTER_ROW_HALF_WIDTH_M = 0.48
"""reach_item's row spans |y| <= this (item extents). An end item's centre lies half its width inside, so
centres stay near the head camera's visible band for centres
(:data:`~bspatial.tasks.manipulation.common.VISIBLE_HALF_WIDTH`, 0.42 m; a 9 cm box's may sit at 0.435 m)."""


def _size_layout(spec: TaskSpec, variant: str, scene_name: str, furniture, surfaces, candidates: list[ObjectSpec],
                 instruction: str) -> Layout:
    sizes = {o.name: object_box(o).longest for o in candidates}
    gap = min_adjacent_gap(sizes.values())
    if gap < SIZE_MARGIN:
        raise LayoutRejected(f"size gap {gap:.3f} < {SIZE_MARGIN}")
    target, margin = pick_by_rank(sizes, variant)
    scene = make_scene(scene_name, tuple(furniture) + tuple(candidates), surfaces=surfaces, robot=SPAWN)
    return Layout(instruction=instruction, scene=scene, candidates=tuple(o.name for o in candidates), target=target,
                  measurements={"longest_dimension": sizes}, margin=margin)


def _pick_lengths(rng: np.random.Generator, ranges: dict, n: int) -> list[tuple[str, float]]:
    cats = rng.choice(sorted(ranges), size=n, replace=False)
    return [(str(c), float(rng.uniform(*ranges[c]))) for c in cats]


def reach_food_item(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    counter = countertop("countertop_0", front_x=0.55, depth=0.7, width=1.8, seed=int(rng.integers(100)))
    bx, by = float(rng.uniform(0.82, 0.9)), float(rng.uniform(-0.1, 0.1))
    board_size = (0.42, 0.58)
    h = counter.height
    board = ObjectSpec(name="chopping_board_0", category="chopping_board", static=True, pose=Pose((bx, by, h)), parts=(
        Part("box", (*board_size, 0.025), Pose((0, 0, 0.0125)), rgba=rgba((255, 255, 255)),
             texture=wood_texture("chopping_board_0_wood", (215, 170, 115), seed=int(rng.integers(100)))),))
    top = h + 0.025
    picks = draw_balanced(rng, BOARD_FOOD, N_FOOD_ON_BOARD)
    protos = [food_object(f"{c}_{i}", c, L, (0, 0, top)) for i, (c, L) in enumerate(picks)]
    bounds = (bx - board_size[0] / 2, bx + board_size[0] / 2, by - board_size[1] / 2, by + board_size[1] / 2)
    xy = scatter(rng, [_radius(o) for o in protos], bounds, gap=0.015)
    items = [food_object(f"{c}_{i}", c, L, (*xy[i], top), yaw=float(rng.uniform(-0.4, 0.4)))
             for i, (c, L) in enumerate(picks)]
    return _size_layout(spec, variant, "reach_food_item", (counter.obj, board), (counter.surface,), items,
                        f"Reach the {spoken(variant)} food item on the chopping board.")


def _width(obj: ObjectSpec) -> float:
    lo, hi = object_box(obj).aabb()
    return float(hi[1] - lo[1])


def _row(rng: np.random.Generator, widths: list[float], half_width: float, gap: float) -> list[float]:
    """y centres, in the given order, of items of ``widths`` side by side in [-half_width, half_width], at
    least ``gap`` apart: a 25 cm cucumber and a 32 cm bag of chips need wider places than equal slots give
    (lying in equal slots they touched their neighbours, and the expert hit them)."""
    free = 2 * half_width - sum(widths) - gap * (len(widths) - 1)
    if free < 0:
        raise LayoutRejected(f"the items do not fit side by side in {2 * half_width:.2f} m")
    spare = np.diff(np.sort(rng.uniform(0.0, free, len(widths))), prepend=0.0)   # free space before each item
    left, out = -half_width, []
    for w, extra in zip(widths, spare):
        left += extra
        out.append(left + w / 2)
        left += w + gap
    return out


def _radius(obj: ObjectSpec) -> float:
    from bspatial.tasks.manipulation.common import footprint_radius

    return footprint_radius(obj)


def reach_item(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    counter = countertop("countertop_0", front_x=0.55, depth=0.7, width=1.8, seed=int(rng.integers(100)))
    picks = draw_balanced(rng, COUNTER_FOOD, N_COUNTER_ITEMS)
    # Produce lies across the view (its long axis along y), where its length shows; packages face the robot.
    yaws = [float(rng.uniform(-0.3, 0.3)) for _ in picks]
    widths = [_width(food_object("probe", c, L, (0.0, 0.0, 0.0), yaw)) for (c, L), yaw in zip(picks, yaws)]
    ys = _row(rng, widths, COUNTER_ROW_HALF_WIDTH_M, COUNTER_GAP_M)
    items = [food_object(f"{c}_{i}", c, L, (float(rng.uniform(0.78, 0.9)), y, counter.height), yaw)
             for i, ((c, L), y, yaw) in enumerate(zip(picks, ys, yaws))]
    return _size_layout(spec, variant, "reach_item", (counter.obj,), (counter.surface,), items,
                        f"Reach the {spoken(variant)} food item on the countertop.")


def reach_plate(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    counter = countertop("countertop_0", front_x=0.55, depth=0.75, width=1.8, seed=int(rng.integers(100)))
    diameters = rng.uniform(0.14, 0.30, N_PLATES)
    rims = [tuple(int(c) for c in rng.integers(20, 200, 3)) for _ in range(N_PLATES)]
    xy = scatter(rng, [d / 2 for d in diameters], (0.62, 1.25, -0.45, 0.45), gap=0.02)
    plates = [objects.plate(f"plate_{i}", float(d), (*xy[i], counter.height), rim_rgb=rims[i])
              for i, d in enumerate(diameters)]
    return _size_layout(spec, variant, "reach_plate", (counter.obj,), (counter.surface,), plates,
                        f"Reach the {spoken(variant)} plate from the countertop.")


def reach_toys(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    desk = table("desk_0", "desk", center_xy=(0.95, 0.0), size_xy=(0.7, 1.4), height=0.75, rgb=(120, 90, 60),
                 seed=int(rng.integers(100)))
    picks = _pick_lengths(rng, objects.TOYS, N_TOYS)
    ys = rng.permutation(slots(rng, N_TOYS, half_width=0.5))
    toys = [objects.toy(f"{c}_{i}", c, L, (float(rng.uniform(0.82, 0.95)), float(y), desk.height), rng,
                        yaw=float(rng.uniform(-0.3, 0.3)))
            for i, ((c, L), y) in enumerate(zip(picks, ys))]
    return _size_layout(spec, variant, "reach_toys", (desk.obj,), (desk.surface,), toys,
                        f"Reach the {spoken(variant)} toy on the desk.")
