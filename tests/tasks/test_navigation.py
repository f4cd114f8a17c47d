"""Navigation: floor plans, goal criteria, spawns and their validation, the A* expert, context tours."""

import math

import numpy as np
import pytest

from bspatial.scoring.action import outcome_from_trace
from bspatial.catalog.tasks import NAVIGATION_TASKS, TASKS
from bspatial.world.floorplans import FLOORPLANS, ROBOT_RADIUS_M, get_floorplan
from bspatial.world.spec import RobotSpawn, check_category
from bspatial.tasks import get_task
from bspatial.tasks import navigation as nav
from bspatial.tasks.budgets import step_budget
from bspatial.tasks.episode import run_episode
from bspatial.tasks.experts.navigation import GOAL_MARGIN_M, NavigationExpert, astar

pytestmark = [pytest.mark.sim]

TABLE_S11_SCENES = {   # paper Table S11: task -> scene wording
    "move_to_bookcase": "single-floor house, toy room", "move_to_bathroom": "single-floor house, bedroom",
    "move_to_corner_booth": "restaurant diner", "move_to_table_in_kitchen": "two-floor house, main floor",
    "move_to_table_near_sofa": "single-floor house, open living area", "move_to_bar": "restaurant diner",
    "move_to_kitchen_sink": "restaurant diner", "move_to_fridge": "two-floor house, main floor",
    "move_to_oven": "restaurant diner", "move_to_garage": "two-floor house, main floor"}


@pytest.mark.parametrize("name", FLOORPLANS)
def test_floor_plan_loads_steps_and_its_grid_matches_the_rooms(sim, name):
    plan = get_floorplan(name)
    for obj in plan.scene.objects:
        check_category(obj.category)
    sim.load(plan.scene)
    hold = sim.hold_action()
    assert all(sim.step(hold).status == "ok" for _ in range(5))
    grid = plan.occupancy()
    for door in plan.doorways:       # every doorway leaves a corridor for the base centre
        assert grid.is_free(door.center), (name, door)
    wall = plan.scene.object("wall_outer_s")
    assert not grid.is_free((plan.bounds[0] + 2.0, plan.bounds[2] - 0.5))      # outside the plan
    assert not grid.is_free((plan.bounds[0] + 2.0, plan.bounds[2] + ROBOT_RADIUS_M / 2))  # hugging a wall
    assert wall.category == "walls"


def test_tasks_are_registered_with_table_s2_wording_and_s11_scenes():
    assert set(nav.NAV_TASKS) == set(NAVIGATION_TASKS)
    for name in NAVIGATION_TASKS:
        task = get_task(name)
        inst = task.sample("", np.random.default_rng(0), seed=0)
        assert inst.instruction == TASKS[name].example_instruction
        assert get_floorplan(nav.NAV_TASKS[name].plan).title == TABLE_S11_SCENES[name]
        assert inst.family == "navigation" and inst.step_budget == step_budget(name)
    assert get_task("move_to_table.near.sofa").name == "move_to_table_near_sofa"


def test_unknown_names_raise_listing_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown task 'move_to_moon' \(did you mean 'move_to_oven'\?\); "
                                         r"known tasks: reach_food_item, .*move_to_garage"):
        get_task("move_to_moon")
    with pytest.raises(ValueError, match="unknown navigation task 'reach_plate'; known navigation tasks: move_to_garage"):
        nav.build_navigation_task("reach_plate")
    with pytest.raises(ValueError, match="unknown floor plan 'castle'; known floor plans: two_floor_house_main_floor"):
        get_floorplan("castle")
    with pytest.raises(ValueError, match="must be '' \\(no variants\\)"):
        get_task("move_to_bar").sample("left", np.random.default_rng(0))


@pytest.mark.parametrize("name", NAVIGATION_TASKS)
def test_goal_is_reachable_on_the_grid_from_sampled_spawns(name):
    task = get_task(name)
    rng = np.random.default_rng(123)
    for seed in range(4):
        inst = task.sample("", rng, seed=seed)
        spawn = inst.scene.robot
        assert not nav.goal_reached(inst, (spawn.x, spawn.y, spawn.yaw))
        grid = nav.plan_of(inst).occupancy()
        path = astar(grid, (spawn.x, spawn.y), nav.goal_mask(inst, margin=GOAL_MARGIN_M))
        assert nav.goal_reached(inst, (*path[-1], 0.0))


def test_object_proximity_never_counts_through_a_wall():
    inst = get_task("move_to_bar").sample("", np.random.default_rng(0), seed=0)
    # 1.0 m east of the bar's back shelf, but on the kitchen side of the wall.
    assert not nav.goal_reached(inst, (2.9, 3.3, 0.0))
    assert nav.goal_reached(inst, (-0.2, 2.0, 0.0))


def test_spawn_validation_accepts_clear_spawns_and_rejects_a_spawn_inside_furniture(sim):
    inst, check = nav.sample_validated_instance(sim, "move_to_bookcase", 0)
    assert check.ok and check.displacement_m < nav.MAX_SPAWN_DISPLACEMENT_M
    import dataclasses
    inside = dataclasses.replace(inst.scene, robot=RobotSpawn(1.5, 3.55, math.pi / 2))   # in the bookcase
    sim.load(inside)
    assert not nav.validate_spawn(sim).ok


@pytest.mark.parametrize("name", NAVIGATION_TASKS)
def test_expert_reaches_the_goal_and_the_trace_scores_correct(sim, name):
    inst, _ = nav.sample_validated_instance(sim, name, 0)
    result = run_episode(sim, inst, NavigationExpert(sim, inst), split="held_out")
    assert result.status == "decided" and result.trace.nav_success is True
    assert outcome_from_trace(result.trace).outcome == "correct"
    assert result.outcome.detail == "nav_success"


def test_holding_still_fails(sim):
    inst, _ = nav.sample_validated_instance(sim, "move_to_oven", 0)
    hold = sim.hold_action()
    result = run_episode(sim, inst, lambda obs: hold, max_steps=30)
    assert result.status == "timeout" and result.trace.nav_success is False
    assert outcome_from_trace(result.trace).outcome == "none"


@pytest.mark.parametrize("name", FLOORPLANS)
def test_context_tour_is_dense_and_stays_on_free_floor(name):
    plan = get_floorplan(name)
    poses = nav.tour_poses(plan)
    steps = np.linalg.norm(np.diff(poses[:, :2], axis=0), axis=1)
    turns = np.abs((np.diff(poses[:, 2]) + math.pi) % (2 * math.pi) - math.pi)
    assert steps.max() <= nav.TOUR_STEP_M + 1e-9 and turns.max() <= nav.TOUR_TURN_RAD + 1e-9
    grid = plan.occupancy()
    assert all(grid.is_free(p[:2]) for p in poses), name
    visited = {plan.room_at(p[:2]) for p in poses} - {None}
    assert len(visited) >= 2          # the traversal crosses at least one doorway


def test_render_tour_returns_ordered_head_frames(sim):
    plan = get_floorplan("single_floor_house_toy_room")
    frames = nav.render_tour(sim, plan, size=64)
    assert len(frames) == len(nav.tour_poses(plan))
    assert frames[0].rgb.shape == (64, 64, 3)
    assert not np.array_equal(frames[0].rgb, frames[-1].rgb)
