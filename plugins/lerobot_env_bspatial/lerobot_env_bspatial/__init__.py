"""LeRobot imports this package (its distribution name starts with ``lerobot_env_``) before parsing a command
line; the import registers ``--env.type=bspatial`` (:mod:`bspatial.evaluation.envs.lerobot_env`)."""

from bspatial.evaluation.envs.lerobot_env import BSpatialEnvConfig

__all__ = ["BSpatialEnvConfig"]
