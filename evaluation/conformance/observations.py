"""The observation check: at step t a policy receives, through every path, what the demonstrations hold at frame t.

For one recorded demonstration (a ``bspatial demos`` dataset and its episode index), its actions are replayed on
its own training instance through each path a policy is evaluated by, and at the checked steps the observation
the policy receives is captured with that path's own code:

* ``rollout``: ``bspatial rollout`` with a BSpatialVLA checkpoint: the episode loaded as a rollout loads it
  (:func:`bspatial.evaluation.rollout.episodes.load_instance`), the checkpoint's per-episode predictor made by
  :func:`bspatial.evaluation.rollout.policies.make_policy`, and its ``prepare`` (the call the chunk controller makes
  when it plans) on each step's observation: the raw batch before the processor (``last_batch``);
* ``lerobot``: ``lerobot-eval --env.type=bspatial``'s loop (lerobot's own ``eval_policy_all`` over the env config's
  vector env and env processors): the batch its ``select_action`` receives, replaying through a LeRobot policy
  (:class:`_ReplayLeRobotPolicy`);
* ``openpi``: ``bspatial serve-policy`` (the real websocket server, in a thread of this process) driven by the
  ``openpi:`` rollout client: the raw batch the server's checkpoint predictor built from the wire observation.

Each is compared with the dataset's frame t read by ``LeRobotDataset`` (what training reads): the same keys (every
camera the demos hold under ``observation.images.rgb.<camera>``, and ``observation.state``), the same dtypes and
shapes as the path's convention (uint8 ``(1, 3, H, W)`` for our checkpoints, lerobot's float32 in [0, 1] for
LeRobot policies; float32 ``(1, 84)`` state), the state exactly, the pixels within the video codec's loss
(:data:`PIXEL_MEAN_TOL`: the dataset's frames are AV1-encoded, the rollout's are the renderer's) and aligned in time
(on average nearer the dataset's frame t than its neighbours t - 1 / t + 1). And the three paths' pixels are
compared with each other, exactly: they render the same simulator state.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from bspatial.catalog.schema import ACTION_KEY, CAMERAS, STATE_KEY, image_key
from bspatial.construction.demonstrations.demos import PROVENANCE_FILE

logger = logging.getLogger(__name__)

PATHS: tuple[str, ...] = ("rollout", "lerobot", "openpi")
PIXEL_MEAN_TOL = 6.0
"""Largest mean absolute difference (0-255) between a path's frame and the dataset's decoded frame t. Measured on
12 demonstrations' frames (benchmarks/replay.py's set, every third step, the three cameras): the AV1 codec's loss
is 1.1-2.7 on average and at most 4.0 on a frame (its 99th percentile reaches 37 at edges, so no percentile is
gated); the wrong camera gives 77, a flipped image 14-47, swapped colour channels 31. An image one step off is not
caught per frame (4.2-5.8 on average, and a still robot makes neighbours equal): the state (exact) and the time
alignment below catch that."""


@dataclass
class PathReport:
    """One path's comparison with the dataset over the checked steps."""

    path: str
    steps: list[int]
    problems: list[str] = field(default_factory=list)
    state_max_abs: float = 0.0
    pixel_mean_abs: float = 0.0
    pixel_p99: float = 0.0
    pixel_neighbour_mean_abs: float = 0.0
    """The same frames against the dataset's frames t - 1 and t + 1 (the nearer of the two): time alignment."""

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass
class ObservationReport:
    """The check of one demonstration: a report per path and the cross-path pixel identity."""

    episode_index: int
    task: str
    scene_seed: int
    paths: dict[str, PathReport]
    cross_path_problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.cross_path_problems and all(r.passed for r in self.paths.values())


def _episode_spec(root: Path, episode_index: int):
    from bspatial.construction.splits import SplitEntry
    from bspatial.evaluation.rollout.plan import TRAINING_SPLIT

    rows = {r["episode_index"]: r for r in json.loads((root / PROVENANCE_FILE).read_text())["episodes"]}
    if episode_index not in rows:
        raise ValueError(f"episode_index {episode_index!r} is not in {root} (episodes: {sorted(rows)})")
    row = rows[episode_index]
    if row.get("prefix"):
        raise ValueError(f"episode {episode_index} of {root} starts from the paperback prefix's augmented spawn, not "
                         "its training entry's: no rollout path starts there")
    return SplitEntry(row["task_name"], row["variant"], int(row["scene_seed"]), TRAINING_SPLIT,
                       int(row["training_index"]))


