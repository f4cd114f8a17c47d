"""The scripted writer's reach program's stroke point (evaluation/agents/programs/reach.py), on hand-built
depth points with the expected aims worked out here."""

from __future__ import annotations

import numpy as np
import pytest

from bspatial.evaluation.agents.programs import reach


def _box_top(x0, x1, y0, y1, z, n=13):
    xs, ys = np.meshgrid(np.linspace(x0, x1, n), np.linspace(y0, y1, n))
    return np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, z)])


TABLE = _box_top(0.3, 1.0, -0.2, 0.4, 0.55, n=36)     # the support, seen around every target


def test_a_small_target_is_aimed_inside_its_edges():
    # A 6 cm die, top at 0.617, seen at its top centre (0.86, 0.10): NEAR_M (3 cm) nearer would be its
    # very edge (0.83), so the aim stays EDGE_M (1.5 cm) inside: x = 0.83 + 0.015 = 0.845.
    die = _box_top(0.83, 0.89, 0.07, 0.13, 0.617)
    aim = reach.stroke_point(np.vstack([TABLE, die]), [0.86, 0.10, 0.617])
    assert aim == pytest.approx([0.845, 0.10, 0.617])


def test_a_wide_target_keeps_the_near_offset():
    # A 26 cm plate, top at 0.57: 3 cm nearer than the seen centre is well inside it.
    plate = _box_top(0.57, 0.83, -0.03, 0.23, 0.57)
    aim = reach.stroke_point(np.vstack([TABLE, plate]), [0.70, 0.10, 0.57])
    assert aim == pytest.approx([0.67, 0.10, 0.57])


def test_a_shelf_above_the_target_is_not_its_top():
    # A book front seen at (0.80, 0.0, 0.62) under a shelf board at 0.80 (18 cm above): the aim keeps the
    # seen height and the book's own edges; the board is not the target's top.
    book = _box_top(0.78, 0.90, -0.05, 0.05, 0.62)
    board = _box_top(0.70, 1.00, -0.10, 0.10, 0.80)
    aim = reach.stroke_point(np.vstack([TABLE, book, board]), [0.80, 0.0, 0.62])
    assert aim == pytest.approx([0.795, 0.0, 0.62])       # max(0.80 - 0.03, 0.78 + 0.015)


def test_nothing_around_the_seen_point_keeps_the_near_offset():
    assert reach.stroke_point(np.empty((0, 3)), [0.7, 0.1, 0.6]) == pytest.approx([0.67, 0.1, 0.6])
