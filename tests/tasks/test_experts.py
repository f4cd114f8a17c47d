"""Scripted experts and the episode runner: the reach expert solves every reach task (strict Table S4
outcome from the recorded trace), the rules can fail (a standing-still policy is not correct), traces
round-trip through to_dict / from_dict, and physics errors end an episode as sim_error."""

import json

import numpy as np
import pytest

from bspatial.scoring.action import outcome_from_trace
from bspatial.scoring.trace import EpisodeTrace
from bspatial.tasks import get_task, sample_instance, task_names
from bspatial.tasks.episode import EEF_LINKS, run_episode
from bspatial.tasks.experts import make_expert

pytestmark = [pytest.mark.slow, pytest.mark.sim]

REACH_TASKS = [n for n in task_names() if get_task(n).spec.family in ("reach", "reach_base_proximity")]


def test_all_reach_tasks_are_covered():
    assert len(REACH_TASKS) == 11 and "reach_soda_can" in REACH_TASKS


@pytest.mark.parametrize("task", REACH_TASKS)
def test_reach_expert_solves_every_reach_task(sim, task):
    variants = get_task(task).variants
    variant = variants[len(task) % len(variants)]   # a different variant per task, deterministic
    inst = sample_instance(task, variant, 1)
    sim.load(inst.scene)
    result = run_episode(sim, inst, make_expert(sim, inst))
    assert result.status == "decided", (task, variant, result.outcome)
    assert result.outcome.outcome == "correct", (task, variant, result.outcome)
    trace = result.trace
    assert trace.eef_contacts[-1, inst.instructed_candidate]
    assert trace.num_steps == result.steps <= inst.step_budget


def test_hold_policy_is_not_correct_and_trace_round_trips(sim):
    inst = sample_instance("reach_soda_can", "closest/sofa", 0)
    sim.load(inst.scene)
    hold = sim.hold_action()
    result = run_episode(sim, inst, lambda obs: hold, max_steps=20)
    assert result.status == "timeout" and result.steps == 20
    assert result.outcome.outcome == "none"          # nothing touched, base 1 m+ from every can
    trace = result.trace
    assert trace.family == "reach_base_proximity" and trace.base_poses.shape == (20, 3)
    again = EpisodeTrace.from_dict(json.loads(json.dumps(trace.to_dict())))
    for name in ("eef_positions", "candidate_positions", "eef_contacts", "base_poses"):
        np.testing.assert_array_equal(getattr(again, name), getattr(trace, name))
    assert again.candidate_names == inst.candidates and again.instructed_candidate == inst.instructed_candidate
    assert outcome_from_trace(again) == result.outcome


def test_random_policy_is_not_correct(sim):
    inst = sample_instance("reach_plate", "largest", 2)
    sim.load(inst.scene)
    rng = np.random.default_rng(0)
    home = sim.hold_action()

    def random_policy(obs):
        action = home.copy()
        action[7:14] += rng.normal(0, 0.05, 7)
        action[15:22] += rng.normal(0, 0.05, 7)
        return action

    result = run_episode(sim, inst, random_policy, max_steps=30)
    assert result.outcome.outcome != "correct"


def test_placement_trace_fields(sim):
    inst = sample_instance("place_saucer", "left/coffee maker", 0)
    sim.load(inst.scene)
    hold = sim.hold_action()
    result = run_episode(sim, inst, lambda obs: hold, max_steps=10)
    trace = result.trace
    assert trace.object_positions.shape == (10, 3) and not trace.object_held.any()
    assert trace.countertop is inst.countertop and trace.candidate_positions is None
    assert result.outcome.outcome == "none" and result.outcome.detail == "timeout"
    again = EpisodeTrace.from_dict(trace.to_dict())
    np.testing.assert_array_equal(again.countertop.polygon, trace.countertop.polygon)


def test_sim_error_ends_the_episode(sim):
    inst = sample_instance("reach_item", "largest", 0)
    sim.load(inst.scene)
    hold = sim.hold_action()

    def exploding(obs):
        if obs.step < 3:
            return hold
        action = hold.copy()
        action[7] = np.nan
        return action

    result = run_episode(sim, inst, exploding)
    assert result.status == "sim_error" and result.steps == 4 and result.trace.num_steps == 3
    assert "non-finite" in result.message


def test_bad_max_steps_and_family(sim):
    inst = sample_instance("reach_item", "largest", 0)
    sim.load(inst.scene)
    with pytest.raises(ValueError, match="max_steps"):
        run_episode(sim, inst, lambda obs: None, max_steps=inst.step_budget + 1)
    assert all(link.startswith("robot/") for link in EEF_LINKS)