def _dataset_frames(root: Path, episode_index: int, steps: Sequence[int]) -> tuple[np.ndarray, dict[int, dict]]:
    """(the episode's (T, 23) actions, step -> {key: value as LeRobotDataset gives it (uint8 images)})."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    dataset = LeRobotDataset("local/bspatial_demos", root=root, episodes=[episode_index], return_uint8=True)
    actions = np.stack([np.asarray(a, np.float32) for a in dataset.hf_dataset[ACTION_KEY]])
    frames = {}
    for t in sorted({n for s in steps for n in (s - 1, s, s + 1) if 0 <= n < len(dataset)}):
        item = dataset[t]
        frames[t] = {k: v.numpy() for k, v in item.items() if k.startswith("observation.")}
    missing = [t for t in steps if t not in frames]
    if missing:
        raise ValueError(f"steps {missing} are past episode {episode_index}'s {len(dataset)} frames")
    return actions, frames


def _compare(report: PathReport, captured: dict[int, dict], frames: dict[int, dict], image_dtype: str,
             cameras: Sequence[str]) -> dict[int, dict[str, np.ndarray]]:
    """Fill ``report`` from the captured batches; returns step -> camera key -> uint8 (H, W, 3) for the cross check."""
    want_keys = {image_key(c) for c in cameras} | {STATE_KEY}
    pixels: dict[int, dict[str, np.ndarray]] = {}
    diffs, neighbour_means = [], []
    for t in report.steps:
        if t not in captured:
            report.problems.append(f"step {t}: no observation captured")
            continue
        batch, frame = captured[t], frames[t]
        keys = {k for k in batch if k.startswith("observation.")}
        if keys != want_keys:
            report.problems.append(f"step {t}: keys {sorted(keys)}, the dataset's {sorted(want_keys)}")
            continue
        state = np.asarray(batch[STATE_KEY])
        if state.dtype != np.float32 or state.shape != (1, frame[STATE_KEY].shape[0]):
            report.problems.append(f"step {t}: state {state.dtype} {state.shape}, expected float32 (1, "
                                   f"{frame[STATE_KEY].shape[0]})")
            continue
        gap = float(np.max(np.abs(state[0].astype(np.float64) - frame[STATE_KEY].astype(np.float64))))
        report.state_max_abs = max(report.state_max_abs, gap)
        if not np.array_equal(state[0], frame[STATE_KEY]):
            report.problems.append(f"step {t}: state differs from the dataset's (max |diff| {gap:.3g} at dims "
                                   f"{np.flatnonzero(state[0] != frame[STATE_KEY]).tolist()})")
        pixels[t] = {}
        for key in sorted(want_keys - {STATE_KEY}):
            image = np.asarray(batch[key])
            expected_shape = (1, *frame[key].shape)   # (1, 3, H, W)
            if str(image.dtype) != image_dtype or image.shape != expected_shape:
                report.problems.append(f"step {t}: {key} is {image.dtype} {image.shape}, expected {image_dtype} "
                                       f"{expected_shape}")
                continue
            if image_dtype == "float32":   # lerobot's preprocess_observation: uint8 / 255
                if image.min() < 0 or image.max() > 1:
                    report.problems.append(f"step {t}: {key} leaves [0, 1]")
                image = np.round(image * 255.0).astype(np.uint8)
            rgb = image[0].transpose(1, 2, 0)
            pixels[t][key] = rgb
            diff = np.abs(rgb.astype(np.int16) - frame[key].transpose(1, 2, 0).astype(np.int16))
            diffs.append(diff.ravel())
            neighbours = [np.abs(rgb.astype(np.int16) - frames[n][key].transpose(1, 2, 0).astype(np.int16)).mean()
                          for n in (t - 1, t + 1) if n in frames]
            if neighbours:
                neighbour_means.append((diff.mean(), min(neighbours)))
            if diff.mean() > PIXEL_MEAN_TOL:
                report.problems.append(f"step {t}: {key} differs from the dataset's frame beyond the codec's "
                                       f"tolerance (mean {diff.mean():.2f} > {PIXEL_MEAN_TOL})")
    if diffs:
        everything = np.concatenate(diffs)
        report.pixel_mean_abs, report.pixel_p99 = float(everything.mean()), float(np.percentile(everything, 99))
    if neighbour_means:
        same, neighbour = (float(np.mean(v)) for v in zip(*neighbour_means))
        report.pixel_neighbour_mean_abs = neighbour
        if same > neighbour:   # on average the frames match the dataset's neighbours better: shifted in time
            report.problems.append(f"the frames match the dataset's frames t - 1 / t + 1 (mean {neighbour:.2f}) "
                                   f"better than frame t (mean {same:.2f}): shifted in time")
    return pixels


# ---- the three paths ---------------------------------------------------------------------------------------------


def _replay_observing(episode, actions: np.ndarray, steps: set[int], policy_inputs) -> dict[int, dict]:
    """Replay ``actions`` on ``episode`` loaded as a rollout loads it; at each of ``steps`` the path's
    ``policy_inputs(backend, instance)(observation)`` gives the batch its policy receives, kept as numpy."""
    from bspatial.evaluation.rollout.episodes import TRACE_SPLIT, load_instance
    from bspatial.sim.process import process_backend
    from bspatial.tasks.episode import run_episode

    backend = process_backend()
    instance, _ = load_instance(backend, episode)
    observe = policy_inputs(backend, instance)
    captured: dict[int, dict] = {}

    def replay(observation):
        if observation.step in steps:
            captured[observation.step] = {k: _numpy(v) for k, v in observe(observation).items()}
        return actions[min(observation.step, len(actions) - 1)]

    run_episode(backend, instance, replay, split=TRACE_SPLIT[episode.split],
                max_steps=min(len(actions), instance.step_budget))
    return captured


def _capture_rollout(checkpoint: str, episode, actions: np.ndarray, steps: set[int]) -> dict[int, dict]:
    from bspatial.evaluation.rollout.plan import RunSettings
    from bspatial.evaluation.rollout.policies import make_policy

    def policy_inputs(backend, instance):
        predictor = make_policy(checkpoint, backend, instance, RunSettings()).predictor   # what the controller plans with

        def observe(observation):
            predictor.prepare(observation)
            return predictor.predictor.last_batch
        return observe

    return _replay_observing(episode, actions, steps, policy_inputs)


def _numpy(value):
    return value.numpy() if hasattr(value, "numpy") else value


def _replay_lerobot_policy(actions: np.ndarray, steps: set[int], captured: dict[int, dict]):
    """A LeRobot ``PreTrainedPolicy`` that replays ``actions`` and keeps the batches ``select_action`` receives."""
    import torch
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.pretrained import PreTrainedPolicy

    class _ReplayLeRobotPolicy(PreTrainedPolicy):
        config_class, name = ACTConfig, "bspatial_replay"

        def __init__(self):
            super().__init__(ACTConfig())
            self.step = 0

        def reset(self):
            self.step = 0

        def select_action(self, batch):
            if self.step in steps:
                captured[self.step] = {k: _numpy(v) for k, v in batch.items() if k.startswith("observation.")}
            action = actions[min(self.step, len(actions) - 1)]
            self.step += 1
            return torch.as_tensor(action[None])

        def predict_action_chunk(self, batch):
            raise NotImplementedError("a replay has no chunks")

        def forward(self, batch):
            raise NotImplementedError("a replay does not train")

        def get_optim_params(self):
            return {}

    return _ReplayLeRobotPolicy()


def _capture_lerobot(episode, actions: np.ndarray, steps: set[int]) -> dict[int, dict]:
    from lerobot.scripts.lerobot_eval import eval_policy_all

    from bspatial.evaluation.envs.lerobot_env import BSpatialEnvConfig

    config = BSpatialEnvConfig(task=episode.task, split=episode.split, episode_length=int(len(actions)))
    envs = config.create_envs(n_envs=1)
    env_pre, env_post = config.get_env_processors()
    captured: dict[int, dict] = {}
    try:
        # start_seed = the manifest index: the env's reset(seed) serves entry seed % n (the training manifest).
        eval_policy_all(envs, _replay_lerobot_policy(actions, steps, captured), env_pre, env_post, lambda b: b,
                        lambda a: a, n_episodes=1, start_seed=episode.index)
    finally:
        for per_task in envs.values():
            for vec in per_task.values():
                vec.close()
    return captured


class _ServerThread:
    """``bspatial serve-policy``'s :class:`~bspatial.evaluation.serving.server.PolicyServer` on a free loopback port,
    in a thread of this process (so the check can read what its predictor received)."""

    def __init__(self, checkpoint: str) -> None:
        from bspatial.evaluation.serving.server import CheckpointPolicy, PolicyServer

        self.policy = CheckpointPolicy(checkpoint)
        self.url: str | None = None
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        server = PolicyServer(self.policy, port=0)

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(server.serve(self._bound, self._stop))

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        if not self._ready.wait(60):
            raise RuntimeError("the policy server did not start within 60 s")

    def _bound(self, url: str) -> None:
        self.url = url
        self._ready.set()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)


def _capture_openpi(checkpoint: str, episode, actions: np.ndarray, steps: set[int]) -> dict[int, dict]:
    from bspatial.evaluation.rollout.plan import RunSettings, episode_noise_seed
    from bspatial.evaluation.serving.policy_openpi import OpenPIConnection, OpenPIPredictor

    server = _ServerThread(checkpoint)
    connections = []

    def policy_inputs(backend, instance):
        connections.append(OpenPIConnection(server.url))
        client = OpenPIPredictor(connections[-1], backend, episode_noise_seed(RunSettings().seed, instance.seed))

        def observe(observation):
            client(observation)   # over the websocket; the server's predictor keeps the batch it built
            return server.policy.predictor.last_batch
        return observe

    try:
        return _replay_observing(episode, actions, steps, policy_inputs)
    finally:
        for connection in connections:
            connection.close()
        server.close()


def check_observations(demos: str | Path, episode_index: int, checkpoint: str | Path,
                       steps: Sequence[int] | None = None, paths: Sequence[str] = PATHS) -> ObservationReport:
    """Run the observation check (module docstring) on one demonstration.

    Args:
        demos: a ``bspatial demos`` dataset folder.
        episode_index: the demonstration to replay.
        checkpoint: a BSpatialVLA checkpoint folder reading every camera the demos hold (the ``rollout`` and
            ``openpi`` paths build its inputs; its outputs are not used).
        steps: the steps compared (default: 0, 1, 2, then every 16th and the last).
        paths: which of :data:`PATHS` to run.
    """
    from bspatial.evaluation.rollout.policies import check_policy_spec

    root = Path(demos)
    unknown = [p for p in paths if p not in PATHS]
    if unknown:
        raise ValueError(f"paths must be among {PATHS}, got {unknown}")
    checkpoint = check_policy_spec(str(checkpoint))
    episode = _episode_spec(root, episode_index)
    info = json.loads((root / "meta" / "info.json").read_text())
    length = int(json.loads((root / PROVENANCE_FILE).read_text())["episodes"][episode_index]["length"])
    if steps is None:
        steps = sorted({0, 1, 2, *range(16, length, 16), length - 1})
    steps = sorted(set(int(s) for s in steps))
    actions, frames = _dataset_frames(root, episode_index, steps)
    cameras = [c for c in CAMERAS if image_key(c) in info["features"]]
    captures = {"rollout": lambda: _capture_rollout(checkpoint, episode, actions, set(steps)),
                "lerobot": lambda: _capture_lerobot(episode, actions, set(steps)),
                "openpi": lambda: _capture_openpi(checkpoint, episode, actions, set(steps))}
    reports, pixels = {}, {}
    for path in paths:
        logger.info("observation check: episode %d (%s seed %d), path %s", episode_index, episode.task,
                    episode.seed, path)
        reports[path] = PathReport(path, list(steps))
        dtype = "float32" if path == "lerobot" else "uint8"
        pixels[path] = _compare(reports[path], captures[path](), frames, dtype, cameras)
    cross = []
    first = paths[0]
    for other in paths[1:]:
        for t, images in pixels[first].items():
            for key, rgb in images.items():
                theirs = pixels[other].get(t, {}).get(key)
                if theirs is not None and not np.array_equal(rgb, theirs):
                    cross.append(f"step {t}: {key} differs between {first} and {other} (mean |diff| "
                                 f"{np.abs(rgb.astype(int) - theirs.astype(int)).mean():.3f})")
    return ObservationReport(episode_index, episode.task, episode.seed, reports, cross)


__all__ = ["PATHS", "PIXEL_MEAN_TOL", "ObservationReport", "PathReport", "check_observations"]
