"""Placement experts: one seed of each placement task ends "correct" under the Table S4 rules (scored
again from the recorded trace), and the same script aimed at a goal on the other side of the reference /
in another layer is scored "wrong" (the rules, not the expert, decide)."""


import pytest

from bspatial.scoring.action import outcome_from_trace
from bspatial.tasks import get_task, sample_instance, task_names
from bspatial.tasks.episode import run_episode
from bspatial.tasks.experts import (ContainerPlacementExpert, DirectionalPlacementExpert, EXPERTS, make_expert)
from bspatial.tasks.experts.references import goal_in_layer, mirrored_goal

pytestmark = [pytest.mark.sim]

PLACEMENT_TASKS = [n for n in task_names()
                   if get_task(n).spec.family in ("directional_placement", "container_placement")]


def test_all_placement_tasks_are_covered():
    assert sorted(PLACEMENT_TASKS) == ["place_bowl_in_cabinet", "place_carving_knife", "place_saucer",
                                       "place_tupperware_in_fridge"]
    assert EXPERTS["directional_placement"] is DirectionalPlacementExpert
    assert EXPERTS["container_placement"] is ContainerPlacementExpert


CASES = [("place_carving_knife", "right/microwave"), ("place_saucer", "left/kettle"),
         ("place_tupperware_in_fridge", "6"), ("place_bowl_in_cabinet", "1")]


@pytest.mark.parametrize("task,variant", CASES)
def test_placement_expert_is_correct(sim, task, variant):
    inst = sample_instance(task, variant, 1)
    sim.load(inst.scene)
    result = run_episode(sim, inst, make_expert(sim, inst))
    assert result.status == "decided", (task, variant, result.outcome)
    assert result.outcome.outcome == "correct", (task, variant, result.outcome)
    trace = result.trace
    assert outcome_from_trace(trace) == result.outcome
    assert trace.object_held.any() and not trace.object_held[-1] and len(trace.release_steps) == 1
    assert trace.num_steps == result.steps <= inst.step_budget


@pytest.mark.parametrize("task,variant,misdirect", [
    ("place_saucer", "left/coffee maker", mirrored_goal),
    ("place_tupperware_in_fridge", "4", lambda inst: goal_in_layer(inst, 5)),
])
def test_wrong_placement_is_scored_wrong(sim, task, variant, misdirect):
    inst = sample_instance(task, variant, 2)
    wrong = misdirect(inst)
    sim.load(wrong.scene)
    result = run_episode(sim, wrong, make_expert(sim, wrong))
    assert result.outcome.outcome == "wrong", result.outcome
    assert result.outcome.detail in ("on_opposite_side", "wrong_compartment")
