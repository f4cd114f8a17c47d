"""Joining two sides on their common tasks: the intersection, in Table S2 order, the rest listed."""

from __future__ import annotations

import numpy as np
import pytest

from bspatial.evaluation.analysis.join import MIN_JOINED_TASKS, JoinError, TaskScores, join


def _side(source: str, scores: dict[str, float]) -> TaskScores:
    return TaskScores(source, scores, {t: np.full(2, s / 100) for t, s in scores.items()})


def test_intersection_in_table_s2_order_with_the_rest_listed():
    vlm = _side("vlm", {"reach_tool": 10.0, "reach_dice": 20.0, "reach_food_item": 30.0, "reach_plate": 40.0})
    rollout = _side("rollout", {"reach_plate": 1.0, "reach_dice": 2.0, "reach_food_item": 3.0, "place_bowl_in_cabinet": 4.0})
    joined = join(vlm, rollout)
    assert joined.tasks == ["reach_food_item", "reach_plate", "reach_dice"]
    assert joined.perception == [30.0, 40.0, 20.0] and joined.success == [3.0, 1.0, 2.0]
    assert [s.tolist() for s in joined.success_samples] == [[0.03, 0.03], [0.01, 0.01], [0.02, 0.02]]
    assert joined.only_perception == ["reach_tool"] and joined.only_success == ["place_bowl_in_cabinet"]


def test_fewer_than_three_common_tasks_is_an_error_naming_both_sources():
    assert MIN_JOINED_TASKS == 3
    vlm = _side("runs/vlm/ir-all/summary.json", {"reach_tool": 1.0, "reach_dice": 2.0, "reach_item": 3.0})
    rollout = _side("runs/scripted", {"reach_tool": 1.0, "reach_dice": 2.0, "reach_toys": 3.0})
    with pytest.raises(JoinError, match=r"only 2 task\(s\) \['reach_dice', 'reach_tool'\] are in both "
                                        r"runs/vlm/ir-all/summary.json and runs/scripted; .* at least 3 "
                                        r"\(only in the first: \['reach_item'\]; only in the second: \['reach_toys'\]\)"):
        join(vlm, rollout)
