"""Spa-Bench conditions through the rollout runner, and the condition / failure-mode tables."""

import csv

import pytest

from bspatial.evaluation.rollout.episodes import load_results
from bspatial.evaluation.rollout.runner import run_rollouts
from bspatial.evaluation.rollout.plan import RunSettings
from bspatial.evaluation.rollout.spa_bench import condition_rows, failure_mode_rows
from bspatial.evaluation.rollout.tables import write_tables
from bspatial.scoring.failure_modes import FAILURE_MODES

pytestmark = [pytest.mark.slow]


def test_direct_and_paraphrase_conditions_keep_the_scenes_and_change_the_words(tmp_path):
    spatial = run_rollouts("scripted", "held_out", ["reach_toys"], tmp_path / "s", n_episodes=2)
    direct = run_rollouts("scripted", "held_out", ["reach_toys"], tmp_path / "d", RunSettings(condition="direct"),
                          n_episodes=2)
    para = run_rollouts("scripted", "held_out", ["reach_toys"], tmp_path / "p", RunSettings(condition="paraphrase"),
                        n_episodes=2)
    assert spatial.planned == direct.planned == para.planned == 2
    s, d, p = (load_results(tmp_path / k) for k in "sdp")
    for a, b, c in zip(s, d, p):
        assert a["seed"] == b["seed"] == c["seed"] and (b["condition"], c["condition"]) == ("direct", "paraphrase")
        assert c["instruction"] != a["instruction"] and c["instruction"].startswith("Touch the ")
        if b["status"] == "not_applicable":
            assert "cannot be named" in b["message"] and b["trace"] is None
        else:
            assert b["instruction"].startswith("Reach the ") and "largest" not in b["instruction"]
            assert b["outcome"] == "correct"      # the expert reaches the same target
        # The scene is the same, so the scripted expert touches the same object: same outcome and length.
        assert (c["outcome"], c["steps"]) == (a["outcome"], a["steps"])
    written = write_tables([tmp_path / k for k in "sdp"], tmp_path / "tables")
    table = written["spa_bench_conditions.md"].read_text()
    assert "| direct |" in table and "| paraphrase |" in table
    # Table 4 is the paper's protocol only: the two extra conditions do not add episodes to it.
    import csv

    (row,) = list(csv.DictReader(written["table4.csv"].open()))
    assert row["held_out_n"] == "2"
    assert "failure_modes.md" in written


def test_cross_task_objects_keep_the_target_and_leave_placements_out_of_the_aggregate(tmp_path):
    run_rollouts("scripted", "held_out", ["reach_tool", "place_carving_knife"], tmp_path / "s", n_episodes=2)
    run_rollouts("scripted", "held_out", ["reach_tool", "place_carving_knife"], tmp_path / "x",
                 RunSettings(condition="cross_task"), n_episodes=2)
    spatial = {(r["task"], r["index"]): r for r in load_results(tmp_path / "s")}
    for r in load_results(tmp_path / "x"):
        if r["task"] == "place_carving_knife":
            assert r["status"] == "not_applicable" and "admits no cross-task objects" in r["message"]
            continue
        assert r["instruction"].startswith("Reach the carving knife on the ")
        assert spatial[(r["task"], r["index"])]["instruction"].replace("tool", "carving knife") == r["instruction"]
        assert r["trace"]["candidate_names"][0].startswith("carving_knife_")
        assert r["outcome"] == "correct"           # the privileged expert reaches the same slot
    written = write_tables([tmp_path / "s", tmp_path / "x"], tmp_path / "tables")
    rows = {r["condition"]: r for r in csv.DictReader(written["spa_bench_conditions.csv"].open())}
    # Spa-Bench's strict aggregate leaves out tasks no other-task object fits: n counts reach_tool only.
    assert (rows["cross_task"]["n"], rows["cross_task"]["not_applicable"]) == ("2", "2")
    assert rows["cross_task"]["paired_difference"].startswith("+0.0 ")


