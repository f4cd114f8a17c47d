"""Gymnasium ids of the 25 tasks: ``bspatial/<TaskName>-v0`` (e.g. ``bspatial/ReachPlate-v0``).

Registration is explicit (no registration by import side effect): call :func:`register_envs` once,
then ``gymnasium.make``. (Gymnasium 1.x no longer loads ``gymnasium.envs`` entry-point plugins, so there is
no install-time hook to use instead.) The ids carry no ``max_episode_steps``: the env ends its episodes at
the task's step budget itself, scoring the trace on that step, which a ``TimeLimit`` wrapper cutting first
would prevent.

Example:
    >>> import gymnasium as gym
    >>> register_envs()[:2]
    ['bspatial/ReachFoodItem-v0', 'bspatial/ReachItem-v0']
    >>> env = gym.make("bspatial/MoveToFridge-v0", n_episodes=2)
    >>> env.unwrapped.task_name, env.unwrapped.split, len(env.unwrapped.episodes)
    ('move_to_fridge', 'navigation', 2)
"""

from __future__ import annotations

NAMESPACE = "bspatial"
VERSION = 0
ENTRY_POINT = "bspatial.evaluation.envs.env:BSpatialEnv"
VECTOR_ENTRY_POINT = "bspatial.evaluation.envs.vector:make_vector_env"
"""``gymnasium.make_vec``'s default: copies that walk the split's entries without repeats (:mod:`.vector`)."""


def env_id(task: str) -> str:
    """``bspatial/<CamelCase task>-v0`` of a task name (any accepted spelling).

    Example:
        >>> env_id("place_tupperware_in_fridge")
        'bspatial/PlaceTupperwareInFridge-v0'
    """
    from bspatial.catalog.tasks import canonical_task_name

    name = canonical_task_name(task)
    return f"{NAMESPACE}/{''.join(part.capitalize() for part in name.split('_'))}-v{VERSION}"


def register_envs() -> list[str]:
    """Register the 25 tasks' ids with gymnasium (idempotent); returns them in Table S2 order."""
    import gymnasium as gym

    from bspatial.catalog.tasks import MANIPULATION_TASKS, NAVIGATION_TASKS

    ids = []
    for task in (*MANIPULATION_TASKS, *NAVIGATION_TASKS):
        gid = env_id(task)
        if gid not in gym.registry:
            gym.register(id=gid, entry_point=ENTRY_POINT, vector_entry_point=VECTOR_ENTRY_POINT, kwargs={"task": task})
        ids.append(gid)
    return ids


__all__ = ["ENTRY_POINT", "NAMESPACE", "VECTOR_ENTRY_POINT", "VERSION", "env_id", "register_envs"]
