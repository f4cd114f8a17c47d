"""Vector envs of one task: ``gymnasium.make_vec("bspatial/<Task>-v0", num_envs=N)``.

The ids registered by :func:`~bspatial.evaluation.envs.registration.register_envs` carry this module's
:func:`make_vector_env` as their vector entry point, so ``make_vec`` without a ``vectorization_mode`` builds
``N`` copies of :class:`~bspatial.evaluation.envs.env.BSpatialEnv` in which copy ``i`` plays manifest entries
``i, i + N, i + 2N, ...`` on unseeded resets and autoresets: a vector env walks the split once, no entry twice.
Seeded resets (``reset(seed=s)`` gives copy ``i`` seed ``s + i``) pick entry ``(s + i) mod n``, as for one env.

``make_vec(..., vectorization_mode="sync" | "async")`` builds gymnasium's own vector envs instead; they declare
their autoreset mode too, but every copy is the same env, so unseeded resets and autoresets play the next entry in
every copy: reset with seeds (as ``lerobot-eval`` does) to play distinct entries.

Example:
    >>> import gymnasium as gym
    >>> from bspatial.evaluation.envs import register_envs
    >>> _ = register_envs()
    >>> vec = gym.make_vec("bspatial/ReachPlate-v0", num_envs=2, max_steps=2, cameras=["head"], image_size=16)
    >>> vec.metadata["autoreset_mode"]
    <AutoresetMode.NEXT_STEP: 'NextStep'>
    >>> _, info = vec.reset()
    >>> info["episode_index"].tolist()
    [0, 1]
    >>> vec.close()
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium as gym

from bspatial.evaluation.envs.env import BSpatialEnv

VECTORIZATIONS: tuple[str, ...] = ("sync", "async")
ASYNC_CONTEXT = "forkserver"
"""Start method of the async workers (as lerobot-eval's): each worker imports afresh, never forking a parent's
simulator or GL context."""


def make_vector_env(task: str, num_envs: int = 1, *, vectorization: str = "sync",
                    autoreset_mode: str | gym.vector.AutoresetMode = gym.vector.AutoresetMode.NEXT_STEP,
                    **env_kwargs: Any) -> gym.vector.VectorEnv:
    """``num_envs`` copies of ``BSpatialEnv(task, **env_kwargs)``, copy ``i`` with ``episode_offset=i`` and
    ``episode_stride=num_envs``, in a gymnasium Sync- or AsyncVectorEnv (``vectorization``) that declares
    ``autoreset_mode``.

    Raises:
        ValueError: ``num_envs`` < 1, an unknown vectorization or autoreset mode, or the env's own refusals
            (checked in this process before any worker starts).
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    if vectorization not in VECTORIZATIONS:
        raise ValueError(f"vectorization must be one of {VECTORIZATIONS}, got {vectorization!r}")
    mode = gym.vector.AutoresetMode(autoreset_mode)   # ValueError names a bad mode
    for key in ("episode_offset", "episode_stride"):
        if key in env_kwargs:
            raise ValueError(f"{key} is set per copy by the vector env; got {key}={env_kwargs[key]!r}")
    BSpatialEnv(task, **env_kwargs).close()   # its argument checks, here (planning only: no simulator starts)
    factories = [partial(BSpatialEnv, task, episode_offset=i, episode_stride=num_envs, **env_kwargs)
                 for i in range(num_envs)]
    if vectorization == "async":
        return gym.vector.AsyncVectorEnv(factories, autoreset_mode=mode, context=ASYNC_CONTEXT)
    return gym.vector.SyncVectorEnv(factories, autoreset_mode=mode)


__all__ = ["ASYNC_CONTEXT", "VECTORIZATIONS", "make_vector_env"]
