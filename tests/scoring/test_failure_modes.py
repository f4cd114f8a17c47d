"""Failure-mode labels on hand-built traces of every family."""

import numpy as np
import pytest

from bspatial.scoring.action import outcome_from_trace
from bspatial.scoring.failure_modes import (FAILURE_MODES, PRIMARY_FAILURE_MODES, candidate_category,
                                            failure_mode_counts, no_intervention_mode, primary_failure_mode,
                                            secondary_annotations)
from bspatial.scoring.trace import ContainerGeometry, CountertopGeometry, EpisodeTrace

HEADER = {"split": "held_out", "variant": "v", "instruction": "do it", "seed": 1, "step_budget": 50}
CANDS = [[1.0, 0.0, 1.0], [1.0, 0.5, 1.0]]          # target 0, distractor 1
PARKED = [5.0, 5.0, 1.0]


def reach(path, contacts=(), task="reach_tool"):
    path = np.asarray(path, float)
    eef = np.stack([path, np.tile(PARKED, (len(path), 1))], axis=1)
    touch = np.zeros((len(path), 2), bool)
    for step, k in contacts:
        touch[step, k] = True
    return EpisodeTrace(task=task, **HEADER, eef_positions=eef, candidate_names=("a", "b"), instructed_candidate=0,
                        candidate_positions=np.tile(CANDS, (len(path), 1, 1)), eef_contacts=touch)


def test_reach_labels():
    assert primary_failure_mode(reach([[0, 0, 1], [0.95, 0, 1]], [(1, 0)])) == "success"
    assert primary_failure_mode(reach([[0, 0, 1], [0.95, 0.5, 1]], [(1, 1)])) == "wrong_object"
    # No contact, closest approach to the distractor: heading for the wrong object.
    assert primary_failure_mode(reach([[0, 0, 1], [0.8, 0.5, 1]])) == "wrong_object"
    # No contact, closest approach to the target: the right object, never touched.
    assert primary_failure_mode(reach([[0, 0, 1], [0.8, 0.0, 1]])) == "missed_target"
    # Jitter below the threshold is no action, even when it happens to be closer to a candidate.
    assert primary_failure_mode(reach([[0, 0, 1], [0.02, 0.01, 1], [0.0, 0.02, 1]])) == "no_action"


def test_a_wrong_commitment_at_the_first_step_is_the_wrong_object_not_no_action():
    # The distractor sits 2 cm from where the hand starts: touching it at step 1 moves the hand less than
    # NO_ACTION_EEF_M, yet the episode is decided (Table S4 "wrong"): the policy selected the wrong object.
    trace = reach([[1.0, 0.48, 1.0], [1.0, 0.495, 1.0]], [(1, 1)])
    assert outcome_from_trace(trace).outcome == "wrong"
    assert primary_failure_mode(trace) == "wrong_object"
    # The same hand touching nothing stays a frozen policy.
    assert primary_failure_mode(reach([[1.0, 0.48, 1.0], [1.0, 0.495, 1.0]])) == "no_action"


def test_a_soda_base_that_starts_committed_to_a_distractor_is_the_wrong_object():
    # Soda's rule commits on the final base pose: a base that starts (and stays) within the proximity
    # radius of a distractor can decides the episode as wrong without moving.
    still = np.tile([1.0, 0.45, 0.0], (3, 1))  # 5 cm from can 1, 45 cm from can 0 (instructed)
    hand = np.tile([[1.0, 0.4, 0.5], PARKED], (3, 1, 1))
    trace = EpisodeTrace(task="reach_soda_can", **HEADER, eef_positions=hand, candidate_names=("a", "b"),
                         instructed_candidate=0, candidate_positions=np.tile(CANDS, (3, 1, 1)),
                         eef_contacts=np.zeros((3, 2), bool), base_poses=still)
    assert outcome_from_trace(trace).outcome == "wrong"
    assert primary_failure_mode(trace) == "wrong_object"


COUNTER = CountertopGeometry(plane_height=0.9, polygon=[[-1, -1], [1, -1], [1, 1], [-1, 1]],
                             reference_center=[0.0, 0.0], right_axis=[0.0, -1.0], instructed_side="right")


def placement(final_xy, *, moved=True, held_at_end=False, final_z=0.92):
    start = [0.5, 0.5, 0.92]
    path = [start, [0.4, 0.4, 1.1], [*final_xy, final_z]] if moved else [start] * 3
    held = [False, True, held_at_end] if moved else [False] * 3
    return EpisodeTrace(task="place_carving_knife", **HEADER, object_positions=path, object_held=held,
                        countertop=COUNTER)


def test_directional_placement_labels():
    assert primary_failure_mode(placement([0.0, -0.4])) == "success"              # right of the reference
    assert primary_failure_mode(placement([0.0, 0.4])) == "wrong_relation"        # opposite side
    assert primary_failure_mode(placement([0.05, 0.0])) == "wrong_relation"       # on the reference
    assert primary_failure_mode(placement([0.0, 0.4], final_z=0.02)) == "transport_failure"  # floor drop
    assert primary_failure_mode(placement([0.0, 0.4], held_at_end=True)) == "transport_failure"
    assert primary_failure_mode(placement([0, 0], moved=False)) == "no_action"


def test_container_labels():
    container = ContainerGeometry(footprint=[[2, -0.5], [3, -0.5], [3, 0.5], [2, 0.5]],
                                  compartment_bands=[[0.1, 0.3], [0.4, 0.6]], instructed_compartment=1)

    def trace(final):
        return EpisodeTrace(task="place_bowl_in_cabinet", **HEADER, object_positions=[[1, 0, 0.8], [2.5, 0, 0.9], final],
                            object_held=[False, True, False], container=container)

    assert primary_failure_mode(trace([2.5, 0, 0.5])) == "success"
    assert primary_failure_mode(trace([2.5, 0, 0.2])) == "wrong_relation"
    assert primary_failure_mode(trace([1.5, 0, 0.02])) == "transport_failure"


