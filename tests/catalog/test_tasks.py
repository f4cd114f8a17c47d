"""The task table against the paper's Table S2 / S5 / S9-S10 / S11 (fixtures copied from the paper)."""

from __future__ import annotations


import pytest

from bspatial.reference import load_table

from bspatial.catalog.tasks import (
    MANIPULATION_EVAL_TASKS,
    MANIPULATION_TASKS,
    N_HELDOUT_TOTAL,
    N_NAVIGATION_TOTAL,
    N_PROMPT_PROBE_TOTAL,
    NAVIGATION_TASKS,
    TASK_ALIASES,
    TASKS,
    TRAIN_ONLY_TASKS,
    canonical_task_name,
    get_task,
)



def _rows(name: str) -> list[dict[str, str]]:
    return load_table(name.removesuffix(".csv"))


def test_counts_of_tasks():
    assert len(MANIPULATION_TASKS) == 15
    assert len(MANIPULATION_EVAL_TASKS) == 14
    assert len(NAVIGATION_TASKS) == 10
    assert TRAIN_ONLY_TASKS == ("place_saucer",)
    assert len(TASKS) == 25


def test_split_totals_match_the_paper():
    assert sum(TASKS[t].n_heldout for t in TASKS) == N_HELDOUT_TOTAL == 469
    assert sum(TASKS[t].n_prompt_probe for t in TASKS) == N_PROMPT_PROBE_TOTAL == 700
    assert sum(TASKS[t].n_navigation for t in TASKS) == N_NAVIGATION_TOTAL == 401


def test_every_table_s2_row_matches():
    rows = _rows("tableS2_tasks.csv")
    assert [r["task"] for r in rows] == list(TASKS)
    for row in rows:
        spec = get_task(row["task"])
        assert spec.family == row["family"]
        assert spec.category == row["category"]
        assert spec.example_instruction == row["example_instruction"]
        n = int(row["n_heldout"])
        assert (spec.n_navigation if spec.is_navigation else spec.n_heldout) == n, row["task"]


def test_variants_follow_table_s2():
    for row in _rows("tableS2_tasks.csv"):
        spec = get_task(row["task"])
        if not row["variants"]:
            assert spec.variants == ()
            continue
        parts = row["variants"].split(" x ")
        relations = tuple(parts[0].split("|"))
        references = tuple(parts[1].split("|")) if len(parts) == 2 else ()
        assert spec.relations == relations, row["task"]
        assert spec.references == references, row["task"]
        assert len(spec.variants) == len(relations) * max(1, len(references))
    assert get_task("reach_pizza_plate").variants[:3] == (
        "closest/fridge", "closest/black chair", "closest/white chair")


def test_every_table_s5_task_is_an_evaluated_manipulation_task():
    s5 = _rows("tableS5_baseline_per_task.csv")
    assert {r["task"] for r in s5} == set(MANIPULATION_EVAL_TASKS)
    for row in s5:
        assert get_task(row["task"]).n_heldout == int(row["n"])
        assert get_task(row["task"]).n_prompt_probe == 50


def test_table_s9_s10_short_names_resolve():
    names = {r["task"] for r in _rows("tableS9_S10_dot_ir_scaling.csv")} - {"POOLED"}
    assert {canonical_task_name(n) for n in names} == set(MANIPULATION_EVAL_TASKS)
    assert get_task("place_tupperware").name == "place_tupperware_in_fridge"
    assert get_task("place_bowl").name == "place_bowl_in_cabinet"
    assert set(TASK_ALIASES.values()) <= set(TASKS)


def test_navigation_tasks_match_table_s11():
    s11 = {r["task"] for r in _rows("tableS11_navigation.csv")} - {"POOLED"}
    assert s11 == set(NAVIGATION_TASKS)
    assert get_task("move_to_table_near_sofa").n_navigation == 41
    assert all(get_task(t).n_heldout == 0 and get_task(t).scene for t in NAVIGATION_TASKS)


@pytest.mark.parametrize("spelling,name", [
    ("reach_paperback.book", "reach_paperback_book"),
    ("reach.hardback", "reach_hardback"),
    ("move_to_table.in.kitchen", "move_to_table_in_kitchen"),
    ("place_carving.knife", "place_carving_knife"),
])
def test_dotted_table_s2_spellings_resolve(spelling, name):
    assert canonical_task_name(spelling) == name


def test_unknown_task_lists_known_names():
    with pytest.raises(ValueError, match="unknown task 'reach_moon'.*reach_food_item.*place_bowl"):
        get_task("reach_moon")
    with pytest.raises(ValueError, match="task must be a string"):
        get_task(3)  # type: ignore[arg-type]


def test_families_by_task():
    assert get_task("reach_soda_can").family == "reach_base_proximity"
    assert {get_task(t).family for t in ("place_carving_knife", "place_saucer")} == {"directional_placement"}
    assert {get_task(t).family for t in ("place_bowl", "place_tupperware")} == {"container_placement"}
    reach_contact = [t for t in MANIPULATION_EVAL_TASKS if get_task(t).family == "reach"]
    assert len(reach_contact) == 10  # Table S4: food, item, plate, toys, dice, paperback, pizza, storage, tool, hardback


def test_registry_is_read_only():
    with pytest.raises(TypeError):
        TASKS["new"] = TASKS["reach_tool"]  # type: ignore[index]
