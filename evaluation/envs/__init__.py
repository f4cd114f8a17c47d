"""Gymnasium and LeRobot envs over the simulator.

* :class:`BSpatialEnv` (:mod:`.env`): one task's evaluation episodes, stepped by the loop and scored by the
  rules of ``bspatial rollout``; :func:`register_envs` registers ``bspatial/<Task>-v0`` for the 25 tasks.
* :mod:`.lerobot_env`: the ``bspatial`` env type of ``lerobot-eval --env.type=bspatial``, imported by the
  ``lerobot_env_bspatial`` plugin distribution (``plugins/lerobot_env_bspatial``) that LeRobot discovers.
* :mod:`.policy_lerobot`: the other way round, any LeRobot policy in ``bspatial rollout --policy lerobot:<ckpt>``,
  fed the observation ``lerobot-eval`` builds from this env (``bspatial.evaluation.rollout`` finds it by name in
  its ``EXTERNAL_POLICIES``, so the rollout package never imports this one).
"""

from bspatial.evaluation.envs.env import (AGENT_POS_KEY, PIXELS_KEY, POLICY_KEYS, BSpatialEnv, default_split,
                                          env_observation, plan_env_episodes)
from bspatial.evaluation.envs.registration import env_id, register_envs

__all__ = ["AGENT_POS_KEY", "PIXELS_KEY", "POLICY_KEYS", "BSpatialEnv", "default_split", "env_id", "env_observation",
           "plan_env_episodes", "register_envs"]
