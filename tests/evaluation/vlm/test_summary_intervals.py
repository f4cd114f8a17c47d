"""summary.json's intervals on hand-made logs whose ids follow the builders' formats (scenes, spawns, draws).

Expected values are worked by hand in the comments (CR1: V = G/(G-1) · Σ_g (Σ_{i∈g} e_i)² / N²).
"""

from __future__ import annotations

import math

import pytest

from bspatial.evaluation.vlm.summary import summarize_ir, summarize_vqa

Z95 = 1.959963984540054


def _vqa(item_id: str, correct: bool, setting: str = "single_frame", task: str | None = None) -> dict:
    return {"id": item_id, "setting": setting, "category": "direction", "subtype": "object_relative", "task": task,
            "answer": "A", "options": ["mug", "bowl", "pot", "cup"], "raw_output": "A" if correct else "B",
            "correct": correct}


def _interval(mean: float, se: float) -> list[float]:
    return [100 * max(0.0, mean - Z95 * se), 100 * min(1.0, mean + Z95 * se)]


def test_general_vqa_clusters_by_apartment_and_is_wider_than_independent_items():
    # 3 apartments x 2 frames x 2 questions; apartments a and b all right, c all wrong. Mean 2/3;
    # residual sums 4/3, 4/3, -8/3 -> V = 3/2 · (96/9) / 144 = 1/9. Independent: s² = 12/11 · 2/9, V = s²/12.
    rows = [_vqa(f"gs-{apartment}-l0-v{frame}-{k:02d}", apartment != "cook_oysters")
            for apartment in ("make_fried_rice", "wash_a_wool_coat", "cook_oysters") for frame in (0, 1) for k in (0, 1)]
    cell = summarize_vqa(rows)["cells"]["single_frame/all"]
    assert cell["accuracy"] == pytest.approx(200 / 3) and cell["n"] == 12 and cell["clusters"] == 3
    assert cell["se_clustered"] == pytest.approx(100 / 3)
    assert cell["ci_clustered"] == pytest.approx(_interval(2 / 3, 1 / 3))
    independent_se = math.sqrt(12 / 11 * 2 / 9 / 12)
    assert cell["se_independent"] == pytest.approx(100 * independent_se)
    assert cell["ci_independent"] == pytest.approx(_interval(2 / 3, independent_se))
    assert cell["ci_clustered"][1] - cell["ci_clustered"][0] > cell["ci_independent"][1] - cell["ci_independent"][0]
    assert summarize_vqa(rows)["per_subtype"]["single_frame/direction/object_relative"]["clusters"] == 3


def test_task_manipulation_cell_is_a_stratified_task_mean_of_independent_draws():
    # reach_dice 1,1,0 (s² = 1/3, V = 1/9), reach_tool 1,0 (s² = 1/2, V = 1/4): mean (2/3 + 1/2)/2 = 7/12,
    # V = (1/9 + 1/4) / 4 = 13/144. Every draw is its own cluster, so both intervals agree.
    outcomes = {"reach_dice": (True, True, False), "reach_tool": (True, False)}
    rows = [_vqa(f"tm-{task}-closest-{k:08x}", ok, "task_manipulation", task)
            for task, oks in outcomes.items() for k, ok in enumerate(oks)]
    summary = summarize_vqa(rows)
    cell = summary["cells"]["task_manipulation/all"]
    assert cell["accuracy"] == pytest.approx(700 / 12) and cell["clusters"] == 5
    assert cell["se_clustered"] == pytest.approx(100 * math.sqrt(13) / 12)
    assert cell["ci_clustered"] == pytest.approx(_interval(7 / 12, math.sqrt(13) / 12))
    assert cell["ci_independent"] == pytest.approx(cell["ci_clustered"])
    assert summary["per_task"]["reach_dice"]["ci_clustered"] == pytest.approx(_interval(2 / 3, 1 / 3))


def test_navigation_questions_of_one_spawn_share_a_cluster():
    # Two spawns, three questions each, one spawn all right: mean 1/2, sums ±3/2, V = 2 · 4.5 / 36 = 1/4.
    rows = [_vqa(f"tn-move_to_garage-{draw:08x}-{n:03d}", draw == 1, "task_navigation", "move_to_garage")
            for draw, ns in ((1, (0, 1, 2)), (2, (3, 4, 5))) for n in ns]
    cell = summarize_vqa(rows)["cells"]["task_navigation/all"]
    assert cell["clusters"] == 2 and cell["se_clustered"] == pytest.approx(50.0)
    assert cell["ci_clustered"] == [0.0, 100.0]


def test_ir_cells_and_per_task_intervals():
    # strict: reach_dice 1,0,1,1 (s² = 1/4, V = 1/16), reach_tool 0,1 (V = 1/4): mean 5/8, V = (5/16)/4 = 5/64.
    strict = {"reach_dice": (True, False, True, True), "reach_tool": (False, True)}
    rows = [{"id": f"ir-{task}-closest-{k:08x}", "task": task, "strict": ok, "tolerant": True,
             "label": "correct" if ok else "wrong", "parse_status": "parsed"}
            for task, oks in strict.items() for k, ok in enumerate(oks)]
    summary = summarize_ir(rows)
    cell = summary["cells"]["ir/strict"]
    assert cell["accuracy"] == pytest.approx(62.5) and cell["clusters"] == 6
    assert cell["ci_clustered"] == pytest.approx(_interval(5 / 8, math.sqrt(5) / 8))
    # Every answer right: nothing varies, the CR1 interval is a point (documented, not hidden).
    assert summary["cells"]["ir/tolerant"]["ci_clustered"] == [100.0, 100.0]
    dice = summary["per_task"]["reach_dice"]
    assert dice["strict_ci_clustered"] == pytest.approx(_interval(3 / 4, 1 / 4)) and dice["clusters"] == 4


def test_a_cell_of_one_cluster_has_no_interval():
    rows = [_vqa(f"gs-cook_oysters-l0-v0-{k:02d}", k == 0) for k in range(3)]
    cell = summarize_vqa(rows)["cells"]["single_frame/all"]
    assert cell["clusters"] == 1 and cell["ci_clustered"] is None and cell["se_clustered"] is None
    # The independent-items interval still exists: mean 1/3, s² = 3/2 · 2/9 = 1/3, V = s²/3 = 1/9, SE = 1/3.
    assert cell["se_independent"] == pytest.approx(100 / 3)
    assert cell["ci_independent"] == pytest.approx(_interval(1 / 3, 1 / 3))   # [0, 98.67]: the low end clipped
