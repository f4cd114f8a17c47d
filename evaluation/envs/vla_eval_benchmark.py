"""BEHAVIOR-Spatial as a benchmark of allenai's vla-evaluation-harness (``pip install 'behavior-spatial[vla-eval]'``).

vla-eval finds a benchmark by import string (``benchmark:`` in its YAML config), so nothing is registered: the
config names ``bspatial.evaluation.envs.vla_eval_benchmark:BSpatialBenchmark`` and its ``params:`` are this
class's arguments (configs in ``configs/vla_eval/``). ``vla-eval run --no-docker -c <config>`` then plays our
split manifests against any vla-eval model server (its LeRobot server runs any ``PreTrainedPolicy``).

Each vla-eval task is one of our tasks (``suite`` = the split), and vla-eval's episode ``i`` of a task is the
split manifest's entry ``i``: ``episodes_per_task: k`` plays the entries ``bspatial rollout --n-episodes k`` plays.
An episode is a :class:`~bspatial.evaluation.envs.env.BSpatialEnv` episode, so it starts, steps, stops early when
decided and is scored exactly as in ``bspatial rollout``.

Observation and action use the keys of vla-eval's BEHAVIOR-1K adapter where they overlap: ``images`` by camera
(``head``, ``left_wrist``, ``right_wrist``; uint8 HxWx3), ``task_description`` (the instruction), ``states`` (our
84-dim proprioceptive vector, :data:`bspatial.catalog.schema.PROPRIO_LAYOUT`, when ``send_state``); the action is
``{"actions": (23,)}`` in the R1Pro layout (:data:`bspatial.catalog.schema.ACTION_SLICES`: base velocity, torso
and arm joint positions, grippers in [-1, 1], +1 open, -1 closed). Per-episode metrics: ``success`` (strict), ``soft``
(strict or soft credit) and ``wrong`` (a wrong-target outcome), vla-eval averaging each per task; with
``record_dir`` every episode's full rollout record is written there too, and the Table 4 / Table S11 tables of
``bspatial rollout`` (Wilson intervals) are written to ``<record_dir>/tables`` when the run ends.

Rendering: MuJoCo, on the GPU through EGL (``render: gpu``) or in software (``render: cpu``): OSMesa where
libOSMesa is installed (vla-eval's MuJoCo convention), else Mesa's software EGL.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from vla_eval.benchmarks.base import StepBenchmark, StepResult
from vla_eval.render import apply_env, configure_mujoco_render
from vla_eval.specs import IMAGE_RGB, LANGUAGE, RAW, DimSpec

from bspatial.catalog.schema import ACTION_DIM, CAMERAS, HEAD_CAMERA, POLICY_IMAGE_SIZE
from bspatial.evaluation.envs.env import AGENT_POS_KEY, PIXELS_KEY, BSpatialEnv

logger = logging.getLogger(__name__)

ACTION_FORMAT = "r1pro_base_velocity_joint_positions_gripper"
"""Our action's format name in vla-eval's spec check (a model server that declares ``raw`` is accepted too)."""
ACTIONS_KEY = "actions"
"""The action's key in a model server's reply (vla-eval's convention; ``action`` is accepted as well)."""
DEFAULT_POLICY_LABEL = "vla-eval"
"""The ``policy`` field of the records (and the tables' row) unless the config names the policy."""


def _software_egl_env() -> dict[str, str]:
    # Mesa's EGL with its software rasteriser: MuJoCo's headless path on a machine without libOSMesa.
    env = {"MUJOCO_GL": "egl", "LIBGL_ALWAYS_SOFTWARE": "1"}
    mesa_vendor = Path("/usr/share/glvnd/egl_vendor.d/50_mesa.json")
    if mesa_vendor.is_file():   # glvnd would otherwise pick a GPU vendor's EGL first
        env["__EGL_VENDOR_LIBRARY_FILENAMES"] = str(mesa_vendor)
    return env


class BSpatialBenchmark(StepBenchmark):
    """One split of BEHAVIOR-Spatial's closed-loop protocol (see the module docstring).

    Args:
        split: "held_out", "prompt_probe", "navigation", "spa_id", "spa_ood" or "training".
        tasks: task names (any spelling ``bspatial`` accepts); None = every task with episodes in ``split``.
        camera_names: cameras sent to the model server; default: all three, or the head camera alone when the
            server asks for no wrist image (``send_wrist_image=False``, vla-eval's observation parameter).
        send_wrist_image: vla-eval's observation parameter (a model server declares it): whether wrist cameras
            are sent when ``camera_names`` is not given; None = yes.
        image_size: square render size (the demonstrations' 224; give a policy the size it was trained on).
        send_state: send the proprioceptive vector as ``states``.
        max_steps: cap on each episode's step budget (smoke runs); None = the task's budget.
        record_dir: folder for each episode's rollout record (``episodes/``) and, at the end, ``tables/``.
        policy_label: the ``policy`` of the records: what the tables call the evaluated model.
        perturbation: perturbation axes joined by ``+`` (``camera+noise``; :mod:`bspatial.tasks.perturbations`),
            drawn per episode as ``bspatial rollout --condition`` draws them; None = unperturbed.

    Raises:
        ValueError: an unknown split, task or camera, or a bad size (naming the field and the value).
    """

    render_backends: ClassVar[frozenset[str]] = frozenset({"gpu", "cpu"})

    def __init__(self, split: str = "held_out", tasks: list[str] | None = None,
                 camera_names: list[str] | None = None, image_size: int = POLICY_IMAGE_SIZE, send_state: bool = True,
                 max_steps: int | None = None, record_dir: str | None = None,
                 policy_label: str = DEFAULT_POLICY_LABEL, send_wrist_image: bool | None = None,
                 perturbation: str | None = None) -> None:
        super().__init__()
        from bspatial.tasks.perturbations import axes_only
        from bspatial.evaluation.rollout.plan import resolve_tasks
        from bspatial.tasks.budgets import step_budget

        axes_only(perturbation)   # refused here, by name, not in the first episode's env
        self.perturbation = perturbation

        self.split = split
        self.task_names = resolve_tasks(split, tasks)   # refuses an unknown split / task, naming the known ones
        if camera_names is None:
            camera_names = [HEAD_CAMERA] if send_wrist_image is False else list(CAMERAS)
        self.cameras = tuple(camera_names)
        self.image_size, self.send_state, self.max_steps = image_size, bool(send_state), max_steps
        self.record_dir = None if record_dir is None else Path(record_dir)
        self.policy_label = str(policy_label)
        budgets = [step_budget(t) for t in self.task_names]
        self._max_budget = max(budgets) if max_steps is None else min(max_steps, max(budgets))
        self._envs: dict[str, BSpatialEnv] = {}
        self._env: BSpatialEnv | None = None
        self._env_for(self.task_names[0])   # checks cameras / sizes now, before any episode (no simulator yet)

    @classmethod
    def configure_render(cls, mode: str) -> dict[str, str]:
        if mode == "gpu":
            return {}   # bspatial.sim's default: EGL on the machine's GPU
        import ctypes.util

        if ctypes.util.find_library("OSMesa"):
            return configure_mujoco_render(mode)
        return apply_env(_software_egl_env())

    # ---- tasks and metadata --------------------------------------------------------------------

    def get_tasks(self) -> list[dict[str, Any]]:
        return [{"name": t, "task_name": t, "suite": self.split} for t in self.task_names]

    def get_metadata(self) -> dict[str, Any]:
        return {"max_steps": self._max_budget, "action_dim": ACTION_DIM, "robot": "R1Pro", "split": self.split,
                "n_tasks": len(self.task_names),
                "max_episodes_per_task": min(len(self._env_for(t).episodes) for t in self.task_names)}

    def get_metric_keys(self) -> dict[str, str]:
        return {"success": "mean", "soft": "mean", "wrong": "mean"}

    def get_action_spec(self) -> dict[str, DimSpec]:
        return {ACTIONS_KEY: DimSpec(ACTIONS_KEY, ACTION_DIM, ACTION_FORMAT, accepts=frozenset({ACTION_FORMAT, "raw"}),
                                     description="base vx, vy, yaw rate; torso and arm joint positions; grippers "
                                                 "in [-1, 1] (+1 open, -1 closed)")}

    def get_observation_spec(self) -> dict[str, DimSpec]:
        # "image": the head camera, what a one-image model server (vla-eval's LeRobot server) declares it reads.
        spec: dict[str, DimSpec] = {"language": LANGUAGE, "image": IMAGE_RGB}
        spec.update({cam: IMAGE_RGB for cam in self.cameras})
        if self.send_state:
            spec["state"] = RAW
        return spec

    # ---- one episode ---------------------------------------------------------------------------

    def _env_for(self, task: str) -> BSpatialEnv:
        if task not in self._envs:
            self._envs[task] = BSpatialEnv(task, self.split, max_steps=self.max_steps, cameras=self.cameras,
                                           image_size=self.image_size, record_dir=self.record_dir,
                                           policy=self.policy_label, perturbation=self.perturbation)
        return self._envs[task]

    def reset(self, task: dict[str, Any]) -> Any:
        name = task.get("task_name", task.get("name"))
        if name not in self.task_names:
            raise ValueError(f"task {name!r} is not one of this benchmark's tasks {self.task_names}")
        env = self._env_for(name)
        if self._env is not None and self._env is not env:
            self._env.close()   # one simulator at a time (vla-eval runs a task's episodes in a row)
        self._env = env
        observation, _ = env.reset(options={"episode_index": int(task.get("episode_idx", 0))})
        return observation

    def step(self, action: dict[str, Any]) -> StepResult:
        raw = action.get(ACTIONS_KEY, action.get("action")) if isinstance(action, dict) else action
        if raw is None:
            raise ValueError(f"the model server's action has no {ACTIONS_KEY!r} key; keys: {sorted(action)}")
        vector = np.asarray(raw, dtype=np.float32).reshape(-1)
        if vector.shape != (ACTION_DIM,):
            raise ValueError(f"action must hold {ACTION_DIM} values (R1Pro layout), got shape "
                             f"{np.shape(raw)}")
        observation, reward, terminated, truncated, info = self._env.step(vector)
        return StepResult(obs=observation, reward=reward, done=bool(terminated or truncated), info=info)

    def make_obs(self, raw_obs: Any, task: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"images": dict(raw_obs[PIXELS_KEY]), "task_description": self._env.task}
        if self.send_state:
            out["states"] = raw_obs[AGENT_POS_KEY]
        return out

    def get_step_result(self, step_result: StepResult) -> dict[str, Any]:
        record = self._env.episode_record
        if record is None:   # vla-eval stopped the episode (its max_steps) before the env decided it
            return {"success": False, "soft": False, "wrong": False, "outcome": "none", "status": "stopped",
                    "episode_index": self._env.episode.index}
        strict = record["outcome"] == "correct"
        return {"success": strict, "soft": strict or bool(record["soft_credit"]),
                "wrong": record["outcome"] == "wrong", "outcome": record["outcome"], "status": record["status"],
                "episode_index": record["index"]}

    def render(self) -> np.ndarray | None:
        return None if self._env is None else self._env.render()

    def cleanup(self) -> None:
        for env in self._envs.values():
            env.close()
        self._env = None
        if self.record_dir is not None and (self.record_dir / "episodes").is_dir():
            from bspatial.evaluation.rollout.tables import write_tables

            written = write_tables([self.record_dir], self.record_dir / "tables")
            logger.info("BEHAVIOR-Spatial tables: %s", ", ".join(str(p) for p in written.values()))


__all__ = ["ACTIONS_KEY", "BSpatialBenchmark"]
