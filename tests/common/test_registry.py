"""Every registry chosen by name on the command line answers a typo with the closest known name."""

import pytest

from bspatial.catalog.tasks import canonical_task_name
from bspatial.common.registry import by_name, lookup
from bspatial.construction.publishing.presets import get_preset as build_preset
from bspatial.evaluation.rollout.plan import resolve_tasks
from bspatial.hub import metric_script
from bspatial.modeling.training_config import get_preset as training_preset
from bspatial.reference import load_table
from bspatial.tasks.navigation import build_navigation_task
from bspatial.tasks.registry import get_task
from bspatial.world.floorplans import get_floorplan


@pytest.mark.parametrize("lookup_name, typo, hint", [
    (training_preset, "cpu_reach_dot_i", "unknown preset 'cpu_reach_dot_i' (did you mean 'cpu_reach_dot_ir'?)"),
    (build_preset, "papr", "unknown preset 'papr' (did you mean 'paper'?)"),
    (canonical_task_name, "reach_plates", "unknown task 'reach_plates' (did you mean 'reach_plate'?)"),
    (get_floorplan, "restaurant_dinner", "unknown floor plan 'restaurant_dinner' (did you mean 'restaurant_diner'?)"),
    (get_task, "move_to_fridg", "unknown task 'move_to_fridg' (did you mean 'move_to_fridge'?)"),
    (build_navigation_task, "move_to_ovn", "unknown navigation task 'move_to_ovn' (did you mean 'move_to_oven'?)"),
    (load_table, "table1_vqa", "unknown paper table 'table1_vqa' (did you mean"),
    (metric_script, "bspatial_irr", "unknown metric 'bspatial_irr' (did you mean 'bspatial_ir'?)"),
    (lambda split: resolve_tasks(split, None), "held-out", "unknown split 'held-out' (did you mean 'held_out'?)"),
    (lambda task: resolve_tasks("navigation", [task]), "move_to_garag",
     "unknown task 'move_to_garag' (did you mean 'move_to_garage'?); known tasks for split 'navigation': "),
])
def test_a_typo_names_the_closest_entry(lookup_name, typo, hint):
    with pytest.raises(ValueError) as error:
        lookup_name(typo)
    assert str(error.value).startswith(hint), str(error.value)


def test_a_name_far_from_every_entry_lists_them_without_a_guess():
    with pytest.raises(ValueError, match=r"^unknown preset 'zzz'; known presets: mini, paper$"):
        lookup({"mini": 1, "paper": 2}, "zzz", "preset")


def test_duplicates_fail_where_declared_and_distinct_names_pass():
    with pytest.raises(ValueError, match="duplicate training preset name 'tiny' \\(declared 2 times\\)"):
        by_name([("tiny", 1), ("big", 2), ("tiny", 3)], "training preset", key=lambda item: item[0])
    assert by_name([("tiny", 1), ("big", 2)], "training preset", key=lambda item: item[0]) == {
        "tiny": ("tiny", 1), "big": ("big", 2)}
