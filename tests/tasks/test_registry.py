"""Registry contract, variants, instruction wording and the retry budget."""

import json

import numpy as np
import pytest

from bspatial.catalog.tasks import MANIPULATION_TASKS, NAVIGATION_TASKS, TASKS
from bspatial.tasks import base, registry
from bspatial.tasks.budgets import BUDGET_FILE
from bspatial.tasks.registry import get_task, make_registry, sample_instance, task_names

pytestmark = [pytest.mark.sim]


def test_registry_covers_the_manipulation_tasks_in_table_order():
    assert task_names() == MANIPULATION_TASKS
    assert len(task_names()) == 15 and "place_saucer" in task_names()


def test_aliases_and_dotted_names_resolve():
    assert get_task("place_bowl").name == "place_bowl_in_cabinet"
    assert get_task("reach_paperback.book").name == "reach_paperback_book"


def test_unknown_task_lists_known_ones():
    with pytest.raises(ValueError, match="unknown task 'fly'; known tasks: reach_food_item, .*place_bowl_in_cabinet"):
        get_task("fly")
    with pytest.raises(ValueError, match="known tasks: reach_food_item, .*move_to_oven"):
        get_task("move_to_moon")
    assert get_task("move_to_garage").name == "move_to_garage"


def test_unknown_variant_lists_known_ones():
    with pytest.raises(ValueError, match=r"variant of task 'reach_plate' must be one of \['largest', '2nd largest'"):
        sample_instance("reach_plate", "huge", 0)


def test_duplicate_names_raise():
    build = registry.REGISTRY["reach_plate"]
    with pytest.raises(ValueError, match="duplicate task name 'reach_plate'"):
        make_registry([("reach_plate", build), ("reach_plate", build)])


def test_variants_follow_task_specs():
    for name in task_names():
        assert get_task(name).variants == TASKS[name].variants


@pytest.mark.parametrize("name", MANIPULATION_TASKS)
def test_instruction_of_the_table_s2_example_matches_word_for_word(name):
    """Snapshot: the variant the Table S2 example instantiates yields exactly the example sentence."""
    task = get_task(name)
    texts = {}
    for variant in task.variants:
        texts[variant] = task.sample(variant, np.random.default_rng(0), seed=0).instruction
    assert TASKS[name].example_instruction in texts.values()
    assert len(set(texts.values())) == len(texts)     # every variant reads differently


def test_retry_budget_raises_naming_task_and_seed():
    def always_rejects(spec, variant, rng):
        raise base.LayoutRejected("no room")

    task = base.Task(spec=TASKS["reach_plate"], generator=always_rejects, step_budget=1)
    with pytest.raises(ValueError, match=r"task 'reach_plate' \(variant 'largest', seed 7\) could not place .*no room"):
        task.sample("largest", np.random.default_rng(7), seed=7)


def test_sampling_is_deterministic_in_the_seed():
    a, b = sample_instance("reach_toys", "3rd largest", 5), sample_instance("reach_toys", "3rd largest", 5)
    assert a.target == b.target and a.candidates == b.candidates
    assert [o.pose.position for o in a.scene.objects] == [o.pose.position for o in b.scene.objects]


def test_budgets_come_from_the_calibration_file():
    calibrated = json.loads(BUDGET_FILE.read_text())["tasks"]
    for name in (*task_names(), *NAVIGATION_TASKS):
        assert get_task(name).step_budget == calibrated[name]["budget"] > 0
