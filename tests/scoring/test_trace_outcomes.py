"""Every Table S4 rule on hand-built traces, and the EpisodeTrace schema (validation, round trip)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bspatial.catalog.thresholds import COMPARTMENT_BAND_MARGIN_M, ON_REF_RADIUS_M, SODA_BASE_PROXIMITY_M
from bspatial.scoring.action import (
    EpisodeOutcome,
    action_rates_from_traces,
    outcome_from_trace,
)
from bspatial.scoring.trace import ContainerGeometry, CountertopGeometry, EpisodeTrace

HEADER = {"split": "held_out", "variant": "v", "instruction": "do it", "seed": 7, "step_budget": 50}
FAR = [5.0, 5.0, 1.0]  # a parked end-effector, far from everything


# --- builders -------------------------------------------------------------------------------------


def reach_trace(eef_path, candidates, contacts=None, task="reach_tool", instructed=0, base=None, **extra):
    """eef_path: (T, 3) for the first arm (the second stays parked); candidates: (K, 3), static."""
    eef_path = np.asarray(eef_path, dtype=float)
    steps = len(eef_path)
    eef = np.stack([eef_path, np.tile(FAR, (steps, 1))], axis=1)
    cands = np.tile(np.asarray(candidates, dtype=float), (steps, 1, 1))
    touch = np.zeros((steps, len(candidates)), dtype=bool)
    for step, k in contacts or []:
        touch[step, k] = True
    names = tuple(f"cand{k}" for k in range(len(candidates)))
    return EpisodeTrace(task=task, **HEADER, eef_positions=eef, candidate_names=names, instructed_candidate=instructed,
                        candidate_positions=cands, eef_contacts=touch, base_poses=base, **extra)


COUNTER_Z = 0.90
REST_Z = COUNTER_Z + 0.02
COUNTER = dict(plane_height=COUNTER_Z, polygon=[[-1, -1], [1, -1], [1, 1], [-1, 1]],
               reference_center=[0.0, 0.0], right_axis=[0.0, -1.0])  # robot faces +x, so right is -y


def placement_trace(path, held, side="right", task="place_carving_knife", **counter):
    countertop = CountertopGeometry(**{**COUNTER, **counter}, instructed_side=side)
    return EpisodeTrace(task=task, **HEADER, object_positions=path, object_held=held, countertop=countertop)


BANDS = [[0.10, 0.30], [0.40, 0.60], [0.70, 0.90]]  # layers 1..3, object heights when resting
FOOTPRINT = [[2, -0.5], [3, -0.5], [3, 0.5], [2, 0.5]]


def container_trace(path, held, instructed=1, task="place_bowl_in_cabinet"):
    container = ContainerGeometry(footprint=FOOTPRINT, compartment_bands=BANDS, instructed_compartment=instructed)
    return EpisodeTrace(task=task, **HEADER, object_positions=path, object_held=held, container=container)


def label(trace):
    result = outcome_from_trace(trace)
    return result.outcome, result.soft_credit, result.detail


# --- reach (contact) ------------------------------------------------------------------------------

CANDS = [[1.0, 0.0, 1.0], [1.0, 0.5, 1.0], [1.0, -0.5, 1.0]]


def test_reach_touching_the_target_is_correct():
    trace = reach_trace([[0, 0, 1], [0.9, 0, 1]], CANDS, contacts=[(1, 0)])
    assert label(trace) == ("correct", False, "contact_target")


def test_reach_first_contact_wins():
    trace = reach_trace([[0.9, 0.5, 1], [0.9, 0, 1], [0.9, 0, 1]], CANDS, contacts=[(0, 1), (2, 0)])
    assert label(trace) == ("wrong", False, "contact_distractor")
    trace = reach_trace([[0.9, 0, 1], [0.9, 0.5, 1]], CANDS, contacts=[(0, 0), (1, 1)])
    assert label(trace) == ("correct", False, "contact_target")


def test_reach_simultaneous_first_contact_counts_the_target():
    trace = reach_trace([[0.9, 0.25, 1]], CANDS, contacts=[(0, 0), (0, 1)])
    assert label(trace) == ("correct", False, "contact_target")


def test_reach_soft_credit_uses_the_minimum_distance_over_the_episode():
    # Starts 1 m away, passes closer to the target (0.1 m) than ever to a distractor, then drifts off.
    trace = reach_trace([[0.0, 0.0, 1], [0.9, 0.0, 1], [1.0, 0.3, 1]], CANDS)
    assert label(trace) == ("none", True, "min_distance_closer_to_target")


def test_reach_holding_still_near_the_target_earns_no_soft_credit():
    # The idle exploit: the spawn is nearer the target than any distractor, and the arm never moves.
    trace = reach_trace([[0.9, 0.0, 1]] * 5, CANDS)
    assert label(trace) == ("none", False, "no_approach")


def test_reach_soft_credit_needs_half_the_start_distance_and_ten_centimetres():
    # 1.0 m -> 0.55 m: closer to the target than to any distractor, but not half the way.
    assert label(reach_trace([[0.0, 0.0, 1], [0.45, 0.0, 1]], CANDS))[2] == "no_approach"
    # 1.0 m -> 0.49 m: half the way.
    assert label(reach_trace([[0.0, 0.0, 1], [0.51, 0.0, 1]], CANDS))[1] is True
    # 0.18 m -> 0.085 m: more than half, but only 9.5 cm closer.
    assert label(reach_trace([[0.82, 0.0, 1], [0.915, 0.0, 1]], CANDS))[2] == "no_approach"


def test_reach_no_soft_credit_when_a_distractor_was_approached_closer():
    trace = reach_trace([[0.8, 0.0, 1], [1.0, 0.45, 1]], CANDS)  # 0.2 m to target, 0.05 m to cand1
    assert label(trace) == ("none", False, "timeout")


def test_reach_soft_credit_needs_strictly_closer():
    trace = reach_trace([[1.0, 0.25, 1]], CANDS[:2])  # equidistant from both candidates
    assert label(trace) == ("none", False, "timeout")


def test_reach_any_end_effector_counts():
    steps = 2
    eef = np.array([[FAR, [0.2, 0.05, 1.0]], [FAR, [1.0, 0.05, 1.0]]])  # the second arm moves to the target
    cands = np.tile(np.asarray(CANDS), (steps, 1, 1))
    trace = EpisodeTrace(task="reach_dice", **HEADER, eef_positions=eef, candidate_names=("a", "b", "c"),
                         instructed_candidate=0, candidate_positions=cands, eef_contacts=np.zeros((steps, 3), bool))
    assert label(trace) == ("none", True, "min_distance_closer_to_target")


# --- reach (base proximity, soda) -----------------------------------------------------------------

CANS = [[2.0, 0.0, 0.06], [2.0, 1.0, 0.06], [2.0, -1.0, 0.06]]


def soda(base_xy, eef=None, contacts=None, instructed=0):
    eef = eef or [[0, 0, 1], [0, 0, 1]]
    base = np.array([[0.0, 0.0, 0.0]] * (len(eef) - 1) + [[*base_xy, 0.0]])
    return reach_trace(eef, CANS, contacts=contacts, task="reach_soda_can", instructed=instructed, base=base)


def test_soda_base_near_the_instructed_nearest_can_is_correct():
    assert label(soda([2.0 - 0.65, 0.0])) == ("correct", False, "base_proximity")


def test_soda_base_near_the_instructed_can_but_another_can_nearer_is_wrong():
    # 0.61 m from the instructed can but 0.50 m from can 1: the nearest-candidate rule names can 1.
    base = [2.0 - 0.30, 0.55]
    assert np.hypot(0.30, 0.55) < SODA_BASE_PROXIMITY_M
    assert label(soda(base)) == ("wrong", False, "base_proximity_distractor")


def test_soda_base_too_far_falls_back_to_the_soft_rule():
    far = soda([2.0 - (SODA_BASE_PROXIMITY_M + 0.01), 0.0], eef=[[0.5, 0, 0.3], [1.6, 0, 0.3]])
    assert label(far) == ("none", True, "min_distance_closer_to_target")


def test_soda_base_proximity_boundary_is_inclusive():
    assert label(soda([2.0 - SODA_BASE_PROXIMITY_M, 0.0]))[0] == "correct"


def test_soda_contact_precedes_base_proximity():
    trace = soda([2.0 - 0.3, 0.0], eef=[[2, 1, 0.1], [2, 1, 0.1]], contacts=[(0, 1)])
    assert label(trace) == ("wrong", False, "contact_distractor")


def test_soda_tied_nearest_cans_satisfy_no_nearest_candidate_rule():
    trace = soda([2.0, 0.5])  # exactly between can 0 and can 1, 0.5 m from each
    # Not committed, so the eef soft rule decides: the arm stayed parked at the origin (nearest can 0,
    # but never approached it), so no soft credit either.
    assert label(trace) == ("none", False, "no_approach")


# --- directional placement ------------------------------------------------------------------------


def released_at(xy, z=REST_Z):
    return [[-0.5, 0.0, 1.0], [-0.2, 0.0, 1.0], [xy[0], xy[1], z]], [True, True, False]


def test_placement_on_the_instructed_side_is_correct():
    assert label(placement_trace(*released_at([0.0, -0.3]))) == ("correct", False, "on_instructed_side")


def test_placement_on_the_opposite_side_is_wrong():
    assert label(placement_trace(*released_at([0.0, 0.3]))) == ("wrong", False, "on_opposite_side")


def test_placement_within_the_on_ref_radius_gets_nothing():
    assert label(placement_trace(*released_at([0.0, -0.1]))) == ("none", False, "on_ref")
    assert label(placement_trace(*released_at([0.0, -ON_REF_RADIUS_M])))[0] == "correct"  # "at least 0.17 m"


def test_placement_floor_drop_on_the_right_side_gets_no_soft_credit():
    path, held = released_at([0.0, -0.5], z=0.03)  # right of the reference, but on the floor
    assert label(placement_trace(path, held)) == ("none", False, "floor_drop")


def test_placement_off_the_countertop():
    assert label(placement_trace(*released_at([0.0, -1.5]))) == ("none", False, "off_countertop")
    assert label(placement_trace(*released_at([0.0, -0.5], z=1.3)))[2] == "off_countertop"  # on top of an appliance


def test_placement_still_held_on_the_instructed_side_earns_soft_credit():
    path, held = [[-0.5, 0.0, 1.0], [0.0, -0.4, 1.0]], [True, True]
    assert label(placement_trace(path, held)) == ("none", True, "held_on_side")
    assert label(placement_trace(path, held, side="left")) == ("none", False, "held_not_on_side")


def test_placement_held_on_the_side_where_it_started_is_not_carried():
    # Picked up where it lay, already right of the reference: lifted, never carried.
    path, held = [[0.0, -0.4, REST_Z], [0.02, -0.42, 1.05]], [True, True]
    assert label(placement_trace(path, held)) == ("none", False, "held_not_carried")


def test_placement_never_grasped_is_a_timeout():
    path, held = [[0.0, -0.5, REST_Z]] * 2, [False, False]
    assert label(placement_trace(path, held)) == ("none", False, "timeout")


def test_placement_side_follows_the_robot_right_axis():
    # Robot faces -y, so its right is -x; "left" of the reference is then +x.
    path, held = released_at([0.4, 0.0])
    trace = placement_trace(path, held, side="left", right_axis=[-2.0, 0.0], task="place_saucer")
    assert label(trace) == ("correct", False, "on_instructed_side")


# --- container placement --------------------------------------------------------------------------

OUTSIDE = [1.0, 0.0, 0.9]


def test_container_resting_in_the_instructed_compartment_is_correct():
    path, held = [OUTSIDE, [2.5, 0.0, 0.55], [2.5, 0.0, 0.45]], [True, True, False]
    assert label(container_trace(path, held)) == ("correct", False, "in_instructed_compartment")


def test_container_other_compartment_is_wrong():
    path, held = [OUTSIDE, [2.5, 0.0, 0.8], [2.5, 0.0, 0.75]], [True, True, False]
    assert label(container_trace(path, held)) == ("wrong", False, "wrong_compartment")


def test_container_overshoot_after_passing_through_the_band_gets_no_soft_credit():
    # Enters the footprint low, rises through the instructed band (0.40-0.60) and peaks at 0.80.
    path = [OUTSIDE, [2.5, 0.0, 0.35], [2.5, 0.0, 0.50], [2.5, 0.0, 0.80], [2.5, 0.0, 0.80]]
    assert label(container_trace(path, [True] * 5)) == ("none", False, "overshoot")


def test_container_peak_in_band_while_held_earns_soft_credit():
    path = [OUTSIDE, [2.5, 0.0, 0.35], [2.5, 0.0, 0.58], [2.2, 0.0, 0.50]]
    assert label(container_trace(path, [True] * 4)) == ("none", True, "peak_in_band")


def test_container_held_still_inside_the_footprint_at_band_height_is_not_carried():
    path = [[2.5, 0.0, 0.5]] * 4   # starts inside the footprint, in the instructed band, never moves
    assert label(container_trace(path, [True] * 4)) == ("none", False, "timeout")


def test_container_soft_band_margin_boundary():
    just_in = 0.60 + COMPARTMENT_BAND_MARGIN_M - 1e-9
    just_out = 0.60 + COMPARTMENT_BAND_MARGIN_M + 1e-6
    assert label(container_trace([OUTSIDE, [2.5, 0, just_in]], [True, True]))[1] is True
    assert label(container_trace([OUTSIDE, [2.5, 0, just_out]], [True, True]))[2] == "overshoot"
    assert label(container_trace([OUTSIDE, [2.5, 0, 0.30]], [True, True]))[2] == "below_band"


def test_container_peak_ignores_heights_outside_the_footprint():
    # Lifted high in front of the cabinet, then lowered into the instructed band inside it.
    path = [[1.0, 0.0, 1.5], [2.5, 0.0, 0.5]]
    assert label(container_trace(path, [True, True])) == ("none", True, "peak_in_band")


def test_container_released_outside_keeps_the_soft_rule_but_floor_drop_does_not():
    path = [OUTSIDE, [2.5, 0.0, 0.5], [1.5, 0.0, 0.9]]  # peaked in band, then left on the counter
    assert label(container_trace(path, [True, True, False])) == ("none", True, "peak_in_band")
    path = [OUTSIDE, [2.5, 0.0, 0.5], [1.5, 0.0, 0.04]]  # peaked in band, then dropped on the floor
    assert label(container_trace(path, [True, True, False])) == ("none", False, "floor_drop")


def test_container_never_in_the_footprint():
    assert label(container_trace([OUTSIDE, OUTSIDE], [True, True])) == ("none", False, "timeout")
    released = container_trace([OUTSIDE, [1.5, 0.0, 0.9]], [True, False])
    assert label(released) == ("none", False, "outside_container")
    on_top = container_trace([OUTSIDE, [2.5, 0.0, 1.2]], [True, False], task="place_tupperware")
    assert label(on_top) == ("none", False, "overshoot")  # rests on top of the container: outside it


# --- navigation -----------------------------------------------------------------------------------


def test_navigation_is_binary():
    ok = EpisodeTrace(task="move_to_bar", **HEADER, nav_success=True)
    fail = EpisodeTrace(task="move_to_bar", **HEADER, nav_success=False)
    assert label(ok) == ("correct", False, "nav_success")
    assert label(fail) == ("none", False, "nav_failure")


def test_rates_from_traces():
    traces = [
        reach_trace([[0.9, 0, 1]], CANDS, contacts=[(0, 0)]),
        reach_trace([[0.0, 0, 1], [0.9, 0, 1]], CANDS),
        placement_trace(*released_at([0.0, 0.3])),
        EpisodeTrace(task="move_to_bar", **HEADER, nav_success=False),
    ]
    rates = action_rates_from_traces(traces)
    assert (rates.strict.rate, rates.soft.rate, rates.wrong.rate) == (25.0, 50.0, 25.0)
    assert set(rates.per_task) == {"reach_tool", "place_carving_knife", "move_to_bar"}


# --- EpisodeOutcome and trace schema --------------------------------------------------------------


def test_episode_outcome_validates():
    with pytest.raises(ValueError, match="soft_credit=True is only defined for outcome 'none'"):
        EpisodeOutcome("wrong", True, "x")
    with pytest.raises(ValueError, match="outcome must be one of"):
        EpisodeOutcome("success", False, "x")  # type: ignore[arg-type]


def test_trace_round_trips_through_json():
    traces = [
        soda([1.4, 0.0]),
        placement_trace(*released_at([0.0, -0.3])),
        container_trace([OUTSIDE, [2.5, 0.0, 0.5]], [True, False]),
        EpisodeTrace(task="move_to_oven", **HEADER, nav_success=True, base_poses=[[0, 0, 0], [1, 0, 0.5]]),
    ]
    for trace in traces:
        data = json.loads(json.dumps(trace.to_dict()))
        assert data["schema_version"] == 1
        again = EpisodeTrace.from_dict(data)
        assert again.to_dict() == trace.to_dict()
        assert outcome_from_trace(again) == outcome_from_trace(trace)


def test_trace_normalises_task_aliases_and_derives_steps():
    trace = container_trace([OUTSIDE, [2.5, 0, 0.5], [2.5, 0, 0.5]], [True, False, True], task="place_bowl")
    assert trace.task == "place_bowl_in_cabinet"
    assert trace.num_steps == 3
    assert trace.release_steps == (1,)
    assert EpisodeTrace(task="move_to_bar", **HEADER, nav_success=True).num_steps is None


def _bad_reach(**override):
    steps, cands = 2, 3
    kwargs = dict(task="reach_tool", **HEADER, eef_positions=np.zeros((steps, 2, 3)), candidate_names=("a", "b", "c"),
                  instructed_candidate=0, candidate_positions=np.ones((steps, cands, 3)),
                  eef_contacts=np.zeros((steps, cands), bool))
    kwargs.update(override)
    return EpisodeTrace(**kwargs)


@pytest.mark.parametrize("override,message", [
    ({"eef_positions": np.zeros((2, 3))}, r"eef_positions must have shape \(\*, \*, 3\)"),
    ({"candidate_positions": np.zeros((3, 3, 3))}, "candidate_positions has 3 steps but eef_positions has 2"),
    ({"eef_contacts": np.zeros((2, 2), bool)}, "eef_contacts has 2 candidates but candidate_names has 3"),
    ({"eef_contacts": np.full((2, 3), 0.5)}, "eef_contacts must hold booleans"),
    ({"instructed_candidate": 3}, r"instructed_candidate must be an index in \[0, 3\), got 3"),
    ({"instructed_candidate": None}, "instructed_candidate must be an index"),
    ({"candidate_names": ("a", "a", "b")}, "candidate_names must be distinct"),
    ({"eef_positions": None}, "needs eef_positions"),
    ({"split": "test"}, "split must be one of .* got 'test'"),
    ({"step_budget": 1}, "more than step_budget=1"),
    ({"step_budget": 0}, "step_budget must be >= 1"),
    ({"seed": 1.5}, "seed must be an integer"),
    ({"task": "reach_moon"}, "unknown task 'reach_moon'"),
    ({"eef_positions": np.full((2, 2, 3), np.nan)}, "eef_positions must be finite"),
])
def test_trace_validation_names_the_field(override, message):
    with pytest.raises(ValueError, match=message):
        _bad_reach(**override)


def test_trace_family_requirements():
    with pytest.raises(ValueError, match="needs base_poses"):
        _bad_reach(task="reach_soda_can")
    with pytest.raises(ValueError, match="needs nav_success"):
        EpisodeTrace(task="move_to_bar", **HEADER)
    with pytest.raises(ValueError, match="needs countertop"):
        EpisodeTrace(task="place_carving_knife", **HEADER, object_positions=[[0, 0, 1]], object_held=[True])


@pytest.mark.parametrize("build,message", [
    (lambda: CountertopGeometry(**{**COUNTER, "right_axis": [0, 0]}, instructed_side="right"),
     "countertop.right_axis must be non-zero"),
    (lambda: CountertopGeometry(**COUNTER, instructed_side="up"), "countertop.instructed_side must be one of"),
    (lambda: CountertopGeometry(**{**COUNTER, "polygon": [[0, 0], [1, 1]]}, instructed_side="left"),
     "countertop.polygon must have at least 3 vertices"),
    (lambda: ContainerGeometry(FOOTPRINT, [[0.1, 0.5], [0.4, 0.6]], 0), "must not overlap"),
    (lambda: ContainerGeometry(FOOTPRINT, [[0.5, 0.1]], 0), "low < high"),
    (lambda: ContainerGeometry(FOOTPRINT, BANDS, 3), r"instructed_compartment must be an index in \[0, 3\)"),
])
def test_geometry_validation(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_from_dict_rejects_unknown_keys_and_versions():
    data = EpisodeTrace(task="move_to_bar", **HEADER, nav_success=True).to_dict()
    with pytest.raises(ValueError, match=r"unknown EpisodeTrace keys \['succes'\]"):
        EpisodeTrace.from_dict({**data, "succes": True})
    with pytest.raises(ValueError, match="schema_version must be 1, got 99"):
        EpisodeTrace.from_dict({**data, "schema_version": 99})


def test_soda_base_approach_counts_half_the_way_to_the_proximity_radius():
    # The base drives from 1.6 m to 0.9 m of the instructed can (outside the 0.70 m radius: no commitment);
    # the parked arm does not approach. Half the way from 1.6 to 0.70 is 1.15 m: credited.
    arm = [[0, 0, 1]] * 3
    base = np.array([[0.4, 0.0, 0.0], [0.8, 0.0, 0.0], [1.1, 0.0, 0.0]])
    trace = reach_trace(arm, CANS, task="reach_soda_can", base=base)
    assert label(trace) == ("none", True, "base_approached_target")
    # 1.6 m -> 1.2 m: closer, but not half the way to the radius.
    short = reach_trace(arm, CANS, task="reach_soda_can", base=np.array([[0.4, 0, 0], [0.6, 0, 0], [0.8, 0, 0.0]]))
    assert label(short)[2] == "no_approach"
