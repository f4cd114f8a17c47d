"""Scripted experts: privileged-state policies that solve every task.

An expert reads the simulator directly (object boxes, robot state, IK) and returns 23-dim actions
(the R1Pro layout). It proves a task instance is solvable and later records the demonstrations. Each expert is
a script, a Python generator that yields one action per control step, wrapped in a policy callable
that :func:`bspatial.tasks.episode.run_episode` drives; once the script ends it holds still.

Reach (Table S4 "contact"): pick the arm on the target's side, drive the base (yaw fixed) until the
target's contact point is :data:`REACH_STANDOFF_M` ahead of the base, without the base footprint
touching any object, then move the hand with the closed gripper to a pre-contact point and push slowly
through the contact point until the fingers touch. Table-top objects are approached from above with the
hand pointing down; books standing in a bookcase cell are approached from the front (the shelf above
blocks a top-down approach). Floor objects (soda cans, storage boxes) need the torso: every IK call
solves torso + arm together, so the torso bends as far as the target needs.

Placement: the arm on the goal's side of the robot takes the manipulated object with the assisted
grasp (closed gripper moved onto a grasp face until both fingers touch it; the saucer, bowl and
tupperware are wider than the 10 cm opening, so no pinch is attempted), lifts it, carries it to
``instance.placement.goal_point``, lowers it until its bottom is :data:`RELEASE_HEIGHT_M` above the goal
surface, opens and backs the hand away. Countertop objects lie flat and are taken from above and
carried above every object near the path. Shelf layers leave no room for a hand above the object, so
container objects are taken from the front with the hand horizontal, carried (pulled in towards the
body while the base moves) to the open front at the instructed layer's height and slid in.

Example:
    >>> from bspatial.sim.mujoco_backend import MujocoBackend
    >>> from bspatial.tasks import sample_instance
    >>> from bspatial.tasks.episode import run_episode
    >>> sim = MujocoBackend()
    >>> inst = sample_instance("reach_plate", "largest", 0)
    >>> sim.load(inst.scene)
    >>> run_episode(sim, inst, make_expert(sim, inst)).outcome.outcome
    'correct'
    >>> sim.close()
"""

from __future__ import annotations

from bspatial.sim.backend import SimBackend
from bspatial.tasks.base import TaskInstance
from bspatial.tasks.experts.motion import Ramped, ScriptedExpert
from bspatial.tasks.experts.navigation import NavigationExpert
from bspatial.tasks.experts.placement import ContainerPlacementExpert, DirectionalPlacementExpert
from bspatial.tasks.experts.reach import ReachExpert

EXPERTS = {"reach": ReachExpert, "reach_base_proximity": ReachExpert,
           "directional_placement": DirectionalPlacementExpert, "container_placement": ContainerPlacementExpert,
           "navigation": NavigationExpert}


def make_expert(backend: SimBackend, instance: TaskInstance):
    """The scripted expert for ``instance``'s outcome-rule family."""
    if instance.family not in EXPERTS:
        raise ValueError(f"no scripted expert for family {instance.family!r} (task {instance.task!r}); "
                         f"known families: {sorted(EXPERTS)}")
    expert = EXPERTS[instance.family](backend, instance)
    # The manipulation experts ramp their own base commands; the navigation expert's are ramped here, so that the
    # demos and `bspatial rollout --policy scripted` drive it the same way.
    return Ramped(expert) if instance.family == "navigation" else expert