def test_no_intervention_scripted_stays_still_and_random_does_not(tmp_path):
    run_rollouts("scripted", "held_out", ["place_carving_knife"], tmp_path / "s",
                 RunSettings(max_steps=60, condition="no_intervention"), n_episodes=1)
    run_rollouts("random", "held_out", ["place_carving_knife"], tmp_path / "r",
                 RunSettings(max_steps=60, condition="no_intervention"), n_episodes=1)
    (still,), (moving,) = load_results(tmp_path / "s"), load_results(tmp_path / "r")
    assert (still["outcome"], still["detail"]) == ("correct", "goal_left_alone")
    assert (moving["outcome"], moving["detail"]) == ("none", "acted")
    assert (still["failure_mode"], moving["failure_mode"]) == ("success", "acted_unnecessarily")
    assert isinstance(moving["secondary_modes"], list)
    assert still["steps"] == moving["steps"] == 60      # nothing decides a no-intervention episode early
    with pytest.raises(ValueError, match="unknown condition 'loud'; known conditions: spatial, direct"):
        run_rollouts("scripted", "held_out", ["reach_toys"], tmp_path / "x", RunSettings(condition="loud"))
    with pytest.raises(ValueError, match="manipulation splits only"):
        run_rollouts("scripted", "navigation", ["move_to_oven"], tmp_path / "x", RunSettings(condition="direct"))
    with pytest.raises(ValueError, match="other settings"):
        run_rollouts("scripted", "held_out", ["place_carving_knife"], tmp_path / "s", RunSettings(max_steps=60),
                     n_episodes=1)


def _rec(condition, index, ok, mode="missed_target", status="decided"):
    return {"policy": "ckpt", "split": "held_out", "condition": condition, "task": "reach_toys", "index": index,
            "outcome": "correct" if ok else "none", "status": status, "failure_mode": "success" if ok else mode}


def test_paired_contrast_matches_scenes_by_task_and_index():
    # Scenes 0..5: spatial succeeds on 0, 1; direct on 0, 2, 3, 4; scene 5 is not applicable for direct.
    records = [_rec("spatial", i, i in (0, 1)) for i in range(6)]
    records += [_rec("direct", i, i in (0, 2, 3, 4)) for i in range(5)]
    records += [_rec("direct", 5, False, status="not_applicable")]
    spatial, direct = condition_rows(records)
    assert (spatial["condition"], spatial["n"], spatial["paired_difference"]) == ("spatial", 6, "-")
    assert (direct["n"], direct["not_applicable"]) == (5, 1)
    # 5 matched pairs: direct-only successes 3 (scenes 2, 3, 4), spatial-only 1 (scene 1): +40.0 points.
    assert direct["paired_difference"].startswith("+40.0 [") and direct["paired_difference"].endswith("(n=5)")
    assert direct["success"].startswith("80.0 [")


def test_failure_mode_rows_count_every_label():
    records = [_rec("spatial", 0, True), _rec("spatial", 1, False, "wrong_object"),
               _rec("spatial", 2, False, "wrong_object"), _rec("spatial", 3, False, "no_action")]
    (row,) = failure_mode_rows(records)
    assert row["n"] == 4 and set(FAILURE_MODES) <= set(row)
    assert (row["success"], row["wrong_object"], row["no_action"], row["wrong_relation"]) == \
        ("1 (25.0%)", "2 (50.0%)", "1 (25.0%)", "0 (0.0%)")


def test_id_and_ood_rollouts_land_in_the_spa_bench_table_not_in_table4(tmp_path):
    run_rollouts("scripted", "spa_id", ["reach_dice"], tmp_path / "id", n_episodes=1)
    run_rollouts("scripted", "spa_ood", ["reach_dice"], tmp_path / "ood", n_episodes=1)
    (ident,), (ood,) = load_results(tmp_path / "id"), load_results(tmp_path / "ood")
    assert ood["variant"] == "farthest/wall" and ident["variant"] != "farthest/wall"
    assert ood["trace"]["split"] == ident["trace"]["split"] == "held_out"
    assert ood["outcome"] == "correct"                 # the privileged expert is not limited by training
    written = write_tables([tmp_path / "id", tmp_path / "ood"], tmp_path / "tables")
    table = written["spa_bench_conditions.md"].read_text()
    assert "| spa_id |" in table and "| spa_ood |" in table
    assert "table4.md" not in written and "table_s11.md" not in written
    with pytest.raises(ValueError, match="has no spa_ood episodes"):
        run_rollouts("scripted", "spa_ood", ["place_bowl_in_cabinet"], tmp_path / "x")


def test_no_intervention_keeps_its_meaning_for_the_idle_reference(tmp_path):
    # Under the progress-requiring soft rules, holding still is still what no-intervention rewards (the condition
    # exists for placement tasks: their goal can already hold).
    run_rollouts("hold", "held_out", ["place_carving_knife", "place_bowl_in_cabinet"], tmp_path,
                 RunSettings(max_steps=60, condition="no_intervention"), n_episodes=1)
    assert [(r["outcome"], r["detail"]) for r in load_results(tmp_path)] == [("correct", "goal_left_alone")] * 2
