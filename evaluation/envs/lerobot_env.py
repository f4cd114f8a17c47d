"""LeRobot's ``bspatial`` env type: ``lerobot-eval --policy.path=<ckpt> --env.type=bspatial --env.task=<task>``.

LeRobot finds third-party envs by distribution name: its CLIs import every installed distribution whose
name starts with ``lerobot_env_`` (``lerobot.utils.import_utils.register_third_party_plugins``). The
``lerobot_env_bspatial`` distribution (``plugins/lerobot_env_bspatial``) imports this module, whose
:class:`BSpatialEnvConfig` registers itself with ``EnvConfig.register_subclass("bspatial")``, LeRobot's
registration mechanism (nothing else happens at import: no simulator, no task tables).

``--env.task`` is a task name, a comma-separated list of them, or ``all`` (every task of ``--env.split``);
each task is one vector env, ``{task: {0: env}}``, so ``eval_info.json`` has one group per task and the overall
``pc_success`` pools every episode (our action rates are pooled over episodes). ``--env.split``
defaults to each task's own (held_out for manipulation, navigation for navigation tasks). lerobot-eval runs
``--eval.n_episodes`` per task with reset seeds ``--seed``, ``--seed`` + 1, ...; the env plays manifest entry
``seed % n`` (:mod:`bspatial.evaluation.envs.env`), so ``--seed=0 --eval.n_episodes=k`` plays the episodes of
``bspatial rollout --n-episodes k`` and its ``pc_success`` is that rollout's strict rate (tested), and ``k``
equal to a task's manifest size plays every entry once whatever the seed. ``--env.episode_length`` caps each
episode's step budget (``bspatial rollout --max-steps``).

Observation keys: the env gives LeRobot's gym layout (``pixels/<camera>``, ``agent_pos``), which lerobot-eval
turns into ``observation.images.<camera>`` and ``observation.state``; the env preprocessor renames the images
to the demos' keys ``observation.images.rgb.<camera>`` (BEHAVIOR's), so a policy trained on our
demos by ``lerobot-train`` evaluates with no ``--rename_map``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import gymnasium as gym
from lerobot.configs import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig
from lerobot.processor import PolicyProcessorPipeline, RenameObservationsProcessorStep
from lerobot.utils.constants import ACTION, OBS_IMAGES, OBS_STATE

from bspatial.catalog.schema import (ACTION_DIM, CAMERAS, CONSTRUCTION_FRAME_SIZE, CONTROL_HZ, POLICY_IMAGE_SIZE,
                                     STATE_DIM, image_key)
from bspatial.evaluation.envs.env import AGENT_POS_KEY, PIXELS_KEY

ENV_TYPE = "bspatial"
ALL_TASKS = "all"
"""``--env.task=all``: every task with episodes in ``--env.split`` (held_out when no split is given)."""


def lerobot_rename_map(cameras=CAMERAS) -> dict[str, str]:
    """lerobot-eval's image keys (``observation.images.<camera>``) -> the demos' keys."""
    return {f"{OBS_IMAGES}.{cam}": image_key(cam) for cam in cameras}


def env_preprocessor(cameras=CAMERAS) -> PolicyProcessorPipeline:
    """The env-side step between lerobot's observation conversion and a policy's own preprocessor."""
    return PolicyProcessorPipeline(steps=[RenameObservationsProcessorStep(rename_map=lerobot_rename_map(cameras))])


@EnvConfig.register_subclass(ENV_TYPE)
@dataclass
class BSpatialEnvConfig(EnvConfig):
    """``--env.type=bspatial`` (see the module docstring).

    Attributes:
        task: a task name, comma-separated task names, or "all".
        split: "held_out", "prompt_probe", "navigation", "spa_id", "spa_ood", "training", or None for each
            task's default (:func:`bspatial.evaluation.envs.env.default_split`).
        episode_length: cap on each episode's step budget; None = the task's budget.
        camera_names: comma-separated cameras rendered (default all three).
        image_size: square render size (the demos' 224).
        record_dir: folder receiving each finished episode's rollout record (``<record_dir>/episodes/``), which
            :func:`bspatial.evaluation.rollout.tables.write_tables` scores into Table 4; None = none.
        perturbation: perturbation axes joined by ``+`` (``camera+light``), drawn per episode as ``bspatial rollout
            --condition <axes>`` draws them at its default seed; None = unperturbed.
    """

    task: str | None = None
    split: str | None = None
    fps: int = CONTROL_HZ
    episode_length: int | None = None
    camera_names: str = ",".join(CAMERAS)
    image_size: int = POLICY_IMAGE_SIZE
    render_mode: str = "rgb_array"
    record_dir: str | None = None
    perturbation: str | None = None
    features: dict[str, PolicyFeature] = field(
        default_factory=lambda: {ACTION: PolicyFeature(type=FeatureType.ACTION, shape=(ACTION_DIM,))})
    features_map: dict[str, str] = field(default_factory=lambda: {ACTION: ACTION, AGENT_POS_KEY: OBS_STATE})

    def __post_init__(self) -> None:
        if self.fps != CONTROL_HZ:
            raise ValueError(f"env.fps must be the simulator's control rate {CONTROL_HZ}, got {self.fps!r}")
        length, size = self.episode_length, self.image_size
        if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 1):
            raise ValueError(f"env.episode_length must be an int >= 1 (or None: the budget), got {length!r}")
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= CONSTRUCTION_FRAME_SIZE:
            raise ValueError(f"env.image_size must be an int in 1..{CONSTRUCTION_FRAME_SIZE}, got {size!r}")
        cameras = self.cameras
        if not cameras or any(c not in CAMERAS for c in cameras) or len(set(cameras)) != len(cameras):
            raise ValueError(f"env.camera_names must be distinct names from {','.join(CAMERAS)}, got "
                             f"{self.camera_names!r}")
        for cam in cameras:
            key = f"{PIXELS_KEY}/{cam}"
            self.features[key] = PolicyFeature(type=FeatureType.VISUAL, shape=(self.image_size, self.image_size, 3))
            self.features_map[key] = image_key(cam)
        self.features[AGENT_POS_KEY] = PolicyFeature(type=FeatureType.STATE, shape=(STATE_DIM,))
        if self.perturbation is not None:
            from bspatial.tasks.perturbations import axes_only

            try:   # refused when the command line is parsed, not in the first env's constructor
                axes_only(self.perturbation)
            except ValueError as error:
                raise ValueError(f"env.{error}") from None
        if self.task is not None:
            self.task_names()   # unknown tasks / splits are refused when the command line is parsed

    @property
    def cameras(self) -> tuple[str, ...]:
        return tuple(c.strip() for c in self.camera_names.split(",") if c.strip())

    def task_names(self) -> list[str]:
        """The canonical task names ``task`` stands for, each checked against its split.

        Raises:
            ValueError: no task given, an unknown task or split, or a task without episodes in the split.
        """
        from bspatial.catalog.tasks import canonical_task_name
        from bspatial.evaluation.envs.env import default_split, plan_env_episodes
        from bspatial.evaluation.rollout.plan import resolve_tasks

        if not self.task or not self.task.strip():
            raise ValueError("env.task is required: a task name, comma-separated task names, or 'all'")
        try:
            if self.task.strip() == ALL_TASKS:
                return resolve_tasks(self.split or "held_out", None)
            names = []
            for name in (n.strip() for n in self.task.split(",") if n.strip()):
                canonical = canonical_task_name(name)
                plan_env_episodes(canonical, self.split or default_split(canonical), 1)   # raises if none
                if canonical not in names:
                    names.append(canonical)
            return names
        except ValueError as error:
            raise ValueError(f"env.task={self.task!r} (env.split={self.split!r}): {error}") from None

    @property
    def gym_kwargs(self) -> dict:
        return {"split": self.split, "max_steps": self.episode_length, "cameras": self.cameras,
                "image_size": self.image_size, "render_mode": self.render_mode, "record_dir": self.record_dir,
                "perturbation": self.perturbation,
                # lerobot-eval executes the policy's own select_action (PROTOCOLS of bspatial.evaluation.rollout)
                "protocol": "select_action"}

    def create_envs(self, n_envs: int, use_async_envs: bool = False) -> dict[str, dict[int, gym.vector.VectorEnv]]:
        """One vector env of ``n_envs`` copies per task: ``{task: {0: env}}``."""
        from lerobot.envs.utils import _LazyAsyncVectorEnv, freeze_after_episode_end

        from bspatial.evaluation.envs.env import BSpatialEnv

        envs = {}
        for task in self.task_names():
            factories = [partial(BSpatialEnv, task, **self.gym_kwargs) for _ in range(n_envs)]
            if use_async_envs and n_envs > 1:
                # LeRobot's lazy async env (as its LIBERO suites): one task's workers alive at a time, each
                # with its own simulator; frozen after its episode, so autoresets do no simulator work.
                envs[task] = {0: _LazyAsyncVectorEnv(factories)}
            else:
                vec = gym.vector.SyncVectorEnv([freeze_after_episode_end(f) for f in factories],
                                               autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
                envs[task] = {0: vec}
        return envs

    def get_env_processors(self):
        return env_preprocessor(self.cameras), PolicyProcessorPipeline(steps=[])


__all__ = ["ALL_TASKS", "ENV_TYPE", "BSpatialEnvConfig", "env_preprocessor", "lerobot_rename_map"]