def test_navigation_and_counts():
    moving = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0.0]])
    still = np.zeros((3, 3))
    nav = [EpisodeTrace(task="move_to_bar", **HEADER, base_poses=b, nav_success=s)
           for b, s in ((moving, True), (moving, False), (still, False))]
    assert [primary_failure_mode(t) for t in nav] == ["success", "navigation_failure", "no_action"]
    counts = failure_mode_counts(nav)
    assert list(counts) == list(FAILURE_MODES)
    assert counts == {"success": 1, "no_action": 1, "acted_unnecessarily": 0, "wrong_object": 0, "wrong_instance": 0,
                      "wrong_relation": 0, "missed_target": 0, "grasp_failure": 0, "transport_failure": 0,
                      "navigation_failure": 1}


@pytest.mark.parametrize("bad", ["wrongish"])
def test_an_outcome_passed_in_is_used(bad):
    from bspatial.scoring.action import EpisodeOutcome

    trace = reach([[0, 0, 1], [0.8, 0.0, 1]])
    assert primary_failure_mode(trace, EpisodeOutcome("correct", False, "contact_target")) == "success"
    with pytest.raises(ValueError, match=f"outcome must be one of .*got '{bad}'"):
        EpisodeOutcome(bad, False, "x")


def test_nine_primary_modes_plus_success():
    # Spa-Bench Appendix E: nine mutually exclusive primary modes.
    assert len(PRIMARY_FAILURE_MODES) == 9 and len(set(PRIMARY_FAILURE_MODES)) == 9
    assert "success" not in PRIMARY_FAILURE_MODES and FAILURE_MODES == ("success", *PRIMARY_FAILURE_MODES)


def named_reach(names, path, contacts=()):
    trace = reach(path, contacts)
    return EpisodeTrace(task="reach_plate", **HEADER, eef_positions=trace.eef_positions, candidate_names=names,
                        instructed_candidate=0, candidate_positions=trace.candidate_positions,
                        eef_contacts=trace.eef_contacts)


def test_a_distractor_of_the_target_category_is_the_wrong_instance():
    # plate_0 instructed, plate_1 a second plate: Spa-Bench's wrong-instance selection.
    assert primary_failure_mode(named_reach(("plate_0", "plate_1"), [[0, 0, 1], [0.95, 0.5, 1]], [(1, 1)])) \
        == "wrong_instance"
    assert primary_failure_mode(named_reach(("plate_0", "plate_1"), [[0, 0, 1], [0.8, 0.5, 1]])) == "wrong_instance"
    # A lime against a cereal box: another category.
    assert primary_failure_mode(named_reach(("lime_0", "cereal_box_1"), [[0, 0, 1], [0.95, 0.5, 1]], [(1, 1)])) \
        == "wrong_object"
    assert candidate_category("cereal_box_12") == "cereal_box" and candidate_category("wall") == "wall"


def test_a_placement_never_grasped_is_a_grasp_failure():
    start = [0.5, 0.5, 0.92]
    trace = EpisodeTrace(task="place_carving_knife", **HEADER, object_positions=[start, [0.5, 0.55, 0.92], [0.5, 0.6, 0.92]],
                         object_held=[False, False, False], countertop=COUNTER)  # pushed 10 cm, never held
    assert primary_failure_mode(trace) == "grasp_failure"


def test_no_intervention_labels():
    still = placement([0, 0], moved=False)
    assert no_intervention_mode(still) == "success"
    assert no_intervention_mode(placement([0.0, -0.4])) == "acted_unnecessarily"


def test_secondary_annotations():
    # Touched the distractor (step 1), then the target (step 2): the first contact decides (Table S4 "wrong").
    trace = reach([[0, 0, 1], [0.95, 0.5, 1], [0.95, 0, 1]], [(1, 1), (2, 0)])
    assert outcome_from_trace(trace).outcome == "wrong"
    assert primary_failure_mode(trace) == "wrong_object"
    assert "touched_distractor" not in secondary_annotations(trace)    # the primary already says it
    # The hand touches only the target late: idle for 5 of 7 steps, a candidate knocked 10 cm along the way.
    path = [[0, 0, 1]] * 6 + [[0.95, 0, 1]]
    eef = np.stack([np.asarray(path, float), np.tile(PARKED, (7, 1))], axis=1)
    cands = np.tile(CANDS, (7, 1, 1))
    cands[6, 1, 1] += 0.1
    idle = EpisodeTrace(task="reach_tool", **HEADER, eef_positions=eef, candidate_names=("a", "b"),
                        instructed_candidate=0, candidate_positions=cands, eef_contacts=np.zeros((7, 2), bool))
    assert primary_failure_mode(idle) == "missed_target"
    assert secondary_annotations(idle) == ("pushed_candidate", "mostly_idle")
    # A knife grasped twice, still held at the end.
    start = [0.5, 0.5, 0.92]
    regrasp = EpisodeTrace(task="place_carving_knife", **HEADER,
                           object_positions=[start, [0.4, 0.4, 1.0], [0.4, 0.4, 0.92], [0.3, 0.3, 1.0], [0.2, 0.2, 1.0]],
                           object_held=[False, True, False, True, True], countertop=COUNTER)
    assert primary_failure_mode(regrasp) == "transport_failure"
    assert secondary_annotations(regrasp) == ("regrasped", "held_at_end")
    # Dropped on the floor and left there.
    dropped = placement([0.0, 0.4], final_z=0.02)
    assert "released_early" in secondary_annotations(dropped)
