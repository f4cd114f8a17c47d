"""BEHAVIOR-Spatial for LeRobot's EnvHub (``lerobot.envs.factory.make_env("behavior-spatial/envhub",
trust_remote_code=True)``).

This file is the whole Hub repo's code: it builds the same vector envs as ``lerobot-eval --env.type=bspatial``
(``bspatial.evaluation.envs.lerobot_env.BSpatialEnvConfig``), so it needs the simulator package installed
(``pip install behavior-spatial``). ``bspatial hub install`` seeds this repo into the local Hub cache, so it
loads with ``HF_HUB_OFFLINE=1``.

``make_env(n_envs, use_async_envs)`` returns ``{task: {0: vector env}}`` for the 14 tasks of the held-out split
(``--env.task=all``); pass ``cfg`` (a ``BSpatialEnvConfig``) to choose tasks, split (prompt_probe, navigation,
...), cameras, image size or a record folder. Copy ``i`` of a vector env
reset with seeds ``s..s+n-1`` plays manifest entry ``(s + i) mod n_entries``, as ``lerobot-eval`` does.
"""

from __future__ import annotations

from typing import Any


def make_env(n_envs: int = 1, use_async_envs: bool = False, cfg: Any = None) -> dict[str, dict[int, Any]]:
    """``{task: {0: vector env of n_envs copies}}`` (LeRobot's EnvHub contract)."""
    from bspatial.evaluation.envs.lerobot_env import BSpatialEnvConfig

    if cfg is None:
        cfg = BSpatialEnvConfig(task="all")
    elif not isinstance(cfg, BSpatialEnvConfig):
        raise TypeError(f"cfg must be a BSpatialEnvConfig (the env's options), got {type(cfg).__name__}")
    if isinstance(n_envs, bool) or not isinstance(n_envs, int) or n_envs < 1:
        raise ValueError(f"n_envs must be an int >= 1, got {n_envs!r}")
    return cfg.create_envs(n_envs=n_envs, use_async_envs=use_async_envs)
