"""The start state of every episode: the same for a demonstration and for a rollout of any policy.

An episode starts from the scene's spawn (``backend.reset()``: objects at their spec poses, the robot at its spawn
with home joints and open grippers), then the **warm-up**: the robot is held still (zero base velocity, its current
joints) with both grippers commanded to the task family's start command until they are there
(:func:`settle_grippers`, within :data:`GRIPPER_SETTLE_TOL`). These are plain simulator steps, nothing is
teleported, and the simulator is deterministic, so the warm-up lands every path in the same state.

Why a fixed command per family and not "whatever the policy asks first": the demonstrations' first frame shows the
grippers the expert's first action commands (closed for manipulation: every manipulation expert begins with both
hands closed), and a learned policy must see that same first frame at rollout step 0, before it has chosen
anything. Before this rule the demonstrations settled to the expert's first command while rollouts started with the
spawn's open grippers: a policy's first observation showed hands no demonstration ever showed.

:class:`bspatial.tasks.episode.EpisodeRun` warms up after every reset, and
:func:`bspatial.tasks.episode.load_instance` after loading (so a policy built on the loaded scene, e.g. the hold
action, sees the start state): the demos, ``bspatial rollout``, the gymnasium env (``lerobot-eval``) and the
openpi path all run through them.
"""

from __future__ import annotations

import numpy as np

from bspatial.catalog.schema import GRIPPER_DIMS, PROPRIO_SLICES
from bspatial.sim.backend import SimBackend

MANIPULATION_START_GRIPPER = -1.0
"""Normalised gripper command (+1 open, -1 closed) at the start of a manipulation episode: closed, as every
manipulation expert begins (reach pushes with the closed hand; placement approaches the grasp face closed)."""
NAVIGATION_START_GRIPPER = 1.0
"""... of a navigation episode: open, the spawn's grippers, which the navigation expert holds all the way."""
GRIPPER_SETTLE_TOL = 0.001
"""Settled: every gripper's normalised opening within this of its command (0.025 mm of finger travel; closing
from open takes 5 steps)."""
GRIPPER_SETTLE_MAX_STEPS = 30
"""Settle steps allowed before the warm-up gives up (1 s)."""


class GripperSettleError(RuntimeError):
    """The grippers did not reach the start command (a sim error, or not within the tolerance in time)."""


def start_gripper_command(instance) -> tuple[float, float]:
    """The (left, right) gripper command of ``instance``'s warm-up (its family's start command).

    Example:
        >>> from types import SimpleNamespace
        >>> start_gripper_command(SimpleNamespace(family="reach")), start_gripper_command(SimpleNamespace(family="navigation"))
        ((-1.0, -1.0), (1.0, 1.0))
    """
    g = NAVIGATION_START_GRIPPER if instance.family == "navigation" else MANIPULATION_START_GRIPPER
    return g, g


def settle_grippers(backend: SimBackend, command, *, steps: int | None = None, tol: float = GRIPPER_SETTLE_TOL,
                    max_steps: int = GRIPPER_SETTLE_MAX_STEPS) -> int:
    """Hold the robot still with both grippers commanded to ``command`` until they are there; returns the steps taken.

    The held action is the backend's ``hold_action`` (zero base velocity, the current joints) with the gripper dims
    (:data:`~bspatial.catalog.schema.GRIPPER_DIMS`) set to ``command``; every step is an ordinary simulator step.

    Args:
        command: (left, right) normalised gripper commands in [-1, 1] (+1 open).
        steps: run exactly this many steps instead of stopping when settled.
        tol: settled when ``|opening - command| <= tol`` for both grippers.
        max_steps: give up after this many steps.

    Raises:
        GripperSettleError: a sim error, or not settled within ``max_steps``.
    """
    command = np.asarray(command, np.float64).reshape(2)
    hold = np.asarray(backend.hold_action(), np.float64)
    hold[list(GRIPPER_DIMS)] = command
    sides = (PROPRIO_SLICES["left_gripper"].start, PROPRIO_SLICES["right_gripper"].start)

    def settled() -> bool:
        opening = np.asarray(backend.robot_state().proprio, np.float64)[list(sides)]
        return bool(np.all(np.abs(opening - command) <= tol))

    def step() -> None:
        result = backend.step(hold)
        if result.status != "ok":
            raise GripperSettleError(f"sim_error while settling the grippers: {result.message}")

    if steps is not None:
        for _ in range(steps):
            step()
        return steps
    taken = 0
    while not settled():
        if taken >= max_steps:
            raise GripperSettleError(f"grippers not within {tol} of {command.tolist()} after {taken} steps")
        step()
        taken += 1
    return taken


def warm_up(backend: SimBackend, instance) -> int:
    """Bring a freshly reset ``instance`` to the start state (module docstring); returns the warm-up steps.

    Raises:
        GripperSettleError: the grippers did not settle.
    """
    return settle_grippers(backend, start_gripper_command(instance))


__all__ = ["GRIPPER_SETTLE_MAX_STEPS", "GRIPPER_SETTLE_TOL", "GripperSettleError", "MANIPULATION_START_GRIPPER",
           "NAVIGATION_START_GRIPPER", "settle_grippers", "start_gripper_command", "warm_up"]
