"""Ordinal and locate reach tasks (Table S2): a tool on the countertop (leftmost / 2nd leftmost /
rightmost / 2nd rightmost along the robot-right axis) and a hardback in a bookcase's 3x2 grid
(the book whose centre lies inside the named cell; rows counted from the bottom as in the locate rules, columns from the
robot's left)."""

from __future__ import annotations

import numpy as np

from bspatial.catalog.tasks import TaskSpec
from bspatial.world.furniture import Room, bookcase, countertop, make_scene
from bspatial.tasks.base import Layout, LayoutRejected
from bspatial.catalog.thresholds import ORDINAL_GAP_M
from bspatial.world.relations import object_box, order_left_to_right, pick_by_rank, robot_right_axis, spoken
from bspatial.world import objects
from bspatial.tasks.manipulation.common import SPAWN, slots

N_TOOLS = 4
BOOKCASE_ROWS, BOOKCASE_COLUMNS = 3, 2


def reach_tool(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    counter = countertop("countertop_0", front_x=0.55, depth=0.7, width=1.8, seed=int(rng.integers(100)))
    cats = rng.choice(sorted(objects.TOOLS), size=N_TOOLS, replace=False)
    ys = slots(rng, N_TOOLS, half_width=0.4)
    tools = [objects.tool(f"{c}_{i}", str(c), (float(rng.uniform(0.78, 0.88)), float(y), counter.height),
                          yaw=float(rng.uniform(-0.25, 0.25))) for i, (c, y) in enumerate(zip(cats, rng.permutation(ys)))]
    axis = robot_right_axis(SPAWN.yaw)
    proj = {t.name: float(np.dot(object_box(t).center[:2], axis)) for t in tools}
    order = order_left_to_right({t.name: object_box(t).center for t in tools}, axis)
    extents = {}
    for t in tools:
        lo, hi = object_box(t).aabb()
        corners = np.array([[lo[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]], [hi[0], lo[1]]]) @ axis
        extents[t.name] = (corners.min(), corners.max())
    for a, b in zip(order, order[1:]):
        if proj[b] - proj[a] < ORDINAL_GAP_M or extents[b][0] <= extents[a][1]:
            raise LayoutRejected("ordinal neighbours overlap along the robot-right axis")
    # "leftness" = -projection on robot-right: descending order is leftmost first.
    target, _ = pick_by_rank({n: -p for n, p in proj.items()}, variant)
    i = order.index(target)
    gap = min(abs(proj[target] - proj[order[j]]) for j in (i - 1, i + 1) if 0 <= j < len(order))
    scene = make_scene("reach_tool", (counter.obj, *tools), surfaces=(counter.surface,), robot=SPAWN)
    return Layout(instruction=f"Reach the tool on the {spoken(variant)} of the countertop.", scene=scene,
                  candidates=tuple(t.name for t in tools), target=target,
                  measurements={"right_axis": axis.tolist(), "projection_on_right_axis": proj, "left_to_right": order},
                  margin=gap)


def grid_cells(case) -> dict[str, tuple[float, float, float, float, float, float]]:
    """'RxC' -> (x0, x1, y0, y1, z0, z1) box of each bookcase cell.

    Rows count from the bottom and columns from the robot's left, as the evaluation prompts' locate
    rules define grid positions (Appendix 15.1: "1x1" is the bottom-left cell).
    """
    x0, x1, _, _ = case.interior
    n_rows = len(case.layer_tops)
    cells = {}
    for r in range(1, n_rows + 1):
        layer = r - 1  # layer_tops run bottom to top
        for c in range(1, len(case.column_edges)):
            y_hi, y_lo = case.column_edges[c - 1], case.column_edges[c]
            cells[f"{r}x{c}"] = (x0, x1, y_lo, y_hi, case.layer_tops[layer], case.layer_ceilings[layer])
    return cells


def cell_of(point, cells) -> str | None:
    """The cell whose box contains ``point`` (3,), or None."""
    for name, (x0, x1, y0, y1, z0, z1) in cells.items():
        if x0 <= point[0] <= x1 and y0 <= point[1] <= y1 and z0 <= point[2] <= z1:
            return name
    return None


def reach_hardback(spec: TaskSpec, variant: str, rng: np.random.Generator) -> Layout:
    room = Room(x_max=1.75)
    case = bookcase("bookcase_0", front_x=1.4, y_center=float(rng.uniform(-0.08, 0.08)),
                    rows=BOOKCASE_ROWS, columns=BOOKCASE_COLUMNS)
    cells = grid_cells(case)
    books = []
    for i, (name, (x0, x1, y0, y1, z0, z1)) in enumerate(sorted(cells.items())):
        thick = float(rng.uniform(0.04, 0.06))
        height = float(rng.uniform(0.2, min(0.28, z1 - z0 - 0.04)))
        y = float(rng.uniform(y0 + thick / 2 + 0.05, y1 - thick / 2 - 0.05))
        books.append(objects.hardback(f"hardback_{i}", (x0 + 0.12, y, z0), rng, height=height, thickness=thick))
    located = {b.name: cell_of(object_box(b).center, cells) for b in books}
    if len(set(located.values())) != len(books) or None in located.values():
        raise LayoutRejected("a cell holds no hardback or two")
    target = next(n for n, c in located.items() if c == variant)
    scene = make_scene("reach_hardback", (case.obj, *books), room=room, robot=SPAWN, top_center=(1.0, 0.0))
    return Layout(instruction=f"Reach the hardback book at the {variant} grid of the bookcase.", scene=scene,
                  candidates=tuple(b.name for b in books), target=target,
                  measurements={"cell": located, "cells": {k: list(v) for k, v in cells.items()}})
